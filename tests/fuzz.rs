//! The differential fuzzer (`tools/fuzz`, the `pmx-fuzz` command) in CI:
//! a fixed set of seeds of each class, and every program under
//! `tests/fuzz/` (each kind of difference found so far, minimised, and
//! those the issues named), run with `--debug` and natively
//! (`--target cpu`, and for CUDA-class code the GPU engine with its
//! kernels on the CPU): the same exit code, output and error in every
//! mode. Longer runs are a command: `cargo run --release -p pmx-fuzz --
//! --minutes 30 --out tests/fuzz` (README, "Differential fuzzing").

#[path = "support/process.rs"]
mod process;

use pmx_fuzz::{check, generate, Class, Runner};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Seeds run in CI, per class (about a minute in all on two cores).
const CUDA_SEEDS: std::ops::Range<u64> = 0..8;
const FUTHARK_SEEDS: std::ops::Range<u64> = 0..4;

fn runner() -> Runner {
    Runner { pmx: env!("CARGO_BIN_EXE_pmx").into(), cache: process::CACHE.into(), timeout: Duration::from_secs(300) }
}

/// The generated programs of `seeds` that show a difference.
fn differences(class: Class, seeds: std::ops::Range<u64>) -> Vec<String> {
    let dir = std::env::temp_dir().join(format!("pmx-fuzz-test-{}-{}", class.name(), std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    let runner = runner();
    let mut found = Vec::new();
    for seed in seeds {
        let p = generate(class, seed);
        let (_, diffs) = check(&runner, &p, &dir);
        for d in diffs {
            found.push(format!(
                "{} seed {seed}: {} (pmx-fuzz --show {}:{seed})",
                class.name(),
                d.describe(),
                class.name()
            ));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    found
}

#[test]
fn cuda_class_seeds_agree_in_every_mode() {
    let found = differences(Class::Cuda, CUDA_SEEDS);
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn futhark_class_seeds_agree_in_every_mode() {
    if !process::futhark_or_skip() {
        return;
    }
    let found = differences(Class::Futhark, FUTHARK_SEEDS);
    assert!(found.is_empty(), "{}", found.join("\n"));
}

/// The fixtures: `futhark_*.mc` and `cuda_*.mc`, named by class.
fn fixtures() -> Vec<(PathBuf, Class)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz");
    let mut out: Vec<(PathBuf, Class)> = std::fs::read_dir(&dir)
        .expect("tests/fuzz")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "mc"))
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
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

#[test]
fn fuzz_fixtures_agree_in_every_mode() {
    let all = fixtures();
    assert!(all.len() >= 8, "the fixtures under tests/fuzz are found");
    let with_futhark = process::futhark_or_skip();
    let runner = runner();
    let mut found = Vec::new();
    for (p, class) in all {
        if class == Class::Futhark && !with_futhark {
            continue;
        }
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let (_, diffs) = runner.compare(p.strip_prefix(root).unwrap_or(&p), class);
        for d in diffs {
            found.push(format!("{}: {}", p.display(), d.describe()));
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}
