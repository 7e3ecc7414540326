//! Parsing: source text to the MExpr AST.
//!
//! The tree-sitter grammar in `compiler/tree-sitter-mexpr` produces a
//! concrete syntax tree with error recovery; this crate reports its ERROR
//! and MISSING nodes as syntax errors and lowers the rest to a
//! [`pmx_ast::Module`] whose nodes carry byte spans. Sugar is removed here:
//! `if` and `switch` become matches, `a; b` becomes `let _ = a in b`,
//! tuples become records labelled `0`, `1`, ..., and strings in patterns
//! become sequence patterns.
//! MLang's `lang` blocks are kept beside the module ([`Parsed::langs`]) and
//! `use L in e` is marked in it; [`mlang`] desugars both to MExpr once the
//! languages of the included files are known (the driver's `desugared`).
//!
//! [`parse`] cuts a large file at column-0 declarations and parses the
//! parts on several threads (`parallel.rs`, `split.rs`); [`reparse`] reuses
//! the syntax tree of a file's previous version (`reparse.rs`). Both give
//! exactly what a parse of the whole file from scratch gives.
//!
//! Invariants: [`parse`] never fails and never panics; every part of the
//! tree that did not parse becomes an `Error` node (expression, pattern or
//! type) for which exactly the syntax error was reported. Names are
//! unresolved. Recursion depth is bounded by [`max_depth`] ([`MAX_DEPTH`],
//! lowered when the driver gets a smaller stack); deeper input is reported,
//! not lowered. Callers must run [`parse`] on a thread whose stack holds
//! that many nested frames ([`STACK_PER_LEVEL`] bytes each; the driver uses
//! a large stack).

mod errors;
mod expr;
mod items;
mod lang;
pub mod lexical;
mod missing_in;
pub mod mlang;
mod parallel;
mod pat;
mod reparse;
mod reuse;
mod split;
pub mod stored;
mod types;

pub use reparse::{reparse, PreviousParse};

use pmx_ast::{FileId, Module, Name, Span};
use pmx_diagnostics::Diagnostic;
use rustc_hash::FxHashMap;
use std::num::NonZeroU16;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::LazyLock;
use tree_sitter::{Language, Node, Parser, Tree};

/// Field names to field ids, looked up once: tree-sitter's by-name lookup
/// compares strings against every field of the grammar. Fx hashing, since
/// a field is looked up for nearly every node lowered.
static FIELD_IDS: LazyLock<FxHashMap<String, NonZeroU16>> = LazyLock::new(|| {
    let language: Language = tree_sitter_mexpr::LANGUAGE.into();
    let mut ids = FxHashMap::default();
    for id in 1..=language.field_count() as u16 {
        if let (Some(name), Some(nz)) = (language.field_name_for_id(id), NonZeroU16::new(id)) {
            ids.insert(name.to_string(), nz);
        }
    }
    ids
});

/// Node kind names by kind id, looked up once. `Node::kind` measures the
/// C string and checks that it is UTF-8 on every call, which was about 5%
/// of the time spent lowering.
static KINDS: LazyLock<Vec<&'static str>> = LazyLock::new(|| {
    static LANGUAGE: LazyLock<Language> = LazyLock::new(|| tree_sitter_mexpr::LANGUAGE.into());
    let language: &'static Language = &LANGUAGE;
    (0..language.node_kind_count() as u16).map(|id| language.node_kind_for_id(id).unwrap_or("")).collect()
});

/// The kind of a node (as `Node::kind`).
pub(crate) fn kind(n: Node) -> &'static str {
    KINDS.get(n.kind_id() as usize).copied().unwrap_or("")
}

/// The deepest syntax tree that is lowered with the driver's full stack.
pub const MAX_DEPTH: usize = 250_000;

/// The stack the passes need per level of nesting (at most): the driver's
/// 1 GiB stack holds [`MAX_DEPTH`] levels.
pub const STACK_PER_LEVEL: usize = (1 << 30) / MAX_DEPTH;

