//! The native host tier: a program's host code (what runs outside
//! `accelerate`) compiled to machine code in the process with Cranelift,
//! and handed to the interpreter as native functions
//! (`pmx_cpu::Natives`), which it calls as its own closures.
//!
//! Pipeline: the candidate top-level functions (`roots.rs`: live,
//! monomorphic, taking and giving data or functions) are lowered to the
//! lowered IR (`pmx_lower::lower_host`, the IR both accelerate generators
//! take); `support.rs` keeps the functions this generator compiles, each
//! other one with its reason; `reuse.rs` finds the nodes a function may
//! rebuild in place; `gen.rs` emits Cranelift code, in which a boxed value
//! is one word (`word.rs`); `native.rs` wraps each entry for the
//! interpreter; `image.rs` and `cache.rs` keep the machine code between
//! runs. What is not compiled runs in the interpreter (mixed mode);
//! [`Report`] names it.
//!
//! Invariants: native code computes what the interpreter computes, with
//! the same failures (message, location, call trace; `runtime.rs`), and
//! never unwinds through machine code. Compiling never panics: what
//! Cranelift refuses is reported and left to the interpreter. A value
//! native code changes in place (`reuse.rs`) is one nobody else holds.
//!
//! API: [`compile`], [`Host`], [`Report`].

mod cache;
mod gen;
mod image;
mod native;
mod reuse;
mod roots;
mod runtime;
mod support;
mod word;

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
    pub cache: Cache,
}

/// Whether the compiled code came from the host code cache.
#[derive(Default, Debug, PartialEq, Eq)]
pub enum Cache {
    /// No cache: no folder for it, or the caller did not identify the
    /// program.
    #[default]
    Off,
    Found,
    /// Compiled, and stored for the next run.
    Stored,
    /// Compiled, but could not be stored (why).
    NotStored(String),
}

/// What the tier decided for a program: its lowered host code, the roots
/// it compiles (each with its function), and those it leaves.
struct Plan {
    lowered: pmx_lower::Program,
    good: rustc_hash::FxHashSet<pmx_lower::FnId>,
    entries: Vec<(roots::Root, pmx_lower::FnId)>,
    left: Vec<(SmolStr, String, Span)>,
}

/// The plan, or, where no top-level function is a candidate, those
/// refused and why.
fn plan(
    modules: &[&Module],
    boundaries: &[pmx_accelerate::Boundary],
    utests: &dyn Fn(Span) -> bool,
) -> Result<Plan, Vec<(SmolStr, String, Span)>> {
    let live = pmx_ast::reach::Liveness::of_run(modules, utests);
    let candidates = roots::candidates(modules, &live, utests);
    let refused = candidates.refused;
    if candidates.roots.is_empty() {
        return Err(refused.into_iter().map(|(_, n, w, s)| (n, w, s)).collect());
    }
    let mut left = Vec::new();
    // Local functions lifted to the top level (the accelerate passes'
    // lambda lifting): the lowering takes first-order programs. Top-level
    // values stay where they are: native code reads the interpreter's.
    // Each `accelerate` becomes a binding of its own there, which calls
    // the engine of the boundary at its span.
    // Only the definitions the run reaches (and every declaration of a
    // type, constructor, external or utest): the rest is never lowered.
    let keep = |mi: usize, ii: usize| {
        !live.is_dead(mi, ii) || !matches!(modules[mi].items[ii], pmx_ast::Item::Let(_) | pmx_ast::Item::RecLets(..))
    };
    let (program, lifted) = pmx_accelerate::lift_with(pmx_accelerate::program::to_expr_keeping(modules, &keep), true);
    let ids: Vec<(pmx_ast::NameId, Span)> = candidates.roots.iter().map(|r| (r.id, r.span)).collect();
    let main = modules.last().and_then(|m| m.main.as_ref()).map(|m| m.span);
    let running = running_utests(modules, utests);
    let (lowered, asked, diags) =
        pmx_lower::lower_host(&program, &ids, &interpreted(modules), main, &running, (boundaries, &lifted));
    let wanted: Vec<pmx_lower::FnId> = asked.iter().flatten().copied().collect();
    let (good, bad) = support::supported(&lowered, &wanted);
    let mut entries = Vec::new();
    for (root, f) in candidates.roots.into_iter().zip(&asked) {
        match f {
            // The entry takes what the interpreter's callers pass: the
            // lowered function must have the root's arity (`roots.rs`
            // makes sure; this keeps a mismatch from reaching the seam).
            Some(f) if lowered.functions[f.0 as usize].params.len() != root.arity => {
                let why = "its lowered parameters are not its type's (not compiled)".to_string();
                left.push((root.name.clone(), why, root.span));
            }
            Some(f) if good.contains(f) => entries.push((root, *f)),
            Some(f) => {
                let u = &bad[f];
                left.push((root.name.clone(), u.message.clone(), u.span));
            }
            None => {
                let why = diags
                    .iter()
                    .find(|d| {
                        let s = d.span();
                        s.file == root.span.file && root.span.start <= s.start && s.end <= root.span.end
                    })
                    .map_or_else(|| "it uses a function the lowering refused".to_string(), |d| d.message.clone());
                left.push((root.name.clone(), why, root.span));
            }
        }
    }
    // A function refused as a root runs in the interpreter where code the
    // interpreter runs uses it (compiled code has its own instances).
    let compiled: rustc_hash::FxHashSet<pmx_ast::NameId> = entries.iter().map(|(r, _)| r.id).collect();
    let interpreted: Vec<pmx_ast::NameId> =
        ids.into_iter().map(|(id, _)| id).filter(|id| !compiled.contains(id)).collect();
    let used = roots::used_by_interpreter(modules, &live, utests, &compiled, &interpreted);
    let mut shown: Vec<(SmolStr, String, Span)> = refused
        .into_iter()
        .filter(|(id, ..)| id.is_none_or(|id| used.contains(&id)))
        .map(|(_, n, w, s)| (n, w, s))
        .collect();
    shown.extend(left);
    Ok(Plan { lowered, good, entries, left: shown })
}

