//! Futhark-side rewrites of recursion (section 4.6 of the reference):
//! a recursive function over a sequence that walks it by head and tail is
//! rewritten into the built-in it is shaped like, so that no recursion is
//! left for the Futhark backend:
//!
//! - **map**: `if null s then [] else cons e (f .. (tail s))` (or `concat
//!   [e] ..`, or `match s with [h] ++ t then .. else []`) becomes
//!   `map (lam x. e) s`;
//! - **fold with an associative operator** (Miking's `tailrecursion.mc`
//!   turns this into accumulator style first): `if null s then b else op
//!   e (f .. (tail s))` (or `op (f ..) e`), `op` a known associative
//!   operator (`assoc.rs`), becomes `foldl (lam a. lam x. op a e) b s`
//!   when `op` is commutative; otherwise the fold starts from the neutral
//!   element, keeps the order of the elements, and `b` is put on its side
//!   at the end;
//! - **accumulator**: `if null s then acc else f .. (g acc e) .. (tail s)`
//!   becomes `foldl (lam acc. lam x. g acc e) acc s`.
//!
//! In each, `e` may use the current element (`head s`, or `h`) and the
//! function's other parameters, which must be passed unchanged; `let`s
//! that name heads and tails in front of the step are seen through. Shapes that
//! match none are left alone (and reported as recursion by the Futhark
//! well-formedness check). Recursion shaped like `map2` is in `map2.rs`,
//! recursion over an index in `indexed.rs`.
//! Around it: `cons`/`snoc` become `concat`
//! ([`cons_snoc_to_concat`], first, so the shapes above are also found
//! written with `concat`), groups are split into `let`s and the smallest
//! `recursive` groups (`demote.rs`), and folds with a known associative operator are
//! promoted to `reduce` and `flatten` ([`promote_folds`]).

mod assoc;
mod demote;
pub(crate) mod hist;
mod indexed;
mod inline_hof;
mod map2;
mod normalize;
mod promote;

pub use demote::demote_recursive;
pub use inline_hof::inline_higher_order;
pub use normalize::normalize_recursion;
pub use promote::promote_folds;

use crate::free::free_vars;
use crate::lift::SYNTHETIC;
use pmx_ast::*;

/// Rewrites every single recursive function of the chain that it can.
pub fn rewrite_recursion(e: &mut Expr) {
    let user = assoc::user_ops(e);
    let mut next = 0u32;
    let mut cur = e;
    loop {
        if let ExprKind::RecLets(bs, _) = &mut cur.kind {
            if bs.len() == 1 {
                let value = rewrite(&bs[0], &user, &mut next)
                    .or_else(|| map2::rewrite_map2(&bs[0], &mut next))
                    .or_else(|| map2::rewrite_map2_acc(&bs[0], &mut next))
                    .or_else(|| indexed::rewrite_indexed(&bs[0], &mut next));
                if let Some(value) = value {
                    bs[0].value = value;
                }
            }
        }
        match crate::chain::rest_mut(cur) {
            Some(rest) => cur = rest,
            None => return,
        }
    }
}

pub(super) use pmx_ast::spine::builtin as builtin_of;

/// `b a` for a built-in `b`: the argument.
pub(super) fn app1(e: &Expr, b: Builtin) -> Option<&Expr> {
    match &e.kind {
        ExprKind::App(f, a) if builtin_of(f) == Some(b) => Some(a),
        _ => None,
    }
}

/// `b x y` for a built-in `b`.
pub(super) fn app2(e: &Expr, b: Builtin) -> Option<(&Expr, &Expr)> {
    match &e.kind {
        ExprKind::App(f, y) => app1(f, b).map(|x| (x, &**y)),
        _ => None,
    }
}

pub(super) fn is_var(e: &Expr, id: NameId) -> bool {
    matches!(&e.kind, ExprKind::Var(n) if n.id == id)
}

pub(super) use pmx_ast::spine::spine;

/// The parameters of a function value (with their types) and its body
/// under them.
pub(super) fn lambda_params(value: &Expr) -> Option<(Vec<(Name, Ty)>, &Expr)> {
    let mut params = Vec::new();
    let mut body = value;
    while let ExprKind::Lam { param, body: inner, .. } = &body.kind {
        params.push((param.clone(), body.ty.as_arrow()?.0.clone()));
        body = inner;
    }
    Some((params, body))
}

