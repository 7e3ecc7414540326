//! Type expressions (annotations and declarations) to types: aliases are
//! expanded and type constructors applied to the right number of arguments.
//!
//! Type variables may stand for type constructors (Miking's `all self.
//! self LClosed RClosed`): such a variable applied to arguments is a
//! [`TyKind::App`], and a variant type given as an argument to another
//! type may be given fewer arguments than it takes (`Config Tok`, where
//! `Tok` takes two), as Miking's `resolveType` allows (it checks the
//! arity of aliases only; it has no kind check). Elsewhere, as there, a
//! type of the wrong arity is an error, and an alias must always be
//! given all its arguments.

use crate::check::Checker;
use crate::unify::substitute;
use pmx_ast::{Name, Prim, Ty, TyKind, TypeExpr, TypeExprKind};
use pmx_diagnostics::{Code, Diagnostic};
use rustc_hash::FxHashMap;

impl Checker<'_> {
    pub(crate) fn convert_type(&mut self, t: &TypeExpr) -> Ty {
        match &t.kind {
            TypeExprKind::Prim(p) => match p {
                Prim::Int => Ty::int(),
                Prim::Float => Ty::float(),
                Prim::Bool => Ty::bool(),
                Prim::Char => Ty::char(),
                Prim::String => Ty::string(),
            },
            TypeExprKind::Unknown => self.fresh(),
            TypeExprKind::Error => Ty::unknown(),
            TypeExprKind::Seq(e) => Ty::seq(self.convert_type(e)),
            TypeExprKind::Tensor(e) => Ty::tensor(self.convert_type(e)),
            TypeExprKind::Arrow(a, b) => Ty::arrow(self.convert_type(a), self.convert_type(b)),
            TypeExprKind::Record(fields) => {
                Ty::record(fields.iter().map(|(l, f)| (l.text.clone(), self.convert_type(f))).collect())
            }
            TypeExprKind::All(name, _, body) => {
                let v = self.u.fresh_var(&name.text);
                self.tyvars.insert(name.id, Ty::new(TyKind::Var(v.clone())));
                let body = self.convert_type(body);
                Ty::new(TyKind::All(v, Vec::new(), body))
            }
            TypeExprKind::Var(name) => self.type_var(name),
            TypeExprKind::VarApp(name, args) => {
                let head = self.type_var(name);
                let args = args.iter().map(|a| self.convert_arg(a)).collect();
                Ty::app(head, args)
            }
            TypeExprKind::Con(name, args) => self.convert_con(name, args, t, false),
            // Checked as the unrestricted type, as Miking does by default.
            TypeExprKind::Restricted(name, _) => self.convert_con(name, &[], t, false),
        }
    }

    /// What a type variable stands for: a variable of an enclosing `all`
    /// or type declaration, or, in a `con` or `external` declaration, a
    /// new implicitly quantified one.
    fn type_var(&mut self, name: &Name) -> Ty {
        if let Some(t) = self.tyvars.get(&name.id) {
            return t.clone();
        }
        if !name.id.is_resolved() {
            return Ty::unknown();
        }
        match &mut self.implicit {
            Some(vars) => {
                let v = self.u.fresh_var(&name.text);
                vars.push(v.clone());
                let t = Ty::new(TyKind::Var(v));
                self.tyvars.insert(name.id, t.clone());
                t
            }
            None => Ty::unknown(),
        }
    }

    /// An argument of a type application, where a variant type may stand
    /// partially applied for a type constructor (see the module's note).
    fn convert_arg(&mut self, t: &TypeExpr) -> Ty {
        match &t.kind {
            TypeExprKind::Con(name, args) => self.convert_con(name, args, t, true),
            _ => self.convert_type(t),
        }
    }

    /// A named type applied to arguments: a built-in, a variant type or an
    /// alias (expanded). `partial`: a built-in or variant type may take
    /// fewer arguments than it has parameters.
    fn convert_con(&mut self, name: &Name, args: &[TypeExpr], t: &TypeExpr, partial: bool) -> Ty {
        let args: Vec<Ty> = args.iter().map(|a| self.convert_arg(a)).collect();
        if let Some(b) = name.id.as_builtin_type() {
            if (partial && args.len() < b.arity()) || self.arity_ok(b.arity(), args.len(), &name.text, t) {
                return Ty::new(TyKind::Con(name.id, name.text.clone(), args));
            }
            return Ty::unknown();
        }
        let Some(info) = self.tycon(name.id) else { return Ty::unknown() };
        let partial = partial && info.definition.is_none() && args.len() < info.params.len();
        if !partial && !self.arity_ok(info.params.len(), args.len(), &name.text, t) {
            return Ty::unknown();
        }
        match &info.definition {
            Some(def) => {
                let subst: FxHashMap<u32, Ty> = info.params.iter().map(|p| p.id).zip(args).collect();
                substitute(def, &subst)
            }
            None => Ty::new(TyKind::Con(name.id, name.text.clone(), args)),
        }
    }

    fn arity_ok(&mut self, expected: usize, found: usize, name: &str, t: &TypeExpr) -> bool {
        if expected == found {
            return true;
        }
        let plural = if expected == 1 { "" } else { "s" };
        self.diags.push(
            Diagnostic::error(
                Code::TypeArity,
                t.span,
                format!("the type `{name}` takes {expected} argument{plural}, but {found} were given"),
            )
            .with_label(format!("`{name}` applied to {found} argument(s)")),
        );
        false
    }
}
