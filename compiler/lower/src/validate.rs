//! The validator: checks that a program keeps the invariants listed in
//! the crate's documentation. It reports every violation it finds (as
//! plain messages naming the function or entry and the variable), and
//! never assumes what it checks.

use crate::callgraph::callees;
use crate::ir::*;
use crate::signature;
use pmx_ast::{compare_labels, Builtin};
use rustc_hash::{FxHashMap, FxHashSet};
use std::cmp::Ordering;

pub fn validate(p: &Program) -> Vec<String> {
    validate_only(p, &|_| true)
}

/// [`validate`], with the bodies of only the functions `checked` accepts
/// (host code: those compiled; a function the lowering gave up on, and
/// those that call it, are not).
pub fn validate_only(p: &Program, checked: &dyn Fn(FnId) -> bool) -> Vec<String> {
    run(p, checked).into_iter().map(|(_, m)| m).collect()
}

/// [`validate_only`] in one pass, its problems sorted by where they are:
/// those of the program as a whole (its types, its functions' ids, names,
/// order and recursion marks, its entries), and the first in the body of
/// each checked function that has one (host code leaves that function,
/// and what calls it, to the interpreter).
pub fn validate_by_function(p: &Program, checked: &dyn Fn(FnId) -> bool) -> (Vec<String>, FxHashMap<FnId, String>) {
    let mut program = Vec::new();
    let mut functions: FxHashMap<FnId, String> = FxHashMap::default();
    for (f, m) in run(p, checked) {
        match f {
            Some(f) => {
                functions.entry(f).or_insert(m);
            }
            None => program.push(m),
        }
    }
    (program, functions)
}

/// Every problem, with the checked function whose body has it.
fn run(p: &Program, checked: &dyn Fn(FnId) -> bool) -> Vec<(Option<FnId>, String)> {
    let mut v =
        Validator { p, problems: Vec::new(), defined: FxHashSet::default(), place: String::new(), body_of: None };
    v.program(checked);
    v.problems
}

struct Validator<'a> {
    p: &'a Program,
    problems: Vec<(Option<FnId>, String)>,
    /// The checked function whose body is being checked.
    body_of: Option<FnId>,
    /// Every variable defined so far in the program (each once).
    defined: FxHashSet<VarId>,
    /// Where the check is (for messages).
    place: String,
}

/// The variables in scope: each with its definition, and the names used in
/// the current function.
#[derive(Default)]
struct Scope {
    vars: FxHashMap<VarId, Var>,
    names: FxHashSet<pmx_ast::SmolStr>,
}

impl<'a> Validator<'a> {
    fn problem(&mut self, what: String) {
        self.problems.push((self.body_of, format!("{}: {what}", self.place)));
    }

    fn program(&mut self, checked: &dyn Fn(FnId) -> bool) {
        let p = self.p;
        for (i, v) in p.variants.iter().enumerate() {
            self.place = format!("type {} (#{i})", v.name);
            for c in &v.constructors {
                self.ty(&c.payload);
            }
        }
        let mut names = FxHashSet::default();
        let mut groups_seen: FxHashSet<u32> = FxHashSet::default();
        for (i, f) in p.functions.iter().enumerate() {
            self.place = format!("function {}", f.name);
            if f.id != FnId(i as u32) {
                self.problem(format!("its id is {} but it is function {i}", f.id.0));
            }
            if !names.insert(f.name.clone()) {
                self.problem("another function has the same name".into());
            }
            if Builtin::from_name(&f.name).is_some() {
                self.problem("its name is a built-in's".into());
            }
            // A group's functions are consecutive.
            if i > 0 && p.functions[i - 1].group != f.group && !groups_seen.insert(f.group) {
                self.problem(format!("group {} is not consecutive", f.group));
            }
            if i == 0 {
                groups_seen.insert(f.group);
            }
            let mut cs = Vec::new();
            callees(&f.body, &mut cs);
            for c in &cs {
                match p.function(*c) {
                    None => self.problem(format!("refers to function {} which does not exist", c.0)),
                    Some(g) if g.id > f.id && g.group != f.group => {
                        self.problem(format!("refers to {}, defined after it in another group", g.name))
                    }
                    Some(_) => {}
                }
            }
            if cs.contains(&f.id) && !f.recursive {
                self.problem("calls itself but is not marked recursive".into());
            }
            if f.tail_recursive && !f.recursive {
                self.problem("is marked tail-recursive but not recursive".into());
            }
            if checked(f.id) {
                self.body_of = Some(f.id);
                self.body(&f.params, &f.result, &f.body);
                self.body_of = None;
            }
        }
        let mut ids = FxHashSet::default();
        for e in &p.entries {
            self.place = format!("entry {}", e.name);
            if !ids.insert(e.id) {
                self.problem("another entry has the same identity".into());
            }
            let mut cs = Vec::new();
            callees(&e.body, &mut cs);
            for c in cs {
                if p.function(c).is_none() {
                    self.problem(format!("refers to function {} which does not exist", c.0));
                }
            }
            self.body(&e.params, &e.result, &e.body);
        }
    }

