//! Data-driven runtime tests: every program under `tests/run` is run with
//! `pmx test` (as are the MLang programs of `tests/run/mlang`, and the
//! files under `tests/run/debug` with `pmx test --debug`); its standard
//! output, standard error and exit code are snapshotted beside the source, so each built-in's behaviour and each
//! run-time error message (with its source line) is pinned. Every file of
//! the standard library and of the compatibility suite (`tests/compat`)
//! passes its own utests; the derivatives' programs of `tests/run` run
//! with `--debug` too (`debug::derivative*`). One trial per program: `run::NAME`,
//! `mlang::NAME`, `debug::NAME`, `check_order::NAME`, `std::NAME`, `compat::NAME`.

#[path = "support/harness.rs"]
mod harness;
#[path = "support/process.rs"]
mod process;

use harness::{mc_files, per_fixture, root, stem};
use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    let mut trials = Vec::new();
    let groups: [(&str, &'static str, &'static [&'static str]); 4] = [
        ("run", "", &[]),
        ("mlang", "mlang/", &[]),
        ("debug", "debug/", &["--debug"]),
        ("check_order", "check_order/", &["--debug", "--check-order"]),
    ];
    for (group, dir, flags) in groups {
        let files = mc_files(&format!("tests/run/{dir}"));
        assert!(!files.is_empty(), "no programs in tests/run/{dir}");
        trials.extend(per_fixture(group, files, stem, move |f| snapshot(dir, &f, flags)));
    }
    // The derivatives' programs in debug mode too (duals in the
    // interpreter there, in accelerated code as well): the same output.
    let derivatives: Vec<PathBuf> =
        mc_files("tests/run/").into_iter().filter(|f| stem(f).starts_with("derivative")).collect();
    assert!(!derivatives.is_empty(), "no derivative programs in tests/run");
    trials.extend(per_fixture("debug", derivatives, stem, |f| snapshot("debug/", &f, &["--debug"])));
    trials.extend(per_fixture("std", std_files(), std_name, |f| passes_its_utests(&f, root())));
    let compat = mc_files("tests/compat");
    assert!(!compat.is_empty(), "no programs in tests/compat");
    trials.extend(per_fixture("compat", compat, stem, |f| passes_its_utests(&f, &root().join("tests/compat"))));
    harness::run(trials)
}

/// `pmx test` with the default target (`auto`), which runs accelerate
/// code natively where the toolchain is there, so the snapshots hold for
/// both engines. Without `futhark`, Futhark-class code runs in the
/// interpreter (`auto` says so on stderr, a line `without_progress` leaves
/// out) and
/// CUDA-class code still on the CPU engine, so that only the programs
/// whose output depends on the Futhark engine (`FUTHARK_ONLY`) differ:
/// those are skipped, saying why (once).
fn pmx_test() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pmx"));
    cmd.arg("test").env("PMX_CACHE_DIR", process::CACHE);
    cmd
}

/// Why the Futhark engine is not here, if it is not (said once).
fn no_futhark() -> Option<&'static str> {
    static WHY: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    WHY.get_or_init(|| {
        process::futhark().err().inspect(|why| {
            eprintln!("the run tests run Futhark-class code in the interpreter, and skip {FUTHARK_ONLY:?}: {why}")
        })
    })
    .as_deref()
}

/// Programs whose snapshot holds only where Futhark-class code runs on
/// the Futhark engine: a failure that it reports with less detail than
/// the interpreter (as debug mode's own snapshots show).
const FUTHARK_ONLY: &[&str] = &["derivative_cotangent_accelerated"];

/// Runs `pmx test [flags] FILE` from the repository root.
fn run(file: &Path, flags: &[&str]) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let rel = file.strip_prefix(root).expect("fixture inside the repository");
    let out = pmx_test().args(flags).arg("--color=never").arg(rel).current_dir(root).output().expect("pmx runs");
    // A bug in pmx fails the test whatever the snapshot says.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.code() != Some(101) && !stderr.contains("internal error"),
        "{}: an internal error:\n{stderr}",
        file.display()
    );
    format!(
        "exit code: {}\n---- stdout ----\n{}\n---- stderr ----\n{}",
        out.status.code().map_or("signal".to_string(), |c| c.to_string()),
        String::from_utf8_lossy(&out.stdout),
        process::without_progress(&stderr)
    )
}

/// Runs one program of `tests/run/DIR` and compares what it did with its
/// snapshot (named `DIR` with `_` for `/`, then the file stem).
fn snapshot(dir: &str, f: &Path, flags: &[&str]) {
    if dir.is_empty() && FUTHARK_ONLY.contains(&stem(f).as_str()) {
        if let Some(why) = no_futhark() {
            eprintln!("skipped run::{}: {why}", stem(f));
            return;
        }
    }
    no_futhark();
    let out = run(f, flags);
    let source = std::fs::read_to_string(f).expect("fixture readable");
    let name = format!("{}{}", dir.replace('/', "_"), stem(f));
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("run/snapshots");
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    // How many calls fit on the stack depends on the build's frame sizes.
    settings.add_filter(r"and \d+ more calls", "and [N] more calls");
    settings.add_filter(r"\(\d+ times\)", "([N] times)");
    let shown = format!("{source}\n========================================\n{out}");
    settings.bind(|| insta::assert_snapshot!(name, shown));
}

/// Every file of the standard library (`std/`, `std/ext/`,
/// `std/multicore/`), which must pass its own utests; sorted.
fn std_files() -> Vec<PathBuf> {
    let files: Vec<PathBuf> = ["std", "std/ext", "std/multicore"].iter().flat_map(|d| mc_files(d)).collect();
    assert!(files.len() >= 10, "the standard library is found");
    files
}

/// A file of the standard library by its path under `std/`.
fn std_name(p: &impl AsRef<Path>) -> String {
    p.as_ref().strip_prefix(root().join("std")).expect("under std/").with_extension("").to_string_lossy().into_owned()
}

/// `pmx test FILE`, run from `dir`, passes all its utests: the standard
/// library's files, and the compatibility suite (programs in Miking's
/// style that use every module of `std/` and every external pmx
/// implements).
fn passes_its_utests(f: &Path, dir: &Path) {
    let out = pmx_test().arg("--color=never").arg(f).current_dir(dir).output().expect("pmx runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}:\n{stdout}\n{}", f.display(), String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains(" passed, 0 failed"), "{}: {stdout}", f.display());
}
