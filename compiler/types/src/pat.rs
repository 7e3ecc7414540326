//! Checking patterns against the type of the value they match.

use crate::check::Checker;
use pmx_ast::*;
use pmx_diagnostics::{Code, Diagnostic};

impl Checker<'_> {
    pub(crate) fn check_pat(&mut self, p: &mut Pat, t: &Ty) {
        p.ty = t.clone();
        let span = p.span;
        match &mut p.kind {
            PatKind::Wild | PatKind::Error => {}
            PatKind::Bind(name) => self.bind_pat_name(name, t),
            PatKind::Int(_) => self.expect_pat(&Ty::int(), t, span),
            PatKind::Char(_) => self.expect_pat(&Ty::char(), t, span),
            PatKind::Bool(_) => self.expect_pat(&Ty::bool(), t, span),
            PatKind::Con(con, arg) => {
                let scheme = self.con_scheme(con.id);
                let ct = self.u.instantiate(&scheme, self.level);
                match ct.kind() {
                    TyKind::Arrow(param, result) => {
                        let (param, result) = (param.clone(), result.clone());
                        self.expect_pat(&result, t, span);
                        self.check_pat(arg, &param);
                    }
                    _ => self.check_pat(arg, &Ty::unknown()),
                }
            }
            PatKind::Record(fields) => {
                for (label, fp) in fields {
                    let ft = self.field(t, label).unwrap_or_else(Ty::unknown);
                    self.check_pat(fp, &ft);
                }
            }
            PatKind::Seq(items) => {
                let elem = self.fresh();
                self.expect_pat(&Ty::seq(elem.clone()), t, span);
                for item in items {
                    self.check_pat(item, &elem);
                }
            }
            PatKind::Edge { prefix, middle, suffix } => {
                let elem = self.fresh();
                self.expect_pat(&Ty::seq(elem.clone()), t, span);
                for item in prefix.iter_mut().chain(suffix.iter_mut()) {
                    self.check_pat(item, &elem);
                }
                if let Some(m) = middle {
                    self.bind_pat_name(m, &Ty::seq(elem));
                }
            }
            PatKind::And(a, b) | PatKind::Or(a, b) => {
                self.check_pat(a, t);
                self.check_pat(b, t);
            }
            PatKind::Not(inner) => self.check_pat(inner, t),
        }
    }

    /// Binds a pattern variable; the second side of an or-pattern binds the
    /// same identity again, and the two types must agree.
    fn bind_pat_name(&mut self, name: &Name, t: &Ty) {
        match self.vars.get(&name.id).cloned() {
            Some(prev) => {
                self.unify_at(&prev, t, name.span);
            }
            None => {
                self.vars.insert(name.id, t.clone());
            }
        }
    }

    fn expect_pat(&mut self, pattern_ty: &Ty, scrutinee: &Ty, span: Span) {
        if let Err(m) = self.u.unify(pattern_ty, scrutinee) {
            let (p, s) = self.show2(pattern_ty, scrutinee);
            let d = match m {
                crate::unify::Mismatch::Types => Diagnostic::error(
                    Code::TypeMismatch,
                    span,
                    format!("this pattern matches `{p}`, but the value has type `{s}`"),
                )
                .with_label(format!("a pattern of type `{p}`")),
                other => self.mismatch_diag(other, span, &p, &s),
            };
            self.diags.push(d);
        }
    }
}