    fn body(&mut self, params: &[Var], result: &Type, body: &Block) {
        let mut scope = Scope::default();
        for v in params {
            self.define(&mut scope, v);
        }
        self.ty(result);
        self.block(&mut scope, body, result);
    }

    fn define(&mut self, scope: &mut Scope, v: &Var) {
        if !self.defined.insert(v.id) {
            self.problem(format!("`{}` (#{}) is defined twice", v.name, v.id.0));
        }
        if !scope.names.insert(v.name.clone()) {
            self.problem(format!("the name `{}` is used by two variables", v.name));
        }
        self.ty(&v.ty);
        scope.vars.insert(v.id, v.clone());
    }

    /// A type is well-formed: records have fields, sorted and distinct;
    /// variants exist.
    fn ty(&mut self, t: &Type) {
        match t {
            Type::Record(fields) => {
                if fields.is_empty() {
                    self.problem("a record type without fields (`()` is `Unit`)".into());
                }
                if fields.windows(2).any(|w| compare_labels(&w[0].0, &w[1].0) != Ordering::Less) {
                    self.problem(format!("the record type `{t}` has unsorted or repeated labels"));
                }
                fields.iter().for_each(|(_, f)| self.ty(f));
            }
            Type::Seq(e) | Type::Tensor(e) => self.ty(e),
            Type::Fun(a, r) => {
                if self.p.target != crate::ir::Target::Host {
                    self.problem(format!("the function type `{t}` in a program for {}", self.p.target.name()));
                }
                self.ty(a);
                self.ty(r);
            }
            Type::Opaque(_, args) => {
                if self.p.target != crate::ir::Target::Host {
                    self.problem(format!("the built-in type `{t}` in a program for {}", self.p.target.name()));
                }
                args.iter().for_each(|a| self.ty(a));
            }
            Type::Variant(v) if self.p.variant(*v).is_none() => self.problem(format!("no variant type #{}", v.0)),
            _ => {}
        }
    }

    /// The block's statements, in a scope that ends with it; its result
    /// has type `expected`.
    fn block(&mut self, scope: &mut Scope, b: &Block, expected: &Type) {
        let mut added = Vec::new();
        for s in &b.stmts {
            let saved = self.place.clone();
            self.place = format!("{saved}, `{}`", s.var.name);
            self.stmt(scope, s);
            self.place = saved;
            self.define(scope, &s.var);
            added.push(s.var.id);
        }
        let t = self.atom(scope, &b.result);
        if &t != expected {
            self.problem(format!("a block's result `{}` has type `{t}`, not `{expected}`", show(&b.result)));
        }
        for id in added {
            scope.vars.remove(&id);
        }
    }

    /// The atom's type; a variable must be in scope with that type.
    fn atom(&mut self, scope: &Scope, a: &Atom) -> Type {
        if let Atom::Var(v) = a {
            match scope.vars.get(&v.id) {
                None => self.problem(format!("`{}` (#{}) is used where it is not defined", v.name, v.id.0)),
                Some(d) if d.ty != v.ty || d.name != v.name => self.problem(format!(
                    "`{}` is used as `{}` of type `{}` but defined as `{}` of type `{}`",
                    v.name, v.name, v.ty, d.name, d.ty
                )),
                Some(_) => {}
            }
        }
        a.ty()
    }

    fn expect(&mut self, what: &str, got: &Type, want: &Type) {
        if got != want {
            self.problem(format!("{what} has type `{got}`, not `{want}`"));
        }
    }

