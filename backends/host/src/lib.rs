//! The native host tier: a program's host code (what runs outside
//! `accelerate`) compiled to machine code in the process with Cranelift,
//! and handed to the interpreter as native functions
//! (`pmx_cpu::Natives`), which it calls as its own closures.
//!
//! Pipeline: the candidate top-level functions (`roots.rs`: live,
//! monomorphic, of scalar type) are lowered to the lowered IR
//! (`pmx_lower::lower_host`, the IR both accelerate generators take);
//! `support.rs` keeps the functions this generator compiles (today:
//! scalars, calls, `if`, failures), each other one with its reason;
//! `gen.rs` emits Cranelift code; `native.rs` wraps each entry for the
//! interpreter. What is not compiled runs in the interpreter (mixed mode);
//! [`Report`] names it.
//!
//! Invariants: native code computes what the interpreter computes, with
//! the same failures (message, location, call trace; `runtime.rs`), and
//! never unwinds through machine code. Compiling never panics: what
//! Cranelift refuses is reported and left to the interpreter.
//!
//! API: [`compile`], [`Host`], [`Report`].

mod gen;
mod native;
mod roots;
mod runtime;
mod support;

use pmx_ast::{Module, SmolStr, Span};
use std::time::Duration;

/// The native functions of a program, and what the tier did.
pub struct Host {
    pub natives: pmx_cpu::Natives,
    pub report: Report,
}

/// What was compiled, what was left to the interpreter and why, and how
/// long it took.
#[derive(Default, Debug)]
pub struct Report {
    /// Top-level functions that run as machine code.
    pub compiled: Vec<SmolStr>,
    /// Top-level functions left to the interpreter: name, reason, where.
    pub left: Vec<(SmolStr, String, Span)>,
    pub time: Duration,
}

/// Compiles what it can of the program's host code; `modules` in load
/// order, as `pmx_cpu::run` takes them; `utests`: whether the utest at a
/// span runs.
pub fn compile(modules: &[&Module], utests: &dyn Fn(Span) -> bool) -> Host {
    let started = std::time::Instant::now();
    let candidates = roots::candidates(modules, utests);
    let mut report = Report { left: candidates.refused, ..Report::default() };
    if candidates.roots.is_empty() {
        report.time = started.elapsed();
        return Host { natives: Default::default(), report };
    }
    let program = pmx_accelerate::program::to_expr(modules);
    let ids: Vec<pmx_ast::NameId> = candidates.roots.iter().map(|r| r.id).collect();
    let (lowered, asked, diags) = pmx_lower::lower_host(&program, &ids);
    let wanted: Vec<pmx_lower::FnId> = asked.iter().flatten().copied().collect();
    let (good, bad) = support::supported(&lowered, &wanted);
    let mut entries = Vec::new();
    for (root, f) in candidates.roots.iter().zip(&asked) {
        match f {
            Some(f) if good.contains(f) => entries.push((root, *f)),
            Some(f) => {
                let u = &bad[f];
                report.left.push((root.name.clone(), u.what.clone(), u.span));
            }
            None => {
                let why = diags
                    .iter()
                    .find(|d| {
                        let s = d.span();
                        s.file == root.span.file && root.span.start <= s.start && s.end <= root.span.end
                    })
                    .map_or_else(|| "it uses a function the lowering refused".to_string(), |d| d.message.clone());
                report.left.push((root.name.clone(), why, root.span));
            }
        }
    }
    let natives = match native::build(&lowered, &good, &entries) {
        Ok(natives) => {
            report.compiled = entries.iter().map(|(r, _)| r.name.clone()).collect();
            natives
        }
        Err(e) => {
            for (r, _) in &entries {
                report.left.push((r.name.clone(), format!("the code generator failed: {e}"), r.span));
            }
            Default::default()
        }
    };
    report.time = started.elapsed();
    Host { natives, report }
}
