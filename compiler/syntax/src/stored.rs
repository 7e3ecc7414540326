//! A parse as bytes and back, for the driver's parse cache: what
//! [`crate::parse`] gave, read back exactly (the same tree, spans and
//! diagnostics), its spans renumbered to the file's number in the run
//! that reads it.
//!
//! The format: a magic line with the version, the number the file had
//! when stored, the depth the tree was checked against, then the
//! [`Parsed`] in postcard (serde). serde's code recurses once or more per
//! level of the tree, with frames larger than the lowering's: a tree
//! deeper than [`levels`] (a generated program, a long `;` chain) is not
//! stored, so decoding never needs more stack than parsing did.

use crate::Parsed;
use pmx_ast::mlang::{LangDecl, SemDecl, SynDecl};
use pmx_ast::{visit, Expr, ExprKind, FileId, Item, Pat, PatKind, TypeExpr, TypeExprKind};

/// The format's version: change it when the AST's types change.
const MAGIC: &[u8] = b"pmx parse 1\n";

/// The depth of tree stored and read here: 64 KiB of stack per level (the
/// lowering takes [`crate::STACK_PER_LEVEL`]), ample for serde's frames
/// even in a debug build.
pub fn levels() -> usize {
    crate::max_depth() * crate::STACK_PER_LEVEL / (64 << 10)
}

/// The stored form of `parsed`, the parse of file `file`; `None` when it
/// is not stored (too deep, or not a parse: typed or resolved).
pub fn encode(parsed: &Parsed, file: FileId) -> Option<Vec<u8>> {
    let levels = levels();
    if !within(parsed, levels) {
        return None;
    }
    let mut out = MAGIC.to_vec();
    out.extend(file.0.to_le_bytes());
    out.extend((levels as u32).to_le_bytes());
    postcard::to_extend(parsed, out).ok()
}

/// The parse stored in `bytes`, its spans in file `file`; `None` unless
/// `bytes` is a whole entry of this format, not deeper than this thread's
/// stack allows.
pub fn decode(bytes: &[u8], file: FileId) -> Option<Parsed> {
    let rest = bytes.strip_prefix(MAGIC)?;
    let (stored, rest) = rest.split_first_chunk::<4>()?;
    let (depth, rest) = rest.split_first_chunk::<4>()?;
    if u32::from_le_bytes(*depth) as usize > levels() {
        return None;
    }
    let stored = FileId(u32::from_le_bytes(*stored));
    match FileId::renumbering(stored, file, || postcard::take_from_bytes::<Parsed>(rest)) {
        Ok((parsed, [])) => Some(parsed),
        _ => None,
    }
}

/// Whether no path of nested nodes (expressions, patterns, types) in
/// `parsed` is longer than `levels`; stops at the first that is.
fn within(parsed: &Parsed, levels: usize) -> bool {
    let items = parsed.module.items.iter().all(|item| match item {
        Item::Let(b) => opt_ty(b.annotation.as_deref(), levels) && expr(&b.value, levels),
        Item::RecLets(bs, _) => bs.iter().all(|b| opt_ty(b.annotation.as_deref(), levels) && expr(&b.value, levels)),
        Item::Type(d) => opt_ty(d.definition.as_ref(), levels),
        Item::Con(d) => opt_ty(d.annotation.as_ref(), levels),
        Item::External(d) => ty(&d.annotation, levels),
        Item::Utest(u) => [Some(&u.test), Some(&u.expected), u.using.as_ref(), u.on_fail.as_ref()]
            .into_iter()
            .flatten()
            .all(|e| expr(e, levels)),
    });
    let langs = parsed.langs.iter().flat_map(|l| &l.decls).all(|d| match d {
        LangDecl::Syn(SynDecl { cons, .. }) => cons.iter().all(|c| opt_ty(c.carried.as_ref(), levels)),
        LangDecl::Sem(SemDecl { signature, params, cases, .. }) => {
            opt_ty(signature.as_ref(), levels)
                && params.iter().flatten().all(|p| opt_ty(p.annotation.as_ref(), levels))
                && cases.iter().all(|c| pat(&c.pattern, levels) && expr(&c.body, levels))
        }
        LangDecl::Type(d) => opt_ty(d.definition.as_ref(), levels),
        LangDecl::Con(d) => opt_ty(d.annotation.as_ref(), levels),
    });
    items && langs && parsed.module.main.as_ref().is_none_or(|e| expr(e, levels))
}

fn expr(e: &Expr, levels: usize) -> bool {
    let Some(left) = levels.checked_sub(1) else { return false };
    let mut ok = true;
    visit::children(e, &mut |c| ok = ok && expr(c, left));
    ok && match &e.kind {
        ExprKind::Lam { annotation, .. } => opt_ty(annotation.as_deref(), left),
        ExprKind::Let(b, _) => opt_ty(b.annotation.as_deref(), left),
        ExprKind::RecLets(bs, _) => bs.iter().all(|b| opt_ty(b.annotation.as_deref(), left)),
        ExprKind::Match { pattern, .. } => pat(pattern, left),
        ExprKind::External(d, _) => ty(&d.annotation, left),
        ExprKind::TypeDecl(d, _) => opt_ty(d.definition.as_ref(), left),
        ExprKind::ConDecl(d, _) => opt_ty(d.annotation.as_ref(), left),
        _ => true,
    }
}

