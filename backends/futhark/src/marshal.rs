//! pmx values to the leaves of an entry (`abi.rs`) and back.
//!
//! In: a leaf that is a whole unboxed sequence (`[Int]`, `[Float]`,
//! `[Char]`, `[Bool]` parameters) is handed to Futhark as the sequence's
//! own buffer (`futhark_new_*` copies it into the context); other leaves
//! are gathered into one flat buffer, checking that nested sequences are
//! regular (a Futhark array is rectangular: an irregular one is an error
//! here, not undefined behaviour). Out: `futhark_values_*` writes straight
//! into the vector that becomes an unboxed sequence; the rows of a
//! multi-dimensional result are views of that one buffer.

use crate::abi::{has_record, Leaf, Scalar, Step};
use pmx_cpu::value::{Record, Seq, Value, View};
use pmx_lower::Type;
use std::sync::Arc;

/// The elements of a leaf, in Futhark's representation.
pub enum Buf {
    I64(Vec<i64>),
    F64(Vec<f64>),
    Bool(Vec<bool>),
    I32(Vec<i32>),
}

impl Buf {
    /// An empty buffer with room for `n` elements.
    /// A large one asks for huge pages before it is filled (fresh memory's
    /// page faults cost more than the copy, `pmx_native::pages`).
    pub fn with_capacity(s: Scalar, n: usize) -> Buf {
        let mut b = match s {
            Scalar::I64 => Buf::I64(Vec::with_capacity(n)),
            Scalar::F64 => Buf::F64(Vec::with_capacity(n)),
            Scalar::Bool => Buf::Bool(Vec::with_capacity(n)),
            Scalar::I32 => Buf::I32(Vec::with_capacity(n)),
        };
        pmx_native::pages::advise_huge(b.ptr_mut(), n * s.bytes());
        b
    }

    /// Where its elements go.
    pub fn ptr_mut(&mut self) -> *mut u8 {
        match self {
            Buf::I64(v) => v.as_mut_ptr() as *mut u8,
            Buf::F64(v) => v.as_mut_ptr() as *mut u8,
            Buf::Bool(v) => v.as_mut_ptr() as *mut u8,
            Buf::I32(v) => v.as_mut_ptr() as *mut u8,
        }
    }

    fn ptr(&self) -> *const u8 {
        match self {
            Buf::I64(v) => v.as_ptr() as *const u8,
            Buf::F64(v) => v.as_ptr() as *const u8,
            Buf::Bool(v) => v.as_ptr() as *const u8,
            Buf::I32(v) => v.as_ptr() as *const u8,
        }
    }

    fn push(&mut self, v: &Value) -> Result<(), String> {
        match (self, v) {
            (Buf::I64(b), Value::Int(x)) => b.push(*x),
            (Buf::F64(b), Value::Float(x)) => b.push(*x),
            (Buf::Bool(b), Value::Bool(x)) => b.push(*x),
            (Buf::I32(b), Value::Char(c)) => b.push(*c as i32),
            _ => return Err("a value of an unexpected type crossed into Futhark code".into()),
        }
        Ok(())
    }

    /// Appends a whole unboxed sequence of the right representation.
    fn extend(&mut self, s: &Seq) -> bool {
        match (self, s) {
            (Buf::I64(b), Seq::Int(v)) => b.extend_from_slice(v.as_slice()),
            (Buf::F64(b), Seq::Float(v)) => b.extend_from_slice(v.as_slice()),
            (Buf::Bool(b), Seq::Bool(v)) => b.extend_from_slice(v.as_slice()),
            (Buf::I32(b), Seq::Char(v)) => b.extend(v.as_slice().iter().map(|c| *c as i32)),
            _ => return false,
        }
        true
    }
}

