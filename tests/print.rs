//! The AST printer round-trips: for every valid program in the test suite
//! and the standard library, the printed program checks without
//! diagnostics and prints the same again. One trial per program, named by
//! its path: `print::tests/run/NAME`, `print::std/NAME`.

#[path = "support/harness.rs"]
mod harness;

use harness::{mc_files, root};
use libtest_mimic::{Completion, Trial};
use pmx_driver::{check_file, program_diagnostics, with_stack, Database, Db};
use std::path::{Path, PathBuf};

fn main() {
    let dirs = [
        "tests/check/pass",
        "tests/check/types",
        "tests/run",
        "tests/run/mlang",
        "std",
        "std/ext",
        "examples",
        "benches/programs",
    ];
    let mut files: Vec<PathBuf> = dirs.iter().flat_map(|d| mc_files(d)).collect();
    files.sort();
    assert!(files.len() > 20);
    let name = |p: &PathBuf| p.strip_prefix(root()).unwrap_or(p).with_extension("").to_string_lossy().into_owned();
    // A program with diagnostics has nothing to print: its trial says it
    // was left out instead of passing.
    let trials = files.into_iter().map(|f| {
        Trial::ignorable_test(format!("print::{}", name(&f)), move || {
            Ok(if prints_the_same(&f) { Completion::Completed } else { Completion::ignored_with("has diagnostics") })
        })
    });
    harness::run(trials.collect())
}

/// A program without diagnostics, printed, checks cleanly and prints the
/// same again; false if the program has diagnostics.
fn prints_the_same(path: &Path) -> bool {
    let path = path.to_path_buf();
    with_stack(move || {
        let mut db = Database::default();
        let root = db.load(&path).expect("readable");
        if !program_diagnostics(&db, root).is_empty() {
            return false;
        }
        let first = pmx_ast::print::print_module(&check_file(&db, root).module);
        let root = db.set_file_text(&path, first.clone());
        let diags = program_diagnostics(&db, root);
        assert!(diags.is_empty(), "{}: the printed program has errors: {:?}\n{first}", path.display(), diags[0]);
        let second = pmx_ast::print::print_module(&check_file(&db, root).module);
        assert_eq!(first, second, "{}: printing is not stable", path.display());
        true
    })
}
