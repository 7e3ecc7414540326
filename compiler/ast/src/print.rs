//! Printing the AST as MExpr source that the front end parses again.
//!
//! Binders are printed with their own spelling unless two different
//! bindings share one, in which case every one but the first gets a
//! numbered suffix (later passes such as lambda lifting move bindings to
//! the top level, where equal spellings would shadow each other). Names
//! that are not plain identifiers print as `#var"..."`.

use crate::*;
use std::collections::HashMap;
use std::fmt::Write;

/// Prints a whole module: includes, declarations, `mexpr` body.
pub fn print_module(m: &Module) -> String {
    let mut p = Printer::new();
    p.collect_module(m);
    for inc in &m.includes {
        let _ = writeln!(p.out, "include {}", quote_string(&inc.path));
    }
    for item in &m.items {
        p.item(item);
        p.out.push('\n');
    }
    if let Some(main) = &m.main {
        p.out.push_str("mexpr\n");
        p.expr(main, 0, Ctx::Top);
        p.out.push('\n');
    }
    p.out
}

/// Prints one expression.
pub fn print_expr(e: &Expr) -> String {
    let mut p = Printer::new();
    p.collect_expr(e);
    p.expr(e, 0, Ctx::Top);
    p.out
}

/// Where an expression is printed: what may follow it decides whether an
/// open-ended form (`let`, `lam`, `match`, ...) needs parentheses.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Ctx {
    /// Nothing follows (a body, the end of a declaration).
    Top,
    /// Something follows (`then`, `else`, `in`, `,`, `with`).
    Inner,
    /// The function of an application.
    Fun,
    /// An argument of an application or a projected record.
    Arg,
}

/// The namespaces of MExpr: one spelling may name a value, a constructor
/// and a type at once.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Ns {
    Value,
    Con,
    Type,
}

struct Printer {
    out: String,
    names: HashMap<NameId, String>,
    taken: HashMap<(Ns, String), usize>,
}

/// A plain variable identifier: `[a-z_][a-zA-Z0-9_]*`, not `_` alone.
fn is_ident(s: &str) -> bool {
    let mut cs = s.chars();
    match cs.next() {
        Some(c) if c.is_ascii_lowercase() || c == '_' => {}
        _ => return false,
    }
    s != "_" && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

const KEYWORDS: &[&str] = &[
    "if",
    "then",
    "else",
    "true",
    "false",
    "match",
    "with",
    "utest",
    "type",
    "con",
    "lang",
    "let",
    "recursive",
    "lam",
    "in",
    "end",
    "syn",
    "sem",
    "use",
    "mexpr",
    "include",
    "never",
    "using",
    "external",
    "switch",
    "case",
    "all",
];

fn quote_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        escape(c, '"', &mut out);
    }
    out.push('"');
    out
}

fn escape(c: char, quote: char, out: &mut String) {
    match c {
        '\n' => out.push_str("\\n"),
        '\t' => out.push_str("\\t"),
        '\r' => out.push_str("\\r"),
        '\\' => out.push_str("\\\\"),
        '\u{7}' => out.push_str("\\a"),
        '\u{8}' => out.push_str("\\b"),
        '\u{b}' => out.push_str("\\v"),
        '\u{c}' => out.push_str("\\f"),
        c if c == quote => {
            out.push('\\');
            out.push(c);
        }
        c => out.push(c),
    }
}

fn float_literal(f: f64) -> String {
    let s = format!("{f:?}");
    if s.contains('.') || s.contains('e') {
        s
    } else {
        format!("{s}.0")
    }
}

impl Printer {
    fn new() -> Printer {
        Printer { out: String::new(), names: HashMap::new(), taken: HashMap::new() }
    }

    fn bind(&mut self, n: &Name) {
        self.bind_in(Ns::Value, n);
    }

    fn bind_in(&mut self, ns: Ns, n: &Name) {
        if n.id.as_builtin().is_some() || self.names.contains_key(&n.id) || n.is_anonymous() {
            return;
        }
        let base = n.text.to_string();
        let count = self.taken.entry((ns, base.clone())).or_insert(0);
        let name = if *count == 0 || !n.id.is_resolved() { base.clone() } else { format!("{base}_{count}") };
        *count += 1;
        self.names.insert(n.id, name);
    }

