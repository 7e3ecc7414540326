//! Substitutions of type variables in the AST's types: what a use of a
//! polymorphic function says about its type variables (`unify`), and
//! applying that to the types of its body (`apply`). The middle end's
//! monomorphisation and the lowering share them.

use crate::{Ty, TyKind};
use rustc_hash::FxHashMap;

/// Type variable (by id) to the type it stands for.
pub type Subst = FxHashMap<u32, Ty>;

/// Binds the type variables of `pattern` to the parts of `t` they match
/// (the first binding wins; parts that do not match are left alone, the
/// type checker having accepted the program).
pub fn unify(pattern: &Ty, t: &Ty, map: &mut Subst) {
    match (pattern.kind(), t.kind()) {
        // Only to a type with no type variable: a use's type may itself
        // mention type variables the middle end left (another source
        // decides them). An inference variable in it is a part nothing
        // constrains (the lowering makes it `()`), so it binds.
        (TyKind::Var(v), _) if determined(t) => {
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
        // A variable of higher kind applied to the last arguments of a
        // named type: the head stands for the type with the ones before.
        (TyKind::App(head, args), TyKind::Con(id, name, cargs)) if cargs.len() >= args.len() => {
            let k = cargs.len() - args.len();
            unify(head, &Ty::new(TyKind::Con(*id, name.clone(), cargs[..k].to_vec())), map);
            args.iter().zip(&cargs[k..]).for_each(|(x, y)| unify(x, y, map));
        }
        (TyKind::App(h1, a1), TyKind::App(h2, a2)) if a1.len() == a2.len() => {
            unify(h1, h2, map);
            a1.iter().zip(a2).for_each(|(x, y)| unify(x, y, map));
        }
        _ => {}
    }
}

/// A type with no type variable in it, or only inference variables.
fn determined(t: &Ty) -> bool {
    without_variables(t, true)
}

/// A type with no type variable (nor unknown part) in it.
pub fn concrete(t: &Ty) -> bool {
    without_variables(t, false)
}

/// Whether `t` has no type variable, quantifier or unknown part, and no
/// inference variable unless `metas` allows them.
fn without_variables(t: &Ty, metas: bool) -> bool {
    let go = |t: &Ty| without_variables(t, metas);
    match t.kind() {
        TyKind::Meta(_) => metas,
        TyKind::Var(_) | TyKind::All(..) | TyKind::Unknown => false,
        TyKind::App(head, args) => go(head) && args.iter().all(go),
        TyKind::Seq(e) | TyKind::Tensor(e) => go(e),
        TyKind::Record(fs) => fs.iter().all(|(_, f)| go(f)),
        TyKind::Arrow(a, b) => go(a) && go(b),
        TyKind::Con(_, _, args) => args.iter().all(go),
        TyKind::Int | TyKind::Float | TyKind::Bool | TyKind::Char => true,
    }
}

/// `t` with its type variables replaced (quantifiers over them dropped).
pub fn apply(t: &Ty, map: &Subst) -> Ty {
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
        // The head may become a named type: `Ty::app` puts it in normal form.
        TyKind::App(head, args) => return Ty::app(apply(head, map), args.iter().map(|a| apply(a, map)).collect()),
        _ => return t.clone(),
    };
    Ty::new(k)
}
