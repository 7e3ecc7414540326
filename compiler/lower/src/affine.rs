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
    Index(Vec<Option<Part>>),
    /// `divi x w` with `x` different for every iteration and `w`
    /// invariant: with `modi x w` beside it, it tells `x` apart.
    Quot(Affine, Sym),
    /// `modi x w`, likewise.
    Rem(Affine, Sym),
    /// The shape of a tensor that does not depend on `i`.
    Shape(Sym),
    /// A tensor view that the view of every other iteration is apart from
    /// (a slice at an index that tells iterations apart, a sub-tensor of
    /// rows at a row that does, far enough apart, and views of such a
    /// view).
    Disjoint,
}

/// A component of an index.
#[derive(Clone, Debug, PartialEq)]
pub enum Part {
    Affine(Affine),
    Quot(Affine, Sym),
    Rem(Affine, Sym),
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

/// Whether rows `[o + step * i, o + step * i + len)` are apart for
/// different `i`: `|step| >= len` for literals, or `step` is `len` (times
/// 1 or -1; a sub-tensor's length is not negative, or it fails).
fn covers(step: &Sym, len: &Sym) -> bool {
    let unit = |s: &Sym| matches!(s, Sym::Lit(1) | Sym::Lit(-1));
    match (step, len) {
        (Sym::Lit(s), Sym::Lit(l)) => *s != 0 && *l >= 0 && s.unsigned_abs() >= *l as u64,
        (Sym::Neg(s), _) => covers(s, len),
        (Sym::Mul(a, b), _) if unit(b) => covers(a, len),
        (Sym::Mul(a, b), _) if unit(a) => covers(b, len),
        (s, l) => s == l,
    }
}

/// A view apart from every other iteration's.
pub fn disjoint(a: &Atom, env: &Env) -> bool {
    matches!(a, Atom::Var(v) if matches!(env.get(&v.id), Some(Val::Disjoint)))
}

/// An index sequence, each component affine or not.
pub fn index(a: &Atom, env: &Env) -> Option<Vec<Option<Affine>>> {
    match a {
        Atom::Var(v) => match env.get(&v.id) {
            Some(Val::Index(items)) => Some(
                items
                    .iter()
                    .map(|p| match p {
                        Some(Part::Affine(x)) => Some(x.clone()),
                        _ => None,
                    })
                    .collect(),
            ),
            _ => None,
        },
        _ => None,
    }
}

/// Whether the index `a` is different for every iteration: a component
/// is affine with a step that is not zero, or two components are the
/// quotient and the remainder of one such value by the same divisor (a
/// matrix's cell numbered row by row: `x = w * (x / w) + x % w` for any
/// `w` but 0, which fails).
pub fn injective(a: &Atom, env: &Env) -> bool {
    let Atom::Var(v) = a else { return false };
    let Some(Val::Index(items)) = env.get(&v.id) else { return false };
    let parts: Vec<&Part> = items.iter().flatten().collect();
    parts.iter().any(|p| match p {
        Part::Affine(x) => x.varies(),
        Part::Quot(x, w) => parts.contains(&&Part::Rem(x.clone(), w.clone())),
        Part::Rem(..) => false,
    })
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
            (Builtin::Divi | Builtin::Modi, [x, y]) => {
                let (x, w) = (int(x, env).filter(Affine::varies)?, int(y, env).filter(|w| w.step.is_none())?);
                Some(if *b == Builtin::Divi { Val::Quot(x, w.base) } else { Val::Rem(x, w.base) })
            }
            (Builtin::TensorShape, [t]) => invariant(t, env).map(Val::Shape),
            (Builtin::TensorSliceExn, [t, ix])
                if disjoint(t, env) || (invariant(t, env).is_some() && injective(ix, env)) =>
            {
                Some(Val::Disjoint)
            }
            (Builtin::TensorSubExn, [t, ofs, len]) => {
                let rows = |x: Affine| match (x.step, int(len, env)) {
                    (Some(step), Some(Affine { base: len, step: None })) => covers(&step, &len),
                    _ => false,
                };
                let apart = invariant(t, env).is_some() && int(ofs, env).is_some_and(rows);
                (apart || disjoint(t, env)).then_some(Val::Disjoint)
            }
            (Builtin::TensorReshapeExn | Builtin::TensorTransposeExn, [t, ..]) if disjoint(t, env) => {
                Some(Val::Disjoint)
            }
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
        Expr::Seq(items) if s.var.ty == Type::Seq(Box::new(Type::Int)) => Some(Val::Index(
            items
                .iter()
                .map(|a| match value(a, env) {
                    Some(Val::Int(x)) => Some(Part::Affine(x)),
                    Some(Val::Quot(x, w)) => Some(Part::Quot(x, w)),
                    Some(Val::Rem(x, w)) => Some(Part::Rem(x, w)),
                    _ => None,
                })
                .collect(),
        )),
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
