//! Which engine runs each accelerate binding of a run (`--target`), built
//! and registered here, at the edge: the runtime only sees the dispatch
//! table (`pmx_cpu::Accelerated::engines`), and does every call's common
//! steps itself (`pmx_cpu::accelerate::run_site`).
//!
//! Each class of bindings is a row of [`classes`]: its generator (at the
//! seam `pmx_lower::Generator`), the tool it needs, and its builders, the
//! GPU's first. A class's program is lowered and generated once, then
//! built by the first builder that the target allows, that can run here
//! and whose build succeeds:
//!
//! - `interp`: every binding in the interpreter.
//! - `cpu`: the CPU builder: CUDA-class code compiled for the CPU by the
//!   C++ compiler (OpenMP), Futhark-class code by `futhark multicore`. A
//!   missing tool is an error that says what to install.
//! - `gpu`: the GPU builder (`futhark cuda`; the CUDA engine); an error
//!   that says what is missing without a usable device (driver, device,
//!   NVRTC; for Futhark also CUDA's headers).
//! - `auto` (the default): the GPU builder when a device is usable and
//!   the build succeeds (else a note and the CPU builder), else the CPU
//!   builder; a class whose tool is missing, or whose code a generator
//!   does not take yet, stays in the interpreter, said once on stderr.
//!
//! Everything said is a [`Note`] (plain data), rendered by the CLI.

use pmx_accelerate::{Accelerate, Analysis, Backend, Class};
use pmx_cpu::{Engine, Registered};
use pmx_futhark::backend::Backend as FutharkBackend;
use pmx_futhark::engine::{BuildError, FindError, Futhark};
use pmx_lower::Generator;
use pmx_native::profile::Profile;
use pmx_native::Target;
use rustc_hash::FxHashMap;
use std::sync::Arc;
use std::time::Duration;

pub struct Choice {
    pub engines: FxHashMap<pmx_ast::NameId, Registered>,
    pub profile: Arc<Profile>,
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
    let mut cx = Cx {
        analysis,
        target,
        verbose,
        locate,
        profile: Arc::new(Profile::default()),
        notes: Vec::new(),
        engines: FxHashMap::default(),
    };
    let counts = |s: pmx_ast::Span| utests.includes(s);
    // Utests inside the code run and count as in the interpreter
    // (`pmx test`).
    let options = pmx_lower::Options { utests: &counts, checked };
    let chosen = classes(&mut cx, &options).map(|()| {
        // The rest run in the interpreter, profiled too.
        for a in &analysis.accelerates {
            if !cx.engines.contains_key(&a.boundary.id) {
                if verbose {
                    let at = locate(a.boundary.span);
                    cx.note(NoteKind::Info, format!("{} ({at}) runs in the interpreter", a.boundary.name));
                }
                cx.interpreted(a, Arc::new(pmx_cpu::Interpreter));
            }
        }
    });
    let Cx { notes, engines, profile, .. } = cx;
    (chosen.map(|()| Choice { engines, profile }), notes)
}

/// The table: each class of bindings with its generator, the tool it
/// needs and its builders, the GPU's first.
fn classes(cx: &mut Cx, options: &pmx_lower::Options) -> Result<(), String> {
    class(
        cx,
        options,
        &ClassRow {
            generator: pmx_futhark::gen::Futhark,
            tool: futhark_tool,
            builders: &[
                Builder { device: Device::Gpu, usable: gpu_device, build: |g, f| futhark(g, f, FutharkBackend::Cuda) },
                Builder {
                    device: Device::Cpu,
                    usable: nothing_more,
                    build: |g, f| futhark(g, f, FutharkBackend::Multicore),
                },
            ],
        },
    )?;
    class(
        cx,
        options,
        &ClassRow {
            generator: pmx_cuda::gen::Cuda,
            tool: |_| Ok(()),
            builders: &[
                Builder { device: Device::Gpu, usable: cuda_gpu_usable, build: |g, ()| cuda_on_gpu(g) },
                Builder { device: Device::Cpu, usable: cxx, build: |g, ()| cuda_on_cpu(g) },
            ],
        },
    )
}

/// Where a builder's engines run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Device {
    Cpu,
    Gpu,
}

/// Something a class or builder needs that is not here: why, and what to
/// install.
struct Missing {
    why: String,
    install: String,
}

