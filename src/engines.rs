//! Which engine runs each accelerate binding of a run (`--target`), built
//! and registered here, at the edge: the runtime only sees the dispatch
//! table (`pmx_cpu::Accelerated::engines`).
//!
//! - `interp`: every binding in the interpreter.
//! - `cpu`: CUDA-class bindings as generated CUDA compiled for the CPU
//!   (`pmx_cuda::cpu`); Futhark-class bindings as generated Futhark
//!   compiled by `futhark multicore` (`pmx_futhark::engine`). Without a
//!   `futhark` (`PMX_FUTHARK`, `PATH`), `--target cpu` on a program with
//!   Futhark-class bindings is an error that says what to install.
//! - `gpu`: CUDA-class bindings on the GPU (`pmx_cuda::gpu`); an error
//!   that says what is missing without a usable device (driver, device,
//!   NVRTC), and for Futhark-class bindings (Futhark's GPU backend is not
//!   wired in).
//! - `auto` (the default): CUDA-class bindings on the GPU when one is
//!   usable; the rest in the interpreter.

use pmx_accelerate::{Analysis, Backend, Class};
use pmx_cpu::Engine;
use pmx_native::Target;
use rustc_hash::FxHashMap;
use std::sync::Arc;

pub struct Choice {
    pub engines: FxHashMap<pmx_ast::NameId, Arc<dyn Engine>>,
    pub profile: Arc<pmx_native::profile::Profile>,
}

/// The engines for `target`; `Err` is a message for the user.
pub fn choose(
    analysis: &Analysis,
    target: Target,
    checked: bool,
    verbose: bool,
    locate: &dyn Fn(pmx_ast::Span) -> String,
) -> Result<Choice, String> {
    let profile = Arc::new(pmx_native::profile::Profile::default());
    let mut engines: FxHashMap<pmx_ast::NameId, Arc<dyn Engine>> = FxHashMap::default();
    let of = |b: Backend| analysis.accelerates.iter().filter(move |a| a.class == Class::One(b));
    match target {
        Target::Interp => {}
        Target::Auto => {
            // Not asked for explicitly: when the GPU cannot be used after
            // all, say why and run the bindings in the interpreter.
            if of(Backend::Cuda).next().is_some() && pmx_cuda::gpu::usable().is_ok() {
                if let Err(e) = cuda_on_gpu(analysis, checked, verbose, locate, &mut engines, &profile, "auto") {
                    eprintln!("pmx: note: {e}; CUDA-class bindings run in the interpreter");
                }
            }
        }
        Target::Gpu => {
            if let Some(a) = of(Backend::Futhark).next() {
                return Err(format!(
                    "--target gpu: {} at {} is Futhark-class, and Futhark code cannot run on the GPU yet; \
                     use --target cpu",
                    a.boundary.name,
                    locate(a.boundary.span)
                ));
            }
            if let Some(a) = of(Backend::Cuda).next() {
                pmx_cuda::gpu::usable().map_err(|e| {
                    format!(
                        "--target gpu: {e}; {} at {} cannot run on a GPU (use --target cpu)",
                        a.boundary.name,
                        locate(a.boundary.span)
                    )
                })?;
                cuda_on_gpu(analysis, checked, verbose, locate, &mut engines, &profile, "gpu")?;
            }
        }
        Target::Cpu => {
            if let Some(a) = of(Backend::Futhark).next() {
                let futhark = pmx_futhark::engine::find().map_err(|e| {
                    format!("--target cpu: {e} (needed for {} at {})", a.boundary.name, locate(a.boundary.span))
                })?;
                let (program, diagnostics) = pmx_lower::lower(analysis, Backend::Futhark);
                if let Some(d) = diagnostics.first() {
                    return Err(format!("--target cpu: {} at {}", d.message, locate(d.span())));
                }
                let generated = pmx_futhark::gen::generate(&program, locate).map_err(|errors| {
                    let e = &errors[0];
                    format!("--target cpu: Futhark code generation: {} at {}", e.message, locate(e.span))
                })?;
                let library = Arc::new(pmx_futhark::engine::build(&generated, &futhark)?);
                let how = format!("Futhark compiled by {} for the CPU (multicore", futhark.version);
                let entries = generated.entries.iter().map(|e| (e.id, e));
                register(analysis, entries, &mut engines, &profile, verbose, locate, |entry, index| {
                    let engine = pmx_futhark::engine::FutharkEngine {
                        library: library.clone(),
                        entry: entry.clone(),
                        profile: Some((profile.clone(), index)),
                    };
                    (
                        Arc::new(engine) as Arc<dyn Engine>,
                        "futhark-multicore",
                        how.clone(),
                        library.cached,
                        library.compile_time,
                    )
                });
            }
            if of(Backend::Cuda).next().is_some() {
                let generated = cuda_generated(analysis, checked, locate, "cpu")?;
                let library = Arc::new(pmx_cuda::cpu::build(&generated)?);
                let how = "CUDA compiled for the CPU (OpenMP".to_string();
                let entries = generated.entries.iter().map(|e| (e.id, e));
                register(analysis, entries, &mut engines, &profile, verbose, locate, |entry, index| {
                    let engine = pmx_cuda::cpu::CpuEngine(pmx_cuda::host::Entry {
                        library: library.clone(),
                        entry: entry.clone(),
                        profile: Some((profile.clone(), index)),
                    });
                    (Arc::new(engine) as Arc<dyn Engine>, "cuda-cpu", how.clone(), library.cached, library.compile_time)
                });
            }
        }
    }
    // The rest run in the interpreter, timed for `--profile`.
    for a in &analysis.accelerates {
        if engines.contains_key(&a.boundary.id) {
            continue;
        }
        if verbose {
            eprintln!("pmx: {} ({}) runs in the interpreter", a.boundary.name, locate(a.boundary.span));
        }
        let index = profile.add(pmx_native::profile::Entry {
            name: a.boundary.name.to_string(),
            engine: "interpreter".into(),
            cached: true,
            ..Default::default()
        });
        engines.insert(a.boundary.id, Arc::new(Timed { profile: profile.clone(), index }));
    }
    Ok(Choice { engines, profile })
}

