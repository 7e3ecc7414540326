//! The requests: hover, definition, references, document symbols and
//! completion, each a function of a database snapshot. They read the
//! driver's queries; nothing here infers or resolves anything itself.

use crate::convert::{locate, Docs, Text, Texts};
use crate::walk::{is_real, walk_module, At, Binder, Occurrences, Role};
use pmx_ast::*;
use pmx_driver::{
    accelerate_analysis, check_file, file_includes, program_files, CheckedFile, Database, Db, SourceFile,
};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use tower_lsp_server::ls_types as lsp;
use tower_lsp_server::ls_types::Uri;

/// A snapshot of the database with the documents open when it was taken.
pub struct Snapshot {
    pub db: Database,
    pub docs: Arc<Docs>,
}

impl Snapshot {
    /// The file of a document (loaded from disk if the editor has not
    /// opened it).
    pub fn file(&self, uri: &Uri) -> Option<SourceFile> {
        self.db.load(&self.docs.path_of_uri(uri)).ok()
    }

    /// The programs of the open documents: each open document is the main
    /// file of one, unless another open document's program includes it
    /// (then it is checked as part of that program, seeing the names
    /// defined before it there, as Miking merges a program's files).
    pub fn roots(&self) -> Vec<SourceFile> {
        let mut paths: Vec<&std::path::PathBuf> = self.docs.by_uri.values().map(|d| &d.path).collect();
        paths.sort();
        let open: Vec<SourceFile> = paths.into_iter().filter_map(|p| self.db.load(p).ok()).collect();
        let included = |f: SourceFile| open.iter().any(|&r| r != f && program_files(&self.db, r).contains(&f));
        let roots: Vec<SourceFile> = open.iter().copied().filter(|&f| !included(f)).collect();
        // Open documents that include each other in a cycle are each a root.
        if roots.is_empty() {
            open
        } else {
            roots
        }
    }

    /// The check of `file` as the program it belongs to sees it (see
    /// [`Snapshot::roots`]); on its own when no open program includes it.
    pub fn checked(&self, file: SourceFile) -> &CheckedFile {
        self.checked_among(&self.roots(), file)
    }

    /// [`Snapshot::checked`] with the roots already found (a request that
    /// looks at many files finds them once).
    pub fn checked_among(&self, roots: &[SourceFile], file: SourceFile) -> &CheckedFile {
        match roots.iter().find(|&&r| program_files(&self.db, r).contains(&file)) {
            Some(&root) => pmx_driver::checked_in(&self.db, root, file),
            None => check_file(&self.db, file),
        }
    }
}

fn code_block(s: &str) -> String {
    format!("```mexpr\n{s}\n```")
}

fn markdown(value: String) -> lsp::HoverContents {
    lsp::HoverContents::Markup(lsp::MarkupContent { kind: lsp::MarkupKind::Markdown, value })
}

/// What a name is bound to in its defining file: its type or scheme.
fn binder_type(db: &Database, id: NameId, role: Role) -> Option<Ty> {
    if let Some(b) = id.as_builtin() {
        return Some(pmx_types::builtin_scheme(b));
    }
    let file = db.file(id.file)?;
    let checked = check_file(db, file);
    let exported = match role {
        Role::ConDef | Role::ConUse => checked.exports.cons.get(&id),
        _ => checked.exports.values.get(&id),
    };
    if let Some(t) = exported {
        return Some(t.clone());
    }
    let mut b = Binder { id, found: None };
    walk_module(&checked.module, None, &mut b);
    b.found.and_then(|(_, _, t)| t)
}

/// The span of the binder of a name (None for built-ins).
fn definition_span(db: &Database, id: NameId) -> Option<Span> {
    if id.file == FileId::BUILTIN || !id.is_resolved() {
        return None;
    }
    let file = db.file(id.file)?;
    check_file(db, file).names.get(id).map(|e| e.span).filter(|s| !s.is_builtin())
}

fn type_text(ty: Option<&Ty>) -> String {
    ty.map(|t| t.to_string()).unwrap_or_else(|| "Unknown".to_string())
}

