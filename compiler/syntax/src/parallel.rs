//! Parsing a large file in parts, on several threads.
//!
//! tree-sitter parses one text on one thread, and it is most of the front
//! end's time. A large file is cut at column-0 top-level declarations (see
//! [`crate::split`]) into one part per available core; each part is parsed
//! as an included range of the whole text (so nodes keep their offsets in
//! the file) and lowered on its own thread, and the parts' modules are
//! joined in order. The result is the same as parsing the file whole: if any
//! part has a diagnostic at all, the file is parsed again as one (error
//! recovery near a cut could differ, and every diagnostic must be the one a
//! whole parse gives).

use crate::reparse::point_at;
use crate::{lower_tree, split, Parsed};
use pmx_ast::{FileId, Module};
use tree_sitter::Range;

/// Below this size a file is parsed whole: starting threads would cost
/// more than it saves.
const MIN_PART_BYTES: usize = 64 * 1024;

/// The stack of each part's thread: lowering recurses as deep as the
/// program nests, up to [`crate::max_depth`] levels (reserved, not used).
fn part_stack() -> usize {
    crate::max_depth() * crate::STACK_PER_LEVEL
}

/// The file parsed in parts, or `None` if it is too small to cut, cannot
/// be cut, or a part had a diagnostic.
pub fn parse_in_parts(text: &str, file: FileId) -> Option<Parsed> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let parts = threads.min(text.len() / MIN_PART_BYTES);
    if parts < 2 {
        return None;
    }
    let bounds = part_bounds(text, parts)?;
    let results: Vec<Option<Parsed>> = std::thread::scope(|s| {
        let handles: Vec<_> = bounds[1..]
            .iter()
            .map(|&(start, end)| {
                std::thread::Builder::new()
                    .name("pmx-parse-part".into())
                    .stack_size(part_stack())
                    .spawn_scoped(s, move || parse_part(text, file, start, end))
            })
            .collect();
        let first = parse_part(text, file, bounds[0].0, bounds[0].1);
        let mut all = vec![first];
        for h in handles {
            all.push(h.ok().and_then(|h| h.join().ok()).flatten());
        }
        all
    });
    let mut module = Module::default();
    let (mut langs, mut uses) = (Vec::new(), 0);
    for part in results {
        let part = part?;
        if !part.diagnostics.is_empty() {
            return None;
        }
        for mut lang in part.langs {
            lang.at += module.items.len();
            langs.push(lang);
        }
        uses += part.uses;
        module.includes.extend(part.module.includes);
        module.items.extend(part.module.items);
        if part.module.main.is_some() {
            module.main = part.module.main;
        }
    }
    Some(Parsed { module, diagnostics: Vec::new(), langs, uses })
}

/// `parts` ranges covering the text, each starting at a cut point (the
/// first at 0), as even in size as the cut points allow.
fn part_bounds(text: &str, parts: usize) -> Option<Vec<(usize, usize)>> {
    let cuts = split::cut_points(text);
    let mut starts = vec![0];
    for k in 1..parts {
        let target = text.len() * k / parts;
        let next = cuts.partition_point(|&c| c < target);
        let cut = *cuts.get(next)?;
        if cut > *starts.last()? {
            starts.push(cut);
        }
    }
    if starts.len() < 2 {
        return None;
    }
    let ends = starts[1..].iter().copied().chain(std::iter::once(text.len()));
    Some(starts.iter().copied().zip(ends).collect())
}

/// Parses and lowers the bytes `start..end` of the text.
fn parse_part(text: &str, file: FileId, start: usize, end: usize) -> Option<Parsed> {
    let mut parser = crate::parser()?;
    let range =
        Range { start_byte: start, end_byte: end, start_point: point_at(text, start), end_point: point_at(text, end) };
    parser.set_included_ranges(&[range]).ok()?;
    let tree = parser.parse(text, None)?;
    Some(lower_tree(&tree, text, file))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse_whole;

    /// The standard library's files, one after another, repeated until the
    /// text is large enough to be cut; then an `mexpr` section.
    fn large_program() -> String {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../std");
        let mut names: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().map(|e| e.path()).collect();
        names.retain(|p| p.extension().is_some_and(|e| e == "mc"));
        names.sort();
        let mut text = String::new();
        while text.len() < 4 * MIN_PART_BYTES {
            for p in &names {
                text.push_str(&std::fs::read_to_string(p).unwrap());
                text.push('\n');
            }
        }
        text.push_str("mexpr\nlet x = 1 in\nlet y = 2 in\naddi x y\n");
        text
    }

    fn cores() -> usize {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    }

    #[test]
    fn parts_give_the_same_module_as_the_whole_file() {
        let text = large_program();
        let whole = parse_whole(&text, FileId(3));
        assert!(whole.diagnostics.is_empty(), "{:?}", whole.diagnostics.first());
        match parse_in_parts(&text, FileId(3)) {
            Some(parts) => assert_eq!(parts, whole),
            None => assert_eq!(cores(), 1, "a large valid file with cut points is parsed in parts"),
        }
        assert_eq!(crate::parse(&text, FileId(3)), whole);
    }

    #[test]
    fn a_syntax_error_in_any_part_means_a_whole_parse() {
        let mut text = large_program();
        let at = text.len() * 3 / 4;
        let at = text[at..].find("\nlet ").map_or(at, |i| at + i + 1);
        text.insert_str(at, "let broken = (\n");
        assert!(parse_in_parts(&text, FileId(0)).is_none());
        let parsed = crate::parse(&text, FileId(0));
        assert_eq!(parsed, parse_whole(&text, FileId(0)));
        assert!(!parsed.diagnostics.is_empty());
    }

    /// Languages among the declarations: each part's `lang` blocks keep
    /// their place among the items of the whole.
    #[test]
    fn parts_keep_languages_in_place() {
        let mut text = String::new();
        let mut n = 0;
        while text.len() < 4 * MIN_PART_BYTES {
            text.push_str(&format!(
                "let f{n} = lam x. addi x {n}\nlang L{n}\n  syn T{n} =\n  | K{n} Int\n  sem g{n} =\n  | K{n} x -> use L0 in f{n} x\nend\n"
            ));
            n += 1;
        }
        text.push_str("mexpr\nuse L1 in g1 (K1 2)\n");
        let whole = parse_whole(&text, FileId(3));
        assert!(whole.diagnostics.is_empty(), "{:?}", whole.diagnostics.first());
        assert_eq!(whole.langs.len(), n);
        assert_eq!(whole.langs[n - 1].at, n, "after the last `let`");
        match parse_in_parts(&text, FileId(3)) {
            Some(parts) => assert_eq!(parts, whole),
            None => assert_eq!(cores(), 1, "a large valid file with cut points is parsed in parts"),
        }
    }

    /// Edits that touch the lexical rules the cut points depend on
    /// (comments, strings, characters, column-0 keywords) still give the
    /// result of a whole parse.
    #[test]
    fn edits_near_cut_points_give_the_whole_parse() {
        let base = large_program();
        let cuts = split::cut_points(&base);
        let inserts = ["/- ", "-/", "\"", "'", "-- ", "\nlet", "\nmexpr\n", "(", " in x"];
        for (k, ins) in inserts.iter().enumerate() {
            let mut text = base.clone();
            // Just before a cut point near the middle of the file.
            let at = cuts[cuts.len() / 2 + k];
            text.insert_str(at, ins);
            assert_eq!(crate::parse(&text, FileId(0)), parse_whole(&text, FileId(0)), "inserting {ins:?}");
        }
    }
}