    fn stmt(&mut self, scope: &mut Scope, s: &Stmt) {
        let ty = &s.var.ty;
        let seq_elem = |t: &Type| t.elem().cloned();
        match &s.expr {
            Expr::Atom(a) => {
                let t = self.atom(scope, a);
                self.expect("the value", &t, ty);
            }
            Expr::Prim(b, args) => {
                let ts: Vec<Type> = args.iter().map(|a| self.atom(scope, a)).collect();
                // Host code calls the runtime's built-ins, whatever they
                // take.
                let host_call = self.p.target == Target::Host && *b != Builtin::Accelerate;
                if !signature::is_primitive(*b) && !host_call {
                    self.problem(format!("`{}` is not a primitive (it has a node of its own)", b.name()));
                } else if let Err(e) = signature::check(*b, &ts, ty) {
                    self.problem(e);
                }
            }
            Expr::Math(m, args) => {
                let ts: Vec<Type> = args.iter().map(|a| self.atom(scope, a)).collect();
                self.math(*m, &ts, ty);
            }
            Expr::Call(f, args) => {
                let ts: Vec<Type> = args.iter().map(|a| self.atom(scope, a)).collect();
                match self.p.function(*f) {
                    None => self.problem(format!("calls function {} which does not exist", f.0)),
                    Some(g) => {
                        let want: Vec<Type> = g.params.iter().map(|p| p.ty.clone()).collect();
                        if ts != want {
                            self.problem(format!("calls {} with arguments of types {ts:?}, not {want:?}", g.name));
                        }
                        self.expect(&format!("the call of {}", g.name), &g.result, ty);
                    }
                }
            }
            Expr::Record(fields) => {
                let ts: Vec<(pmx_ast::SmolStr, Type)> =
                    fields.iter().map(|(l, a)| (l.clone(), self.atom(scope, a))).collect();
                self.expect("the record", &Type::Record(ts), ty);
            }
            Expr::Project(a, l) => {
                let t = self.atom(scope, a);
                match t.field(l) {
                    Some(f) => self.expect(&format!("field `{l}`"), f, ty),
                    None => self.problem(format!("`{t}` has no field `{l}`")),
                }
            }
            Expr::Seq(items) => {
                let Some(e) = seq_elem(ty) else { return self.problem(format!("a sequence of type `{ty}`")) };
                for a in items {
                    let t = self.atom(scope, a);
                    self.expect("an element", &t, &e);
                }
            }
            Expr::Con { variant, tag, payload } => {
                let t = self.atom(scope, payload);
                if let Some(c) = self.constructor(*variant, *tag) {
                    self.expect("the payload", &t, &c);
                }
                self.expect("the constructed value", &Type::Variant(*variant), ty);
            }
            Expr::IsCon { value, variant, tag } => {
                let t = self.atom(scope, value);
                self.constructor(*variant, *tag);
                self.expect("the tested value", &t, &Type::Variant(*variant));
                self.expect("the test", &Type::Bool, ty);
            }
            Expr::Payload { value, variant, tag } => {
                let t = self.atom(scope, value);
                self.expect("the value", &t, &Type::Variant(*variant));
                if let Some(c) = self.constructor(*variant, *tag) {
                    self.expect("the payload", &c, ty);
                }
            }
            Expr::Apply(f, args) => {
                let ft = self.atom(scope, f);
                let ts: Vec<Type> = args.iter().map(|a| self.atom(scope, a)).collect();
                self.host_only("`apply`");
                if args.is_empty() {
                    self.problem("`apply` without arguments".into());
                }
                match ft.applied(&ts) {
                    Some(r) => self.expect("the application", &r, ty),
                    None => self.problem(format!("a function of type `{ft}` applied to arguments of types {ts:?}")),
                }
            }
            Expr::Closure(callee, args) => {
                let ts: Vec<Type> = args.iter().map(|a| self.atom(scope, a)).collect();
                self.host_only("`closure`");
                let arity = match callee {
                    Callee::Function(id) => self.p.function(*id).map(|g| g.params.len()),
                    Callee::Builtin(b) => Some(signature::arity(*b)),
                    Callee::Math(m) => Some(m.arity()),
                    Callee::Value => {
                        self.problem("a closure of a function value (that is an `apply`)".into());
                        None
                    }
                };
                let Some(arity) = arity else { return };
                if ts.len() >= arity {
                    return self.problem(format!("a closure given {} of {arity} arguments", ts.len()));
                }
                match ty.split_params(arity - ts.len()) {
                    // A built-in that takes functions is applied by the
                    // runtime, which a function reference's callee never
                    // is: any built-in but `accelerate` may be closed over.
                    Some((rest, result)) if matches!(callee, Callee::Builtin(b) if !signature::is_primitive(*b)) => {
                        let Callee::Builtin(b) = callee else { return };
                        let all: Vec<Type> = ts.into_iter().chain(rest).collect();
                        if *b == pmx_ast::Builtin::Accelerate {
                            self.problem("a closure of `accelerate`".into());
                        } else if let Err(e) = signature::check(*b, &all, &result) {
                            self.problem(e);
                        }
                    }
                    Some((rest, result)) => {
                        let f = FunRef { callee: *callee, bound: args.clone(), params: rest.clone(), result };
                        self.fun_ref(scope, &f, &rest, None);
                    }
                    None => self.problem(format!("a closure of {arity} parameters has type `{ty}`")),
                }
            }
            Expr::If { cond, then, otherwise } => {
                let t = self.atom(scope, cond);
                self.expect("the condition", &t, &Type::Bool);
                self.block(scope, then, ty);
                self.block(scope, otherwise, ty);
            }
            Expr::Map { f, seqs } => {
                if !(1..=2).contains(&seqs.len()) {
                    self.problem(format!("`map` over {} sequences", seqs.len()));
                }
                let mut elems = Vec::new();
                for a in seqs {
                    let t = self.atom(scope, a);
                    match seq_elem(&t) {
                        Some(e) => elems.push(e),
                        None => self.problem(format!("`map` over `{t}`, not a sequence")),
                    }
                }
                self.fun_ref(scope, f, &elems, None);
                self.expect("the mapped sequence", &Type::seq(f.result.clone()), ty);
            }
            Expr::Reduce { f, neutral, seq } => {
                let n = self.atom(scope, neutral);
                let s = self.atom(scope, seq);
                self.expect("the reduced sequence", &s, &Type::seq(n.clone()));
                self.fun_ref(scope, f, &[n.clone(), n.clone()], Some(&n));
                self.expect("the reduction", &n, ty);
            }
            Expr::Foldl { f, init, seq } => {
                let a = self.atom(scope, init);
                let s = self.atom(scope, seq);
                match seq_elem(&s) {
                    Some(e) => self.fun_ref(scope, f, &[a.clone(), e], Some(&a)),
                    None => self.problem(format!("`foldl` over `{s}`, not a sequence")),
                }
                self.expect("the fold", &a, ty);
            }
            Expr::Create { len, f } => {
                let n = self.atom(scope, len);
                self.expect("the length", &n, &Type::Int);
                self.fun_ref(scope, f, &[Type::Int], None);
                self.expect("the created sequence", &Type::seq(f.result.clone()), ty);
            }
            Expr::Flatten(a) => {
                let t = self.atom(scope, a);
                match seq_elem(&t) {
                    Some(inner @ Type::Seq(_)) => self.expect("the flattened sequence", &inner, ty),
                    _ => self.problem(format!("`flatten` of `{t}`, not a sequence of sequences")),
                }
            }
            Expr::Loop { n, f, .. } => {
                let t = self.atom(scope, n);
                self.expect("the iteration count", &t, &Type::Int);
                self.fun_ref(scope, f, &[Type::Int], Some(&Type::Unit));
                self.expect("the loop", &Type::Unit, ty);
            }
            Expr::SeqLoopAcc { init, n, f } => {
                let a = self.atom(scope, init);
                let t = self.atom(scope, n);
                self.expect("the iteration count", &t, &Type::Int);
                self.fun_ref(scope, f, &[a.clone(), Type::Int], Some(&a));
                self.expect("the loop", &a, ty);
            }
            Expr::Derivative { which, f, args } => {
                let types: Vec<Type> = args.iter().map(|a| self.atom(scope, a)).collect();
                let Some(x) = types.first().cloned() else {
                    return self.problem(format!("`{}` without a point", which.name()));
                };
                self.fun_ref(scope, f, std::slice::from_ref(&x), None);
                match which {
                    Builtin::Grad => {
                        self.expect("the differentiated function's result", &f.result, &Type::Float);
                        self.expect("the gradient", &x, ty);
                    }
                    Builtin::Vjp => {
                        if let Some(dy) = types.get(1) {
                            self.expect("the cotangent", dy, &f.result);
                        }
                        self.expect("the input cotangent", &x, ty);
                    }
                    _ => {
                        if let Some(dx) = types.get(1) {
                            self.expect("the tangent", dx, &x);
                        }
                        self.expect("the output tangent", &f.result, ty);
                    }
                }
            }
            Expr::SizeEq { seq, dim, size } | Expr::SizeCoerce { seq, dim, size } => {
                let t = self.atom(scope, seq);
                let n = self.atom(scope, size);
                self.expect("the size", &n, &Type::Int);
                let mut inner = Some(&t);
                for _ in 0..=*dim {
                    inner = inner.and_then(Type::elem);
                }
                if inner.is_none() {
                    self.problem(format!("`{t}` has no dimension {dim}"));
                }
                if let Expr::SizeCoerce { .. } = &s.expr {
                    self.expect("the coerced sequence", &t, ty);
                    if self.p.target != crate::ir::Target::Futhark {
                        self.problem("a size coercion outside a Futhark program".into());
                    }
                } else {
                    self.expect("the size constraint", &Type::Unit, ty);
                }
            }
            Expr::Utest { test, expected, using, on_fail } => {
                let a = self.atom(scope, test);
                let b = self.atom(scope, expected);
                match using {
                    Some(f) => self.fun_ref(scope, f, &[a.clone(), b.clone()], Some(&Type::Bool)),
                    None => self.expect("the expected value", &b, &a),
                }
                if let Some(f) = on_fail {
                    self.fun_ref(scope, f, &[a, b], Some(&Type::seq(Type::Char)));
                }
                self.expect("the utest", &Type::Unit, ty);
            }
            Expr::Never => {}
            Expr::Accelerate { args, .. } => {
                args.iter().for_each(|a| {
                    self.atom(scope, a);
                });
                self.host_only("`accelerate`");
            }
        }
    }

