//! The differential fuzzer (`tools/fuzz`, the `pmx-fuzz` command) in CI:
//! a fixed set of seeds of each class, and every program under
//! `tests/fuzz/` (each kind of difference found so far, minimised, and
//! those the issues named), run with `--debug` and natively
//! (`--target cpu`, and for CUDA-class code the GPU engine with its
//! kernels on the CPU): the same exit code, output and error in every
//! mode. Longer runs are a command: `cargo run --release -p pmx-fuzz --
//! --minutes 30 --out tests/fuzz` (README, "Differential fuzzing"). One
//! trial per seed and fixture: `cuda_seed::N`, `futhark_seed::N`,
//! `fixture::NAME` (the Futhark-class ones ignored without Futhark).

#[path = "support/harness.rs"]
mod harness;
#[path = "support/process.rs"]
mod process;

use harness::{needing, per_fixture, stem};
use pmx_fuzz::{check, generate, Class, Runner};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Seeds run in CI, per class (about a minute in all on two cores).
const CUDA_SEEDS: std::ops::Range<u64> = 0..8;
const FUTHARK_SEEDS: std::ops::Range<u64> = 0..4;

fn main() {
    let (cuda, futhark_class): (Vec<_>, Vec<_>) = fixtures().into_iter().partition(|(_, class)| *class == Class::Cuda);
    assert!(cuda.len() + futhark_class.len() >= 8, "the fixtures under tests/fuzz are found");
    let name = |(p, _): &(PathBuf, Class)| stem(p);
    let mut trials = per_fixture("cuda_seed", CUDA_SEEDS, u64::to_string, |seed| agrees(Class::Cuda, seed));
    trials.extend(per_fixture("fixture", cuda, name, |(p, class)| fixture_agrees(&p, class)));
    let mut with_futhark =
        per_fixture("futhark_seed", FUTHARK_SEEDS, u64::to_string, |seed| agrees(Class::Futhark, seed));
    with_futhark.extend(per_fixture("fixture", futhark_class, name, |(p, class)| fixture_agrees(&p, class)));
    trials.extend(needing(&process::futhark(), with_futhark));
    harness::run(trials)
}

fn runner() -> Runner {
    Runner { pmx: env!("CARGO_BIN_EXE_pmx").into(), cache: process::CACHE.into(), timeout: Duration::from_secs(300) }
}

/// The generated program of `seed` gives the same in every mode.
fn agrees(class: Class, seed: u64) {
    let dir = std::env::temp_dir().join(format!("pmx-fuzz-test-{}-{seed}-{}", class.name(), std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    let p = generate(class, seed);
    let (_, diffs) = check(&runner(), &p, &dir);
    let _ = std::fs::remove_dir_all(&dir);
    let found: Vec<String> = diffs
        .iter()
        .map(|d| format!("{} seed {seed}: {} (pmx-fuzz --show {}:{seed})", class.name(), d.describe(), class.name()))
        .collect();
    assert!(found.is_empty(), "{}", found.join("\n"));
}

/// The fixtures: `futhark_*.mc` and `cuda_*.mc`, named by class.
fn fixtures() -> Vec<(PathBuf, Class)> {
    harness::mc_files("tests/fuzz")
        .into_iter()
        .filter_map(|p| {
            let name = p.file_name()?.to_str()?.to_string();
            let class = if name.starts_with("futhark_") {
                Class::Futhark
            } else if name.starts_with("cuda_") {
                Class::Cuda
            } else {
                return None;
            };
            Some((p, class))
        })
        .collect()
}

/// A fixture gives the same in every mode.
fn fixture_agrees(p: &Path, class: Class) {
    let root = harness::root();
    let (_, diffs) = runner().compare(p.strip_prefix(root).unwrap_or(p), class);
    let found: Vec<String> = diffs.iter().map(|d| format!("{}: {}", p.display(), d.describe())).collect();
    assert!(found.is_empty(), "{}", found.join("\n"));
}
