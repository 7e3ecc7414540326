//! Lowering of expressions.

use crate::{lexical, Lower};
use pmx_ast::*;
use tree_sitter::Node;

impl Lower<'_> {
    /// The expression in a field; an `Error` expression when the field is
    /// missing (its syntax error is reported separately).
    pub(crate) fn field_expr(&mut self, n: Node, field: &str) -> Expr {
        match n.child_by_field_name(field) {
            Some(c) => self.expr(c),
            None => {
                let s = self.span(n);
                Expr::new(ExprKind::Error, Span::new(s.file, s.end, s.end))
            }
        }
    }

    pub(crate) fn expr(&mut self, n: Node) -> Expr {
        let span = self.span(n);
        let kind = match n.kind() {
            "var" => match self.children(n).first() {
                Some(c) => ExprKind::Var(self.name(*c)),
                None => ExprKind::Error,
            },
            "integer" => match lexical::int(self.text(n)) {
                Ok(i) => ExprKind::Lit(Lit::Int(i)),
                Err(msg) => {
                    self.invalid_literal(span, msg);
                    ExprKind::Error
                }
            },
            "float" => match lexical::float(self.text(n)) {
                Ok(f) => ExprKind::Lit(Lit::Float(f)),
                Err(msg) => {
                    self.invalid_literal(span, msg);
                    ExprKind::Error
                }
            },
            "char" => match self.char_value(n) {
                Some(c) => ExprKind::Lit(Lit::Char(c)),
                None => ExprKind::Error,
            },
            "string" => ExprKind::Lit(Lit::Str(self.string_value(n))),
            "true" => ExprKind::Lit(Lit::Bool(true)),
            "false" => ExprKind::Lit(Lit::Bool(false)),
            "never" => ExprKind::Never,
            "unit" => ExprKind::Record(Vec::new()),
            "paren_expr" => match self.children(n).first() {
                Some(c) => return self.expr(*c),
                None => ExprKind::Error,
            },
            "tuple" => {
                let elems = self.children(n);
                ExprKind::Record(
                    elems.into_iter().enumerate().map(|(i, c)| (self.index_label(i, c), self.expr(c))).collect(),
                )
            }
            "seq_literal" => ExprKind::Seq(self.children(n).into_iter().map(|c| self.expr(c)).collect()),
            "record" => ExprKind::Record(self.record_fields(n)),
            "record_update" => {
                let record = self.field_expr(n, "record");
                ExprKind::RecordUpdate(Box::new(record), self.record_fields(n))
            }
            "projection" => {
                let record = self.field_expr(n, "record");
                match n.child_by_field_name("label") {
                    Some(l) => ExprKind::Proj(Box::new(record), self.label(l)),
                    None => ExprKind::Error,
                }
            }
            "application" => {
                let f = self.field_expr(n, "function");
                let a = self.field_expr(n, "argument");
                ExprKind::App(Box::new(f), Box::new(a))
            }
            "con_app" => {
                let con = self.binder(n.child_by_field_name("constructor"), n);
                let arg = self.field_expr(n, "argument");
                ExprKind::ConApp(con, Box::new(arg))
            }
            "sequence_expr" => {
                let first = self.field_expr(n, "first");
                let rest = self.field_expr(n, "rest");
                let name = Name::unresolved("", Span::new(span.file, first.span.end, first.span.end));
                let binding = Binding { name, annotation: None, span: first.span, value: first, scheme: Ty::unknown() };
                ExprKind::Let(Box::new(binding), Box::new(rest))
            }
            "let_expr" => {
                let binding = self.binding(n);
                let body = self.field_expr(n, "body");
                ExprKind::Let(Box::new(binding), Box::new(body))
            }
            "rec_let_expr" => {
                let bindings = self.children_of(n, "rec_binding").into_iter().map(|b| self.binding(b)).collect();
                ExprKind::RecLets(bindings, Box::new(self.field_expr(n, "body")))
            }
            "lam_expr" => {
                let param = self.binder(n.child_by_field_name("param"), n);
                let annotation = n.child_by_field_name("type").map(|t| self.type_expr(t));
                let body = self.field_expr(n, "body");
                ExprKind::Lam { param, annotation, body: Box::new(body) }
            }
            "if_expr" => {
                let cond = self.field_expr(n, "condition");
                let pattern = Pat::new(PatKind::Bool(true), cond.span);
                ExprKind::Match {
                    scrutinee: Box::new(cond),
                    pattern: Box::new(pattern),
                    then: Box::new(self.field_expr(n, "then")),
                    otherwise: Box::new(self.field_expr(n, "else")),
                }
            }
            "match_expr" => ExprKind::Match {
                scrutinee: Box::new(self.field_expr(n, "scrutinee")),
                pattern: Box::new(self.field_pat(n, "pattern")),
                then: Box::new(self.field_expr(n, "then")),
                otherwise: Box::new(self.field_expr(n, "else")),
            },
            "match_in_expr" => ExprKind::Match {
                scrutinee: Box::new(self.field_expr(n, "scrutinee")),
                pattern: Box::new(self.field_pat(n, "pattern")),
                then: Box::new(self.field_expr(n, "body")),
                otherwise: Box::new(Expr::new(ExprKind::Never, span)),
            },
            "switch_expr" => return self.switch(n),
            "type_in_expr" => {
                let decl = self.type_decl(n);
                ExprKind::TypeDecl(Box::new(decl), Box::new(self.field_expr(n, "body")))
            }
            "con_in_expr" => {
                let decl = self.con_decl(n);
                ExprKind::ConDecl(Box::new(decl), Box::new(self.field_expr(n, "body")))
            }
            "utest_expr" => {
                let utest = self.utest(n);
                ExprKind::Utest(Box::new(utest), Box::new(self.field_expr(n, "body")))
            }
            "external_expr" => {
                let decl = self.external_decl(n);
                ExprKind::External(Box::new(decl), Box::new(self.field_expr(n, "body")))
            }
            "use_expr" => {
                self.unsupported(
                    span,
                    "MLang (`lang`, `syn`, `sem`, `use`)",
                    "pmx compiles MExpr; write the program without language fragments",
                );
                return self.field_expr(n, "body");
            }
            _ => ExprKind::Error,
        };
        Expr::new(kind, span)
    }

    /// `switch s case p1 then e1 case p2 then e2 end` is a chain of matches
    /// ending in `never`. The scrutinee is evaluated once: unless it is a
    /// variable, it is bound to a name that no program can write.
    fn switch(&mut self, n: Node) -> Expr {
        let span = self.span(n);
        let scrutinee = self.field_expr(n, "scrutinee");
        let (binding, subject) = match &scrutinee.kind {
            ExprKind::Var(_) | ExprKind::Error => (None, scrutinee),
            _ => {
                let name = Name::unresolved("switch#", scrutinee.span);
                let var = Expr::new(ExprKind::Var(name.clone()), scrutinee.span);
                let b =
                    Binding { name, annotation: None, span: scrutinee.span, value: scrutinee, scheme: Ty::unknown() };
                (Some(b), var)
            }
        };
        let cases: Vec<(Pat, Expr, Span)> = self
            .children_of(n, "switch_case")
            .into_iter()
            .map(|c| (self.field_pat(c, "pattern"), self.field_expr(c, "body"), self.span(c)))
            .collect();
        let mut acc = Expr::new(ExprKind::Never, span);
        for (pattern, body, case_span) in cases.into_iter().rev() {
            acc = Expr::new(
                ExprKind::Match {
                    scrutinee: Box::new(subject.clone()),
                    pattern: Box::new(pattern),
                    then: Box::new(body),
                    otherwise: Box::new(acc),
                },
                Span::new(span.file, case_span.start, span.end),
            );
        }
        match binding {
            Some(b) => Expr::new(ExprKind::Let(Box::new(b), Box::new(acc)), span),
            None => {
                acc.span = span;
                acc
            }
        }
    }

    fn record_fields(&mut self, n: Node) -> Vec<(Label, Expr)> {
        self.children_of(n, "record_field")
            .into_iter()
            .filter_map(|f| {
                let label = self.label(f.child_by_field_name("label")?);
                Some((label, self.field_expr(f, "value")))
            })
            .collect()
    }

    pub(crate) fn label(&mut self, n: Node) -> Label {
        let name = self.name(n);
        if name.text.starts_with('-') {
            self.invalid_literal(name.span, "a record label cannot be a negative number".into());
        }
        Label { text: name.text, span: name.span }
    }

    /// The label of the i-th element of a tuple.
    pub(crate) fn index_label(&self, i: usize, n: Node) -> Label {
        let s = self.span(n);
        Label { text: SmolStr::new(i.to_string()), span: Span::new(s.file, s.start, s.start) }
    }

    pub(crate) fn char_value(&mut self, n: Node) -> Option<char> {
        let span = self.span(n);
        let body = lexical::quoted_body(self.text(n));
        match lexical::unescape(body) {
            Ok(s) => {
                let mut chars = s.chars();
                match (chars.next(), chars.next()) {
                    (Some(c), None) => Some(c),
                    _ => {
                        self.invalid_literal(span, "a character literal holds exactly one character".into());
                        None
                    }
                }
            }
            Err((_, msg)) => {
                self.invalid_literal(span, msg);
                None
            }
        }
    }
}
