//! Integer values known as affine functions of a loop's index.
//!
//! Inside the body of a loop (a function whose last parameter is the
//! loop's index and whose other parameters the loop passes unchanged), a
//! value is `base + step * i`, with `base` and `step` written in terms of
//! the invariant parameters, when it is computed from them, the index and
//! literals by integer arithmetic that cannot fail (`addi`, `subi`,
//! `muli`, `negi`), record fields and the dimensions of a tensor's shape.
//! Two passes ask it: the CUDA generator's hoisting of bounds checks out
//! of sequential loops (which tests both ends of such an index before the
//! loop), and the accumulations (`accumulate.rs`: an index that differs
//! for every iteration of a parallel loop is no collision). One analysis,
//! so that both prove the same things.

use crate::ir::*;
use pmx_ast::{Builtin, SmolStr};
use rustc_hash::FxHashMap;

/// A loop-invariant value: written in terms of the loop body's invariant
/// parameters, at the loop.
#[derive(Clone, Debug, PartialEq)]
pub enum Sym {
    Param(usize),
    Lit(i64),
    Add(Box<Sym>, Box<Sym>),
    Sub(Box<Sym>, Box<Sym>),
    Mul(Box<Sym>, Box<Sym>),
    Neg(Box<Sym>),
    Field(Box<Sym>, SmolStr),
    /// Dimension `k` of a tensor (`get (tensorShape t) k`).
    Dim(Box<Sym>, i64),
}

/// `base + step * i` (`step` absent: the value does not depend on `i`).
#[derive(Clone, Debug, PartialEq)]
pub struct Affine {
    pub base: Sym,
    pub step: Option<Sym>,
}

/// What the analysis knows of a variable of the body.
#[derive(Clone, Debug)]
pub enum Val {
    Int(Affine),
    /// A tensor or record that does not depend on `i`.
    Invariant(Sym),
    /// A sequence literal of integers (an index), each known or not.
    Index(Vec<Option<Affine>>),
    /// The shape of a tensor that does not depend on `i`.
    Shape(Sym),
}

/// What is known of the variables in scope.
pub type Env = FxHashMap<VarId, Val>;

impl Affine {
    /// The loop's index itself.
    pub fn index() -> Affine {
        Affine { base: Sym::Lit(0), step: Some(Sym::Lit(1)) }
    }

    pub fn is_index(&self) -> bool {
        self.base == Sym::Lit(0) && self.step == Some(Sym::Lit(1))
    }

    /// Whether the value is different for different iterations: its step
    /// is provably not zero (a product of nonzero literals; a step that
    /// is a parameter may be zero when the loop runs). Values are taken
    /// as integers: a step times an index wraps only past 2^63, which no
    /// loop reaches with a literal step below 2^32.
    pub fn varies(&self) -> bool {
        fn nonzero(s: &Sym) -> bool {
            match s {
                Sym::Lit(c) => *c != 0 && c.unsigned_abs() < 1 << 32,
                Sym::Neg(a) => nonzero(a),
                Sym::Mul(a, b) => nonzero(a) && nonzero(b) && matches!((&**a, &**b), (Sym::Lit(_), Sym::Lit(_))),
                _ => false,
            }
        }
        self.step.as_ref().is_some_and(nonzero)
    }
}

/// What is known of the parameters of a loop body `f` that a loop calls
/// with `bound` invariant arguments first (`env`: what is known of those
/// at the loop; `None` for a body analysed from its own parameters, each
/// `Sym::Param`); the parameter after them is the index when `indexed`,
/// and the others are unknown.
pub fn body_env(f: &Function, bound: usize, indexed: bool, at_loop: Option<(&[Atom], &Env)>) -> Env {
    let mut env = Env::default();
    for (k, v) in f.params.iter().take(bound).enumerate() {
        let val = match at_loop {
            Some((args, outer)) => args.get(k).and_then(|a| value(a, outer)),
            None => match v.ty {
                Type::Int => Some(Val::Int(Affine { base: Sym::Param(k), step: None })),
                Type::Tensor(_) | Type::Record(_) => Some(Val::Invariant(Sym::Param(k))),
                _ => None,
            },
        };
        if let Some(val) = val {
            env.insert(v.id, val);
        }
    }
    if indexed {
        if let Some(i) = f.params.last().filter(|p| p.ty == Type::Int && f.params.len() > bound) {
            env.insert(i.id, Val::Int(Affine::index()));
        }
    }
    env
}

/// What is known of a callee's parameters, given its arguments.
pub fn call_env(callee: &Function, args: &[Atom], env: &Env) -> Env {
    let mut inner = Env::default();
    for (param, a) in callee.params.iter().zip(args) {
        if let Some(v) = value(a, env) {
            inner.insert(param.id, v);
        }
    }
    inner
}

/// What is known of an atom.
pub fn value(a: &Atom, env: &Env) -> Option<Val> {
    match a {
        Atom::Var(v) => env.get(&v.id).cloned(),
        _ => int(a, env).map(Val::Int),
    }
}

