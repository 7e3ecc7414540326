//! Sequence built-ins and the parallel keywords over sequences.

use super::parallel;
use crate::error::Res;
use crate::eval::{Args, Machine};
use crate::value::{Seq, Value};
use pmx_ast::{Builtin, Span};
use smallvec::smallvec;
use std::sync::Arc;

/// The index `i` of a sequence of length `n`, or the run-time error.
pub(crate) fn index(m: &Machine, i: i64, n: usize, span: Span) -> Res<usize> {
    // One message for both ends, as native code gives (see `checks`).
    if i < 0 || i as usize >= n {
        return Err(m.fail(format!("Out of bounds access in sequence: index {i} but the length is {n}"), span));
    }
    Ok(i as usize)
}

fn seq_value(s: Seq) -> Value {
    Value::seq(s)
}

/// Takes the sequence out of its value, without copying when unshared.
fn take_seq(v: Value) -> Seq {
    match v {
        Value::Seq(s) => Arc::try_unwrap(s).unwrap_or_else(|s| (*s).clone()),
        _ => crate::error::type_confusion("a sequence"),
    }
}

pub fn call(m: &mut Machine, b: Builtin, mut args: Args, span: Span) -> Res<Value> {
    use Builtin::*;
    Ok(match b {
        Create | CreateList | CreateRope => {
            let n = args[0].as_int();
            if n < 0 {
                return Err(m.fail(format!("Create with a negative length: {n}"), span));
            }
            let f = args[1].clone();
            let mut out = Seq::builder(n as usize);
            for i in 0..n {
                out.push(m.call1(&f, Value::Int(i), span)?);
            }
            let s = seq_value(out.finish().with_list(b == CreateList));
            m.check_regular(&s, span)?;
            s
        }
        IsList => Value::Bool(args[0].as_seq().is_list()),
        IsRope => Value::Bool(!args[0].as_seq().is_list()),
        Length => Value::Int(args[0].as_seq().len() as i64),
        Concat => {
            let (a, b) = (args[0].as_seq(), args[1].as_seq());
            if !b.is_empty() {
                m.check_joins(&b.get(0), &args[0], span)?;
            }
            seq_value(a.concat(b))
        }
        Get => {
            let s = args[0].as_seq();
            let i = index(m, args[1].as_int(), s.len(), span)?;
            s.get(i)
        }
        Set => {
            // The row's sizes first, as the native code checks them: those
            // of the rows, the one replaced included (a Futhark array's
            // rows are of one type).
            m.check_joins(&args[2], &args[0], span)?;
            let i = index(m, args[1].as_int(), args[0].as_seq().len(), span)?;
            let v = args.pop().expect("three arguments");
            args.pop();
            let s = take_seq(args.pop().expect("three arguments"));
            seq_value(s.set(i, v))
        }
        Cons => {
            m.check_joins(&args[0], &args[1], span)?;
            seq_value(args[1].as_seq().cons(args[0].clone()))
        }
        Snoc => {
            m.check_joins(&args[1], &args[0], span)?;
            seq_value(args[0].as_seq().snoc(args[1].clone()))
        }
        SplitAt => {
            let s = args[0].as_seq();
            let i = args[1].as_int();
            if i < 0 || i as usize > s.len() {
                return Err(
                    m.fail(format!("Split at index out of bounds: index {i} but the length is {}", s.len()), span)
                );
            }
            let i = i as usize;
            Value::tuple(vec![seq_value(s.slice(0, i)), seq_value(s.slice(i, s.len()))])
        }
        Reverse => seq_value(args[0].as_seq().reverse()),
        Head => {
            let s = args[0].as_seq();
            if s.is_empty() {
                return Err(m.fail("Head on empty sequence", span));
            }
            s.get(0)
        }
        Tail => {
            let s = args[0].as_seq();
            if s.is_empty() {
                return Err(m.fail("Tail on empty sequence", span));
            }
            seq_value(s.slice(1, s.len()))
        }
        Null => Value::Bool(args[0].as_seq().is_empty()),
        Subsequence => {
            let s = args[0].as_seq();
            let (from, len) = (args[1].as_int(), args[2].as_int());
            if from < 0 || len < 0 {
                return Err(
                    m.fail(format!("Subsequence using a negative index or length: index {from}, length {len}"), span)
                );
            }
            // Clamped to what is available.
            let start = (from as usize).min(s.len());
            let end = start.saturating_add(len as usize).min(s.len());
            seq_value(s.slice(start, end))
        }
        Map | ParallelMap => {
            let out = parallel::map(m, &args[0], args[1].as_seq(), span)?;
            let s = seq_value(out.with_list(args[1].as_seq().is_list()));
            m.check_regular(&s, span)?;
            s
        }
        Mapi => {
            let (f, s) = (args[0].clone(), args[1].as_seq());
            let mut out = crate::error::alloc_vec(s.len());
            for i in 0..s.len() {
                out.push(m.call2(&f, Value::Int(i as i64), s.get(i), span)?);
            }
            seq_value(Seq::from_values(out).with_list(s.is_list()))
        }
        Iter | Iteri => {
            let (f, s) = (args[0].clone(), args[1].as_seq());
            for i in 0..s.len() {
                let a = if b == Iter { smallvec![s.get(i)] } else { smallvec![Value::Int(i as i64), s.get(i)] };
                m.apply(f.clone(), a, span)?;
            }
            Value::unit()
        }
        Foldl => {
            let (f, mut acc, s) = (args[0].clone(), args[1].clone(), args[2].as_seq());
            for i in 0..s.len() {
                acc = m.call2(&f, acc, s.get(i), span)?;
            }
            acc
        }
        Foldr => {
            let (f, mut acc, s) = (args[0].clone(), args[1].clone(), args[2].as_seq());
            for i in (0..s.len()).rev() {
                acc = m.call2(&f, s.get(i), acc, span)?;
            }
            acc
        }
        Map2 => {
            let (a, b) = (args[1].as_seq(), args[2].as_seq());
            if a.len() != b.len() {
                return Err(
                    m.fail(format!("map2 on sequences of different lengths: {} and {}", a.len(), b.len()), span)
                );
            }
            let s = seq_value(Seq::from_values(parallel::map2(m, &args[0], a, b, span)?));
            m.check_regular(&s, span)?;
            s
        }
        Reduce if m.regular && !parallel::checking_order(m) => {
            regular_reduce(m, &args[0], &args[1], args[2].as_seq(), span)?
        }
        Reduce => parallel::reduce(m, &args[0], &args[1], args[2].as_seq(), span)?,
        Flatten => {
            let outer = args[0].as_seq();
            let mut acc = Seq::empty();
            for i in 0..outer.len() {
                acc = acc.concat(outer.get(i).as_seq());
            }
            let s = seq_value(acc);
            m.check_regular(&s, span)?;
            s
        }
        Loop => {
            parallel::par_loop(m, args[0].as_int(), &args[1], span)?;
            Value::unit()
        }
        SeqLoop => {
            let f = args[1].clone();
            for i in 0..args[0].as_int().max(0) {
                m.call1(&f, Value::Int(i), span)?;
            }
            Value::unit()
        }
        SeqLoopAcc => {
            let (mut acc, n, f) = (args[0].clone(), args[1].as_int(), args[2].clone());
            for i in 0..n.max(0) {
                acc = m.call2(&f, acc, Value::Int(i), span)?;
            }
            acc
        }
        _ => unreachable!("not a sequence built-in: {b:?}"),
    })
}

/// `reduce f ne s` in Futhark-class code in debug mode, as the native code
/// runs it: where every element has the neutral element's sizes, a
/// parallel `reduce` whose operator must keep them (Futhark's operators
/// are of one type); otherwise (an operator that grows its accumulator,
/// such as `concat`) a fold, whose results may have any sizes.
fn regular_reduce(m: &mut Machine, f: &Value, ne: &Value, s: &Seq, span: Span) -> Res<Value> {
    let parallel = (0..s.len()).all(|k| crate::checks::same_layout(ne, &s.get(k)));
    let mut acc = ne.clone();
    for k in 0..s.len() {
        acc = m.call2(f, acc, s.get(k), span)?;
        if parallel && !crate::checks::same_layout(ne, &acc) {
            return Err(m.fail(
                "Irregular sequence found: the operator of reduce changed the sizes of its neutral element",
                span,
            ));
        }
    }
    Ok(acc)
}
