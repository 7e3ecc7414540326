//! Tensor built-ins.

use crate::error::Res;
use crate::eval::{Args, Machine};
use crate::tensor::{ElemKind, Tensor};
use crate::value::{Seq, Value};
use pmx_ast::{Builtin, Span};
use smallvec::smallvec;
use std::sync::Arc;

/// A shape given by the program: no negative dimension, and a number of
/// elements that a machine word can count.
/// The dimensions a sequence gives a new tensor, or the run-time error
/// (a negative one, or more elements than a machine can address).
pub fn shape(m: &Machine, v: &Value, span: Span) -> Res<Vec<usize>> {
    let dims = v
        .as_seq()
        .ints()
        .into_iter()
        .map(|d| usize::try_from(d).map_err(|_| m.fail(format!("a tensor dimension cannot be negative ({d})"), span)))
        .collect::<Res<Vec<usize>>>()?;
    crate::tensor::shape_size(&dims).map_err(|e| m.fail(e, span))?;
    Ok(dims)
}

/// The index of element `lin` (row-major) of a tensor of this shape.
pub fn index_of(lin: usize, shape: &[usize]) -> Value {
    let mut idx = vec![0i64; shape.len()];
    let mut rem = lin;
    for k in (0..shape.len()).rev() {
        idx[k] = (rem % shape[k]) as i64;
        rem /= shape[k];
    }
    Value::seq(Seq::from_values(idx.into_iter().map(Value::Int).collect()))
}

/// Miking's layout of `tensor2string`: a rank-0 tensor is its element,
/// rank 1 is `[a, b]`, and higher ranks put each row on its own line,
/// indented with one more tab per level.
fn write_nested(out: &mut String, elems: &[String], shape: &[usize], indent: &str) {
    match shape {
        [] => out.push_str(&elems[0]),
        [_] => {
            out.push('[');
            out.push_str(&elems.join(", "));
            out.push(']');
        }
        [n, rest @ ..] => {
            let inner: usize = rest.iter().product();
            let deeper = format!("{indent}\t");
            out.push_str("[\n");
            out.push_str(&deeper);
            for i in 0..*n {
                if i > 0 {
                    out.push_str(",\n");
                    out.push_str(&deeper);
                }
                write_nested(out, &elems[i * inner..(i + 1) * inner], rest, &deeper);
            }
            out.push('\n');
            out.push_str(indent);
            out.push(']');
        }
    }
}

fn tensor_value(t: Tensor) -> Value {
    Value::Tensor(Arc::new(t))
}

