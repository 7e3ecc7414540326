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
//! - `gpu`: CUDA-class bindings on the GPU (`pmx_cuda::gpu`), Futhark-class
//!   bindings compiled by `futhark cuda` (`pmx_futhark::backend`); an
//!   error that says what is missing without a usable device (driver,
//!   device, NVRTC; for Futhark also `futhark` and CUDA's headers).
//! - `auto` (the default): each class on the GPU when one is usable and
//!   its build succeeds (else a note and the CPU); otherwise `cpu` for each
//!   class whose toolchain is there (`futhark` and a C compiler for
//!   Futhark-class code, a C++ compiler for CUDA-class code), else the
//!   interpreter, saying once on stderr what is missing and what to
//!   install; code a generator does not take yet also stays in the
//!   interpreter, with a note.

use pmx_accelerate::{Analysis, Backend, Class};
use pmx_cpu::Engine;
use pmx_futhark::backend::Backend as FutharkBackend;
use pmx_futhark::engine::{BuildError, FindError};
use pmx_native::Target;
use rustc_hash::FxHashMap;
use std::sync::Arc;

pub struct Choice {
    pub engines: FxHashMap<pmx_ast::NameId, Arc<dyn Engine>>,
    pub profile: Arc<pmx_native::profile::Profile>,
}

/// Something said about the choice of engines: plain data, rendered by
/// the CLI (`render`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Note {
    pub kind: NoteKind,
    pub text: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoteKind {
    /// A fallback the user may want to know about (`pmx: note: ...`).
    Note,
    /// Results still right, but not as asked (`pmx: warning: ...`).
    Warning,
    /// A piece missing under `auto`, or what `--verbose` says (`pmx: ...`).
    Info,
}

impl Note {
    /// The line the CLI prints on stderr.
    pub fn render(&self) -> String {
        match self.kind {
            NoteKind::Note => format!("pmx: note: {}", self.text),
            NoteKind::Warning => format!("pmx: warning: {}", self.text),
            NoteKind::Info => format!("pmx: {}", self.text),
        }
    }
}

/// The notes of a choice being made (`Cx` is shared by reference).
#[derive(Default)]
struct Notes(std::cell::RefCell<Vec<Note>>);

impl Notes {
    fn push(&self, kind: NoteKind, text: String) {
        self.0.borrow_mut().push(Note { kind, text });
    }
}

/// The engines for `target`, with what the choice has to say (in order,
/// for the CLI to show, also when it fails); `Err` is a message for the
/// user.
pub fn choose(
    analysis: &Analysis,
    target: Target,
    checked: bool,
    verbose: bool,
    utests: pmx_cpu::UtestFiles,
    locate: &dyn Fn(pmx_ast::Span) -> String,
) -> (Result<Choice, String>, Vec<Note>) {
    let notes = Notes::default();
    let chosen = choose_noting(analysis, target, checked, verbose, utests, locate, &notes);
    (chosen, notes.0.into_inner())
}

