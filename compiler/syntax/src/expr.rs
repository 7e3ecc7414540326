//! Lowering of expressions.

use crate::{lexical, Lower};
use pmx_ast::*;
use tree_sitter::Node;

/// The function that lowers each kind of expression node.
type LowerFn<'t> = for<'a, 'n> fn(&'a mut Lower<'t>, Node<'n>) -> Expr;

fn lower_fn<'t>(kind: &str) -> LowerFn<'t> {
    match kind {
        "tuple" => Lower::tuple_expr,
        "seq_literal" => Lower::seq_expr,
        "record" => Lower::record_expr,
        "record_update" => Lower::record_update_expr,
        "projection" => Lower::projection_expr,
        "application" => Lower::application_expr,
        "con_app" => Lower::con_app_expr,
        "sequence_expr" => Lower::sequence_expr,
        "let_expr" => Lower::let_expr,
        "rec_let_expr" => Lower::rec_let_expr,
        "lam_expr" => Lower::lam_expr,
        "if_expr" => Lower::if_expr,
        "match_expr" => Lower::match_expr,
        "match_in_expr" => Lower::match_in_expr,
        "switch_expr" => Lower::switch,
        "type_in_expr" | "con_in_expr" | "utest_expr" | "external_expr" => Lower::decl_in_expr,
        "use_expr" => Lower::use_expr,
        _ => Lower::leaf_expr,
    }
}

