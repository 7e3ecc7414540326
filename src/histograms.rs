//! The histogram folds of a program's Futhark-class code (issue 30),
//! found by `pmx_lower::hist` where the lowering splits them (what the
//! Futhark generator writes as `reduce_by_index`), for `pmx explain`.

use pmx_accelerate::{Analysis, Backend, Class};
use pmx_lower::hist::Found;

/// The Futhark-class program's histograms, or none where it has no
/// Futhark-class binding or does not lower (the engine reports why).
pub fn find(analysis: &Analysis) -> Vec<Found> {
    if !analysis.accelerates.iter().any(|a| a.class == Class::One(Backend::Futhark)) {
        return Vec::new();
    }
    let (program, diagnostics) = pmx_lower::lower(analysis, Backend::Futhark);
    if diagnostics.iter().any(|d| d.is_error()) {
        return Vec::new();
    }
    pmx_lower::hist::found(&program)
}

/// A binding's histograms.
pub fn of_binding(found: &[Found], binding: pmx_ast::NameId) -> impl Iterator<Item = &Found> {
    found.iter().filter(move |h| h.entries.contains(&binding))
}

/// What running it in parallel changes: nothing for integers; a float
/// sum or product is combined in another order.
pub fn rounding(h: &Found) -> Option<&'static str> {
    h.op.float().then_some("the float results may round differently from the sequential `foldl`'s")
}

/// `pmx explain`'s lines on a binding's histograms.
pub fn explain_lines(
    found: &[Found],
    binding: pmx_ast::NameId,
    locate: &dyn Fn(pmx_ast::Span) -> String,
) -> Vec<String> {
    of_binding(found, binding)
        .map(|h| {
            let caveat = rounding(h).map(|r| format!("; {r}")).unwrap_or_default();
            format!(
                "histogram: the `foldl` at {} updates its accumulator at computed indices with `{}`: Futhark's \
                 `reduce_by_index`, in parallel (an index out of range is the error of the step's `get`){caveat}",
                locate(h.span),
                h.op.name()
            )
        })
        .collect()
}
