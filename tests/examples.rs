//! Every example (`examples/*/` with a `main.mc`) passes its utests in
//! debug mode, and, where the native toolchain is there (Futhark for
//! Futhark-class code, a C++ compiler with OpenMP for CUDA-class code),
//! `pmx test --target cpu` prints the same output with the same utest
//! counts. The examples' default sizes are small so this stays quick;
//! their realistic sizes are in each folder's `bench.json`. One trial per
//! program: `debug::EXAMPLE`, `library::EXAMPLE/FILE`, `cpu::EXAMPLE`
//! (ignored without Futhark, saying why).

#[path = "support/harness.rs"]
mod harness;
#[path = "support/process.rs"]
mod process;

use harness::{needing, per_fixture, root};
use process::pmx;
use std::path::{Path, PathBuf};

fn main() {
    let all = examples();
    assert!(!all.is_empty(), "examples with a main.mc are found");
    let libraries = libraries(&all);
    assert!(libraries.len() >= 10, "the examples' libraries under examples/ are found");
    // An example by its folder, a library by its folder and file stem.
    let name = |p: &PathBuf| {
        let rel = p.strip_prefix(root().join("examples")).expect("under examples/");
        if rel.ends_with("main.mc") { rel.parent() } else { Some(rel) }
            .expect("a name")
            .with_extension("")
            .to_string_lossy()
            .into_owned()
    };
    let mut trials = per_fixture("debug", all.clone(), name, |p| passes_its_utests_in_debug_mode(&p));
    trials.extend(per_fixture("library", libraries, name, |p| library_passes_its_own_utests(&p)));
    // `--target cpu` needs a Futhark compiler (the CUDA engine only the
    // C++ compiler the build already has).
    trials
        .extend(needing(&process::futhark(), per_fixture("cpu", all, name, |p| runs_on_the_cpu_as_in_debug_mode(&p))));
    harness::run(trials)
}

/// The main program of each example folder, sorted.
fn examples() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(root().join("examples"))
        .expect("examples/")
        .flatten()
        .map(|e| e.path().join("main.mc"))
        .filter(|p| p.is_file())
        .collect();
    out.sort();
    out
}

/// Every other file of an example folder (a library the main program
/// includes), sorted.
fn libraries(examples: &[PathBuf]) -> Vec<PathBuf> {
    let mut libraries: Vec<PathBuf> = examples
        .iter()
        .filter_map(|main| std::fs::read_dir(main.parent()?).ok())
        .flat_map(|dir| dir.flatten().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "mc") && !p.ends_with("main.mc"))
        .collect();
    libraries.sort();
    libraries
}

/// The utest tally line, `N passed, M failed`.
fn tally(out: &str) -> Option<&str> {
    out.lines().rev().find(|l| l.ends_with(" failed"))
}

/// An example passes its utests in debug mode, and has some.
fn passes_its_utests_in_debug_mode(p: &Path) {
    let (code, out, err) = pmx(&["test", "--debug", "--color=never"], p);
    assert_eq!(code, 0, "{}: {out}\n{err}", p.display());
    let t = tally(&out).unwrap_or_default();
    assert!(t.ends_with(" 0 failed") && !t.starts_with("0 passed"), "{}: {t}", p.display());
}

/// A library of an example passes its own utests, which `pmx test` of the
/// main program does not run.
fn library_passes_its_own_utests(p: &Path) {
    let (code, out, err) = pmx(&["test", "--debug", "--color=never"], p);
    assert_eq!(code, 0, "{}: {out}\n{err}", p.display());
    let t = tally(&out).unwrap_or_default();
    assert!(t.ends_with(" 0 failed"), "{}: {t}", p.display());
}

/// An example with `--target cpu` prints what it prints in debug mode.
fn runs_on_the_cpu_as_in_debug_mode(p: &Path) {
    let debug = pmx(&["test", "--debug", "--color=never"], p);
    let cpu = pmx(&["test", "--target", "cpu", "--color=never"], p);
    assert_eq!(cpu.0, 0, "{}: {}\n{}", p.display(), cpu.1, cpu.2);
    assert_eq!(debug.1, cpu.1, "{}: outputs differ\n{}", p.display(), cpu.2);
}
