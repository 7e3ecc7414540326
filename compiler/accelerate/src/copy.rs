//! Copy analysis (section 4.10 of the reference, refined): how each value
//! crosses into an accelerate binding and back.
//!
//! - Sequences, and tensors the binding never writes (through any view,
//!   field or element: `writes.rs`), are copied in only. Unchanged data
//!   needs no copy back, whatever views of it exist before or after.
//! - A tensor the binding may write is copied in and back out, with two
//!   refinements for a tensor variable passed at an accelerate call on the
//!   program's top level:
//!   - the copy in is not needed when the tensor was just created with
//!     `tensorCreateUninitInt`/`Float` and this call is its first use;
//!   - the copy back out is not needed when the tensor was created (not a
//!     view of another), nothing uses it after the call, and it was used
//!     before only as an argument of accelerate calls (so no view of it
//!     can observe the result).
//!
//! Calls elsewhere (inside functions, loops) keep the copies the writes
//! call for.

use crate::chain::{self, Decl};
use crate::free::{free_vars, is_function};
use crate::lift::AccBinding;
use crate::variants::Variants;
use crate::writes::Writes;
use crate::Passing;
use pmx_ast::spine::{head_builtin, spine};
use pmx_ast::*;
use rustc_hash::FxHashMap;

/// How a value of type `t` crosses when the binding may (`written`) or
/// may not write it (`variants`: to look into constructors' payloads).
pub fn passing(t: &Ty, written: bool, variants: &Variants) -> Passing {
    if is_function(t) {
        Passing::None
    } else if variants.holds(t, &|x| matches!(x.kind(), TyKind::Tensor(_))) {
        if written {
            Passing::CopyInOut
        } else {
            Passing::CopyIn
        }
    } else if variants.holds(t, &|x| matches!(x.kind(), TyKind::Seq(_))) {
        Passing::CopyIn
    } else {
        Passing::Value
    }
}

/// How each parameter of each accelerate binding crosses the boundary.
pub fn analyze(
    lifted: &Expr,
    bindings: &[AccBinding],
    writes: &Writes,
    variants: &Variants,
) -> FxHashMap<NameId, Vec<Passing>> {
    let mut out: FxHashMap<NameId, Vec<Passing>> = bindings
        .iter()
        .map(|b| {
            let passing = b.params.iter().enumerate().map(|(i, p)| passing(&p.ty, writes.writes(b.id, i), variants));
            (b.id, passing.collect())
        })
        .collect();
    // The top-level chain, as a list of (bound name, value) steps.
    let mut steps: Vec<(Option<NameId>, &Expr)> = Vec::new();
    for (d, _) in chain::decls(lifted) {
        match d {
            Decl::Let(_) | Decl::Rec(_) => steps.extend(d.bindings().iter().map(|b| (Some(b.name.id), &b.value))),
            Decl::Utest(u) => {
                steps.push((None, &u.test));
                steps.push((None, &u.expected));
            }
            Decl::External(_) | Decl::Type(_) | Decl::Con(_) => {}
        }
    }
    steps.push((None, chain::body(lifted)));
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
            if !matches!(arg.ty.kind(), TyKind::Tensor(_)) {
                continue;
            }
            let written = match passing.get(k) {
                Some(Passing::CopyInOut) => true,
                Some(Passing::CopyIn) => false,
                _ => continue,
            };
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
            let copy_out = written && (used_after || !earlier_only_accelerated || !created);
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
    let (head, args) = spine(e);
    let ExprKind::Var(n) = &head.kind else { return None };
    let b = bindings.iter().find(|b| b.id == n.id)?;
    Some((b, args))
}

fn creates_tensor(e: &Expr) -> bool {
    head_builtin(e).is_some_and(Builtin::creates_tensor)
}

fn creates_uninit(e: &Expr) -> bool {
    matches!(head_builtin(e), Some(Builtin::TensorCreateUninitInt | Builtin::TensorCreateUninitFloat))
}