/// Compiles what it can of the program's host code; `modules` in load
/// order, as `pmx_cpu::run` takes them; `boundaries`: the accelerate
/// sites the run has (an `accelerate` in compiled code calls its site's
/// engine); `utests`: whether the utest at a span runs. `identity`, where
/// given, identifies the program for the host code cache (`cache.rs`):
/// everything the other arguments are made from.
pub fn compile(
    modules: &[&Module],
    boundaries: &[pmx_accelerate::Boundary],
    utests: &dyn Fn(Span) -> bool,
    identity: Option<&[&[u8]]>,
) -> Host {
    let started = std::time::Instant::now();
    let place = identity.and_then(cache::Place::of);
    if let Some(stored) = place.as_ref().and_then(|p| p.read()) {
        return finish(stored, Cache::Found).timed(started);
    }
    let stored = fresh(modules, boundaries, utests);
    let how = match &place {
        None => Cache::Off,
        Some(p) => match p.write(&stored) {
            Ok(()) => Cache::Stored,
            Err(e) => Cache::NotStored(e),
        },
    };
    finish(stored, how).timed(started)
}

/// A compile of the program, as the cache keeps it.
fn fresh(modules: &[&Module], boundaries: &[pmx_accelerate::Boundary], utests: &dyn Fn(Span) -> bool) -> cache::Stored {
    match plan(modules, boundaries, utests) {
        Ok(plan) => {
            let mut left = plan.left;
            let entries: Vec<(&roots::Root, pmx_lower::FnId)> = plan.entries.iter().map(|(r, f)| (r, *f)).collect();
            match native::image(&plan.lowered, &plan.good, &entries) {
                Ok(image) => cache::Stored {
                    compiled: entries.iter().map(|(r, _)| (r.name.clone(), r.span)).collect(),
                    left,
                    image: Some(image),
                },
                Err(e) => {
                    generator_failed(&mut left, entries.iter().map(|(r, _)| (r.name.clone(), r.span)), &e);
                    cache::Stored { compiled: Vec::new(), left, image: None }
                }
            }
        }
        Err(refused) => cache::Stored { compiled: Vec::new(), left: refused, image: None },
    }
}

