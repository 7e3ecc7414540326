//! Futhark identifiers for pmx's names: MExpr allows characters and
//! names that Futhark does not (`x'`, `#var"..."`, `map`, `loop`), and
//! the generated code refers to Futhark's prelude by name, so a name that
//! would shadow one of those gets a suffix.

use rustc_hash::FxHashSet;

/// Futhark's keywords and the prelude names generated code uses.
const RESERVED: &[&str] = &[
    "assert",
    "case",
    "def",
    "do",
    "else",
    "entry",
    "false",
    "for",
    "if",
    "import",
    "in",
    "include",
    "let",
    "local",
    "loop",
    "match",
    "module",
    "open",
    "then",
    "true",
    "type",
    "val",
    "while",
    "with",
    "copy",
    "flatten",
    "head",
    "iota",
    "length",
    "map",
    "map2",
    "null",
    "reduce",
    "replicate",
    "reverse",
    "tail",
    "i8",
    "i16",
    "i32",
    "i64",
    "u8",
    "u16",
    "u32",
    "u64",
    "f16",
    "f32",
    "f64",
    "bool",
    "and",
    "or",
    "not",
    "zip",
    "unzip",
    "scan",
    "filter",
    "concat",
    "rotate",
    "transpose",
    "indices",
    "tabulate",
    "all",
    "opaque",
    // Bound by the expressions the generator writes (`body::fit`).
    "fitted",
    "any",
    "id",
    "const",
];

/// `s` made a valid Futhark identifier (letters, digits, `_`; starting
/// with a letter; not reserved).
pub fn sanitize(s: &str) -> String {
    let mut out: String = s.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).collect();
    if !out.starts_with(|c: char| c.is_ascii_alphabetic()) {
        out.insert(0, 'v');
    }
    if RESERVED.contains(&out.as_str()) {
        out.push('_');
    }
    out
}

/// Distinct identifiers within one namespace.
#[derive(Default)]
pub struct Namer {
    used: FxHashSet<String>,
}

impl Namer {
    /// A fresh identifier close to `s`.
    pub fn fresh(&mut self, s: &str) -> String {
        let base = sanitize(s);
        let mut name = base.clone();
        let mut k = 1;
        while !self.used.insert(name.clone()) {
            name = format!("{base}_{k}");
            k += 1;
        }
        name
    }

    /// Marks `s` taken (names of another namespace that must not be
    /// shadowed).
    pub fn reserve(&mut self, s: &str) {
        self.used.insert(s.to_string());
    }
}

/// A record label as a Futhark field name.
pub fn label(l: &str) -> String {
    if l.chars().next().is_some_and(|c| c.is_ascii_lowercase())
        && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !RESERVED.contains(&l)
    {
        l.to_string()
    } else {
        // Distinct labels stay distinct: every byte is kept, in hex where
        // it is not a plain character.
        let mut out = String::from("l_");
        for b in l.bytes() {
            if b.is_ascii_alphanumeric() {
                out.push(b as char);
            } else {
                out.push_str(&format!("_{b:02x}"));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_valid_and_distinct() {
        let mut n = Namer::default();
        assert_eq!(n.fresh("x'"), "x_");
        assert_eq!(n.fresh("x_"), "x__1");
        assert_eq!(n.fresh("map"), "map_");
        assert_eq!(n.fresh("_t"), "v_t");
        assert_eq!(label("w"), "w");
        assert_eq!(label("Big"), "l_Big");
        assert_ne!(label("a b"), label("a_b"));
    }
}
