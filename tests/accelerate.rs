//! The accelerate passes: for each program under `tests/accelerate`, the
//! program after lifting, the extracted program, each backend's program
//! as MExpr (`futhark-ast`, `cuda-ast`) and `pmx explain` are snapshots
//! (the lowered IR is in `tests/lowered.rs`); lifting does not change what a program does, nor do
//! each backend's rewrites; a function shared by two accelerate expressions is extracted once.
//! One trial per program and check: `stages::NAME`, `lifting::NAME`,
//! `rewrites::NAME`, `emitted_stages::NAME`.

#[path = "support/harness.rs"]
mod harness;
mod support;

use harness::{mc_files, per_fixture, root, stem, trial};
use std::path::{Path, PathBuf};
use support::pmx;

fn main() {
    let programs = mc_files("tests/accelerate");
    assert!(!programs.is_empty(), "no programs in tests/accelerate");
    let mut corpus = programs.clone();
    corpus.extend(
        ["tests/run/closures_and_recursion.mc", "tests/run/builtins_records_patterns.mc", "tests/run/builtins_seq.mc"]
            .iter()
            .map(|p| root().join(p)),
    );
    let mut trials = per_fixture("stages", programs.clone(), stem, |f| stages_and_explanation(&f));
    trials.extend(per_fixture("lifting", corpus, stem, |f| lifting_preserves_behaviour(&f)));
    trials.extend(per_fixture("rewrites", programs.clone(), stem, |f| backend_rewrites_preserve_behaviour(&f)));
    trials.extend(per_fixture("emitted_stages", programs, stem, |f| emitted_stages_check_again(&f)));
    trials.push(trial("a_shared_function_is_extracted_once", a_shared_function_is_extracted_once));
    harness::run(trials)
}

/// The program's stages and explanation, snapshotted beside its source.
fn stages_and_explanation(f: &Path) {
    let name = stem(f);
    let source = std::fs::read_to_string(f).expect("readable");
    let (_, lifted, e1) = pmx(&["emit", "--stage", "lifted", "--color=never"], f);
    let (_, extracted, e2) = pmx(&["emit", "--stage", "extracted", "--color=never"], f);
    let (_, futhark, e4) = pmx(&["emit", "--stage", "futhark-ast", "--color=never"], f);
    let (_, cuda, e5) = pmx(&["emit", "--stage", "cuda-ast", "--color=never"], f);
    assert!(e4.is_empty() && e5.is_empty(), "{name}: {e4}{e5}");
    let (code, explained, e3) = pmx(&["explain", "--color=never"], f);
    assert_eq!(code, 0, "{name}: {e3}");
    assert!(e1.is_empty() && e2.is_empty(), "{name}: {e1}{e2}");
    let shown = format!(
        "{source}\n==================== lifted\n{lifted}\n==================== extracted\n{extracted}\n==================== futhark-ast\n{futhark}\n==================== cuda-ast\n{cuda}\n==================== explain\n{explained}"
    );
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("accelerate/snapshots");
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    settings.bind(|| insta::assert_snapshot!(name, shown));
}

/// The lifted program, printed and run again, prints what the original
/// prints.
fn lifting_preserves_behaviour(f: &Path) {
    let dir = tempdir();
    // `--all`: the program must run again as a whole, library included.
    let (code, lifted, err) = pmx(&["emit", "--stage", "lifted", "--all", "--color=never"], f);
    assert_eq!(code, 0, "{}: {err}", f.display());
    let out = dir.join(f.file_name().expect("name"));
    std::fs::write(&out, lifted).expect("writable");
    let original = pmx(&["test", "--all-utests", "--color=never"], f);
    // The original ran compiled; the lifted program runs in the
    // interpreter, which is all this needs and spares a compilation.
    let again = pmx(&["test", "--all-utests", "--color=never", "--target", "interp"], &out);
    assert_eq!(original.0, again.0, "{}: exit codes differ\n{}", f.display(), again.2);
    assert_eq!(original.1, again.1, "{}: outputs differ\n{}", f.display(), again.2);
}

/// The whole program with each backend's rewritten program put back in
/// (`program::splice`) prints what the original prints and passes the
/// same utests.
fn backend_rewrites_preserve_behaviour(f: &Path) {
    let dir = tempdir();
    let original = pmx(&["test", "--all-utests", "--color=never"], f);
    for backend in [support::Backend::Futhark, support::Backend::Cuda] {
        let support::Rewritten { whole, backend: program, higher_order } = support::rewritten(f, backend);
        // Every call of a higher-order function in these programs is
        // given known functions, so none is left.
        assert!(higher_order.is_empty(), "{} ({backend:?}): {higher_order:?} left\n{program}", f.display());
        let out = dir.join(format!("{backend:?}-{}", f.file_name().expect("name").to_string_lossy()));
        std::fs::write(&out, &whole).expect("writable");
        let again = pmx(&["test", "--all-utests", "--color=never", "--target", "interp"], &out);
        assert_eq!(original.0, again.0, "{} ({backend:?}): exit codes differ\n{}\n{whole}", f.display(), again.2);
        assert_eq!(original.1, again.1, "{} ({backend:?}): outputs differ\n{}\n{whole}", f.display(), again.2);
    }
}

/// Every stage `pmx emit` prints is MExpr that checks again.
fn emitted_stages_check_again(f: &Path) {
    let dir = tempdir();
    for stage in ["lifted", "extracted", "futhark-ast", "cuda-ast"] {
        let (code, text, err) = pmx(&["emit", "--stage", stage, "--all"], f);
        assert_eq!(code, 0, "{}: {err}", f.display());
        let out = dir.join(format!("{stage}.mc"));
        std::fs::write(&out, &text).expect("writable");
        let (code, _, err) = pmx(&["check", "--color=never"], &out);
        assert_eq!(code, 0, "{} at stage {stage} does not check again:\n{err}\n{text}", f.display());
    }
}

fn a_shared_function_is_extracted_once() {
    let f = root().join("tests/accelerate/shared_function.mc");
    let (_, extracted, _) = pmx(&["emit", "--stage", "extracted"], &f);
    assert_eq!(extracted.matches("let square =").count(), 1, "{extracted}");
    assert_eq!(extracted.matches("let sumSquares =").count(), 1, "{extracted}");
}

fn tempdir() -> PathBuf {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("pmx-accelerate-test-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}
