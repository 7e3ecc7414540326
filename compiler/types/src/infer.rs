//! Inference for expressions.

use crate::check::Checker;
use crate::unify::Mismatch;
use pmx_ast::*;
use pmx_diagnostics::{Code, Diagnostic};

impl Checker<'_> {
    /// Infers the type of `e`, recording it in `e.ty`.
    pub(crate) fn infer(&mut self, e: &mut Expr) -> Ty {
        if let Some(t) = self.frozen(e) {
            e.ty = t.clone();
            return t;
        }
        let t = self.infer_kind(e);
        e.ty = t.clone();
        t
    }

    /// The recursion of inference, so it only dispatches: each form is
    /// inferred by its own function and the frames on the recursive path
    /// stay small even in unoptimised builds (with every form in this one
    /// function, its frame took 3.5 KB in a debug build and 250,000 nested
    /// applications overflowed the driver's 1 GiB stack).
    fn infer_kind(&mut self, e: &mut Expr) -> Ty {
        match &mut e.kind {
            ExprKind::Var(name) => self.value_type(name.id),
            // `""` is Miking's empty sequence literal, of any element type.
            ExprKind::Lit(Lit::Str(s)) if s.is_empty() => Ty::seq(self.fresh()),
            ExprKind::Lit(lit) => lit_type(lit),
            ExprKind::Lam { param, annotation, body } => self.infer_lam(param, annotation, body),
            ExprKind::Let(b, body) => self.infer_let(b, body),
            ExprKind::RecLets(bindings, body) => {
                self.rec_bindings(bindings);
                self.infer(body)
            }
            ExprKind::App(f, a) => self.application(f, a),
            ExprKind::Match { scrutinee, pattern, then, otherwise } => {
                self.infer_match(scrutinee, pattern, then, otherwise)
            }
            ExprKind::Seq(items) => self.infer_seq(items),
            ExprKind::Record(fields) => self.infer_record(fields),
            ExprKind::RecordUpdate(record, fields) => self.infer_record_update(record, fields),
            ExprKind::Proj(record, label) => self.infer_proj(record, label),
            ExprKind::ConApp(con, arg) => self.infer_con_app(con, arg),
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

    fn infer_lam(&mut self, param: &Name, annotation: &Option<Box<TypeExpr>>, body: &mut Expr) -> Ty {
        let pt = match annotation {
            Some(a) => self.convert_type(a),
            None => self.fresh(),
        };
        self.vars.insert(param.id, pt.clone());
        let bt = self.infer(body);
        Ty::arrow(pt, bt)
    }

    fn infer_let(&mut self, b: &mut Binding, body: &mut Expr) -> Ty {
        let scheme = self.binding(b);
        self.vars.insert(b.name.id, scheme);
        self.infer(body)
    }

    fn infer_match(&mut self, scrutinee: &mut Expr, pattern: &mut Pat, then: &mut Expr, otherwise: &mut Expr) -> Ty {
        let mut ts = self.infer(scrutinee);
        if matches!(pattern.kind, PatKind::Bool(true)) && !self.u.shallow(&ts).is_unknown() {
            // `if`: say that the condition must be a Bool.
            if self.u.unify(&Ty::bool(), &ts).is_err() {
                ts = Ty::unknown();
                self.condition_not_bool(scrutinee);
            }
        }
        self.check_pat(pattern, &ts);
        let tt = self.infer(then);
        let to = self.infer(otherwise);
        if let Err(m) = self.u.unify(&tt, &to) {
            self.branches_differ(m, &tt, &to, then.span, otherwise.span);
        }
        tt
    }

    fn condition_not_bool(&mut self, scrutinee: &Expr) {
        let shown = self.show(&scrutinee.ty);
        self.diags.push(
            Diagnostic::error(Code::TypeMismatch, scrutinee.span, format!("expected `Bool`, found `{shown}`"))
                .with_label(format!("this condition has type `{shown}`")),
        );
    }

    fn branches_differ(&mut self, m: Mismatch, tt: &Ty, to: &Ty, then: Span, otherwise: Span) {
        let (a, b) = self.show2(tt, to);
        let d = self
            .mismatch_diag(m, otherwise, &a, &b)
            .with_secondary(then, format!("the other branch has type `{a}`"))
            .with_note("both branches of a conditional must have the same type");
        self.diags.push(d);
    }

    fn infer_seq(&mut self, items: &mut [Expr]) -> Ty {
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

    fn infer_record(&mut self, fields: &mut [(Label, Expr)]) -> Ty {
        let mut types = Vec::with_capacity(fields.len());
        for (l, f) in fields {
            types.push((l.text.clone(), self.infer(f)));
        }
        Ty::record(types)
    }

    fn infer_record_update(&mut self, record: &mut Expr, fields: &mut [(Label, Expr)]) -> Ty {
        let tr = self.infer(record);
        for (label, value) in fields {
            let tv = self.infer(value);
            if let Some(ft) = self.field(&tr, label) {
                self.unify_at(&ft, &tv, value.span);
            }
        }
        tr
    }

    fn infer_proj(&mut self, record: &mut Expr, label: &Label) -> Ty {
        let tr = self.infer(record);
        let ft = self.field(&tr, label).unwrap_or_else(Ty::unknown);
        // A field of a quantified type is instantiated where it is read,
        // as Miking's projection (a match binding a variable) is.
        let shallow = self.u.shallow(&ft);
        match shallow.kind() {
            TyKind::All(..) => self.u.instantiate(&shallow, self.level),
            _ => ft,
        }
    }

    fn infer_con_app(&mut self, con: &Name, arg: &mut Expr) -> Ty {
        let scheme = self.con_scheme(con.id);
        let t = self.u.instantiate(&scheme, self.level);
        match t.kind() {
            // A payload with a higher-rank type is checked against it.
            TyKind::Arrow(param, result) if self.has_all(param) => {
                self.check(arg, param);
                result.clone()
            }
            TyKind::Arrow(param, result) => {
                let ta = self.infer(arg);
                self.unify_at(param, &ta, arg.span);
                result.clone()
            }
            _ => {
                self.infer(arg);
                Ty::unknown()
            }
        }
    }

    fn application(&mut self, f: &mut Expr, a: &mut Expr) -> Ty {
        let tf = self.infer(f);
        // An argument of a higher-rank type is checked against it.
        if let TyKind::Arrow(param, result) = self.u.shallow(&tf).kind() {
            if self.has_all(param) {
                self.check(a, param);
                return result.clone();
            }
        }
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
                self.not_a_function(&tf, f.span, a.span);
                Ty::unknown()
            }
        }
    }

    fn not_a_function(&mut self, tf: &Ty, f: Span, a: Span) {
        let shown = self.show(tf);
        self.diags.push(
            Diagnostic::error(Code::TypeMismatch, f, format!("expected a function, found `{shown}`"))
                .with_label(format!("this has type `{shown}` and is applied to an argument"))
                .with_secondary(a, "the argument"),
        );
    }

    /// The type of field `label` of a record of type `t`.
    pub(crate) fn field(&mut self, t: &Ty, label: &Label) -> Option<Ty> {
        let before = self.u.shallow(t);
        // On a type not known yet this is a constraint ("a record with the
        // field `label`") that later unifications solve; one that nothing
        // ever solves is accepted, as Miking does: no value of an
        // undetermined type can reach the projection at run time, and the
        // CPU backend finds fields by name.
        match self.u.require_field(t, &label.text) {
            Ok(ft) => Some(ft),
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

fn lit_type(lit: &Lit) -> Ty {
    match lit {
        Lit::Int(_) => Ty::int(),
        Lit::Float(_) => Ty::float(),
        Lit::Char(_) => Ty::char(),
        Lit::Bool(_) => Ty::bool(),
        Lit::Str(_) => Ty::string(),
    }
}
