//! The editor set-up files in `editors/` stay valid: the VS Code
//! extension's JSON parses, and Helix's highlight query is the grammar's
//! `queries/highlights.scm` with capture names renamed to Helix's scopes
//! (regenerate with `PMX_UPDATE_EDITORS=1 cargo test --test lsp_editors`).

use std::path::Path;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// nvim-treesitter capture names (the grammar's) to Helix scopes.
const HELIX_NAMES: &[(&str, &str)] = &[
    ("keyword.import", "keyword.control.import"),
    ("keyword.conditional", "keyword.control.conditional"),
    ("number.float", "constant.numeric.float"),
    ("number", "constant.numeric.integer"),
    ("character", "constant.character"),
    ("boolean", "constant.builtin.boolean"),
    ("function.call", "function"),
    ("type.definition", "type"),
    ("module", "namespace"),
    ("property", "variable.other.member"),
];

const HELIX_HEADER: &str = "; Generated from compiler/tree-sitter-mexpr/queries/highlights.scm with
; capture names renamed to Helix scopes (tests/lsp_editors.rs); edit the
; grammar's query, then run `PMX_UPDATE_EDITORS=1 cargo test --test lsp_editors`.

";

fn helix_query(query: &str) -> String {
    let mut out = String::from(HELIX_HEADER);
    let mut rest = query;
    while let Some(at) = rest.find('@') {
        out.push_str(&rest[..at + 1]);
        rest = &rest[at + 1..];
        let len = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '.' || c == '_')).unwrap_or(rest.len());
        let name = &rest[..len];
        out.push_str(HELIX_NAMES.iter().find(|(from, _)| *from == name).map(|(_, to)| *to).unwrap_or(name));
        rest = &rest[len..];
    }
    out.push_str(rest);
    out
}

#[test]
fn helix_highlights_follow_the_grammar_query() {
    let expected = helix_query(tree_sitter_mexpr::HIGHLIGHTS_QUERY);
    let path = root().join("editors/helix/queries/mexpr/highlights.scm");
    if std::env::var_os("PMX_UPDATE_EDITORS").is_some() {
        std::fs::write(&path, &expected).unwrap();
    }
    let actual = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        actual == expected,
        "{} is out of date: run `PMX_UPDATE_EDITORS=1 cargo test --test lsp_editors`",
        path.display()
    );
    // It still compiles against the grammar.
    let language: tree_sitter::Language = tree_sitter_mexpr::LANGUAGE.into();
    let query = tree_sitter::Query::new(&language, &actual).expect("the Helix query compiles");
    assert!(query.capture_names().contains(&"constant.numeric.integer"));
}

#[test]
fn vscode_extension_files_are_valid() {
    let dir = root().join("editors/vscode");
    for f in ["package.json", "language-configuration.json", "syntaxes/mexpr.tmLanguage.json"] {
        let text = std::fs::read_to_string(dir.join(f)).unwrap();
        serde_json::from_str::<serde_json::Value>(&text).unwrap_or_else(|e| panic!("{f}: {e}"));
    }
    let package: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("package.json")).unwrap()).unwrap();
    assert_eq!(package["main"], "./extension.js");
    assert_eq!(package["contributes"]["languages"][0]["extensions"][0], ".mc");
    let extension = std::fs::read_to_string(dir.join("extension.js")).unwrap();
    assert!(extension.contains("args: ['lsp']"));
}