/// One leaf's value, ready for the C API.
pub enum Input {
    /// A scalar in the low bytes of a word (as C reads an `int64_t`,
    /// `double`, `bool` or `int32_t` there on a little-endian machine).
    Scalar(u64),
    Array {
        /// The elements, row-major: a borrowed unboxed buffer (alive as
        /// long as the values passed) or `owned`'s.
        data: *const u8,
        owned: Option<Buf>,
        dims: Vec<i64>,
    },
}

impl Input {
    pub fn bytes(&self, scalar: Scalar) -> u64 {
        match self {
            Input::Scalar(_) => scalar.bytes() as u64,
            Input::Array { dims, .. } => dims.iter().product::<i64>().max(0) as u64 * scalar.bytes() as u64,
        }
    }
}

/// The leaves of the parameters `values` (of types `types`, cut into
/// `leaves`). The inputs borrow from `values`.
pub fn inputs(values: &[Value], types: &[Type], leaves: &[Leaf]) -> Result<Vec<Input>, String> {
    let mut out = Vec::with_capacity(leaves.len());
    let mut k = 0;
    for (v, t) in values.iter().zip(types) {
        let n =
            crate::abi::leaves(t).map_err(|bad| format!("a value of type {bad} cannot cross into Futhark code"))?.len();
        for leaf in &leaves[k..k + n] {
            // The path starts at the parameter itself.
            out.push(input(v, leaf)?);
        }
        k += n;
    }
    Ok(out)
}

fn input(v: &Value, leaf: &Leaf) -> Result<Input, String> {
    if leaf.rank == 0 {
        let mut v = v;
        for step in &leaf.path {
            if let Step::Field(l) = step {
                v = field(v, l)?;
            }
        }
        return Ok(Input::Scalar(match v {
            Value::Int(x) => *x as u64,
            Value::Float(x) => x.to_bits(),
            Value::Bool(b) => *b as u64,
            Value::Char(c) => *c as u32 as u64,
            _ => return Err("a value of an unexpected type crossed into Futhark code".into()),
        }));
    }
    // The buffer of an unboxed sequence, as it is.
    if leaf.path == [Step::Elems] {
        if let Value::Seq(s) = v {
            let data = match (&**s, leaf.scalar) {
                (Seq::Int(view), Scalar::I64) => Some(view.as_slice().as_ptr() as *const u8),
                (Seq::Float(view), Scalar::F64) => Some(view.as_slice().as_ptr() as *const u8),
                (Seq::Bool(view), Scalar::Bool) => Some(view.as_slice().as_ptr() as *const u8),
                // A `char` is its code point in four bytes: an `i32`.
                (Seq::Char(view), Scalar::I32) => Some(view.as_slice().as_ptr() as *const u8),
                _ => None,
            };
            if let Some(data) = data {
                return Ok(Input::Array { data, owned: None, dims: vec![s.len() as i64] });
            }
        }
    }
    let mut dims: Vec<Option<i64>> = vec![None; leaf.rank];
    // Sized from the first row of each dimension, so that a regular
    // sequence is gathered in one pass with no reallocation (an irregular
    // one is refused by `gather`).
    let mut buf = Buf::with_capacity(leaf.scalar, expected_len(v, &leaf.path));
    gather(v, &leaf.path, 0, &mut dims, &mut buf)?;
    let data = buf.ptr();
    Ok(Input::Array { data, owned: Some(buf), dims: dims.into_iter().map(|d| d.unwrap_or(0)).collect() })
}

fn field<'v>(v: &'v Value, l: &str) -> Result<&'v Value, String> {
    match v {
        Value::Record(r) => r.get(l).ok_or_else(|| format!("a record without field `{l}` crossed into Futhark code")),
        _ => Err("a value of an unexpected type crossed into Futhark code".into()),
    }
}