/// A class of bindings (`G::BACKEND`): its generator, the tool `T` all its
/// builders need (found once), and its builders.
struct ClassRow<G: Generator + 'static, T: 'static> {
    generator: G,
    /// Finds the tool; the error for an explicit target, or what is
    /// missing.
    tool: fn(&Cx) -> Result<T, ToolError>,
    builders: &'static [Builder<G::Output, T>],
}

enum ToolError {
    /// An error for the user (an explicit target).
    Fatal(String),
    /// What is missing: an error for `--target cpu`, a note under `auto`.
    Missing(Missing),
}

/// One way to build a class's engines from its generated program.
struct Builder<O: 'static, T: 'static> {
    device: Device,
    /// Whether it can run here (a device, a compiler); `Err` says what is
    /// missing.
    usable: fn() -> Result<(), Missing>,
    build: fn(&O, &T) -> Result<Built, Failed>,
}

/// A built library: one engine per entry, and how it runs.
struct Built {
    engines: Vec<(pmx_ast::NameId, Arc<dyn Engine>)>,
    /// The engine's name (the profile's column).
    name: &'static str,
    /// How it runs, for `--verbose` (completed with whether it was
    /// compiled now).
    how: String,
    cached: bool,
    compile_time: Duration,
}

/// Why a build failed.
enum Failed {
    /// A bug of the tool that compiles the code, which pmx cannot fix: the
    /// bindings give their results all the same, from the interpreter with
    /// the checks the native code would have made.
    ToolBug(String),
    Other(String),
}

/// What the choice of a run's engines shares.
struct Cx<'a> {
    analysis: &'a Analysis,
    target: Target,
    verbose: bool,
    locate: &'a dyn Fn(pmx_ast::Span) -> String,
    profile: Arc<Profile>,
    notes: Vec<Note>,
    engines: FxHashMap<pmx_ast::NameId, Registered>,
}

impl Cx<'_> {
    fn note(&mut self, kind: NoteKind, text: String) {
        self.notes.push(Note { kind, text });
    }

    /// The bindings of class `b`.
    fn of(&self, b: Backend) -> impl Iterator<Item = &Accelerate> {
        self.analysis.accelerates.iter().filter(move |a| a.class == Class::One(b))
    }

    /// A piece that is missing: an error for an explicit target, a note
    /// (and the interpreter) for `auto`. `Ok(())` means "leave it".
    fn missing(&mut self, class: &str, m: Missing) -> Result<(), String> {
        if self.target == Target::Auto {
            self.note(NoteKind::Info, format!("{}: {class} accelerate runs in the interpreter; {}", m.why, m.install));
            Ok(())
        } else {
            Err(format!("--target {}: {}; {}", self.target, m.why, m.install))
        }
    }

    /// Registers binding `a` to run on `engine` (an interpreter).
    fn interpreted(&mut self, a: &Accelerate, engine: Arc<dyn Engine>) {
        let profile = self.profile.add(pmx_native::profile::Entry {
            name: a.boundary.name.to_string(),
            engine: "interpreter".into(),
            cached: true,
            ..Default::default()
        });
        self.engines.insert(a.boundary.id, Registered { engine, profile });
    }

    /// Registers the engines of a built library, saying with `--verbose`
    /// how each runs.
    fn register(&mut self, built: Built) {
        for (id, engine) in built.engines {
            let Some(a) = self.analysis.accelerates.iter().find(|a| a.boundary.id == id) else { continue };
            let profile = self.profile.add(pmx_native::profile::Entry {
                name: a.boundary.name.to_string(),
                engine: built.name.to_string(),
                cached: built.cached,
                compile: built.compile_time,
                ..Default::default()
            });
            if self.verbose {
                let when = if built.cached {
                    "found in the cache".to_string()
                } else {
                    format!("compiled in {:.2} s", built.compile_time.as_secs_f64())
                };
                let at = (self.locate)(a.boundary.span);
                let text = format!("{} ({at}) runs as {}; {when})", a.boundary.name, built.how);
                self.note(NoteKind::Info, text);
            }
            self.engines.insert(id, Registered { engine, profile });
        }
    }
}

