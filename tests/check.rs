//! Data-driven front-end tests: every program under `tests/check/pass`
//! checks without diagnostics; every program under `tests/check/fail` has
//! its source and rendered diagnostics snapshotted side by side; every
//! program under `tests/check/types` has the inferred types of its
//! top-level bindings snapshotted. One trial per program: `pass::NAME`,
//! `fail::NAME`, `types::NAME`.

#[path = "support/harness.rs"]
mod harness;

#[path = "support/check.rs"]
mod check;

use harness::{mc_files, per_fixture, stem};
use pmx_driver::{program_diagnostics, with_stack, Database, Db};
use std::path::Path;

fn main() {
    let fixtures = |dir: &str| {
        let files = mc_files(&format!("tests/check/{dir}"));
        assert!(!files.is_empty(), "no programs in tests/check/{dir}");
        files
    };
    let mut trials = per_fixture("pass", fixtures("pass"), stem, |f| checks_cleanly(&f));
    trials.extend(per_fixture("fail", fixtures("fail"), stem, |f| reports_expected_diagnostics(&f)));
    trials.extend(per_fixture("types", fixtures("types"), stem, |f| inferred_types(&f)));
    harness::run(trials)
}

/// Checks a program and renders its diagnostics as `pmx check` does.
fn check(path: &Path) -> (usize, String) {
    let path = path.to_path_buf();
    with_stack(move || {
        let db = Database::default();
        let root = db.load(&path).expect("fixture readable");
        let diags = program_diagnostics(&db, root);
        (diags.len(), pmx::render::human_to_string(&db, diags))
    })
}

/// A program under `tests/check/pass` checks without diagnostics.
fn checks_cleanly(f: &Path) {
    let (n, out) = check(f);
    assert!(n == 0, "{} reported diagnostics:\n{out}", f.display());
}

/// A program under `tests/check/fail` reports diagnostics, snapshotted
/// beside its source.
fn reports_expected_diagnostics(f: &Path) {
    let (n, out) = check(f);
    assert!(n > 0, "{} reported nothing", f.display());
    let source = std::fs::read_to_string(f).expect("fixture readable");
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("check/snapshots");
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    let shown = format!("{source}\n----------------------------------------\n{out}");
    settings.bind(|| insta::assert_snapshot!(stem(f), shown));
}

/// The inferred type of every top-level binding, one per line, after the
/// program's diagnostics.
fn top_level_types(path: &Path) -> String {
    let path = path.to_path_buf();
    with_stack(move || {
        let db = Database::default();
        let root = db.load(&path).expect("fixture readable");
        let mut out = String::new();
        for d in program_diagnostics(&db, root) {
            out.push_str(&format!("diagnostic {}: {}\n", d.code, d.message));
        }
        out + &check::top_level_types(&db, root)
    })
}

/// The types inferred for a program under `tests/check/types`, snapshotted
/// beside its source.
fn inferred_types(f: &Path) {
    let out = top_level_types(f);
    let source = std::fs::read_to_string(f).expect("fixture readable");
    let name = format!("types_{}", stem(f));
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("check/snapshots");
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    let shown = format!("{source}\n----------------------------------------\n{out}");
    settings.bind(|| insta::assert_snapshot!(name, shown));
}
