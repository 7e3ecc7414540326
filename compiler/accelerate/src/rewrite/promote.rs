//! Promotions (section 4.6 of the reference): `foldl op ne s` with a known
//! associative operator (`assoc.rs`) becomes `reduce op ne s` when `ne` is
//! its neutral element and `op ne (reduce op neutral s)` otherwise, so
//! that Futhark runs it in parallel; `foldl concat [] s` becomes
//! `flatten s`. An operator without a neutral literal stays a `foldl`.

use super::assoc::{self, UserOps};
use super::{app, builtin, builtin_of};
use pmx_ast::*;

pub fn promote_folds(e: &mut Expr) {
    let user = assoc::user_ops(e);
    promote_all(e, &user);
}

fn promote_all(e: &mut Expr, user: &UserOps) {
    if let Some(new) = promote(e, user) {
        *e = new;
    }
    pmx_ast::visit::children_mut(e, &mut |c| promote_all(c, user));
}

fn promote(e: &Expr, user: &UserOps) -> Option<Expr> {
    let ExprKind::App(g, s) = &e.kind else { return None };
    let ExprKind::App(h, ne) = &g.kind else { return None };
    let ExprKind::App(fold, op_e) = &h.kind else { return None };
    if builtin_of(fold) != Some(Builtin::Foldl) {
        return None;
    }
    let op = assoc::op_of(op_e, user, &e.ty)?;
    let neutral_value = op.neutral.clone()?;
    let span = e.span;
    let ty = e.ty.clone();
    let seq_ty = s.ty.clone();
    if builtin_of(op_e) == Some(Builtin::Concat) && assoc::is_neutral(&op, ne) {
        let flat_ty = Ty::arrow(seq_ty, ty.clone());
        return Some(app(builtin(Builtin::Flatten, flat_ty, span), vec![(**s).clone()], &ty));
    }
    let op_ty = op_e.ty.clone();
    let reduce_ty = Ty::arrow(op_ty, Ty::arrow(ty.clone(), Ty::arrow(seq_ty, ty.clone())));
    if assoc::is_neutral(&op, ne) {
        return Some(app(
            builtin(Builtin::Reduce, reduce_ty, span),
            vec![(**op_e).clone(), (**ne).clone(), (**s).clone()],
            &ty,
        ));
    }
    let reduced =
        app(builtin(Builtin::Reduce, reduce_ty, span), vec![(**op_e).clone(), neutral_value, (**s).clone()], &ty);
    Some(app((**op_e).clone(), vec![(**ne).clone(), reduced], &ty))
}
