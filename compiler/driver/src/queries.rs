//! The front end's queries.

use crate::db::{Db, SourceFile};
use crate::freed::FreedApart;
use crate::includes::{acyclic_includes, file_includes};
use pmx_ast::{Module, NameId, Ty};
use pmx_diagnostics::Diagnostic;
use pmx_names::{Exports, NameTable};
use pmx_syntax::Parsed;
use pmx_types::{Imports, TyConInfo, TypeExports};
use rustc_hash::{FxHashMap, FxHashSet};
use std::sync::Arc;

/// Source text to AST, with syntax errors (shared, so that the parse kept
/// for the next version holds the same module). Where the database keeps
/// parses, the file's previous syntax tree and the lowered declarations an
/// edit did not touch are reused; elsewhere the parse comes from the
/// database's parse cache where it has one (the CLI's: `parse_cache.rs`),
/// and a large file is parsed in parts on several threads (the result is
/// the same as a parse of the whole file from scratch either way).
///
/// `no_eq` here, on `check_file` and on `accelerate_analysis`: salsa would
/// compare each new result with the last to see whether it changed, a walk
/// of the whole tree after every edit; but an edit moves the spans of all
/// that follows it, so the results almost never compare equal. What files
/// that include this one see is compared instead, in `name_exports` and
/// `type_exports`, which is small and usually unchanged.
#[salsa::tracked(returns(deref), no_eq)]
pub fn parse_file(db: &dyn Db, file: SourceFile) -> FreedApart<Arc<Parsed>> {
    let id = file.id(db);
    if !db.keeps_parses() {
        let parsed = match db.parse_cache() {
            Some(cache) => cache.parse(file.text(db), id),
            None => pmx_syntax::parse(file.text(db), id),
        };
        return FreedApart::new(Arc::new(parsed));
    }
    let previous = db.previous_parse(id);
    let (parsed, keep) = pmx_syntax::reparse(file.text(db), id, previous.as_ref());
    if let Some(keep) = keep {
        db.keep_parse(id, keep);
    }
    FreedApart::new(parsed)
}

/// The parse kept for a file's current text, where the database keeps
/// parses (the language server): requests that work on the syntax tree
/// itself (semantic tokens) use the tree the driver already has instead of
/// parsing again. `None` where parses are not kept, or if another thread
/// has since kept the parse of an older text.
pub fn current_parse(db: &dyn Db, file: SourceFile) -> Option<pmx_syntax::PreviousParse> {
    parse_file(db, file);
    db.previous_parse(file.id(db)).filter(|p| p.tree_of(file.text(db)).is_some())
}

/// A file after name resolution and type inference.
#[derive(Clone, Debug, PartialEq)]
pub struct CheckedFile {
    /// The module with resolved names and inferred types.
    pub module: Module,
    /// What the file makes visible to name resolution: its includes'
    /// exports and its own.
    pub name_exports: Exports,
    /// The names the file itself binds at top level.
    pub own_names: Exports,
    pub names: NameTable,
    /// The types of what the file binds at top level.
    pub exports: TypeExports,
    /// Name resolution's diagnostics, then type inference's.
    pub diagnostics: Vec<Diagnostic>,
    /// The names the file looked up outside its own scope, with what they
    /// resolved to: a program that merges its files checks the file again
    /// only where one of them means something else there
    /// ([`crate::program::program_checks`]).
    pub outside: Vec<pmx_names::Outside>,
}

/// Names, then types, on one copy of the parsed module, on the file's own:
/// it sees the names of the files it includes (in Miking's order). Both
/// passes rewrite the module in place; one query for both copies the
/// (large) AST once rather than twice, and keeps one resolved module in
/// memory, not two.
#[salsa::tracked(returns(deref), no_eq)]
pub fn check_file(db: &dyn Db, file: SourceFile) -> FreedApart<CheckedFile> {
    let mut imports = Exports::default();
    merge_includes(db, file, &mut imports, &mut Merged::default());
    FreedApart::new(check_with(db, file, imports, &DbImports { db, again: None }))
}

