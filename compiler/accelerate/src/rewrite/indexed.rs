//! Recursion over indices (section 4.6 of the reference: recursion shaped
//! like `map` or `map2`, written with an index instead of head and tail):
//!
//! ```text
//! recursive let f = lam a. lam b. lam i.
//!   if lti i (length a) then cons (g (get a i) (get b i)) (f a b (addi i 1))
//!   else []
//! ```
//!
//! builds the elements `i, i+1, ..` up to the length, so its step becomes
//! `create (subi (length a) i) (lam j. g (get a (addi i j)) (get b (addi i j)))`
//! under the same condition: Futhark runs it as a parallel `tabulate`,
//! where the recursion could not compile at all. Writing it with `create`
//! and the same `get`s (rather than `map2` over slices) keeps it exact for
//! every start index and every pair of lengths: the same elements are
//! computed in the same order and a `get` out of bounds fails at the same
//! element. Any number of sequences may be indexed; the other parameters
//! must be passed unchanged. The condition may be `lti i (length s)`,
//! `gti (length s) i` (step in the `then` branch) or `geqi i (length s)`,
//! `leqi (length s) i` (step in the `else` branch); the other branch is `[]`.

use super::{app, app1, app2, builtin, call_of, concat_singleton, fresh, is_var, lam, var};
use crate::free::free_vars;
use pmx_ast::*;

/// The rewritten value of a recursive binding over indices.
pub(super) fn rewrite_indexed(b: &Binding, next: &mut u32) -> Option<Expr> {
    let f = b.name.id;
    let (params, body) = super::lambda_params(&b.value)?;
    let ExprKind::Match { scrutinee, pattern, then, otherwise } = &body.kind else { return None };
    if !matches!(pattern.kind, PatKind::Bool(true)) {
        return None;
    }
    let param = |e: &Expr| params.iter().position(|(p, _)| is_var(e, p.id));
    let length_of = |e: &Expr| app1(e, Builtin::Length).and_then(param);
    // The index, the sequence whose length bounds it, and whether the
    // step is the `then` branch.
    let (i, s, step_first) = [Builtin::Lti, Builtin::Gti, Builtin::Geqi, Builtin::Leqi].iter().find_map(|op| {
        let (l, r) = app2(scrutinee, *op)?;
        match op {
            Builtin::Lti => Some((param(l)?, length_of(r)?, true)),
            Builtin::Gti => Some((param(r)?, length_of(l)?, true)),
            Builtin::Geqi => Some((param(l)?, length_of(r)?, false)),
            _ => Some((param(r)?, length_of(l)?, false)),
        }
    })?;
    if i == s || !matches!(params[i].1.kind(), TyKind::Int) {
        return None;
    }
    let (step, base) = if step_first { (&**then, &**otherwise) } else { (&**otherwise, &**then) };
    if !matches!(&base.kind, ExprKind::Seq(items) if items.is_empty()) {
        return None;
    }
    let (e, rest) = app2(step, Builtin::Cons).or_else(|| concat_singleton(step))?;
    // The recursive call: the index plus one, everything else unchanged.
    let args = call_of(rest, f)?;
    if args.len() != params.len() {
        return None;
    }
    let next_index = |a: &Expr| {
        app2(a, Builtin::Addi).is_some_and(|(x, y)| {
            let one = |e: &Expr| matches!(e.kind, ExprKind::Lit(Lit::Int(1)));
            (is_var(x, params[i].0.id) && one(y)) || (one(x) && is_var(y, params[i].0.id))
        })
    };
    for (k, a) in args.iter().enumerate() {
        if !(if k == i { next_index(a) } else { is_var(a, params[k].0.id) }) {
            return None;
        }
    }
    if free_vars(e).iter().any(|u| u.id == f) {
        return None;
    }
    // `e` at index `i + j`.
    let span = b.value.span;
    let (iname, _) = &params[i];
    let j = fresh(next, "j", span);
    let int2 = Ty::arrow(Ty::int(), Ty::arrow(Ty::int(), Ty::int()));
    let shifted = app(
        builtin(Builtin::Addi, int2.clone(), span),
        vec![var(iname, &Ty::int(), span), var(&j, &Ty::int(), span)],
        &Ty::int(),
    );
    let mut elem = e.clone();
    replace_var(&mut elem, iname.id, &shifted);
    let (sname, sty) = &params[s];
    let length =
        app(builtin(Builtin::Length, Ty::arrow(sty.clone(), Ty::int()), span), vec![var(sname, sty, span)], &Ty::int());
    let count = app(builtin(Builtin::Subi, int2, span), vec![length, var(iname, &Ty::int(), span)], &Ty::int());
    let fun = lam(j, &Ty::int(), elem);
    let create_ty = Ty::arrow(Ty::int(), Ty::arrow(fun.ty.clone(), step.ty.clone()));
    let created = app(builtin(Builtin::Create, create_ty, span), vec![count, fun], &step.ty);
    let (then, otherwise) = if step_first { (created, base.clone()) } else { (base.clone(), created) };
    let new_body = Expr {
        kind: ExprKind::Match {
            scrutinee: scrutinee.clone(),
            pattern: pattern.clone(),
            then: Box::new(then),
            otherwise: Box::new(otherwise),
        },
        span: body.span,
        ty: body.ty.clone(),
    };
    Some(params.iter().rev().fold(new_body, |acc, (p, t)| lam(p.clone(), t, acc)))
}

fn replace_var(e: &mut Expr, id: NameId, with: &Expr) {
    if let ExprKind::Var(n) = &e.kind {
        if n.id == id {
            let span = e.span;
            *e = with.clone();
            e.span = span;
        }
        return;
    }
    pmx_ast::visit::children_mut(e, &mut |c| replace_var(c, id, with));
}
