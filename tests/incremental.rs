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

        // An edit of the included file that keeps its exports as they were
        // re-checks that file only.
        db.set_file_text(Path::new("/virtual/lib.mc"), "let double = lam x. muli (addi 1 1) x\n".into());
        assert!(program_diagnostics(&db, main).is_empty());
        let third = db.take_log();
        let rechecked: Vec<&String> = third.iter().filter(|q| q.starts_with("check_file")).collect();
        assert_eq!(rechecked.len(), 1, "only the included file is re-checked: {third:?}");

        // An edit that breaks the include shows up in the includer.
        db.set_file_text(Path::new("/virtual/lib.mc"), "let triple = lam x. muli 3 x\n".into());
        let diags = program_diagnostics(&db, main);
        assert_eq!(diags.len(), 1, "{diags:?}");
        assert!(diags[0].message.contains("double"));
        assert_eq!(lib.path(&db), Path::new("/virtual/lib.mc"));
        assert!(db.load(Path::new("/virtual/lib.mc")).is_ok());
    });
}

/// MLang across files: an edit of the includer leaves the included
/// language alone; an edit of the language reaches the includer, which
/// composes its cases.
#[test]
fn languages_cross_files_incrementally() {
    with_stack(|| {
        let mut db = Database::new(Vec::new());
        db.enable_log();
        let lang = |body: &str| format!("lang A\n  syn T =\n  | K Int\n  sem f =\n  | K n -> {body}\nend\n");
        db.set_file_text(Path::new("/virtual/lang.mc"), lang("n"));
        let main_text = |v: i64| format!("include \"lang.mc\"\nlang B = A end\nmexpr\nuse B in addi (f (K {v})) 1\n");
        let main = db.set_file_text(Path::new("/virtual/main.mc"), main_text(1));
        assert!(program_diagnostics(&db, main).is_empty(), "{:?}", program_diagnostics(&db, main));
        db.take_log();

        db.set_file_text(Path::new("/virtual/main.mc"), main_text(2));
        assert!(program_diagnostics(&db, main).is_empty());
        let log = db.take_log();
        assert_eq!(log.iter().filter(|q| q.starts_with("desugared")).count(), 1, "{log:?}");
        assert_eq!(log.iter().filter(|q| q.starts_with("check_file")).count(), 1, "{log:?}");

        // A case that no longer gives an Int: the includer's use is wrong.
        db.set_file_text(Path::new("/virtual/lang.mc"), lang("true"));
        let diags = program_diagnostics(&db, main);
        assert!(!diags.is_empty(), "the includer sees the edited language");
    });
}

/// Incremental parsing of a file with languages and `use`: every version
/// parses as from scratch (the `lang` blocks are lowered again, the `use`
/// markers of reused declarations are counted).
#[test]
fn incremental_parsing_of_mlang_agrees_with_parsing_from_scratch() {
    with_stack(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut text = std::fs::read_to_string(root.join("tests/run/mlang/scopes.mc")).unwrap();
        let path = Path::new("/virtual/scopes.mc");
        let mut db = Database::new(Vec::new());
        db.enable_incremental_parsing();
        let file = db.set_file_text(path, text.clone());
        let mut rng = Rng(0x1a29);
        for _ in 0..60 {
            let digits: Vec<usize> = text.match_indices(|c: char| c.is_ascii_digit()).map(|(i, _)| i).collect();
            let at = digits[rng.below(digits.len())];
            let digit = char::from(b'0' + rng.below(10) as u8);
            text.replace_range(at..at + 1, &digit.to_string());
            db.set_file_text(path, text.clone());
            assert_eq!(**pmx_driver::parse_file(&db, file), pmx_syntax::parse(&text, file.id(&db)));
            assert!(pmx_driver::desugared(&db, file).diagnostics.is_empty(), "{text}");
        }
    });
}

/// A small deterministic generator (xorshift), so failures reproduce.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