/// The spine of a call of `f`: its arguments.
pub(super) fn call_of(e: &Expr, f: NameId) -> Option<Vec<&Expr>> {
    let (head, args) = spine(e);
    is_var(head, f).then_some(args)
}

/// How the function takes its sequence apart.
pub(super) struct Walk {
    pub s: NameId,
    /// The element as an expression to replace (`head s`) or a name (`h`).
    pub head: Option<NameId>,
    /// The rest as a name (`t`), when a pattern binds it.
    pub tail: Option<NameId>,
}

impl Walk {
    pub fn is_head(&self, e: &Expr) -> bool {
        app1(e, Builtin::Head).is_some_and(|x| is_var(x, self.s)) || self.head.is_some_and(|h| is_var(e, h))
    }
    pub fn is_tail(&self, e: &Expr) -> bool {
        app1(e, Builtin::Tail).is_some_and(|x| is_var(x, self.s)) || self.tail.is_some_and(|t| is_var(e, t))
    }
}

/// Replaces the current element by `x`; fails if `e` uses the sequence,
/// its rest, or the function otherwise.
pub(super) fn element_fn(e: &Expr, walk: &Walk, f: NameId, x: &Name, elem: &Ty) -> Option<Expr> {
    let mut out = e.clone();
    replace_head(&mut out, walk, x, elem);
    let uses = free_vars(&out);
    let forbidden = |id: NameId| id == walk.s || id == f || walk.tail == Some(id) || walk.head == Some(id);
    if uses.iter().any(|u| forbidden(u.id)) {
        return None;
    }
    Some(out)
}

pub(super) fn replace_head(e: &mut Expr, walk: &Walk, x: &Name, elem: &Ty) {
    if walk.is_head(e) {
        *e = Expr { kind: ExprKind::Var(x.clone()), span: e.span, ty: elem.clone() };
        return;
    }
    pmx_ast::visit::children_mut(e, &mut |c| replace_head(c, walk, x, elem));
}

pub(super) fn var(n: &Name, ty: &Ty, span: Span) -> Expr {
    Expr { kind: ExprKind::Var(n.clone()), span, ty: ty.clone() }
}

pub(super) fn builtin(b: Builtin, ty: Ty, span: Span) -> Expr {
    Expr { kind: ExprKind::Var(Name { text: SmolStr::new(b.name()), span, id: NameId::builtin(b) }), span, ty }
}

pub(super) fn app(f: Expr, args: Vec<Expr>, result: &Ty) -> Expr {
    let n = args.len();
    let mut acc = f;
    for (i, a) in args.into_iter().enumerate() {
        let ty = if i + 1 == n {
            result.clone()
        } else {
            acc.ty.as_arrow().map(|(_, r)| r.clone()).unwrap_or_else(Ty::unknown)
        };
        let span = acc.span;
        acc = Expr { kind: ExprKind::App(Box::new(acc), Box::new(a)), span, ty };
    }
    acc
}

pub(super) fn lam(p: Name, pty: &Ty, body: Expr) -> Expr {
    let span = body.span;
    let ty = Ty::arrow(pty.clone(), body.ty.clone());
    Expr { kind: ExprKind::Lam { param: p, annotation: None, body: Box::new(body) }, span, ty }
}

pub(super) fn fresh(next: &mut u32, text: &str, span: Span) -> Name {
    *next += 1;
    Name { text: SmolStr::new(text), span, id: NameId { file: SYNTHETIC, index: (1 << 29) + *next } }
}