/// The native functions of a compile (none where its code cannot be
/// linked: each root is then left to the interpreter, with the reason).
fn finish(stored: cache::Stored, cache: Cache) -> Host {
    let cache::Stored { compiled, mut left, image } = stored;
    let (natives, compiled) = match image.map(native::load) {
        None => (pmx_cpu::Natives::default(), compiled),
        Some(Ok(natives)) => (natives, compiled),
        Some(Err(e)) => {
            generator_failed(&mut left, compiled, &e);
            (pmx_cpu::Natives::default(), Vec::new())
        }
    };
    let compiled = compiled.into_iter().map(|(n, _)| n).collect();
    Host { natives, report: Report { compiled, left, time: Duration::ZERO, cache } }
}

/// The roots left to the interpreter because their code could not be
/// made (compiled or linked).
fn generator_failed(
    left: &mut Vec<(SmolStr, String, Span)>,
    roots: impl IntoIterator<Item = (SmolStr, Span)>,
    e: &str,
) {
    left.extend(roots.into_iter().map(|(n, s)| (n, format!("the code generator failed: {e}"), s)));
}

impl Host {
    fn timed(mut self, started: std::time::Instant) -> Host {
        self.report.time = started.elapsed();
        self
    }
}

/// The lowered host code of a program (`pmx emit --stage host-ir`): each
/// top-level function the tier compiles (and what it calls), as
/// `pmx_lower::print` shows it, after a line per function left to the
/// interpreter with the reason; `utests`: whether the utest at a span
/// runs; `locate` names a span's place.
pub fn host_ir(
    modules: &[&Module],
    boundaries: &[pmx_accelerate::Boundary],
    utests: &dyn Fn(Span) -> bool,
    locate: &dyn Fn(Span) -> String,
) -> String {
    let (plan, left) = match plan(modules, boundaries, utests) {
        Ok(plan) => {
            let left = plan.left.clone();
            (Some(plan), left)
        }
        Err(refused) => (None, refused),
    };
    let mut out = String::new();
    for (name, why, span) in &left {
        out.push_str(&format!("-- left to the interpreter: `{name}` ({}): {why}\n", locate(*span)));
    }
    let Some(plan) = plan else {
        out.push_str("-- no top-level function to compile\n");
        return out;
    };
    // Only what is compiled: the functions the compiled roots reach.
    out.push_str(&pmx_lower::print_only(&plan.lowered, &|f| plan.good.contains(&f), locate));
    out
}

/// The top-level bindings and externals the interpreter defines: what
/// native code can read or apply where the interpreter keeps it.
fn interpreted(modules: &[&Module]) -> rustc_hash::FxHashSet<pmx_ast::NameId> {
    let mut out = rustc_hash::FxHashSet::default();
    for item in modules.iter().flat_map(|m| &m.items) {
        out.extend(roots::bindings(item).iter().map(|b| b.name.id));
        if let pmx_ast::Item::External(d) = item {
            out.insert(d.name.id);
        }
    }
    out
}

/// The utests of the program that run (`utests` says which), by span:
/// those inside expressions too (the `mexpr` body's, a function's).
fn running_utests(modules: &[&Module], utests: &dyn Fn(Span) -> bool) -> rustc_hash::FxHashSet<Span> {
    fn walk(e: &pmx_ast::Expr, utests: &dyn Fn(Span) -> bool, out: &mut rustc_hash::FxHashSet<Span>) {
        if let pmx_ast::ExprKind::Utest(u, _) = &e.kind {
            if utests(u.span) {
                out.insert(u.span);
            }
        }
        pmx_ast::visit::children(e, &mut |c| walk(c, utests, out));
    }
    let mut out = rustc_hash::FxHashSet::default();
    for m in modules {
        for item in &m.items {
            roots::bindings(item).iter().for_each(|b| walk(&b.value, utests, &mut out));
            if let pmx_ast::Item::Utest(u) = item {
                if utests(u.span) {
                    out.insert(u.span);
                }
                for e in [&u.test, &u.expected].into_iter().chain(u.using.iter()).chain(u.on_fail.iter()) {
                    walk(e, utests, &mut out);
                }
            }
        }
        if let Some(main) = &m.main {
            walk(main, utests, &mut out);
        }
    }
    out
}