/// The bindings of one class: its builders that the target allows and
/// that can run here, its program lowered and generated once, then built
/// by the first that succeeds.
fn class<G: Generator, T>(cx: &mut Cx, options: &pmx_lower::Options, row: &ClassRow<G, T>) -> Result<(), String> {
    let backend = G::BACKEND;
    let class = match backend {
        Backend::Futhark => "Futhark-class",
        Backend::Cuda => "CUDA-class",
    };
    let Some(first) = cx.of(backend).next() else { return Ok(()) };
    if cx.target == Target::Interp {
        return Ok(());
    }
    let mut candidates = Vec::new();
    let mut unusable = None;
    for b in row.builders {
        let allowed = match cx.target {
            Target::Interp => false,
            Target::Gpu => b.device == Device::Gpu,
            Target::Cpu => b.device == Device::Cpu,
            Target::Auto => true,
        };
        if !allowed {
            continue;
        }
        match (b.usable)() {
            Ok(()) => candidates.push(b),
            Err(m) if cx.target == Target::Gpu => {
                let (name, at) = (&first.boundary.name, (cx.locate)(first.boundary.span));
                return Err(format!("--target gpu: {}; {name} at {at} cannot run on a GPU (use --target cpu)", m.why));
            }
            Err(m) if b.device == Device::Cpu => unusable = Some(m),
            // Without a device, the GPU is not asked for: say nothing.
            Err(_) => {}
        }
    }
    let tool = match (row.tool)(cx) {
        Ok(t) => t,
        Err(ToolError::Fatal(e)) => return Err(e),
        Err(ToolError::Missing(m)) => return cx.missing(class, m),
    };
    if candidates.is_empty() {
        // Every class has a CPU builder: the target allowed it, and it
        // said what it misses.
        let Some(m) = unusable else {
            return Err(format!("{}no {class} engine for --target {}", pmx_cpu::INTERNAL_PREFIX, cx.target));
        };
        return cx.missing(class, m);
    }
    let (program, diagnostics) = pmx_lower::lower(cx.analysis, backend);
    let not_taken = |what: &str| Missing {
        why: what.to_string(),
        install: format!("the {} backend does not take it yet", backend.name()),
    };
    if let Some(d) = diagnostics.first() {
        let why = format!("{} at {}", d.message, (cx.locate)(d.span()));
        return cx.missing(class, not_taken(&why));
    }
    let generated = match row.generator.generate(&program, cx.locate, options) {
        Ok(g) => g,
        Err(errors) => {
            let e = &errors[0];
            let why = format!("{} code generation: {} at {}", backend.name(), e.message, (cx.locate)(e.span));
            return cx.missing(class, not_taken(&why));
        }
    };
    for (k, b) in candidates.iter().enumerate() {
        match (b.build)(&generated, &tool) {
            Ok(built) => {
                cx.register(built);
                return Ok(());
            }
            Err(Failed::ToolBug(e) | Failed::Other(e)) if k + 1 < candidates.len() => {
                cx.note(NoteKind::Note, format!("{e}; {class} bindings run on the CPU"));
            }
            Err(Failed::ToolBug(e)) => {
                let analysis = cx.analysis;
                for a in analysis.accelerates.iter().filter(|a| a.class == Class::One(backend)) {
                    cx.interpreted(a, Arc::new(pmx_cpu::Checked));
                }
                cx.note(NoteKind::Warning, format!("{e}; {class} bindings run in the interpreter instead"));
                return Ok(());
            }
            Err(Failed::Other(e)) if e.starts_with(pmx_cpu::INTERNAL_PREFIX) => return Err(e),
            Err(Failed::Other(e)) => return Err(format!("--target {}: {e}", cx.target)),
        }
    }
    Ok(())
}

/// Builders of any class that need nothing more than the class's tool.
fn nothing_more() -> Result<(), Missing> {
    Ok(())
}

/// A real device (not kernels emulated on the CPU, which only the CUDA
/// engine does).
fn gpu_device() -> Result<(), Missing> {
    pmx_gpu::device::usable().map(|_| ()).map_err(|why| Missing { why, install: String::new() })
}

/// The CUDA engine: a device (or kernels on the CPU,
/// `PMX_GPU_KERNELS=cpu`), and a C++ compiler for its host code.
fn cuda_gpu_usable() -> Result<(), Missing> {
    pmx_cuda::gpu::usable().map_err(|why| Missing { why, install: String::new() })?;
    cxx()
}

fn cxx() -> Result<(), Missing> {
    match pmx_native::cc::Compiler::find(pmx_native::cc::Language::Cxx) {
        Some(_) => Ok(()),
        None => Err(Missing {
            why: "no C++ compiler found (CXX, or c++ on PATH)".into(),
            install: "install g++ to compile it".into(),
        }),
    }
}

