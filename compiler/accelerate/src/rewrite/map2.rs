//! Recursion shaped like `map2` (section 4.6 of the reference,
//! `parallel-patterns.mc`): a recursive function whose last two parameters
//! are sequences walked together by head and tail, building a sequence
//! element by element, becomes `map2`, which Futhark runs in parallel and
//! the recursion it replaces it could not compile at all.
//!
//! The shapes, each exact for sequences of any lengths:
//!
//! - one sequence decides when to stop (`if null a then [] else cons e
//!   (f .. (tail a) (tail b))`, or `match a with [h] ++ t then .. else
//!   []`) and the other is only taken apart alongside: this is `map2 (lam
//!   x. lam y. e) a (subsequence b 0 (length a))` (when `b` is shorter
//!   both fail: the original at `head`/`tail` of an empty sequence, the
//!   rewrite at `map2` of different lengths);
//! - both are matched at once (`match (a, b) with ([x] ++ xs, [y] ++ ys)
//!   then cons e (f .. xs ys) else []`), or each is tested with `null`
//!   (`if null a then [] else if null b then [] else cons e (f .. (tail
//!   a) (tail b))`, Miking's own `map2` pattern), which stops at the
//!   shorter one: both are cut to the shorter length first;
//! - the accumulator form of Miking's pattern (`if null a then acc else
//!   if null b then acc else f .. (tail a) (tail b) (snoc acc e)`), the
//!   three parameters anywhere: `concat acc (map2 ..)`.
//!
//! `e` may use the current elements and the other parameters, which the
//! recursive call must pass unchanged. Anything else is left alone.

use super::{app, app1, builtin, call_of, concat_singleton, element_fn, fresh, is_var, lam, replace_head, var, Walk};
use crate::free::free_vars;
use pmx_ast::*;

/// The rewritten value of a recursive binding shaped like `map2`.
pub(super) fn rewrite_map2(b: &Binding, next: &mut u32) -> Option<Expr> {
    let f = b.name.id;
    let (params, body) = super::lambda_params(&b.value)?;
    if params.len() < 2 {
        return None;
    }
    let (a, aty) = params[params.len() - 2].clone();
    let (bn, bty) = params[params.len() - 1].clone();
    let (TyKind::Seq(ea), TyKind::Seq(eb)) = (aty.kind(), bty.kind()) else { return None };
    let ExprKind::Match { scrutinee, pattern, then, otherwise } = &body.kind else { return None };
    let seq_walk = |s: NameId| Walk { s, head: None, tail: None };
    let edge = |p: &Pat| -> Option<(NameId, NameId)> {
        match &p.kind {
            PatKind::Edge { prefix, middle: Some(t), suffix } if prefix.len() == 1 && suffix.is_empty() => {
                let PatKind::Bind(h) = &prefix[0].kind else { return None };
                Some((h.id, t.id))
            }
            _ => None,
        }
    };
    // The empty case, the step, how each sequence is taken apart, and
    // which one decides the length (`None`: the shorter).
    let (base, step, wa, wb, driver) = if let Some(x) = app1(scrutinee, Builtin::Null) {
        if !matches!(pattern.kind, PatKind::Bool(true)) {
            return None;
        }
        let driver = if is_var(x, a.id) {
            a.id
        } else if is_var(x, bn.id) {
            bn.id
        } else {
            return None;
        };
        // Miking's `map2` pattern tests both: `if null a then [] else if
        // null b then [] else ..` stops at the shorter sequence.
        let other = if driver == a.id { bn.id } else { a.id };
        match second_null(otherwise, other) {
            Some((base2, step)) => {
                if !matches!(&base2.kind, ExprKind::Seq(items) if items.is_empty()) {
                    return None;
                }
                (&**then, step, seq_walk(a.id), seq_walk(bn.id), None)
            }
            None => (&**then, &**otherwise, seq_walk(a.id), seq_walk(bn.id), Some(driver)),
        }
    } else if let ExprKind::Record(fields) = &scrutinee.kind {
        // `(a, b)` against `([x] ++ xs, [y] ++ ys)`.
        let [(l0, s0), (l1, s1)] = fields.as_slice() else { return None };
        let PatKind::Record(pats) = &pattern.kind else { return None };
        let [(p0, q0), (p1, q1)] = pats.as_slice() else { return None };
        if l0.text != "0" || l1.text != "1" || p0.text != "0" || p1.text != "1" {
            return None;
        }
        if !is_var(s0, a.id) || !is_var(s1, bn.id) {
            return None;
        }
        let (h0, t0) = edge(q0)?;
        let (h1, t1) = edge(q1)?;
        let wa = Walk { s: a.id, head: Some(h0), tail: Some(t0) };
        let wb = Walk { s: bn.id, head: Some(h1), tail: Some(t1) };
        (&**otherwise, &**then, wa, wb, None)
    } else if is_var(scrutinee, a.id) || is_var(scrutinee, bn.id) {
        let (h, t) = edge(pattern)?;
        let on_a = is_var(scrutinee, a.id);
        let named = |s: NameId| Walk { s, head: Some(h), tail: Some(t) };
        let (wa, wb) = if on_a { (named(a.id), seq_walk(bn.id)) } else { (seq_walk(a.id), named(bn.id)) };
        (&**otherwise, &**then, wa, wb, Some(if on_a { a.id } else { bn.id }))
    } else {
        return None;
    };
    if !matches!(&base.kind, ExprKind::Seq(items) if items.is_empty()) {
        return None;
    }
    let step = &super::inline_walk_lets(step);
    let (e, rest) = super::app2(step, Builtin::Cons).or_else(|| concat_singleton(step))?;
    // The recursive call: the other parameters unchanged, both rests.
    let args = call_of(rest, f)?;
    let n = params.len();
    if args.len() != n || !wa.is_tail(args[n - 2]) || !wb.is_tail(args[n - 1]) {
        return None;
    }
    if !params[..n - 2].iter().zip(&args).all(|((p, _), arg)| is_var(arg, p.id)) {
        return None;
    }
    let span = b.value.span;
    let x = fresh(next, "x", span);
    let y = fresh(next, "y", span);
    let mut e = e.clone();
    replace_head(&mut e, &wa, &x, ea);
    let e = element_fn(&e, &wb, f, &y, eb)?;
    let uses = free_vars(&e);
    if uses.iter().any(|u| u.id == a.id || wa.head == Some(u.id) || wa.tail == Some(u.id)) {
        return None;
    }
    let fun = lam(x, ea, lam(y, eb, e));
    let new_body = build_map2(fun, (&a, &aty), (&bn, &bty), driver, &body.ty, span, next);
    Some(params.iter().rev().fold(new_body, |acc, (p, t)| lam(p.clone(), t, acc)))
}

