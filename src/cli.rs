//! The command line: reads arguments, asks the driver, renders.

use crate::render;
use clap::{Args, Parser, Subcommand, ValueEnum};
use pmx_driver::{program_diagnostics, program_files, Database, Db, SourceFile};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "pmx", version, about = "MExpr compiler with expression acceleration")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Parse, resolve includes and names, infer types and run the accelerate
    /// checks; report every error.
    Check {
        /// The program's main file.
        file: PathBuf,
        /// How to print diagnostics.
        #[arg(long, value_enum, default_value_t = Format::Human)]
        format: Format,
        #[command(flatten)]
        color: OutputArgs,
    },
    /// Explain each `accelerate` expression: backend, why, parameters, functions.
    Explain {
        file: PathBuf,
        #[arg(long, value_enum, default_value_t = Format::Human)]
        format: Format,
        #[command(flatten)]
        color: OutputArgs,
    },
    /// Print the program after a stage of the accelerate passes.
    Emit {
        /// As MExpr: `lifted`: after accelerate binding and lambda lifting;
        /// `extracted`: the accelerated program alone; `futhark-ast` and
        /// `cuda-ast`: each backend's program after its rewrites and ANF.
        /// `futhark-ir` and `cuda-ir`: each backend's lowered IR, with types.
        /// `cuda`: the generated CUDA C++ translation unit.
        /// `futhark`: the generated Futhark program.
        #[arg(long, value_enum)]
        stage: Stage,
        file: PathBuf,
        /// Write the output to this file instead of standard output.
        #[arg(short = 'o', long = "output")]
        output: Option<PathBuf>,
        /// Generated code without bounds, rank and division checks.
        #[arg(long)]
        unchecked: bool,
        /// With `lifted`: also print the declarations of the standard
        /// library's files (by default only those of the program's own
        /// files are printed; later stages hold only what accelerated code
        /// uses, and print all of it). With `host-ir`: the host code of
        /// `pmx test --all-utests` (by default, of `pmx test`: the utests
        /// of the file given).
        #[arg(long)]
        all: bool,
        #[command(flatten)]
        color: OutputArgs,
    },
    /// The cache of compiled code and parses (`pmx cache clean` empties it).
    Cache {
        #[arg(value_enum)]
        action: CacheAction,
    },
    /// Run a program (utests are skipped).
    Run {
        #[command(flatten)]
        run: RunArgs,
        /// Arguments for the program (`argv` holds the file name, then these).
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Run a program with the utests of its main file; exit code 1 if any fails.
    Test {
        #[command(flatten)]
        run: RunArgs,
        /// Also run the utests of every included file.
        #[arg(long)]
        all_utests: bool,
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Run the language server: the Language Server Protocol on stdin/stdout.
    Lsp {
        /// Accepted for editors that pass it; stdio is the only transport.
        #[arg(long)]
        stdio: bool,
    },
}

#[derive(Args)]
struct RunArgs {
    /// The program's main file.
    file: PathBuf,
    /// Debug mode: accelerated code runs sequentially on the CPU, with
    /// run-time checks of the assumptions GPU code relies on.
    #[arg(long)]
    debug: bool,
    /// The largest tensor rank accelerated code accepts.
    #[arg(long, default_value_t = 3)]
    tensor_max_rank: usize,
    /// With --debug: run each `loop` in accelerated code in several orders
    /// and each `reduce` with three bracketings, and fail where the result
    /// depends on the order.
    #[arg(long, requires = "debug")]
    check_order: bool,
    /// Where accelerated code runs: auto, interp, cpu or gpu (also
    /// PMX_TARGET). Debug mode always uses the interpreter.
    #[arg(long, value_parser = parse_target)]
    target: Option<pmx_native::Target>,
    /// Where host code (everything outside `accelerate`) runs: auto
    /// (machine code where the native tier compiles it, the interpreter
    /// elsewhere), native (anything it cannot compile is an error) or
    /// interp. Debug mode always uses the interpreter.
    #[arg(long, value_enum, default_value_t = Host::Auto)]
    host: Host,
    /// Generated code without bounds, rank and division checks.
    #[arg(long)]
    unchecked: bool,
    /// Say on stderr which engine runs each accelerate binding.
    #[arg(long)]
    verbose: bool,
    /// End with a table per accelerate binding: calls, time, bytes, compile time.
    #[arg(long)]
    profile: bool,
    #[command(flatten)]
    color: OutputArgs,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum Host {
    Auto,
    Native,
    Interp,
}

fn parse_target(s: &str) -> Result<pmx_native::Target, String> {
    pmx_native::Target::parse(s).ok_or_else(|| format!("`{s}` is not a target: use auto, interp, cpu or gpu"))
}

/// How diagnostics are shown.
#[derive(Args)]
pub struct OutputArgs {
    /// When to use colours in diagnostics.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
    /// Show at most this many diagnostics (0: all). Errors with the same
    /// code and message are shown three times, then counted.
    #[arg(long, default_value_t = crate::render::DEFAULT_ERROR_LIMIT)]
    pub error_limit: usize,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Stage {
    Lifted,
    Extracted,
    FutharkAst,
    CudaAst,
    FutharkIr,
    CudaIr,
    /// The lowered IR of what the native host tier compiles.
    HostIr,
    Cuda,
    Futhark,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CacheAction {
    /// Remove every compiled library.
    Clean,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Human,
    Json,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

/// Runs `pmx` with the process's arguments.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    std::panic::set_hook(Box::new(report_panic));
    // The database (and every tree in it) is created and dropped on the
    // large stack, so deep programs can be freed too.
    pmx_driver::with_stack(move || match cli.command {
        Command::Check { file, format, color } => check(&file, format, &color),
        Command::Explain { file, format, color } => explain(&file, format, &color),
        Command::Emit { stage, file, output, unchecked, all, color } => {
            emit(&file, stage, output.as_deref(), unchecked, all, &color)
        }
        Command::Run { run, args } => run_program(run, args, None),
        Command::Test { run, all_utests, args } => run_program(run, args, Some(all_utests)),
        Command::Lsp { .. } => pmx_lsp::run(),
        Command::Cache { action: CacheAction::Clean } => cache_clean(),
    })
}

/// The panic hook: a panic is a bug in pmx, and says so. While a program
/// runs, the evaluator turns it into an error at the source location being
/// evaluated (printed by `render::runtime_error`), so the hook only
/// remembers what it was told.
fn report_panic(info: &std::panic::PanicHookInfo) {
    pmx_cpu::record_panic(info);
    if pmx_cpu::evaluating() {
        return;
    }
    let message = pmx_cpu::payload_text(info.payload());
    let place = info.location().map(|l| format!(" (at {}:{})", l.file(), l.line())).unwrap_or_default();
    pmx_cpu::io::flush();
    eprintln!("error: internal error: {message}{place}");
    eprintln!("  = note: this is a bug in pmx; please report it, with the input that shows it");
}

fn cache_clean() -> ExitCode {
    let Some(dir) = pmx_native::cache::dir() else {
        eprintln!("error: no cache folder: set PMX_CACHE_DIR (or HOME)");
        return ExitCode::from(1);
    };
    match pmx_native::cache::clean(&dir) {
        Ok(n) => {
            println!("removed {n} entries from {}", dir.display());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
}

/// The front end's database for a run of the CLI: parses are read from
/// and stored in the cache folder (`pmx_driver::ParseCache`), which
/// `pmx cache clean` empties with the rest.
fn database() -> Database {
    let db = Database::default();
    match (pmx_native::cache::dir(), pmx_native::cache::this_build()) {
        (Some(dir), Some(build)) => db.with_parse_cache(pmx_driver::ParseCache::new(dir.join("parse"), build)),
        _ => db,
    }
}

fn load(db: &Database, path: &Path) -> Result<SourceFile, ExitCode> {
    db.load(path).map_err(|e| {
        eprintln!("error[E0103]: cannot read `{}`: {e}", path.display());
        ExitCode::from(1)
    })
}

fn check(path: &Path, format: Format, output: &OutputArgs) -> ExitCode {
    let db = database();
    let root = match load(&db, path) {
        Ok(f) => f,
        Err(code) => return code,
    };
    pmx_driver::prefetch(&db, root);
    let diagnostics = program_diagnostics(&db, root);
    match format {
        Format::Human => render::human(&db, diagnostics, output),
        Format::Json => render::json(&db, diagnostics),
    }
    if diagnostics.iter().any(|d| d.is_error()) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// `tests`: None to skip utests, Some(all) to run the main file's (or all).
fn run_program(run: RunArgs, args: Vec<String>, tests: Option<bool>) -> ExitCode {
    let started = std::time::Instant::now();
    let test = tests.is_some();
    let db = database();
    let root = match load(&db, &run.file) {
        Ok(f) => f,
        Err(code) => return code,
    };
    pmx_driver::prefetch(&db, root);
    let diagnostics = program_diagnostics(&db, root);
    if diagnostics.iter().any(|d| d.is_error()) {
        render::human(&db, diagnostics, &run.color);
        return ExitCode::from(1);
    }
    render::human(&db, diagnostics, &run.color);
    let modules: Vec<&pmx_ast::Module> = pmx_driver::program_modules(&db, root);
    let mut argv = vec![run.file.display().to_string()];
    argv.extend(args);
    let utest_files = match tests {
        Some(true) => pmx_cpu::UtestFiles::All,
        Some(false) => pmx_cpu::UtestFiles::Only(root.id(&db)),
        None => pmx_cpu::UtestFiles::None,
    };
    // The accelerated part as the middle end describes it: every
    // `accelerate` runs as its site, through the engine chosen for it.
    let front_end = started.elapsed();
    let analysis = pmx_driver::accelerate_analysis(&db, root).as_ref();
    let target = match pmx_native::Target::choose(run.target) {
        Ok(t) if run.debug => {
            if t.explicit() {
                eprintln!("pmx: --debug runs accelerated code in the interpreter (--target {t} is not used)");
            }
            pmx_native::Target::Interp
        }
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(1);
        }
    };
    // The engines are chosen and built on a thread of their own while the
    // host code compiles here: the builds mostly wait (on compilers, the
    // cache, a Futhark context), the host compile keeps a core busy, and
    // neither needs the other (the host code calls a binding through its
    // site, whatever engine runs it).
    let boundaries: Vec<pmx_accelerate::Boundary> =
        analysis.map_or_else(Vec::new, |a| a.accelerates.iter().map(|x| x.boundary.clone()).collect());
    let compile_host = !run.debug && run.host != Host::Interp;
    // One locator for the run (it copies every file's text): the engines'
    // notes, the host tier's report and the runtime's messages.
    let locator = std::sync::Arc::new(render::locator(&db));
    let locate = |span| (**locator)(span);
    let (chosen, host) = std::thread::scope(|s| {
        let engines = analysis.map(|a| {
            let (unchecked, verbose) = (run.unchecked, run.verbose);
            s.spawn(move || crate::engines::choose(a, target, !unchecked, verbose, utest_files, &locate))
        });
        let host = compile_host.then(|| {
            // What the host code cache knows the program by: its files as
            // the front end numbered them, and which utests run.
            let files = db.files();
            let utests = format!("{utest_files:?}");
            let mut identity: Vec<&[u8]> = vec![utests.as_bytes()];
            for f in &files {
                identity.push(f.path(&db).as_os_str().as_encoded_bytes());
                identity.push(f.text(&db).as_bytes());
            }
            pmx_host::compile(&modules, &boundaries, &|span| utest_files.includes(span), Some(&identity))
        });
        let chosen = engines.map(|h| h.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)));
        (chosen, host)
    });
    let mut profile = None;
    let accelerated = match (analysis, chosen) {
        (Some(a), Some((chosen, notes))) => {
            for n in &notes {
                eprintln!("{}", n.render());
            }
            match chosen {
                Ok(choice) => {
                    profile = Some(choice.profile.clone());
                    Some(pmx_cpu::Accelerated {
                        program: a.extracted.clone(),
                        boundaries,
                        engines: choice.engines,
                        profile: choice.profile,
                    })
                }
                // A build that fails in generated code is a bug in pmx
                // (its messages start so), with the internal error's code.
                Err(e) if e.starts_with(pmx_cpu::INTERNAL_PREFIX) => {
                    eprintln!(
                        "error: {e}\nnote: this is a bug in pmx; please report it, with the program that shows it"
                    );
                    return ExitCode::from(pmx_cpu::INTERNAL_ERROR_EXIT as u8);
                }
                Err(e) => {
                    eprintln!("error: {e}");
                    return ExitCode::from(1);
                }
            }
        }
        _ => None,
    };
    let options = pmx_cpu::Options {
        debug: run.debug,
        utests: utest_files,
        tensor_max_rank: run.tensor_max_rank,
        argv,
        check_order: run.check_order,
        accumulations: std::sync::Arc::new(crate::accumulations::for_interpreter(analysis, run.check_order)),
    };
    let host = match host {
        None => None,
        Some(host) => {
            if run.verbose {
                eprintln!("{}", host_summary(&host.report));
                for (name, why, span) in &host.report.left {
                    eprintln!("pmx: host code: `{name}` ({}) runs in the interpreter: {why}", locate(*span));
                }
            }
            if run.host == Host::Native && !host.report.left.is_empty() {
                for (name, why, span) in &host.report.left {
                    eprintln!(
                        "error: --host native: `{name}` ({}) cannot be compiled to native code: {why}",
                        locate(*span)
                    );
                }
                return ExitCode::from(1);
            }
            Some(host)
        }
    };
    let runtime_locator = locator.clone();
    pmx_cpu::io::set_locator(Box::new(move |span| (**runtime_locator)(span)));
    let built = started.elapsed();
    // Panics inside the evaluator come back as located errors (see
    // `pmx_cpu::run`).
    let natives = host.as_ref().map(|h| h.natives.clone()).unwrap_or_default();
    let outcome = pmx_cpu::run_with(&modules, accelerated.as_ref(), options, &natives);
    let ran = started.elapsed();
    if let Some(e) = &outcome.error {
        render::runtime_error(&db, e, run.color.color);
    }
    if run.profile {
        // A program without `accelerate` has no table, only the split.
        let table = profile.as_ref().map(|p| p.render()).unwrap_or_default();
        let p = profile.unwrap_or_default();
        let phases = pmx_native::profile::Phases { front_end, build: built - front_end, run: ran - built };
        eprint!("{table}{}", p.render_phases(&phases));
        if let Some(h) = &host {
            eprintln!("{}", host_summary(&h.report));
        }
    }
    if test {
        let summary = format!("\n{} passed, {} failed\n", outcome.passed, outcome.failed);
        pmx_cpu::io::out(&summary);
        pmx_cpu::io::flush();
        if outcome.failed > 0 && outcome.exit_code == 0 {
            return ExitCode::from(1);
        }
    }
    ExitCode::from(outcome.exit_code.clamp(0, 255) as u8)
}

/// One line on what the native host tier did.
fn host_summary(r: &pmx_host::Report) -> String {
    let (how, cache) = match &r.cache {
        pmx_host::Cache::Off => ("compiled", String::new()),
        pmx_host::Cache::Found => ("loaded", " (from the cache)".to_string()),
        pmx_host::Cache::Stored => ("compiled", " (stored in the cache)".to_string()),
        pmx_host::Cache::NotStored(why) => ("compiled", format!(" (not cached: {why})")),
    };
    format!(
        "host code: {} top-level functions {how} as native code in {:.3} ms{cache}, {} left to the interpreter",
        r.compiled.len(),
        r.time.as_secs_f64() * 1e3,
        r.left.len()
    )
}

/// Loads a program; with front-end errors, prints them and gives the exit
/// code instead.
fn front_end(db: &Database, path: &Path, output: &OutputArgs) -> Result<SourceFile, ExitCode> {
    let root = load(db, path)?;
    let diagnostics = pmx_driver::front_end_diagnostics(db, root);
    if diagnostics.iter().any(|d| d.is_error()) {
        render::human(db, diagnostics, output);
        return Err(ExitCode::from(1));
    }
    Ok(root)
}

fn explain(path: &Path, format: Format, output: &OutputArgs) -> ExitCode {
    let db = database();
    let root = match front_end(&db, path, output) {
        Ok(r) => r,
        Err(code) => return code,
    };
    let Some(analysis) = pmx_driver::accelerate_analysis(&db, root) else { return ExitCode::from(1) };
    match format {
        Format::Human => print!("{}", render::explain_human(&db, analysis)),
        Format::Json => {
            println!("{}", serde_json::to_string_pretty(&render::explain_json(&db, analysis)).expect("serialises"))
        }
    }
    if analysis.diagnostics.iter().any(|d| d.is_error()) {
        render::human(&db, &analysis.diagnostics, output);
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}

fn emit(path: &Path, stage: Stage, output: Option<&Path>, unchecked: bool, all: bool, color: &OutputArgs) -> ExitCode {
    let db = database();
    let root = match front_end(&db, path, color) {
        Ok(r) => r,
        Err(code) => return code,
    };
    // The query skips programs without `accelerate`; emit shows every stage.
    let modules: Vec<&pmx_ast::Module> = pmx_driver::program_modules(&db, root);
    let analysis = pmx_accelerate::analyze(&modules);
    // Generated code exists only for programs the accelerate passes accept;
    // their errors say why, where lowering would only say that it failed.
    if matches!(stage, Stage::Cuda | Stage::Futhark) && analysis.diagnostics.iter().any(|d| d.is_error()) {
        render::human(&db, &analysis.diagnostics, color);
        return ExitCode::from(1);
    }
    let program = match stage {
        Stage::Lifted => &analysis.lifted,
        Stage::Extracted => &analysis.extracted,
        Stage::FutharkAst => &analysis.futhark,
        Stage::CudaAst => &analysis.cuda,
        Stage::FutharkIr => return emit_lowered(&db, &analysis, pmx_accelerate::Backend::Futhark, color),
        Stage::CudaIr => return emit_lowered(&db, &analysis, pmx_accelerate::Backend::Cuda, color),
        Stage::HostIr => {
            let boundaries: Vec<pmx_accelerate::Boundary> =
                analysis.accelerates.iter().map(|a| a.boundary.clone()).collect();
            // The host code of `pmx test FILE`: the utests of the file
            // (with `--all`, every file's).
            let file = root.id(&db);
            let utests = |s: pmx_diagnostics::Span| all || s.file == file;
            print!("{}", pmx_host::host_ir(&modules, &boundaries, &utests, &render::locator(&db)));
            return ExitCode::SUCCESS;
        }
        Stage::Cuda => {
            let code = pmx_diagnostics::Code::CudaUnsupported;
            return emit_generated(pmx_cuda::gen::Cuda, code, &db, &analysis, output, unchecked, color);
        }
        Stage::Futhark => {
            let code = pmx_diagnostics::Code::FutharkUnsupported;
            return emit_generated(pmx_futhark::gen::Futhark, code, &db, &analysis, output, unchecked, color);
        }
    };
    let mut module = pmx_accelerate::program::to_module(program);
    let mut text = String::new();
    if stage == Stage::Lifted && !all {
        // The standard library's declarations (and utests) would bury the
        // program's own: a 25-line program printed over 3,000 lines. The
        // later stages hold only what accelerated code uses: all shown.
        let library: Vec<pmx_ast::FileId> =
            program_files(&db, root).iter().filter(|f| in_stdlib(&db, f.path(&db))).map(|f| f.id(&db)).collect();
        let before = module.items.len();
        module.items.retain(|item| !library.contains(&item.span().file));
        let hidden = before - module.items.len();
        if hidden > 0 {
            text.push_str(&format!(
                "-- {hidden} declarations of the standard library are not shown (`--all` shows them)\n"
            ));
        }
    }
    text.push_str(&pmx_ast::print::print_module(&module));
    write_output(output, &text)
}

/// Prints `text`, or writes it to `output`.
fn write_output(output: Option<&Path>, text: &str) -> ExitCode {
    match output {
        None => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        Some(path) => match std::fs::write(path, text) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("error: cannot write `{}`: {e}", path.display());
                ExitCode::from(1)
            }
        },
    }
}

/// The generated program of one class of bindings (`pmx emit --stage
/// cuda|futhark`), through the generators' seam; what the generator does
/// not take is an error `code`.
fn emit_generated<G: pmx_lower::Generator>(
    generator: G,
    code: pmx_diagnostics::Code,
    db: &Database,
    analysis: &pmx_accelerate::Analysis,
    output: Option<&Path>,
    unchecked: bool,
    color: &OutputArgs,
) -> ExitCode {
    let (program, diagnostics) = pmx_lower::lower(analysis, G::BACKEND);
    if !diagnostics.is_empty() {
        render::human(db, &diagnostics, color);
        return ExitCode::from(1);
    }
    let options = pmx_lower::Options { checked: !unchecked, ..pmx_lower::Options::RUN };
    match generator.generate(&program, &render::locator(db), &options) {
        Ok(g) => write_output(output, pmx_lower::Generated::source(&g)),
        Err(errors) => {
            let label = format!("the {} generator does not take this yet", G::BACKEND.name());
            let diagnostics: Vec<pmx_diagnostics::Diagnostic> = errors
                .into_iter()
                .map(|e| pmx_diagnostics::Diagnostic::error(code, e.span, e.message).with_label(label.clone()))
                .collect();
            render::human(db, &diagnostics, color);
            ExitCode::from(1)
        }
    }
}

/// The lowered IR of one backend, with the types of every node. What the
/// lowering could not do is reported (exit code 1), and so is a program
/// that breaks the IR's invariants (a bug of the lowering).
fn emit_lowered(
    db: &Database,
    analysis: &pmx_accelerate::Analysis,
    backend: pmx_accelerate::Backend,
    color: &OutputArgs,
) -> ExitCode {
    let (program, diagnostics) = pmx_lower::lower(analysis, backend);
    print!("{}", pmx_lower::print(&program, &render::locator(db)));
    let problems = pmx_lower::validate(&program);
    for p in &problems {
        eprintln!("internal error: the lowered IR is invalid: {p}");
    }
    render::human(db, &diagnostics, color);
    if problems.is_empty() && diagnostics.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// Whether a file lies in one of the standard library's folders.
fn in_stdlib(db: &Database, path: &Path) -> bool {
    db.stdlib_dirs().iter().any(|dir| {
        let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.clone());
        let path = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        path.starts_with(dir)
    })
}
