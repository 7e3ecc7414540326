//! The built-ins' types as the lowering and the validator need them: how
//! many arguments each takes (a primitive is always applied to exactly
//! that many) and whether given IR types fit its signature. The
//! signatures are `pmx_ast::Builtin::signature`, parsed there once.

use crate::ir::Type;
use pmx_ast::signature::Sig;
use pmx_ast::{Builtin, SmolStr};
use rustc_hash::FxHashMap;

/// How many arguments the built-in takes.
pub fn arity(b: Builtin) -> usize {
    b.signature().params.len()
}

/// Whether one of its parameters is a function (`map`, `foldl`, ...).
pub fn takes_function(b: Builtin) -> bool {
    b.signature().params.iter().any(|p| matches!(p, Sig::Arrow(..)))
}

/// Whether a built-in is a primitive operation: not one that takes a
/// function (`map`, `loop`, ...), nor `accelerate` or `flatten`, which the
/// lowering gives dedicated nodes (or rejects). `printFloat`, a keyword of
/// Miking's that takes a float, is a primitive.
pub fn is_primitive(b: Builtin) -> bool {
    !takes_function(b) && !matches!(b, Builtin::Accelerate | Builtin::Flatten)
}

/// Whether `args`, then `result`, fit the built-in's parameters and result
/// with one consistent choice of its type variables; `Err` says what does
/// not.
pub fn check(b: Builtin, args: &[Type], result: &Type) -> Result<(), String> {
    let sig = b.signature();
    if args.len() != sig.params.len() {
        return Err(format!("`{}` takes {} arguments, not {}", b.name(), sig.params.len(), args.len()));
    }
    let mut vars = FxHashMap::default();
    for (i, (p, a)) in sig.params.iter().zip(args).enumerate() {
        if !fits(p, a, &mut vars) {
            return Err(format!(
                "argument {} of `{}` has type `{a}`, which does not fit its signature",
                i + 1,
                b.name()
            ));
        }
    }
    if !fits(&sig.result, result, &mut vars) {
        return Err(format!("`{}` does not return `{result}` for these arguments", b.name()));
    }
    Ok(())
}

fn fits(s: &Sig, t: &Type, vars: &mut FxHashMap<SmolStr, Type>) -> bool {
    match (s, t) {
        (Sig::Var(v), _) => match vars.get(v) {
            Some(bound) => bound == t,
            None => {
                vars.insert(v.clone(), t.clone());
                true
            }
        },
        (Sig::Int, Type::Int) | (Sig::Float, Type::Float) | (Sig::Bool, Type::Bool) | (Sig::Char, Type::Char) => true,
        (Sig::Unit, Type::Unit) | (Sig::Con(..), Type::Opaque(..)) => true,
        (Sig::Seq(a), Type::Seq(b)) | (Sig::Tensor(a), Type::Tensor(b)) => fits(a, b, vars),
        (Sig::Arrow(a, r), Type::Fun(x, y)) => fits(a, x, vars) && fits(r, y, vars),
        (Sig::Tuple(items), Type::Record(fields)) => {
            items.len() == fields.len()
                && items
                    .iter()
                    .zip(fields)
                    .enumerate()
                    .all(|(i, (s, (l, t)))| l.as_str() == i.to_string() && fits(s, t, vars))
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arities_and_kinds() {
        assert_eq!(arity(Builtin::Addi), 2);
        assert_eq!(arity(Builtin::Set), 3);
        assert_eq!(arity(Builtin::Argv), 0);
        assert_eq!(arity(Builtin::SeqLoopAcc), 3);
        assert!(is_primitive(Builtin::Get));
        assert!(!is_primitive(Builtin::Map));
        assert!(!is_primitive(Builtin::Flatten));
        assert!(!is_primitive(Builtin::TensorCreateDense));
    }

    #[test]
    fn checks_instances_consistently() {
        let ints = Type::seq(Type::Int);
        assert!(check(Builtin::Get, &[ints.clone(), Type::Int], &Type::Int).is_ok());
        assert!(check(Builtin::Get, &[ints.clone(), Type::Int], &Type::Float).is_err());
        assert!(check(Builtin::Concat, &[ints.clone(), Type::seq(Type::Float)], &ints).is_err());
        assert!(check(Builtin::Addi, &[Type::Int], &Type::Int).is_err());
        let pair = Type::Record(vec![("0".into(), ints.clone()), ("1".into(), ints.clone())]);
        assert!(check(Builtin::SplitAt, &[ints.clone(), Type::Int], &pair).is_ok());
        assert!(check(Builtin::Float2string, &[Type::Float], &Type::seq(Type::Char)).is_ok());
        assert!(check(Builtin::FlushStdout, &[Type::Unit], &Type::Unit).is_ok());
        assert!(check(Builtin::Ref, &[Type::Int], &Type::Int).is_err());
    }
}