/// Names (seeing `imports` from other files), then types (asking `types`
/// for other files' types).
pub(crate) fn check_with(db: &dyn Db, file: SourceFile, imports: Exports, types: &dyn Imports) -> CheckedFile {
    let mut module = crate::mlang::plain_module(db, file);
    let (own, names, mut diagnostics, outside) = pmx_names::resolve_module(&mut module, file.id(db), &imports);
    let mut name_exports = imports;
    name_exports.extend_from(&own);
    let (exports, type_diagnostics) = pmx_types::check_module(&mut module, file.id(db), types);
    diagnostics.extend(type_diagnostics);
    CheckedFile { module, name_exports, own_names: own, names, exports, diagnostics, outside }
}

/// Adds the names of the files `file` includes to `imports` in Miking's
/// order: the included files are read depth first, each at its first
/// include only, and later names shadow earlier ones. So when `main.mc`
/// includes `a.mc` and then `b.mc`, and `a.mc` itself includes `b.mc` and
/// redefines one of its names, `main.mc` sees `a.mc`'s definition: `b.mc`
/// came before `a.mc` and is not read again. An include none of whose
/// files are in yet adds its exports whole (they are its files in that
/// order); one that shares files with what is in is merged include by
/// include, then its own names.
fn merge_includes(db: &dyn Db, file: SourceFile, imports: &mut Exports, merged: &mut Merged) {
    for &dep in &acyclic_includes(db, file).0 {
        if merged.is_empty() {
            imports.extend_from(name_exports(db, dep));
            merged.first = Some(dep);
            continue;
        }
        let files = merged.files(db);
        if files.contains(&dep) {
            continue;
        }
        match files_apart_from(db, dep, files) {
            Some(new) => {
                imports.extend_from(name_exports(db, dep));
                merged.files.extend(new);
            }
            None => {
                merge_includes(db, dep, imports, merged);
                imports.extend_from(own_names(db, dep));
                merged.files.insert(dep);
            }
        }
    }
}

/// The files whose names [`merge_includes`] has added. The files of the
/// first include, merged whole, are only listed when a second include
/// needs them, so that a chain of files each including one other never
/// walks its includes (which would take time quadratic in its length).
#[derive(Default)]
struct Merged {
    first: Option<SourceFile>,
    files: FxHashSet<SourceFile>,
}

impl Merged {
    fn is_empty(&self) -> bool {
        self.first.is_none() && self.files.is_empty()
    }

    fn files(&mut self, db: &dyn Db) -> &FxHashSet<SourceFile> {
        if let Some(first) = self.first.take() {
            let all = files_apart_from(db, first, &FxHashSet::default()).unwrap_or_default();
            self.files.extend(all);
        }
        &self.files
    }
}

/// `root` and the files it includes, directly or not, if none of them is
/// in `merged`; `None` as soon as one is.
fn files_apart_from(db: &dyn Db, root: SourceFile, merged: &FxHashSet<SourceFile>) -> Option<Vec<SourceFile>> {
    let mut found = vec![root];
    let mut seen = FxHashSet::from_iter([root]);
    let mut next = 0;
    while let Some(&f) = found.get(next) {
        next += 1;
        if merged.contains(&f) {
            return None;
        }
        for &g in &acyclic_includes(db, f).0 {
            if seen.insert(g) {
                found.push(g);
            }
        }
    }
    Some(found)
}

/// The names a file makes visible, apart from the rest of its check: an
/// edit that leaves them as they were (most edits) does not make the
/// files that include it resolve their names again.
#[salsa::tracked(returns(ref))]
pub fn name_exports(db: &dyn Db, file: SourceFile) -> Exports {
    check_file(db, file).name_exports.clone()
}

/// The names a file itself binds at top level, for includers that have
/// already seen the files it includes ([`merge_includes`]).
#[salsa::tracked(returns(ref))]
pub fn own_names(db: &dyn Db, file: SourceFile) -> Exports {
    check_file(db, file).own_names.clone()
}

/// The types of what a file binds, apart from the rest of its check, for
/// the same reason as [`name_exports`].
#[salsa::tracked(returns(ref))]
pub fn type_exports(db: &dyn Db, file: SourceFile) -> TypeExports {
    check_file(db, file).exports.clone()
}