pub fn call(m: &mut Machine, b: Builtin, args: Args, span: Span) -> Res<Value> {
    use Builtin::*;
    let err = |m: &Machine, e: String| m.fail(e, span);
    Ok(match b {
        TensorCreateUninitInt | TensorCreateUninitFloat => {
            let shape = shape(m, &args[0], span)?;
            let (kind, zero) = if b == TensorCreateUninitInt {
                (ElemKind::Int, Value::Int(0))
            } else {
                (ElemKind::Float, Value::Float(0.0))
            };
            tensor_value(Tensor::from_fn::<()>(kind, shape, |_| Ok(zero.clone())).unwrap_or_else(|_| unreachable!()))
        }
        // Elements of a C array's kind are collected as the machine words
        // the tensor keeps (native code asks for the same memory).
        TensorCreateCArrayInt | TensorCreateCArrayFloat => {
            let dims = shape(m, &args[0], span)?;
            let f = args[1].clone();
            let n: usize = dims.iter().product();
            let int = b == TensorCreateCArrayInt;
            let mut words: Vec<u64> = crate::error::alloc_vec(n);
            for lin in 0..n {
                let v = m.call1(&f, index_of(lin, &dims), span)?;
                words.push(if int { v.as_int() as u64 } else { v.as_float().to_bits() });
            }
            let (kind, value): (ElemKind, fn(u64) -> Value) = if int {
                (ElemKind::Int, |w| Value::Int(w as i64))
            } else {
                (ElemKind::Float, |w| Value::Float(f64::from_bits(w)))
            };
            tensor_value(Tensor::from_fn::<()>(kind, dims, |i| Ok(value(words[i]))).unwrap_or_else(|_| unreachable!()))
        }
        TensorCreateDense => {
            let dims = shape(m, &args[0], span)?;
            let f = args[1].clone();
            let n: usize = dims.iter().product();
            let mut values = crate::error::alloc_vec(n);
            for lin in 0..n {
                values.push(m.call1(&f, index_of(lin, &dims), span)?);
            }
            let kind = match (b, values.first()) {
                (TensorCreateCArrayInt, _) => ElemKind::Int,
                (TensorCreateCArrayFloat, _) => ElemKind::Float,
                (_, Some(Value::Int(_))) => ElemKind::Int,
                (_, Some(Value::Float(_))) => ElemKind::Float,
                _ => ElemKind::Boxed,
            };
            tensor_value(
                Tensor::from_fn::<()>(kind, dims, |i| Ok(values[i].clone())).unwrap_or_else(|_| unreachable!()),
            )
        }
        TensorGetExn => args[0].as_tensor().get(&args[1].as_seq().ints()).map_err(|e| err(m, e))?,
        TensorSetExn => {
            let (t, ix) = (args[0].as_tensor(), args[1].as_seq().ints());
            t.set(&ix, args[2].clone()).map_err(|e| err(m, e))?;
            if m.accumulated.is_some() && m.shared.options.accumulations.float_sets.contains(&span) {
                super::order::accumulated(m, t, &ix);
            }
            Value::unit()
        }
        TensorLinearGetExn => args[0].as_tensor().linear_get(args[1].as_int()).map_err(|e| err(m, e))?,
        TensorLinearSetExn => {
            args[0].as_tensor().linear_set(args[1].as_int(), args[2].clone()).map_err(|e| err(m, e))?;
            Value::unit()
        }
        TensorRank => Value::Int(args[0].as_tensor().rank() as i64),
        TensorShape => {
            Value::seq(Seq::from_values(args[0].as_tensor().shape.iter().map(|d| Value::Int(*d as i64)).collect()))
        }
        TensorReshapeExn => {
            let s = shape(m, &args[1], span)?;
            tensor_value(args[0].as_tensor().reshape(s).map_err(|e| err(m, e))?)
        }
        TensorCopy => tensor_value(args[0].as_tensor().copy()),
        TensorTransposeExn => {
            tensor_value(args[0].as_tensor().transpose(args[1].as_int(), args[2].as_int()).map_err(|e| err(m, e))?)
        }
        TensorSliceExn => tensor_value(args[0].as_tensor().slice(&args[1].as_seq().ints()).map_err(|e| err(m, e))?),
        TensorSubExn => {
            tensor_value(args[0].as_tensor().sub(args[1].as_int(), args[2].as_int()).map_err(|e| err(m, e))?)
        }
        TensorIterSlice => {
            let (f, t) = (args[0].clone(), args[1].as_tensor().clone());
            // As Miking: a rank-0 tensor is passed whole, with index 0.
            if t.rank() == 0 {
                m.apply(f, smallvec![Value::Int(0), Value::Tensor(t)], span)?;
                return Ok(Value::unit());
            }
            for i in 0..t.shape[0] {
                let row = t.slice(&[i as i64]).map_err(|e| err(m, e))?;
                m.call2(&f, Value::Int(i as i64), tensor_value(row), span)?;
            }
            Value::unit()
        }
        TensorEq => {
            let (eq, a, b) = (args[0].clone(), args[1].as_tensor(), args[2].as_tensor());
            if a.shape != b.shape {
                return Ok(Value::Bool(false));
            }
            let (xs, ys) = (a.values(), b.values());
            for (x, y) in xs.into_iter().zip(ys) {
                if !m.apply(eq.clone(), smallvec![x, y], span)?.as_bool() {
                    return Ok(Value::Bool(false));
                }
            }
            Value::Bool(true)
        }
        Tensor2string => {
            let (f, t) = (args[0].clone(), args[1].as_tensor().clone());
            let mut parts = Vec::with_capacity(t.size());
            for v in t.values() {
                parts.push(m.apply(f.clone(), smallvec![v], span)?.as_string());
            }
            let mut out = String::new();
            write_nested(&mut out, &parts, &t.shape, "");
            Value::string(&out)
        }
        _ => unreachable!("not a tensor built-in: {b:?}"),
    })
}
