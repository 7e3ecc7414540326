//! Resolution of declarations and expressions.

use crate::scope::{Ns, Resolver};
use crate::NameKind;
use pmx_ast::{Binding, ConDecl, Expr, ExprKind, ExternalDecl, Item, Label, Span, TypeDecl, Utest};
use pmx_diagnostics::Code;
use rustc_hash::FxHashMap;

impl Resolver<'_> {
    pub(crate) fn item(&mut self, item: &mut Item) {
        match item {
            Item::Let(b) => {
                self.defining.push((b.name.text.clone(), true));
                self.binding_value(b);
                self.defining.pop();
                self.bind(Ns::Value, &mut b.name, NameKind::Value, true);
            }
            Item::RecLets(bindings, _) => {
                self.distinct_bindings(bindings);
                for b in bindings.iter_mut() {
                    self.bind(Ns::Value, &mut b.name, NameKind::Value, true);
                }
                for b in bindings.iter_mut() {
                    self.binding_value(b);
                }
            }
            Item::Type(d) => self.type_decl(d, true),
            Item::Con(d) => self.con_decl(d, true),
            Item::Utest(u) => self.utest(u),
            Item::External(d) => self.external_decl(d, true),
        }
    }

    /// The annotation and value of a binding. Type variables quantified at
    /// the top of the annotation (`let f : all a. a -> a = lam x : a. x`)
    /// are in scope in the value.
    fn binding_value(&mut self, b: &mut Binding) {
        let mark = self.mark();
        if let Some(ann) = &mut b.annotation {
            self.annotation(ann);
        }
        self.expr(&mut b.value);
        self.close(mark);
    }

    fn distinct_bindings(&mut self, bindings: &[Binding]) {
        // The first binding of each name, in a map: searching the earlier
        // bindings for each made 100,000 bindings take minutes.
        let mut first_of: FxHashMap<&str, Span> = FxHashMap::default();
        for b in bindings {
            if b.name.is_anonymous() {
                continue;
            }
            if let Some(&span) = first_of.get(b.name.text.as_str()) {
                self.error(
                    Code::DuplicateBinding,
                    b.name.span,
                    format!("`{}` is bound twice in one recursive group", b.name.text),
                )
                .secondary
                .push(pmx_diagnostics::Label::new(span, "first bound here"));
            } else {
                first_of.insert(b.name.text.as_str(), b.name.span);
            }
        }
    }

    fn type_decl(&mut self, d: &mut TypeDecl, top_level: bool) {
        let mark = self.mark();
        for p in &mut d.params {
            self.bind(Ns::TyVar, p, NameKind::TypeVar, false);
        }
        if let Some(def) = &mut d.definition {
            self.type_expr(def);
        }
        self.close(mark);
        self.bind(Ns::Type, &mut d.name, NameKind::Type, top_level);
    }

    fn con_decl(&mut self, d: &mut ConDecl, top_level: bool) {
        if let Some(ann) = &mut d.annotation {
            self.implicit_type(ann);
        }
        self.bind(Ns::Con, &mut d.name, NameKind::Constructor, top_level);
    }

    fn external_decl(&mut self, d: &mut ExternalDecl, top_level: bool) {
        self.implicit_type(&mut d.annotation);
        self.bind(Ns::Value, &mut d.name, NameKind::External, top_level);
    }

    /// Resolves a declared type whose free type variables are implicitly
    /// quantified, as Miking allows in `con` and `external` declarations.
    fn implicit_type(&mut self, ty: &mut pmx_ast::TypeExpr) {
        let mark = self.mark();
        let saved = std::mem::replace(&mut self.implicit_tyvars, true);
        self.type_expr(ty);
        self.implicit_tyvars = saved;
        self.close(mark);
    }

    fn utest(&mut self, u: &mut Utest) {
        self.expr(&mut u.test);
        self.expr(&mut u.expected);
        if let Some(e) = &mut u.using {
            self.expr(e);
        }
        if let Some(e) = &mut u.on_fail {
            self.expr(e);
        }
    }

    fn fields(&mut self, fields: &mut [(Label, Expr)]) {
        self.distinct_labels(fields.iter().map(|(l, _)| l));
        for (_, e) in fields {
            self.expr(e);
        }
    }

    pub(crate) fn distinct_labels<'l>(&mut self, labels: impl Iterator<Item = &'l Label>) {
        // A map, not a search of the earlier labels: records can be wide.
        let mut first_of: FxHashMap<&str, Span> = FxHashMap::default();
        for l in labels {
            if let Some(&span) = first_of.get(l.text.as_str()) {
                self.error(Code::DuplicateLabel, l.span, format!("the label `{}` appears twice", l.text))
                    .secondary
                    .push(pmx_diagnostics::Label::new(span, "first used here"));
            } else {
                first_of.insert(l.text.as_str(), l.span);
            }
        }
    }

    pub(crate) fn expr(&mut self, e: &mut Expr) {
        match &mut e.kind {
            ExprKind::Var(name) => {
                self.reference(Ns::Value, name);
                if !self.keyword_arity(name, 0, e.span) {
                    e.kind = ExprKind::Error;
                }
            }
            ExprKind::App(..) => self.application(e),
            ExprKind::Lit(_) | ExprKind::Never | ExprKind::Error => {}
            ExprKind::Lam { param, annotation, body } => {
                if let Some(ann) = annotation {
                    self.type_expr(ann);
                }
                let mark = self.mark();
                self.bind(Ns::Value, param, NameKind::Value, false);
                self.expr(body);
                self.close(mark);
            }
            ExprKind::Let(b, body) => {
                self.defining.push((b.name.text.clone(), false));
                self.binding_value(b);
                self.defining.pop();
                let mark = self.mark();
                self.bind(Ns::Value, &mut b.name, NameKind::Value, false);
                self.expr(body);
                self.close(mark);
            }
            ExprKind::RecLets(bindings, body) => {
                self.distinct_bindings(bindings);
                let mark = self.mark();
                for b in bindings.iter_mut() {
                    self.bind(Ns::Value, &mut b.name, NameKind::Value, false);
                }
                for b in bindings.iter_mut() {
                    self.binding_value(b);
                }
                self.expr(body);
                self.close(mark);
            }
            ExprKind::Match { scrutinee, pattern, then, otherwise } => {
                self.expr(scrutinee);
                let mark = self.mark();
                self.pattern(pattern);
                self.expr(then);
                self.close(mark);
                self.expr(otherwise);
            }
            ExprKind::Seq(items) => {
                for item in items {
                    self.expr(item);
                }
            }
            ExprKind::Record(fields) => self.fields(fields),
            ExprKind::RecordUpdate(record, fields) => {
                self.expr(record);
                self.fields(fields);
            }
            ExprKind::Proj(record, _) => self.expr(record),
            ExprKind::ConApp(con, arg) => {
                self.reference(Ns::Con, con);
                self.expr(arg);
            }
            ExprKind::Utest(u, body) => {
                self.utest(u);
                self.expr(body);
            }
            ExprKind::External(d, body) => {
                let mark = self.mark();
                self.external_decl(d, false);
                self.expr(body);
                self.close(mark);
            }
            ExprKind::TypeDecl(d, body) => {
                let mark = self.mark();
                self.type_decl(d, false);
                self.expr(body);
                self.close(mark);
            }
            ExprKind::ConDecl(d, body) => {
                let mark = self.mark();
                self.con_decl(d, false);
                self.expr(body);
                self.close(mark);
            }
        }
    }

    /// An application spine `f a1 .. an`: resolves the head, checks a
    /// keyword head's number of arguments, then resolves the arguments.
    fn application(&mut self, e: &mut Expr) {
        let nargs = pmx_ast::spine::length(e);
        let span = e.span;
        if !self.spine(e, nargs, span) {
            // The arity error says all; no type error should follow.
            e.kind = ExprKind::Error;
        }
    }

    /// Resolves a spine; false when its head is a keyword with the wrong
    /// number of arguments.
    fn spine(&mut self, e: &mut Expr, nargs: usize, span: pmx_ast::Span) -> bool {
        match &mut e.kind {
            ExprKind::App(f, a) => {
                let ok = self.spine(f, nargs, span);
                self.expr(a);
                ok
            }
            ExprKind::Var(name) => {
                self.reference(Ns::Value, name);
                self.keyword_arity(name, nargs, span)
            }
            _ => {
                self.expr(e);
                true
            }
        }
    }

    /// Checks the number of arguments of a keyword; false after an error.
    fn keyword_arity(&mut self, name: &pmx_ast::Name, found: usize, span: pmx_ast::Span) -> bool {
        let Some(b) = name.id.as_builtin() else { return true };
        let Some(expected) = b.keyword_arity() else { return true };
        if expected != found {
            let plural = if expected == 1 { "" } else { "s" };
            self.error(
                Code::KeywordArity,
                span,
                format!(
                    "Unexpected number of arguments for construct '{}'. Expected {expected} argument{plural}, but found {found}.",
                    b.name()
                ),
            )
            .notes
            .push(format!(
                "`{}` is a parallel keyword and must be applied to exactly {expected} argument{plural}; wrap it in a lambda to pass it as a function",
                b.name()
            ));
            return false;
        }
        true
    }
}