/// Type information of other files, from their `check_file` results. A
/// file only refers to names of files it includes without a cycle, so this
/// never recurses into the file being checked.
pub(crate) struct DbImports<'a> {
    pub(crate) db: &'a dyn Db,
    /// In a program: the files checked again in its merged order
    /// (`program.rs`), whose types come from that check.
    pub(crate) again: Option<&'a FxHashMap<SourceFile, CheckedFile>>,
}

impl DbImports<'_> {
    fn exports(&self, id: NameId) -> Option<&TypeExports> {
        let file = self.db.file(id.file)?;
        match self.again.and_then(|again| again.get(&file)) {
            Some(c) => Some(&c.exports),
            None => Some(type_exports(self.db, file)),
        }
    }
}

impl Imports for DbImports<'_> {
    fn value(&self, id: NameId) -> Option<Ty> {
        self.exports(id)?.values.get(&id).cloned()
    }
    fn con(&self, id: NameId) -> Option<Ty> {
        self.exports(id)?.cons.get(&id).cloned()
    }
    fn tycon(&self, id: NameId) -> Option<TyConInfo> {
        self.exports(id)?.tycons.get(&id).cloned()
    }
}

/// Every diagnostic of one file, sorted by position.
#[salsa::tracked(returns(ref))]
pub fn file_diagnostics(db: &dyn Db, file: SourceFile) -> Vec<Diagnostic> {
    diagnostics_with(db, file, check_file(db, file))
}

/// A file's diagnostics, with those of `checked`, one check of it.
pub(crate) fn diagnostics_with(db: &dyn Db, file: SourceFile, checked: &CheckedFile) -> Vec<Diagnostic> {
    let mut all = parse_file(db, file).diagnostics.clone();
    all.extend(crate::mlang::desugared(db, file).diagnostics.iter().cloned());
    all.extend(file_includes(db, file).diagnostics.iter().cloned());
    all.extend(acyclic_includes(db, file).1.iter().cloned());
    all.extend(checked.diagnostics.iter().cloned());
    crate::stdlib_hint::add_include_hints(db.stdlib_dirs(), &mut all);
    pmx_diagnostics::sort_and_dedup(&mut all);
    all
}

/// The files of a program in load order: each file after the files it
/// includes, each once.
#[salsa::tracked(returns(ref))]
pub fn program_files(db: &dyn Db, root: SourceFile) -> Vec<SourceFile> {
    let mut order = Vec::new();
    let mut seen = FxHashSet::default();
    // Iterative post-order walk: (file, next include to visit).
    let mut stack = vec![(root, 0usize)];
    seen.insert(root);
    while let Some((file, next)) = stack.pop() {
        let deps = &acyclic_includes(db, file).0;
        if next < deps.len() {
            stack.push((file, next + 1));
            let dep = deps[next];
            if seen.insert(dep) {
                stack.push((dep, 0));
            }
        } else {
            order.push(file);
        }
    }
    order
}