/// The rewritten value of a recursive binding, if it has a known shape.
fn rewrite(b: &Binding, user: &assoc::UserOps, next: &mut u32) -> Option<Expr> {
    let f = b.name.id;
    // The parameters, the last one being the sequence.
    let (params, body) = lambda_params(&b.value)?;
    let (s, sty) = params.last()?.clone();
    let TyKind::Seq(elem) = sty.kind() else { return None };
    let elem = elem.clone();
    let ExprKind::Match { scrutinee, pattern, then, otherwise } = &body.kind else { return None };
    if !is_var(scrutinee, s.id) && app1(scrutinee, Builtin::Null).is_none_or(|x| !is_var(x, s.id)) {
        return None;
    }
    // Which branch is the empty case, and how the other names the parts.
    let (base, step, walk) = match &pattern.kind {
        PatKind::Bool(true) if app1(scrutinee, Builtin::Null).is_some() => {
            (&**then, &**otherwise, Walk { s: s.id, head: None, tail: None })
        }
        PatKind::Seq(items) if items.is_empty() && is_var(scrutinee, s.id) => {
            (&**then, &**otherwise, Walk { s: s.id, head: None, tail: None })
        }
        PatKind::Edge { prefix, middle: Some(t), suffix } if prefix.len() == 1 && suffix.is_empty() => {
            let PatKind::Bind(h) = &prefix[0].kind else { return None };
            (&**otherwise, &**then, Walk { s: s.id, head: Some(h.id), tail: Some(t.id) })
        }
        _ => return None,
    };
    let step = &inline_walk_lets(step);
    let span = b.value.span;
    let others: Vec<NameId> = params[..params.len() - 1].iter().map(|(p, _)| p.id).collect();
    // A recursive call passing the other parameters unchanged (except,
    // for the accumulator form, the one at `changed`) and the rest.
    let unchanged_call = |e: &Expr, changed: Option<usize>| -> bool {
        let Some(args) = call_of(e, f) else { return false };
        args.len() == params.len()
            && walk.is_tail(args[args.len() - 1])
            && others.iter().enumerate().all(|(i, p)| Some(i) == changed || is_var(args[i], *p))
    };
    let result_ty = body.ty.clone();
    let x = fresh(next, "x", span);
    let new_body = if let (Some((e, rest)), true) = (
        app2(step, Builtin::Cons).or_else(|| concat_singleton(step)),
        matches!(&base.kind, ExprKind::Seq(i) if i.is_empty()),
    ) {
        // map
        if !unchanged_call(rest, None) {
            return None;
        }
        let e = element_fn(e, &walk, f, &x, &elem)?;
        let out_elem = e.ty.clone();
        let fun = lam(x, &elem, e);
        let map_ty = Ty::arrow(fun.ty.clone(), Ty::arrow(sty.clone(), Ty::seq(out_elem)));
        app(builtin(Builtin::Map, map_ty, span), vec![fun, var(&s, &sty, span)], &result_ty)
    } else if let Some((op, e, element_first)) = assoc::binary(step, user).and_then(|(op, l, r)| {
        if unchanged_call(r, None) {
            Some((op, l, true))
        } else if unchanged_call(l, None) {
            Some((op, r, false))
        } else {
            None
        }
    }) {
        // fold with an associative operator (tail recursion made
        // accumulator style): `op e0 (op e1 (.. base))`.
        if free_vars(base).iter().any(|u| u.id == f || u.id == s.id) {
            return None;
        }
        let e = element_fn(e, &walk, f, &x, &elem)?;
        let a = fresh(next, "acc", span);
        let acc = var(&a, &result_ty, span);
        // With a commutative operator the fold starts from the base; else
        // it starts from the neutral element, keeps the order of the
        // elements, and the base is put on its side at the end.
        let (combined, init) = if op.commutative {
            (app(op.head.clone(), vec![acc, e], &result_ty), base.clone())
        } else if element_first {
            (app(op.head.clone(), vec![acc, e], &result_ty), op.neutral.clone()?)
        } else {
            (app(op.head.clone(), vec![e, acc], &result_ty), op.neutral.clone()?)
        };
        let fun = lam(a, &result_ty, lam(x, &elem, combined));
        let fold_ty =
            Ty::arrow(fun.ty.clone(), Ty::arrow(result_ty.clone(), Ty::arrow(sty.clone(), result_ty.clone())));
        let folded = app(builtin(Builtin::Foldl, fold_ty, span), vec![fun, init, var(&s, &sty, span)], &result_ty);
        if op.commutative || assoc::is_neutral(&op, base) {
            folded
        } else if element_first {
            app(op.head.clone(), vec![folded, base.clone()], &result_ty)
        } else {
            app(op.head.clone(), vec![base.clone(), folded], &result_ty)
        }
    } else {
        // accumulator: the base is one of the parameters, and the call
        // changes only that one.
        let ExprKind::Var(acc) = &base.kind else { return None };
        let k = others.iter().position(|p| *p == acc.id)?;
        if !unchanged_call(step, Some(k)) {
            return None;
        }
        let args = call_of(step, f)?;
        let new_acc = args[k];
        let (acc_name, acc_ty) = params[k].clone();
        let a = fresh(next, &acc_name.text, span);
        let mut e = element_fn(new_acc, &walk, f, &x, &elem)?;
        let mut map = rustc_hash::FxHashMap::default();
        map.insert(acc_name.id, a.clone());
        crate::free::rename(&mut e, &map);
        let fun = lam(a, &acc_ty, lam(x, &elem, e));
        let fold_ty = Ty::arrow(fun.ty.clone(), Ty::arrow(acc_ty.clone(), Ty::arrow(sty.clone(), acc_ty.clone())));
        app(builtin(Builtin::Foldl, fold_ty, span), vec![fun, base.clone(), var(&s, &sty, span)], &result_ty)
    };
    // The same parameters around the new body.
    Some(params.iter().rev().fold(new_body, |acc, (p, t)| lam(p.clone(), t, acc)))
}

