//! Float operations that meet a dual: the rule's value and partials
//! applied in the dual's mode; comparisons and conversions on the value;
//! everything else refused with a located error.

use super::dual::{Dual, Node, Part};
use super::rules::Op;
use crate::error::Res;
use crate::eval::{Args, Machine};
use crate::value::Value;
use pmx_ast::{Builtin, Span};
use smallvec::SmallVec;
use std::sync::Arc;

/// Whether built-in `b` applied to `args` must go through the duals'
/// rules: a dual among the arguments of a built-in that reads floats (a
/// `Float` parameter in its signature) or stores them in tensors.
/// (Sequence and record built-ins move duals as they move any value.)
#[inline]
pub fn sees(b: Builtin, args: &[Value]) -> bool {
    static READS_FLOATS: std::sync::LazyLock<Vec<bool>> = std::sync::LazyLock::new(|| {
        Builtin::ALL
            .iter()
            .map(|b| b.is_tensor() || b.signature().params.iter().any(|p| matches!(p, pmx_ast::signature::Sig::Float)))
            .collect()
    });
    READS_FLOATS[b as usize] && args.iter().any(|a| matches!(a, Value::Dual(_)))
}

/// A built-in for which [`sees`] holds.
pub fn builtin(m: &mut Machine, b: Builtin, args: Args, span: Span) -> Res<Value> {
    if let Some(op) = Op::of_builtin(b) {
        return lift(m, op, &args, span);
    }
    if b.is_tensor() {
        return Err(m.fail(
            format!(
                "`{}` was given a float a derivative is being taken of: derivatives do not flow through tensors \
                 yet (use sequences inside the differentiated function)",
                b.name()
            ),
            span,
        ));
    }
    // Comparisons and conversions: of the value.
    let plain: Args = args.iter().map(primal).collect();
    crate::builtins::call(m, b, plain, span)
}

/// An external applied to arguments among which is a dual.
pub fn external(m: &mut Machine, name: &str, args: &[Value], span: Span) -> Res<Value> {
    match Op::of_external(name) {
        Some(op) => lift(m, op, args, span),
        None => Err(m.fail(format!("`{name}` has no derivative rule: a derivative cannot be taken through it"), span)),
    }
}

/// A float, or the value of a dual.
fn primal(v: &Value) -> Value {
    match v {
        Value::Dual(d) => Value::Float(d.primal),
        other => other.clone(),
    }
}

/// Applies `op`'s rule to operands among which is at least one dual.
fn lift(m: &mut Machine, op: Op, args: &[Value], span: Span) -> Res<Value> {
    let n = op.arity();
    let mut x = [0.0f64; 2];
    let mut duals: [Option<&Dual>; 2] = [None, None];
    for i in 0..n {
        match &args[i] {
            Value::Float(f) => x[i] = *f,
            Value::Dual(d) => {
                x[i] = d.primal;
                duals[i] = Some(d);
            }
            _ => crate::error::type_confusion("a float"),
        }
    }
    let mut tags = duals.iter().flatten().map(|d| d.tag);
    let tag = tags.next().expect("called with a dual");
    if tags.any(|t| t != tag) {
        return Err(nested(m, span));
    }
    let (value, partials) = op.apply(x);
    let forward = matches!(duals.iter().flatten().next().map(|d| &d.part), Some(Part::Tangent(_)));
    let part = if forward {
        let mut t = 0.0;
        for (d, p) in duals.iter().zip(partials) {
            // IEEE arithmetic throughout, as Futhark's `jvp`: a zero
            // tangent times an infinite partial is NaN there too.
            if let Some(Dual { part: Part::Tangent(dt), .. }) = d {
                t += p * dt;
            }
        }
        Part::Tangent(t)
    } else {
        let mut inputs: SmallVec<[(Arc<Node>, f64); 2]> = SmallVec::new();
        for (d, p) in duals.iter().zip(partials) {
            if let Some(Dual { part: Part::Node(node), .. }) = d {
                inputs.push((node.clone(), p));
            }
        }
        Part::Node(Node::new(inputs))
    };
    Ok(Value::Dual(Arc::new(Dual { primal: value, tag, part })))
}

pub(super) fn nested(m: &Machine, span: Span) -> crate::error::Fail {
    m.fail(
        "a derivative inside the function of another derivative (or a value from inside a finished one) is not \
         supported yet",
        span,
    )
}
