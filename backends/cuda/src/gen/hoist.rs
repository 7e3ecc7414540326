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
//! Calls are followed (not into recursion or other loop bodies, at most
//! `MAX_DEPTH` deep): a function the body calls gets an unchecked version
//! too, with the accesses proven for every call of it from unchecked code,
//! and the body's unchecked version calls it. Only statements at the top
//! of a body are considered (not those in a branch, whose accesses may be
//! guarded by the branch's condition), and only integer arithmetic that
//! cannot fail (`addi`, `subi`, `muli`, `negi`), record fields, the
//! dimensions of a tensor's shape and literals: what `pmx_lower::affine`
//! knows, the analysis that the accumulations (`pmx_lower::accumulate`)
//! use too.
//!
//! The same walk finds, for a kernel's body, what its index is divided by
//! ([`row_length`]: `divi idx w`, `modi idx w` with `w` loop-invariant),
//! which `gen::body` uses to launch the kernel in tiles of rows.

use super::types::field;
use pmx_ast::Builtin;
use pmx_lower::affine::{self, Affine, Env, Sym};
use pmx_lower::{Block, Callee, Expr, FnId, Function, Program, Type, VarId};
use rustc_hash::{FxHashMap, FxHashSet};

/// One access whose check is hoisted.
#[derive(Clone, Debug)]
enum Test {
    /// `tensorGetExn`/`tensorSetExn t ix`: `t` has rank `ix.len()` and
    /// each component is inside its dimension.
    Full { tensor: Sym, index: Vec<Affine> },
    /// `tensorLinearGetExn`/`tensorLinearSetExn t k`.
    Linear { tensor: Sym, index: Affine },
}

/// The tests a versioned loop makes before it runs its body's unchecked
/// version.
#[derive(Clone, Debug)]
pub struct Hoisted {
    tests: Vec<Test>,
}

/// What the generator writes twice.
#[derive(Clone, Debug, Default)]
pub struct Plan {
    /// The bodies of the loops that are versioned.
    pub loops: FxHashMap<FnId, Hoisted>,
    /// The functions with an unchecked version (the loop bodies, and the
    /// functions they call whose accesses are also proven), with the
    /// statements written differently there: accesses without checks, and
    /// calls of other unchecked versions.
    pub unchecked: FxHashMap<FnId, FxHashSet<VarId>>,
}

/// How deep the analysis follows calls from a loop body.
const MAX_DEPTH: usize = 4;

/// One loop body's analysis: the tests it needs, and per function reached
/// the statements proven (for a function reached by several calls, those
/// proven for every call).
struct Context<'p> {
    p: &'p Program,
    /// Loop bodies: versioned on their own, never followed into.
    bodies: &'p FxHashMap<FnId, usize>,
    tests: Vec<Test>,
    proven: FxHashMap<FnId, FxHashSet<VarId>>,
    /// Calls followed: the statement and the function it calls.
    calls: FxHashMap<VarId, FnId>,
    /// What the index itself is divided by (`divi`, `modi`), in order.
    divisors: Vec<Sym>,
}

