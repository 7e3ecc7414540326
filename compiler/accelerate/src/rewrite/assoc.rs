//! The associative operators the Futhark rewrites know, with their neutral
//! elements (Miking's `function-properties.mc` knows `addi`, `muli` and
//! `concat`; section 4.6 of the reference). Both the rewrite of recursion
//! shaped like a fold and the promotion of `foldl` to `reduce` ask here.
//!
//! Besides those built-ins, a top-level function whose definition is
//! exactly that of the standard library's `and`, `or`, `maxi` or `mini`
//! (`lam a. lam b. if a then b else false`, ...) is known by what it
//! computes, not by its name, which a program may reuse for anything.
//! `maxi` and `mini` have no neutral literal (the smallest `Int` does not
//! print as a literal that parses), so they are rewritten to `foldl` but
//! not promoted to `reduce`.
//!
//! Floating-point `addf` and `mulf` are deliberately not here: rounding
//! makes them non-associative, so reassociating a float fold would change
//! what the program computes (Futhark's `reduce` would too). Miking does
//! not promote them either (reference, section 7).

use super::builtin_of;
use pmx_ast::*;
use rustc_hash::FxHashMap;

/// A known associative operator at one use.
pub(crate) struct Op {
    /// The operator as written: a built-in or a function's variable.
    pub head: Expr,
    /// `op a b == op b a` as well, so a right fold may become a left one
    /// that starts from the base value.
    pub commutative: bool,
    /// Its neutral element (a literal of the operand type), if it has one.
    pub neutral: Option<Expr>,
}

/// A top-level function recognised by its definition.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum UserOp {
    And,
    Or,
    Max,
    Min,
}

pub(crate) type UserOps = FxHashMap<NameId, UserOp>;

/// The recognised functions among the top-level `let`s of a chain.
pub(crate) fn user_ops(program: &Expr) -> UserOps {
    let mut ops = UserOps::default();
    for (d, _) in crate::chain::decls(program) {
        if let crate::chain::Decl::Let(b) = d {
            if let Some(op) = recognise(&b.value) {
                ops.insert(b.name.id, op);
            }
        }
    }
    ops
}

/// `lam a. lam b. if c then x else y` with the shapes of `and`, `or`,
/// `maxi` and `mini`.
fn recognise(value: &Expr) -> Option<UserOp> {
    let ExprKind::Lam { param: a, body, .. } = &value.kind else { return None };
    let ExprKind::Lam { param: b, body, .. } = &body.kind else { return None };
    // `if c then x else y`, or (A-normal form) `let t = c in if t then x
    // else y`.
    let (body, bound) = match &body.kind {
        ExprKind::Let(t, rest) => (&**rest, Some(t)),
        _ => (&**body, None),
    };
    let ExprKind::Match { scrutinee, pattern, then, otherwise } = &body.kind else { return None };
    let scrutinee = match bound {
        Some(t) if matches!(&scrutinee.kind, ExprKind::Var(v) if v.id == t.name.id) => &t.value,
        Some(_) => return None,
        None => scrutinee,
    };
    if !matches!(pattern.kind, PatKind::Bool(true)) {
        return None;
    }
    let is = |e: &Expr, n: &Name| matches!(&e.kind, ExprKind::Var(v) if v.id == n.id);
    let lit = |e: &Expr, v: bool| matches!(e.kind, ExprKind::Lit(Lit::Bool(x)) if x == v);
    if matches!(value.ty.kind(), TyKind::Arrow(p, _) if matches!(p.kind(), TyKind::Bool)) && is(scrutinee, a) {
        if is(then, b) && lit(otherwise, false) {
            return Some(UserOp::And);
        }
        if lit(then, true) && is(otherwise, b) {
            return Some(UserOp::Or);
        }
        return None;
    }
    // A comparison of `a` with `b` (in this order), choosing one of them.
    let ExprKind::App(g, r) = &scrutinee.kind else { return None };
    let ExprKind::App(cmp, l) = &g.kind else { return None };
    if !is(l, a) || !is(r, b) {
        return None;
    }
    let greater = match builtin_of(cmp)? {
        Builtin::Gti | Builtin::Geqi => true,
        Builtin::Lti | Builtin::Leqi => false,
        _ => return None,
    };
    let picks_a = if is(then, a) && is(otherwise, b) {
        true
    } else if is(then, b) && is(otherwise, a) {
        false
    } else {
        return None;
    };
    Some(if greater == picks_a { UserOp::Max } else { UserOp::Min })
}

fn lit(l: Lit, ty: Ty) -> Expr {
    Expr { kind: ExprKind::Lit(l), span: Span::BUILTIN, ty }
}

/// The known operator `e` is, used at operand type `ty`.
pub(crate) fn op_of(e: &Expr, user: &UserOps, ty: &Ty) -> Option<Op> {
    let known = |commutative, neutral| Some(Op { head: e.clone(), commutative, neutral });
    if let Some(b) = builtin_of(e) {
        return match b {
            Builtin::Addi => known(true, Some(lit(Lit::Int(0), Ty::int()))),
            Builtin::Muli => known(true, Some(lit(Lit::Int(1), Ty::int()))),
            Builtin::Concat => {
                known(false, Some(Expr { kind: ExprKind::Seq(Vec::new()), span: Span::BUILTIN, ty: ty.clone() }))
            }
            _ => None,
        };
    }
    let ExprKind::Var(n) = &e.kind else { return None };
    match user.get(&n.id)? {
        UserOp::And => known(true, Some(lit(Lit::Bool(true), Ty::bool()))),
        UserOp::Or => known(true, Some(lit(Lit::Bool(false), Ty::bool()))),
        UserOp::Max | UserOp::Min => known(true, None),
    }
}

/// Whether `e` is the operator's neutral element, written as a literal.
pub(crate) fn is_neutral(op: &Op, e: &Expr) -> bool {
    match (op.neutral.as_ref().map(|n| &n.kind), &e.kind) {
        (Some(ExprKind::Lit(a)), ExprKind::Lit(b)) => a == b,
        (Some(ExprKind::Seq(a)), ExprKind::Seq(b)) => a.is_empty() && b.is_empty(),
        _ => false,
    }
}

/// `op l r` for a known operator: the operator and both operands.
pub(crate) fn binary<'a>(e: &'a Expr, user: &UserOps) -> Option<(Op, &'a Expr, &'a Expr)> {
    let ExprKind::App(g, r) = &e.kind else { return None };
    let ExprKind::App(head, l) = &g.kind else { return None };
    Some((op_of(head, user, &e.ty)?, &**l, &**r))
}