/// The deepest syntax tree lowered now: [`MAX_DEPTH`], or less when the
/// driver could only get a smaller stack (see [`set_stack_size`]).
static DEPTH_LIMIT: AtomicUsize = AtomicUsize::new(MAX_DEPTH);

/// The deepest syntax tree that is lowered, for the stack in use.
pub fn max_depth() -> usize {
    DEPTH_LIMIT.load(Ordering::Relaxed)
}

/// Sets the depth limit to what a stack of `bytes` holds (never more than
/// [`MAX_DEPTH`]): deeper programs are then reported instead of
/// overflowing it.
pub fn set_stack_size(bytes: usize) {
    DEPTH_LIMIT.store((bytes / STACK_PER_LEVEL).clamp(1, MAX_DEPTH), Ordering::Relaxed);
}

/// The result of parsing one file.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Parsed {
    pub module: Module,
    pub diagnostics: Vec<Diagnostic>,
    /// The file's MLang `lang` blocks, in order ([`mlang`] desugars them).
    pub langs: Vec<pmx_ast::mlang::Lang>,
    /// How many `use` markers the module holds (a reparse counts those of
    /// the declarations it reuses from their previous lowering).
    pub uses: usize,
}

impl Parsed {
    /// Whether the file writes any MLang (then [`mlang::desugar`] has work).
    pub fn has_mlang(&self) -> bool {
        !self.langs.is_empty() || self.uses > 0
    }
}

/// Parses MExpr source text with tree-sitter.
pub fn parse_tree(text: &str) -> Option<Tree> {
    parser()?.parse(text, None)
}

/// A tree-sitter parser for MExpr (`None` if the language cannot be set,
/// that is, the generated parser and the library disagree on versions).
pub(crate) fn parser() -> Option<Parser> {
    let mut parser = Parser::new();
    parser.set_language(&tree_sitter_mexpr::LANGUAGE.into()).ok()?;
    Some(parser)
}

/// Parses and lowers one file; a large one in parts on several threads
/// (with the same result).
pub fn parse(text: &str, file: FileId) -> Parsed {
    if let Some(parsed) = parallel::parse_in_parts(text, file) {
        return parsed;
    }
    parse_whole(text, file)
}

/// Parses and lowers one file on this thread.
pub(crate) fn parse_whole(text: &str, file: FileId) -> Parsed {
    let Some(tree) = parse_tree(text) else {
        return Parsed {
            module: Module::default(),
            langs: Vec::new(),
            uses: 0,
            diagnostics: vec![Diagnostic::error(
                pmx_diagnostics::Code::SyntaxError,
                Span::new(file, 0, 0),
                "the parser could not start",
            )],
        };
    };
    lower_tree(&tree, text, file)
}

/// Lowers an already parsed tree.
pub(crate) fn lower_tree(tree: &Tree, text: &str, file: FileId) -> Parsed {
    lower_reusing(tree, text, file, None).0
}

/// Lowers a tree, copying what `reuse` has from the previous version;
/// returns where each top-level node went too.
fn lower_reusing(tree: &Tree, text: &str, file: FileId, reuse: Option<&reuse::Reuse>) -> (Parsed, Vec<reuse::Top>) {
    let mut lower = Lower {
        text,
        file,
        diags: Vec::new(),
        depth: 0,
        too_deep: false,
        tops: Vec::new(),
        langs: Vec::new(),
        uses: 0,
    };
    let root = tree.root_node();
    errors::report_syntax_errors(&mut lower, root);
    let module = lower.module(root, reuse);
    (Parsed { module, diagnostics: lower.diags, langs: lower.langs, uses: lower.uses }, lower.tops)
}

