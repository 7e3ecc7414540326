//! Higher-rank types, as Miking's type checker accepts them: a type
//! annotation may quantify inside a type (`(all a. a -> a) -> Int`, a
//! record field `f : all a. a -> a`). Inference stays Hindley–Milner;
//! only where an expected type holds a quantifier is an expression
//! checked against it instead of inferred:
//!
//! - `lam x. e` against `S -> T` binds `x` to `S` as it is, so that a
//!   polymorphic `S` is instantiated afresh at each use of `x` (Miking's
//!   `propagateTyAnnot`);
//! - against `all a. S`, an expression is checked against `S` with `a`
//!   replaced by a fresh rigid variable (a skolem) one level deeper than
//!   the code around it, which no inference variable of that code may be
//!   bound to (`Mismatch::Escape`);
//! - a variable is instantiated at that deeper level, so its own type
//!   variables may stand for the skolems (`f` given where `all a. a -> a`
//!   is expected, with `f : all b. b -> b`; Miking writes `#frozen"f"`);
//! - two quantified types unify up to the names of their variables
//!   (`Unifier::unify`).
//!
//! Where no quantifier is expected, nothing changes: unannotated programs
//! are inferred exactly as before.

use crate::check::Checker;
use crate::unify::{substitute, Mismatch};
use pmx_ast::*;
use rustc_hash::FxHashMap;

