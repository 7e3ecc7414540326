//! The lowering's views of function types (their type variables, their
//! parameters and result); the substitutions themselves are shared with the
//! middle end (`pmx_ast::subst`).

pub(crate) use pmx_ast::subst::{apply, unify, Subst};
use pmx_ast::{Ty, TyKind, TyVar};

/// The type variables of a top-level binding's type: those it quantifies,
/// then those that occur free in it, each once. A use instantiates them
/// all: the middle end's specialised copies of higher-order functions keep
/// type variables whose quantifier went with the function parameter.
pub(crate) fn type_vars(scheme: &Ty) -> Vec<TyVar> {
    fn walk(t: &Ty, out: &mut Vec<TyVar>) {
        match t.kind() {
            TyKind::Var(v) | TyKind::All(v, _, _) if !out.iter().any(|o| o.id == v.id) => {
                out.push(v.clone());
                if let TyKind::All(_, fields, body) = t.kind() {
                    fields.iter().for_each(|(_, f)| walk(f, out));
                    walk(body, out);
                }
            }
            TyKind::Var(_) => {}
            TyKind::All(_, fields, body) => {
                fields.iter().for_each(|(_, f)| walk(f, out));
                walk(body, out);
            }
            TyKind::Seq(e) | TyKind::Tensor(e) => walk(e, out),
            TyKind::Record(fields) => fields.iter().for_each(|(_, f)| walk(f, out)),
            TyKind::Arrow(a, b) => {
                walk(a, out);
                walk(b, out);
            }
            TyKind::Con(_, _, args) => args.iter().for_each(|a| walk(a, out)),
            TyKind::App(head, args) => {
                walk(head, out);
                args.iter().for_each(|a| walk(a, out));
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(scheme, &mut out);
    out
}

/// `t` with its first `n` parameters applied.
pub(crate) fn drop_params(t: &Ty, n: usize) -> Ty {
    let mut t = t.strip_foralls();
    for _ in 0..n {
        match t.as_arrow() {
            Some((_, r)) => t = r.strip_foralls(),
            None => break,
        }
    }
    t.clone()
}

/// The parameter types and the result of a function type, all its arrows
/// unfolded.
pub(crate) fn arrows(t: &Ty) -> (Vec<Ty>, Ty) {
    let mut params = Vec::new();
    let mut t = t.strip_foralls();
    while let Some((p, r)) = t.as_arrow() {
        params.push(p.clone());
        t = r.strip_foralls();
    }
    (params, t.clone())
}
