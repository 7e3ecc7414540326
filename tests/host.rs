//! The native host tier against the interpreter: every program under
//! `tests/host`, `tests/run` and `tests/fuzz`, and every example's utests, run with
//! `--host interp` and with `--host auto` (machine code where the tier
//! compiles it) give the same exit code, output and errors. Accelerated
//! code runs in the interpreter in both, so that only host code differs.
//! The tier must compile something across them, or the comparison would
//! prove nothing. And what the tier compiles of each program under
//! `tests/host` (`pmx emit --stage host-ir`), snapshotted beside it. One
//! trial per program: `native::PATH` (PATH from the repository's root,
//! without `.mc`), `host_ir::NAME`.

#[path = "support/harness.rs"]
mod harness;
#[path = "support/process.rs"]
mod process;

use harness::{mc_files, per_fixture, root, stem};
use libtest_mimic::Arguments;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Top-level functions the tier compiled, over the programs compared.
static COMPILED: AtomicUsize = AtomicUsize::new(0);

fn main() {
    let programs = programs();
    assert!(programs.len() > 50, "programs found: {}", programs.len());
    let count = programs.len();
    let name = |p: &PathBuf| p.strip_prefix(root()).unwrap_or(p).with_extension("").to_string_lossy().into_owned();
    let mut trials = per_fixture("native", programs, name, |f| runs_as_the_interpreter(&f));
    let host = mc_files("tests/host");
    assert!(!host.is_empty());
    trials.extend(per_fixture("host_ir", host, stem, |f| lowered_host_code(&f)));
    let args = Arguments::from_args();
    let conclusion = libtest_mimic::run(&args, trials);
    // The tier must compile something across the programs, or the
    // comparison proved nothing: checked when all of them ran.
    if !conclusion.has_failed() && !args.list && conclusion.num_filtered_out == 0 && conclusion.num_ignored == 0 {
        let total = COMPILED.load(Ordering::Relaxed);
        eprintln!("{count} programs, {total} top-level functions compiled to native code");
        if total == 0 {
            eprintln!("error: the native host tier compiled nothing in {count} programs");
            std::process::exit(101);
        }
    }
    conclusion.exit()
}

/// The programs compared, the examples first: they take longest, and the
/// harness starts trials in this order, so the others fill in around them.
fn programs() -> Vec<PathBuf> {
    let mut all: Vec<PathBuf> = std::fs::read_dir(root().join("examples"))
        .expect("examples")
        .map(|e| e.expect("dir entry").path().join("main.mc"))
        .filter(|p| p.exists())
        .collect();
    all.sort();
    all.extend(mc_files("tests/host"));
    all.extend(mc_files("tests/run"));
    all.extend(mc_files("tests/fuzz"));
    all
}

/// How many calls a trace leaves out depends on frame sizes, which
/// differ between the tiers (native frames are smaller).
fn comparable(stderr: &str) -> String {
    let mut out = String::new();
    for line in stderr.lines() {
        if line.starts_with("host code:") || line.starts_with("pmx: host code:") {
            continue;
        }
        let line = match line.find("... and ") {
            Some(i) if line.ends_with("more calls") => format!("{}... and N more calls", &line[..i]),
            _ => line.to_string(),
        };
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// The number of top-level functions the tier compiled, from `--verbose`.
fn compiled(stderr: &str) -> usize {
    stderr
        .lines()
        .find_map(|l| l.strip_prefix("host code: ")?.split(' ').next()?.parse().ok())
        .expect("--verbose says what the host tier did")
}

/// The program run with `--host interp` and `--host auto` gives the same
/// exit code, output and errors.
fn runs_as_the_interpreter(file: &Path) {
    let base = ["test", "--color=never", "--target", "interp", "--verbose"];
    // Parallel keywords in the interpreter on one thread: a loop that
    // prints prints in order in both runs.
    let one = [("RAYON_NUM_THREADS", "1")];
    let interp = process::pmx_with_env(&[&base[..], &["--host", "interp"]].concat(), file, &one);
    let native = process::pmx_with_env(&[&base[..], &["--host", "auto"]].concat(), file, &one);
    COMPILED.fetch_add(compiled(&native.2), Ordering::Relaxed);
    same(file, ("interp", &interp), ("native", &native));
    // The tier's own programs run a second time from the host code cache
    // (the first run stored them), with the same results.
    if file.starts_with(root().join("tests/host")) {
        let again = process::pmx_with_env(&[&base[..], &["--host", "auto"]].concat(), file, &one);
        assert!(again.2.contains("(from the cache)"), "{}: not from the cache:\n{}", file.display(), again.2);
        same(file, ("native", &native), ("native from the cache", &again));
    }
}

/// Two runs gave the same exit code, output and errors.
fn same(file: &Path, (x, a): (&str, &(i32, String, String)), (y, b): (&str, &(i32, String, String))) {
    let (a, b) = ((a.0, &a.1, comparable(&a.2)), (b.0, &b.1, comparable(&b.2)));
    assert!(
        a == b,
        "{}:\n--- {x}: exit {}\n{}{}\n--- {y}: exit {}\n{}{}",
        file.display(),
        a.0,
        a.1,
        a.2,
        b.0,
        b.1,
        b.2
    );
}

/// What the tier compiles of a program under `tests/host`, snapshotted
/// beside its source.
fn lowered_host_code(f: &Path) {
    let (code, out, err) = process::pmx(&["emit", "--stage", "host-ir"], f);
    assert_eq!(code, 0, "{}: {err}", f.display());
    let source = std::fs::read_to_string(f).expect("fixture readable");
    let name = stem(f);
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("host/snapshots");
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    let shown = format!("{source}\n========================================\n{out}");
    settings.bind(|| insta::assert_snapshot!(name, shown));
}
