//! Data-driven front-end tests: every program under `tests/check/pass`
//! checks without diagnostics; every program under `tests/check/fail` has
//! its source and rendered diagnostics snapshotted side by side.

use pmx_driver::{program_diagnostics, with_stack, Database, Db};
use std::path::{Path, PathBuf};

fn fixtures(dir: &str) -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/check").join(dir);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "mc"))
        .collect();
    files.sort();
    files
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

#[test]
fn valid_programs_check_cleanly() {
    let files = fixtures("pass");
    assert!(!files.is_empty());
    let mut failures = String::new();
    for f in &files {
        let (n, out) = check(f);
        if n > 0 {
            failures.push_str(&format!("{}:\n{out}\n", f.display()));
        }
    }
    assert!(failures.is_empty(), "valid programs reported diagnostics:\n{failures}");
}

#[test]
fn invalid_programs_report_expected_diagnostics() {
    let files = fixtures("fail");
    assert!(!files.is_empty());
    for f in files {
        let (n, out) = check(&f);
        assert!(n > 0, "{} reported nothing", f.display());
        let source = std::fs::read_to_string(&f).expect("fixture readable");
        let name = f.file_stem().expect("file name").to_string_lossy().into_owned();
        let mut settings = insta::Settings::clone_current();
        settings.set_snapshot_path("check/snapshots");
        settings.set_prepend_module_to_snapshot(false);
        settings.set_omit_expression(true);
        let shown = format!("{source}\n----------------------------------------\n{out}");
        settings.bind(|| insta::assert_snapshot!(name, shown));
    }
}

/// The inferred type of every top-level binding, one per line.
fn top_level_types(path: &Path) -> String {
    let path = path.to_path_buf();
    with_stack(move || {
        let db = Database::default();
        let root = db.load(&path).expect("fixture readable");
        let mut out = String::new();
        for d in program_diagnostics(&db, root) {
            out.push_str(&format!("diagnostic {}: {}\n", d.code, d.message));
        }
        let checked = pmx_driver::check_file(&db, root);
        for item in &checked.module.items {
            let bindings: Vec<&pmx_ast::Binding> = match item {
                pmx_ast::Item::Let(b) => vec![b],
                pmx_ast::Item::RecLets(bs, _) => bs.iter().collect(),
                _ => continue,
            };
            for b in bindings {
                out.push_str(&format!("{} : {}\n", b.name.text, b.scheme));
            }
        }
        if let Some(main) = &checked.module.main {
            out.push_str(&format!("mexpr : {}\n", main.ty));
        }
        out
    })
}

#[test]
fn inferred_types() {
    for f in fixtures("types") {
        let out = top_level_types(&f);
        let source = std::fs::read_to_string(&f).expect("fixture readable");
        let name = format!("types_{}", f.file_stem().expect("file name").to_string_lossy());
        let mut settings = insta::Settings::clone_current();
        settings.set_snapshot_path("check/snapshots");
        settings.set_prepend_module_to_snapshot(false);
        settings.set_omit_expression(true);
        let shown = format!("{source}\n----------------------------------------\n{out}");
        settings.bind(|| insta::assert_snapshot!(name, shown));
    }
}
