//! The built-ins' types as the lowering and the validator need them: how
//! many arguments each takes (a primitive is always applied to exactly
//! that many) and whether given IR types fit its signature. The signatures
//! are `pmx_ast::Builtin::type_signature`, parsed here once.

use crate::ir::Type;
use pmx_ast::Builtin;
use rustc_hash::FxHashMap;
use std::sync::LazyLock;

/// A built-in's type: lowercase names are type variables.
#[derive(Clone, Debug, PartialEq)]
enum Sig {
    Int,
    Float,
    Bool,
    Char,
    Unit,
    Var(String),
    Seq(Box<Sig>),
    Tensor(Box<Sig>),
    Tuple(Vec<Sig>),
    Arrow(Box<Sig>, Box<Sig>),
    /// `Ref a`, `Symbol`: host code's `Type::Opaque`.
    Opaque,
}

/// A built-in's parameters and result.
struct Signature {
    params: Vec<Sig>,
    result: Sig,
}

static SIGNATURES: LazyLock<Vec<Signature>> = LazyLock::new(|| {
    Builtin::ALL
        .iter()
        .map(|b| {
            let mut p = Parser { tokens: tokens(b.type_signature()), at: 0 };
            let mut t = p.arrow();
            let mut params = Vec::new();
            while let Sig::Arrow(a, r) = t {
                params.push(*a);
                t = *r;
            }
            Signature { params, result: t }
        })
        .collect()
});

fn signature(b: Builtin) -> &'static Signature {
    &SIGNATURES[b as usize]
}

/// How many arguments the built-in takes.
pub fn arity(b: Builtin) -> usize {
    signature(b).params.len()
}

/// Whether one of its parameters is a function (`map`, `foldl`, ...).
pub fn takes_function(b: Builtin) -> bool {
    signature(b).params.iter().any(|p| matches!(p, Sig::Arrow(..)))
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
    let sig = signature(b);
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

fn fits(s: &Sig, t: &Type, vars: &mut FxHashMap<String, Type>) -> bool {
    match (s, t) {
        (Sig::Var(v), _) => match vars.get(v) {
            Some(bound) => bound == t,
            None => {
                vars.insert(v.clone(), t.clone());
                true
            }
        },
        (Sig::Int, Type::Int) | (Sig::Float, Type::Float) | (Sig::Bool, Type::Bool) | (Sig::Char, Type::Char) => true,
        (Sig::Unit, Type::Unit) | (Sig::Opaque, Type::Opaque(..)) => true,
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

fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            ' ' => {}
            '-' => {
                chars.next();
                out.push("->".to_string());
            }
            '[' | ']' | '(' | ')' | ',' => out.push(c.to_string()),
            _ => {
                let mut word = c.to_string();
                while let Some(&d) = chars.peek() {
                    if d.is_alphanumeric() {
                        word.push(d);
                        chars.next();
                    } else {
                        break;
                    }
                }
                out.push(word);
            }
        }
    }
    out
}

/// A recursive-descent parser for the signature strings (which are fixed
/// and well-formed: the type checker parses them too).
struct Parser {
    tokens: Vec<String>,
    at: usize,
}

impl Parser {
    fn peek(&self) -> &str {
        self.tokens.get(self.at).map(String::as_str).unwrap_or("")
    }

    fn next(&mut self) -> String {
        let t = self.peek().to_string();
        self.at += 1;
        t
    }

    fn arrow(&mut self) -> Sig {
        let from = self.atom();
        if self.peek() == "->" {
            self.next();
            return Sig::Arrow(Box::new(from), Box::new(self.arrow()));
        }
        from
    }

    fn atom(&mut self) -> Sig {
        let t = self.next();
        match t.as_str() {
            "Int" => Sig::Int,
            "Float" => Sig::Float,
            "Bool" => Sig::Bool,
            "Char" => Sig::Char,
            "String" => Sig::Seq(Box::new(Sig::Char)),
            "Symbol" => Sig::Opaque,
            "Ref" => {
                self.atom();
                Sig::Opaque
            }
            "Tensor" => {
                self.next();
                let e = self.arrow();
                self.next();
                Sig::Tensor(Box::new(e))
            }
            "[" => {
                let e = self.arrow();
                self.next();
                Sig::Seq(Box::new(e))
            }
            "(" => {
                if self.peek() == ")" {
                    self.next();
                    return Sig::Unit;
                }
                let mut items = vec![self.arrow()];
                while self.peek() == "," {
                    self.next();
                    items.push(self.arrow());
                }
                self.next();
                if items.len() == 1 {
                    items.pop().unwrap_or(Sig::Unit)
                } else {
                    Sig::Tuple(items)
                }
            }
            _ => Sig::Var(t),
        }
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