/// The functions that are the body of a sequential loop or of a
/// `seqLoopAcc`, and for each how many of its parameters the loop passes
/// (the index, and before it the accumulator). A parallel `loop` of an
/// entry is a kernel launch, not a loop written here.
pub(super) fn loop_bodies(p: &Program) -> FxHashMap<FnId, usize> {
    fn walk(b: &Block, host: bool, out: &mut FxHashMap<FnId, usize>) {
        b.for_each_stmt(&mut |s| match &s.expr {
            Expr::Loop { parallel: true, .. } if host => {}
            Expr::Loop { f, .. } | Expr::SeqLoopAcc { f, .. } => {
                if let Callee::Function(id) = f.callee {
                    out.insert(id, f.params.len());
                }
            }
            _ => {}
        });
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

/// What to write twice: every loop body with accesses whose checks can
/// be hoisted, and the functions it calls in which they are.
pub fn analyse(p: &Program) -> Plan {
    let bodies = loop_bodies(p);
    let mut plan = Plan::default();
    let mut calls = FxHashMap::default();
    let mut callees: FxHashMap<FnId, FxHashSet<VarId>> = FxHashMap::default();
    for (&id, &passed) in &bodies {
        let Some(f) = p.function(id) else { continue };
        let mut cx = Context::new(p, &bodies);
        if !cx.loop_body(f, passed) || cx.tests.is_empty() {
            continue;
        }
        plan.loops.insert(id, Hoisted { tests: cx.tests });
        for (g, set) in cx.proven {
            if g == id {
                plan.unchecked.insert(g, set);
            } else {
                meet(&mut callees, g, set);
            }
        }
        calls.extend(cx.calls);
    }
    plan.unchecked.extend(callees);
    // A call is written as a call of the unchecked version only where
    // there is one; dropping such a call may leave its caller with
    // nothing unchecked, and so on up.
    loop {
        let has = |g: &FnId, u: &FxHashMap<FnId, FxHashSet<VarId>>| u.get(g).is_some_and(|s| !s.is_empty());
        let before: usize = plan.unchecked.values().map(|s| s.len()).sum();
        let snapshot = plan.unchecked.clone();
        for set in plan.unchecked.values_mut() {
            set.retain(|v| calls.get(v).is_none_or(|g| has(g, &snapshot)));
        }
        plan.unchecked.retain(|_, s| !s.is_empty());
        if plan.unchecked.values().map(|s| s.len()).sum::<usize>() == before {
            break;
        }
    }
    plan.loops.retain(|id, _| plan.unchecked.contains_key(id));
    plan
}

/// The row length of a kernel whose body is `body` (its last parameter the
/// index, the others invariant): what the body divides its index by
/// first, as C over the kernel's invariant arguments `args`. Any positive
/// value is a correct row length (rows only order the iterations); this
/// one is the body's own, for which tiles of rows keep neighbouring
/// iterations together as the body sees them. `bodies`: the program's
/// [`loop_bodies`].
pub fn row_length(p: &Program, bodies: &FxHashMap<FnId, usize>, body: FnId, args: &[String]) -> Option<String> {
    let f = p.function(body)?;
    let mut cx = Context::new(p, bodies);
    if !cx.loop_body(f, 1) {
        return None;
    }
    cx.divisors.first().map(|w| c(w, args))
}

/// Keeps in `g`'s set only what `set` also has (the first set as it is).
fn meet(sets: &mut FxHashMap<FnId, FxHashSet<VarId>>, g: FnId, set: FxHashSet<VarId>) {
    match sets.get_mut(&g) {
        Some(old) => old.retain(|v| set.contains(v)),
        None => {
            sets.insert(g, set);
        }
    }
}

impl<'p> Context<'p> {
    fn new(p: &'p Program, bodies: &'p FxHashMap<FnId, usize>) -> Context<'p> {
        Context {
            p,
            bodies,
            tests: Vec::new(),
            proven: FxHashMap::default(),
            calls: FxHashMap::default(),
            divisors: Vec::new(),
        }
    }

    /// Analyses the body `f` of a loop that passes its last `passed`
    /// parameters (the last being the index); false if it cannot be.
    fn loop_body(&mut self, f: &Function, passed: usize) -> bool {
        let n = f.params.len();
        if passed == 0 || passed > n || f.params[n - 1].ty != Type::Int {
            return false;
        }
        let env = affine::body_env(f, n - passed, true, None);
        self.function(f, env, 0);
        true
    }

    /// Walks the top-level statements of `f`'s body, its parameters known
    /// as `env` says, recording what it proves.
    fn function(&mut self, f: &Function, mut env: Env, depth: usize) {
        let mut proven = FxHashSet::default();
        for s in &f.body.stmts {
            let val = match &s.expr {
                Expr::Prim(Builtin::Divi | Builtin::Modi, args) => {
                    if let (Some(x), Some(w)) = (affine::int(&args[0], &env), affine::int(&args[1], &env)) {
                        if x.is_index() && w.step.is_none() && !self.divisors.contains(&w.base) {
                            self.divisors.push(w.base);
                        }
                    }
                    affine::eval(s, &env)
                }
                Expr::Prim(Builtin::TensorGetExn, args) | Expr::Prim(Builtin::TensorSetExn, args) => {
                    let index = affine::index(&args[1], &env).and_then(|items| items.into_iter().collect());
                    if let (Some(tensor), Some(index)) = (affine::invariant(&args[0], &env), index) {
                        proven.insert(s.var.id);
                        self.tests.push(Test::Full { tensor, index });
                    }
                    None
                }
                Expr::Prim(Builtin::TensorLinearGetExn, args) | Expr::Prim(Builtin::TensorLinearSetExn, args) => {
                    if let (Some(tensor), Some(index)) =
                        (affine::invariant(&args[0], &env), affine::int(&args[1], &env))
                    {
                        proven.insert(s.var.id);
                        self.tests.push(Test::Linear { tensor, index });
                    }
                    None
                }
                // A call: the callee's accesses, with its parameters
                // known as the arguments are (a loop body is versioned on
                // its own; recursion is not followed).
                Expr::Call(g, args) if depth < MAX_DEPTH && !self.bodies.contains_key(g) => {
                    if let Some(callee) = self.p.function(*g).filter(|c| !c.recursive) {
                        self.function(callee, affine::call_env(callee, args, &env), depth + 1);
                        proven.insert(s.var.id);
                        self.calls.insert(s.var.id, *g);
                    }
                    None
                }
                _ => affine::eval(s, &env),
            };
            if let Some(val) = val {
                env.insert(s.var.id, val);
            }
        }
        meet(&mut self.proven, f.id, proven);
    }
}

/// C for the value at the loop, whose invariant arguments are `args`.
fn c(s: &Sym, args: &[String]) -> String {
    match s {
        Sym::Param(k) => args[*k].clone(),
        Sym::Lit(k) => super::body::lit(&pmx_lower::Lit::Int(*k)),
        Sym::Add(a, b) => format!("PMX_ADDI({}, {})", c(a, args), c(b, args)),
        Sym::Sub(a, b) => format!("PMX_SUBI({}, {})", c(a, args), c(b, args)),
        Sym::Mul(a, b) => format!("PMX_MULI({}, {})", c(a, args), c(b, args)),
        Sym::Neg(a) => format!("PMX_NEGI({})", c(a, args)),
        Sym::Field(r, label) => format!("{}.{}", c(r, args), field(label)),
        Sym::Dim(t, k) => format!("pmx_dim({}, {k})", c(t, args)),
    }
}

/// C: whether every value of `a` over `n` iterations lies in `[0, bound)`.
fn within(a: &Affine, args: &[String], n: &str, bound: &str) -> String {
    let step = a.step.as_ref().map_or("(int64_t)0".to_string(), |s| c(s, args));
    format!("pmx_affine_within({}, {step}, {n}, {bound})", c(&a.base, args))
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
                    let t = c(tensor, args);
                    parts.push(format!("{t}.rank == {}", index.len()));
                    for (k, a) in index.iter().enumerate() {
                        parts.push(within(a, args, n, &format!("{t}.dims[{k}]")));
                    }
                }
                Test::Linear { tensor, index } => {
                    parts.push(within(index, args, n, &format!("pmx_tensor_size({})", c(tensor, args))));
                }
            }
        }
        format!("{n} <= 0 || ({n} < ((int64_t)1 << 31) && {})", parts.join(" && "))
    }
}
