//! Semantic tokens from the tree-sitter grammar's `highlights.scm`, so the
//! editor colours a file the same way with or without tree-sitter.

use crate::convert::Text;
use std::sync::LazyLock;
use tower_lsp_server::ls_types as lsp;
use tree_sitter::{Query, QueryCursor, StreamingIterator, Tree};

/// The token types, in legend order.
const TYPES: &[lsp::SemanticTokenType] = &[
    lsp::SemanticTokenType::COMMENT,
    lsp::SemanticTokenType::KEYWORD,
    lsp::SemanticTokenType::NUMBER,
    lsp::SemanticTokenType::STRING,
    lsp::SemanticTokenType::FUNCTION,
    lsp::SemanticTokenType::PARAMETER,
    lsp::SemanticTokenType::VARIABLE,
    lsp::SemanticTokenType::TYPE,
    lsp::SemanticTokenType::TYPE_PARAMETER,
    lsp::SemanticTokenType::ENUM_MEMBER,
    lsp::SemanticTokenType::PROPERTY,
    lsp::SemanticTokenType::OPERATOR,
    lsp::SemanticTokenType::NAMESPACE,
];

const MODIFIERS: &[lsp::SemanticTokenModifier] =
    &[lsp::SemanticTokenModifier::DEFAULT_LIBRARY, lsp::SemanticTokenModifier::DEFINITION];

const DEFAULT_LIBRARY: u32 = 1;
const DEFINITION: u32 = 2;

pub fn legend() -> lsp::SemanticTokensLegend {
    lsp::SemanticTokensLegend { token_types: TYPES.to_vec(), token_modifiers: MODIFIERS.to_vec() }
}

const VARIABLE: u32 = 6;

/// A capture name of `highlights.scm` as a token type and modifiers;
/// None for punctuation.
fn classify(capture: &str) -> Option<(u32, u32)> {
    Some(match capture {
        "comment" => (0, 0),
        "keyword" | "keyword.function" | "keyword.import" | "keyword.conditional" => (1, 0),
        "boolean" | "constant.builtin" => (1, 0),
        "number" | "number.float" => (2, 0),
        "string" | "character" => (3, 0),
        "function.builtin" => (4, DEFAULT_LIBRARY),
        "function" => (4, DEFINITION),
        "function.call" => (4, 0),
        "variable.parameter" => (5, DEFINITION),
        "variable" | "variable.builtin" => (VARIABLE, 0),
        "type.builtin" => (7, DEFAULT_LIBRARY),
        "type" => (7, 0),
        "type.definition" => (7, DEFINITION),
        "type.parameter" => (8, 0),
        "constructor" => (9, 0),
        "property" => (10, 0),
        "operator" => (11, 0),
        "module" => (12, 0),
        _ => return None,
    })
}

struct Highlights {
    query: Query,
    /// Per capture index: its token type and modifiers.
    kinds: Vec<Option<(u32, u32)>>,
}

static HIGHLIGHTS: LazyLock<Option<Highlights>> = LazyLock::new(|| {
    let language: tree_sitter::Language = tree_sitter_mexpr::LANGUAGE.into();
    let query = Query::new(&language, tree_sitter_mexpr::HIGHLIGHTS_QUERY).ok()?;
    let kinds = query.capture_names().iter().map(|n| classify(n)).collect();
    Some(Highlights { query, kinds })
});

