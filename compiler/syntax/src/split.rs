//! Where a file can be cut into parts that parse independently.
//!
//! A top-level keyword (`let`, `recursive`, `type`, `con`, `utest`,
//! `external`) at column 0 before the `mexpr` section always starts a new
//! declaration: the grammar's column-0 rule (see the external scanner)
//! makes it a syntax error anywhere else. So before such a keyword the
//! parser is between declarations, and the text on either side parses the
//! same alone as together. The scan below finds those keywords outside
//! comments, strings and character literals, with the lexical rules of the
//! grammar. It may only miss cut points, never invent one where the parser
//! would not be between declarations: parts that come back with any
//! diagnostic are parsed again as one file by the caller anyway.

/// The byte offsets (each of the newline before a column-0 top-level
/// keyword) where `text` may be cut, in increasing order.
pub fn cut_points(text: &str) -> Vec<usize> {
    let b = text.as_bytes();
    // Nothing at or after the first `mexpr` (even in a comment): the
    // column-0 rule is off in the mexpr section.
    let limit = text.find("mexpr").unwrap_or(b.len());
    let mut cuts = Vec::new();
    let mut i = 0;
    while i < limit {
        match b[i] {
            b'\n' => {
                if starts_top_keyword(&b[i + 1..]) {
                    cuts.push(i);
                }
                i += 1;
            }
            b'-' if b.get(i + 1) == Some(&b'-') => i = skip_line(b, i),
            b'/' if b.get(i + 1) == Some(&b'-') => i = skip_block_comment(b, i + 2),
            b'"' => i = skip_string(b, i + 1),
            b'\'' => i = skip_char(text, i),
            _ => i += 1,
        }
    }
    cuts.retain(|&c| c < limit);
    cuts
}

fn starts_top_keyword(rest: &[u8]) -> bool {
    ["let", "recursive", "type", "con", "utest", "external"].iter().any(|k| {
        rest.starts_with(k.as_bytes()) && !rest.get(k.len()).is_some_and(|&c| c.is_ascii_alphanumeric() || c == b'_')
    })
}

/// Past the end of the line (the newline itself is left to the caller).
fn skip_line(b: &[u8], i: usize) -> usize {
    b[i..].iter().position(|&c| c == b'\n').map_or(b.len(), |n| i + n)
}

/// Past a nested `/- ... -/` whose opening was before `i`; an unterminated
/// comment runs to the end, as in the scanner.
fn skip_block_comment(b: &[u8], mut i: usize) -> usize {
    let mut depth = 1;
    while i < b.len() && depth > 0 {
        if b[i] == b'/' && b.get(i + 1) == Some(&b'-') {
            depth += 1;
            i += 2;
        } else if b[i] == b'-' && b.get(i + 1) == Some(&b'/') {
            depth -= 1;
            i += 2;
        } else {
            i += 1;
        }
    }
    i
}

/// Past a string whose opening quote was before `i` (escapes may hide a
/// quote or a newline).
fn skip_string(b: &[u8], mut i: usize) -> usize {
    while i < b.len() {
        match b[i] {
            b'"' => return i + 1,
            b'\\' => i += 2,
            _ => i += 1,
        }
    }
    b.len()
}

/// Past a character literal `'c'` or `'\c'` at `i`; a lone quote is
/// skipped alone (it is a syntax error, found by the parse).
fn skip_char(text: &str, i: usize) -> usize {
    let rest = &text[i + 1..];
    let mut chars = rest.char_indices();
    let after = match chars.next() {
        Some((_, '\\')) => chars.next().map(|(j, c)| j + c.len_utf8()),
        Some((_, '\n')) | None => None,
        Some((_, c)) => Some(c.len_utf8()),
    };
    match after {
        Some(n) if rest[n..].starts_with('\'') => i + 1 + n + 1,
        _ => i + 1,
    }
}

#[cfg(test)]
mod tests {
    use super::cut_points;

    #[test]
    fn cuts_before_column_0_keywords() {
        let text = "let a = 1\nlet b = 2\n  let c = 3 in c\ntype T\nletter\nmexpr\nlet d = 4 in d";
        let cuts = cut_points(text);
        let at: Vec<&str> = cuts.iter().map(|&c| &text[c + 1..c + 5]).collect();
        assert_eq!(at, ["let ", "type"]);
    }

    #[test]
    fn skips_comments_strings_and_chars() {
        let text = "let a = \"x\nlet b\" \n/- /- -/\nlet c -/\n-- \"\nlet d = '\"'\nlet e = '\\''\nlet f = 1";
        let cuts = cut_points(text);
        let at: Vec<&str> = cuts.iter().map(|&c| &text[c + 1..c + 6]).collect();
        assert_eq!(at, ["let d", "let e", "let f"]);
    }
}
