//! `--check-order` (debug mode): the paper assumes that a `loop`'s result
//! does not depend on the order of its iterations and that `reduce`'s
//! function is associative with a neutral start value, and says no dynamic
//! check of this is known. This one runs each `loop` in accelerated code
//! forwards, backwards and in a shuffled order, from the same state of
//! every tensor it can reach, and each `reduce` bracketed to the left and
//! to the right, and fails where the results differ.
//!
//! Accumulations (`crate::Accumulations`: a cell updated with an
//! associative and commutative operator, which native code makes atomic)
//! give the same result in every order, exactly for integers, so they pass
//! as they are; a float accumulation's sum may round differently in
//! another order, so the cells it writes are not compared, and the run
//! says so once.

use crate::error::Res;
use crate::eval::Machine;
use crate::tensor::TensorData;
use crate::value::{Seq, Value};
use pmx_ast::Span;
use smallvec::smallvec;
use std::sync::Arc;

/// The tensor storages a function can reach: through its captured values
/// and partial arguments, and through every global.
fn storages(m: &Machine, f: &Value) -> Vec<Arc<TensorData>> {
    let mut out: Vec<Arc<TensorData>> = Vec::new();
    let mut seen: Vec<usize> = Vec::new();
    let mut stack: Vec<Value> = vec![f.clone()];
    stack.extend(m.shared.globals.iter().filter_map(|g| g.get().cloned()));
    while let Some(v) = stack.pop() {
        let key = match &v {
            Value::Closure(c) => Arc::as_ptr(c) as usize,
            Value::Partial(p) => Arc::as_ptr(p) as usize,
            Value::Ref(r) => Arc::as_ptr(r) as usize,
            Value::Seq(s) => Arc::as_ptr(s) as usize,
            Value::Record(r) => Arc::as_ptr(r) as usize,
            Value::Con(c) => Arc::as_ptr(c) as usize,
            Value::Tensor(t) => {
                if !out.iter().any(|d| Arc::ptr_eq(d, &t.data)) {
                    out.push(t.data.clone());
                }
                continue;
            }
            _ => continue,
        };
        if seen.contains(&key) {
            continue;
        }
        seen.push(key);
        match &v {
            Value::Closure(c) => stack.extend(c.env.iter().cloned()),
            Value::Partial(p) => {
                stack.push(p.func.clone());
                stack.extend(p.args.iter().cloned());
            }
            Value::Ref(r) => stack.push(r.lock().unwrap_or_else(|e| e.into_inner()).clone()),
            Value::Seq(s) => {
                if let Seq::Boxed(_) = &**s {
                    stack.extend(s.to_values());
                }
            }
            Value::Record(r) => stack.extend(r.values.iter().cloned()),
            Value::Con(c) => stack.push(c.arg.clone()),
            _ => {}
        }
    }
    out
}

fn run(m: &mut Machine, f: &Value, order: &[i64], span: Span) -> Res<()> {
    for &i in order {
        m.apply(f.clone(), smallvec![Value::Int(i)], span)?;
    }
    Ok(())
}

/// A fixed pseudo-random permutation (the same on every run).
fn shuffled(n: usize) -> Vec<i64> {
    let mut order: Vec<i64> = (0..n as i64).collect();
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    for i in (1..n).rev() {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        order.swap(i, (state % (i as u64 + 1)) as usize);
    }
    order
}

/// Two values found different, shown so that they read different: floats
/// that `show` prints alike (it rounds) get every digit, and how far apart
/// they are.
fn shown_apart(x: &Value, y: &Value) -> (String, String, String) {
    let (a, b) = (crate::show::show(x), crate::show::show(y));
    match (x, y) {
        (Value::Float(p), Value::Float(q)) if a == b => {
            (format!("{p:?}"), format!("{q:?}"), format!(" ({:e} apart)", (p - q).abs()))
        }
        _ => (a, b, String::new()),
    }
}

/// Records that a float accumulation wrote the cell at `index` of `t`.
pub(crate) fn accumulated(m: &mut Machine, t: &crate::tensor::Tensor, index: &[i64]) {
    if let (Some(cells), Ok(k)) = (&mut m.accumulated, t.linear_index(index)) {
        cells.insert((Arc::as_ptr(&t.data) as usize, t.offset + k));
    }
}

/// Said once per run, where a float accumulation's cells were left out.
static NOTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

fn note_float_sums(span: Span) {
    if !NOTED.swap(true, std::sync::atomic::Ordering::Relaxed) {
        crate::io::err(&format!(
            "note: --check-order: the loop at {} accumulates floats into tensor cells that other iterations may \
             update too; such sums may round differently in another order, so those cells are not compared\n",
            crate::io::locate(span)
        ));
    }
}

