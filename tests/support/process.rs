//! Running the `pmx` binary built for the tests.

use std::path::Path;
use std::process::Command;

/// The cache of compiled accelerate code that the tests' runs share (kept
/// between test runs under the target folder, so that only changed
/// programs compile again).
pub const CACHE: &str = concat!(env!("CARGO_TARGET_TMPDIR"), "/pmx-cache");

/// Runs `pmx ARGS FILE` from the repository's root (with `FILE` relative
/// to it when it lies inside, so that outputs name it the same way on every
/// machine); returns the exit code, stdout and stderr.
#[allow(dead_code)]
pub fn pmx(args: &[&str], file: &Path) -> (i32, String, String) {
    pmx_with_env(args, file, &[])
}

/// [`pmx`] with extra environment variables.
#[allow(dead_code)]
pub fn pmx_with_env(args: &[&str], file: &Path, env: &[(&str, &str)]) -> (i32, String, String) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let rel = file.strip_prefix(root).unwrap_or(file);
    let out = Command::new(env!("CARGO_BIN_EXE_pmx"))
        .args(args)
        .arg(rel)
        .current_dir(root)
        .env("PMX_CACHE_DIR", CACHE)
        .envs(env.iter().copied())
        .output()
        .expect("pmx runs");
    // A bug in pmx fails the test whatever the caller checks.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.code() != Some(101) && !stderr.contains("internal error"),
        "pmx {args:?} {}: an internal error:\n{stderr}",
        file.display()
    );
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned(), without_progress(&stderr))
}

/// Stderr without the progress lines of compilation (`pmx: compiling
/// ... ...`), which depend on whether the shared cache already held the
/// code, not on the program.
pub fn without_progress(stderr: &str) -> String {
    stderr
        .lines()
        .filter(|l| !(l.starts_with("pmx: compiling ") && l.ends_with(" ...")))
        // `auto`'s note, where `futhark` is not installed, that
        // Futhark-class code runs in the interpreter: the comparisons and
        // snapshots hold with it or without it.
        .filter(|l| !l.starts_with("pmx: futhark not found"))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// Whether a Futhark compiler is found (`PMX_FUTHARK`, `PATH`), so that
/// Futhark-class code can run natively; otherwise why not, for the trials
/// that need it to say why they are skipped.
#[allow(dead_code)]
pub fn futhark() -> Result<(), String> {
    pmx_futhark::engine::find().map(|_| ()).map_err(|why| why.to_string())
}
