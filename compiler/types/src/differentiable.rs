//! The derivatives' type arguments (`vjp`, `jvp`, `grad`) must be
//! differentiable types: `Float`, and sequences, tuples and records of
//! differentiable types. Checked once the file's types are resolved, at
//! each use of a derivative, so the error points at the `grad` that asks
//! for the impossible and names the part of the type that is not
//! differentiable.
//!
//! A type variable passes: a polymorphic wrapper (`let d = lam f. grad f`)
//! is checked where it is instantiated, and at run time the derivative
//! refuses a value it cannot differentiate with a located error.

use crate::check::Checker;
use pmx_ast::*;
use pmx_diagnostics::{Code, Diagnostic};

impl Checker<'_> {
    /// Checks every use of a derivative in the (resolved) module.
    pub(crate) fn check_derivatives(&mut self, module: &Module) {
        for item in &module.items {
            match item {
                Item::Let(b) => self.derivatives_in(&b.value),
                Item::RecLets(bs, _) => bs.iter().for_each(|b| self.derivatives_in(&b.value)),
                Item::Utest(u) => {
                    for e in
                        [Some(&u.test), Some(&u.expected), u.using.as_ref(), u.on_fail.as_ref()].into_iter().flatten()
                    {
                        self.derivatives_in(e);
                    }
                }
                Item::Type(_) | Item::Con(_) | Item::External(_) => {}
            }
        }
        if let Some(main) = &module.main {
            self.derivatives_in(main);
        }
    }

    fn derivatives_in(&mut self, e: &Expr) {
        if let ExprKind::Var(n) = &e.kind {
            if let Some(b) = n.id.as_builtin().filter(|b| b.is_derivative()) {
                self.derivative_use(b, e);
            }
        }
        pmx_ast::visit::children(e, &mut |c| self.derivatives_in(c));
    }

    /// One use: its type is `(a -> b) -> ...`; `a` and `b` must be
    /// differentiable.
    fn derivative_use(&mut self, b: Builtin, e: &Expr) {
        let TyKind::Arrow(f, _) = e.ty.kind() else { return };
        let TyKind::Arrow(a, r) = f.kind() else { return };
        for (role, t) in [("parameter", a), ("result", r)] {
            if let Some(part) = not_differentiable(t) {
                let whole = self.show(t);
                let part_shown = self.show(&part);
                let mut d = Diagnostic::error(
                    Code::NotDifferentiable,
                    e.span,
                    format!(
                        "`{}` needs a function of differentiable types, but its {role} has type `{whole}`",
                        b.name()
                    ),
                )
                .with_note("differentiable types are Float, and sequences, tuples and records of differentiable types");
                d = if part_shown == whole {
                    d.with_label(format!("`{whole}` is not differentiable"))
                } else {
                    d.with_label(format!("`{part_shown}` inside `{whole}` is not differentiable"))
                };
                self.diags.push(d);
                return;
            }
        }
    }
}

/// The first part of `t` that is not differentiable, if any. Aliases were
/// expanded when annotations were converted (`annot.rs`), so a named type
/// here is a variant type.
fn not_differentiable(t: &Ty) -> Option<Ty> {
    match t.kind() {
        // A variable of higher kind applied is undetermined, as a variable is.
        TyKind::Float | TyKind::Unknown | TyKind::Var(_) | TyKind::Meta(_) | TyKind::App(..) => None,
        TyKind::Seq(e) => not_differentiable(e),
        TyKind::Record(fields) => fields.iter().find_map(|(_, f)| not_differentiable(f)),
        TyKind::All(_, _, body) => not_differentiable(body),
        TyKind::Int | TyKind::Bool | TyKind::Char | TyKind::Tensor(_) | TyKind::Arrow(..) | TyKind::Con(..) => {
            Some(t.clone())
        }
    }
}