/// An integer atom as an affine value.
pub fn int(a: &Atom, env: &Env) -> Option<Affine> {
    match a {
        Atom::Lit(Lit::Int(c)) => Some(Affine { base: Sym::Lit(*c), step: None }),
        Atom::Var(v) => match env.get(&v.id) {
            Some(Val::Int(x)) => Some(x.clone()),
            _ => None,
        },
        _ => None,
    }
}

/// A tensor or record that does not depend on the index.
pub fn invariant(a: &Atom, env: &Env) -> Option<Sym> {
    match a {
        Atom::Var(v) => match env.get(&v.id) {
            Some(Val::Invariant(x)) => Some(x.clone()),
            _ => None,
        },
        _ => None,
    }
}

/// An index sequence, each component known or not.
pub fn index(a: &Atom, env: &Env) -> Option<Vec<Option<Affine>>> {
    match a {
        Atom::Var(v) => match env.get(&v.id) {
            Some(Val::Index(items)) => Some(items.clone()),
            _ => None,
        },
        _ => None,
    }
}

/// What a statement computes, where it is arithmetic, a field, a shape, a
/// dimension or an index literal (accesses and calls are the walks' own).
pub fn eval(s: &Stmt, env: &Env) -> Option<Val> {
    match &s.expr {
        Expr::Atom(a) => value(a, env),
        Expr::Prim(b, args) => match (b, args.as_slice()) {
            (Builtin::Addi, [x, y]) => combine(int(x, env), int(y, env), false).map(Val::Int),
            (Builtin::Subi, [x, y]) => combine(int(x, env), int(y, env), true).map(Val::Int),
            (Builtin::Muli, [x, y]) => multiply(int(x, env), int(y, env)).map(Val::Int),
            (Builtin::Negi, [x]) => int(x, env).map(|x| Val::Int(Affine { base: neg(x.base), step: x.step.map(neg) })),
            (Builtin::TensorShape, [t]) => invariant(t, env).map(Val::Shape),
            // A dimension past the rank is 0 in generated code
            // (`pmx_dim`), as the failing `get` gives the body; the `get`
            // itself stays checked.
            (Builtin::Get, [Atom::Var(v), Atom::Lit(Lit::Int(k))]) if *k >= 0 => match env.get(&v.id) {
                Some(Val::Shape(t)) => Some(Val::Int(Affine { base: Sym::Dim(Box::new(t.clone()), *k), step: None })),
                _ => None,
            },
            _ => None,
        },
        Expr::Project(a, label) => invariant(a, env).and_then(|r| {
            let x = Sym::Field(Box::new(r), label.clone());
            match s.var.ty {
                Type::Int => Some(Val::Int(Affine { base: x, step: None })),
                Type::Tensor(_) | Type::Record(_) => Some(Val::Invariant(x)),
                _ => None,
            }
        }),
        Expr::Seq(items) if s.var.ty == Type::Seq(Box::new(Type::Int)) => {
            Some(Val::Index(items.iter().map(|a| int(a, env)).collect()))
        }
        _ => None,
    }
}

fn neg(x: Sym) -> Sym {
    match x {
        Sym::Lit(c) => Sym::Lit(c.wrapping_neg()),
        x => Sym::Neg(Box::new(x)),
    }
}

/// `x + y`, or `x - y` when `sub`, both affine.
fn combine(x: Option<Affine>, y: Option<Affine>, sub: bool) -> Option<Affine> {
    let (x, y) = (x?, y?);
    let op = |a: Sym, b: Sym| if sub { Sym::Sub(Box::new(a), Box::new(b)) } else { Sym::Add(Box::new(a), Box::new(b)) };
    let step = match (x.step, y.step) {
        (None, None) => None,
        (Some(a), None) => Some(a),
        (None, Some(b)) if sub => Some(neg(b)),
        (None, Some(b)) => Some(b),
        (Some(a), Some(b)) => Some(op(a, b)),
    };
    Some(Affine { base: op(x.base, y.base), step })
}

/// `x * y`, affine when one side does not depend on the index.
fn multiply(x: Option<Affine>, y: Option<Affine>) -> Option<Affine> {
    let (x, y) = (x?, y?);
    let (k, v) = match (&x.step, &y.step) {
        (None, _) => (x.base, y),
        (_, None) => (y.base, x),
        _ => return None,
    };
    let mul = |a: &Sym, b: Sym| Sym::Mul(Box::new(a.clone()), Box::new(b));
    Some(Affine { base: mul(&k, v.base), step: v.step.map(|s| mul(&k, s)) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_varies_only_when_it_is_a_nonzero_literal() {
        let i = Affine::index();
        assert!(i.varies());
        let two_i = multiply(Some(Affine { base: Sym::Lit(2), step: None }), Some(i.clone())).unwrap();
        assert!(two_i.varies());
        let zero_i = multiply(Some(Affine { base: Sym::Lit(0), step: None }), Some(i.clone())).unwrap();
        assert!(!zero_i.varies());
        let p_i = multiply(Some(Affine { base: Sym::Param(0), step: None }), Some(i.clone())).unwrap();
        assert!(!p_i.varies(), "a parameter may be 0");
        let i_minus_i = combine(Some(i.clone()), Some(i), true).unwrap();
        assert!(!i_minus_i.varies(), "i - i is the same for every i");
    }
}
