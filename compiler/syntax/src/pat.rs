//! Lowering of patterns.

use crate::{lexical, Lower};
use pmx_ast::*;
use tree_sitter::Node;

impl Lower<'_> {
    pub(crate) fn field_pat(&mut self, n: Node, field: &str) -> Pat {
        match n.child_by_field_name(field) {
            Some(c) => self.pat(c),
            None => {
                let s = self.span(n);
                Pat::new(PatKind::Error, Span::new(s.file, s.end, s.end))
            }
        }
    }

    pub(crate) fn pat(&mut self, n: Node) -> Pat {
        let span = self.span(n);
        let kind = match n.kind() {
            "var_pat" => match self.children(n).first() {
                Some(c) => PatKind::Bind(self.name(*c)),
                None => PatKind::Error,
            },
            "wildcard" => PatKind::Wild,
            "integer" => match lexical::int(self.text(n)) {
                Ok(i) => PatKind::Int(i),
                Err(msg) => {
                    self.invalid_literal(span, msg);
                    PatKind::Error
                }
            },
            "char" => match self.char_value(n) {
                Some(c) => PatKind::Char(c),
                None => PatKind::Error,
            },
            "string" => return self.string_pat(n),
            "true" => PatKind::Bool(true),
            "false" => PatKind::Bool(false),
            "con_pat" => {
                let con = self.binder(n.child_by_field_name("constructor"), n);
                let arg = match n.child_by_field_name("argument") {
                    Some(a) => self.pat(a),
                    None => Pat::new(PatKind::Wild, Span::new(span.file, span.end, span.end)),
                };
                PatKind::Con(con, Box::new(arg))
            }
            "tuple_pat" => {
                let elems = self.children(n);
                PatKind::Record(
                    elems.into_iter().enumerate().map(|(i, c)| (self.index_label(i, c), self.pat(c))).collect(),
                )
            }
            "paren_pat" => match self.children(n).first() {
                Some(c) => return self.pat(*c),
                None => PatKind::Error,
            },
            "unit_pat" => PatKind::Record(Vec::new()),
            "record_pat" => PatKind::Record(
                self.children_of(n, "record_pat_field")
                    .into_iter()
                    .filter_map(|f| {
                        let label = self.label(f.child_by_field_name("label")?);
                        Some((label, self.field_pat(f, "pattern")))
                    })
                    .collect(),
            ),
            "seq_pat" => PatKind::Seq(self.children(n).into_iter().map(|c| self.pat(c)).collect()),
            "concat_pat" => {
                let edge = |this: &mut Self, field: &str| -> Vec<Pat> {
                    match n.child_by_field_name(field) {
                        Some(e) => match this.pat(e).kind {
                            PatKind::Seq(items) => items,
                            _ => Vec::new(),
                        },
                        None => Vec::new(),
                    }
                };
                let prefix = edge(self, "prefix");
                let suffix = edge(self, "suffix");
                let middle = n.child_by_field_name("middle").and_then(|m| match self.pat(m).kind {
                    PatKind::Bind(name) => Some(name),
                    _ => None,
                });
                PatKind::Edge { prefix, middle, suffix }
            }
            "and_pat" => PatKind::And(Box::new(self.field_pat(n, "left")), Box::new(self.field_pat(n, "right"))),
            "or_pat" => PatKind::Or(Box::new(self.field_pat(n, "left")), Box::new(self.field_pat(n, "right"))),
            "not_pat" => PatKind::Not(Box::new(self.field_pat(n, "pattern"))),
            _ => PatKind::Error,
        };
        Pat::new(kind, span)
    }

    /// A string pattern is a sequence pattern of characters.
    fn string_pat(&mut self, n: Node) -> Pat {
        let span = self.span(n);
        let chars = self.string_value(n).chars().map(|c| Pat::new(PatKind::Char(c), span)).collect();
        Pat::new(PatKind::Seq(chars), span)
    }
}
