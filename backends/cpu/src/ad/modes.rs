//! The derivatives' drivers: seed the input with duals, run the function,
//! read the derivative out of its result.

use super::dual::{fresh, Dual, Node, Part};
use crate::error::{Fail, Res};
use crate::eval::{Args, Machine};
use crate::value::{Record, Seq, Value};
use pmx_ast::{Builtin, Span};
use rustc_hash::{FxHashMap, FxHashSet};
use smallvec::SmallVec;
use std::sync::Arc;

/// `jvp f x dx`, `vjp f x dy` or `grad f x`.
pub fn call(m: &mut Machine, b: Builtin, args: Args, span: Span) -> Res<Value> {
    let tag = fresh();
    let cx = Cx { name: b.name(), tag, span };
    match b {
        Builtin::Jvp => {
            let x = cx.tangent_seed(m, &args[1], &args[2])?;
            let y = m.call1(&args[0], x, span)?;
            cx.tangent(m, &y)
        }
        Builtin::Vjp => cx.reverse(m, &args[0], &args[1], &args[2]),
        _ => cx.reverse(m, &args[0], &args[1], &Value::Float(1.0)),
    }
}

struct Cx {
    name: &'static str,
    tag: u64,
    span: Span,
}

/// What a derivative's input or output holds where a float, a sequence
/// or a record was expected.
fn kind(v: &Value) -> &'static str {
    match v {
        Value::Int(_) => "an integer",
        Value::Bool(_) => "a boolean",
        Value::Char(_) => "a character",
        Value::Tensor(_) => "a tensor",
        Value::Con(_) => "a constructor's value",
        Value::Closure(_) | Value::Partial(_) | Value::Builtin(_) | Value::External(_) => "a function",
        Value::Ref(_) => "a reference",
        Value::Symbol(_) => "a symbol",
        Value::Float(_) | Value::Dual(_) => "a float",
        Value::Seq(_) => "a sequence",
        Value::Record(_) => "a record",
    }
}

impl Cx {
    fn fail(&self, m: &Machine, what: String) -> Fail {
        m.fail(format!("{}: {what}", self.name), self.span)
    }

    fn not_differentiable(&self, m: &Machine, v: &Value, role: &str) -> Fail {
        self.fail(m, format!("the {role} holds {}, which is not differentiable", kind(v)))
    }

    /// A tangent (or cotangent) of `b` elements for a point (or result)
    /// of `a`.
    fn mismatch(&self, m: &Machine, role: &str, a: usize, b: usize) -> Fail {
        let of = if role == "tangent" { "the point" } else { "the function's result" };
        // Up to the first `: `, what generated code reports too
        // (`pmx_futhark`'s derivatives).
        m.fail(format!("{}'s {role} has another shape than {of}: {b} elements where it has {a}", self.name), self.span)
    }

    /// `x` with each float paired with the same place of `dx` as a dual.
    fn tangent_seed(&self, m: &Machine, x: &Value, dx: &Value) -> Res<Value> {
        match (x, dx) {
            (Value::Float(p), Value::Float(t)) => {
                Ok(Value::Dual(Arc::new(Dual { primal: *p, tag: self.tag, part: Part::Tangent(*t) })))
            }
            (Value::Dual(_), _) => Err(super::ops::nested(m, self.span)),
            (Value::Seq(a), Value::Seq(b)) => {
                if a.len() != b.len() {
                    return Err(self.mismatch(m, "tangent", a.len(), b.len()));
                }
                let items =
                    (0..a.len()).map(|i| self.tangent_seed(m, &a.get(i), &b.get(i))).collect::<Res<Vec<_>>>()?;
                Ok(Value::seq(Seq::from_values(items).with_list(a.is_list())))
            }
            (Value::Record(a), Value::Record(b)) if a.labels == b.labels => {
                let values = a.values.iter().zip(b.values.iter()).map(|(p, t)| self.tangent_seed(m, p, t));
                Ok(record(a, values.collect::<Res<Vec<_>>>()?))
            }
            (Value::Float(_) | Value::Seq(_) | Value::Record(_), other) => {
                Err(self.not_differentiable(m, other, "tangent"))
            }
            (other, _) => Err(self.not_differentiable(m, other, "input")),
        }
    }

    /// The tangent of the function's result `y`.
    fn tangent(&self, m: &Machine, y: &Value) -> Res<Value> {
        match y {
            Value::Float(_) => Ok(Value::Float(0.0)),
            Value::Dual(d) => match &d.part {
                Part::Tangent(t) if d.tag == self.tag => Ok(Value::Float(*t)),
                _ => Err(super::ops::nested(m, self.span)),
            },
            Value::Seq(s) => {
                let items = s.to_values().iter().map(|v| self.tangent(m, v)).collect::<Res<Vec<_>>>()?;
                Ok(Value::seq(Seq::from_values(items).with_list(s.is_list())))
            }
            Value::Record(r) => {
                let values = r.values.iter().map(|v| self.tangent(m, v)).collect::<Res<Vec<_>>>()?;
                Ok(record(r, values))
            }
            other => Err(self.not_differentiable(m, other, "function's result")),
        }
    }