fn choose_noting(
    analysis: &Analysis,
    target: Target,
    checked: bool,
    verbose: bool,
    utests: pmx_cpu::UtestFiles,
    locate: &dyn Fn(pmx_ast::Span) -> String,
    notes: &Notes,
) -> Result<Choice, String> {
    let profile = Arc::new(pmx_native::profile::Profile::default());
    let mut engines: FxHashMap<pmx_ast::NameId, Arc<dyn Engine>> = FxHashMap::default();
    let of = |b: Backend| analysis.accelerates.iter().filter(move |a| a.class == Class::One(b));
    match target {
        Target::Interp => {}
        Target::Gpu => {
            // The first binding of either class that needs the GPU names
            // what cannot run when there is none.
            let first = of(Backend::Futhark).next().or_else(|| of(Backend::Cuda).next());
            if let Some(a) = first {
                pmx_cuda::gpu::usable().map_err(|e| {
                    format!(
                        "--target gpu: {e}; {} at {} cannot run on a GPU (use --target cpu)",
                        a.boundary.name,
                        locate(a.boundary.span)
                    )
                })?;
            }
            let cx = Cx { analysis, target: "gpu", auto: false, verbose, locate, profile: &profile, notes };
            if of(Backend::Futhark).next().is_some() {
                futhark_native(&cx, &[FutharkBackend::Cuda], utests, checked, &mut engines)?;
            }
            if of(Backend::Cuda).next().is_some() {
                if let Some(generated) = cuda_generated(&cx, checked)? {
                    cuda_on_gpu(&cx, &generated, &mut engines)?;
                }
            }
        }
        Target::Cpu | Target::Auto => {
            let auto = target == Target::Auto;
            let target = if auto { "auto" } else { "cpu" };
            let cx = Cx { analysis, target, auto, verbose, locate, profile: &profile, notes };
            if of(Backend::Futhark).next().is_some() {
                // Not asked for explicitly: the GPU when there is a
                // usable device (not kernels emulated on the CPU, which
                // only the CUDA engine does) and the build succeeds, else
                // the CPU.
                let backends: &[FutharkBackend] = if auto && pmx_gpu::device::usable().is_ok() {
                    &[FutharkBackend::Cuda, FutharkBackend::Multicore]
                } else {
                    &[FutharkBackend::Multicore]
                };
                futhark_native(&cx, backends, utests, checked, &mut engines)?;
            }
            if of(Backend::Cuda).next().is_some() {
                // Not asked for explicitly: when the GPU cannot be used
                // after all, say why and run the bindings on the CPU, from
                // the same generated code. Without a C++ compiler, nothing
                // is generated.
                let compiler = pmx_native::cc::Compiler::find(pmx_native::cc::Language::Cxx).is_some();
                let on_gpu = auto && pmx_cuda::gpu::usable().is_ok();
                if !compiler && !on_gpu {
                    let why = "no C++ compiler found (CXX, or c++ on PATH)".into();
                    cx.missing("CUDA-class", why, "install g++ to compile it")?;
                } else if let Some(generated) = cuda_generated(&cx, checked)? {
                    let ran = on_gpu
                        && match cuda_on_gpu(&cx, &generated, &mut engines) {
                            Ok(()) => true,
                            Err(e) => {
                                cx.notes.push(NoteKind::Note, format!("{e}; CUDA-class bindings run on the CPU"));
                                false
                            }
                        };
                    if !ran {
                        cuda_on_cpu(&cx, &generated, &mut engines)?;
                    }
                }
            }
        }
    }
    // The rest run in the interpreter, timed for `--profile`.
    for a in &analysis.accelerates {
        if engines.contains_key(&a.boundary.id) {
            continue;
        }
        if verbose {
            notes.push(
                NoteKind::Info,
                format!("{} ({}) runs in the interpreter", a.boundary.name, locate(a.boundary.span)),
            );
        }
        engines.insert(a.boundary.id, interpreted(&profile, a, false));
    }
    Ok(Choice { engines, profile })
}

/// What the native engines of a run share while they are chosen.
struct Cx<'a> {
    analysis: &'a Analysis,
    /// The target as the user named it, for messages.
    target: &'static str,
    /// `--target auto`: what cannot run natively stays in the
    /// interpreter, said once on stderr; with `--target cpu` it is an
    /// error.
    auto: bool,
    verbose: bool,
    locate: &'a dyn Fn(pmx_ast::Span) -> String,
    profile: &'a Arc<pmx_native::profile::Profile>,
    notes: &'a Notes,
}

impl Cx<'_> {
    /// A piece that is missing: an error for `--target cpu`, a note (and
    /// the interpreter) for `auto`. `Ok(())` means "leave it".
    fn missing(&self, class: &str, why: String, install: &str) -> Result<(), String> {
        if self.auto {
            self.notes.push(NoteKind::Info, format!("{why}: {class} accelerate runs in the interpreter; {install}"));
            Ok(())
        } else {
            Err(format!("--target {}: {why}; {install}", self.target))
        }
    }
}