/// `futhark` (`PMX_FUTHARK`, `PATH`) of a version pmx takes, and a C
/// compiler.
fn futhark_tool(cx: &Cx) -> Result<Futhark, ToolError> {
    let futhark = match pmx_futhark::engine::find() {
        Ok(f) => f,
        Err(e) if cx.target != Target::Auto => {
            let a = cx.of(Backend::Futhark).next();
            let at = a.map(|a| format!(" (needed for {} at {})", a.boundary.name, (cx.locate)(a.boundary.span)));
            return Err(ToolError::Fatal(format!("--target {}: {e}{}", cx.target, at.unwrap_or_default())));
        }
        Err(e) => {
            let install = format!("install Futhark to compile it ({})", pmx_futhark::engine::RELEASES);
            // A futhark of a version pmx does not take says so.
            let why = match e {
                FindError::Unsupported { why, .. } => why,
                FindError::Missing(_) => "futhark not found (PATH or PMX_FUTHARK)".into(),
            };
            return Err(ToolError::Missing(Missing { why, install }));
        }
    };
    if pmx_native::cc::Compiler::find(pmx_native::cc::Language::C).is_none() {
        let why = "no C compiler found (CC, or cc on PATH)".into();
        return Err(ToolError::Missing(Missing { why, install: "install gcc to compile it".into() }));
    }
    Ok(futhark)
}

/// Futhark-class bindings as Futhark compiled by `futhark multicore` or
/// `futhark cuda`.
fn futhark(g: &pmx_futhark::gen::Generated, futhark: &Futhark, backend: FutharkBackend) -> Result<Built, Failed> {
    let library = match pmx_futhark::engine::build(g, futhark, backend) {
        Ok(l) => Arc::new(l),
        Err(BuildError::FutharkBug(e)) => {
            return Err(Failed::ToolBug(format!("{e} (a newer Futhark may compile the program)")));
        }
        Err(BuildError::Other(e)) => return Err(Failed::Other(e)),
    };
    let how = match backend {
        FutharkBackend::Multicore => format!("Futhark compiled by {} for the CPU (multicore", futhark.version),
        FutharkBackend::Cuda => format!("Futhark compiled by {} for the GPU (cuda", futhark.version),
    };
    let engines = g
        .entries
        .iter()
        .map(|entry| {
            let engine = pmx_futhark::engine::FutharkEngine { library: library.clone(), entry: entry.clone() };
            (entry.id, Arc::new(engine) as Arc<dyn Engine>)
        })
        .collect();
    let name = backend.engine_name();
    Ok(Built { engines, name, how, cached: library.cached, compile_time: library.compile_time })
}

/// CUDA-class bindings as their CUDA compiled for the CPU (C++, OpenMP).
fn cuda_on_cpu(g: &pmx_cuda::gen::Generated) -> Result<Built, Failed> {
    let library = Arc::new(pmx_cuda::cpu::build(g).map_err(Failed::Other)?);
    let engines = g
        .entries
        .iter()
        .map(|entry| {
            let engine =
                pmx_cuda::cpu::CpuEngine(pmx_cuda::host::Entry { library: library.clone(), entry: entry.clone() });
            (entry.id, Arc::new(engine) as Arc<dyn Engine>)
        })
        .collect();
    let how = "CUDA compiled for the CPU (OpenMP".to_string();
    Ok(Built { engines, name: "cuda-cpu", how, cached: library.cached, compile_time: library.compile_time })
}

/// CUDA-class bindings on the GPU (the device was found usable).
fn cuda_on_gpu(g: &pmx_cuda::gen::Generated) -> Result<Built, Failed> {
    let program = Arc::new(pmx_cuda::gpu::build(g).map_err(Failed::Other)?);
    let engines = g
        .entries
        .iter()
        .map(|entry| {
            let engine = pmx_cuda::gpu::GpuEngine {
                entry: pmx_cuda::host::Entry { library: program.host.clone(), entry: entry.clone() },
                program: program.clone(),
            };
            (entry.id, Arc::new(engine) as Arc<dyn Engine>)
        })
        .collect();
    let (how, cached, compile_time) = (program.how.clone(), program.cached, program.compile_time);
    Ok(Built { engines, name: "cuda-gpu", how, cached, compile_time })
}
