//! Every example (`examples/*/` with a `main.mc`) passes its utests in
//! debug mode, and, where the native toolchain is there (Futhark for
//! Futhark-class code, a C++ compiler with OpenMP for CUDA-class code),
//! `pmx test --target cpu` prints the same output with the same utest
//! counts. The examples' default sizes are small so this stays quick;
//! their realistic sizes are in each folder's `bench.json`.

#[path = "support/process.rs"]
mod process;

use process::pmx;
use std::path::{Path, PathBuf};

/// The main program of each example folder, sorted.
fn examples() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let mut out: Vec<PathBuf> = std::fs::read_dir(&root)
        .expect("examples/")
        .flatten()
        .map(|e| e.path().join("main.mc"))
        .filter(|p| p.is_file())
        .collect();
    out.sort();
    out
}

/// The utest tally line, `N passed, M failed`.
fn tally(out: &str) -> Option<&str> {
    out.lines().rev().find(|l| l.ends_with(" failed"))
}

#[test]
fn examples_pass_their_utests_in_debug_mode() {
    let all = examples();
    assert!(!all.is_empty(), "examples with a main.mc are found");
    for p in all {
        let (code, out, err) = pmx(&["test", "--debug", "--color=never"], &p);
        assert_eq!(code, 0, "{}: {out}\n{err}", p.display());
        let t = tally(&out).unwrap_or_default();
        assert!(t.ends_with(" 0 failed") && !t.starts_with("0 passed"), "{}: {t}", p.display());
    }
}

/// Every other file of an example folder (a library the main program
/// includes) passes its own utests, which `pmx test` of the main program
/// does not run.
#[test]
fn example_libraries_pass_their_own_utests() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let mut libraries: Vec<PathBuf> = examples()
        .iter()
        .filter_map(|main| std::fs::read_dir(main.parent()?).ok())
        .flat_map(|dir| dir.flatten().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "mc") && !p.ends_with("main.mc"))
        .collect();
    libraries.sort();
    assert!(libraries.len() >= 10, "the examples' libraries under {} are found", root.display());
    for p in libraries {
        let (code, out, err) = pmx(&["test", "--debug", "--color=never"], &p);
        assert_eq!(code, 0, "{}: {out}\n{err}", p.display());
        let t = tally(&out).unwrap_or_default();
        assert!(t.ends_with(" 0 failed"), "{}: {t}", p.display());
    }
}

#[test]
fn examples_run_on_the_cpu_as_in_debug_mode() {
    // `--target cpu` needs a Futhark compiler (the CUDA engine only the
    // C++ compiler the build already has).
    if !process::futhark_or_skip() {
        return;
    }
    for p in examples() {
        let debug = pmx(&["test", "--debug", "--color=never"], &p);
        let cpu = pmx(&["test", "--target", "cpu", "--color=never"], &p);
        assert_eq!(cpu.0, 0, "{}: {}\n{}", p.display(), cpu.1, cpu.2);
        assert_eq!(debug.1, cpu.1, "{}: outputs differ\n{}", p.display(), cpu.2);
    }
}