/// The hover text of a type name: its declaration.
fn type_decl_text(db: &Database, id: NameId, text: &str) -> String {
    if let Some(b) = id.as_builtin_type() {
        let params: Vec<String> = (0..b.arity()).map(|i| ((b'a' + i as u8) as char).to_string()).collect();
        let head = std::iter::once(b.name().to_string()).chain(params).collect::<Vec<_>>().join(" ");
        return format!("{}\n\nbuilt-in type", code_block(&format!("type {head}")));
    }
    let info = db.file(id.file).and_then(|f| check_file(db, f).exports.tycons.get(&id).cloned());
    match info {
        Some(info) => {
            let mut head = format!("type {}", info.name);
            for p in &info.params {
                head.push(' ');
                head.push_str(&p.name);
            }
            if let Some(def) = &info.definition {
                head.push_str(&format!(" = {def}"));
            }
            code_block(&head)
        }
        None => code_block(&format!("type {text}")),
    }
}

pub fn hover(s: &Snapshot, uri: &Uri, pos: lsp::Position) -> Option<lsp::Hover> {
    let db = &s.db;
    let file = s.file(uri)?;
    let mut texts = Texts::new(db);
    let offset = texts.get(file).offset(pos);
    let checked = s.checked(file);
    let at = At::find(&checked.module, offset);
    let strictly = |sp: Span| sp.start <= offset && offset < sp.end;
    let name_first = match (&at.name, &at.label) {
        (Some(n), Some(l)) => strictly(n.0.span) || !strictly(l.0.span),
        (Some(_), None) => true,
        _ => false,
    };
    let (value, span) = if name_first {
        let (name, role, ty) = at.name.clone()?;
        let text = if role == Role::ValueUse && name.id.as_builtin() == Some(Builtin::Accelerate) {
            accelerate_hover(s, &mut texts, file, name.span, ty.as_ref())
        } else {
            name_hover(db, &mut texts, name, role, ty.as_ref())
        };
        (text, name.span)
    } else if let Some((label, ty)) = &at.label {
        (code_block(&format!("{} : {}", label.text, type_text(ty.as_ref()))), label.span)
    } else if let Some(e) = at.expr {
        (code_block(&e.ty.to_string()), e.span)
    } else if let Some(inc) = checked.module.includes.iter().find(|i| i.span.start <= offset && offset < i.span.end) {
        let target = file_includes(db, file).targets.iter().find(|t| t.include.span == inc.span)?.target?;
        (format!("`{}`", target.path(db).display()), inc.span)
    } else {
        return None;
    };
    let range = texts.get(file).range(span);
    Some(lsp::Hover { contents: markdown(value), range: Some(range) })
}

fn name_hover(db: &Database, texts: &mut Texts, name: &Name, role: Role, ty: Option<&Ty>) -> String {
    let id = name.id;
    match role {
        Role::ValueDef | Role::ValueUse => {
            let mut out = code_block(&format!("{} : {}", name.text, type_text(ty)));
            if id.as_builtin().is_some() {
                let scheme = binder_type(db, id, role).map(|t| t.to_string()).unwrap_or_default();
                if Some(&scheme) != ty.map(|t| t.to_string()).as_ref() {
                    out.push_str(&format!("\n\nbuilt-in: `{} : {scheme}`", name.text));
                } else {
                    out.push_str("\n\nbuilt-in");
                }
            } else if role == Role::ValueUse {
                if let Some(scheme) = binder_type(db, id, role) {
                    if Some(scheme.to_string()) != ty.map(|t| t.to_string()) {
                        out.push_str(&format!("\n\ndefined as `{} : {scheme}`", name.text));
                    }
                }
                if let Some(def) = definition_span(db, id) {
                    out.push_str(&format!("\n\ndefined at {}", locate(db, texts, def)));
                }
            }
            out
        }
        Role::ConDef | Role::ConUse => {
            let scheme = if role == Role::ConDef { ty.cloned() } else { binder_type(db, id, role) };
            let mut out = code_block(&format!("con {} : {}", name.text, type_text(scheme.as_ref())));
            if role == Role::ConUse {
                if let Some(def) = definition_span(db, id) {
                    out.push_str(&format!("\n\ndefined at {}", locate(db, texts, def)));
                }
            }
            out
        }
        Role::TypeDef | Role::TypeUse => type_decl_text(db, id, &name.text),
        Role::TypeVarDef | Role::TypeVarUse => format!("type variable `{}`", name.text),
    }
}

