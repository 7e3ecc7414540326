//! Which parameters accelerated code may write: a tensor write
//! (`tensorSetExn`, `tensorLinearSetExn`) through any value derived from a
//! parameter (a view of it, a field of it, an element of it) writes that
//! parameter. The copy analysis uses this: a tensor nothing writes is not
//! copied back.
//!
//! The analysis is sound by over-approximation. A value's *roots* are the
//! parameters of the enclosing function it may have come from: anything
//! computed from a parameter (a `let`, a pattern match) may alias it. A
//! call of a known function writes the roots of the arguments it binds to
//! parameters that function writes, whether the call is saturated or a
//! partial application passed on (it may be called later). A call of an
//! unknown function (a function-typed parameter) may write any argument.
//! A higher-order built-in given a function that writes a parameter the
//! built-in fills in may write every value argument of the built-in.
//! Lambda lifting left every function at the top level, so a fixed point
//! over the top-level functions covers the program.

use crate::chain;
use pmx_ast::spine::{function_argument, spine};
use pmx_ast::*;
use rustc_hash::{FxHashMap, FxHashSet};

/// For each top-level function, which of its parameters it may write.
pub struct Writes {
    params: FxHashMap<NameId, Vec<bool>>,
}

impl Writes {
    /// Whether function `f` may write its parameter `i` (unknown functions
    /// and positions: yes).
    pub fn writes(&self, f: NameId, i: usize) -> bool {
        self.params.get(&f).and_then(|w| w.get(i)).copied().unwrap_or(true)
    }
}

pub fn analyze(program: &Expr) -> Writes {
    let functions: Vec<(NameId, Vec<NameId>, &Expr)> = chain::bindings(program)
        .map(|b| {
            let (params, body) = crate::free::lambdas(&b.value);
            (b.name.id, params, body)
        })
        .collect();
    let mut writes = Writes { params: functions.iter().map(|(f, ps, _)| (*f, vec![false; ps.len()])).collect() };
    // Each round can only add writes, and there are finitely many.
    loop {
        let mut changed = false;
        for (f, params, body) in &functions {
            let mut walk = Walk { writes: &writes, roots: FxHashMap::default(), written: FxHashSet::default() };
            for (i, p) in params.iter().enumerate() {
                walk.roots.insert(*p, std::iter::once(i).collect());
            }
            walk.expr(body);
            let written = walk.written;
            let entry = writes.params.get_mut(f).expect("every function has an entry");
            for i in written {
                if !entry[i] {
                    entry[i] = true;
                    changed = true;
                }
            }
        }
        if !changed {
            return writes;
        }
    }
}

struct Walk<'a> {
    writes: &'a Writes,
    /// The parameters (by position) each variable may derive from.
    roots: FxHashMap<NameId, FxHashSet<usize>>,
    /// The parameters written.
    written: FxHashSet<usize>,
}