pub(crate) struct Lower<'t> {
    text: &'t str,
    file: FileId,
    diags: Vec<Diagnostic>,
    /// Expressions, patterns and types (and parentheses) being lowered.
    depth: usize,
    /// The nesting limit was hit (reported once).
    too_deep: bool,
    /// Where each top-level node's lowered form went (kept for reuse by
    /// the next incremental parse).
    tops: Vec<reuse::Top>,
    /// The `lang` blocks lowered so far.
    langs: Vec<pmx_ast::mlang::Lang>,
    /// How many `use` markers were written (see [`Parsed::uses`]).
    uses: usize,
}

impl<'t> Lower<'t> {
    /// Enters `levels` more levels of nesting; false (after reporting it
    /// once) when that goes past [`max_depth`]. Counting here, where the
    /// recursion happens, bounds every later pass too, since no tree is
    /// deeper than the one lowered.
    fn enter(&mut self, levels: usize, n: Node) -> bool {
        self.depth += levels;
        let limit = max_depth();
        if self.depth <= limit {
            return true;
        }
        self.depth -= levels;
        if !self.too_deep {
            self.too_deep = true;
            let start = n.start_byte() as u32;
            let end = self.text[start as usize..].chars().next().map_or(start, |c| start + c.len_utf8() as u32);
            self.diags.push(
                Diagnostic::error(
                    pmx_diagnostics::Code::TooDeep,
                    Span::new(self.file, start, end),
                    format!("the program is nested more than {limit} levels deep, the most pmx handles"),
                )
                .with_label("nesting exceeds the limit here")
                .with_note("split deeply nested expressions into separate bindings"),
            );
        }
        false
    }

    fn span(&self, n: Node) -> Span {
        Span::new(self.file, n.start_byte() as u32, n.end_byte() as u32)
    }

    fn text(&self, n: Node) -> &'t str {
        self.text.get(n.byte_range()).unwrap_or("")
    }

    /// The named children that carry syntax (not comments, not errors).
    fn children<'a>(&self, n: Node<'a>) -> Vec<Node<'a>> {
        let mut cursor = n.walk();
        n.named_children(&mut cursor).filter(|c| !c.is_extra() && !c.is_error()).collect()
    }

    /// The first named child that carries syntax, without allocating.
    fn first<'a>(&self, n: Node<'a>) -> Option<Node<'a>> {
        (0..n.named_child_count() as u32).filter_map(|i| n.named_child(i)).find(|c| !c.is_extra() && !c.is_error())
    }

    /// Children of a given kind.
    fn children_of<'a>(&self, n: Node<'a>, kind: &str) -> Vec<Node<'a>> {
        let mut cursor = n.walk();
        n.named_children(&mut cursor).filter(|c| crate::kind(*c) == kind).collect()
    }

    /// The child in a field.
    fn field<'a>(&self, n: Node<'a>, field: &'static str) -> Option<Node<'a>> {
        n.child_by_field_id(FIELD_IDS.get(field)?.get())
    }

    /// The children in a field that repeats.
    fn fields<'a>(&self, n: Node<'a>, field: &'static str) -> Vec<Node<'a>> {
        let Some(id) = FIELD_IDS.get(field) else { return Vec::new() };
        let mut cursor = n.walk();
        n.children_by_field_id(*id, &mut cursor).filter(|c| !c.is_extra()).collect()
    }

    /// A name: plain identifiers, escaped identifiers (`#var"..."`), and
    /// the wildcard `_` in binder position.
    fn name(&mut self, n: Node) -> Name {
        let span = self.span(n);
        let text = self.text(n);
        let text = if text.starts_with('#') {
            let body = lexical::quoted_body(text);
            match lexical::unescape(body) {
                Ok(s) => s,
                Err((_, msg)) => {
                    self.invalid_literal(span, msg);
                    body.to_string()
                }
            }
        } else {
            text.to_string()
        };
        Name::unresolved(text, span)
    }

    fn invalid_literal(&mut self, span: Span, message: String) {
        self.diags.push(
            Diagnostic::error(pmx_diagnostics::Code::InvalidLiteral, span, message).with_label("in this literal"),
        );
    }
}
