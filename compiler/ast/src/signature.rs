//! The built-ins' signatures ([`Builtin::type_signature`], MExpr type
//! syntax) parsed once, in one place, for every pass that asks about a
//! built-in's type: the type checker's schemes (`pmx_types`), the
//! lowering's arities and fit checks (`pmx_lower`), [`Builtin::arity`]
//! (which the interpreter uses), and which arguments are functions
//! (`spine::function_argument`'s test). Two parsers of the same strings
//! could disagree on one; this one cannot.

use crate::{Builtin, BuiltinType};
use smol_str::SmolStr;
use std::sync::LazyLock;

/// A type as a built-in's signature writes it.
#[derive(Clone, Debug, PartialEq)]
pub enum Sig {
    Int,
    Float,
    Bool,
    Char,
    /// `()`.
    Unit,
    /// A lowercase name: a type variable, quantified over the signature.
    Var(SmolStr),
    /// `[a]`; `String` is `[Char]`.
    Seq(Box<Sig>),
    /// `Tensor[a]`.
    Tensor(Box<Sig>),
    /// `(a, b, ..)`, at least two elements.
    Tuple(Vec<Sig>),
    Arrow(Box<Sig>, Box<Sig>),
    /// A built-in type constructor and its arguments (`Ref a`, `Symbol`).
    Con(BuiltinType, Vec<Sig>),
}

/// A built-in's parameters (the types left of its top-level arrows) and
/// result.
#[derive(Clone, Debug, PartialEq)]
pub struct Signature {
    pub params: Vec<Sig>,
    pub result: Sig,
}

static SIGNATURES: LazyLock<Vec<Signature>> = LazyLock::new(|| {
    Builtin::ALL
        .iter()
        .map(|b| parse(b.type_signature()).unwrap_or_else(|e| panic!("bad signature of {}: {e}", b.name())))
        .collect()
});

impl Builtin {
    /// Its signature, parsed (once for all built-ins).
    pub fn signature(self) -> &'static Signature {
        &SIGNATURES[self as usize]
    }
}

/// Parses a signature into its parameters and result.
fn parse(src: &str) -> Result<Signature, String> {
    let mut p = Parser { tokens: tokens(src), pos: 0 };
    let mut t = p.ty()?;
    if p.pos != p.tokens.len() {
        return Err(format!("trailing input at token {}", p.pos));
    }
    let mut params = Vec::new();
    while let Sig::Arrow(a, r) = t {
        params.push(*a);
        t = *r;
    }
    Ok(Signature { params, result: t })
}

fn tokens(src: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = src.chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
        } else if c.is_alphanumeric() {
            let mut s = String::new();
            while let Some(&c) = chars.peek() {
                if c.is_alphanumeric() {
                    s.push(c);
                    chars.next();
                } else {
                    break;
                }
            }
            out.push(s);
        } else if c == '-' {
            chars.next();
            chars.next();
            out.push("->".into());
        } else {
            out.push(c.to_string());
            chars.next();
        }
    }
    out
}

/// A recursive-descent parser of the signature strings.
struct Parser {
    tokens: Vec<String>,
    pos: usize,
}

impl Parser {
    fn peek(&self) -> Option<&str> {
        self.tokens.get(self.pos).map(String::as_str)
    }

    fn eat(&mut self, t: &str) -> Result<(), String> {
        if self.peek() == Some(t) {
            self.pos += 1;
            Ok(())
        } else {
            Err(format!("expected `{t}` at token {}", self.pos))
        }
    }

    fn ty(&mut self) -> Result<Sig, String> {
        let from = self.app()?;
        if self.peek() == Some("->") {
            self.pos += 1;
            let to = self.ty()?;
            return Ok(Sig::Arrow(Box::new(from), Box::new(to)));
        }
        Ok(from)
    }

    fn app(&mut self) -> Result<Sig, String> {
        if let Some(t) = BuiltinType::ALL.iter().find(|t| Some(t.name()) == self.peek()) {
            self.pos += 1;
            let mut args = Vec::new();
            while args.len() < t.arity() {
                args.push(self.atom()?);
            }
            return Ok(Sig::Con(*t, args));
        }
        self.atom()
    }

    fn atom(&mut self) -> Result<Sig, String> {
        let tok = self.peek().ok_or("unexpected end")?.to_string();
        self.pos += 1;
        Ok(match tok.as_str() {
            "Int" => Sig::Int,
            "Float" => Sig::Float,
            "Bool" => Sig::Bool,
            "Char" => Sig::Char,
            "String" => Sig::Seq(Box::new(Sig::Char)),
            "Tensor" => {
                self.eat("[")?;
                let e = self.ty()?;
                self.eat("]")?;
                Sig::Tensor(Box::new(e))
            }
            "[" => {
                let e = self.ty()?;
                self.eat("]")?;
                Sig::Seq(Box::new(e))
            }
            "(" => {
                if self.peek() == Some(")") {
                    self.pos += 1;
                    return Ok(Sig::Unit);
                }
                let mut elems = vec![self.ty()?];
                while self.peek() == Some(",") {
                    self.pos += 1;
                    elems.push(self.ty()?);
                }
                self.eat(")")?;
                if elems.len() == 1 {
                    elems.pop().expect("one element")
                } else {
                    Sig::Tuple(elems)
                }
            }
            v if v.chars().next().is_some_and(|c| c.is_lowercase()) => Sig::Var(SmolStr::new(v)),
            other => return Err(format!("unexpected `{other}`")),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_signature_parses() {
        for b in Builtin::ALL {
            parse(b.type_signature()).unwrap();
        }
    }

    #[test]
    fn parameters_and_results() {
        let s = Builtin::SplitAt.signature();
        assert_eq!(s.params, vec![Sig::Seq(Box::new(Sig::Var("a".into()))), Sig::Int]);
        let a = || Sig::Seq(Box::new(Sig::Var("a".into())));
        assert_eq!(s.result, Sig::Tuple(vec![a(), a()]));
        assert_eq!(Builtin::Argv.signature().params, Vec::new());
        assert_eq!(Builtin::Modref.signature().params[0], Sig::Con(BuiltinType::Ref, vec![Sig::Var("a".into())]));
        assert!(matches!(Builtin::Foldl.signature().params[0], Sig::Arrow(..)));
    }
}