/// The number of scalars at `path` under `v` if it is regular: the product
/// of the lengths of the first rows (capped, as it is only a capacity).
fn expected_len(v: &Value, path: &[Step]) -> usize {
    let mut n: usize = 1;
    let mut v = v.clone();
    for step in path {
        match step {
            Step::Field(l) => match field(&v, l) {
                Ok(f) => v = f.clone(),
                Err(_) => return 0,
            },
            Step::Elems => {
                let Value::Seq(s) = &v else { return 0 };
                n = n.saturating_mul(s.len());
                if s.is_empty() {
                    return 0;
                }
                v = s.get(0);
            }
        }
    }
    n.min(1 << 28)
}

/// Appends the scalars at `path` under `v`, recording the length of each
/// dimension (`depth`: the dimensions entered so far).
fn gather(v: &Value, path: &[Step], depth: usize, dims: &mut [Option<i64>], buf: &mut Buf) -> Result<(), String> {
    match path.first() {
        None => buf.push(v),
        Some(Step::Field(l)) => gather(field(v, l)?, &path[1..], depth, dims, buf),
        Some(Step::Elems) => {
            let Value::Seq(s) = v else { return Err("a value of an unexpected type crossed into Futhark code".into()) };
            let len = s.len() as i64;
            match dims[depth] {
                None => dims[depth] = Some(len),
                Some(d) if d != len => {
                    return Err(format!(
                        "Irregular sequence found: rows of lengths {d} and {len} cannot cross into Futhark code, whose \
                         arrays are rectangular (pmx run --debug checks every accelerate for this)"
                    ))
                }
                Some(_) => {}
            }
            if path.len() == 1 && buf.extend(s) {
                return Ok(());
            }
            for i in 0..s.len() {
                gather(&s.get(i), &path[1..], depth + 1, dims, buf)?;
            }
            Ok(())
        }
    }
}

/// An array result: its elements and shape, as `futhark_values_*` and
/// `futhark_shape_*` gave them.
pub struct Output {
    pub buf: Buf,
    pub dims: Vec<i64>,
}

/// A scalar result from the low bytes of its slot.
pub fn scalar_value(s: Scalar, word: u64) -> Result<Value, String> {
    Ok(match s {
        Scalar::I64 => Value::Int(word as i64),
        Scalar::F64 => Value::Float(f64::from_bits(word)),
        Scalar::Bool => Value::Bool(word & 0xff != 0),
        Scalar::I32 => Value::Char(char_of(word as u32 as i32)?),
    })
}

fn char_of(code: i32) -> Result<char, String> {
    u32::try_from(code)
        .ok()
        .and_then(char::from_u32)
        .ok_or_else(|| format!("Futhark code returned {code}, which is not the code of a character"))
}

/// An array result as nested sequences; rows are views of one buffer.
pub fn array_value(o: Output) -> Result<Value, String> {
    let flat = match o.buf {
        Buf::I64(v) => Seq::Int(View::from_vec(v)),
        Buf::F64(v) => Seq::Float(View::from_vec(v)),
        Buf::Bool(v) => Seq::Bool(View::from_vec(v)),
        Buf::I32(v) => Seq::Char(View::from_vec(v.into_iter().map(char_of).collect::<Result<Vec<char>, String>>()?)),
    };
    Ok(rows(&flat, &o.dims, 0))
}

fn rows(flat: &Seq, dims: &[i64], start: usize) -> Value {
    let len = dims[0].max(0) as usize;
    if dims.len() == 1 {
        return Value::seq(flat.slice(start, start + len));
    }
    let row: usize = dims[1..].iter().map(|d| d.max(&0)).product::<i64>() as usize;
    let items: Vec<Value> = (0..len).map(|i| rows(flat, &dims[1..], start + i * row)).collect();
    Value::seq(Seq::from_values(items))
}

