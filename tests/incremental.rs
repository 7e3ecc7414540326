//! The driver's queries are incremental: editing one file re-runs the
//! queries of that file (and of files that depend on it), not of the files
//! it includes.

use pmx_driver::{program_diagnostics, with_stack, Database, Db};
use std::path::Path;

#[test]
fn editing_a_file_does_not_recheck_its_includes() {
    with_stack(|| {
        let mut db = Database::new(Vec::new());
        db.enable_log();
        let lib = db.set_file_text(Path::new("/virtual/lib.mc"), "let double = lam x. muli 2 x\n".into());
        let main =
            db.set_file_text(Path::new("/virtual/main.mc"), "include \"lib.mc\"\nlet a = double 2\nmexpr a\n".into());
        assert!(program_diagnostics(&db, main).is_empty());
        let first = db.take_log();
        assert!(first.iter().any(|q| q.starts_with("check_file")), "{first:?}");

        // Edit the main file only.
        db.set_file_text(Path::new("/virtual/main.mc"), "include \"lib.mc\"\nlet a = double 3\nmexpr a\n".into());
        assert!(program_diagnostics(&db, main).is_empty());
        let second = db.take_log();
        let reran: Vec<&String> = second.iter().filter(|q| q.contains("check_file")).collect();
        assert_eq!(reran.len(), 1, "only the edited file is re-checked: {second:?}");
        assert!(second.iter().any(|q| q.starts_with("parse_file")), "{second:?}");
        assert_eq!(second.iter().filter(|q| q.starts_with("parse_file")).count(), 1, "{second:?}");

        // No edit: nothing runs again.
        assert!(program_diagnostics(&db, main).is_empty());
        assert!(db.take_log().is_empty());

        // An edit that breaks the include shows up in the includer.
        db.set_file_text(Path::new("/virtual/lib.mc"), "let triple = lam x. muli 3 x\n".into());
        let diags = program_diagnostics(&db, main);
        assert_eq!(diags.len(), 1, "{diags:?}");
        assert!(diags[0].message.contains("double"));
        assert_eq!(lib.path(&db), Path::new("/virtual/lib.mc"));
        assert!(db.load(Path::new("/virtual/lib.mc")).is_ok());
    });
}