    fn collect_module(&mut self, m: &Module) {
        for item in &m.items {
            match item {
                Item::Let(b) => self.collect_binding(b),
                Item::RecLets(bs, _) => bs.iter().for_each(|b| self.collect_binding(b)),
                Item::Type(d) => self.bind_in(Ns::Type, &d.name),
                Item::Con(d) => self.bind_in(Ns::Con, &d.name),
                Item::Utest(u) => self.collect_utest(u),
                Item::External(d) => self.bind(&d.name),
            }
        }
        if let Some(e) = &m.main {
            self.collect_expr(e);
        }
    }

    fn collect_binding(&mut self, b: &Binding) {
        self.bind(&b.name);
        self.collect_expr(&b.value);
    }

    fn collect_utest(&mut self, u: &Utest) {
        for e in [Some(&u.test), Some(&u.expected), u.using.as_ref(), u.on_fail.as_ref()].into_iter().flatten() {
            self.collect_expr(e);
        }
    }

    fn collect_expr(&mut self, e: &Expr) {
        match &e.kind {
            ExprKind::Lam { param, body, .. } => {
                self.bind(param);
                self.collect_expr(body);
            }
            ExprKind::Let(b, body) => {
                self.collect_binding(b);
                self.collect_expr(body);
            }
            ExprKind::RecLets(bs, body) => {
                bs.iter().for_each(|b| self.collect_binding(b));
                self.collect_expr(body);
            }
            ExprKind::App(f, a) => {
                self.collect_expr(f);
                self.collect_expr(a);
            }
            ExprKind::Match { scrutinee, pattern, then, otherwise } => {
                self.collect_expr(scrutinee);
                self.collect_pat(pattern);
                self.collect_expr(then);
                self.collect_expr(otherwise);
            }
            ExprKind::Seq(items) => items.iter().for_each(|i| self.collect_expr(i)),
            ExprKind::Record(fields) => fields.iter().for_each(|(_, f)| self.collect_expr(f)),
            ExprKind::RecordUpdate(r, fields) => {
                self.collect_expr(r);
                fields.iter().for_each(|(_, f)| self.collect_expr(f));
            }
            ExprKind::Proj(r, _) => self.collect_expr(r),
            ExprKind::ConApp(_, a) => self.collect_expr(a),
            ExprKind::Utest(u, body) => {
                self.collect_utest(u);
                self.collect_expr(body);
            }
            ExprKind::External(d, body) => {
                self.bind(&d.name);
                self.collect_expr(body);
            }
            ExprKind::TypeDecl(d, body) => {
                self.bind_in(Ns::Type, &d.name);
                self.collect_expr(body);
            }
            ExprKind::ConDecl(d, body) => {
                self.bind_in(Ns::Con, &d.name);
                self.collect_expr(body);
            }
            ExprKind::Var(_) | ExprKind::Lit(_) | ExprKind::Never | ExprKind::Error => {}
        }
    }

    fn collect_pat(&mut self, p: &Pat) {
        match &p.kind {
            PatKind::Bind(n) => self.bind(n),
            PatKind::Con(_, a) | PatKind::Not(a) => self.collect_pat(a),
            PatKind::Record(fields) => fields.iter().for_each(|(_, f)| self.collect_pat(f)),
            PatKind::Seq(items) => items.iter().for_each(|i| self.collect_pat(i)),
            PatKind::Edge { prefix, middle, suffix } => {
                prefix.iter().chain(suffix).for_each(|i| self.collect_pat(i));
                if let Some(m) = middle {
                    self.bind(m);
                }
            }
            PatKind::And(a, b) | PatKind::Or(a, b) => {
                self.collect_pat(a);
                self.collect_pat(b);
            }
            _ => {}
        }
    }

    /// The printed form of a name (binder or reference).
    fn name(&self, n: &Name) -> String {
        let text = self.names.get(&n.id).cloned().unwrap_or_else(|| n.text.to_string());
        if text.is_empty() {
            return "_".into();
        }
        if is_ident(&text) && !KEYWORDS.contains(&text.as_str()) || text == "_" {
            text
        } else {
            format!("#var{}", quote_string(&text))
        }
    }