impl Walk<'_> {
    /// The roots of an expression's value: those of every variable in it.
    fn roots_of(&self, e: &Expr) -> FxHashSet<usize> {
        let mut out = FxHashSet::default();
        for f in pmx_ast::visit::free_vars(e) {
            if let Some(r) = self.roots.get(&f.id) {
                out.extend(r.iter().copied());
            }
        }
        out
    }

    fn write(&mut self, e: &Expr) {
        let r = self.roots_of(e);
        self.written.extend(r);
    }

    fn bind_pattern(&mut self, p: &Pat, roots: &FxHashSet<usize>) {
        let mut bound = FxHashSet::default();
        pmx_ast::visit::pat_binders(p, &mut bound);
        for id in bound {
            self.roots.insert(id, roots.clone());
        }
    }

    fn expr(&mut self, e: &Expr) {
        match &e.kind {
            ExprKind::Let(b, _) => {
                let r = self.roots_of(&b.value);
                self.roots.insert(b.name.id, r);
            }
            ExprKind::Match { scrutinee, pattern, .. } => {
                let r = self.roots_of(scrutinee);
                self.bind_pattern(pattern, &r);
            }
            ExprKind::App(..) => self.application(e),
            _ => {}
        }
        match &e.kind {
            // The spine's arguments are walked by `application`.
            ExprKind::App(..) => {
                let (head, args) = spine(e);
                self.expr(head);
                args.into_iter().for_each(|a| self.expr(a));
            }
            _ => pmx_ast::visit::children(e, &mut |c| self.expr(c)),
        }
    }

    fn application(&mut self, e: &Expr) {
        let (head, args) = spine(e);
        let ExprKind::Var(f) = &head.kind else {
            // A computed function: it may write anything given to it.
            args.iter().for_each(|a| self.write(a));
            return;
        };
        match f.id.as_builtin() {
            Some(Builtin::TensorSetExn | Builtin::TensorLinearSetExn) => {
                if let Some(t) = args.first() {
                    self.write(t);
                }
            }
            Some(b) => {
                // A function argument that writes what the built-in passes
                // to it may write any value argument the built-in has.
                let writes_given = args.iter().enumerate().any(|(i, a)| {
                    function_argument(b, i) && {
                        let (g, bound) = spine(a);
                        match &g.kind {
                            ExprKind::Var(g) if self.writes.params.contains_key(&g.id) => {
                                let arity = self.writes.params[&g.id].len();
                                (bound.len()..arity).any(|k| self.writes.writes(g.id, k))
                            }
                            // Anything else (a lambda left in place, a
                            // computed function) may write what it gets.
                            _ => true,
                        }
                    }
                });
                if writes_given {
                    for (i, a) in args.iter().enumerate() {
                        if !function_argument(b, i) {
                            self.write(a);
                        }
                    }
                }
            }
            None if self.writes.params.contains_key(&f.id) => {
                for (i, a) in args.iter().enumerate() {
                    if self.writes.writes(f.id, i) {
                        self.write(a);
                    }
                }
            }
            None => args.iter().for_each(|a| self.write(a)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(text: &str, index: u32) -> Name {
        Name { text: SmolStr::new(text), span: Span::BUILTIN, id: NameId { file: FileId(0), index } }
    }
    fn var(n: &Name) -> Expr {
        Expr { kind: ExprKind::Var(n.clone()), span: Span::BUILTIN, ty: Ty::unknown() }
    }
    fn builtin(b: Builtin) -> Expr {
        let n = Name { text: SmolStr::new(b.name()), span: Span::BUILTIN, id: NameId::builtin(b) };
        var(&n)
    }
    fn app(f: Expr, args: Vec<Expr>) -> Expr {
        args.into_iter().fold(f, |f, a| Expr {
            kind: ExprKind::App(Box::new(f), Box::new(a)),
            span: Span::BUILTIN,
            ty: Ty::unknown(),
        })
    }
    fn lam(p: &Name, body: Expr) -> Expr {
        Expr {
            kind: ExprKind::Lam { param: p.clone(), annotation: None, body: Box::new(body) },
            span: Span::BUILTIN,
            ty: Ty::unknown(),
        }
    }
    fn int(n: i64) -> Expr {
        Expr { kind: ExprKind::Lit(Lit::Int(n)), span: Span::BUILTIN, ty: Ty::int() }
    }
    fn define(n: &Name, value: Expr, rest: Expr) -> Expr {
        let b = Binding { name: n.clone(), annotation: None, value, scheme: Ty::unknown(), span: Span::BUILTIN };
        Expr { kind: ExprKind::Let(Box::new(b), Box::new(rest)), span: Span::BUILTIN, ty: Ty::unknown() }
    }

    /// `f t i = tensorLinearSetExn t i 1`, `g t u = loop 4 (f t)`,
    /// `h t = tensorLinearGetExn t 0`.
    #[test]
    fn writes_through_partial_applications_and_not_reads() {
        let (f, t, i) = (name("f", 1), name("t", 2), name("i", 3));
        let (g, t2, u) = (name("g", 4), name("t", 5), name("u", 6));
        let (h, t3) = (name("h", 7), name("t", 8));
        let f_value = lam(&t, lam(&i, app(builtin(Builtin::TensorLinearSetExn), vec![var(&t), var(&i), int(1)])));
        let g_value = lam(&t2, lam(&u, app(builtin(Builtin::Loop), vec![int(4), app(var(&f), vec![var(&t2)])])));
        let h_value = lam(&t3, app(builtin(Builtin::TensorLinearGetExn), vec![var(&t3), int(0)]));
        let program = define(&f, f_value, define(&g, g_value, define(&h, h_value, Expr::unit(Span::BUILTIN))));
        let w = analyze(&program);
        assert!(w.writes(f.id, 0) && !w.writes(f.id, 1));
        assert!(w.writes(g.id, 0) && !w.writes(g.id, 1));
        assert!(!w.writes(h.id, 0));
    }
}
