//! The IR as text (`pmx emit --stage futhark-ir|cuda-ir`): the types
//! table, then each function and entry with its MExpr source location in
//! a comment, every statement with its type (`let x : [Float] = map f xs`).
//! A function reference with bound arguments is written as the partial
//! application `(f a b)`; a size coercion as Futhark writes it, `s :> [n]`.

use crate::ir::*;
use pmx_ast::{is_tuple_labels, Span};
use std::fmt::{self, Write};

/// The program as text; `locate` writes a span as `file:line:column`.
pub fn print(p: &Program, locate: &dyn Fn(Span) -> String) -> String {
    print_only(p, &|_| true, locate)
}

/// [`print`] of the functions `keep` accepts (and every entry).
pub fn print_only(p: &Program, keep: &dyn Fn(FnId) -> bool, locate: &dyn Fn(Span) -> String) -> String {
    let mut out = String::new();
    let _ = Printer { p, locate, keep, out: &mut out }.program();
    out
}

pub(crate) fn write_type(f: &mut dyn Write, t: &Type, variants: Option<&[VariantDef]>) -> fmt::Result {
    match t {
        Type::Int => f.write_str("Int"),
        Type::Float => f.write_str("Float"),
        Type::Bool => f.write_str("Bool"),
        Type::Char => f.write_str("Char"),
        Type::Unit => f.write_str("()"),
        Type::Seq(e) => {
            f.write_str("[")?;
            write_type(f, e, variants)?;
            f.write_str("]")
        }
        Type::Tensor(e) => {
            f.write_str("Tensor[")?;
            write_type(f, e, variants)?;
            f.write_str("]")
        }
        Type::Fun(a, r) => {
            f.write_str("(")?;
            write_type(f, a, variants)?;
            f.write_str(" -> ")?;
            write_type(f, r, variants)?;
            f.write_str(")")
        }
        Type::Record(fields) if is_tuple_labels(fields.iter().map(|(l, _)| l)) => {
            f.write_str("(")?;
            for (i, (_, t)) in fields.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write_type(f, t, variants)?;
            }
            f.write_str(if fields.len() == 1 { ",)" } else { ")" })
        }
        Type::Record(fields) => {
            f.write_str("{")?;
            for (i, (l, t)) in fields.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write!(f, "{l} : ")?;
                write_type(f, t, variants)?;
            }
            f.write_str("}")
        }
        Type::Opaque(b, args) if args.is_empty() => f.write_str(b.name()),
        Type::Opaque(b, args) => {
            write!(f, "({}", b.name())?;
            for a in args {
                f.write_str(" ")?;
                write_type(f, a, variants)?;
            }
            f.write_str(")")
        }
        Type::Variant(v) => match variants.and_then(|vs| vs.get(v.0 as usize)) {
            None => write!(f, "variant#{}", v.0),
            Some(d) if d.args.is_empty() => f.write_str(&d.name),
            Some(d) => {
                write!(f, "({}", d.name)?;
                for a in &d.args {
                    f.write_str(" ")?;
                    write_type(f, a, variants)?;
                }
                f.write_str(")")
            }
        },
    }
}

struct Printer<'a> {
    p: &'a Program,
    locate: &'a dyn Fn(Span) -> String,
    /// Which functions are shown.
    keep: &'a dyn Fn(FnId) -> bool,
    out: &'a mut String,
}

