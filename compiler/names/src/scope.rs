//! The resolver's state: scopes with shadowing, fresh identities, and the
//! diagnostics found so far.

use crate::extensions::miking_extension;
use crate::{Exports, NameEntry, NameKind, NameTable, Namespace, Outside};
use pmx_ast::{Builtin, BuiltinType, FileId, Module, Name, NameId, SmolStr, Span};
use pmx_diagnostics::{Code, Diagnostic};
use rustc_hash::FxHashMap;
use std::sync::LazyLock;

static BUILTINS: LazyLock<FxHashMap<&'static str, Builtin>> =
    LazyLock::new(|| Builtin::ALL.iter().map(|b| (b.name(), *b)).collect());

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ns {
    Value,
    Con,
    Type,
    TyVar,
}

pub struct Resolver<'a> {
    file: FileId,
    imports: &'a Exports,
    table: NameTable,
    exports: Exports,
    pub(crate) diags: Vec<Diagnostic>,
    values: FxHashMap<SmolStr, Vec<NameId>>,
    cons: FxHashMap<SmolStr, Vec<NameId>>,
    types: FxHashMap<SmolStr, Vec<NameId>>,
    tyvars: FxHashMap<SmolStr, Vec<NameId>>,
    /// Bindings in the order they were made, so scopes can be closed.
    undo: Vec<(Ns, SmolStr)>,
    /// While resolving the type of a constructor or external, unbound type
    /// variables are bound implicitly (as if quantified with `all`).
    pub(crate) implicit_tyvars: bool,
    /// The work spent looking for similar names (see [`Resolver::similar`]).
    hint_work: usize,
    /// The names of the non-recursive `let`s whose values are being
    /// resolved, innermost last, and whether each is a declaration: a use
    /// of one of them is a function calling itself without `recursive`.
    pub(crate) defining: Vec<(SmolStr, bool)>,
    /// Each name looked up outside the file's own scope, with what the
    /// imports gave (see [`crate::Outside`]).
    outside: FxHashMap<(Namespace, SmolStr), Option<NameId>>,
}

/// The work spent looking for similar names in one file, at most: one unit
/// per candidate looked at, plus the pairs of characters compared.
const HINT_BUDGET: usize = 20_000_000;

