//! Inference for expressions.

use crate::check::Checker;
use pmx_ast::*;
use pmx_diagnostics::{Code, Diagnostic};

impl Checker<'_> {
    /// Infers the type of `e`, recording it in `e.ty`.
    pub(crate) fn infer(&mut self, e: &mut Expr) -> Ty {
        let t = self.infer_kind(e);
        e.ty = t.clone();
        t
    }

    fn infer_kind(&mut self, e: &mut Expr) -> Ty {
        let span = e.span;
        match &mut e.kind {
            ExprKind::Var(name) => self.value_type(name.id),
            ExprKind::Lit(lit) => match lit {
                Lit::Int(_) => Ty::int(),
                Lit::Float(_) => Ty::float(),
                Lit::Char(_) => Ty::char(),
                Lit::Bool(_) => Ty::bool(),
                Lit::Str(_) => Ty::string(),
            },
            ExprKind::Lam { param, annotation, body } => {
                let pt = match annotation {
                    Some(a) => self.convert_type(a),
                    None => self.fresh(),
                };
                self.vars.insert(param.id, pt.clone());
                let bt = self.infer(body);
                Ty::arrow(pt, bt)
            }
            ExprKind::Let(b, body) => {
                let scheme = self.binding(b);
                self.vars.insert(b.name.id, scheme);
                self.infer(body)
            }
            ExprKind::RecLets(bindings, body) => {
                self.rec_bindings(bindings);
                self.infer(body)
            }
            ExprKind::App(f, a) => self.application(f, a),
            ExprKind::Match { scrutinee, pattern, then, otherwise } => {
                let mut ts = self.infer(scrutinee);
                if matches!(pattern.kind, PatKind::Bool(true)) && !self.u.shallow(&ts).is_unknown() {
                    // `if`: say that the condition must be a Bool.
                    if self.u.unify(&Ty::bool(), &ts).is_err() {
                        ts = Ty::unknown();
                        let shown = self.show(&scrutinee.ty);
                        self.diags.push(
                            Diagnostic::error(
                                Code::TypeMismatch,
                                scrutinee.span,
                                format!("expected `Bool`, found `{shown}`"),
                            )
                            .with_label(format!("this condition has type `{shown}`")),
                        );
                    }
                }
                self.check_pat(pattern, &ts);
                let tt = self.infer(then);
                let to = self.infer(otherwise);
                if let Err(m) = self.u.unify(&tt, &to) {
                    let (a, b) = self.show2(&tt, &to);
                    let d = self
                        .mismatch_diag(m, otherwise.span, &a, &b)
                        .with_secondary(then.span, format!("the other branch has type `{a}`"))
                        .with_note("both branches of a conditional must have the same type");
                    self.diags.push(d);
                }
                tt
            }
            ExprKind::Seq(items) => {
                let elem = self.fresh();
                for item in items {
                    let t = self.infer(item);
                    if let Err(m) = self.u.unify(&elem, &t) {
                        let (a, b) = self.show2(&elem, &t);
                        let d = self
                            .mismatch_diag(m, item.span, &a, &b)
                            .with_note("all elements of a sequence must have the same type");
                        self.diags.push(d);
                    }
                }
                Ty::seq(elem)
            }
            ExprKind::Record(fields) => {
                let fields = fields.iter_mut().map(|(l, f)| (l.text.clone(), self.infer(f))).collect();
                Ty::record(fields)
            }
            ExprKind::RecordUpdate(record, fields) => {
                let tr = self.infer(record);
                for (label, value) in fields {
                    let tv = self.infer(value);
                    if let Some(ft) = self.field(&tr, label, record.span) {
                        self.unify_at(&ft, &tv, value.span);
                    }
                }
                tr
            }
            ExprKind::Proj(record, label) => {
                let tr = self.infer(record);
                self.field(&tr, label, span).unwrap_or_else(Ty::unknown)
            }
            ExprKind::ConApp(con, arg) => {
                let scheme = self.con_scheme(con.id);
                let t = self.u.instantiate(&scheme, self.level);
                let ta = self.infer(arg);
                match t.kind() {
                    TyKind::Arrow(param, result) => {
                        self.unify_at(param, &ta, arg.span);
                        result.clone()
                    }
                    _ => Ty::unknown(),
                }
            }
            ExprKind::Never => self.fresh(),
            ExprKind::Utest(u, body) => {
                self.utest(u);
                self.infer(body)
            }
            ExprKind::External(d, body) => {
                self.external_decl(d);
                self.infer(body)
            }
            ExprKind::TypeDecl(d, body) => {
                self.type_decl(d);
                self.infer(body)
            }
            ExprKind::ConDecl(d, body) => {
                self.con_decl(d);
                self.infer(body)
            }
            ExprKind::Error => Ty::unknown(),
        }
    }

    fn application(&mut self, f: &mut Expr, a: &mut Expr) -> Ty {
        let tf = self.infer(f);
        let ta = self.infer(a);
        let shallow = self.u.shallow(&tf);
        match shallow.kind() {
            TyKind::Arrow(param, result) => {
                let (param, result) = (param.clone(), result.clone());
                self.unify_at(&param, &ta, a.span);
                result
            }
            TyKind::Meta(_) => {
                let result = self.fresh();
                let expected = Ty::arrow(ta, result.clone());
                self.unify_at(&expected, &tf, f.span);
                result
            }
            TyKind::Unknown => Ty::unknown(),
            _ => {
                let shown = self.show(&tf);
                self.diags.push(
                    Diagnostic::error(Code::TypeMismatch, f.span, format!("expected a function, found `{shown}`"))
                        .with_label(format!("this has type `{shown}` and is applied to an argument"))
                        .with_secondary(a.span, "the argument"),
                );
                Ty::unknown()
            }
        }
    }

    /// The type of field `label` of a record of type `t` (at `span`).
    pub(crate) fn field(&mut self, t: &Ty, label: &Label, span: Span) -> Option<Ty> {
        let before = self.u.shallow(t);
        match self.u.require_field(t, &label.text) {
            Ok(ft) => {
                if matches!(before.kind(), TyKind::Meta(_)) {
                    self.record_uses.push((before, span));
                }
                Some(ft)
            }
            Err(m) => {
                let shown = self.show(t);
                let d = self.mismatch_diag(m, label.span, &format!("{{{} : _}}", label.text), &shown);
                let d = match &before.kind() {
                    TyKind::Record(_) => Diagnostic::error(
                        Code::MissingField,
                        label.span,
                        format!("the record type `{shown}` has no field `{}`", label.text),
                    )
                    .with_label(format!("no field `{}`", label.text)),
                    _ => d,
                };
                self.diags.push(d);
                None
            }
        }
    }
}