impl Printer<'_> {
    fn ty(&self, t: &Type) -> String {
        let mut s = String::new();
        let _ = write_type(&mut s, t, Some(&self.p.variants));
        s
    }

    fn program(&mut self) -> fmt::Result {
        let p = self.p;
        if p.entries.is_empty() && p.functions.is_empty() {
            return writeln!(self.out, "-- no accelerate expression uses the {} backend", p.target.name());
        }
        for (i, v) in p.variants.iter().enumerate() {
            let name = self.ty(&Type::Variant(VariantId(i as u32)));
            let cons: Vec<String> =
                v.constructors.iter().map(|c| format!("{} {}", c.name, self.ty(&c.payload))).collect();
            writeln!(self.out, "type {name} = {}", cons.join(" | "))?;
        }
        if !p.variants.is_empty() {
            writeln!(self.out)?;
        }
        for f in p.functions.iter().filter(|f| (self.keep)(f.id)) {
            let mut notes = vec![format!("{} at {}", f.source, (self.locate)(f.span))];
            if f.lifted {
                notes.push("lifted".into());
            }
            if let Some(op) = f.histogram {
                notes.push(format!("histogram update with {} (reduce_by_index)", op.name()));
            }
            if !f.instance.is_empty() {
                let inst: Vec<String> = f.instance.iter().map(|(v, t)| format!("{v} = {}", self.ty(t))).collect();
                notes.push(format!("instance {}", inst.join(", ")));
            }
            if f.tail_recursive {
                notes.push("tail-recursive".into());
            } else if f.recursive {
                notes.push(format!("recursive (group {})", f.group));
            }
            if f.stub {
                notes.push("not lowered: it applies the interpreter's function".into());
            }
            if f.global.is_some() {
                notes.push("a top-level value, read where the interpreter keeps it".into());
                writeln!(self.out, "-- {}", notes.join(", "))?;
                self.header("value", &f.name, &f.params, &f.result)?;
                writeln!(self.out)?;
                continue;
            }
            writeln!(self.out, "-- {}", notes.join(", "))?;
            self.header("fun", &f.name, &f.params, &f.result)?;
            self.block(&f.body, 1)?;
            writeln!(self.out)?;
        }
        for e in &p.entries {
            writeln!(self.out, "-- accelerate at {}", (self.locate)(e.span))?;
            self.header("entry", &e.name, &e.params, &e.result)?;
            self.block(&e.body, 1)?;
            writeln!(self.out)?;
        }
        Ok(())
    }

    fn header(&mut self, what: &str, name: &str, params: &[Var], result: &Type) -> fmt::Result {
        write!(self.out, "{what} {name}")?;
        for v in params {
            write!(self.out, " ({} : {})", v.name, self.ty(&v.ty))?;
        }
        writeln!(self.out, " : {} =", self.ty(result))
    }

    fn block(&mut self, b: &Block, depth: usize) -> fmt::Result {
        let pad = "  ".repeat(depth);
        for s in &b.stmts {
            write!(self.out, "{pad}let {} : {} =", s.var.name, self.ty(&s.var.ty))?;
            if let Expr::If { cond, then, otherwise } = &s.expr {
                writeln!(self.out)?;
                writeln!(self.out, "{pad}  if {} then", atom(cond))?;
                self.block(then, depth + 2)?;
                writeln!(self.out, "{pad}  else")?;
                self.block(otherwise, depth + 2)?;
            } else {
                writeln!(self.out, " {}", self.expr(&s.expr))?;
            }
        }
        writeln!(self.out, "{pad}{}", atom(&b.result))
    }

    fn fun_ref(&self, f: &FunRef) -> String {
        self.applied(f.callee, &f.bound)
    }

    /// A callee applied to `args`, in parentheses when there are some.
    fn applied(&self, callee: Callee, args: &[Atom]) -> String {
        let name = match callee {
            Callee::Function(id) => self.p.function(id).map(|g| g.name.to_string()).unwrap_or(format!("fn#{}", id.0)),
            Callee::Builtin(b) => b.name().to_string(),
            Callee::Math(m) => m.external().to_string(),
            Callee::Value => "apply".to_string(),
        };
        if args.is_empty() {
            name
        } else {
            format!("({name} {})", atoms(args))
        }
    }

    fn constructor(&self, v: VariantId, tag: usize) -> String {
        self.p
            .variant(v)
            .and_then(|d| d.constructors.get(tag))
            .map(|c| c.name.to_string())
            .unwrap_or(format!("con#{}.{tag}", v.0))
    }

    fn expr(&self, e: &Expr) -> String {
        match e {
            Expr::Atom(a) => atom(a),
            Expr::Prim(b, args) if args.is_empty() => b.name().to_string(),
            Expr::Prim(b, args) => format!("{} {}", b.name(), atoms(args)),
            Expr::Math(m, args) => format!("{} {}", m.external(), atoms(args)),
            Expr::Call(f, args) => {
                let name = self.p.function(*f).map(|g| g.name.to_string()).unwrap_or(format!("fn#{}", f.0));
                if args.is_empty() {
                    name
                } else {
                    format!("{name} {}", atoms(args))
                }
            }
            Expr::Record(fields) if is_tuple_labels(fields.iter().map(|(l, _)| l)) => {
                let items: Vec<String> = fields.iter().map(|(_, a)| atom(a)).collect();
                if items.len() == 1 {
                    format!("({},)", items[0])
                } else {
                    format!("({})", items.join(", "))
                }
            }
            Expr::Record(fields) => {
                let items: Vec<String> = fields.iter().map(|(l, a)| format!("{l} = {}", atom(a))).collect();
                format!("{{{}}}", items.join(", "))
            }
            Expr::Project(a, l) => format!("{}.{l}", atom(a)),
            Expr::Seq(items) => format!("[{}]", items.iter().map(atom).collect::<Vec<_>>().join(", ")),
            Expr::Con { variant, tag, payload } => format!("{} {}", self.constructor(*variant, *tag), atom(payload)),
            Expr::IsCon { value, variant, tag } => format!("{} is {}", atom(value), self.constructor(*variant, *tag)),
            Expr::Payload { value, variant, tag } => format!("{} as {}", atom(value), self.constructor(*variant, *tag)),
            Expr::If { .. } => "if".into(),
            Expr::Map { f, seqs } => {
                let kw = if seqs.len() == 2 { "map2" } else { "map" };
                format!("{kw} {} {}", self.fun_ref(f), atoms(seqs))
            }
            Expr::Reduce { f, neutral, seq } => format!("reduce {} {} {}", self.fun_ref(f), atom(neutral), atom(seq)),
            Expr::Foldl { f, init, seq } => format!("foldl {} {} {}", self.fun_ref(f), atom(init), atom(seq)),
            Expr::Create { len, f } => format!("create {} {}", atom(len), self.fun_ref(f)),
            Expr::Flatten(a) => format!("flatten {}", atom(a)),
            Expr::Loop { n, f, parallel } => {
                format!("{} {} {}", if *parallel { "loop" } else { "seqLoop" }, atom(n), self.fun_ref(f))
            }
            Expr::SeqLoopAcc { init, n, f } => format!("seqLoopAcc {} {} {}", atom(init), atom(n), self.fun_ref(f)),
            Expr::Derivative { which, f, args } => {
                let args: Vec<String> = args.iter().map(atom).collect();
                format!("{} {} {}", which.name(), self.fun_ref(f), args.join(" "))
            }
            Expr::SizeEq { seq, dim, size } => {
                let heads = "(head ".repeat(*dim);
                format!("sizeEq (length {heads}{}{}) {}", atom(seq), ")".repeat(*dim), atom(size))
            }
            Expr::SizeCoerce { seq, dim, size } => format!("{} :> {}[{}]", atom(seq), "[]".repeat(*dim), atom(size)),
            Expr::Utest { test, expected, using, on_fail } => {
                let mut s = format!("utest {} with {}", atom(test), atom(expected));
                if let Some(f) = using {
                    s += &format!(" using {}", self.fun_ref(f));
                }
                if let Some(f) = on_fail {
                    s += &format!(" else {}", self.fun_ref(f));
                }
                s
            }
            Expr::Never => "never".into(),
            Expr::Apply(f, args) => format!("apply {} {}", atom(f), atoms(args)),
            Expr::Closure(callee, args) => format!("closure {}", self.applied(*callee, args)),
            Expr::Accelerate { name, args, .. } => format!("accelerate {name} {}", atoms(args)),
        }
    }
}

fn atoms(items: &[Atom]) -> String {
    items.iter().map(atom).collect::<Vec<_>>().join(" ")
}

fn atom(a: &Atom) -> String {
    match a {
        Atom::Var(v) => v.name.to_string(),
        Atom::Lit(Lit::Int(i)) => i.to_string(),
        Atom::Lit(Lit::Float(f)) => format!("{f:?}"),
        Atom::Lit(Lit::Bool(b)) => b.to_string(),
        Atom::Lit(Lit::Char(c)) => format!("'{}'", c.escape_default()),
        Atom::Lit(Lit::Unit) => "()".into(),
    }
}