/// Futhark-class bindings as Futhark compiled by `futhark multicore` or
/// `futhark cuda`: the first of `backends` whose build succeeds (the
/// others' failures said on stderr), an error when none does.
fn futhark_native(
    cx: &Cx,
    backends: &[FutharkBackend],
    utests: pmx_cpu::UtestFiles,
    checked: bool,
    engines: &mut FxHashMap<pmx_ast::NameId, Arc<dyn Engine>>,
) -> Result<(), String> {
    const CLASS: &str = "Futhark-class";
    let futhark = match pmx_futhark::engine::find() {
        Ok(f) => f,
        Err(e) if !cx.auto => {
            let a = cx.analysis.accelerates.iter().find(|a| a.class == Class::One(Backend::Futhark));
            let at = a.map(|a| format!(" (needed for {} at {})", a.boundary.name, (cx.locate)(a.boundary.span)));
            return Err(format!("--target {}: {e}{}", cx.target, at.unwrap_or_default()));
        }
        Err(e) => {
            let install = format!("install Futhark to compile it ({})", pmx_futhark::engine::RELEASES);
            // A futhark of a version pmx does not take says so.
            let why = match e {
                FindError::Unsupported { why, .. } => why,
                FindError::Missing(_) => "futhark not found (PATH or PMX_FUTHARK)".into(),
            };
            return cx.missing(CLASS, why, &install);
        }
    };
    if pmx_native::cc::Compiler::find(pmx_native::cc::Language::C).is_none() {
        return cx.missing(CLASS, "no C compiler found (CC, or cc on PATH)".into(), "install gcc to compile it");
    }
    let (program, diagnostics) = pmx_lower::lower(cx.analysis, Backend::Futhark);
    if let Some(d) = diagnostics.first() {
        let why = format!("{} at {}", d.message, (cx.locate)(d.span()));
        return cx.missing(CLASS, why, "the Futhark backend does not take it yet");
    }
    // Utests inside the code run and count as in the interpreter
    // (`pmx test`).
    let counts = |s: pmx_ast::Span| utests.includes(s);
    let options = pmx_futhark::gen::Options { utests: &counts, checked };
    let generated = match pmx_futhark::gen::generate(&program, cx.locate, &options) {
        Ok(g) => g,
        Err(errors) => {
            let e = &errors[0];
            let why = format!("Futhark code generation: {} at {}", e.message, (cx.locate)(e.span));
            return cx.missing(CLASS, why, "the Futhark backend does not take it yet");
        }
    };
    let mut built = None;
    for (k, &backend) in backends.iter().enumerate() {
        match pmx_futhark::engine::build(&generated, &futhark, backend) {
            Ok(l) => {
                built = Some(l);
                break;
            }
            Err(e) if k + 1 < backends.len() => {
                cx.notes.push(NoteKind::Note, format!("{e}; Futhark-class bindings run on the CPU"));
            }
            Err(BuildError::FutharkBug(e)) => {
                // Futhark's bug, which pmx cannot fix: the bindings give
                // their results all the same, from the interpreter, with
                // the checks the native code would have made.
                for a in cx.analysis.accelerates.iter().filter(|a| a.class == Class::One(Backend::Futhark)) {
                    engines.insert(a.boundary.id, interpreted(cx.profile, a, true));
                }
                cx.notes.push(
                    NoteKind::Warning,
                    format!(
                        "{e}; Futhark-class bindings run in the interpreter instead (a newer Futhark may compile the \
                         program)"
                    ),
                );
                return Ok(());
            }
            Err(BuildError::Other(e)) if e.starts_with("internal error") => return Err(e),
            Err(BuildError::Other(e)) => return Err(format!("--target {}: {e}", cx.target)),
        }
    }
    let library = Arc::new(built.ok_or("internal error: no Futhark backend to build")?);
    let how = match library.backend {
        FutharkBackend::Multicore => format!("Futhark compiled by {} for the CPU (multicore", futhark.version),
        FutharkBackend::Cuda => format!("Futhark compiled by {} for the GPU (cuda", futhark.version),
    };
    let entries = generated.entries.iter().map(|e| (e.id, e));
    register(cx, entries, engines, |entry, index| {
        let engine = pmx_futhark::engine::FutharkEngine {
            library: library.clone(),
            entry: entry.clone(),
            profile: Some((cx.profile.clone(), index)),
        };
        let name = library.backend.engine_name();
        (Arc::new(engine) as Arc<dyn Engine>, name, how.clone(), library.cached, library.compile_time)
    });
    Ok(())
}

/// The CUDA program of the CUDA-class bindings, or `None` when the
/// lowering or the generator does not take them yet under `auto` (said
/// on stderr).
fn cuda_generated(cx: &Cx, checked: bool) -> Result<Option<pmx_cuda::gen::Generated>, String> {
    const CLASS: &str = "CUDA-class";
    let (program, diagnostics) = pmx_lower::lower(cx.analysis, Backend::Cuda);
    if let Some(d) = diagnostics.first() {
        let why = format!("{} at {}", d.message, (cx.locate)(d.span()));
        return cx.missing(CLASS, why, "the CUDA backend does not take it yet").map(|()| None);
    }
    match pmx_cuda::gen::generate(&program, cx.locate, pmx_cuda::gen::Options { checked }) {
        Ok(g) => Ok(Some(g)),
        Err(errors) => {
            let e = &errors[0];
            let why = format!("{} at {}", e.message, (cx.locate)(e.span));
            cx.missing(CLASS, why, "the CUDA backend does not take it yet").map(|()| None)
        }
    }
}

