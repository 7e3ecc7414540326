//! Resolution of patterns: binders in a pattern are distinct, both sides of
//! `|` bind the same names (with the same identities), and names under `!`
//! bind nothing outside it.

use crate::scope::{Ns, Resolver};
use crate::NameKind;
use pmx_ast::{Name, NameId, Pat, PatKind, SmolStr, Span};
use pmx_diagnostics::{Code, Label};
use rustc_hash::FxHashMap;

/// The names a pattern binds, in order, with an index by name (a search
/// of the list for each binder made patterns with 100,000 binders take
/// minutes).
#[derive(Default)]
struct Bound {
    list: Vec<(SmolStr, NameId, Span)>,
    index: FxHashMap<SmolStr, usize>,
}

impl Bound {
    fn new() -> Bound {
        Bound::default()
    }

    /// The first binding of `text`.
    fn get(&self, text: &str) -> Option<&(SmolStr, NameId, Span)> {
        self.index.get(text).map(|&i| &self.list[i])
    }

    fn push(&mut self, entry: (SmolStr, NameId, Span)) {
        self.index.entry(entry.0.clone()).or_insert(self.list.len());
        self.list.push(entry);
    }
}

impl Resolver<'_> {
    /// Resolves a pattern and brings its binders into the current scope.
    pub(crate) fn pattern(&mut self, p: &mut Pat) {
        let mut bound = Bound::new();
        self.pat(p, &mut bound, None);
    }

    fn binder(&mut self, name: &mut Name, bound: &mut Bound, reuse: Option<&Bound>) {
        if name.is_anonymous() {
            self.bind(Ns::Value, name, NameKind::Value, false);
            return;
        }
        if let Some((_, _, first)) = bound.get(&name.text) {
            let first = *first;
            self.error(Code::DuplicateBinding, name.span, format!("`{}` is bound twice in one pattern", name.text))
                .secondary
                .push(Label::new(first, "first bound here"));
            return;
        }
        match reuse {
            Some(left) => match left.get(&name.text) {
                Some((_, id, _)) => self.bind_existing(name, *id),
                None => {
                    self.error(
                        Code::DuplicateBinding,
                        name.span,
                        format!("`{}` is bound on only one side of `|`", name.text),
                    )
                    .notes
                    .push("both sides of an or-pattern must bind the same variables".into());
                    self.bind(Ns::Value, name, NameKind::Value, false);
                }
            },
            None => self.bind(Ns::Value, name, NameKind::Value, false),
        }
        bound.push((name.text.clone(), name.id, name.span));
    }

    fn pat(&mut self, p: &mut Pat, bound: &mut Bound, reuse: Option<&Bound>) {
        match &mut p.kind {
            PatKind::Wild | PatKind::Int(_) | PatKind::Char(_) | PatKind::Bool(_) | PatKind::Error => {}
            PatKind::Bind(name) => self.binder(name, bound, reuse),
            PatKind::Con(con, arg) => {
                self.reference(Ns::Con, con);
                self.pat(arg, bound, reuse);
            }
            PatKind::Record(fields) => {
                self.distinct_labels(fields.iter().map(|(l, _)| l));
                for (_, f) in fields {
                    self.pat(f, bound, reuse);
                }
            }
            PatKind::Seq(items) => {
                for item in items {
                    self.pat(item, bound, reuse);
                }
            }
            PatKind::Edge { prefix, middle, suffix } => {
                for item in prefix {
                    self.pat(item, bound, reuse);
                }
                if let Some(m) = middle {
                    self.binder(m, bound, reuse);
                }
                for item in suffix {
                    self.pat(item, bound, reuse);
                }
            }
            PatKind::And(a, b) => {
                self.pat(a, bound, reuse);
                self.pat(b, bound, reuse);
            }
            PatKind::Or(a, b) => {
                // In `A | B | C`, parsed as `A | (B | C)`, the inner `|` is
                // resolved with the outer left side's names to reuse, so
                // that all three alternatives bind the same identities.
                let mut left = Bound::new();
                self.pat(a, &mut left, reuse);
                let mut right = Bound::new();
                self.pat(b, &mut right, Some(&left));
                for (text, _, span) in &left.list {
                    if right.get(text).is_none() {
                        let span = *span;
                        self.error(Code::DuplicateBinding, span, format!("`{text}` is bound on only one side of `|`"))
                            .notes
                            .push("both sides of an or-pattern must bind the same variables".into());
                    }
                }
                for entry in left.list {
                    if let Some((_, _, first)) = bound.get(&entry.0) {
                        let first = *first;
                        self.error(
                            Code::DuplicateBinding,
                            entry.2,
                            format!("`{}` is bound twice in one pattern", entry.0),
                        )
                        .secondary
                        .push(Label::new(first, "first bound here"));
                    } else {
                        bound.push(entry);
                    }
                }
            }
            PatKind::Not(inner) => {
                // Names under `!` match nothing and must not be visible.
                let mark = self.mark();
                let mut hidden = Bound::new();
                self.pat(inner, &mut hidden, None);
                self.close(mark);
            }
        }
    }
}