/// `pmx explain` for one `accelerate`: the backend, why, and what crosses.
fn accelerate_hover(s: &Snapshot, texts: &mut Texts, file: SourceFile, at: Span, ty: Option<&Ty>) -> String {
    let db = &s.db;
    let mut out = code_block(&format!("accelerate : {}", type_text(ty)));
    let mut roots = vec![file];
    roots.extend(s.roots().into_iter().filter(|r| *r != file));
    let mut blocked = false;
    for root in roots {
        if !program_files(db, root).contains(&file) {
            continue;
        }
        let Some(analysis) = accelerate_analysis(db, root) else {
            blocked = true;
            continue;
        };
        let Some(a) =
            analysis.accelerates.iter().find(|a| a.boundary.span.file == at.file && a.boundary.span.start == at.start)
        else {
            continue;
        };
        let lines = crate::explain::lines(a, &mut |sp| locate(db, texts, sp));
        out.push_str(&format!("\n\n```\n{}\n```\n", lines.join("\n")));
        return out;
    }
    if blocked {
        out.push_str("\n\nThe accelerate analysis (backend, parameters) runs once the program has no errors.");
    }
    out
}

/// The name under the cursor and its identity.
fn name_at(s: &Snapshot, file: SourceFile, offset: u32) -> Option<(Name, Role)> {
    let at = At::find(&s.checked(file).module, offset);
    at.name.map(|(n, role, _)| (n.clone(), role))
}

pub fn definition(s: &Snapshot, uri: &Uri, pos: lsp::Position) -> Option<Vec<lsp::Location>> {
    let db = &s.db;
    let file = s.file(uri)?;
    let mut texts = Texts::new(db);
    let offset = texts.get(file).offset(pos);
    // An `include`: the file it names.
    for t in &file_includes(db, file).targets {
        if t.include.span.start <= offset && offset <= t.include.span.end {
            let target = t.target?;
            let uri = s.docs.uri_of_path(target.path(db))?;
            return Some(vec![lsp::Location { uri, range: lsp::Range::default() }]);
        }
    }
    let (name, role) = name_at(s, file, offset)?;
    let span = if role.is_def() { name.span } else { definition_span(db, name.id)? };
    Some(vec![texts.location(&s.docs, span)?])
}

/// The files searched for references: every file of every open program
/// and of the document's own program.
fn searched_files(s: &Snapshot, file: SourceFile) -> Vec<SourceFile> {
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    let mut roots = vec![file];
    roots.extend(s.roots());
    for r in roots {
        for f in program_files(&s.db, r) {
            if seen.insert(*f) {
                out.push(*f);
            }
        }
    }
    out
}

pub fn references(s: &Snapshot, uri: &Uri, pos: lsp::Position, declaration: bool) -> Option<Vec<lsp::Location>> {
    let db = &s.db;
    let file = s.file(uri)?;
    let mut texts = Texts::new(db);
    let offset = texts.get(file).offset(pos);
    let (name, _) = name_at(s, file, offset)?;
    let mut spans = Vec::new();
    let roots = s.roots();
    for f in searched_files(s, file) {
        let mut occ = Occurrences { id: name.id, found: Vec::new() };
        walk_module(&s.checked_among(&roots, f).module, None, &mut occ);
        spans.extend(occ.found.iter().filter(|(_, role)| declaration || !role.is_def()).map(|(n, _)| n.span));
    }
    spans.sort();
    spans.dedup();
    Some(spans.into_iter().filter_map(|sp| texts.location(&s.docs, sp)).collect())
}