/// The CUDA program of the CUDA-class bindings; `target` names the flag
/// in errors.
fn cuda_generated(
    analysis: &Analysis,
    checked: bool,
    locate: &dyn Fn(pmx_ast::Span) -> String,
    target: &str,
) -> Result<pmx_cuda::gen::Generated, String> {
    let (program, diagnostics) = pmx_lower::lower(analysis, Backend::Cuda);
    if let Some(d) = diagnostics.first() {
        return Err(format!("--target {target}: {} at {}", d.message, locate(d.span())));
    }
    pmx_cuda::gen::generate(&program, locate, pmx_cuda::gen::Options { checked }).map_err(|errors| {
        let e = &errors[0];
        format!("--target {target}: {} at {}", e.message, locate(e.span))
    })
}

/// Registers the GPU engine for every CUDA-class binding (the device was
/// found usable).
fn cuda_on_gpu(
    analysis: &Analysis,
    checked: bool,
    verbose: bool,
    locate: &dyn Fn(pmx_ast::Span) -> String,
    engines: &mut FxHashMap<pmx_ast::NameId, Arc<dyn Engine>>,
    profile: &Arc<pmx_native::profile::Profile>,
    target: &str,
) -> Result<(), String> {
    let generated = cuda_generated(analysis, checked, locate, target)?;
    let program = Arc::new(pmx_cuda::gpu::build(&generated).map_err(|e| format!("--target {target}: {e}"))?);
    let entries = generated.entries.iter().map(|e| (e.id, e));
    register(analysis, entries, engines, profile, verbose, locate, |entry, index| {
        let engine = pmx_cuda::gpu::GpuEngine {
            entry: pmx_cuda::host::Entry {
                library: program.host.clone(),
                entry: entry.clone(),
                profile: Some((profile.clone(), index)),
            },
            program: program.clone(),
        };
        (Arc::new(engine) as Arc<dyn Engine>, "cuda-gpu", program.how.clone(), program.cached, program.compile_time)
    });
    Ok(())
}

/// Registers one native engine per generated entry, with its profile
/// entry, saying with `--verbose` how it runs. `make` builds the engine of
/// an entry given its profile index, and says its engine name, how it runs
/// (completed here with whether it was compiled now), whether the library
/// came from the cache and its compile time.
#[allow(clippy::too_many_arguments)]
fn register<'e, E: 'e>(
    analysis: &Analysis,
    entries: impl Iterator<Item = (pmx_ast::NameId, &'e E)>,
    engines: &mut FxHashMap<pmx_ast::NameId, Arc<dyn Engine>>,
    profile: &pmx_native::profile::Profile,
    verbose: bool,
    locate: &dyn Fn(pmx_ast::Span) -> String,
    make: impl Fn(&'e E, usize) -> (Arc<dyn Engine>, &'static str, String, bool, std::time::Duration),
) {
    for (id, entry) in entries {
        let Some(a) = analysis.accelerates.iter().find(|a| a.boundary.id == id) else { continue };
        let index = profile.add(pmx_native::profile::Entry { name: a.boundary.name.to_string(), ..Default::default() });
        let (engine, name, how, cached, compile) = make(entry, index);
        profile.update(index, |e| {
            e.engine = name.to_string();
            e.cached = cached;
            e.compile = compile;
        });
        if verbose {
            let when = if cached {
                "found in the cache".to_string()
            } else {
                format!("compiled in {:.2} s", compile.as_secs_f64())
            };
            eprintln!("pmx: {} ({}) runs as {how}; {when})", a.boundary.name, locate(a.boundary.span));
        }
        engines.insert(id, engine);
    }
}

/// The interpreter, with its calls and time recorded in the profile.
struct Timed {
    profile: Arc<pmx_native::profile::Profile>,
    index: usize,
}

impl Engine for Timed {
    fn name(&self) -> &str {
        "interpreter"
    }

    fn call(
        &self,
        m: &mut pmx_cpu::Machine,
        site: &pmx_cpu::Site,
        args: pmx_cpu::Args,
    ) -> pmx_cpu::Res<pmx_cpu::value::Value> {
        let started = std::time::Instant::now();
        let r = pmx_cpu::Interpreter.call(m, site, args);
        let elapsed = started.elapsed();
        self.profile.update(self.index, |e| {
            e.calls += 1;
            e.inside += elapsed;
        });
        r
    }
}