    fn con_name(&self, n: &Name) -> String {
        self.upper_name(n, "con")
    }

    fn type_name(&self, n: &Name) -> String {
        self.upper_name(n, "type")
    }

    /// A constructor or type name: plain when it is `[A-Z][a-zA-Z0-9_]*`,
    /// escaped (`#con"..."`, `#type"..."`) otherwise.
    fn upper_name(&self, n: &Name, escape_kind: &str) -> String {
        let text = self.names.get(&n.id).cloned().unwrap_or_else(|| n.text.to_string());
        if text.chars().next().is_some_and(|c| c.is_ascii_uppercase())
            && text.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            text
        } else {
            format!("#{escape_kind}{}", quote_string(&text))
        }
    }

    fn label(&self, l: &str) -> String {
        if l.chars().all(|c| c.is_ascii_digit()) && !l.is_empty()
            || is_ident(l) && !KEYWORDS.contains(&l)
            || l.chars().next().is_some_and(|c| c.is_ascii_uppercase())
                && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            l.to_string()
        } else {
            format!("#label{}", quote_string(l))
        }
    }

    fn newline(&mut self, indent: usize) {
        self.out.push('\n');
        for _ in 0..indent {
            self.out.push_str("  ");
        }
    }

    fn item(&mut self, item: &Item) {
        match item {
            Item::Let(b) => self.binding(b, 0),
            Item::RecLets(bs, _) => {
                self.out.push_str("recursive");
                for b in bs {
                    self.newline(1);
                    self.binding(b, 1);
                }
                self.out.push_str("\nend");
            }
            Item::Type(d) => self.type_decl(d),
            Item::Con(d) => self.con_decl(d),
            Item::Utest(u) => self.utest(u, 0),
            Item::External(d) => self.external(d),
        }
    }

    fn binding(&mut self, b: &Binding, indent: usize) {
        let _ = write!(self.out, "let {}", self.name(&b.name));
        if let Some(t) = &b.annotation {
            self.out.push_str(" : ");
            self.type_expr(t, 0);
        }
        self.out.push_str(" =");
        self.newline(indent + 1);
        self.expr(&b.value, indent + 1, Ctx::Top);
    }

    fn type_decl(&mut self, d: &TypeDecl) {
        let _ = write!(self.out, "type {}", self.type_name(&d.name));
        for p in &d.params {
            let _ = write!(self.out, " {}", self.name(p));
        }
        if let Some(t) = &d.definition {
            self.out.push_str(" = ");
            self.type_expr(t, 0);
        }
    }

    fn con_decl(&mut self, d: &ConDecl) {
        let _ = write!(self.out, "con {}", self.con_name(&d.name));
        if let Some(t) = &d.annotation {
            self.out.push_str(" : ");
            self.type_expr(t, 0);
        }
    }

    fn external(&mut self, d: &ExternalDecl) {
        let _ = write!(self.out, "external {}{} : ", self.name(&d.name), if d.effect { " !" } else { "" });
        self.type_expr(&d.annotation, 0);
    }

    fn utest(&mut self, u: &Utest, indent: usize) {
        self.out.push_str("utest ");
        self.expr(&u.test, indent + 1, Ctx::Inner);
        self.out.push_str(" with ");
        self.expr(&u.expected, indent + 1, Ctx::Inner);
        if let Some(e) = &u.using {
            self.out.push_str(" using ");
            self.expr(e, indent + 1, Ctx::Inner);
        }
        if let Some(e) = &u.on_fail {
            self.out.push_str(" else ");
            self.expr(e, indent + 1, Ctx::Inner);
        }
    }

    fn expr(&mut self, e: &Expr, indent: usize, ctx: Ctx) {
        let open_ended = matches!(
            e.kind,
            ExprKind::Lam { .. }
                | ExprKind::Let(..)
                | ExprKind::RecLets(..)
                | ExprKind::Match { .. }
                | ExprKind::Utest(..)
                | ExprKind::External(..)
                | ExprKind::TypeDecl(..)
                | ExprKind::ConDecl(..)
        );
        let application = matches!(e.kind, ExprKind::App(..) | ExprKind::ConApp(..));
        let paren = match ctx {
            Ctx::Top => false,
            Ctx::Inner => open_ended,
            Ctx::Fun => open_ended || matches!(e.kind, ExprKind::ConApp(..)),
            Ctx::Arg => open_ended || application,
        };
        if paren {
            self.out.push('(');
        }
        self.expr_bare(e, indent);
        if paren {
            self.out.push(')');
        }
    }

    fn expr_bare(&mut self, e: &Expr, indent: usize) {
        match &e.kind {
            ExprKind::Var(n) => {
                let s = self.name(n);
                self.out.push_str(&s);
            }
            ExprKind::Lit(l) => match l {
                Lit::Int(i) => {
                    let _ = write!(self.out, "{i}");
                }
                Lit::Float(f) => self.out.push_str(&float_literal(*f)),
                Lit::Char(c) => {
                    self.out.push('\'');
                    escape(*c, '\'', &mut self.out);
                    self.out.push('\'');
                }
                Lit::Bool(b) => self.out.push_str(if *b { "true" } else { "false" }),
                Lit::Str(s) => self.out.push_str(&quote_string(s)),
            },
            ExprKind::Lam { param, annotation, body } => {
                let _ = write!(self.out, "lam {}", self.name(param));
                if let Some(t) = annotation {
                    self.out.push_str(" : ");
                    self.type_expr(t, 0);
                }
                self.out.push('.');
                self.newline(indent + 1);
                self.expr(body, indent + 1, Ctx::Top);
            }
            ExprKind::Let(b, body) if b.name.text.is_empty() && b.annotation.is_none() => {
                // `a; b`
                self.expr(&b.value, indent, Ctx::Inner);
                self.out.push(';');
                self.newline(indent);
                self.expr(body, indent, Ctx::Top);
            }
            ExprKind::Let(b, body) => {
                self.binding(b, indent);
                self.out.push_str(" in");
                self.newline(indent);
                self.expr(body, indent, Ctx::Top);
            }
            ExprKind::RecLets(bs, body) => {
                self.out.push_str("recursive");
                for b in bs {
                    self.newline(indent + 1);
                    self.binding(b, indent + 1);
                }
                self.newline(indent);
                self.out.push_str("in");
                self.newline(indent);
                self.expr(body, indent, Ctx::Top);
            }
            ExprKind::App(f, a) => {
                self.expr(f, indent, Ctx::Fun);
                self.out.push(' ');
                self.expr(a, indent, Ctx::Arg);
            }
            ExprKind::Match { scrutinee, pattern, then, otherwise } => {
                if matches!(pattern.kind, PatKind::Bool(true)) {
                    self.out.push_str("if ");
                    self.expr(scrutinee, indent + 1, Ctx::Inner);
                    self.out.push_str(" then");
                } else {
                    self.out.push_str("match ");
                    self.expr(scrutinee, indent + 1, Ctx::Inner);
                    self.out.push_str(" with ");
                    self.pat(pattern);
                    self.out.push_str(" then");
                }
                self.newline(indent + 1);
                self.expr(then, indent + 1, Ctx::Inner);
                self.newline(indent);
                self.out.push_str("else");
                self.newline(indent + 1);
                self.expr(otherwise, indent + 1, Ctx::Top);
            }
            ExprKind::Seq(items) => {
                self.out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        self.out.push_str(", ");
                    }
                    self.expr(item, indent + 1, Ctx::Inner);
                }
                self.out.push(']');
            }
            ExprKind::Record(fields) => self.record(fields, indent),
            ExprKind::RecordUpdate(r, fields) => {
                self.out.push('{');
                self.expr(r, indent + 1, Ctx::Inner);
                self.out.push_str(" with ");
                for (i, (l, f)) in fields.iter().enumerate() {
                    if i > 0 {
                        self.out.push_str(", ");
                    }
                    let _ = write!(self.out, "{} = ", self.label(&l.text));
                    self.expr(f, indent + 1, Ctx::Inner);
                }
                self.out.push('}');
            }
            ExprKind::Proj(r, l) => {
                self.expr(r, indent, Ctx::Arg);
                let _ = write!(self.out, ".{}", self.label(&l.text));
            }
            ExprKind::ConApp(k, a) => {
                let _ = write!(self.out, "{} ", self.con_name(k));
                self.expr(a, indent, Ctx::Arg);
            }
            ExprKind::Never | ExprKind::Error => self.out.push_str("never"),
            ExprKind::Utest(u, body) => {
                self.utest(u, indent);
                self.out.push_str(" in");
                self.newline(indent);
                self.expr(body, indent, Ctx::Top);
            }
            ExprKind::External(d, body) => {
                self.external(d);
                self.out.push_str(" in");
                self.newline(indent);
                self.expr(body, indent, Ctx::Top);
            }
            ExprKind::TypeDecl(d, body) => {
                self.type_decl(d);
                self.out.push_str(" in");
                self.newline(indent);
                self.expr(body, indent, Ctx::Top);
            }
            ExprKind::ConDecl(d, body) => {
                self.con_decl(d);
                self.out.push_str(" in");
                self.newline(indent);
                self.expr(body, indent, Ctx::Top);
            }
        }
    }

    fn record(&mut self, fields: &[(Label, Expr)], indent: usize) {
        self.fields(fields, "=", |p, f| p.expr(f, indent + 1, Ctx::Inner));
    }

    /// A record (`{l = e}`, or `{l : T}` with `sep` ":"), written as a tuple
    /// when its labels are `0`, `1`, ... and as `()` when it is empty. One
    /// layout for expressions, patterns and types.
    fn fields<T>(&mut self, fields: &[(Label, T)], sep: &str, mut item: impl FnMut(&mut Self, &T)) {
        if fields.is_empty() {
            self.out.push_str("()");
        } else if is_tuple_labels(fields.iter().map(|(l, _)| &l.text)) {
            self.out.push('(');
            for (i, (_, f)) in fields.iter().enumerate() {
                if i > 0 {
                    self.out.push_str(", ");
                }
                item(self, f);
            }
            if fields.len() == 1 {
                self.out.push(',');
            }
            self.out.push(')');
        } else {
            self.out.push('{');
            for (i, (l, f)) in fields.iter().enumerate() {
                if i > 0 {
                    self.out.push_str(", ");
                }
                let _ = write!(self.out, "{} {sep} ", self.label(&l.text));
                item(self, f);
            }
            self.out.push('}');
        }
    }

    fn pat(&mut self, p: &Pat) {
        self.pat_prec(p, 0);
    }

    /// Precedence: 0 `|`, 1 `&`, 2 atoms.
    fn pat_prec(&mut self, p: &Pat, prec: u8) {
        match &p.kind {
            PatKind::Or(a, b) | PatKind::And(a, b) => {
                let (mine, op) = if matches!(p.kind, PatKind::Or(..)) { (0, " | ") } else { (1, " & ") };
                if prec > mine {
                    self.out.push('(');
                }
                self.pat_prec(a, mine + 1);
                self.out.push_str(op);
                self.pat_prec(b, mine);
                if prec > mine {
                    self.out.push(')');
                }
            }
            PatKind::Not(a) => {
                self.out.push('!');
                self.pat_prec(a, 2);
            }
            PatKind::Wild | PatKind::Error => self.out.push('_'),
            PatKind::Bind(n) => {
                let s = self.name(n);
                self.out.push_str(&s);
            }
            PatKind::Int(i) => {
                let _ = write!(self.out, "{i}");
            }
            PatKind::Char(c) => {
                self.out.push('\'');
                escape(*c, '\'', &mut self.out);
                self.out.push('\'');
            }
            PatKind::Bool(b) => self.out.push_str(if *b { "true" } else { "false" }),
            PatKind::Con(k, a) => {
                if prec > 1 {
                    self.out.push('(');
                }
                let _ = write!(self.out, "{} ", self.con_name(k));
                self.pat_prec(a, 2);
                if prec > 1 {
                    self.out.push(')');
                }
            }
            PatKind::Record(fields) => self.fields(fields, "=", |p, f| p.pat(f)),
            PatKind::Seq(items) => self.seq_pat(items),
            PatKind::Edge { prefix, middle, suffix } => {
                if prec > 1 {
                    self.out.push('(');
                }
                let mid = match middle {
                    Some(n) => self.name(n),
                    None => "_".into(),
                };
                if !prefix.is_empty() {
                    self.seq_pat(prefix);
                    self.out.push_str(" ++ ");
                }
                self.out.push_str(&mid);
                if !suffix.is_empty() {
                    self.out.push_str(" ++ ");
                    self.seq_pat(suffix);
                }
                if prec > 1 {
                    self.out.push(')');
                }
            }
        }
    }

    fn seq_pat(&mut self, items: &[Pat]) {
        self.out.push('[');
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                self.out.push_str(", ");
            }
            self.pat(item);
        }
        self.out.push(']');
    }

    /// Precedence: 0 anywhere, 1 left of an arrow, 2 argument.
    /// `head a b ..`, in parentheses where an argument stands (`prec`
    /// above 1); `head` alone without arguments.
    fn type_application(&mut self, head: &str, args: &[TypeExpr], prec: u8) {
        let wrap = prec > 1 && !args.is_empty();
        if wrap {
            self.out.push('(');
        }
        self.out.push_str(head);
        for a in args {
            self.out.push(' ');
            self.type_expr(a, 2);
        }
        if wrap {
            self.out.push(')');
        }
    }

    fn type_expr(&mut self, t: &TypeExpr, prec: u8) {
        match &t.kind {
            TypeExprKind::Prim(p) => self.out.push_str(match p {
                Prim::Int => "Int",
                Prim::Float => "Float",
                Prim::Bool => "Bool",
                Prim::Char => "Char",
                Prim::String => "String",
            }),
            TypeExprKind::Unknown | TypeExprKind::Error => self.out.push_str("Unknown"),
            TypeExprKind::Seq(e) => {
                self.out.push('[');
                self.type_expr(e, 0);
                self.out.push(']');
            }
            TypeExprKind::Tensor(e) => {
                self.out.push_str("Tensor[");
                self.type_expr(e, 0);
                self.out.push(']');
            }
            TypeExprKind::Record(fields) => self.fields(fields, ":", |p, f| p.type_expr(f, 0)),
            TypeExprKind::Arrow(a, b) => {
                if prec > 0 {
                    self.out.push('(');
                }
                self.type_expr(a, 1);
                self.out.push_str(" -> ");
                self.type_expr(b, 0);
                if prec > 0 {
                    self.out.push(')');
                }
            }
            TypeExprKind::All(v, kind, body) => {
                if prec > 0 {
                    self.out.push('(');
                }
                let _ = write!(self.out, "all {}", self.name(v));
                if !kind.is_empty() {
                    let entries: Vec<String> = kind.iter().map(|e| self.kind_entry(e)).collect();
                    let _ = write!(self.out, " :: {{{}}}", entries.join(", "));
                }
                self.out.push_str(". ");
                self.type_expr(body, 0);
                if prec > 0 {
                    self.out.push(')');
                }
            }
            TypeExprKind::Var(n) => {
                let s = self.name(n);
                self.out.push_str(&s);
            }
            TypeExprKind::VarApp(n, args) => {
                let head = self.name(n);
                self.type_application(&head, args, prec);
            }
            TypeExprKind::Con(n, args) => {
                let head = self.type_name(n);
                self.type_application(&head, args, prec);
            }
            TypeExprKind::Restricted(n, restriction) => {
                let inner = match restriction {
                    Restriction::Var(v) => self.name(v),
                    Restriction::Cons { negated, cons } => {
                        format!("{}{}", if *negated { "!" } else { "" }, self.con_names(cons))
                    }
                };
                let _ = write!(self.out, "{}{{{inner}}}", self.type_name(n));
            }
        }
    }

    /// `T[> A]`, `T[| A]` or `T[< A B | C]`.
    fn kind_entry(&self, e: &KindEntry) -> String {
        let ty = self.type_name(&e.ty);
        let lower = self.con_names(&e.lower);
        match &e.upper {
            None => format!("{ty}[> {lower}]"),
            Some(upper) if upper == &e.lower => format!("{ty}[| {lower}]"),
            Some(upper) => format!("{ty}[< {} | {lower}]", self.con_names(upper)),
        }
    }

    fn con_names(&self, cons: &[Name]) -> String {
        cons.iter().map(|c| self.con_name(c)).collect::<Vec<_>>().join(" ")
    }
}
