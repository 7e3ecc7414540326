//! Nested acceleration (section 4.4 of the reference): after extraction,
//! an accelerate binding that another one uses, directly or through the
//! functions it calls, is an error at the inner `accelerate`.

use crate::classify::Graph;
use crate::lift::AccBinding;
use pmx_ast::NameId;
use pmx_diagnostics::{Code, Diagnostic};
use rustc_hash::FxHashSet;

/// (outer, inner) pairs of accelerate bindings.
fn pairs<'a>(graph: &Graph, bindings: &'a [AccBinding]) -> Vec<(&'a AccBinding, &'a AccBinding)> {
    let mut out = Vec::new();
    for outer in bindings {
        let reach = graph.reachable(outer.id);
        for inner in bindings {
            if inner.id != outer.id && reach.contains(&inner.id) {
                out.push((outer, inner));
            }
        }
    }
    out
}

pub fn check(graph: &Graph, bindings: &[AccBinding]) -> Vec<Diagnostic> {
    let mut reported = FxHashSet::default();
    let mut out = Vec::new();
    for (outer, inner) in pairs(graph, bindings) {
        if !reported.insert(inner.id) {
            continue;
        }
        out.push(
            Diagnostic::error(
                Code::NestedAccelerate,
                inner.span,
                "The accelerated expression is used within another accelerated expression, which is not supported.",
            )
            .with_label("this accelerate expression is nested")
            .with_secondary(outer.span, "inside this accelerate expression")
            .with_note("remove the inner `accelerate`: code inside an accelerated expression is accelerated already"),
        );
    }
    out
}

/// The accelerate bindings that are nested in another.
pub fn nested_ids(graph: &Graph, bindings: &[AccBinding]) -> FxHashSet<NameId> {
    pairs(graph, bindings).into_iter().map(|(_, inner)| inner.id).collect()
}