fn pat(p: &Pat, levels: usize) -> bool {
    let Some(left) = levels.checked_sub(1) else { return false };
    match &p.kind {
        PatKind::Con(_, q) | PatKind::Not(q) => pat(q, left),
        PatKind::And(a, b) | PatKind::Or(a, b) => pat(a, left) && pat(b, left),
        PatKind::Record(fields) => fields.iter().all(|(_, q)| pat(q, left)),
        PatKind::Seq(ps) => ps.iter().all(|q| pat(q, left)),
        PatKind::Edge { prefix, suffix, .. } => prefix.iter().chain(suffix).all(|q| pat(q, left)),
        PatKind::Wild | PatKind::Bind(_) | PatKind::Int(_) | PatKind::Char(_) | PatKind::Bool(_) | PatKind::Error => {
            true
        }
    }
}

fn opt_ty(t: Option<&TypeExpr>, levels: usize) -> bool {
    t.is_none_or(|t| ty(t, levels))
}

fn ty(t: &TypeExpr, levels: usize) -> bool {
    let Some(left) = levels.checked_sub(1) else { return false };
    match &t.kind {
        TypeExprKind::Seq(a) | TypeExprKind::Tensor(a) | TypeExprKind::All(_, _, a) => ty(a, left),
        TypeExprKind::Arrow(a, b) => ty(a, left) && ty(b, left),
        TypeExprKind::Record(fields) => fields.iter().all(|(_, a)| ty(a, left)),
        TypeExprKind::Con(_, args) | TypeExprKind::VarApp(_, args) => args.iter().all(|a| ty(a, left)),
        TypeExprKind::Prim(_)
        | TypeExprKind::Unknown
        | TypeExprKind::Var(_)
        | TypeExprKind::Restricted(..)
        | TypeExprKind::Error => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse;
    use std::path::{Path, PathBuf};

    fn mc_files(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                mc_files(&p, out);
            } else if p.extension().is_some_and(|x| x == "mc") {
                out.push(p);
            }
        }
    }

    /// Stored under one number and read under another, a parse is what
    /// parsing gives under the other.
    fn round_trip(text: &str) -> Vec<u8> {
        let bytes = encode(&parse(text, FileId(3)), FileId(3)).expect("stored");
        assert_eq!(decode(&bytes, FileId(7)), Some(parse(text, FileId(7))));
        bytes
    }

    #[test]
    fn every_program_of_the_repository_reads_back_as_parsed() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let mut files = Vec::new();
        for dir in ["std", "tests", "examples"] {
            mc_files(&root.join(dir), &mut files);
        }
        assert!(files.len() > 100, "{} files", files.len());
        for f in files {
            // Some fixtures are not UTF-8 on purpose.
            if let Ok(text) = std::fs::read_to_string(&f) {
                round_trip(&text);
            }
        }
    }

    #[test]
    fn syntax_errors_and_languages_read_back() {
        let text = "lang L\n  syn T =\n  | K Int\n  sem f : T -> Int\n  sem f =\n  | K x -> x\nend\nlet x = (1 +\nlet y : [Int] = [1, 'c', \"s\", 1.5e3]\nmexpr\nuse L in f (K 1); utest y with y using eqSeq in ()\n";
        assert!(!parse(text, FileId(0)).diagnostics.is_empty());
        assert!(!parse(text, FileId(0)).langs.is_empty());
        round_trip(text);
    }

    #[test]
    fn damaged_entries_do_not_read() {
        let bytes =
            round_trip(&std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../std/seq.mc")).unwrap());
        for cut in [0, 5, MAGIC.len() + 3, bytes.len() / 2, bytes.len() - 1] {
            assert_eq!(decode(&bytes[..cut], FileId(0)), None, "cut at {cut}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert_eq!(decode(&longer, FileId(0)), None);
        let mut other_version = bytes.clone();
        other_version[MAGIC.len() - 2] ^= 1;
        assert_eq!(decode(&other_version, FileId(0)), None);
    }

    /// Deeper than serde's frames are allowed: parsed each time instead.
    #[test]
    fn deep_trees_are_not_stored() {
        // `n` lets, then their body: n + 1 levels.
        let chain = |n| format!("mexpr\n{}a\n", "let a = 1 in\n".repeat(n));
        let at_most = chain(levels() - 1);
        let deeper = chain(levels());
        let on_large_stack =
            std::thread::Builder::new().stack_size(crate::MAX_DEPTH * crate::STACK_PER_LEVEL).spawn(move || {
                let parsed = parse(&deeper, FileId(0));
                assert!(parsed.diagnostics.is_empty());
                assert_eq!(encode(&parsed, FileId(0)), None);
                round_trip(&at_most);
            });
        on_large_stack.unwrap().join().unwrap();
    }

    #[test]
    fn typed_trees_are_not_stored() {
        let mut parsed = parse("let x = 1\n", FileId(0));
        let pmx_ast::Item::Let(b) = &mut parsed.module.items[0] else { panic!() };
        b.value.ty = pmx_ast::Ty::int();
        assert_eq!(encode(&parsed, FileId(0)), None);
    }
}
