//! Syntax errors from tree-sitter's ERROR and MISSING nodes. The tree is
//! walked iteratively, so any depth is safe here.

use crate::Lower;
use pmx_ast::Span;
use pmx_diagnostics::{Code, Diagnostic};
use tree_sitter::Node;

/// Reports each outermost ERROR node and each MISSING node once.
pub(crate) fn report_syntax_errors(lower: &mut Lower, root: Node) {
    if !root.has_error() {
        return;
    }
    let mut cursor = root.walk();
    loop {
        let node = cursor.node();
        let mut descend = node.has_error();
        if node.is_error() {
            report_error_node(lower, node);
            descend = false;
        } else if node.is_missing() {
            let span = lower.span(node);
            let kind = crate::kind(node);
            let what = if kind.chars().all(|c| c.is_alphanumeric() || c == '_') && !is_keyword_like(kind) {
                describe_kind(kind)
            } else {
                format!("`{kind}`")
            };
            lower.diags.push(
                Diagnostic::error(Code::MissingToken, span, format!("syntax error: missing {what}"))
                    .with_label(format!("expected {what} here")),
            );
        }
        if descend && cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return;
            }
        }
    }
}

fn is_keyword_like(kind: &str) -> bool {
    matches!(
        kind,
        "let"
            | "in"
            | "then"
            | "else"
            | "with"
            | "end"
            | "lam"
            | "if"
            | "match"
            | "case"
            | "type"
            | "con"
            | "utest"
            | "recursive"
            | "mexpr"
            | "include"
            | "never"
            | "using"
            | "external"
            | "switch"
            | "all"
            | "true"
            | "false"
    )
}

fn describe_kind(kind: &str) -> String {
    match kind {
        "var_ident" => "a variable name".into(),
        "con_ident" => "a constructor name".into(),
        "integer" => "an integer".into(),
        "string" => "a string".into(),
        other => other.replace('_', " "),
    }
}

/// The message of the error at a `let` without `in`.
const MISSING_IN: &str = "syntax error: this `let` has no `in`";

fn report_error_node(lower: &mut Lower, node: Node) {
    let span = lower.span(node);
    // A missing `in` is the most common cause, and tree-sitter reports it
    // far from where it is (see `missing_in.rs`). The first few errors
    // only: each looks at the whole file.
    if lower.diags.len() < 8 {
        if let Some(at) = crate::missing_in::unmatched_let(lower.text, node.start_byte()) {
            let at = at as u32;
            if !lower.diags.iter().any(|d| d.message == MISSING_IN && d.primary.span.start == at) {
                lower.diags.push(
                    Diagnostic::error(Code::SyntaxError, Span::new(span.file, at, at + 3), MISSING_IN)
                        .with_label("this `let` needs an `in` before the expression that uses it")
                        .with_note(
                            "inside an expression, write `let x = e in body`; only declarations before `mexpr` \
                             go without `in`",
                        ),
                );
            }
            return;
        }
    }
    // Name the first token that could not be placed.
    let mut first = node;
    while let Some(c) = first.child(0) {
        first = c;
    }
    let token = lower.text(first).trim();
    let shown: String = token.chars().take(30).collect();
    let rest = &lower.text[node.end_byte().min(lower.text.len())..];
    if node.end_byte() > node.start_byte()
        && rest.trim().is_empty()
        && node.parent().is_some_and(|p| p.parent().is_none())
    {
        // The parser gave up on everything from here to the end of the
        // file: an expression was left incomplete.
        let end = lower.text.trim_end().len() as u32;
        let eof = Span::new(span.file, end, end);
        lower.diags.push(
            Diagnostic::error(Code::SyntaxError, eof, "syntax error: unexpected end of file")
                .with_label("the file ends here")
                .with_secondary(
                    Span::new(span.file, span.start, first.end_byte() as u32),
                    "in the construct that starts here",
                )
                .with_note(
                    "something is incomplete: look for a missing `in`, `then`, `else`, `end` or closing bracket",
                ),
        );
        return;
    }
    let message = if token.is_empty() {
        "syntax error".to_string()
    } else if matches!(token, "syn" | "sem") {
        format!("syntax error: `{token}` declares part of a language: it belongs inside `lang ... end`")
    } else {
        format!("syntax error: unexpected `{shown}`")
    };
    lower.diags.push(Diagnostic::error(Code::SyntaxError, span, message).with_label("this could not be parsed"));
}
