//! The lowered IR (`pmx-lower`) of every program that uses `accelerate`
//! under `tests/accelerate` and `tests/run`: for both backends it lowers
//! without diagnostics and passes the validator, and its printed form
//! (`pmx emit --stage futhark-ir|cuda-ir`, every node with its type) is a
//! snapshot in `tests/accelerate/snapshots/lowered/`. The programs that
//! must fail the accelerate checks are lowered too: whatever they report,
//! the lowering does not panic. One trial per program and check:
//! `valid::NAME`, `typed::NAME`, `rejected::NAME`, NAME the snapshot's.

#[path = "support/harness.rs"]
mod harness;
#[path = "support/process.rs"]
mod process;

use harness::{per_fixture, root};
use libtest_mimic::{Completion, Trial};
use pmx_driver::Db;
use process::pmx;
use std::path::{Path, PathBuf};

fn main() {
    let files = programs();
    assert!(files.len() > 20, "{files:?}");
    let name = |f: &PathBuf| snapshot_name(f);
    let mut trials = per_fixture("valid", files.clone(), name, |f| lowers_to_a_valid_program(&f));
    trials.extend(per_fixture("typed", files, name, |f| lowered_program_with_types(&f)));
    let rejected = rejected_programs();
    assert!(rejected.len() > 10);
    trials.extend(rejected.into_iter().map(|f| {
        Trial::ignorable_test(format!("rejected::{}", snapshot_name(&f)), move || {
            Ok(if lowers_without_panicking(&f) {
                Completion::Completed
            } else {
                Completion::ignored_with("the front end rejects it")
            })
        })
    }));
    harness::run(trials)
}

fn mc_files(dir: &Path, recursive: bool, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("a test directory") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() && recursive {
            mc_files(&path, true, out);
        } else if path.extension().is_some_and(|x| x == "mc") {
            out.push(path);
        }
    }
}

/// The fixtures: `tests/accelerate/*.mc` and every run fixture that uses
/// `accelerate`.
fn programs() -> Vec<PathBuf> {
    let root = root();
    let mut files = Vec::new();
    mc_files(&root.join("tests/accelerate"), false, &mut files);
    let mut run = Vec::new();
    mc_files(&root.join("tests/run"), true, &mut run);
    run.retain(|f| std::fs::read_to_string(f).is_ok_and(|s| s.contains("accelerate")));
    files.extend(run);
    files.sort();
    files
}

/// The snapshot's name: the path under `tests/`, `/` made `_`.
fn snapshot_name(f: &Path) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let rel = f.strip_prefix(&root).unwrap_or(f).with_extension("");
    rel.to_string_lossy().replace(['/', '\\'], "_")
}

/// Lowers one program for both backends in-process; returns, per backend,
/// the lowering's diagnostics and the validator's problems.
fn lower_both(path: &Path) -> Vec<(pmx_accelerate::Backend, Vec<pmx_lower::Diagnostic>, Vec<String>)> {
    let path = path.to_path_buf();
    pmx_driver::with_stack(move || {
        let db = pmx_driver::Database::default();
        let root = db.load(&path).expect("readable");
        let modules = pmx_driver::program_modules(&db, root);
        let analysis = pmx_accelerate::analyze(&modules);
        [pmx_accelerate::Backend::Futhark, pmx_accelerate::Backend::Cuda]
            .into_iter()
            .map(|b| {
                let (program, diags) = pmx_lower::lower(&analysis, b);
                (b, diags, pmx_lower::validate(&program))
            })
            .collect()
    })
}

/// A program lowers for both backends without diagnostics to programs
/// the validator accepts.
fn lowers_to_a_valid_program(f: &Path) {
    for (backend, diags, problems) in lower_both(f) {
        assert!(diags.is_empty(), "{} ({backend:?}): {diags:#?}", f.display());
        assert!(problems.is_empty(), "{} ({backend:?}): {problems:#?}", f.display());
    }
}

/// The lowered programs with types, snapshotted.
fn lowered_program_with_types(f: &Path) {
    let name = snapshot_name(f);
    let (c1, futhark, e1) = pmx(&["emit", "--stage", "futhark-ir", "--color=never"], f);
    let (c2, cuda, e2) = pmx(&["emit", "--stage", "cuda-ir", "--color=never"], f);
    assert!(c1 == 0 && c2 == 0 && e1.is_empty() && e2.is_empty(), "{name}: {e1}{e2}");
    let shown = format!("==================== futhark-ir\n{futhark}\n==================== cuda-ir\n{cuda}");
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("accelerate/snapshots/lowered");
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    settings.bind(|| insta::assert_snapshot!(name, shown));
}

/// The programs that use `accelerate` and that the accelerate checks
/// reject (`tests/check/fail`), with one the front end accepts.
fn rejected_programs() -> Vec<PathBuf> {
    let root = root();
    let mut files = Vec::new();
    mc_files(&root.join("tests/check/fail"), false, &mut files);
    files.push(root.join("tests/check/pass/syntax_forms.mc"));
    files.retain(|f| std::fs::read_to_string(f).is_ok_and(|s| s.contains("accelerate")));
    files.sort();
    files
}

/// A program the accelerate checks reject still lowers without a panic
/// (what the lowering reports about it is not checked here); false if the
/// front end rejects it, as then it never reaches the accelerate passes.
fn lowers_without_panicking(f: &Path) -> bool {
    let db = pmx_driver::Database::default();
    let root = db.load(f).expect("readable");
    if pmx_driver::front_end_diagnostics(&db, root).iter().any(|d| d.is_error()) {
        return false;
    }
    drop(db);
    lower_both(f);
    true
}
