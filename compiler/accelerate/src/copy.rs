//! Copy analysis (section 4.10 of the reference), for tensors that cross
//! into accelerated code at an accelerate call on the program's top level:
//!
//! - the copy in is not needed when the tensor was just created with
//!   `tensorCreateUninitInt`/`Float` and this call is its first use;
//! - the copy back out is not needed when the tensor was created (not a
//!   view of another), nothing uses it after the call, and it was used
//!   before only as an argument of accelerate calls (so no view of it can
//!   observe the result).
//!
//! Calls elsewhere (inside functions, loops) keep both copies.

use crate::free::free_vars;
use crate::lift::AccBinding;
use crate::Passing;
use pmx_ast::*;
use rustc_hash::FxHashMap;

/// How each parameter of each accelerate binding crosses the boundary.
pub fn analyze(lifted: &Expr, bindings: &[AccBinding]) -> FxHashMap<NameId, Vec<Passing>> {
    let mut out: FxHashMap<NameId, Vec<Passing>> =
        bindings.iter().map(|b| (b.id, b.params.iter().map(|p| Passing::of(&p.ty)).collect())).collect();
    // The top-level chain, as a list of (bound name, value) steps.
    let mut steps: Vec<(Option<NameId>, &Expr)> = Vec::new();
    let mut cur = lifted;
    loop {
        match &cur.kind {
            ExprKind::Let(b, rest) => {
                steps.push((Some(b.name.id), &b.value));
                cur = rest;
            }
            ExprKind::RecLets(bs, rest) => {
                for b in bs {
                    steps.push((Some(b.name.id), &b.value));
                }
                cur = rest;
            }
            ExprKind::Utest(u, rest) => {
                steps.push((None, &u.test));
                steps.push((None, &u.expected));
                cur = rest;
            }
            ExprKind::External(_, rest) | ExprKind::TypeDecl(_, rest) | ExprKind::ConDecl(_, rest) => cur = rest,
            _ => {
                steps.push((None, cur));
                break;
            }
        }
    }
    // What each step uses, found when first asked: only the steps after a
    // tensor's definition are looked at, so a program whose top-level
    // calls pass no tensor (most call accelerated code from inside
    // functions) is not walked at all. The language server runs this
    // after every edit.
    let mut uses: Vec<Option<Vec<NameId>>> = vec![None; steps.len()];
    for (i, (_, value)) in steps.iter().enumerate() {
        let Some((acc, args)) = accelerate_call(value, bindings) else { continue };
        let Some(passing) = out.get_mut(&acc.id) else { continue };
        for (k, arg) in args.iter().enumerate() {
            let ExprKind::Var(v) = &arg.kind else { continue };
            if passing.get(k) != Some(&Passing::CopyInOut) || !matches!(arg.ty.kind(), TyKind::Tensor(_)) {
                continue;
            }
            let mut mentions = |j: usize| {
                uses[j].get_or_insert_with(|| free_vars(steps[j].1).into_iter().map(|f| f.id).collect()).contains(&v.id)
            };
            let def = steps.iter().position(|(n, _)| *n == Some(v.id));
            let used_between = def.is_some_and(|d| (d + 1..i).any(&mut mentions));
            let fresh = def.is_some_and(|d| creates_uninit(steps[d].1));
            let used_after = (i + 1..steps.len()).any(&mut mentions);
            let earlier_only_accelerated = def
                .is_some_and(|d| (d + 1..i).all(|j| !mentions(j) || accelerate_call(steps[j].1, bindings).is_some()));
            // A view (`tensorSubExn t ..`) shares memory with its base,
            // which may be used later: only a tensor created here can skip
            // the copy back.
            let created = def.is_some_and(|d| creates_tensor(steps[d].1));
            let copy_in = !fresh || used_between;
            let copy_out = used_after || !earlier_only_accelerated || !created;
            passing[k] = match (copy_in, copy_out) {
                (true, true) => Passing::CopyInOut,
                (true, false) => Passing::CopyIn,
                (false, true) => Passing::CopyOut,
                (false, false) => Passing::None,
            };
        }
    }
    out
}

/// `accelerateN a b ..` (possibly as `let _ = ...`): the binding and the
/// arguments.
fn accelerate_call<'a>(e: &'a Expr, bindings: &'a [AccBinding]) -> Option<(&'a AccBinding, Vec<&'a Expr>)> {
    let mut args = Vec::new();
    let mut head = e;
    while let ExprKind::App(f, a) = &head.kind {
        args.push(&**a);
        head = f;
    }
    args.reverse();
    let ExprKind::Var(n) = &head.kind else { return None };
    let b = bindings.iter().find(|b| b.id == n.id)?;
    Some((b, args))
}

fn creates_tensor(e: &Expr) -> bool {
    let mut head = e;
    while let ExprKind::App(f, _) = &head.kind {
        head = f;
    }
    matches!(&head.kind, ExprKind::Var(n) if matches!(n.id.as_builtin(), Some(
        Builtin::TensorCreateUninitInt
            | Builtin::TensorCreateUninitFloat
            | Builtin::TensorCreateCArrayInt
            | Builtin::TensorCreateCArrayFloat
            | Builtin::TensorCreateDense
    )))
}

fn creates_uninit(e: &Expr) -> bool {
    let mut head = e;
    while let ExprKind::App(f, _) = &head.kind {
        head = f;
    }
    matches!(&head.kind, ExprKind::Var(n)
        if matches!(n.id.as_builtin(), Some(Builtin::TensorCreateUninitInt | Builtin::TensorCreateUninitFloat)))
}
