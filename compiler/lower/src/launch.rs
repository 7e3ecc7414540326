//! What host code of a CUDA-class program launches: each parallel `loop`
//! of host code is a kernel launch, host code being an entry's body and
//! the functions it runs outside kernels (those that launch get a host
//! version). The CUDA generator writes them so, and the accumulations
//! (`accumulate.rs`) ask which loops run their bodies in parallel.

use crate::ir::*;
use rustc_hash::FxHashSet;

/// The functions that host code runs outside kernels and that launch
/// kernels: those whose body, outside the bodies of its parallel loops,
/// has a parallel `loop` or runs such a function (a call, or the body of
/// a `seqLoop`, `seqLoopAcc` or `foldl`), as reached from an entry's body.
/// Each gets a host version.
pub fn host_functions(p: &Program) -> FxHashSet<FnId> {
    let launching = crate::fixpoint(&p.functions, FxHashSet::default(), launches);
    // Those that host code reaches.
    let mut reached: FxHashSet<FnId> = FxHashSet::default();
    let mut todo: Vec<FnId> = Vec::new();
    for e in &p.entries {
        host_callees(&e.body, &launching, &mut todo);
    }
    while let Some(id) = todo.pop() {
        if reached.insert(id) {
            if let Some(f) = p.function(id) {
                host_callees(&f.body, &launching, &mut todo);
            }
        }
    }
    reached
}

/// The function a statement of host code runs outside a kernel, if any:
/// the callee of a call, or the body of a sequential loop or fold.
pub fn host_callee(e: &Expr) -> Option<FnId> {
    let f = match e {
        Expr::Call(id, _) => return Some(*id),
        Expr::Loop { f, parallel: false, .. } | Expr::SeqLoopAcc { f, .. } | Expr::Foldl { f, .. } => f,
        _ => return None,
    };
    match f.callee {
        Callee::Function(id) => Some(id),
        Callee::Builtin(_) | Callee::Math(_) => None,
        Callee::Value => unreachable!("{}", crate::HOST_ONLY),
    }
}

/// Whether a block, run as host code, launches a kernel.
fn launches(b: &Block, launching: &FxHashSet<FnId>) -> bool {
    b.any_stmt(|s| {
        matches!(s.expr, Expr::Loop { parallel: true, .. })
            || host_callee(&s.expr).is_some_and(|id| launching.contains(&id))
    })
}

/// The launching functions a block, run as host code, runs outside kernels.
fn host_callees(b: &Block, launching: &FxHashSet<FnId>, out: &mut Vec<FnId>) {
    b.for_each_stmt(&mut |s| out.extend(host_callee(&s.expr).filter(|id| launching.contains(id))));
}

/// The parallel loops that are kernel launches: those of host code.
pub fn kernels(p: &Program) -> Vec<&Stmt> {
    let host = host_functions(p);
    let bodies =
        p.entries.iter().map(|e| &e.body).chain(p.functions.iter().filter(|f| host.contains(&f.id)).map(|f| &f.body));
    let mut out = Vec::new();
    for b in bodies {
        b.for_each_stmt(&mut |s| {
            if matches!(s.expr, Expr::Loop { parallel: true, .. }) {
                out.push(s);
            }
        });
    }
    out
}
