//! Resolution of type expressions.

use crate::scope::{Ns, Resolver};
use crate::NameKind;
use pmx_ast::{KindEntry, Restriction, TypeExpr, TypeExprKind};

impl Resolver<'_> {
    pub(crate) fn type_expr(&mut self, t: &mut TypeExpr) {
        match &mut t.kind {
            TypeExprKind::Prim(_) | TypeExprKind::Unknown | TypeExprKind::Error => {}
            TypeExprKind::Seq(e) | TypeExprKind::Tensor(e) => self.type_expr(e),
            TypeExprKind::Record(fields) => {
                self.distinct_labels(fields.iter().map(|(l, _)| l));
                for (_, f) in fields {
                    self.type_expr(f);
                }
            }
            TypeExprKind::Arrow(a, b) => {
                self.type_expr(a);
                self.type_expr(b);
            }
            TypeExprKind::All(var, kind, body) => {
                self.kind(kind);
                let mark = self.mark();
                self.bind(Ns::TyVar, var, NameKind::TypeVar, false);
                self.type_expr(body);
                self.close(mark);
            }
            TypeExprKind::Var(name) => self.reference(Ns::TyVar, name),
            TypeExprKind::VarApp(name, args) => {
                self.reference(Ns::TyVar, name);
                for a in args {
                    self.type_expr(a);
                }
            }
            TypeExprKind::Con(name, args) => {
                self.reference(Ns::Type, name);
                for a in args {
                    self.type_expr(a);
                }
            }
            TypeExprKind::Restricted(name, restriction) => {
                self.reference(Ns::Type, name);
                match restriction {
                    Restriction::Var(v) => self.reference(Ns::TyVar, v),
                    Restriction::Cons { cons, .. } => cons.iter_mut().for_each(|c| self.reference(Ns::Con, c)),
                }
            }
        }
    }

    /// The names in a kind, as Miking resolves them: each type and each
    /// constructor must be in scope.
    fn kind(&mut self, kind: &mut [KindEntry]) {
        for entry in kind {
            self.reference(Ns::Type, &mut entry.ty);
            for c in entry.lower.iter_mut().chain(entry.upper.iter_mut().flatten()) {
                self.reference(Ns::Con, c);
            }
        }
    }

    /// A binding's annotation: the type variables of its leading `all`s stay
    /// in scope (the caller closes the scope after the bound value).
    pub(crate) fn annotation(&mut self, t: &mut TypeExpr) {
        match &mut t.kind {
            TypeExprKind::All(var, kind, body) => {
                self.kind(kind);
                self.bind(Ns::TyVar, var, NameKind::TypeVar, false);
                self.annotation(body);
            }
            _ => self.type_expr(t),
        }
    }
}
