//! The debug-mode checks made at `accelerate` boundaries on the values
//! that cross them (the assumptions the GPU code relies on).

use crate::code::CheckKind;
use crate::value::{Seq, Value};

pub fn check(kind: CheckKind, v: &Value, max_rank: usize) -> Result<(), String> {
    match kind {
        CheckKind::TensorRank => rank(v, max_rank),
        CheckKind::Regular => regular(v, 0),
    }
}

fn rank(v: &Value, max: usize) -> Result<(), String> {
    match v {
        Value::Tensor(t) if t.rank() > max => Err(format!(
            "Found tensor with rank exceeding maximum: rank {} but at most {max} (see --tensor-max-rank)",
            t.rank()
        )),
        Value::Seq(s) => {
            if let Seq::Boxed(_) = &**s {
                for e in s.to_values() {
                    rank(&e, max)?;
                }
            }
            Ok(())
        }
        Value::Record(r) => r.values.iter().try_for_each(|f| rank(f, max)),
        _ => Ok(()),
    }
}

/// All sequences at each depth of a nested sequence have one length (the
/// data can be laid out as a dense array).
fn regular(v: &Value, _dim: usize) -> Result<(), String> {
    match v {
        Value::Record(r) => return r.values.iter().try_for_each(|f| regular(f, 0)),
        Value::Seq(_) => {}
        _ => return Ok(()),
    }
    let mut level: Vec<Value> = vec![v.clone()];
    let mut dim = 0;
    loop {
        let mut next = Vec::new();
        let mut expected: Option<usize> = None;
        for (i, item) in level.iter().enumerate() {
            let Value::Seq(s) = item else { return Ok(()) };
            match expected {
                None => expected = Some(s.len()),
                Some(n) if n != s.len() => {
                    return Err(format!(
                        "Irregular sequence found: in dimension {dim}, sequence {i} has length {} but sequence 0 has length {n}",
                        s.len()
                    ))
                }
                Some(_) => {}
            }
            if let Seq::Boxed(_) = &**s {
                next.extend(s.to_values().into_iter().filter(|e| matches!(e, Value::Seq(_))));
            }
        }
        if next.is_empty() {
            return Ok(());
        }
        level = next;
        dim += 1;
    }
}