#[allow(deprecated)]
fn symbol(
    text: &Text,
    name: &str,
    kind: lsp::SymbolKind,
    detail: Option<String>,
    span: Span,
    selection: Span,
    children: Option<Vec<lsp::DocumentSymbol>>,
) -> lsp::DocumentSymbol {
    let span = span.to(selection);
    lsp::DocumentSymbol {
        name: if name.is_empty() { "_".to_string() } else { name.to_string() },
        detail,
        kind,
        tags: None,
        deprecated: None,
        range: text.range(span),
        selection_range: text.range(selection),
        children,
    }
}

fn binding_symbol(text: &Text, b: &Binding) -> Option<lsp::DocumentSymbol> {
    if !is_real(&b.name) && b.name.text.is_empty() {
        return None;
    }
    let kind = if matches!(b.value.kind, ExprKind::Lam { .. }) {
        lsp::SymbolKind::FUNCTION
    } else {
        lsp::SymbolKind::VARIABLE
    };
    Some(scheme_symbol(text, &b.name, kind, &b.scheme, b.span))
}

fn type_symbol(text: &Text, d: &TypeDecl) -> lsp::DocumentSymbol {
    let params: Vec<&str> = d.params.iter().map(|p| p.text.as_str()).collect();
    let detail = if params.is_empty() { None } else { Some(params.join(" ")) };
    symbol(text, &d.name.text, lsp::SymbolKind::STRUCT, detail, d.span, d.name.span, None)
}

/// A declared name shown with its type scheme.
fn scheme_symbol(text: &Text, name: &Name, kind: lsp::SymbolKind, scheme: &Ty, span: Span) -> lsp::DocumentSymbol {
    symbol(text, &name.text, kind, Some(scheme.to_string()), span, name.span, None)
}

fn con_symbol(text: &Text, d: &ConDecl) -> lsp::DocumentSymbol {
    scheme_symbol(text, &d.name, lsp::SymbolKind::CONSTRUCTOR, &d.scheme, d.span)
}

/// The outline: top-level declarations, and the `mexpr` section with the
/// declarations that open it.
pub fn document_symbols(s: &Snapshot, uri: &Uri) -> Option<Vec<lsp::DocumentSymbol>> {
    let db = &s.db;
    let file = s.file(uri)?;
    let text = Text::of(db, file);
    let module = &s.checked(file).module;
    let mut out = Vec::new();
    for item in &module.items {
        match item {
            Item::Let(b) => out.extend(binding_symbol(&text, b)),
            Item::RecLets(bs, _) => out.extend(bs.iter().filter_map(|b| binding_symbol(&text, b))),
            Item::Type(d) => out.push(type_symbol(&text, d)),
            Item::Con(d) => out.push(con_symbol(&text, d)),
            Item::External(d) => out.push(scheme_symbol(&text, &d.name, lsp::SymbolKind::FUNCTION, &d.scheme, d.span)),
            Item::Utest(_) => {}
        }
    }
    if let Some(main) = &module.main {
        let mut children = Vec::new();
        let mut e = main;
        loop {
            e = match &e.kind {
                ExprKind::Let(b, body) => {
                    if is_real(&b.name) {
                        children.extend(binding_symbol(&text, b));
                    }
                    body
                }
                ExprKind::RecLets(bs, body) => {
                    children.extend(bs.iter().filter(|b| is_real(&b.name)).filter_map(|b| binding_symbol(&text, b)));
                    body
                }
                ExprKind::TypeDecl(d, body) => {
                    children.push(type_symbol(&text, d));
                    body
                }
                ExprKind::ConDecl(d, body) => {
                    children.push(con_symbol(&text, d));
                    body
                }
                ExprKind::External(_, body) | ExprKind::Utest(_, body) => body,
                _ => break,
            };
        }
        let start = Span::new(main.span.file, main.span.start, main.span.start);
        out.push(symbol(&text, "mexpr", lsp::SymbolKind::NAMESPACE, None, main.span, start, Some(children)));
    }
    Some(out)
}