/// The front end's diagnostics of every file of a program. A type error in
/// a definition that nothing reaches is a warning: Miking drops unused
/// definitions before checking (`pmx_ast::reach`), so a library may hold
/// one that does not type-check, and the program still runs (the CPU
/// backend leaves such definitions out too).
#[salsa::tracked(returns(ref))]
pub fn front_end_diagnostics(db: &dyn Db, root: SourceFile) -> Vec<Diagnostic> {
    let files = program_files(db, root);
    let checks = crate::program::program_checks(db, root);
    let mut all: Vec<Diagnostic> = Vec::new();
    for f in files {
        match checks.in_context(*f) {
            Some(checked) => all.extend(diagnostics_with(db, *f, checked)),
            None => all.extend(file_diagnostics(db, *f).iter().cloned()),
        }
    }
    let is_type_error = |d: &Diagnostic| d.is_error() && d.code.as_str().starts_with("E03");
    if !all.iter().any(is_type_error) {
        return all;
    }
    let modules = crate::program::program_modules(db, root);
    let live = pmx_ast::reach::Liveness::of(&modules);
    let (mut dead, mut alive) = (Vec::new(), Vec::new());
    for (mi, module) in modules.iter().enumerate() {
        for (ii, item) in module.items.iter().enumerate() {
            if live.is_dead(mi, ii) {
                dead.push((code_spans(item), item_name(item)));
            } else {
                alive.extend(code_spans(item));
            }
        }
    }
    let inside = |s: &pmx_diagnostics::Span, at: &pmx_diagnostics::Span| {
        s.file == at.file && s.start <= at.start && at.end <= s.end
    };
    for d in all.iter_mut().filter(|d| is_type_error(d)) {
        let at = d.span();
        let Some((_, name)) = dead.iter().find(|(spans, _)| spans.iter().any(|s| inside(s, &at))) else {
            continue;
        };
        // Code that a used definition holds too (a case that a language
        // composed from this one copied) is used.
        if alive.iter().any(|s| inside(s, &at)) {
            continue;
        }
        d.severity = pmx_diagnostics::Severity::Warning;
        d.notes.push(format!(
            "nothing uses `{name}`: like Miking, pmx leaves out unused definitions, so this does not stop the program"
        ));
    }
    // A language's case is checked in every language that holds a copy of
    // it (`pmx_syntax::mlang`): one mistake there is shown once.
    let mut seen = FxHashSet::default();
    all.retain(|d| {
        !d.code.as_str().starts_with("E03") || seen.insert((d.is_error(), d.code, d.span(), d.message.clone()))
    });
    all
}

/// Where a top-level definition's code is written: its span, and for a
/// language's semantic functions (`pmx_syntax::mlang`) the span of each
/// case, which may have been copied from another language, elsewhere.
fn code_spans(item: &pmx_ast::Item) -> Vec<pmx_diagnostics::Span> {
    use pmx_ast::ExprKind;
    let mut spans = vec![item.span()];
    if let pmx_ast::Item::RecLets(bs, _) = item {
        for b in bs {
            let mut e = &b.value;
            while let ExprKind::Lam { body, .. } = &e.kind {
                e = body;
            }
            while let ExprKind::Match { otherwise, .. } = &e.kind {
                let own = spans[0];
                if !(own.file == e.span.file && own.start <= e.span.start && e.span.end <= own.end) {
                    spans.push(e.span);
                }
                e = otherwise;
            }
        }
    }
    spans
}

/// The name a top-level definition is known by, for messages.
fn item_name(item: &pmx_ast::Item) -> String {
    match item {
        pmx_ast::Item::Let(b) => b.name.text.to_string(),
        pmx_ast::Item::RecLets(bs, _) => bs.iter().map(|b| b.name.text.as_str()).collect::<Vec<_>>().join("`, `"),
        pmx_ast::Item::External(d) => d.name.text.to_string(),
        _ => String::new(),
    }
}

/// The accelerate passes over a program whose front end found no error
/// (they rely on a well-typed program); `None` otherwise.
#[salsa::tracked(returns(deref), no_eq)]
pub fn accelerate_analysis(db: &dyn Db, root: SourceFile) -> FreedApart<Option<pmx_accelerate::Analysis>> {
    if front_end_diagnostics(db, root).iter().any(|d| d.is_error()) {
        return FreedApart::new(None);
    }
    // A program can only use `accelerate` by writing its name; without it
    // there is nothing to analyse.
    let files = program_files(db, root);
    if !files.iter().any(|f| f.text(db).contains("accelerate")) {
        return FreedApart::new(Some(pmx_accelerate::Analysis::empty()));
    }
    let modules = crate::program::program_modules(db, root);
    FreedApart::new(Some(pmx_accelerate::analyze(&modules)))
}

/// Every diagnostic of a program: the front end's, then the accelerate
/// passes'.
#[salsa::tracked(returns(ref))]
pub fn program_diagnostics(db: &dyn Db, root: SourceFile) -> Vec<Diagnostic> {
    let mut all = front_end_diagnostics(db, root).clone();
    if let Some(analysis) = accelerate_analysis(db, root) {
        all.extend(analysis.diagnostics.iter().cloned());
    }
    all
}
