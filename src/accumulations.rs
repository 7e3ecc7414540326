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

/// `pmx explain`'s lines on a binding's accumulations.
pub fn explain_lines(
    found: &Accumulations,
    binding: pmx_ast::NameId,
    locate: &dyn Fn(pmx_ast::Span) -> String,
) -> Vec<String> {
    let mut out = Vec::new();
    for a in found.found.iter().filter(|a| a.entries.contains(&binding)) {
        let tensor = match &a.tensor {
            pmx_lower::Atom::Var(v) => format!(" into `{}`", v.name),
            pmx_lower::Atom::Lit(_) => String::new(),
        };
        let loops: Vec<String> = a.loops.iter().map(|l| locate(*l)).collect();
        let how = if a.atomic() {
            "atomic update (the cell may be the same for two iterations)"
        } else {
            "plain update (the index is different for every iteration)"
        };
        out.push(format!(
            "accumulation: `{}`{tensor} at {} in the parallel loop at {}: {how}",
            a.op.name(),
            locate(a.span),
            loops.join(", ")
        ));
    }
    out
}