pub fn check_loop(m: &mut Machine, n: usize, f: &Value, span: Span) -> Res<()> {
    let floats =
        m.shared.options.accumulations.loops.contains(&span) && !m.shared.options.accumulations.float_sets.is_empty();
    let outer = m.accumulated.replace(Default::default());
    let result = compare_orders(m, n, f, span);
    let cells = std::mem::replace(&mut m.accumulated, outer).unwrap_or_default();
    // An enclosing loop's check sees this loop's float cells too.
    if let Some(o) = &mut m.accumulated {
        o.extend(cells.iter().copied());
    }
    if floats && !cells.is_empty() && result.is_ok() {
        note_float_sums(span);
    }
    result
}

fn compare_orders(m: &mut Machine, n: usize, f: &Value, span: Span) -> Res<()> {
    let data = storages(m, f);
    let before: Vec<Vec<Value>> = data.iter().map(|d| d.snapshot()).collect();
    let forward_order: Vec<i64> = (0..n as i64).collect();
    run(m, f, &forward_order, span)?;
    let forward: Vec<Vec<Value>> = data.iter().map(|d| d.snapshot()).collect();
    let backward: Vec<i64> = forward_order.iter().rev().copied().collect();
    for (name, order) in [("backwards", backward), ("in a shuffled order", shuffled(n))] {
        for (d, b) in data.iter().zip(&before) {
            d.restore(b);
        }
        run(m, f, &order, span)?;
        for (d, expected) in data.iter().zip(&forward) {
            let got = d.snapshot();
            let storage = Arc::as_ptr(d) as usize;
            for (k, (x, y)) in expected.iter().zip(&got).enumerate() {
                let summed =
                    matches!(x, Value::Float(_)) && m.accumulated.as_ref().is_some_and(|c| c.contains(&(storage, k)));
                if !summed && !crate::show::equal(x, y).unwrap_or(false) {
                    let (x, y, apart) = shown_apart(x, y);
                    return Err(m.fail(
                        format!(
                            "The result of this loop depends on the order of its iterations: \
                             element {k} of a tensor it writes is {x} when the iterations run forwards \
                             but {y} when they run {name}{apart}"
                        ),
                        span,
                    ));
                }
            }
        }
    }
    for (d, f) in data.iter().zip(&forward) {
        d.restore(f);
    }
    Ok(())
}

pub fn check_reduce(m: &mut Machine, f: &Value, ne: &Value, s: &Seq, span: Span) -> Res<Value> {
    let fold = |m: &mut Machine, lo: usize, hi: usize| -> Res<Value> {
        let mut acc = ne.clone();
        for i in lo..hi {
            acc = m.apply(f.clone(), smallvec![acc, s.get(i)], span)?;
        }
        Ok(acc)
    };
    let left = fold(m, 0, s.len())?;
    let mut right = ne.clone();
    for i in (0..s.len()).rev() {
        right = m.apply(f.clone(), smallvec![s.get(i), right], span)?;
    }
    // Two halves, each from the start value, as parallel code folds them:
    // this is what shows a start value that is not neutral.
    let mid = s.len() / 2;
    let (a, b) = (fold(m, 0, mid)?, fold(m, mid, s.len())?);
    let halves = m.apply(f.clone(), smallvec![a, b], span)?;
    for (other, how) in [(&right, "to the right"), (&halves, "as two halves, each from the start value")] {
        if !crate::show::equal(&left, other).unwrap_or(false) {
            let (x, y, apart) = shown_apart(&left, other);
            return Err(m.fail(
                format!(
                    "The result of this reduce depends on the order of its applications: bracketed to the left \
                     it is {x}, {how} {y}{apart}; its function must be associative and its start value neutral"
                ),
                span,
            ));
        }
    }
    Ok(left)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_that_print_alike_are_shown_with_every_digit() {
        let (a, b) = (0.1 + 0.2 + 0.3, 0.1 + (0.2 + 0.3));
        assert_ne!(a, b);
        let (x, y, apart) = shown_apart(&Value::Float(a), &Value::Float(b));
        assert_ne!(x, y);
        assert_eq!((x.as_str(), y.as_str()), ("0.6000000000000001", "0.6"));
        assert_eq!(apart, " (1.1102230246251565e-16 apart)");
        let (x, y, apart) = shown_apart(&Value::Float(1.0), &Value::Float(2.0));
        assert_eq!((x.as_str(), y.as_str(), apart.as_str()), ("1.", "2.", ""));
    }
}