/// The semantic tokens of a text (or of the part in a byte range),
/// encoded relative to each other.
pub fn semantic_tokens(text: &str, tree: &Tree, range: Option<std::ops::Range<usize>>) -> Vec<lsp::SemanticToken> {
    let Some(h) = HIGHLIGHTS.as_ref() else { return Vec::new() };
    // (start, end, type, modifiers)
    let mut spans: Vec<(usize, usize, u32, u32)> = Vec::new();
    let mut cursor = QueryCursor::new();
    if let Some(r) = &range {
        cursor.set_byte_range(r.clone());
    }
    let mut matches = cursor.matches(&h.query, tree.root_node(), text.as_bytes());
    while let Some(m) = matches.next() {
        for c in m.captures() {
            if let Some(Some((ty, mods))) = h.kinds.get(c.index as usize) {
                let r = c.node.byte_range();
                let wanted = range.as_ref().is_none_or(|w| r.start < w.end && w.start < r.end);
                if r.start < r.end && wanted {
                    spans.push((r.start, r.end, *ty, *mods));
                }
            }
        }
    }
    // Outer captures first; an inner (or equal but more specific) capture
    // replaces the one it lies in, so tokens never overlap.
    spans.sort_by_key(|&(s, e, _, _)| (s, std::cmp::Reverse(e)));
    let mut flat: Vec<(usize, usize, u32, u32)> = Vec::with_capacity(spans.len());
    for sp in spans {
        match flat.last_mut() {
            Some(last) if sp.0 < last.1 => {
                let same = sp.0 == last.0 && sp.1 == last.1;
                if (!same || last.2 == VARIABLE) && sp.1 <= last.1 {
                    *last = sp;
                }
            }
            _ => flat.push(sp),
        }
    }
    encode(&Text::new(text), &flat)
}

/// Tokens as the protocol encodes them: one per line of each span (a
/// block comment or string may cover several), UTF-16 columns.
fn encode(t: &Text, spans: &[(usize, usize, u32, u32)]) -> Vec<lsp::SemanticToken> {
    let mut out = Vec::with_capacity(spans.len());
    let (mut prev_line, mut prev_col) = (0u32, 0u32);
    let mut push = |line: u32, col: u32, len: u32, ty: u32, mods: u32| {
        if len == 0 {
            return;
        }
        let delta_line = line - prev_line;
        let delta_start = if delta_line == 0 { col - prev_col } else { col };
        out.push(lsp::SemanticToken {
            delta_line,
            delta_start,
            length: len,
            token_type: ty,
            token_modifiers_bitset: mods,
        });
        prev_line = line;
        prev_col = col;
    };
    for &(s, e, ty, mods) in spans {
        let a = t.position(s as u32);
        let b = t.position(e as u32);
        if a.line == b.line {
            push(a.line, a.character, b.character - a.character, ty, mods);
            continue;
        }
        for line in a.line..=b.line {
            let start = if line == a.line { a.character } else { 0 };
            let end = if line == b.line {
                b.character
            } else {
                // The end of the line, before its newline.
                let next = t.index.line_start(line + 1);
                t.position(next.saturating_sub(1)).character
            };
            push(line, start, end.saturating_sub(start), ty, mods);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_do_not_overlap_and_cover_keywords() {
        let src = "/- a\n  comment -/\nlet f = lam x. addi x 1\nmexpr\nlet s = \"é\" in accelerate (map f [1])\n";
        let tree = pmx_syntax::parse_tree(src).unwrap();
        let toks = semantic_tokens(src, &tree, None);
        assert!(!toks.is_empty());
        let (mut line, mut col, mut end) = (0u32, 0u32, 0u32);
        let mut kinds = Vec::new();
        for t in &toks {
            if t.delta_line > 0 {
                line += t.delta_line;
                col = t.delta_start;
                end = 0;
            } else {
                col += t.delta_start;
            }
            assert!(col >= end, "overlap at {line}:{col}");
            end = col + t.length;
            kinds.push((line, col, t.length, t.token_type));
        }
        // The block comment is split per line.
        assert_eq!(kinds[0], (0, 0, 4, 0));
        assert_eq!(kinds[1], (1, 0, 12, 0));
        // `let` is a keyword, `f` a function definition.
        assert!(kinds.contains(&(2, 0, 3, 1)));
        assert!(kinds.contains(&(2, 4, 1, 4)));
        // `accelerate` is a built-in function, after a one-unit `é`.
        assert!(kinds.contains(&(4, 15, 10, 4)));
        // A range: only the tokens of the third line, positions unchanged.
        let line = src.find("let f").unwrap();
        let part = semantic_tokens(src, &tree, Some(line..line + 10));
        assert_eq!((part[0].delta_line, part[0].delta_start, part[0].length), (2, 0, 3));
        assert!(part.len() < toks.len());
    }
}