/// The step of a recursion with the `let`s that name heads and tails at
/// its front (`let h = head s in let t = tail s in ..`) replaced by what
/// they name, so that the shapes above are found through them (Miking's
/// pattern matcher sees through them too, its programs being in ANF).
pub(super) fn inline_walk_lets(e: &Expr) -> Expr {
    let mut subst: rustc_hash::FxHashMap<NameId, Expr> = rustc_hash::FxHashMap::default();
    let mut cur = e;
    while let ExprKind::Let(b, body) = &cur.kind {
        let v = &b.value;
        let walked = app1(v, Builtin::Head).or_else(|| app1(v, Builtin::Tail));
        if !walked.is_some_and(|x| matches!(x.kind, ExprKind::Var(_))) {
            break;
        }
        let mut value = v.clone();
        substitute(&mut value, &subst);
        subst.insert(b.name.id, value);
        cur = body;
    }
    let mut out = cur.clone();
    if !subst.is_empty() {
        substitute(&mut out, &subst);
    }
    out
}

fn substitute(e: &mut Expr, subst: &rustc_hash::FxHashMap<NameId, Expr>) {
    if let ExprKind::Var(n) = &e.kind {
        if let Some(v) = subst.get(&n.id) {
            *e = v.clone();
            return;
        }
    }
    pmx_ast::visit::children_mut(e, &mut |c| substitute(c, subst));
}

/// `concat [e] rest`.
pub(super) fn concat_singleton(e: &Expr) -> Option<(&Expr, &Expr)> {
    let (l, r) = app2(e, Builtin::Concat)?;
    match &l.kind {
        ExprKind::Seq(items) if items.len() == 1 => Some((&items[0], r)),
        _ => None,
    }
}

/// `cons x s` becomes `concat [x] s` and `snoc s x` becomes `concat s [x]`
/// (Futhark has `concat`, not these).
pub fn cons_snoc_to_concat(e: &mut Expr) {
    let replacement = match &e.kind {
        ExprKind::App(g, b) => match &g.kind {
            ExprKind::App(f, a) => match builtin_of(f) {
                Some(Builtin::Cons) => Some(((**a).clone(), (**b).clone(), true)),
                Some(Builtin::Snoc) => Some(((**b).clone(), (**a).clone(), false)),
                _ => None,
            },
            _ => None,
        },
        _ => None,
    };
    if let Some((x, s, front)) = replacement {
        let span = e.span;
        let ty = e.ty.clone();
        let single = Expr { kind: ExprKind::Seq(vec![x]), span, ty: ty.clone() };
        let concat_ty = Ty::arrow(ty.clone(), Ty::arrow(ty.clone(), ty.clone()));
        let args = if front { vec![single, s] } else { vec![s, single] };
        *e = app(builtin(Builtin::Concat, concat_ty, span), args, &ty);
    }
    pmx_ast::visit::children_mut(e, &mut cons_snoc_to_concat);
}
