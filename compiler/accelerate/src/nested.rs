//! Nested acceleration (section 4.4 of the reference): after extraction,
//! an accelerate binding that another one uses, directly or through the
//! functions it calls, is an error.
//!
//! Both steps are linear in the size of the dependency graph, so that a
//! program with thousands of nested `accelerate`s is checked as fast as a
//! flat one: whether a binding is nested is found by one propagation from
//! every accelerate binding at once, and the errors are grouped by
//! outermost `accelerate` (one error each, with a count), so that the
//! output does not repeat a long line once per nested expression.

use crate::classify::Graph;
use crate::lift::AccBinding;
use pmx_ast::NameId;
use pmx_diagnostics::{Code, Diagnostic};
use rustc_hash::{FxHashMap, FxHashSet};
use std::collections::VecDeque;

/// The accelerate bindings that another accelerate binding uses, directly
/// or through the functions it calls.
///
/// Each binding records up to two accelerate bindings it is reachable
/// from: a binding reached from two different ones is reached from one
/// other than itself, and one reached from a single one is nested unless
/// that one is itself (recursion through `accelerate`). Every binding is
/// thus visited at most twice, whatever the nesting.
pub fn nested_ids(graph: &Graph, bindings: &[AccBinding]) -> FxHashSet<NameId> {
    let mut origins: FxHashMap<NameId, [Option<NameId>; 2]> = FxHashMap::default();
    let mut queue: VecDeque<(NameId, NameId)> = VecDeque::new();
    for b in bindings {
        for d in graph.deps(b.id) {
            queue.push_back((*d, b.id));
        }
    }
    while let Some((n, origin)) = queue.pop_front() {
        let slots = origins.entry(n).or_default();
        match *slots {
            [Some(a), _] if a == origin => continue,
            [_, Some(b)] if b == origin => continue,
            [Some(_), Some(_)] => continue,
            [None, _] => slots[0] = Some(origin),
            [Some(_), None] => slots[1] = Some(origin),
        }
        for d in graph.deps(n) {
            queue.push_back((*d, origin));
        }
    }
    bindings
        .iter()
        .filter(|b| origins.get(&b.id).is_some_and(|o| o.iter().flatten().any(|origin| *origin != b.id)))
        .map(|b| b.id)
        .collect()
}

/// One error per outermost `accelerate` that has others nested in it: at
/// the nearest nested one, with the outer one and how many are nested in
/// all. Each nested binding is counted under the first outer one (in
/// program order) that reaches it.
pub fn check(graph: &Graph, bindings: &[AccBinding], nested: &FxHashSet<NameId>) -> Vec<Diagnostic> {
    let by_id: FxHashMap<NameId, &AccBinding> = bindings.iter().map(|b| (b.id, b)).collect();
    let mut claimed: FxHashSet<NameId> = FxHashSet::default();
    let mut out = Vec::new();
    // Outermost first; then nested ones no outermost reaches (a cycle of
    // accelerate bindings through recursion), each as its own root.
    let roots =
        bindings.iter().filter(|b| !nested.contains(&b.id)).chain(bindings.iter().filter(|b| nested.contains(&b.id)));
    for outer in roots {
        if nested.contains(&outer.id) && claimed.contains(&outer.id) {
            continue;
        }
        // Breadth-first from the outer binding, so that the first nested
        // one found is a nearest one.
        let mut found: Vec<&AccBinding> = Vec::new();
        let mut queue: VecDeque<NameId> = graph.deps(outer.id).iter().copied().collect();
        while let Some(n) = queue.pop_front() {
            if !claimed.insert(n) {
                continue;
            }
            if let Some(inner) = by_id.get(&n) {
                if inner.id != outer.id && nested.contains(&inner.id) {
                    found.push(inner);
                }
            }
            queue.extend(graph.deps(n).iter().copied());
        }
        let Some(first) = found.first() else { continue };
        let mut d = Diagnostic::error(
            Code::NestedAccelerate,
            first.span,
            "The accelerated expression is used within another accelerated expression, which is not supported.",
        )
        .with_label("this accelerate expression is nested")
        .with_secondary(outer.span, "inside this accelerate expression");
        if found.len() > 1 {
            d = d.with_note(format!(
                "{} accelerate expressions are nested in this one in all (this error is reported for the nearest)",
                found.len()
            ));
        }
        out.push(
            d.with_note("remove the inner `accelerate`: code inside an accelerated expression is accelerated already"),
        );
    }
    out
}