/// The keywords of MExpr, offered by completion.
pub const KEYWORDS: &[&str] = &[
    "let",
    "in",
    "lam",
    "if",
    "then",
    "else",
    "match",
    "with",
    "switch",
    "case",
    "end",
    "recursive",
    "type",
    "con",
    "utest",
    "using",
    "external",
    "mexpr",
    "include",
    "true",
    "false",
    "never",
    "all",
];

/// The names bound around an offset, innermost last.
fn locals_at<'a>(m: &'a Module, at: u32, out: &mut Vec<(&'a Name, Option<Ty>)>) {
    for item in &m.items {
        let sp = item.span();
        if sp.start <= at && at <= sp.end {
            match item {
                Item::Let(b) => locals_expr(&b.value, at, out),
                Item::RecLets(bs, _) => {
                    for b in bs {
                        locals_expr(&b.value, at, out);
                    }
                }
                Item::Utest(u) => {
                    for e in
                        [Some(&u.test), Some(&u.expected), u.using.as_ref(), u.on_fail.as_ref()].into_iter().flatten()
                    {
                        locals_expr(e, at, out);
                    }
                }
                _ => {}
            }
        }
    }
    if let Some(main) = &m.main {
        locals_expr(main, at, out);
    }
}

/// The value names a pattern binds, with their types.
fn pat_binders(p: &Pat) -> Vec<(&Name, Option<Ty>)> {
    let mut out = Vec::new();
    pmx_ast::visit::pat_binders_at(p, &mut |n, at| out.push((n, Some(at.ty.clone()))));
    out
}

fn inside(e: &Expr, at: u32) -> bool {
    e.span.start <= at && at <= e.span.end
}

fn locals_expr<'a>(e: &'a Expr, at: u32, out: &mut Vec<(&'a Name, Option<Ty>)>) {
    // Iterative along bodies (let chains are long), recursive into values.
    let mut e = e;
    loop {
        if !inside(e, at) {
            return;
        }
        e = match &e.kind {
            ExprKind::Lam { param, body, .. } => {
                out.push((param, e.ty.as_arrow().map(|(p, _)| p.clone())));
                body
            }
            ExprKind::Let(b, body) => {
                if inside(&b.value, at) {
                    &b.value
                } else {
                    out.push((&b.name, Some(b.scheme.clone())));
                    body
                }
            }
            ExprKind::RecLets(bs, body) => {
                out.extend(bs.iter().map(|b| (&b.name, Some(b.scheme.clone()))));
                match bs.iter().find(|b| inside(&b.value, at)) {
                    Some(b) => &b.value,
                    None => body,
                }
            }
            ExprKind::Match { scrutinee, pattern, then, otherwise } => {
                if inside(then, at) {
                    out.extend(pat_binders(pattern));
                    then
                } else if inside(scrutinee, at) {
                    scrutinee
                } else {
                    otherwise
                }
            }
            ExprKind::App(f, a) => {
                if inside(f, at) {
                    f
                } else {
                    a
                }
            }
            ExprKind::Seq(items) => match items.iter().find(|i| inside(i, at)) {
                Some(i) => i,
                None => return,
            },
            ExprKind::Record(fields) => match fields.iter().find(|(_, x)| inside(x, at)) {
                Some((_, x)) => x,
                None => return,
            },
            ExprKind::RecordUpdate(r, fields) => match fields.iter().find(|(_, x)| inside(x, at)) {
                Some((_, x)) => x,
                None => r,
            },
            ExprKind::Proj(r, _) => r,
            ExprKind::ConApp(_, a) => a,
            ExprKind::Utest(u, body) => {
                let parts = [Some(&u.test), Some(&u.expected), u.using.as_ref(), u.on_fail.as_ref()];
                match parts.into_iter().flatten().find(|x| inside(x, at)) {
                    Some(x) => x,
                    None => body,
                }
            }
            ExprKind::External(d, body) => {
                out.push((&d.name, Some(d.scheme.clone())));
                body
            }
            ExprKind::TypeDecl(_, body) => body,
            ExprKind::ConDecl(_, body) => body,
            ExprKind::Var(_) | ExprKind::Lit(_) | ExprKind::Never | ExprKind::Error => return,
        };
    }
}