/// `map2 fun a b`, with the sequence that does not decide the length cut
/// to the length of the one that does (`driver`), or both cut to the
/// shorter length (`driver` is `None`).
fn build_map2(
    fun: Expr,
    (a, aty): (&Name, &Ty),
    (bn, bty): (&Name, &Ty),
    driver: Option<NameId>,
    result_ty: &Ty,
    span: Span,
    next: &mut u32,
) -> Expr {
    let map2_ty = Ty::arrow(fun.ty.clone(), Ty::arrow(aty.clone(), Ty::arrow(bty.clone(), result_ty.clone())));
    let int_fn = |r: Ty| Ty::arrow(Ty::int(), r);
    let length = |s: &Name, sty: &Ty| {
        let len = builtin(Builtin::Length, Ty::arrow(sty.clone(), Ty::int()), span);
        app(len, vec![var(s, sty, span)], &Ty::int())
    };
    let cut = |s: &Name, sty: &Ty, len: Expr| {
        let sub = builtin(Builtin::Subsequence, Ty::arrow(sty.clone(), int_fn(int_fn(sty.clone()))), span);
        let zero = Expr { kind: ExprKind::Lit(Lit::Int(0)), span, ty: Ty::int() };
        app(sub, vec![var(s, sty, span), zero, len], sty)
    };
    let map2 =
        |l: Expr, r: Expr| app(builtin(Builtin::Map2, map2_ty.clone(), span), vec![fun.clone(), l, r], result_ty);
    match driver {
        Some(d) if d == a.id => map2(var(a, aty, span), cut(bn, bty, length(a, aty))),
        Some(_) => map2(cut(a, aty, length(bn, bty)), var(bn, bty, span)),
        None => {
            // `let n = if lti (length a) (length b) then length a else
            // length b in map2 g (subsequence a 0 n) (subsequence b 0 n)`
            let nn = fresh(next, "n", span);
            let lti = builtin(Builtin::Lti, int_fn(int_fn(Ty::bool())), span);
            let shorter = Expr {
                kind: ExprKind::Match {
                    scrutinee: Box::new(app(lti, vec![length(a, aty), length(bn, bty)], &Ty::bool())),
                    pattern: Box::new(Pat { kind: PatKind::Bool(true), span, ty: Ty::bool() }),
                    then: Box::new(length(a, aty)),
                    otherwise: Box::new(length(bn, bty)),
                },
                span,
                ty: Ty::int(),
            };
            let nv = var(&nn, &Ty::int(), span);
            let inner = map2(cut(a, aty, nv.clone()), cut(bn, bty, nv));
            let binding = Binding { name: nn, annotation: None, value: shorter, scheme: Ty::int(), span };
            Expr { kind: ExprKind::Let(Box::new(binding), Box::new(inner)), span, ty: result_ty.clone() }
        }
    }
}

