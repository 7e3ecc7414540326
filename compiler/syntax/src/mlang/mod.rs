//! MLang desugared to MExpr, before names and types, as Miking does.
//!
//! Each `lang` becomes plain top-level declarations where it stands:
//! every `syn` first defined in it a variant type `L.T`, each of its
//! constructors `con L.K : carried -> Root.T`, each `type` and `con` of
//! the language `L.T` and `L.K`, and its semantic functions, all of them
//! (inherited ones too, since a case written in `A` calls the composed
//! language's functions), one recursive group of functions `L.f` whose
//! parameters are lambdas and whose cases are one chain of matches on the
//! last argument, more specific patterns first. The mangled names hold a
//! `.`, which no identifier can, so they never meet a user's name.
//! Inside a language and in `use L in e`, the language's names are
//! renamed to the mangled ones, as far as no local binder shadows them.
//!
//! Every generated node carries the span of the construct it comes from
//! (the `sem`, the case, the pattern), so every later diagnostic points
//! into the user's file. Languages cross files: [`Languages`] is what a
//! file gives its includers (the driver merges them in include order).

mod compose;
mod emit;
pub mod patterns;
mod rename;
mod with;

use crate::Parsed;
use pmx_ast::mlang::{SemParam, SynCon};
use pmx_ast::{ConDecl, Expr, Item, Module, Name, Pat, SmolStr, Span, TypeDecl, TypeExpr};
use pmx_diagnostics::Diagnostic;
use rustc_hash::FxHashMap;
use std::sync::Arc;

/// Languages by name.
pub type Languages = FxHashMap<SmolStr, Arc<Language>>;

/// A language fragment with everything it inherits, composed.
#[derive(Clone, Debug, PartialEq)]
pub struct Language {
    pub name: SmolStr,
    /// Where its name is written.
    pub span: Span,
    pub syns: Vec<Syn>,
    pub sems: Vec<Sem>,
    /// Its `type` declarations and those it inherits (mangled names).
    pub types: Vec<(SmolStr, Arc<TypeDecl>)>,
    pub cons: Vec<(SmolStr, Arc<ConDecl>)>,
    /// What its names mean inside it and under `use`.
    pub env: Env,
    /// Whether it defines its own semantic functions (else it uses those
    /// of the language `env` names: it changed none of them).
    pub own_sems: bool,
}

/// Short names to mangled ones.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Env {
    pub values: FxHashMap<SmolStr, SmolStr>,
    pub types: FxHashMap<SmolStr, SmolStr>,
    pub cons: FxHashMap<SmolStr, SmolStr>,
}

impl Env {
    fn extend(&mut self, other: &Env) {
        self.values.extend(other.values.iter().map(|(k, v)| (k.clone(), v.clone())));
        self.types.extend(other.types.iter().map(|(k, v)| (k.clone(), v.clone())));
        self.cons.extend(other.cons.iter().map(|(k, v)| (k.clone(), v.clone())));
    }

    fn is_empty(&self) -> bool {
        self.values.is_empty() && self.types.is_empty() && self.cons.is_empty()
    }
}

/// A `syn`: its root (the first definition: its identity and its type's
/// mangled name) and its constructors from every fragment.
#[derive(Clone, Debug, PartialEq)]
pub struct Syn {
    pub name: SmolStr,
    pub root: Span,
    pub mangled: SmolStr,
    /// Its type parameters, as its first definition names them.
    pub params: Arc<Vec<Name>>,
    pub cons: Vec<SynConDef>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct SynConDef {
    pub mangled: SmolStr,
    /// The parameters of the `syn` as the defining fragment names them.
    pub params: Arc<Vec<Name>>,
    pub decl: Arc<SynCon>,
}

/// A semantic function: its root (first definition), parameters,
/// signature and cases from every fragment, with the order found so far.
#[derive(Clone, Debug, PartialEq)]
pub struct Sem {
    pub name: SmolStr,
    pub root: Span,
    /// Where it is first written (the name).
    pub span: Span,
    pub signature: Option<Arc<TypeExpr>>,
    pub params: Option<Arc<Vec<SemParam>>>,
    pub cases: Vec<Arc<Case>>,
    /// `(a, b)`: case `a` is more specific than case `b` (pattern spans).
    pub below: rustc_hash::FxHashSet<(Span, Span)>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Case {
    pub pattern: Pat,
    pub body: Expr,
    /// The language that wrote it.
    pub lang: SmolStr,
    /// The sem's parameters as that language names them (fragments may
    /// name them differently, as long as they take as many: Miking's
    /// rule).
    pub params: Option<Arc<Vec<SemParam>>>,
}

impl Case {
    /// Its identity: where its pattern is written.
    pub fn id(&self) -> Span {
        self.pattern.span
    }
}

/// A file after desugaring.
#[derive(Clone, Debug, PartialEq)]
pub struct Desugared {
    /// The module in plain MExpr; `None` when the file writes no MLang
    /// (then it is the parsed module as it is: no copy is made).
    pub module: Option<Module>,
    /// The languages it gives includers: its includes' and its own.
    pub languages: Languages,
    pub diagnostics: Vec<Diagnostic>,
}

/// The name a language gives its `name`: `L.name`.
pub(crate) fn mangle(lang: &str, name: &str) -> SmolStr {
    SmolStr::new(format!("{lang}.{name}"))
}

/// Desugars a parsed file that sees `imported` languages (from its
/// includes, in Miking's include order).
pub fn desugar(parsed: &Parsed, imported: &Languages) -> Desugared {
    if !parsed.has_mlang() {
        return Desugared { module: None, languages: imported.clone(), diagnostics: Vec::new() };
    }
    let mut visible = imported.clone();
    let mut diagnostics = Vec::new();
    let mut items: Vec<Item> = Vec::new();
    let source = &parsed.module;
    let mut langs = parsed.langs.iter().peekable();
    for i in 0..=source.items.len() {
        while let Some(lang) = langs.next_if(|l| l.at <= i) {
            let composed = Arc::new(compose::compose(lang, &visible, &mut diagnostics));
            visible.insert(composed.name.clone(), composed.clone());
            emit::emit(&composed, lang, &visible, &mut items, &mut diagnostics);
        }
        if let Some(item) = source.items.get(i) {
            let mut item = item.clone();
            rename::Renamer::new(&visible, &Env::default(), &mut diagnostics).item(&mut item);
            items.push(item);
        }
    }
    let main = source.main.clone().map(|mut main| {
        rename::Renamer::new(&visible, &Env::default(), &mut diagnostics).expr(&mut main);
        main
    });
    let module = Module { includes: source.includes.clone(), items, main };
    Desugared { module: Some(module), languages: visible, diagnostics }
}
