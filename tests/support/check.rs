//! The `check(src)` harness of the compiler crates' own tests
//! (`compiler/types/tests/check`, `compiler/accelerate/tests/check`,
//! which include this file with `#[path]`, as `tests/check.rs` does for
//! its inferred types): a program given as text is
//! run through the front end and what a pass found is rendered as plain
//! text, diagnostics with `line:column` positions, for an inline snapshot
//! beside the source (`insta::assert_snapshot!(check(...), @"...")`).

#![allow(dead_code)]

use pmx_diagnostics::{Diagnostic, LineIndex, Severity, Span};
use pmx_driver::{Database, Db, SourceFile};
use std::path::Path;

/// The path the program is given under (no file is read: a program that
/// includes the standard library reads it from disk as usual).
const PATH: &str = "/check/test.mc";

/// Gives `f` a database holding `src` as the only file of a program, on
/// the compiler's big stack.
pub fn with_program<T: Send>(src: &str, f: impl FnOnce(&Database, SourceFile) -> T + Send) -> T {
    let src = src.to_string();
    pmx_driver::with_stack(move || {
        let mut db = Database::default();
        let file = db.set_file_text(Path::new(PATH), src);
        f(&db, file)
    })
}

/// A span as `line:col-line:col` (one-based, columns in characters), or
/// `line:col` when empty, with the file's name when it is not the program.
pub fn at(db: &Database, span: Span) -> String {
    if span.is_builtin() {
        return "builtin".to_string();
    }
    let Some(file) = db.file(span.file) else { return format!("{span:?}") };
    let text = file.text(db);
    let index = LineIndex::new(text);
    let pos = |offset| {
        let lc = index.line_col(text, offset);
        format!("{}:{}", lc.line + 1, lc.col + 1)
    };
    let range = if span.start == span.end { pos(span.start) } else { format!("{}-{}", pos(span.start), pos(span.end)) };
    let path = file.path(db);
    if path == Path::new(PATH) {
        range
    } else {
        format!("{}:{range}", path.file_name().unwrap_or_default().to_string_lossy())
    }
}

/// One diagnostic a line (`error[E0301] 1:16-1:18: message`), then its
/// labels and notes, indented.
pub fn diagnostics(db: &Database, diags: &[Diagnostic]) -> String {
    let mut out = String::new();
    for d in diags {
        let severity = match d.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "note",
        };
        out.push_str(&format!("{severity}[{}] {}: {}\n", d.code, at(db, d.primary.span), d.message));
        if !d.primary.message.is_empty() {
            out.push_str(&format!("  {}: {}\n", at(db, d.primary.span), d.primary.message));
        }
        for l in &d.secondary {
            out.push_str(&format!("  {}: {}\n", at(db, l.span), l.message));
        }
        for n in &d.notes {
            out.push_str(&format!("  = {n}\n"));
        }
    }
    out
}

/// The inferred type of each top-level binding of `file`, one a line, and
/// the `mexpr` body's.
pub fn top_level_types(db: &Database, file: SourceFile) -> String {
    let checked = pmx_driver::check_file(db, file);
    let mut out = String::new();
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
}
