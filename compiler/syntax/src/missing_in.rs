//! Finding the `let` whose `in` is missing.
//!
//! tree-sitter's error recovery sees a missing `in` only where the parse
//! finally fails: at the end of the file (`mexpr` bodies), or as a whole
//! top-level declaration that "could not be parsed". A scan of the tokens
//! of the top-level part around the error, pairing each `let` with its
//! `in` (and `recursive`, `utest`, `type`, `con`, `external` with theirs,
//! `switch` with its `end`), finds the `let` left without one, so the
//! error can point at it.

/// A token of interest: a keyword and where it starts.
struct Token<'a> {
    word: &'a str,
    at: usize,
    /// At the start of a line (the layout rule for declarations).
    column0: bool,
}

/// The words of `text` outside comments, strings and characters.
fn words(text: &str) -> Vec<Token<'_>> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c == b'-' && bytes.get(i + 1) == Some(&b'-') {
            while i < bytes.len() && bytes[i] != b'\n' {
                i += 1;
            }
        } else if c == b'/' && bytes.get(i + 1) == Some(&b'-') {
            // Block comments nest.
            let mut depth = 0;
            while i < bytes.len() {
                if bytes[i] == b'/' && bytes.get(i + 1) == Some(&b'-') {
                    depth += 1;
                    i += 2;
                } else if bytes[i] == b'-' && bytes.get(i + 1) == Some(&b'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if c == b'"' || c == b'\'' {
            i += 1;
            while i < bytes.len() && bytes[i] != c && bytes[i] != b'\n' {
                i += if bytes[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
        } else if c == b'#' {
            // `#var"..."` and the like: the quoted part is a name.
            i += 1;
            while i < bytes.len() && bytes[i].is_ascii_alphabetic() {
                i += 1;
            }
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_' || bytes[i] == b'\'') {
                i += 1;
            }
            let column0 = start == 0 || bytes[start - 1] == b'\n';
            out.push(Token { word: &text[start..i], at: start, column0 });
        } else {
            i += 1;
        }
    }
    out
}

const DECLARATIONS: [&str; 6] = ["let", "recursive", "type", "con", "utest", "external"];

#[derive(Clone, Copy, PartialEq)]
enum Frame {
    /// A `let` waiting for its `in`.
    Let(usize),
    /// A `recursive` group: its members' `let`s need no `in` of their own.
    Recursive,
    /// `utest`, `type`, `con` or `external` in an expression.
    Other,
    Switch,
}

/// The offset of a `let` in `text` that has no `in`, in the top-level part
/// that holds offset `at` (before `mexpr`, a declaration starting at
/// column 0 begins a part; from `mexpr` on, the rest of the file is one).
pub(crate) fn unmatched_let(text: &str, at: usize) -> Option<usize> {
    let tokens = words(text);
    let main = tokens.iter().position(|t| t.word == "mexpr").unwrap_or(tokens.len());
    let starts_part = |k: usize| k == main || (k < main && tokens[k].column0 && DECLARATIONS.contains(&tokens[k].word));
    let first = (0..tokens.len()).rev().find(|&k| starts_part(k) && tokens[k].at <= at)?;
    let last = if first >= main {
        tokens.len()
    } else {
        (first + 1..tokens.len()).find(|&k| starts_part(k)).unwrap_or(tokens.len())
    };
    let mut frames: Vec<Frame> = Vec::new();
    for (k, t) in tokens.iter().enumerate().take(last).skip(first) {
        // The declaration's own keyword needs no `in`.
        let declaration = k == first && first < main;
        match t.word {
            "let" if declaration || frames.last() == Some(&Frame::Recursive) => {}
            "let" => frames.push(Frame::Let(t.at)),
            "recursive" => frames.push(Frame::Recursive),
            "utest" | "type" | "con" | "external" if !declaration => frames.push(Frame::Other),
            "switch" => frames.push(Frame::Switch),
            "in" => {
                frames.pop();
            }
            "end" if matches!(frames.last(), Some(Frame::Switch | Frame::Recursive)) => {
                frames.pop();
            }
            _ => {}
        }
    }
    frames.into_iter().find_map(|f| match f {
        Frame::Let(at) => Some(at),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::unmatched_let;

    #[test]
    fn finds_the_let_without_in() {
        let text = "mexpr\nlet x = 1\nlet y = 2 in\nprint \"let\";\naddi x y\n";
        assert_eq!(unmatched_let(text, 6), text.find("let x"));
        let text = "let f = lam x.\n  let y = addi x 1\n  addi y 2\n\nlet g = lam z. f z\nmexpr\ng 1\n";
        assert_eq!(unmatched_let(text, 0), text.find("let y"));
    }

    #[test]
    fn complete_programs_have_none() {
        let text = "recursive let f = lam x. x\nlet g = lam y. y\nend\nlet h = lam z.\n  let a = 1 in\n  \
                    recursive let r = lam q. q in\n  utest 1 with 1 in\n  switch z case 1 then 2 case _ then 3 end\n\
                    mexpr\nlet b = 2 in -- let c = 3\nh b\n";
        for at in [0, text.find("let h").unwrap(), text.find("mexpr").unwrap()] {
            assert_eq!(unmatched_let(text, at), None, "at {at}");
        }
    }

    #[test]
    fn a_declaration_that_did_not_parse_still_defines_its_name() {
        let text = "let f = lam x.\n  let y = addi x 1\n  addi y 2\n\nlet g = lam z. f z\nmexpr\ng 1\n";
        let parsed = crate::parse(text, pmx_ast::FileId(0));
        let names: Vec<&str> = parsed
            .module
            .items
            .iter()
            .filter_map(|i| match i {
                pmx_ast::Item::Let(b) => Some(b.name.text.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(names, ["f", "g"]);
        assert_eq!(parsed.diagnostics.len(), 1, "{:?}", parsed.diagnostics);
    }
}