fn value_kind(ty: Option<&Ty>) -> lsp::CompletionItemKind {
    match ty.map(|t| t.strip_foralls().kind()) {
        Some(TyKind::Arrow(..)) => lsp::CompletionItemKind::FUNCTION,
        _ => lsp::CompletionItemKind::VARIABLE,
    }
}

fn item(label: &str, kind: lsp::CompletionItemKind, detail: Option<String>, rank: u8) -> lsp::CompletionItem {
    lsp::CompletionItem {
        label: label.to_string(),
        kind: Some(kind),
        detail,
        // Locals first, then the program's names, built-ins, keywords.
        sort_text: Some(format!("{rank}{label}")),
        ..Default::default()
    }
}

/// Names in scope at the cursor (locals, the program's top-level names,
/// built-ins) and keywords, each with its type.
pub fn completion(s: &Snapshot, uri: &Uri, pos: lsp::Position) -> Option<Vec<lsp::CompletionItem>> {
    let db = &s.db;
    let file = s.file(uri)?;
    let offset = Text::of(db, file).offset(pos);
    let checked = s.checked(file);
    let mut seen: HashSet<String> = HashSet::new();
    let mut out = Vec::new();
    let mut locals = Vec::new();
    locals_at(&checked.module, offset, &mut locals);
    for (n, ty) in locals.into_iter().rev() {
        if is_real(n) && seen.insert(n.text.to_string()) {
            out.push(item(&n.text, value_kind(ty.as_ref()), ty.map(|t| t.to_string()), 0));
        }
    }
    let exports = &checked.name_exports;
    let mut types: HashMap<FileId, &pmx_types::TypeExports> = HashMap::new();
    let mut exports_of = |id: NameId| -> Option<&pmx_types::TypeExports> {
        let f = db.file(id.file)?;
        Some(*types.entry(id.file).or_insert_with(|| &check_file(db, f).exports))
    };
    let mut values: Vec<(&SmolStr, &NameId)> = exports.values.iter().collect();
    values.sort();
    for (name, id) in values {
        if seen.insert(name.to_string()) {
            let ty = exports_of(*id).and_then(|t| t.values.get(id).cloned());
            out.push(item(name, value_kind(ty.as_ref()), ty.map(|t| t.to_string()), 1));
        }
    }
    let mut cons: Vec<(&SmolStr, &NameId)> = exports.cons.iter().collect();
    cons.sort();
    for (name, id) in cons {
        let ty = exports_of(*id).and_then(|t| t.cons.get(id).cloned());
        out.push(item(name, lsp::CompletionItemKind::CONSTRUCTOR, ty.map(|t| t.to_string()), 1));
    }
    let mut tys: Vec<&SmolStr> = exports.types.keys().collect();
    tys.sort();
    for name in tys {
        out.push(item(name, lsp::CompletionItemKind::STRUCT, Some("type".to_string()), 1));
    }
    for b in Builtin::ALL {
        if seen.insert(b.name().to_string()) {
            let ty = pmx_types::builtin_scheme(*b);
            out.push(item(b.name(), value_kind(Some(&ty)), Some(ty.to_string()), 2));
        }
    }
    let builtin_types = ["Int", "Float", "Bool", "Char", "String", "Tensor", "Unknown"];
    for t in builtin_types.into_iter().chain(BuiltinType::ALL.iter().map(|t| t.name())) {
        out.push(item(t, lsp::CompletionItemKind::STRUCT, Some("built-in type".to_string()), 2));
    }
    for k in KEYWORDS {
        out.push(item(k, lsp::CompletionItemKind::KEYWORD, Some("keyword".to_string()), 3));
    }
    Some(out)
}
