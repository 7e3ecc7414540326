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

fn report_error_node(lower: &mut Lower, node: Node) {
    let span = lower.span(node);
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
    } else if matches!(token, "lang" | "syn" | "sem" | "use") {
        lower.unsupported(
            span,
            "MLang (`lang`, `syn`, `sem`, `use`)",
            "pmx compiles MExpr; write the program without language fragments",
        );
        return;
    } else {
        format!("syntax error: unexpected `{shown}`")
    };
    lower.diags.push(Diagnostic::error(Code::SyntaxError, span, message).with_label("this could not be parsed"));
}
