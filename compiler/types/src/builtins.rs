//! The type schemes of the built-in constants, built once from their
//! parsed signatures ([`pmx_ast::Builtin::signature`]).

use pmx_ast::signature::{Sig, Signature};
use pmx_ast::{Builtin, NameId, SmolStr, Ty, TyKind, TyVar};
use std::sync::LazyLock;

static SCHEMES: LazyLock<Vec<Ty>> = LazyLock::new(|| Builtin::ALL.iter().map(|b| scheme(b.signature())).collect());

/// The type scheme of a built-in, e.g. `all a. [a] -> Int` for `length`.
pub fn builtin_scheme(b: Builtin) -> Ty {
    SCHEMES[b as usize].clone()
}

/// A signature as a type scheme: every type variable quantified, numbered
/// in the order it first appears.
fn scheme(s: &Signature) -> Ty {
    let mut vars = Vec::new();
    let params: Vec<Ty> = s.params.iter().map(|p| ty(p, &mut vars)).collect();
    let body = params.into_iter().rev().fold(ty(&s.result, &mut vars), |r, p| Ty::arrow(p, r));
    vars.into_iter().rev().fold(body, |acc, v| Ty::new(TyKind::All(v, Vec::new(), acc)))
}

fn ty(s: &Sig, vars: &mut Vec<TyVar>) -> Ty {
    match s {
        Sig::Int => Ty::int(),
        Sig::Float => Ty::float(),
        Sig::Bool => Ty::bool(),
        Sig::Char => Ty::char(),
        Sig::Unit => Ty::unit(),
        Sig::Var(v) => {
            let var = match vars.iter().find(|x| x.name == *v) {
                Some(x) => x.clone(),
                None => {
                    let x = TyVar { id: vars.len() as u32, name: v.clone() };
                    vars.push(x.clone());
                    x
                }
            };
            Ty::new(TyKind::Var(var))
        }
        Sig::Seq(e) => Ty::seq(ty(e, vars)),
        Sig::Tensor(e) => Ty::tensor(ty(e, vars)),
        Sig::Tuple(items) => Ty::tuple(items.iter().map(|t| ty(t, vars)).collect()),
        Sig::Arrow(a, r) => {
            let a = ty(a, vars);
            Ty::arrow(a, ty(r, vars))
        }
        Sig::Con(t, args) => {
            let args = args.iter().map(|a| ty(a, vars)).collect();
            Ty::new(TyKind::Con(NameId::builtin_type(*t), SmolStr::new(t.name()), args))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schemes_print_back() {
        assert_eq!(builtin_scheme(Builtin::Foldl).to_string(), "all a. all b. (a -> b -> a) -> a -> [b] -> a");
        assert_eq!(builtin_scheme(Builtin::SplitAt).to_string(), "all a. [a] -> Int -> ([a], [a])");
        assert_eq!(builtin_scheme(Builtin::Modref).to_string(), "all a. Ref a -> a -> ()");
        assert_eq!(builtin_scheme(Builtin::TensorGetExn).to_string(), "all a. Tensor[a] -> [Int] -> a");
    }
}
