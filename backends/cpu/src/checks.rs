//! The debug-mode checks made at `accelerate` boundaries on the values
//! that cross them (the assumptions the GPU code relies on), and the one
//! message of a violated size constraint.

use crate::value::{Seq, Value};
use pmx_ast::Span;

/// Every tensor in `v` (through records, tuples, sequences and
/// constructors' payloads) has rank at most `max`.
pub fn rank(v: &Value, max: usize) -> Result<(), String> {
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
        Value::Con(c) => rank(&c.arg, max),
        _ => Ok(()),
    }
}

/// All sequences at each depth of a nested sequence have one length (the
/// data can be laid out as a dense array), through records and tuples:
/// in a sequence of records, each field is checked across the elements as
/// one more array (it becomes one array per field), so `[{a = [1]}, {a =
/// [2, 3]}]` is irregular too.
pub fn regular(v: &Value) -> Result<(), String> {
    level(std::slice::from_ref(v), 0, &mut String::new())
}

/// Values at one position of the layout: each must have the same shape.
fn level(values: &[Value], dim: usize, path: &mut String) -> Result<(), String> {
    let Some(first) = values.first() else { return Ok(()) };
    match first {
        Value::Seq(_) => {
            let mut expected: Option<usize> = None;
            let mut next = Vec::new();
            for (i, item) in values.iter().enumerate() {
                let Value::Seq(s) = item else { return Ok(()) };
                match expected {
                    None => expected = Some(s.len()),
                    Some(n) if n != s.len() => {
                        return Err(format!(
                            "Irregular sequence found: in dimension {dim}{path}, sequence {i} has length {} but sequence 0 has length {n}",
                            s.len()
                        ))
                    }
                    Some(_) => {}
                }
                // Unboxed sequences hold scalars: nothing below them.
                if let Seq::Boxed(_) = &**s {
                    next.extend(s.to_values());
                }
            }
            level(&next, dim + 1, path)
        }
        Value::Record(r) => {
            for (k, label) in r.labels.iter().enumerate() {
                let fields: Vec<Value> = values
                    .iter()
                    .filter_map(|v| match v {
                        Value::Record(r) => r.values.get(k).cloned(),
                        _ => None,
                    })
                    .collect();
                let len = path.len();
                path.push_str(&format!(" (field `{label}`)"));
                level(&fields, dim, path)?;
                path.truncate(len);
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// Whether two values, each regular, have one layout as Futhark arrays:
/// sequences of one length whose elements have one layout (the first
/// elements stand for the rest), records whose fields do.
pub fn same_layout(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Seq(x), Value::Seq(y)) => x.len() == y.len() && (x.is_empty() || same_layout(&x.get(0), &y.get(0))),
        (Value::Record(x), Value::Record(y)) => x.values.iter().zip(y.values.iter()).all(|(p, q)| same_layout(p, q)),
        _ => true,
    }
}

/// The elements of the sequence `s`, each regular, have one layout: `s`
/// is regular. What debug mode checks where Futhark-class code makes a
/// nested sequence (a literal, `map`, `map2`, `create`), at the same place
/// and with the same message as the native code's check.
pub fn elements_alike(s: &Value) -> Result<(), String> {
    let Value::Seq(items) = s else { return Ok(()) };
    if items.len() < 2 || !matches!(&**items, Seq::Boxed(_)) {
        return Ok(());
    }
    let first = items.get(0);
    for k in 1..items.len() {
        if !same_layout(&first, &items.get(k)) {
            return Err(format!("Irregular sequence found: element {k} does not have the sizes of element 0"));
        }
    }
    Ok(())
}

/// `x` has the layout of the elements of `s`: joined to them (or put in
/// the place of one), it keeps `s` regular.
pub fn joins(x: &Value, s: &Value) -> Result<(), String> {
    let Value::Seq(items) = s else { return Ok(()) };
    match items.is_empty() {
        false if !same_layout(x, &items.get(0)) => {
            Err("Irregular sequence found: a sequence does not have the sizes of the sequences it joins".into())
        }
        _ => Ok(()),
    }
}

/// A size constraint that does not hold.
pub fn size_violation(param: &str, actual: i64, required: i64, utest: Span) -> String {
    format!(
        "Size constraint violated: a size of `{param}` is {actual} where {required} is required (the utest at {})",
        crate::io::locate(utest)
    )
}