impl Checker<'_> {
    /// Whether `t` holds a quantifier anywhere, looking through solved
    /// inference variables.
    pub(crate) fn has_all(&mut self, t: &Ty) -> bool {
        let t = self.u.shallow(t);
        match t.kind() {
            TyKind::All(..) => true,
            TyKind::Seq(e) | TyKind::Tensor(e) => self.has_all(e),
            TyKind::Arrow(a, b) => self.has_all(a) || self.has_all(b),
            TyKind::Record(fields) => fields.iter().any(|(_, f)| self.has_all(f)),
            TyKind::Con(_, _, args) => args.iter().any(|a| self.has_all(a)),
            TyKind::App(head, args) => self.has_all(head) || args.iter().any(|a| self.has_all(a)),
            _ => false,
        }
    }

    /// Miking's `#frozen"x"` (see [`FROZEN_MARK`]): the type of `x` as
    /// bound, polymorphic, and the mark taken out of the tree.
    pub(crate) fn frozen(&mut self, e: &mut Expr) -> Option<Ty> {
        let ExprKind::App(f, a) = &e.kind else { return None };
        let ExprKind::Lam { param, .. } = &f.kind else { return None };
        let ExprKind::Var(name) = &a.kind else { return None };
        if param.text != FROZEN_MARK {
            return None;
        }
        let t = self.value_scheme(name.id);
        if let ExprKind::App(_, a) = std::mem::replace(&mut e.kind, ExprKind::Error) {
            e.kind = a.kind;
        }
        Some(t)
    }

    /// Checks `e` against `expected`, recording its type in `e.ty`.
    pub(crate) fn check(&mut self, e: &mut Expr, expected: &Ty) {
        if !self.has_all(expected) {
            let t = self.infer(e);
            self.unify_at(expected, &t, e.span);
            return;
        }
        let exp = self.u.shallow(expected);
        if let Some(t) = self.frozen(e) {
            e.ty = t.clone();
            self.level += 1;
            self.subsume_at(&exp, &t, e.span);
            self.level -= 1;
            return;
        }
        if let TyKind::All(..) = exp.kind() {
            return self.check_all(e, &exp);
        }
        let span = e.span;
        match (&mut e.kind, exp.kind()) {
            (ExprKind::Lam { param, annotation, body }, TyKind::Arrow(p, r)) => {
                let p = self.u.shallow(p);
                let pt = match annotation {
                    Some(a) => {
                        let t = self.convert_type(a);
                        self.unify_at(&p, &t, param.span);
                        t
                    }
                    None => p,
                };
                self.vars.insert(param.id, pt.clone());
                self.check(body, r);
                e.ty = Ty::arrow(pt, body.ty.clone());
            }
            (ExprKind::Let(b, body), _) => {
                let scheme = self.binding(b);
                self.vars.insert(b.name.id, scheme);
                self.check(body, &exp);
                e.ty = body.ty.clone();
            }
            (ExprKind::RecLets(bindings, body), _) => {
                self.rec_bindings(bindings);
                self.check(body, &exp);
                e.ty = body.ty.clone();
            }
            (ExprKind::Match { scrutinee, pattern, then, otherwise }, _) => {
                let ts = self.infer(scrutinee);
                self.check_pat(pattern, &ts);
                self.check(then, &exp);
                self.check(otherwise, &exp);
                e.ty = exp.clone();
            }
            (ExprKind::Record(fields), TyKind::Record(types))
                if fields.len() == types.len()
                    && fields.iter().all(|(l, _)| types.iter().any(|(t, _)| *t == l.text)) =>
            {
                for (l, f) in fields.iter_mut() {
                    let ft = types.iter().find(|(t, _)| *t == l.text).map(|(_, t)| t.clone());
                    self.check(f, &ft.unwrap_or_else(Ty::unknown));
                }
                e.ty = exp.clone();
            }
            (ExprKind::Var(name), _) => {
                // Instantiated one level deeper, where the skolems of
                // `expected` live: its own variables may stand for them.
                self.level += 1;
                let t = self.value_type(name.id);
                self.subsume_at(&exp, &t, span);
                self.level -= 1;
                e.ty = t;
            }
            _ => {
                let t = self.infer(e);
                self.level += 1;
                self.subsume_at(&exp, &t, span);
                self.level -= 1;
            }
        }
    }

    /// Checks `e` against a quantified type: against its body, with its
    /// variables made skolems one level deeper.
    fn check_all(&mut self, e: &mut Expr, expected: &Ty) {
        self.level += 1;
        let body = self.skolemize(expected);
        self.check(e, &body);
        self.level -= 1;
    }

    /// The body of a quantified type, its variables replaced by skolems of
    /// the current level.
    fn skolemize(&mut self, t: &Ty) -> Ty {
        let mut subst = FxHashMap::default();
        let mut t = t.clone();
        while let TyKind::All(v, _, body) = t.kind() {
            let s = self.u.skolem(&v.name, self.level);
            subst.insert(v.id, s);
            t = self.u.shallow(body);
        }
        substitute(&t, &subst)
    }

    /// Whether `found` is at least as polymorphic as `expected`: the
    /// quantifiers of `expected` (at the top, in record fields and in
    /// results) become skolems of the current level, and the rest unifies.
    fn subsume(&mut self, expected: &Ty, found: &Ty) -> Result<(), Mismatch> {
        let (e, f) = (self.u.shallow(expected), self.u.shallow(found));
        match (e.kind(), f.kind()) {
            (TyKind::All(..), TyKind::All(..)) => self.u.unify(&e, &f),
            (TyKind::All(..), _) => {
                let body = self.skolemize(&e);
                self.subsume(&body, &f)
            }
            (_, TyKind::All(..)) => {
                let t = self.u.instantiate(&f, self.level);
                self.subsume(&e, &t)
            }
            (TyKind::Record(fe), TyKind::Record(ff))
                if fe.len() == ff.len() && fe.iter().zip(ff.iter()).all(|(x, y)| x.0 == y.0) =>
            {
                fe.iter().zip(ff.iter()).try_for_each(|((_, x), (_, y))| self.subsume(x, y))
            }
            (TyKind::Arrow(p1, r1), TyKind::Arrow(p2, r2)) => {
                self.u.unify(p1, p2)?;
                self.subsume(r1, r2)
            }
            _ => self.u.unify(&e, &f),
        }
    }

    fn subsume_at(&mut self, expected: &Ty, found: &Ty, span: Span) {
        if let Err(m) = self.subsume(expected, found) {
            let (e, f) = self.show2(expected, found);
            let d = self.mismatch_diag(m, span, &e, &f);
            self.diags.push(d);
        }
    }
}
