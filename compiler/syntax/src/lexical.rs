//! Decoding literal tokens: integers, floats, characters, strings and
//! escaped identifiers, with the lexical rules of Miking's boot lexer.

/// Decodes the escapes `\' \" \? \\ \a \b \f \n \r \t \v` of a string or
/// character body. On a bad escape, returns its byte offset in `body`.
pub fn unescape(body: &str) -> Result<String, (usize, String)> {
    let mut out = String::with_capacity(body.len());
    let mut chars = body.char_indices();
    while let Some((i, c)) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some((_, e)) = chars.next() else {
            return Err((i, "a backslash must be followed by an escape character".into()));
        };
        out.push(match e {
            '\'' => '\'',
            '"' => '"',
            '?' => '?',
            '\\' => '\\',
            'a' => '\x07',
            'b' => '\x08',
            'f' => '\x0c',
            'n' => '\n',
            'r' => '\r',
            't' => '\t',
            'v' => '\x0b',
            other => {
                return Err((
                    i,
                    format!(
                        "unknown escape `\\{other}`; the escapes are \\' \\\" \\? \\\\ \\a \\b \\f \\n \\r \\t \\v"
                    ),
                ))
            }
        });
    }
    Ok(out)
}

/// The text between the quotes of `"..."`, `'...'` or `#var"..."`.
pub fn quoted_body(token: &str) -> &str {
    let (open, close) = match token.as_bytes().last() {
        Some(b'\'') => ('\'', '\''),
        _ => ('"', '"'),
    };
    let start = token.find(open).map_or(0, |i| i + 1);
    let end = token.rfind(close).filter(|&e| e >= start).unwrap_or(token.len());
    &token[start..end]
}

/// An integer literal (`-?[0-9]+`) as a 64-bit integer.
pub fn int(token: &str) -> Result<i64, String> {
    token.parse::<i64>().map_err(|_| format!("the integer `{token}` does not fit in 64 bits"))
}

/// A float literal (`1.`, `3.14`, `1e6`, `5e-05`).
pub fn float(token: &str) -> Result<f64, String> {
    token.parse::<f64>().map_err(|_| format!("`{token}` is not a valid float"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes() {
        assert_eq!(unescape(r#"a\nb\t\"\\\'\?"#).unwrap(), "a\nb\t\"\\'?");
        assert!(unescape(r"\q").is_err());
        assert_eq!(quoted_body("#var\"x y\""), "x y");
        assert_eq!(quoted_body("'\\n'"), "\\n");
    }

    #[test]
    fn numbers() {
        assert_eq!(int("-3"), Ok(-3));
        assert!(int("99999999999999999999").is_err());
        assert_eq!(float("1."), Ok(1.0));
        assert_eq!(float("5e-05"), Ok(5e-5));
        assert_eq!(float("-2.5"), Ok(-2.5));
    }
}
