//! Data-driven runtime tests: every program under `tests/run` is run with
//! `pmx test` (and the files under `tests/run/debug` with `pmx test
//! --debug`); its standard output, standard error and exit code are
//! snapshotted beside the source, so each built-in's behaviour and each
//! run-time error message (with its source line) is pinned.

#[path = "support/process.rs"]
mod process;
use std::path::{Path, PathBuf};
use std::process::Command;

fn programs(dir: &str) -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/run").join(dir);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&root)
        .map(|d| d.map(|e| e.expect("dir entry").path()).filter(|p| p.extension().is_some_and(|x| x == "mc")).collect())
        .unwrap_or_default();
    files.sort();
    files
}

/// `pmx test` with the default target (`auto`), which runs accelerate
/// code natively where the toolchain is there, so the snapshots hold for
/// both engines. Without `futhark`, `auto` would add a note to stderr:
/// the interpreter is asked for explicitly instead (said once).
fn pmx_test() -> Command {
    static TARGET: std::sync::OnceLock<Vec<&str>> = std::sync::OnceLock::new();
    let target = TARGET.get_or_init(|| match pmx_futhark::engine::find() {
        Ok(_) => Vec::new(),
        Err(why) => {
            eprintln!("the run tests use --target interp: {why}");
            vec!["--target", "interp"]
        }
    });
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pmx"));
    cmd.arg("test").args(target).env("PMX_CACHE_DIR", process::CACHE);
    cmd
}

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

fn snapshot_all(dir: &str, flags: &[&str]) {
    let files = programs(dir);
    assert!(!files.is_empty(), "no programs in tests/run/{dir}");
    for f in files {
        let out = run(&f, flags);
        let source = std::fs::read_to_string(&f).expect("fixture readable");
        let name = format!("{}{}", dir.replace('/', "_"), f.file_stem().expect("name").to_string_lossy());
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
}

#[test]
fn programs_run_as_expected() {
    snapshot_all("", &[]);
}

#[test]
fn programs_run_as_expected_in_debug_mode() {
    snapshot_all("debug/", &["--debug"]);
}

#[test]
fn programs_run_as_expected_when_checking_order() {
    snapshot_all("check_order/", &["--debug", "--check-order"]);
}

/// Every file of the standard library passes its own utests.
#[test]
fn standard_library_utests_pass() {
    let std = Path::new(env!("CARGO_MANIFEST_DIR")).join("std");
    let mut files = Vec::new();
    for dir in [std.clone(), std.join("ext"), std.join("multicore")] {
        for e in std::fs::read_dir(dir).expect("std readable") {
            let p = e.expect("dir entry").path();
            if p.extension().is_some_and(|x| x == "mc") {
                files.push(p);
            }
        }
    }
    assert!(files.len() >= 10);
    for f in files {
        let out = pmx_test().arg("--color=never").arg(&f).output().expect("pmx runs");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{}:\n{stdout}\n{}", f.display(), String::from_utf8_lossy(&out.stderr));
        assert!(stdout.contains(" passed, 0 failed"), "{}: {stdout}", f.display());
    }
}

/// The compatibility suite: programs in Miking's style that use every
/// module of `std/` and every external pmx implements; each passes all its
/// utests.
#[test]
fn compatibility_suite_passes() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/compat");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("tests/compat readable")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "mc"))
        .collect();
    files.sort();
    assert!(!files.is_empty());
    for f in files {
        let out = pmx_test().arg("--color=never").arg(&f).current_dir(&dir).output().expect("pmx runs");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{}:\n{stdout}\n{}", f.display(), String::from_utf8_lossy(&out.stderr));
        assert!(stdout.contains(" passed, 0 failed"), "{}: {stdout}", f.display());
    }
}