    /// Reverse mode: the cotangent of `x` for the cotangent `dy` of
    /// `f x`.
    fn reverse(&self, m: &mut Machine, f: &Value, x: &Value, dy: &Value) -> Res<Value> {
        let mut leaves = Vec::new();
        let seeded = self.leaves(m, x, &mut leaves)?;
        let y = m.call1(f, seeded, self.span)?;
        let mut seeds = Vec::new();
        self.seeds(m, &y, dy, &mut seeds)?;
        drop(y);
        let adjoints = backpropagate(seeds);
        let mut next = leaves.iter().map(|n| adjoints.get(&n.id).copied().unwrap_or(0.0));
        Ok(rebuild(x, &mut next))
    }

    /// `x` with each float a leaf of the graph (listed in `leaves` in the
    /// order [`rebuild`] visits them).
    fn leaves(&self, m: &Machine, x: &Value, leaves: &mut Vec<Arc<Node>>) -> Res<Value> {
        match x {
            Value::Float(p) => {
                let node = Node::new(SmallVec::new());
                leaves.push(node.clone());
                Ok(Value::Dual(Arc::new(Dual { primal: *p, tag: self.tag, part: Part::Node(node) })))
            }
            Value::Dual(_) => Err(super::ops::nested(m, self.span)),
            Value::Seq(s) => {
                let items = (0..s.len()).map(|i| self.leaves(m, &s.get(i), leaves)).collect::<Res<Vec<_>>>()?;
                Ok(Value::seq(Seq::from_values(items).with_list(s.is_list())))
            }
            Value::Record(r) => {
                let values = r.values.iter().map(|v| self.leaves(m, v, leaves)).collect::<Res<Vec<_>>>()?;
                Ok(record(r, values))
            }
            other => Err(self.not_differentiable(m, other, "input")),
        }
    }

    /// The nodes of `y` with the cotangents `dy` gives them.
    fn seeds(&self, m: &Machine, y: &Value, dy: &Value, out: &mut Vec<(Arc<Node>, f64)>) -> Res<()> {
        match (y, dy) {
            (Value::Float(_), Value::Float(_)) => Ok(()),
            (Value::Dual(d), Value::Float(c)) => match &d.part {
                Part::Node(node) if d.tag == self.tag => {
                    out.push((node.clone(), *c));
                    Ok(())
                }
                _ => Err(super::ops::nested(m, self.span)),
            },
            (Value::Seq(a), Value::Seq(b)) => {
                if a.len() != b.len() {
                    return Err(self.mismatch(m, "cotangent", a.len(), b.len()));
                }
                (0..a.len()).try_for_each(|i| self.seeds(m, &a.get(i), &b.get(i), out))
            }
            (Value::Record(a), Value::Record(b)) if a.labels == b.labels => {
                a.values.iter().zip(b.values.iter()).try_for_each(|(p, c)| self.seeds(m, p, c, out))
            }
            (Value::Float(_) | Value::Dual(_) | Value::Seq(_) | Value::Record(_), other) => {
                Err(self.not_differentiable(m, other, "cotangent"))
            }
            (other, _) => Err(self.not_differentiable(m, other, "function's result")),
        }
    }
}

/// A record with `r`'s labels and new values.
fn record(r: &Record, values: Vec<Value>) -> Value {
    Value::Record(Arc::new(Record { labels: r.labels.clone(), values: values.into_boxed_slice() }))
}

/// The adjoint of every node the seeds depend on: the nodes in reverse
/// creation order (a topological order, `Node::id`), each passing its
/// adjoint times each partial to its inputs.
fn backpropagate(seeds: Vec<(Arc<Node>, f64)>) -> FxHashMap<u64, f64> {
    let mut adjoint: FxHashMap<u64, f64> = FxHashMap::default();
    let mut seen: FxHashSet<u64> = FxHashSet::default();
    let mut nodes: Vec<Arc<Node>> = Vec::new();
    let mut stack: Vec<Arc<Node>> = Vec::new();
    for (node, c) in seeds {
        *adjoint.entry(node.id).or_insert(0.0) += c;
        stack.push(node);
    }
    while let Some(n) = stack.pop() {
        if !seen.insert(n.id) {
            continue;
        }
        stack.extend(n.inputs.iter().map(|(i, _)| i.clone()));
        nodes.push(n);
    }
    nodes.sort_unstable_by_key(|n| std::cmp::Reverse(n.id));
    for n in &nodes {
        // IEEE arithmetic throughout, as Futhark's `vjp`: a zero adjoint
        // times an infinite partial is NaN there too.
        let a = adjoint.get(&n.id).copied().unwrap_or(0.0);
        for (input, p) in &n.inputs {
            *adjoint.entry(input.id).or_insert(0.0) += a * p;
        }
    }
    adjoint
}

/// `x`'s shape with its floats replaced by `next`'s, in the order
/// [`Cx::leaves`] listed them.
fn rebuild(x: &Value, next: &mut impl Iterator<Item = f64>) -> Value {
    match x {
        Value::Seq(s) => {
            let items: Vec<Value> = (0..s.len()).map(|i| rebuild(&s.get(i), next)).collect();
            Value::seq(Seq::from_values(items).with_list(s.is_list()))
        }
        Value::Record(r) => record(r, r.values.iter().map(|v| rebuild(v, next)).collect()),
        _ => Value::Float(next.next().unwrap_or(0.0)),
    }
}
