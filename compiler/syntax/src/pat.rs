//! Lowering of patterns.

use crate::{lexical, Lower};
use pmx_ast::*;
use tree_sitter::Node;

/// The function that lowers each kind of pattern node.
type LowerPatFn<'t> = for<'a, 'n> fn(&'a mut Lower<'t>, Node<'n>) -> Pat;

fn lower_pat_fn<'t>(kind: &str) -> LowerPatFn<'t> {
    match kind {
        "con_pat" => Lower::con_pat,
        "tuple_pat" => Lower::tuple_pat,
        "record_pat" => Lower::record_pat,
        "seq_pat" => Lower::seq_pat,
        "concat_pat" => Lower::concat_pat,
        "and_pat" | "or_pat" => Lower::binary_pat,
        "not_pat" => Lower::not_pat,
        "string" => Lower::string_pat,
        _ => Lower::leaf_pat,
    }
}

impl Lower<'_> {
    pub(crate) fn field_pat(&mut self, n: Node, field: &'static str) -> Pat {
        match self.field(n, field) {
            Some(c) => self.pat(c),
            None => self.missing_pat(n),
        }
    }

    fn missing_pat(&self, n: Node) -> Pat {
        let s = self.span(n);
        Pat::new(PatKind::Error, Span::new(s.file, s.end, s.end))
    }

    fn field_pat_box(&mut self, n: Node, field: &'static str) -> Box<Pat> {
        Box::new(self.field_pat(n, field))
    }

    /// Lowers a pattern. Like [`Lower::expr`], this only dispatches, so
    /// that deeply nested patterns need little stack (with every form in
    /// this function its frame took 3.4 KB in a debug build).
    pub(crate) fn pat(&mut self, n: Node) -> Pat {
        let mut n = n;
        let mut parens = 0;
        while crate::kind(n) == "paren_pat" {
            match self.first(n) {
                Some(c) => {
                    n = c;
                    parens += 1;
                }
                None => break,
            }
        }
        if !self.enter(1 + parens, n) {
            return Pat::new(PatKind::Error, self.span(n));
        }
        let p = lower_pat_fn(crate::kind(n))(self, n);
        self.depth -= 1 + parens;
        p
    }

    /// Variables, wildcards, literals, `()` and anything unknown (an error).
    fn leaf_pat(&mut self, n: Node) -> Pat {
        let span = self.span(n);
        let kind = match crate::kind(n) {
            "var_pat" => match self.first(n) {
                Some(c) => PatKind::Bind(self.name(c)),
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
            "true" => PatKind::Bool(true),
            "false" => PatKind::Bool(false),
            "unit_pat" => PatKind::Record(Vec::new()),
            _ => PatKind::Error,
        };
        Pat::new(kind, span)
    }

    fn con_pat(&mut self, n: Node) -> Pat {
        let span = self.span(n);
        let con = self.binder(self.field(n, "constructor"), n);
        let arg = match self.field(n, "argument") {
            Some(a) => Box::new(self.pat(a)),
            None => Box::new(Pat::new(PatKind::Wild, Span::new(span.file, span.end, span.end))),
        };
        Pat::new(PatKind::Con(con, arg), span)
    }

    fn tuple_pat(&mut self, n: Node) -> Pat {
        let mut fields = Vec::new();
        for (i, c) in self.children(n).into_iter().enumerate() {
            let label = self.index_label(i, c);
            fields.push((label, self.pat(c)));
        }
        Pat::new(PatKind::Record(fields), self.span(n))
    }

    fn record_pat(&mut self, n: Node) -> Pat {
        let mut fields = Vec::new();
        for f in self.children_of(n, "record_pat_field") {
            if let Some(l) = self.field(f, "label") {
                let label = self.label(l);
                fields.push((label, self.field_pat(f, "pattern")));
            }
        }
        Pat::new(PatKind::Record(fields), self.span(n))
    }

    fn seq_pat(&mut self, n: Node) -> Pat {
        let mut items = Vec::new();
        for c in self.children(n) {
            items.push(self.pat(c));
        }
        Pat::new(PatKind::Seq(items), self.span(n))
    }

    fn concat_pat(&mut self, n: Node) -> Pat {
        let edge = |this: &mut Self, field: &'static str| -> Vec<Pat> {
            match this.field(n, field) {
                Some(e) => match this.pat(e).kind {
                    PatKind::Seq(items) => items,
                    _ => Vec::new(),
                },
                None => Vec::new(),
            }
        };
        let prefix = edge(self, "prefix");
        let suffix = edge(self, "suffix");
        let middle = self.field(n, "middle").and_then(|m| match self.pat(m).kind {
            PatKind::Bind(name) => Some(name),
            _ => None,
        });
        Pat::new(PatKind::Edge { prefix, middle, suffix }, self.span(n))
    }

    /// `p & q` and `p | q`.
    fn binary_pat(&mut self, n: Node) -> Pat {
        let left = self.field_pat_box(n, "left");
        let right = self.field_pat_box(n, "right");
        let kind = if crate::kind(n) == "and_pat" { PatKind::And(left, right) } else { PatKind::Or(left, right) };
        Pat::new(kind, self.span(n))
    }

    fn not_pat(&mut self, n: Node) -> Pat {
        let inner = self.field_pat_box(n, "pattern");
        Pat::new(PatKind::Not(inner), self.span(n))
    }

    /// A string pattern is a sequence pattern of characters.
    fn string_pat(&mut self, n: Node) -> Pat {
        let span = self.span(n);
        let chars = self.string_value(n).chars().map(|c| Pat::new(PatKind::Char(c), span)).collect();
        Pat::new(PatKind::Seq(chars), span)
    }
}
