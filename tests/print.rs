//! The AST printer round-trips: for every valid program in the test suite
//! and the standard library, the printed program checks without
//! diagnostics and prints the same again.

use pmx_driver::{check_file, program_diagnostics, with_stack, Database, Db};
use std::path::{Path, PathBuf};

fn valid_programs() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in ["tests/check/pass", "tests/check/types", "tests/run", "std", "std/ext", "examples", "benches/programs"]
    {
        if let Ok(entries) = std::fs::read_dir(root.join(dir)) {
            for e in entries {
                let p = e.expect("dir entry").path();
                if p.extension().is_some_and(|x| x == "mc") {
                    files.push(p);
                }
            }
        }
    }
    files.sort();
    files
}

#[test]
fn printed_programs_parse_check_and_print_the_same() {
    let files = valid_programs();
    assert!(files.len() > 20);
    with_stack(move || {
        for path in files {
            let mut db = Database::default();
            let root = db.load(&path).expect("readable");
            if !program_diagnostics(&db, root).is_empty() {
                continue;
            }
            let first = pmx_ast::print::print_module(&check_file(&db, root).module);
            let root = db.set_file_text(&path, first.clone());
            let diags = program_diagnostics(&db, root);
            assert!(diags.is_empty(), "{}: the printed program has errors: {:?}\n{first}", path.display(), diags[0]);
            let second = pmx_ast::print::print_module(&check_file(&db, root).module);
            assert_eq!(first, second, "{}: printing is not stable", path.display());
        }
    });
}