/// The result value of type `t` from its leaves' values, in order.
pub fn assemble(t: &Type, leaves: &mut dyn Iterator<Item = Value>) -> Result<Value, String> {
    match t {
        Type::Unit => Ok(Value::unit()),
        Type::Record(fields) => {
            let mut out = Vec::with_capacity(fields.len());
            for (l, ft) in fields {
                out.push((l.clone(), assemble(ft, leaves)?));
            }
            Ok(Value::Record(Arc::new(Record::from_fields(out))))
        }
        Type::Seq(e) if has_record(e) => {
            // One array per field: element `i` is built from row `i` of
            // each.
            let n = crate::abi::leaves(e).map_err(|bad| format!("a result of type {bad} cannot come back"))?.len();
            let columns: Vec<Value> = leaves.take(n).collect();
            let len = columns.first().map(|c| c.as_seq().len()).unwrap_or(0);
            let mut items = Vec::with_capacity(len);
            for i in 0..len {
                let mut row = columns.iter().map(|c| c.as_seq().get(i));
                items.push(assemble(e, &mut row as &mut dyn Iterator<Item = Value>)?);
            }
            Ok(Value::seq(Seq::from_values(items)))
        }
        _ => leaves.next().ok_or_else(|| "internal error: a result leaf is missing".to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::abi::leaves;

    fn ints(xs: &[i64]) -> Value {
        Value::seq(Seq::Int(View::from_vec(xs.to_vec())))
    }

    #[test]
    fn an_unboxed_sequence_is_passed_as_its_buffer() {
        let v = ints(&[1, 2, 3]);
        let t = Type::seq(Type::Int);
        let ins = inputs(std::slice::from_ref(&v), std::slice::from_ref(&t), &leaves(&t).unwrap()).unwrap();
        let Input::Array { data, owned, dims } = &ins[0] else { panic!() };
        assert!(owned.is_none());
        let Seq::Int(view) = v.as_seq() else { panic!() };
        assert_eq!(*data, view.as_slice().as_ptr() as *const u8);
        assert_eq!(dims, &[3]);
    }

    #[test]
    fn nested_sequences_are_flattened_and_irregular_ones_refused() {
        let t = Type::seq(Type::seq(Type::Int));
        let regular = Value::seq(Seq::from_values(vec![ints(&[1, 2]), ints(&[3, 4])]));
        let ins = inputs(std::slice::from_ref(&regular), std::slice::from_ref(&t), &leaves(&t).unwrap()).unwrap();
        let Input::Array { owned: Some(Buf::I64(b)), dims, .. } = &ins[0] else { panic!() };
        assert_eq!((b.as_slice(), dims.as_slice()), (&[1, 2, 3, 4][..], &[2, 2][..]));
        let irregular = Value::seq(Seq::from_values(vec![ints(&[1, 2]), ints(&[3])]));
        let e = inputs(&[irregular], std::slice::from_ref(&t), &leaves(&t).unwrap()).err().unwrap();
        assert!(e.starts_with("Irregular sequence found"), "{e}");
    }

    #[test]
    fn results_come_back_as_rows_and_records() {
        let v = array_value(Output { buf: Buf::I64(vec![1, 2, 3, 4, 5, 6]), dims: vec![2, 3] }).unwrap();
        assert_eq!(v.as_seq().len(), 2);
        assert_eq!(v.as_seq().get(1).as_seq().ints(), vec![4, 5, 6]);
        let point = Type::Record(vec![("w".into(), Type::Int), ("z".into(), Type::Bool)]);
        let t = Type::Record(vec![("0".into(), Type::seq(point)), ("1".into(), Type::Float)]);
        let leaves_in =
            vec![ints(&[7, 8]), Value::seq(Seq::Bool(View::from_vec(vec![true, false]))), Value::Float(1.5)];
        let r = assemble(&t, &mut leaves_in.into_iter()).unwrap();
        let Value::Record(r) = r else { panic!() };
        let pts = r.get("0").unwrap().as_seq();
        let Value::Record(p1) = pts.get(1) else { panic!() };
        assert_eq!((p1.get("w").unwrap().as_int(), p1.get("z").unwrap().as_bool()), (8, false));
    }
}
