//! What the passes over a lowered program ask of its call graph: the
//! functions a block refers to, and the functions a property holds of
//! when it holds of a function through those it refers to (a fixpoint,
//! so that recursive groups get it too). One place for each, so that every
//! pass follows the same edges.

use crate::ir::*;
use rustc_hash::FxHashSet;

/// The functions a block refers to (calls and function references), once
/// per call or reference.
pub fn callees(b: &Block, out: &mut Vec<FnId>) {
    b.for_each_stmt(&mut |s| match &s.expr {
        Expr::Call(f, _) | Expr::Closure(Callee::Function(f), _) => out.push(*f),
        e => {
            for r in fun_refs(e) {
                if let Callee::Function(f) = r.callee {
                    out.push(f);
                }
            }
        }
    });
}

/// The function references a node holds.
pub(crate) fn fun_refs(e: &Expr) -> Vec<&FunRef> {
    match e {
        Expr::Map { f, .. }
        | Expr::Reduce { f, .. }
        | Expr::Foldl { f, .. }
        | Expr::Create { f, .. }
        | Expr::Loop { f, .. }
        | Expr::SeqLoopAcc { f, .. }
        | Expr::Derivative { f, .. } => vec![f],
        Expr::Utest { using, on_fail, .. } => using.iter().chain(on_fail.iter()).collect(),
        _ => Vec::new(),
    }
}

/// The functions of `functions` whose body `holds` of, given those found
/// so far, grown from `seed` until nothing changes: a property that
/// holds of a function when it holds of what the function calls (with
/// `holds` asking of the calls in the body whether they are in the set)
/// reaches every function it holds of, recursive ones included.
pub fn fixpoint<'a>(
    functions: impl IntoIterator<Item = &'a Function> + Clone,
    seed: FxHashSet<FnId>,
    holds: impl Fn(&Block, &FxHashSet<FnId>) -> bool,
) -> FxHashSet<FnId> {
    let mut found = seed;
    loop {
        let before = found.len();
        for f in functions.clone() {
            if !found.contains(&f.id) && holds(&f.body, &found) {
                found.insert(f.id);
            }
        }
        if found.len() == before {
            return found;
        }
    }
}