impl Lower<'_> {
    /// The expression in a field; an `Error` expression when the field is
    /// missing (its syntax error is reported separately).
    pub(crate) fn field_expr(&mut self, n: Node, field: &'static str) -> Expr {
        match self.field(n, field) {
            Some(c) => self.expr(c),
            None => self.missing_expr(n),
        }
    }

    /// [`Lower::field_expr`], boxed. The recursive forms box their
    /// subexpressions with this, so that their frames hold pointers rather
    /// than whole expressions.
    fn field_box(&mut self, n: Node, field: &'static str) -> Box<Expr> {
        Box::new(self.field_expr(n, field))
    }

    /// The `Error` expression for a field that is missing from `n`.
    fn missing_expr(&self, n: Node) -> Expr {
        let s = self.span(n);
        Expr::new(ExprKind::Error, Span::new(s.file, s.end, s.end))
    }

    /// Lowers an expression. This is the recursion of the lowering, so it
    /// only dispatches, through one call: each form is lowered by its own
    /// function, which keeps the frames on the recursive path small even in
    /// unoptimised builds (one function with every form in it took about
    /// 16 KB of stack per nesting level in a debug build, so 100,000 nested
    /// expressions overflowed the driver's 1 GiB stack; a `match` with a
    /// call per form still took 700 bytes). Parentheses are unwrapped in a
    /// loop and cost no stack at all.
    pub(crate) fn expr(&mut self, n: Node) -> Expr {
        let (n, parens) = self.unparen(n);
        if !self.enter(1 + parens, n) {
            return Expr::new(ExprKind::Error, self.span(n));
        }
        let e = lower_fn(crate::kind(n))(self, n);
        self.depth -= 1 + parens;
        e
    }

    /// The expression inside any number of parentheses; a `paren_expr`
    /// with nothing inside is left as it is (and lowered to an error).
    /// The expression inside any parentheses, and how many there were.
    fn unparen<'a>(&self, mut n: Node<'a>) -> (Node<'a>, usize) {
        let mut parens = 0;
        while crate::kind(n) == "paren_expr" {
            match self.first(n) {
                Some(c) => {
                    n = c;
                    parens += 1;
                }
                None => break,
            }
        }
        (n, parens)
    }

    /// Variables, literals, `never`, `()` and anything unknown (an error).
    fn leaf_expr(&mut self, n: Node) -> Expr {
        let span = self.span(n);
        let kind = match crate::kind(n) {
            "var" => match self.first(n) {
                Some(c) if crate::kind(c) == "escaped_frozen" => frozen(self.name(c), span),
                Some(c) => ExprKind::Var(self.name(c)),
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
            _ => ExprKind::Error,
        };
        Expr::new(kind, span)
    }

    fn tuple_expr(&mut self, n: Node) -> Expr {
        let mut fields = Vec::new();
        for (i, c) in self.children(n).into_iter().enumerate() {
            let label = self.index_label(i, c);
            fields.push((label, self.expr(c)));
        }
        Expr::new(ExprKind::Record(fields), self.span(n))
    }

    fn seq_expr(&mut self, n: Node) -> Expr {
        // A plain loop: an iterator chain adds a dozen frames per level.
        let mut items = Vec::new();
        for c in self.children(n) {
            items.push(self.expr(c));
        }
        Expr::new(ExprKind::Seq(items), self.span(n))
    }

    fn record_expr(&mut self, n: Node) -> Expr {
        let fields = self.record_fields(n);
        Expr::new(ExprKind::Record(fields), self.span(n))
    }

    fn record_update_expr(&mut self, n: Node) -> Expr {
        let record = self.field_box(n, "record");
        let fields = self.record_fields(n);
        Expr::new(ExprKind::RecordUpdate(record, fields), self.span(n))
    }

    fn projection_expr(&mut self, n: Node) -> Expr {
        let record = self.field_box(n, "record");
        let kind = match self.field(n, "label") {
            Some(l) => ExprKind::Proj(record, self.label(l)),
            None => ExprKind::Error,
        };
        Expr::new(kind, self.span(n))
    }

    fn application_expr(&mut self, n: Node) -> Expr {
        let f = self.field_box(n, "function");
        let a = self.field_box(n, "argument");
        Expr::new(ExprKind::App(f, a), self.span(n))
    }

    fn con_app_expr(&mut self, n: Node) -> Expr {
        let con = self.binder(self.field(n, "constructor"), n);
        let arg = self.field_box(n, "argument");
        Expr::new(ExprKind::ConApp(con, arg), self.span(n))
    }

    fn sequence_expr(&mut self, n: Node) -> Expr {
        let binding = self.sequence_binding(n);
        let rest = self.field_box(n, "rest");
        Expr::new(ExprKind::Let(binding, rest), self.span(n))
    }

    /// The first part of `a; b`, bound to the anonymous name.
    fn sequence_binding(&mut self, n: Node) -> Box<Binding> {
        let first = self.field_expr(n, "first");
        let name = Name::unresolved("", Span::new(first.span.file, first.span.end, first.span.end));
        Box::new(Binding { name, annotation: None, span: first.span, value: first, scheme: Ty::unknown() })
    }

    fn let_expr(&mut self, n: Node) -> Expr {
        let binding = self.binding_box(n);
        let body = self.field_box(n, "body");
        Expr::new(ExprKind::Let(binding, body), self.span(n))
    }

    fn binding_box(&mut self, n: Node) -> Box<Binding> {
        Box::new(self.binding(n))
    }

    fn rec_let_expr(&mut self, n: Node) -> Expr {
        let bindings = self.children_of(n, "rec_binding").into_iter().map(|b| self.binding(b)).collect();
        let body = self.field_box(n, "body");
        Expr::new(ExprKind::RecLets(bindings, body), self.span(n))
    }

    fn lam_expr(&mut self, n: Node) -> Expr {
        let param = self.binder(self.field(n, "param"), n);
        let annotation = self.field(n, "type").map(|t| Box::new(self.type_expr(t)));
        let body = self.field_box(n, "body");
        Expr::new(ExprKind::Lam { param, annotation, body }, self.span(n))
    }

    fn if_expr(&mut self, n: Node) -> Expr {
        let scrutinee = self.field_box(n, "condition");
        let pattern = Box::new(Pat::new(PatKind::Bool(true), scrutinee.span));
        let then = self.field_box(n, "then");
        let otherwise = self.field_box(n, "else");
        Expr::new(ExprKind::Match { scrutinee, pattern, then, otherwise }, self.span(n))
    }

    fn match_expr(&mut self, n: Node) -> Expr {
        let scrutinee = self.field_box(n, "scrutinee");
        let pattern = Box::new(self.field_pat(n, "pattern"));
        let then = self.field_box(n, "then");
        let otherwise = self.field_box(n, "else");
        Expr::new(ExprKind::Match { scrutinee, pattern, then, otherwise }, self.span(n))
    }

    fn match_in_expr(&mut self, n: Node) -> Expr {
        let span = self.span(n);
        let scrutinee = self.field_box(n, "scrutinee");
        let pattern = Box::new(self.field_pat(n, "pattern"));
        let then = self.field_box(n, "body");
        let otherwise = Box::new(Expr::new(ExprKind::Never, span));
        Expr::new(ExprKind::Match { scrutinee, pattern, then, otherwise }, span)
    }

    /// `type`, `con`, `utest` and `external` followed by `in`.
    fn decl_in_expr(&mut self, n: Node) -> Expr {
        let kind = match crate::kind(n) {
            "type_in_expr" => {
                let decl = Box::new(self.type_decl(n));
                ExprKind::TypeDecl(decl, self.field_box(n, "body"))
            }
            "con_in_expr" => {
                let decl = Box::new(self.con_decl(n));
                ExprKind::ConDecl(decl, self.field_box(n, "body"))
            }
            "utest_expr" => {
                let utest = Box::new(self.utest(n));
                ExprKind::Utest(utest, self.field_box(n, "body"))
            }
            _ => {
                let decl = Box::new(self.external_decl(n));
                ExprKind::External(decl, self.field_box(n, "body"))
            }
        };
        Expr::new(kind, self.span(n))
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
        // A plain loop: an iterator chain adds several frames per level.
        let mut fields = Vec::new();
        for f in self.children_of(n, "record_field") {
            if let Some(l) = self.field(f, "label") {
                let label = self.label(l);
                fields.push((label, self.field_expr(f, "value")));
            }
        }
        fields
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

/// `#frozen"x"`: `x` given to an identity whose parameter is
/// [`pmx_ast::FROZEN_MARK`], which the type checker recognises (and
/// removes) to give `x` its type uninstantiated, as Miking does.
fn frozen(name: Name, span: Span) -> ExprKind {
    let mark = Name::unresolved(pmx_ast::FROZEN_MARK, span);
    let body = Expr::new(ExprKind::Var(mark.clone()), span);
    let identity = Expr::new(ExprKind::Lam { param: mark, annotation: None, body: Box::new(body) }, span);
    ExprKind::App(Box::new(identity), Box::new(Expr::new(ExprKind::Var(name), span)))
}
