//! Free variables.

use pmx_ast::*;

pub use pmx_ast::visit::{free_vars, FreeVar};

/// Whether a type is a function type (under quantifiers).
pub fn is_function(t: &Ty) -> bool {
    matches!(t.strip_foralls().kind(), TyKind::Arrow(..))
}

/// Renames variable references by a map of identities.
pub fn rename(e: &mut Expr, map: &rustc_hash::FxHashMap<NameId, Name>) {
    if let ExprKind::Var(n) = &mut e.kind {
        if let Some(new) = map.get(&n.id) {
            n.id = new.id;
            n.text = new.text.clone();
        }
        return;
    }
    pmx_ast::visit::children_mut(e, &mut |c| rename(c, map));
}

/// The parameters of a chain of lambdas, and the body under them.
pub fn lambdas(value: &Expr) -> (Vec<NameId>, &Expr) {
    let mut params = Vec::new();
    let mut body = value;
    while let ExprKind::Lam { param, body: inner, .. } = &body.kind {
        params.push(param.id);
        body = inner;
    }
    (params, body)
}
