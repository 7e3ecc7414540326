//! Bounds checks hoisted out of sequential loops.
//!
//! A `seqLoop n f` or `seqLoopAcc acc n f` whose body `f` reads and writes
//! tensors at indices that are affine in the loop's index (`a + s * i`,
//! with `a` and `s` computed from `f`'s other, loop-invariant arguments)
//! does not need a check per access: every index the loop will use lies
//! between the ones of its first and last iteration. Such a loop is
//! written twice (`gen::body`): when one test before it shows that both
//! ends are inside their dimensions (and the tensors have the ranks the
//! accesses assume), it calls `f`'s unchecked version `fnN_name_u`, in
//! which those accesses are written without checks; otherwise the checked
//! `f`. Results and failures are the same either way: the unchecked
//! version runs only when none of its unchecked accesses can fail. The
//! point is speed: a loop without a branch per access is one the C++
//! compiler can vectorise (the dot products of a matrix multiplication,
//! the windows of a convolution).
//!
//! Only statements at the top of `f`'s body are considered (not those in a
//! branch, whose accesses may be guarded by the branch's condition), and
//! only integer arithmetic that cannot fail (`addi`, `subi`, `muli`,
//! `negi`), record fields and literals.

use super::types::field;
use pmx_ast::{Builtin, SmolStr};
use pmx_lower::{Atom, Block, Callee, Expr, FnId, Function, Lit, Program, Type, VarId};
use rustc_hash::{FxHashMap, FxHashSet};

/// A loop-invariant value: written in terms of the loop body's invariant
/// parameters, at the loop.
#[derive(Clone, Debug, PartialEq)]
enum Sym {
    Param(usize),
    Lit(i64),
    Add(Box<Sym>, Box<Sym>),
    Sub(Box<Sym>, Box<Sym>),
    Mul(Box<Sym>, Box<Sym>),
    Neg(Box<Sym>),
    Field(Box<Sym>, SmolStr),
}

/// `base + step * i` (`step` absent: the value does not depend on `i`).
#[derive(Clone, Debug)]
struct Affine {
    base: Sym,
    step: Option<Sym>,
}

/// What the analysis knows of a variable of the body.
#[derive(Clone, Debug)]
enum Val {
    Int(Affine),
    /// A tensor or record that does not depend on `i`.
    Invariant(Sym),
    /// A sequence literal of integers (an index), each known or not.
    Index(Vec<Option<Affine>>),
}

/// One access whose check is hoisted.
#[derive(Clone, Debug)]
enum Test {
    /// `tensorGetExn`/`tensorSetExn t ix`: `t` has rank `ix.len()` and
    /// each component is inside its dimension.
    Full { tensor: Sym, index: Vec<Affine> },
    /// `tensorLinearGetExn`/`tensorLinearSetExn t k`.
    Linear { tensor: Sym, index: Affine },
}

/// The accesses of a loop body whose checks move before the loop.
#[derive(Clone, Debug)]
pub struct Hoisted {
    /// The statements (by the variable they bind) written unchecked in the
    /// body's `_u` version.
    pub unchecked: FxHashSet<VarId>,
    tests: Vec<Test>,
}

/// The functions that are the body of a sequential loop or of a
/// `seqLoopAcc`, and for each how many of its parameters the loop passes
/// (the index, and before it the accumulator). A parallel `loop` of an
/// entry is a kernel launch, not a loop written here.
fn loop_bodies(p: &Program) -> FxHashMap<FnId, usize> {
    fn walk(b: &Block, host: bool, out: &mut FxHashMap<FnId, usize>) {
        for s in &b.stmts {
            match &s.expr {
                Expr::If { then, otherwise, .. } => {
                    walk(then, host, out);
                    walk(otherwise, host, out);
                }
                Expr::Loop { parallel: true, .. } if host => {}
                Expr::Loop { f, .. } | Expr::SeqLoopAcc { f, .. } => {
                    if let Callee::Function(id) = f.callee {
                        out.insert(id, f.params.len());
                    }
                }
                _ => {}
            }
        }
    }
    let mut out = FxHashMap::default();
    for f in &p.functions {
        // Every function is written as device code, where its parallel
        // loops run sequentially (one with a host version too, whose
        // loops launch kernels and are not versioned).
        walk(&f.body, false, &mut out);
    }
    for e in &p.entries {
        walk(&e.body, true, &mut out);
    }
    out
}

/// Every loop body with at least one access whose check can be hoisted.
pub fn analyse(p: &Program) -> FxHashMap<FnId, Hoisted> {
    loop_bodies(p).into_iter().filter_map(|(id, passed)| Some((id, analyse_body(p.function(id)?, passed)?))).collect()
}

