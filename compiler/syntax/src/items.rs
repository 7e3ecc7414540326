//! Lowering of a file: includes, top-level declarations, the `mexpr` body.

use crate::reuse::{Part, Reuse, Top};
use crate::{lexical, Lower};
use pmx_ast::*;
use tree_sitter::Node;

impl Lower<'_> {
    /// Lowers the top-level nodes, copying those `reuse` has from the
    /// previous version; records in `self.tops` where each one went.
    pub(crate) fn module(&mut self, root: Node, reuse: Option<&Reuse>) -> Module {
        let mut module = Module::default();
        let mut cursor = root.walk();
        // tree-sitter marks a top-level ERROR node as extra (like a
        // comment), so it is kept here by name.
        let children: Vec<Node> = root.named_children(&mut cursor).filter(|c| c.is_error() || !c.is_extra()).collect();
        for child in children {
            if child.is_error() {
                // A declaration that did not parse still defines its name,
                // so that its uses are not reported as unbound too (the
                // syntax error is the one error).
                if let Some(item) = self.placeholder(child) {
                    module.items.push(item);
                }
                continue;
            }
            if reuse.is_some_and(|r| r.take(child, &mut module, &mut self.tops)) {
                self.uses += self.tops.last().map_or(0, |t| t.uses);
                continue;
            }
            let uses_before = self.uses;
            let part = match crate::kind(child) {
                "include" => match self.field(child, "path") {
                    Some(path) => {
                        let text = self.string_value(path);
                        module.includes.push(Include { path: text, span: self.span(child) });
                        Part::Include(module.includes.len() - 1)
                    }
                    None => Part::Nothing,
                },
                "mexpr_section" => {
                    module.main = Some(self.field_expr(child, "body"));
                    Part::Main
                }
                "mlang_block" => {
                    let lang = self.lang(child, module.items.len());
                    self.langs.push(lang);
                    Part::Lang
                }
                _ => match self.item(child) {
                    Some(item) => {
                        module.items.push(item);
                        Part::Item(module.items.len() - 1)
                    }
                    None => Part::Nothing,
                },
            };
            let uses = self.uses - uses_before;
            self.tops.push(Top { start: child.start_byte(), end: child.end_byte(), kind: child.kind_id(), part, uses });
        }
        module
    }

    /// `let NAME` at the start of a line, at the start of a top-level
    /// ERROR node: a binding of `NAME` to an error (whose type, `Unknown`,
    /// unifies with everything).
    fn placeholder(&mut self, n: Node) -> Option<Item> {
        if n.start_position().column != 0 {
            return None;
        }
        let text = self.text(n);
        let rest = text.strip_prefix("let")?;
        let name_at = rest.len() - rest.trim_start().len();
        if name_at == 0 {
            return None;
        }
        let rest = &rest[name_at..];
        let len = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '\'')).unwrap_or(rest.len());
        let name = &rest[..len];
        if !name.starts_with(|c: char| c.is_ascii_lowercase() || c == '_') || name == "_" {
            return None;
        }
        let span = self.span(n);
        let start = span.start + 3 + name_at as u32;
        let name = Name::unresolved(name, Span::new(span.file, start, start + len as u32));
        let value = Expr::new(ExprKind::Error, span);
        Some(Item::Let(Binding { name, annotation: None, value, scheme: Ty::unknown(), span }))
    }

    fn item(&mut self, n: Node) -> Option<Item> {
        let span = self.span(n);
        Some(match crate::kind(n) {
            "top_let" => Item::Let(self.binding(n)),
            "top_recursive" => {
                let bindings = self.children_of(n, "rec_binding").into_iter().map(|b| self.binding(b)).collect();
                Item::RecLets(bindings, span)
            }
            "top_type" => Item::Type(self.type_decl(n)),
            "top_con" => Item::Con(self.con_decl(n)),
            "top_utest" => Item::Utest(self.utest(n)),
            "top_external" => Item::External(self.external_decl(n)),
            _ => return None,
        })
    }

    /// `let x : T = e`, at the top level, in a recursive group or before `in`.
    pub(crate) fn binding(&mut self, n: Node) -> Binding {
        let name = self.binder(self.field(n, "name"), n);
        let annotation = self.field(n, "type").map(|t| Box::new(self.type_expr(t)));
        let value = self.field_expr(n, "value");
        let span = self.span(n);
        let span = Span::new(span.file, span.start, value.span.end.max(name.span.end));
        Binding { name, annotation, value, scheme: Ty::unknown(), span }
    }

    pub(crate) fn binder(&mut self, n: Option<Node>, parent: Node) -> Name {
        match n {
            Some(n) => self.name(n),
            None => {
                let s = self.span(parent);
                Name::unresolved("", Span::new(s.file, s.start, s.start))
            }
        }
    }

    pub(crate) fn type_decl(&mut self, n: Node) -> TypeDecl {
        let name = self.binder(self.field(n, "name"), n);
        let params = self.fields(n, "param").into_iter().map(|p| self.name(p)).collect();
        let definition = self.field(n, "definition").map(|t| self.type_expr(t));
        TypeDecl { name, params, definition, span: self.decl_span(n) }
    }

    pub(crate) fn con_decl(&mut self, n: Node) -> ConDecl {
        let name = self.binder(self.field(n, "name"), n);
        let annotation = self.field(n, "type").map(|t| self.type_expr(t));
        ConDecl { name, annotation, scheme: Ty::unknown(), span: self.decl_span(n) }
    }

    pub(crate) fn external_decl(&mut self, n: Node) -> ExternalDecl {
        let name = self.binder(self.field(n, "name"), n);
        let effect = self.field(n, "effect").is_some();
        let annotation = match self.field(n, "type") {
            Some(t) => self.type_expr(t),
            None => TypeExpr { kind: TypeExprKind::Error, span: self.span(n) },
        };
        ExternalDecl { name, effect, annotation, scheme: Ty::unknown(), span: self.decl_span(n) }
    }

    pub(crate) fn utest(&mut self, n: Node) -> Utest {
        Utest {
            test: self.field_expr(n, "test"),
            expected: self.field_expr(n, "expected"),
            using: self.field(n, "using").map(|u| self.expr(u)),
            on_fail: self.field(n, "on_fail").map(|u| self.expr(u)),
            span: self.decl_span(n),
        }
    }

    /// The span of a declaration, without the `in` body of its expression
    /// form.
    fn decl_span(&self, n: Node) -> Span {
        let span = self.span(n);
        match self.field(n, "body") {
            Some(body) => {
                let mut end = body.start_byte() as u32;
                let text = self.text.as_bytes();
                // Stop before the `in` keyword and the space around it.
                while end > span.start && text[end as usize - 1].is_ascii_whitespace() {
                    end -= 1;
                }
                if end >= span.start + 2 && &text[end as usize - 2..end as usize] == b"in" {
                    end -= 2;
                }
                while end > span.start && text[end as usize - 1].is_ascii_whitespace() {
                    end -= 1;
                }
                Span::new(span.file, span.start, end)
            }
            None => span,
        }
    }

    /// The value of a string literal token, reporting bad escapes.
    pub(crate) fn string_value(&mut self, n: Node) -> String {
        let token = self.text(n);
        let body = lexical::quoted_body(token);
        match lexical::unescape(body) {
            Ok(s) => s,
            Err((offset, msg)) => {
                let span = self.span(n);
                let at = span.start + 1 + offset as u32;
                // The backslash and the character after it, which can take
                // more than one byte (a span must not end inside it).
                let escaped = body[offset + 1..].chars().next().map_or(0, char::len_utf8) as u32;
                self.invalid_literal(Span::new(span.file, at, (at + 1 + escaped).min(span.end)), msg);
                body.to_string()
            }
        }
    }
}
