//! Type substitutions over the AST's types: what a use of a polymorphic
//! function says about its type variables, and applying that to the types
//! found in its body.

use pmx_ast::{Ty, TyKind, TyVar};
use rustc_hash::FxHashMap;

/// Type variable (by id) to the type it stands for.
pub(crate) type Subst = FxHashMap<u32, Ty>;

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
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(scheme, &mut out);
    out
}

/// Binds the type variables of `pattern` to the parts of `t` they match
/// (the first binding wins; parts that do not match are left alone, the
/// type checker having accepted the program).
pub(crate) fn unify(pattern: &Ty, t: &Ty, map: &mut Subst) {
    match (pattern.kind(), t.kind()) {
        // Only to a concrete type: a use's type may itself mention type
        // variables the middle end left (another source decides them).
        (TyKind::Var(v), _) if concrete(t) => {
            map.entry(v.id).or_insert_with(|| t.clone());
        }
        (TyKind::All(_, _, p), _) => unify(p, t, map),
        (_, TyKind::All(_, _, u)) => unify(pattern, u, map),
        (TyKind::Seq(a), TyKind::Seq(b)) | (TyKind::Tensor(a), TyKind::Tensor(b)) => unify(a, b, map),
        (TyKind::Arrow(a1, r1), TyKind::Arrow(a2, r2)) => {
            unify(a1, a2, map);
            unify(r1, r2, map);
        }
        (TyKind::Record(f1), TyKind::Record(f2)) => {
            for (l, x) in f1 {
                if let Some((_, y)) = f2.iter().find(|(m, _)| m == l) {
                    unify(x, y, map);
                }
            }
        }
        (TyKind::Con(_, _, a1), TyKind::Con(_, _, a2)) => a1.iter().zip(a2).for_each(|(x, y)| unify(x, y, map)),
        _ => {}
    }
}

/// A type with no type variable (nor unknown part) in it.
pub(crate) fn concrete(t: &Ty) -> bool {
    match t.kind() {
        TyKind::Var(_) | TyKind::Meta(_) | TyKind::All(..) | TyKind::Unknown => false,
        TyKind::Seq(e) | TyKind::Tensor(e) => concrete(e),
        TyKind::Record(fs) => fs.iter().all(|(_, f)| concrete(f)),
        TyKind::Arrow(a, b) => concrete(a) && concrete(b),
        TyKind::Con(_, _, args) => args.iter().all(concrete),
        TyKind::Int | TyKind::Float | TyKind::Bool | TyKind::Char => true,
    }
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

/// `t` with its type variables replaced (quantifiers over them dropped).
pub(crate) fn apply(t: &Ty, map: &Subst) -> Ty {
    if map.is_empty() {
        return t.clone();
    }
    let k = match t.kind() {
        TyKind::Var(v) => return map.get(&v.id).cloned().unwrap_or_else(|| t.clone()),
        TyKind::All(v, _, body) if map.contains_key(&v.id) => return apply(body, map),
        TyKind::All(v, fs, body) => {
            TyKind::All(v.clone(), fs.iter().map(|(l, f)| (l.clone(), apply(f, map))).collect(), apply(body, map))
        }
        TyKind::Seq(e) => TyKind::Seq(apply(e, map)),
        TyKind::Tensor(e) => TyKind::Tensor(apply(e, map)),
        TyKind::Record(fs) => TyKind::Record(fs.iter().map(|(l, f)| (l.clone(), apply(f, map))).collect()),
        TyKind::Arrow(a, b) => TyKind::Arrow(apply(a, map), apply(b, map)),
        TyKind::Con(id, n, args) => TyKind::Con(*id, n.clone(), args.iter().map(|a| apply(a, map)).collect()),
        _ => return t.clone(),
    };
    Ty::new(k)
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
