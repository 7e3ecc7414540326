//! Functions in dependency order: the strongly connected components of
//! the call graph (`pmx_ast::scc`, Tarjan's algorithm: callees first), each
//! component's functions consecutive and sharing a group number; then
//! every `FnId` renumbered to the function's new index. Recursion and
//! tail recursion are marked here, where the components are known.

use crate::callgraph::{callees, fun_refs};
use crate::ir::*;
use rustc_hash::FxHashMap;

fn fun_refs_mut(e: &mut Expr) -> Vec<&mut FunRef> {
    match e {
        Expr::Map { f, .. }
        | Expr::Reduce { f, .. }
        | Expr::Foldl { f, .. }
        | Expr::Create { f, .. }
        | Expr::Loop { f, .. }
        | Expr::SeqLoopAcc { f, .. }
        | Expr::Derivative { f, .. } => vec![f],
        Expr::Utest { using, on_fail, .. } => using.iter_mut().chain(on_fail.iter_mut()).collect(),
        _ => Vec::new(),
    }
}

/// A function's new id; one that was never lowered (its lowering failed
/// and was reported) gets an id no function has, which the validator
/// reports.
fn renamed(map: &FxHashMap<FnId, FnId>, f: FnId) -> FnId {
    map.get(&f).copied().unwrap_or(FnId(u32::MAX))
}

fn renumber(b: &mut Block, map: &FxHashMap<FnId, FnId>) {
    b.for_each_stmt_mut(&mut |s| match &mut s.expr {
        Expr::Call(f, _) | Expr::Closure(Callee::Function(f), _) => *f = renamed(map, *f),
        e => {
            for r in fun_refs_mut(e) {
                if let Callee::Function(f) = &mut r.callee {
                    *f = renamed(map, *f);
                }
            }
        }
    });
}

/// Whether every call of `me` in `b` is a tail call (`tail`: `b`'s value
/// is the function's result), and no function reference names it.
fn tail_calls_only(b: &Block, me: FnId, tail: bool) -> bool {
    let last = b.stmts.len().wrapping_sub(1);
    b.stmts.iter().enumerate().all(|(i, s)| {
        let in_tail = tail && i == last && matches!(&b.result, Atom::Var(v) if v.id == s.var.id);
        match &s.expr {
            Expr::Call(f, _) => *f != me || in_tail,
            Expr::If { then, otherwise, .. } => {
                tail_calls_only(then, me, in_tail) && tail_calls_only(otherwise, me, in_tail)
            }
            e => fun_refs(e).iter().all(|r| r.callee != Callee::Function(me)),
        }
    })
}

/// The functions in dependency order, the entries renumbered, and each
/// old id's new one.
pub(crate) fn order_mapped(
    mut functions: Vec<Function>,
    mut entries: Vec<Entry>,
) -> (Vec<Function>, Vec<Entry>, FxHashMap<FnId, FnId>) {
    // Slots were filled in any order; ids index the creation order.
    functions.sort_by_key(|f| f.id);
    let at: FxHashMap<FnId, usize> = functions.iter().enumerate().map(|(i, f)| (f.id, i)).collect();
    let edges: Vec<Vec<usize>> = functions
        .iter()
        .map(|f| {
            let mut out = Vec::new();
            callees(&f.body, &mut out);
            out.into_iter().filter_map(|id| at.get(&id).copied()).collect()
        })
        .collect();
    let n = functions.len();
    let components = pmx_ast::scc::components(&edges);
    let mut slots: Vec<Option<Function>> = functions.into_iter().map(Some).collect();
    let mut out = Vec::with_capacity(n);
    let mut map = FxHashMap::default();
    for (group, component) in components.iter().enumerate() {
        let recursive = component.len() > 1 || edges[component[0]].contains(&component[0]);
        for &i in component {
            let mut f = slots[i].take().expect("each function in one component");
            map.insert(f.id, FnId(out.len() as u32));
            f.group = group as u32;
            f.recursive = recursive;
            // Old ids: the bodies are renumbered below.
            f.tail_recursive = recursive && component.len() == 1 && tail_calls_only(&f.body, f.id, true);
            out.push(f);
        }
    }
    for f in &mut out {
        f.id = renamed(&map, f.id);
    }
    for f in &mut out {
        renumber(&mut f.body, &map);
    }
    for e in &mut entries {
        renumber(&mut e.body, &map);
    }
    (out, entries, map)
}
