//! The type schemes of the built-in constants, parsed once from the
//! signatures in [`pmx_ast::Builtin::type_signature`].

use pmx_ast::{Builtin, BuiltinType, NameId, SmolStr, Ty, TyKind, TyVar};
use std::sync::LazyLock;

static SCHEMES: LazyLock<Vec<Ty>> = LazyLock::new(|| {
    Builtin::ALL
        .iter()
        .map(|b| parse_signature(b.type_signature()).unwrap_or_else(|e| panic!("bad signature of {}: {e}", b.name())))
        .collect()
});

/// The type scheme of a built-in, e.g. `all a. [a] -> Int` for `length`.
pub fn builtin_scheme(b: Builtin) -> Ty {
    SCHEMES[b as usize].clone()
}

/// Parses a signature; every lowercase name is a quantified variable.
pub(crate) fn parse_signature(src: &str) -> Result<Ty, String> {
    let tokens = tokenize(src);
    let mut p = SigParser { tokens, pos: 0, vars: Vec::new() };
    let body = p.ty()?;
    if p.pos != p.tokens.len() {
        return Err(format!("trailing input at token {}", p.pos));
    }
    Ok(p.vars.into_iter().rev().fold(body, |acc, v| Ty::new(TyKind::All(v, Vec::new(), acc))))
}

fn tokenize(src: &str) -> Vec<String> {
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

struct SigParser {
    tokens: Vec<String>,
    pos: usize,
    vars: Vec<TyVar>,
}

impl SigParser {
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

    fn ty(&mut self) -> Result<Ty, String> {
        let from = self.app()?;
        if self.peek() == Some("->") {
            self.pos += 1;
            let to = self.ty()?;
            return Ok(Ty::arrow(from, to));
        }
        Ok(from)
    }

    fn app(&mut self) -> Result<Ty, String> {
        if let Some(t) = BuiltinType::ALL.iter().find(|t| Some(t.name()) == self.peek()) {
            self.pos += 1;
            let mut args = Vec::new();
            while args.len() < t.arity() {
                args.push(self.atom()?);
            }
            return Ok(Ty::new(TyKind::Con(NameId::builtin_type(*t), SmolStr::new(t.name()), args)));
        }
        self.atom()
    }

    fn atom(&mut self) -> Result<Ty, String> {
        let tok = self.peek().ok_or("unexpected end")?.to_string();
        self.pos += 1;
        Ok(match tok.as_str() {
            "Int" => Ty::int(),
            "Float" => Ty::float(),
            "Bool" => Ty::bool(),
            "Char" => Ty::char(),
            "String" => Ty::string(),
            "Tensor" => {
                self.eat("[")?;
                let e = self.ty()?;
                self.eat("]")?;
                Ty::tensor(e)
            }
            "[" => {
                let e = self.ty()?;
                self.eat("]")?;
                Ty::seq(e)
            }
            "(" => {
                if self.peek() == Some(")") {
                    self.pos += 1;
                    return Ok(Ty::unit());
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
                    Ty::tuple(elems)
                }
            }
            v if v.chars().next().is_some_and(|c| c.is_lowercase()) => {
                let var = match self.vars.iter().find(|x| x.name == v) {
                    Some(x) => x.clone(),
                    None => {
                        let x = TyVar { id: self.vars.len() as u32, name: SmolStr::new(v) };
                        self.vars.push(x.clone());
                        x
                    }
                };
                Ty::new(TyKind::Var(var))
            }
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
            parse_signature(b.type_signature()).unwrap();
        }
    }

    #[test]
    fn schemes_print_back() {
        assert_eq!(builtin_scheme(Builtin::Foldl).to_string(), "all a. all b. (a -> b -> a) -> a -> [b] -> a");
        assert_eq!(builtin_scheme(Builtin::SplitAt).to_string(), "all a. [a] -> Int -> ([a], [a])");
        assert_eq!(builtin_scheme(Builtin::Modref).to_string(), "all a. Ref a -> a -> ()");
        assert_eq!(builtin_scheme(Builtin::TensorGetExn).to_string(), "all a. Tensor[a] -> [Int] -> a");
    }
}
