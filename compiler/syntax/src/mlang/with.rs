//! `with` clauses in a language's header: `lang L = A + B with T = A.T +
//! B.T with f = A.f + B.f`. Before the languages extended are merged,
//! each definition a clause names takes the clause as its root, so that
//! definitions of one name that do not extend each other merge as if
//! they did (Miking gives them one fresh identity). A merged `syn` or
//! type alias is defined anew in `L`, as in Miking: its type is `L.T`
//! and a syn's constructors are `L.K`, so that the constructors of all
//! the sources build one type.
//!
//! As in Miking, a clause names the definition under its own name
//! (renaming is not supported there either), a language that is not one
//! of those extended is an error, and a language without the definition
//! is left as it is (a warning here, since the clause then does nothing
//! for it).

use super::*;
use pmx_ast::mlang::{Lang, LangWith, WithKind};
use pmx_diagnostics::{Code, Severity};

/// The parents of `lang` (each with the name its header writes) with its
/// `with` clauses applied. A clause with an error changes nothing, so
/// that what it names is reported no further than where it is written.
pub(super) fn apply(lang: &Lang, parents: &mut [(Name, Arc<Language>)], diags: &mut Vec<Diagnostic>) {
    for clause in &lang.withs {
        let errors = diags.iter().filter(|d| d.is_error()).count();
        let mut targets = Vec::new();
        for (from, def) in &clause.sources {
            if def.text != clause.name.text {
                diags.push(renamed(clause, def));
                continue;
            }
            let at: Vec<usize> = (0..parents.len()).filter(|&i| parents[i].0.text == from.text).collect();
            if at.is_empty() {
                diags.push(not_extended(lang, from));
            }
            for i in at {
                match kind(&parents[i].1, clause, def) {
                    Ok(Some(kind)) => targets.push((i, kind, def.span)),
                    Ok(None) => diags.push(missing(clause, from, def)),
                    Err(d) => diags.push(d),
                }
            }
        }
        let syn = targets.iter().find(|t| t.1 == Kind::Syn);
        if let (Some(syn), Some(alias)) = (syn, targets.iter().find(|t| t.1 == Kind::Alias)) {
            diags.push(mixed(lang, clause, syn.2, alias.2));
        }
        if diags.iter().filter(|d| d.is_error()).count() > errors {
            continue;
        }
        for (i, kind, _) in targets {
            merge_root(&lang.name.text, Arc::make_mut(&mut parents[i].1), clause, kind);
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Syn,
    Alias,
    Sem,
}

/// What `parent`'s definition `def` is; `None` when it has none.
fn kind(parent: &Language, clause: &LangWith, def: &Name) -> Result<Option<Kind>, Diagnostic> {
    if clause.kind == WithKind::Value {
        return Ok(parent.sems.iter().any(|s| s.name == def.text).then_some(Kind::Sem));
    }
    if parent.syns.iter().any(|s| s.name == def.text) {
        return Ok(Some(Kind::Syn));
    }
    match parent.types.iter().find(|(_, t)| t.name.text == def.text) {
        Some((_, t)) if t.definition.is_some() => Ok(Some(Kind::Alias)),
        Some((_, t)) => Err(Diagnostic::error(
            Code::Unsupported,
            def.span,
            format!(
                "`with` cannot merge type `{}` of language `{}`: it is a variant type declared with `type`",
                def.text, parent.name
            ),
        )
        .with_label("a `type` without definition")
        .with_secondary(t.name.span, "declared here")
        .with_note("`with` merges syns, type aliases and semantic functions, as in Miking")),
        None => Ok(None),
    }
}

/// Gives `parent`'s definition named by the clause the clause as its
/// root, and a merged type `own`'s names.
fn merge_root(own: &str, parent: &mut Language, clause: &LangWith, kind: Kind) {
    let (root, name) = (clause.name.span, &clause.name.text);
    match kind {
        Kind::Sem => parent.sems.iter_mut().filter(|s| s.name == *name).for_each(|s| s.root = root),
        Kind::Syn => {
            for syn in parent.syns.iter_mut().filter(|s| s.name == *name) {
                syn.root = root;
                syn.mangled = mangle(own, name);
                for con in &mut syn.cons {
                    con.mangled = mangle(own, &con.decl.name.text);
                }
            }
        }
        Kind::Alias => {
            for (mangled, _) in parent.types.iter_mut().filter(|(_, t)| t.name.text == *name) {
                *mangled = mangle(own, name);
            }
        }
    }
}

fn mixed(lang: &Lang, clause: &LangWith, syn: Span, alias: Span) -> Diagnostic {
    Diagnostic::error(
        Code::LanguageConflict,
        clause.name.span,
        format!("`with` clause of language `{}` merges a syn and a type alias", lang.name.text),
    )
    .with_label("the definitions meet here")
    .with_secondary(syn, "a syn")
    .with_secondary(alias, "a type alias")
    .with_note("a syn merges only with syns, and a type alias only with type aliases")
}

fn renamed(clause: &LangWith, def: &Name) -> Diagnostic {
    Diagnostic::error(
        Code::Unsupported,
        def.span,
        format!("`with` clause renames `{}` to `{}`, which is not supported", def.text, clause.name.text),
    )
    .with_label(format!("write `{}` here", clause.name.text))
    .with_note("Miking does not support renaming with `with` either: a clause merges definitions of its own name")
}

fn not_extended(lang: &Lang, from: &Name) -> Diagnostic {
    Diagnostic::error(
        Code::UnknownLanguage,
        from.span,
        format!("`with` clause names language `{}`, which `{}` does not extend", from.text, lang.name.text),
    )
    .with_label("not one of the languages after `=`")
    .with_note("a `with` clause merges definitions of the languages the language extends")
}

/// A source whose language lacks the definition: Miking skips it, so
/// this is a warning.
fn missing(clause: &LangWith, from: &Name, def: &Name) -> Diagnostic {
    let (code, what) = match clause.kind {
        WithKind::Type => (Code::UnboundType, "type"),
        WithKind::Value => (Code::UnboundVariable, "semantic function"),
    };
    let mut d = Diagnostic::error(code, def.span, format!("language `{}` has no {what} `{}`", from.text, def.text))
        .with_label("this part of the `with` clause does nothing");
    d.severity = Severity::Warning;
    d
}