/// CUDA-class bindings as their CUDA compiled for the CPU (C++, OpenMP).
fn cuda_on_cpu(
    cx: &Cx,
    generated: &pmx_cuda::gen::Generated,
    engines: &mut FxHashMap<pmx_ast::NameId, Arc<dyn Engine>>,
) -> Result<(), String> {
    let library = Arc::new(pmx_cuda::cpu::build(generated)?);
    let how = "CUDA compiled for the CPU (OpenMP".to_string();
    let entries = generated.entries.iter().map(|e| (e.id, e));
    register(cx, entries, engines, |entry, index| {
        let engine = pmx_cuda::cpu::CpuEngine(pmx_cuda::host::Entry {
            library: library.clone(),
            entry: entry.clone(),
            profile: Some((cx.profile.clone(), index)),
        });
        (Arc::new(engine) as Arc<dyn Engine>, "cuda-cpu", how.clone(), library.cached, library.compile_time)
    });
    Ok(())
}

/// CUDA-class bindings on the GPU (the device was found usable).
fn cuda_on_gpu(
    cx: &Cx,
    generated: &pmx_cuda::gen::Generated,
    engines: &mut FxHashMap<pmx_ast::NameId, Arc<dyn Engine>>,
) -> Result<(), String> {
    let program = Arc::new(pmx_cuda::gpu::build(generated).map_err(|e| format!("--target {}: {e}", cx.target))?);
    let entries = generated.entries.iter().map(|e| (e.id, e));
    register(cx, entries, engines, |entry, index| {
        let engine = pmx_cuda::gpu::GpuEngine {
            entry: pmx_cuda::host::Entry {
                library: program.host.clone(),
                entry: entry.clone(),
                profile: Some((cx.profile.clone(), index)),
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
fn register<'e, E: 'e>(
    cx: &Cx,
    entries: impl Iterator<Item = (pmx_ast::NameId, &'e E)>,
    engines: &mut FxHashMap<pmx_ast::NameId, Arc<dyn Engine>>,
    make: impl Fn(&'e E, usize) -> (Arc<dyn Engine>, &'static str, String, bool, std::time::Duration),
) {
    for (id, entry) in entries {
        let Some(a) = cx.analysis.accelerates.iter().find(|a| a.boundary.id == id) else { continue };
        let index =
            cx.profile.add(pmx_native::profile::Entry { name: a.boundary.name.to_string(), ..Default::default() });
        let (engine, name, how, cached, compile) = make(entry, index);
        cx.profile.update(index, |e| {
            e.engine = name.to_string();
            e.cached = cached;
            e.compile = compile;
        });
        if cx.verbose {
            let when = if cached {
                "found in the cache".to_string()
            } else {
                format!("compiled in {:.2} s", compile.as_secs_f64())
            };
            let at = (cx.locate)(a.boundary.span);
            cx.notes.push(NoteKind::Info, format!("{} ({at}) runs as {how}; {when})", a.boundary.name));
        }
        engines.insert(id, engine);
    }
}

/// The interpreter for binding `a`, its calls and time recorded in the
/// profile; `checked`: with debug mode's checks.
fn interpreted(
    profile: &Arc<pmx_native::profile::Profile>,
    a: &pmx_accelerate::Accelerate,
    checked: bool,
) -> Arc<dyn Engine> {
    let index = profile.add(pmx_native::profile::Entry {
        name: a.boundary.name.to_string(),
        engine: "interpreter".into(),
        cached: true,
        ..Default::default()
    });
    Arc::new(Timed { profile: profile.clone(), index, checked })
}

/// The interpreter, with its calls and time recorded in the profile.
struct Timed {
    profile: Arc<pmx_native::profile::Profile>,
    index: usize,
    /// Standing in for native code that Futhark failed to build: the
    /// binding runs with debug mode's checks, which are what the native
    /// code checks (an irregular sequence is an error, not a value).
    checked: bool,
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
        let r = if self.checked {
            pmx_cpu::accelerate::check_boundary(m, site, &args)
                .and_then(|()| pmx_cpu::accelerate::checked(m, site, args))
        } else {
            pmx_cpu::Interpreter.call(m, site, args)
        };
        let elapsed = started.elapsed();
        self.profile.update(self.index, |e| {
            e.calls += 1;
            e.inside += elapsed;
        });
        r
    }
}
