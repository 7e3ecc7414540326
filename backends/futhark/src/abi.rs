//! What crosses an entry of the generated program, shared by the
//! generator (which writes the entry's parameters and results) and the
//! marshaling (which fills and reads them): every value is cut into
//! *leaves*, each a scalar or a regular array of scalars, depth first in
//! field order. A record (or tuple) is its fields' leaves; a sequence of
//! records is one array per field (Futhark's C API has no arrays of
//! records that are not opaque); `()` has no leaf.

use pmx_lower::Type;

/// A scalar as Futhark and its C API hold it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scalar {
    /// `Int`: `i64`.
    I64,
    /// `Float`: `f64`.
    F64,
    /// `Bool`: `bool` (one byte, 0 or 1).
    Bool,
    /// `Char`: its code point as `i32` (the layout of Rust's `char`).
    I32,
}

impl Scalar {
    pub fn of(t: &Type) -> Option<Scalar> {
        match t {
            Type::Int => Some(Scalar::I64),
            Type::Float => Some(Scalar::F64),
            Type::Bool => Some(Scalar::Bool),
            Type::Char => Some(Scalar::I32),
            _ => None,
        }
    }

    /// Futhark's name of the type (also the manifest's).
    pub fn futhark(self) -> &'static str {
        match self {
            Scalar::I64 => "i64",
            Scalar::F64 => "f64",
            Scalar::Bool => "bool",
            Scalar::I32 => "i32",
        }
    }

    pub fn bytes(self) -> usize {
        match self {
            Scalar::I64 | Scalar::F64 => 8,
            Scalar::Bool => 1,
            Scalar::I32 => 4,
        }
    }
}

/// One step from a value to one of its leaves.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Step {
    /// Into every element of a sequence (one more dimension).
    Elems,
    Field(pmx_ast::SmolStr),
}

/// One leaf: where it sits in the value and what it is.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Leaf {
    pub path: Vec<Step>,
    pub scalar: Scalar,
    /// How many sequences lead to it: 0 for a scalar.
    pub rank: usize,
}

impl Leaf {
    /// The manifest's name of its type: `i64`, `[][]f64`.
    pub fn futhark_type(&self) -> String {
        format!("{}{}", "[]".repeat(self.rank), self.scalar.futhark())
    }
}

/// The leaves of a value of type `t`, or the type that has no leaf
/// representation (tensors, variants).
pub fn leaves(t: &Type) -> Result<Vec<Leaf>, Type> {
    let mut out = Vec::new();
    walk(t, &mut Vec::new(), 0, &mut out)?;
    Ok(out)
}

fn walk(t: &Type, path: &mut Vec<Step>, rank: usize, out: &mut Vec<Leaf>) -> Result<(), Type> {
    match t {
        Type::Unit => Ok(()),
        Type::Int | Type::Float | Type::Bool | Type::Char => {
            let scalar = Scalar::of(t).expect("a scalar");
            out.push(Leaf { path: path.clone(), scalar, rank });
            Ok(())
        }
        Type::Record(fields) => {
            for (label, ft) in fields {
                path.push(Step::Field(label.clone()));
                walk(ft, path, rank, out)?;
                path.pop();
            }
            Ok(())
        }
        Type::Seq(e) => {
            path.push(Step::Elems);
            let r = walk(e, path, rank + 1, out);
            path.pop();
            r
        }
        Type::Tensor(_) | Type::Variant(_) | Type::Fun(..) | Type::Opaque(..) => Err(t.clone()),
    }
}

/// Whether a sequence of `t` is cut into one array per field (its
/// elements hold a record somewhere).
pub fn has_record(t: &Type) -> bool {
    match t {
        Type::Record(_) => true,
        Type::Seq(e) => has_record(e),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_and_sequences_of_records_are_cut_into_leaves() {
        let point = Type::Record(vec![("w".into(), Type::Int), ("xs".into(), Type::seq(Type::Float))]);
        let t = Type::Record(vec![("0".into(), Type::seq(point)), ("1".into(), Type::Unit), ("2".into(), Type::Char)]);
        let l = leaves(&t).unwrap();
        let shown: Vec<String> = l.iter().map(Leaf::futhark_type).collect();
        assert_eq!(shown, ["[]i64", "[][]f64", "i32"]);
        assert_eq!(l[1].path, vec![Step::Field("0".into()), Step::Elems, Step::Field("xs".into()), Step::Elems]);
        assert!(leaves(&Type::Tensor(Box::new(Type::Int))).is_err());
    }
}