/// With incremental parsing on, every version of an edited file parses to
/// the same AST and syntax errors as a parse from scratch. Most edits keep
/// the program valid (as most keystrokes do), where the old tree is
/// reused; some break it, where the driver falls back to a fresh parse.
#[test]
fn incremental_parsing_agrees_with_parsing_from_scratch() {
    with_stack(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut text = std::fs::read_to_string(root.join("std/seq.mc")).unwrap();
        let path = Path::new("/virtual/seq.mc");
        let mut db = Database::new(Vec::new());
        db.enable_incremental_parsing();
        let file = db.set_file_text(path, text.clone());
        let mut rng = Rng(0x5eed);
        let mut reused = 0;
        // The text before an edit that may break the program: the step
        // after it restores it (as a user fixes a typo).
        let mut before_break: Option<String> = None;
        for step in 0..300 {
            if let Some(good) = before_break.take() {
                text = good;
                db.set_file_text(path, text.clone());
                assert_eq!(**pmx_driver::parse_file(&db, file), pmx_syntax::parse(&text, file.id(&db)));
            }
            let digits: Vec<usize> = text.match_indices(|c: char| c.is_ascii_digit()).map(|(i, _)| i).collect();
            let at = rng.below(text.len() + 1);
            let at = (0..=at).rev().find(|&i| text.is_char_boundary(i)).unwrap_or(0);
            match rng.below(6) {
                // Lengthen or shorten a number.
                0 | 1 if !digits.is_empty() => {
                    let d = digits[rng.below(digits.len())];
                    if rng.below(2) == 0 {
                        text.insert(d, '7');
                    } else if text[d + 1..].starts_with(|c: char| c.is_ascii_digit()) {
                        text.remove(d);
                    }
                }
                // Whitespace and comments anywhere outside a token.
                2 if text[..at].ends_with([' ', '\n']) => {
                    text.insert_str(at, if rng.below(2) == 0 { " " } else { "\n" })
                }
                3 if text[..at].ends_with('\n') => text.insert_str(at, "-- a comment\n"),
                // Anything: usually a syntax error.
                4 => {
                    before_break = Some(text.clone());
                    text.insert(at, ['(', 'x', ';', '"', 'é'][rng.below(5)]);
                }
                5 if at < text.len() => {
                    before_break = Some(text.clone());
                    text.remove(at);
                }
                _ => {}
            }
            db.set_file_text(path, text.clone());
            let incremental = pmx_driver::parse_file(&db, file);
            let fresh = pmx_syntax::parse(&text, file.id(&db));
            assert_eq!(**incremental, fresh, "step {step}:\n{text}");
            reused += usize::from(fresh.diagnostics.is_empty());
        }
        assert!(reused > 100, "too few valid versions ({reused}) to exercise tree reuse");
    });
}

/// An include that was not found is looked for again when files appear.
#[test]
fn a_missing_include_is_found_once_files_appear() {
    with_stack(|| {
        let dir = std::env::temp_dir().join(format!("pmx-appear-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let mut db = Database::new(Vec::new());
        let main = db.set_file_text(&dir.join("main.mc"), "include \"later.mc\"\nmexpr\ntriple 2\n".into());
        let before = program_diagnostics(&db, main).clone();
        assert!(before.iter().any(|d| d.message.contains("cannot find the file `later.mc`")), "{before:?}");
        std::fs::write(dir.join("later.mc"), "let triple = lam x : Int. muli x 3\n").unwrap();
        // Unreported, the new file is not seen (the disk is not watched).
        assert_eq!(program_diagnostics(&db, main), &before);
        db.files_appeared();
        let after = program_diagnostics(&db, main);
        assert!(after.is_empty(), "{after:?}");
        let _ = std::fs::remove_dir_all(&dir);
    });
}

/// Prefetching parses every file of a program ahead of the check (on
/// every core), and the check gives what it gives without it.
#[test]
fn prefetch_parses_every_included_file_ahead() {
    with_stack(|| {
        let text = "include \"string.mc\"\nmexpr\nprint (int2string 3)\n".to_string();
        let mut plain = Database::default();
        let root = plain.set_file_text(Path::new("/virtual/prefetch.mc"), text.clone());
        let expected = program_diagnostics(&plain, root).clone();

        let mut db = Database::default();
        let root = db.set_file_text(Path::new("/virtual/prefetch.mc"), text);
        pmx_driver::prefetch(&db, root);
        db.enable_log();
        assert_eq!(program_diagnostics(&db, root), &expected);
        let log = db.take_log();
        assert!(!log.iter().any(|q| q.starts_with("parse_file")), "parsed again: {log:?}");
        assert!(log.iter().any(|q| q.starts_with("check_file")), "{log:?}");
    });
}