    fn constructor(&mut self, v: VariantId, tag: usize) -> Option<Type> {
        match self.p.variant(v).map(|d| d.constructors.get(tag)) {
            Some(Some(c)) => Some(c.payload.clone()),
            Some(None) => {
                self.problem(format!("variant type #{} has no constructor {tag}", v.0));
                None
            }
            None => {
                self.problem(format!("no variant type #{}", v.0));
                None
            }
        }
    }

    /// A function reference: its atoms in scope, its callee's parameters
    /// its bound arguments then `params`, its callee's result `result`;
    /// the keyword's expectations `args` (and `result`, when it says).
    fn fun_ref(&mut self, scope: &Scope, f: &FunRef, args: &[Type], result: Option<&Type>) {
        let bound: Vec<Type> = f.bound.iter().map(|a| self.atom(scope, a)).collect();
        if f.params != args {
            self.problem(format!("a function reference takes {:?} where {args:?} is passed", f.params));
        }
        if let Some(r) = result {
            self.expect("the function reference's result", &f.result, r);
        }
        let all: Vec<Type> = bound.into_iter().chain(f.params.iter().cloned()).collect();
        match f.callee {
            Callee::Function(id) => match self.p.function(id) {
                None => self.problem(format!("a function reference to function {} which does not exist", id.0)),
                Some(g) => {
                    let want: Vec<Type> = g.params.iter().map(|p| p.ty.clone()).collect();
                    if all != want {
                        self.problem(format!("a reference to {} with parameter types {all:?}, not {want:?}", g.name));
                    }
                    self.expect(&format!("the result of {}", g.name), &f.result, &g.result);
                }
            },
            Callee::Builtin(b) => {
                if !signature::is_primitive(b) {
                    self.problem(format!("a function reference to `{}`, which is not a primitive", b.name()));
                } else if let Err(e) = signature::check(b, &all, &f.result) {
                    self.problem(e);
                }
            }
            Callee::Math(m) => self.math(m, &all, &f.result),
            Callee::Value => {
                self.host_only("a function reference that applies a function value");
                match all.split_first() {
                    Some((ft, rest)) if !rest.is_empty() => match ft.applied(rest) {
                        Some(r) => self.expect("the function value's result", &f.result, &r),
                        None => self.problem(format!("a function of type `{ft}` applied to {rest:?}")),
                    },
                    _ => self.problem("a function reference that applies no function value to arguments".into()),
                }
            }
        }
    }

    /// A node of host code only.
    fn host_only(&mut self, what: &str) {
        if self.p.target != crate::ir::Target::Host {
            self.problem(format!("{what} in a program for {}", self.p.target.name()));
        }
    }

    /// A math external takes its arity of `Float`s and gives a `Float`.
    fn math(&mut self, m: Math, args: &[Type], result: &Type) {
        if args.len() != m.arity() || args.iter().any(|t| *t != Type::Float) {
            self.problem(format!("`{}` applied to {args:?}, not {} floats", m.external(), m.arity()));
        }
        self.expect(&format!("the result of `{}`", m.external()), result, &Type::Float);
    }
}

fn show(a: &Atom) -> String {
    match a {
        Atom::Var(v) => v.name.to_string(),
        Atom::Lit(l) => format!("{l:?}"),
    }
}