/// Miking's own `map2` pattern (`parallel-patterns.mc`), in accumulator
/// style: `if null a then acc else if null b then acc else f .. (tail a)
/// (tail b) (concat acc [e])` (`snoc acc e` is written so by then), the
/// three parameters in any positions and the others passed unchanged,
/// becomes `concat acc (map2 (lam x. lam y. e) a' b')` with `a'` and `b'`
/// cut to the shorter length.
pub(super) fn rewrite_map2_acc(b: &Binding, next: &mut u32) -> Option<Expr> {
    let f = b.name.id;
    let (params, body) = super::lambda_params(&b.value)?;
    let ExprKind::Match { scrutinee, pattern, then, otherwise } = &body.kind else { return None };
    if !matches!(pattern.kind, PatKind::Bool(true)) {
        return None;
    }
    let ExprKind::Var(first) = &app1(scrutinee, Builtin::Null)?.kind else { return None };
    let ExprKind::Var(acc) = &then.kind else { return None };
    let ExprKind::Match { scrutinee: s2, .. } = &otherwise.kind else { return None };
    let ExprKind::Var(second) = &app1(s2, Builtin::Null)?.kind else { return None };
    let (base2, step) = second_null(otherwise, second.id)?;
    if !is_var(base2, acc.id) {
        return None;
    }
    let position = |id: NameId| params.iter().position(|(p, _)| p.id == id);
    let (ia, ib, ik) = (position(first.id)?, position(second.id)?, position(acc.id)?);
    if ia == ib || ia == ik || ib == ik {
        return None;
    }
    let (a, aty) = params[ia].clone();
    let (bn, bty) = params[ib].clone();
    let (TyKind::Seq(ea), TyKind::Seq(eb)) = (aty.kind(), bty.kind()) else { return None };
    let step = &super::inline_walk_lets(step);
    let args = call_of(step, f)?;
    if args.len() != params.len() {
        return None;
    }
    let wa = Walk { s: a.id, head: None, tail: None };
    let wb = Walk { s: bn.id, head: None, tail: None };
    if !wa.is_tail(args[ia]) || !wb.is_tail(args[ib]) {
        return None;
    }
    let unchanged =
        params.iter().zip(&args).enumerate().all(|(i, ((p, _), arg))| [ia, ib, ik].contains(&i) || is_var(arg, p.id));
    if !unchanged {
        return None;
    }
    // The new accumulator: `concat acc [e]`.
    let (grown, single) = super::app2(args[ik], Builtin::Concat)?;
    let ExprKind::Seq(items) = &single.kind else { return None };
    let [e] = items.as_slice() else { return None };
    if !is_var(grown, acc.id) {
        return None;
    }
    let span = b.value.span;
    let x = fresh(next, "x", span);
    let y = fresh(next, "y", span);
    let mut e = e.clone();
    replace_head(&mut e, &wa, &x, ea);
    let e = element_fn(&e, &wb, f, &y, eb)?;
    if free_vars(&e).iter().any(|u| u.id == a.id || u.id == acc.id) {
        return None;
    }
    let acc_ty = params[ik].1.clone();
    let fun = lam(x, ea, lam(y, eb, e));
    let mapped = build_map2(fun, (&a, &aty), (&bn, &bty), None, &acc_ty, span, next);
    let concat = builtin(Builtin::Concat, Ty::arrow(acc_ty.clone(), Ty::arrow(acc_ty.clone(), acc_ty.clone())), span);
    let new_body = app(concat, vec![var(acc, &acc_ty, span), mapped], &body.ty);
    Some(params.iter().rev().fold(new_body, |acc, (p, t)| lam(p.clone(), t, acc)))
}

/// `if null s then base else step` on the sequence `s`: the base and the
/// step.
fn second_null(e: &Expr, s: NameId) -> Option<(&Expr, &Expr)> {
    let ExprKind::Match { scrutinee, pattern, then, otherwise } = &e.kind else { return None };
    let x = app1(scrutinee, Builtin::Null)?;
    (matches!(pattern.kind, PatKind::Bool(true)) && is_var(x, s)).then_some((&**then, &**otherwise))
}
