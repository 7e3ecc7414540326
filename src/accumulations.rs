//! The accumulations of a program's CUDA-class code, found by
//! `pmx_lower::accumulate` (the analysis the CUDA generator uses), for the
//! two users outside the generator: the interpreter (which parallel loops
//! it runs on one thread, and which cells `--check-order` leaves out) and
//! `pmx explain`.

use pmx_accelerate::{Analysis, Backend, Class};
use pmx_lower::accumulate::Accumulations;

/// The CUDA-class program's accumulations, or none where it has no
/// CUDA-class binding or does not lower (the engine reports why).
pub fn find(analysis: &Analysis) -> Option<Accumulations> {
    if !analysis.accelerates.iter().any(|a| a.class == Class::One(Backend::Cuda)) {
        return None;
    }
    let (program, diagnostics) = pmx_lower::lower(analysis, Backend::Cuda);
    if diagnostics.iter().any(|d| d.is_error()) {
        return None;
    }
    Some(pmx_lower::accumulate::find(&program))
}

/// What the interpreter is told: the loops that run an atomic
/// accumulation, and, for `--check-order`, the float ones' sets.
pub fn for_interpreter(analysis: Option<&Analysis>, check_order: bool) -> pmx_cpu::Accumulations {
    let mut out = pmx_cpu::Accumulations::default();
    let Some(found) = analysis.and_then(find) else { return out };
    if check_order {
        out.float_sets = found.found.iter().filter(|a| a.float() && a.collides).map(|a| a.span).collect();
    }
    out.loops = found.colliding.into_keys().collect();
    out
}

/// One accumulation as `pmx explain` shows it: a place in the source
/// (the lowering copies a function per instance and per use; a copy that
/// may collide makes the place atomic).
pub struct Place {
    pub op: &'static str,
    /// The tensor's name, where it is a variable.
    pub tensor: Option<String>,
    pub span: pmx_ast::Span,
    /// The kernels that run it.
    pub loops: Vec<pmx_ast::Span>,
    pub atomic: bool,
}

/// A binding's accumulations, one per place.
pub fn places(found: &Accumulations, binding: pmx_ast::NameId) -> Vec<Place> {
    let mut out: Vec<Place> = Vec::new();
    for a in found.found.iter().filter(|a| a.entries.contains(&binding)) {
        match out.iter_mut().find(|p| p.span == a.span) {
            Some(p) => {
                p.atomic |= a.atomic();
                for l in &a.loops {
                    if !p.loops.contains(l) {
                        p.loops.push(*l);
                    }
                }
            }
            None => out.push(Place {
                op: a.op.name(),
                tensor: match &a.tensor {
                    pmx_lower::Atom::Var(v) => Some(v.name.to_string()),
                    pmx_lower::Atom::Lit(_) => None,
                },
                span: a.span,
                loops: a.loops.clone(),
                atomic: a.atomic(),
            }),
        }
    }
    out
}

/// `pmx explain`'s lines on a binding's accumulations.
pub fn explain_lines(
    found: &Accumulations,
    binding: pmx_ast::NameId,
    locate: &dyn Fn(pmx_ast::Span) -> String,
) -> Vec<String> {
    places(found, binding)
        .into_iter()
        .map(|p| {
            let tensor = p.tensor.map(|t| format!(" into `{t}`")).unwrap_or_default();
            let loops: Vec<String> = p.loops.iter().map(|l| locate(*l)).collect();
            let how = if p.atomic {
                "atomic update (two iterations may update the same cell)"
            } else {
                "plain update (each iteration updates cells of its own)"
            };
            format!(
                "accumulation: `{}`{tensor} at {} in the parallel loop{} at {}: {how}",
                p.op,
                locate(p.span),
                if loops.len() > 1 { "s" } else { "" },
                loops.join(", ")
            )
        })
        .collect()
}