impl<'a> Resolver<'a> {
    pub fn new(file: FileId, imports: &'a Exports) -> Resolver<'a> {
        Resolver {
            file,
            imports,
            table: NameTable::default(),
            exports: Exports::default(),
            diags: Vec::new(),
            values: FxHashMap::default(),
            cons: FxHashMap::default(),
            types: FxHashMap::default(),
            tyvars: FxHashMap::default(),
            undo: Vec::new(),
            implicit_tyvars: false,
            hint_work: 0,
            defining: Vec::new(),
            outside: FxHashMap::default(),
        }
    }

    pub fn finish(self) -> (Exports, NameTable, Vec<Diagnostic>, Vec<Outside>) {
        let mut outside: Vec<Outside> =
            self.outside.into_iter().map(|((ns, text), found)| Outside { ns, text, found }).collect();
        outside.sort_by(|a, b| (a.ns, &a.text).cmp(&(b.ns, &b.text)));
        (self.exports, self.table, self.diags, outside)
    }

    pub fn module(&mut self, module: &mut Module) {
        for item in &mut module.items {
            self.item(item);
        }
        if let Some(main) = &mut module.main {
            let mark = self.mark();
            self.expr(main);
            self.close(mark);
        }
    }

    fn map(&mut self, ns: Ns) -> &mut FxHashMap<SmolStr, Vec<NameId>> {
        match ns {
            Ns::Value => &mut self.values,
            Ns::Con => &mut self.cons,
            Ns::Type => &mut self.types,
            Ns::TyVar => &mut self.tyvars,
        }
    }

    pub(crate) fn mark(&self) -> usize {
        self.undo.len()
    }

    /// Closes every scope opened since `mark`.
    pub(crate) fn close(&mut self, mark: usize) {
        while self.undo.len() > mark {
            let (ns, text) = self.undo.pop().expect("undo log shorter than mark");
            if let Some(stack) = self.map(ns).get_mut(&text) {
                stack.pop();
                if stack.is_empty() {
                    self.map(ns).remove(&text);
                }
            }
        }
    }

    /// Gives `name` a fresh identity and brings it into scope. Anonymous
    /// names (`_`, and the empty name of `lam.`) get an identity but are
    /// never visible.
    pub(crate) fn bind(&mut self, ns: Ns, name: &mut Name, kind: NameKind, top_level: bool) {
        let id = NameId { file: self.file, index: self.table.entries.len() as u32 };
        self.table.entries.push(NameEntry { text: name.text.clone(), span: name.span, kind, top_level });
        name.id = id;
        if name.is_anonymous() {
            return;
        }
        self.map(ns).entry(name.text.clone()).or_default().push(id);
        self.undo.push((ns, name.text.clone()));
        if top_level {
            let exports = match ns {
                Ns::Value => &mut self.exports.values,
                Ns::Con => &mut self.exports.cons,
                Ns::Type => &mut self.exports.types,
                Ns::TyVar => return,
            };
            exports.insert(name.text.clone(), id);
        }
    }

    /// Binds a name to an identity made earlier (the second side of an or
    /// pattern reuses the first side's identities).
    pub(crate) fn bind_existing(&mut self, name: &mut Name, id: NameId) {
        name.id = id;
        self.values.entry(name.text.clone()).or_default().push(id);
        self.undo.push((Ns::Value, name.text.clone()));
    }

    fn lookup(&mut self, ns: Ns, text: &str) -> Option<NameId> {
        let (local, imported) = match ns {
            Ns::Value => (&self.values, Some((Namespace::Value, &self.imports.values))),
            Ns::Con => (&self.cons, Some((Namespace::Con, &self.imports.cons))),
            Ns::Type => (&self.types, Some((Namespace::Type, &self.imports.types))),
            Ns::TyVar => (&self.tyvars, None),
        };
        if let Some(id) = local.get(text).and_then(|s| s.last()) {
            return Some(*id);
        }
        if let Some((space, names)) = imported {
            let found = names.get(text).copied();
            self.outside.entry((space, SmolStr::new(text))).or_insert(found);
            if found.is_some() {
                return found;
            }
        }
        match ns {
            Ns::Value => BUILTINS.get(text).map(|b| NameId::builtin(*b)),
            Ns::Type => BuiltinType::ALL.iter().find(|t| t.name() == text).map(|t| NameId::builtin_type(*t)),
            _ => None,
        }
    }

    /// Resolves a reference, reporting it when nothing binds it.
    pub(crate) fn reference(&mut self, ns: Ns, name: &mut Name) {
        if let Some(id) = self.lookup(ns, &name.text) {
            name.id = id;
            return;
        }
        if ns == Ns::TyVar && self.implicit_tyvars {
            self.bind(Ns::TyVar, name, NameKind::TypeVar, false);
            return;
        }
        if let Some(ext) = matches!(ns, Ns::Value | Ns::Con).then(|| miking_extension(&name.text)).flatten() {
            self.diags.push(
                Diagnostic::error(Code::Unsupported, name.span, format!("`{}` belongs to {ext}", name.text))
                    .with_label("not plain MExpr")
                    .with_note("pmx implements plain MExpr with `accelerate`, not this extension of Miking's"),
            );
            return;
        }
        let (code, what) = match ns {
            Ns::Value => (Code::UnboundVariable, "variable"),
            Ns::Con => (Code::UnboundConstructor, "constructor"),
            Ns::Type => (Code::UnboundType, "type"),
            Ns::TyVar => (Code::UnboundTypeVariable, "type variable"),
        };
        let mut d = Diagnostic::error(code, name.span, format!("unbound {what} `{}`", name.text))
            .with_label(format!("no {what} named `{}` is in scope here", name.text));
        if ns == Ns::TyVar {
            d = d.with_note(format!("bind it with a quantifier: `all {}. ...`", name.text));
            self.diags.push(d);
            // Bound from here on, so that later uses are not reported again.
            self.bind(Ns::TyVar, name, NameKind::TypeVar, false);
            return;
        } else if let Some(&(_, declaration)) =
            self.defining.iter().rev().take(64).find(|(n, _)| ns == Ns::Value && *n == name.text)
        {
            let form = if declaration {
                format!("`recursive let {} = ... end`", name.text)
            } else {
                format!("`recursive let {} = ... in ...`", name.text)
            };
            d = d.with_note(format!(
                "`{}` is being defined here, and a `let` does not see its own name: to call itself, write {form}",
                name.text
            ));
        } else if let Some(near) = self.similar(ns, &name.text) {
            d = d.with_note(format!("a {what} with a similar name exists: `{near}`"));
        }
        self.diags.push(d);
    }

    /// A name in scope whose spelling is close to `text`, for hints.
    ///
    /// Each search compares `text` with every name in scope, so a file with
    /// many unbound names and many names in scope (generated code, or a
    /// file that lost an include) would take quadratic time: once the
    /// searches of a file have spent [`HINT_BUDGET`], no more hints are
    /// given. Candidates whose length alone rules them out are not compared
    /// (a megabyte-long name against every name in scope).
    fn similar(&mut self, ns: Ns, text: &str) -> Option<SmolStr> {
        if self.hint_work >= HINT_BUDGET {
            return None;
        }
        let (local, imported): (&FxHashMap<SmolStr, Vec<NameId>>, &crate::NameMap) = match ns {
            Ns::Value => (&self.values, &self.imports.values),
            Ns::Con => (&self.cons, &self.imports.cons),
            Ns::Type => (&self.types, &self.imports.types),
            Ns::TyVar => return None,
        };
        let builtins: Vec<&str> = if ns == Ns::Value { BUILTINS.keys().copied().collect() } else { Vec::new() };
        let len = text.chars().count();
        if len < 3 {
            return None;
        }
        let limit = len / 3;
        let mut work = 0usize;
        let mut best: Option<(usize, &str)> = None;
        for cand in local.keys().map(|k| k.as_str()).chain(imported.keys().map(|k| k.as_str())).chain(builtins) {
            // Looking at a candidate costs one unit, and comparing it the
            // product of the lengths.
            work += 1;
            if self.hint_work + work > HINT_BUDGET {
                break;
            }
            let cand_len = cand.chars().count();
            // The distance is at least the difference in length.
            if cand_len.abs_diff(len) > limit {
                continue;
            }
            let cost = len.saturating_mul(cand_len);
            if self.hint_work.saturating_add(work).saturating_add(cost) > HINT_BUDGET {
                continue;
            }
            work += cost;
            let d = edit_distance(text, cand);
            if d <= limit && best.is_none_or(|b| (d, cand) < b) {
                best = Some((d, cand));
            }
        }
        let best = best.map(|(_, c)| SmolStr::new(c));
        self.hint_work += work;
        best
    }

    pub(crate) fn error(&mut self, code: Code, span: Span, message: String) -> &mut Diagnostic {
        self.diags.push(Diagnostic::error(code, span, message));
        self.diags.last_mut().expect("just pushed")
    }
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}