/// The hoistable accesses of `f`, whose last `passed` parameters the loop
/// passes (the last being the index).
fn analyse_body(f: &Function, passed: usize) -> Option<Hoisted> {
    let n = f.params.len();
    if passed == 0 || passed > n || f.params[n - 1].ty != Type::Int {
        return None;
    }
    let mut env: FxHashMap<VarId, Val> = FxHashMap::default();
    for (k, v) in f.params[..n - passed].iter().enumerate() {
        let val = match v.ty {
            Type::Int => Val::Int(Affine { base: Sym::Param(k), step: None }),
            Type::Tensor(_) | Type::Record(_) => Val::Invariant(Sym::Param(k)),
            _ => continue,
        };
        env.insert(v.id, val);
    }
    env.insert(f.params[n - 1].id, Val::Int(Affine { base: Sym::Lit(0), step: Some(Sym::Lit(1)) }));
    let mut h = Hoisted { unchecked: FxHashSet::default(), tests: Vec::new() };
    for s in &f.body.stmts {
        let int = |a: &Atom| match a {
            Atom::Lit(Lit::Int(c)) => Some(Affine { base: Sym::Lit(*c), step: None }),
            Atom::Var(v) => match env.get(&v.id) {
                Some(Val::Int(x)) => Some(x.clone()),
                _ => None,
            },
            _ => None,
        };
        let invariant = |a: &Atom| match a {
            Atom::Var(v) => match env.get(&v.id) {
                Some(Val::Invariant(x)) => Some(x.clone()),
                _ => None,
            },
            _ => None,
        };
        let val = match &s.expr {
            Expr::Atom(a) => match a {
                Atom::Var(v) => env.get(&v.id).cloned(),
                _ => int(a).map(Val::Int),
            },
            Expr::Prim(b, args) => match (b, args.as_slice()) {
                (Builtin::Addi, [x, y]) => combine(int(x), int(y), false).map(Val::Int),
                (Builtin::Subi, [x, y]) => combine(int(x), int(y), true).map(Val::Int),
                (Builtin::Muli, [x, y]) => multiply(int(x), int(y)).map(Val::Int),
                (Builtin::Negi, [x]) => {
                    int(x).map(|x| Affine { base: neg(x.base), step: x.step.map(neg) }).map(Val::Int)
                }
                (Builtin::TensorGetExn, [t, ix]) | (Builtin::TensorSetExn, [t, ix, _]) => {
                    let index = match ix {
                        Atom::Var(v) => match env.get(&v.id) {
                            Some(Val::Index(items)) => items.iter().cloned().collect::<Option<Vec<_>>>(),
                            _ => None,
                        },
                        _ => None,
                    };
                    if let (Some(tensor), Some(index)) = (invariant(t), index) {
                        h.unchecked.insert(s.var.id);
                        h.tests.push(Test::Full { tensor, index });
                    }
                    None
                }
                (Builtin::TensorLinearGetExn, [t, k]) | (Builtin::TensorLinearSetExn, [t, k, _]) => {
                    if let (Some(tensor), Some(index)) = (invariant(t), int(k)) {
                        h.unchecked.insert(s.var.id);
                        h.tests.push(Test::Linear { tensor, index });
                    }
                    None
                }
                _ => None,
            },
            Expr::Project(a, label) => invariant(a).and_then(|r| {
                let x = Sym::Field(Box::new(r), label.clone());
                match s.var.ty {
                    Type::Int => Some(Val::Int(Affine { base: x, step: None })),
                    Type::Tensor(_) | Type::Record(_) => Some(Val::Invariant(x)),
                    _ => None,
                }
            }),
            Expr::Seq(items) if s.var.ty == Type::Seq(Box::new(Type::Int)) => {
                Some(Val::Index(items.iter().map(int).collect()))
            }
            _ => None,
        };
        if let Some(val) = val {
            env.insert(s.var.id, val);
        }
    }
    (!h.tests.is_empty()).then_some(h)
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

impl Sym {
    /// C for the value at the loop, whose invariant arguments are `args`.
    fn c(&self, args: &[String]) -> String {
        match self {
            Sym::Param(k) => args[*k].clone(),
            Sym::Lit(c) => format!("(int64_t){c}LL"),
            Sym::Add(a, b) => format!("PMX_ADDI({}, {})", a.c(args), b.c(args)),
            Sym::Sub(a, b) => format!("PMX_SUBI({}, {})", a.c(args), b.c(args)),
            Sym::Mul(a, b) => format!("PMX_MULI({}, {})", a.c(args), b.c(args)),
            Sym::Neg(a) => format!("PMX_NEGI({})", a.c(args)),
            Sym::Field(r, label) => format!("{}.{}", r.c(args), field(label)),
        }
    }
}

impl Affine {
    /// C: whether every value over `n` iterations lies in `[0, bound)`.
    fn within(&self, args: &[String], n: &str, bound: &str) -> String {
        let step = self.step.as_ref().map_or("(int64_t)0".to_string(), |s| s.c(args));
        format!("pmx_affine_within({}, {step}, {n}, {bound})", self.base.c(args))
    }
}

impl Hoisted {
    /// C: whether the unchecked version may run `n` iterations of the loop
    /// whose invariant arguments are `args` (C expressions, evaluated more
    /// than once: atoms).
    pub fn condition(&self, args: &[String], n: &str) -> String {
        let mut parts = Vec::new();
        for t in &self.tests {
            match t {
                Test::Full { tensor, index } => {
                    let t = tensor.c(args);
                    parts.push(format!("{t}.rank == {}", index.len()));
                    for (k, a) in index.iter().enumerate() {
                        parts.push(a.within(args, n, &format!("{t}.dims[{k}]")));
                    }
                }
                Test::Linear { tensor, index } => {
                    parts.push(index.within(args, n, &format!("pmx_tensor_size({})", tensor.c(args))));
                }
            }
        }
        format!("{n} <= 0 || ({n} < ((int64_t)1 << 31) && {})", parts.join(" && "))
    }
}
