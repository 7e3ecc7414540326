//! The data-driven harness of the fixture tests (`harness = false` in
//! `Cargo.toml`, run by libtest-mimic): every fixture is a trial of its
//! own, named `GROUP::FIXTURE`, so that one fails without hiding the
//! others and `cargo test --test FILE NAME` selects it.

use libtest_mimic::{Arguments, Trial};
use std::path::{Path, PathBuf};

/// The repository's root.
#[allow(dead_code)]
pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The `.mc` files directly in `dir` (relative to the root), sorted; none
/// if it does not exist.
#[allow(dead_code)]
pub fn mc_files(dir: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join(dir))
        .map(|d| d.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "mc")).collect())
        .unwrap_or_default();
    files.sort();
    files
}

/// A fixture's name in its trial: its file stem.
#[allow(dead_code)]
pub fn stem(p: &(impl AsRef<Path> + ?Sized)) -> String {
    p.as_ref().file_stem().expect("a file name").to_string_lossy().into_owned()
}

/// A trial that passes unless `f` panics (libtest-mimic catches the panic
/// and shows its message).
pub fn trial(name: impl Into<String>, f: impl FnOnce() + Send + 'static) -> Trial {
    Trial::test(name, move || {
        f();
        Ok(())
    })
}

/// One trial per fixture, named `group::NAME` with `name` of the fixture.
#[allow(dead_code)]
pub fn per_fixture<T: Send + 'static>(
    group: &str,
    fixtures: impl IntoIterator<Item = T>,
    name: impl Fn(&T) -> String,
    f: impl Fn(T) + Send + Sync + Clone + 'static,
) -> Vec<Trial> {
    fixtures
        .into_iter()
        .map(|x| {
            let f = f.clone();
            trial(format!("{group}::{}", name(&x)), move || f(x))
        })
        .collect()
}

/// The trials as they are if `tool` is there; otherwise ignored (listed as
/// such by the harness) after saying once, on stderr, why.
#[allow(dead_code)]
pub fn needing(tool: &Result<(), String>, trials: Vec<Trial>) -> Vec<Trial> {
    match tool {
        Ok(()) => trials,
        Err(why) => {
            if let Some(first) = trials.first() {
                let group = first.name().split("::").next().unwrap_or_default();
                eprintln!("skipped: {} tests ({group}...): {why}", trials.len());
            }
            trials.into_iter().map(|t| t.with_ignored_flag(true)).collect()
        }
    }
}

/// Trials that need a CUDA GPU: ignored, run by `-- --ignored on_a_gpu`
/// on a machine with one; unless asked for, says so once.
#[allow(dead_code)]
pub fn on_a_gpu(trials: Vec<Trial>) -> Vec<Trial> {
    if !std::env::args().any(|a| a == "--ignored" || a == "--include-ignored") {
        eprintln!("ignored: {} on_a_gpu tests need a CUDA GPU (run them with `-- --ignored on_a_gpu`)", trials.len());
    }
    trials.into_iter().map(|t| t.with_ignored_flag(true)).collect()
}

/// Runs the trials as `cargo test` asks (filter, `--exact`, `--ignored`,
/// `--list`, `--test-threads`) and exits with the result.
#[allow(dead_code)]
pub fn run(trials: Vec<Trial>) -> ! {
    libtest_mimic::run(&Arguments::from_args(), trials).exit()
}
