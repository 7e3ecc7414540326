//! Accumulations: a read-modify-write of one tensor cell with an
//! associative and commutative operator, in code that a parallel `loop`
//! runs (issue 30).
//!
//! The pattern is `tensorSetExn t ix (op (tensorGetExn t ix) v)` with `op`
//! one of `addi`, `addf`, `muli`, `mulf`, `maxi`, `mini`, in any spelling
//! that lowers to a `tensorGetExn` whose value only `op` uses, an `op`
//! whose value only the `tensorSetExn` uses, both in the block of the set,
//! with the same tensor and index (the same variable, field or index
//! literal of the same components) and nothing between the read and the
//! write that may write tensor data. Its result is the same in every order
//! of the iterations (up to rounding for floats), which is what a
//! parallel `loop` needs, provided each update is indivisible: where the
//! cell may be the same for two iterations, the CUDA generator writes an
//! atomic update. Where the cell is provably different for every
//! iteration of every kernel that runs it, it is `distinct` and stays a
//! plain update: by `affine.rs` (the analysis the generator's hoisting
//! uses), a component of the index affine in the loop's index with a
//! nonzero literal step, the quotient and remainder of such a value by one
//! width, or a tensor that is a view apart per iteration; and no other
//! accumulation of the kernel, of the same element type, may update cells
//! from several iterations (its atomic updates would race with the plain
//! one). A loop of one iteration has nothing to collide with.
//!
//! One analysis for every user: the CUDA generator (which statements are
//! atomic), `pmx explain` (which accumulations each binding has) and the
//! interpreter (through the CLI: the loops it must not run in parallel
//! chunks, and, for `--check-order`, the float accumulations whose sums
//! may round differently in another order).
//!
//! Every statement that code reachable from a parallel loop's body may
//! run is looked at: the body, the branches, the functions it calls and
//! the bodies of the keywords in it. What is known of values follows
//! calls and keyword bodies (their bound arguments) up to `MAX_DEPTH`
//! deep and not into recursion; past that nothing is known, so an
//! accumulation there is never `distinct` (atomic: correct, maybe slower).

use crate::affine::{self, Env};
use crate::callgraph::fun_refs;
use crate::ir::*;
use pmx_ast::{Builtin, NameId, SmolStr, Span};
use rustc_hash::{FxHashMap, FxHashSet};

/// How deep what is known of values follows calls and loop bodies from a
/// loop's body (the loops of a kernel nest as deep as a tensor's rank,
/// each a body and maybe a call).
const MAX_DEPTH: usize = 8;

/// The operators of an accumulation: `pmx_accelerate`'s one table (the
/// Futhark-class folds of `hist.rs` use it too).
pub use pmx_accelerate::accumulation::Op;

/// The operator a node applies to two operands, and those: a built-in, or
/// `maxi` and `mini`, which are functions of the standard library
/// (`std/int.mc`), known by their definition (`if gti a b then a else b`,
/// ...), as the Futhark rewrites know them (`pmx_accelerate`'s
/// `assoc.rs`), not by name.
pub(crate) fn op_of_expr<'e>(p: &Program, e: &'e Expr) -> Option<(Op, &'e [Atom])> {
    match e {
        Expr::Prim(b, args) if args.len() == 2 => Some((Op::of_builtin(*b)?, args)),
        Expr::Call(f, args) if args.len() == 2 => Some((max_or_min(p.function(*f)?)?, args)),
        _ => None,
    }
}

/// `maxi` or `mini` as the lowering writes them: a function of two `Int`s
/// `a`, `b` whose body compares them (in this order) and gives one.
fn max_or_min(f: &Function) -> Option<Op> {
    let [a, b] = f.params.as_slice() else { return None };
    if a.ty != Type::Int || b.ty != Type::Int || f.result != Type::Int {
        return None;
    }
    let is = |x: &Atom, v: &Var| matches!(x, Atom::Var(y) if y.id == v.id);
    let [cmp, choice] = f.body.stmts.as_slice() else { return None };
    let Expr::Prim(c, args) = &cmp.expr else { return None };
    let greater = match c {
        Builtin::Gti | Builtin::Geqi => true,
        Builtin::Lti | Builtin::Leqi => false,
        _ => return None,
    };
    if args.len() != 2 || !is(&args[0], a) || !is(&args[1], b) {
        return None;
    }
    let Expr::If { cond, then, otherwise } = &choice.expr else { return None };
    if !is(cond, &cmp.var) || !then.stmts.is_empty() || !otherwise.stmts.is_empty() {
        return None;
    }
    if !matches!(&f.body.result, Atom::Var(r) if r.id == choice.var.id) {
        return None;
    }
    let picks_a = if is(&then.result, a) && is(&otherwise.result, b) {
        true
    } else if is(&then.result, b) && is(&otherwise.result, a) {
        false
    } else {
        return None;
    };
    Some(if greater == picks_a { Op::Maxi } else { Op::Mini })
}

/// One read-modify-write of a tensor cell that a parallel loop runs.
#[derive(Clone, Debug)]
pub struct Accumulation {
    /// The `tensorSetExn` statement, which the update replaces.
    pub set: VarId,
    /// The `tensorGetExn` statement whose value only `op` uses.
    pub get: VarId,
    pub op: Op,
    pub tensor: Atom,
    /// The index the set uses.
    pub index: Atom,
    /// What the update combines into the cell.
    pub value: Atom,
    /// The set's location.
    pub span: Span,
    /// The function it is in (`None`: an entry's body).
    pub function: Option<FnId>,
    /// The cell is provably different for every iteration of every
    /// parallel loop that runs it: a plain update suffices.
    pub distinct: bool,
    /// The kernels that run it (their statements' locations).
    pub loops: Vec<Span>,
    /// Two iterations of some parallel loop, kernel or not, may update
    /// the same cell (the interpreter runs every parallel loop so).
    pub collides: bool,
    /// The entries (accelerate bindings) whose code reaches it.
    pub entries: Vec<NameId>,
}

impl Accumulation {
    /// Whether it needs an atomic update.
    pub fn atomic(&self) -> bool {
        !self.distinct
    }

    pub fn float(&self) -> bool {
        self.op.float()
    }
}

/// A program's accumulations, in program order.
#[derive(Clone, Debug, Default)]
pub struct Accumulations {
    /// Those that kernels run.
    pub found: Vec<Accumulation>,
    /// Every parallel loop (kernel or not: the interpreter runs each in
    /// parallel) whose iterations may update one cell, by its location,
    /// and whether one such update is of floats.
    pub colliding: FxHashMap<Span, bool>,
}

impl Accumulations {
    /// The accumulation whose set is the statement `set`, where it is
    /// atomic.
    pub fn atomic(&self, set: VarId) -> Option<&Accumulation> {
        self.found.iter().find(|a| a.set == set && a.atomic())
    }
}

/// The accumulations of a CUDA-class program.
pub fn find(p: &Program) -> Accumulations {
    let writers = crate::callgraph::fixpoint(&p.functions, FxHashSet::default(), |b, found| {
        b.any_stmt(|s| writes(&s.expr, found))
    });
    let mut candidates: FxHashMap<VarId, Accumulation> = FxHashMap::default();
    for f in &p.functions {
        read_modify_writes(p, &f.body, Some(f.id), &writers, &mut candidates);
    }
    for e in &p.entries {
        read_modify_writes(p, &e.body, None, &writers, &mut candidates);
    }
    if candidates.is_empty() {
        return Accumulations::default();
    }
    let mut walk = Walk {
        p,
        candidates: &candidates,
        distinct: FxHashMap::default(),
        loops: FxHashMap::default(),
        colliding: FxHashMap::default(),
        collides: FxHashSet::default(),
        met: Vec::new(),
        kernel: false,
    };
    // The loops whose iterations run in parallel in generated code:
    // kernel launches (a parallel loop inside a kernel is a sequential
    // loop of the kernel's iteration, which the walk from the kernel's
    // body follows). The interpreter runs the others in parallel too.
    let kernels: FxHashSet<VarId> = crate::launch::kernels(p).iter().map(|s| s.var.id).collect();
    let bodies = p.functions.iter().map(|f| &f.body).chain(p.entries.iter().map(|e| &e.body));
    for b in bodies {
        b.for_each_stmt(&mut |s| {
            match &s.expr {
                // One iteration has nothing to collide with.
                Expr::Loop { n: Atom::Lit(Lit::Int(n)), parallel: true, .. } if *n <= 1 => {}
                Expr::Loop { f, parallel: true, .. } => walk.parallel_loop(f, s.span, kernels.contains(&s.var.id)),
                _ => {}
            }
        });
    }
    let Walk { distinct, mut loops, colliding, collides, .. } = walk;
    let reach = entry_reach(p);
    let mut found: Vec<Accumulation> = candidates
        .into_values()
        .filter_map(|mut a| {
            a.loops = loops.remove(&a.set)?;
            a.distinct = distinct.get(&a.set).copied().unwrap_or(false);
            a.collides = collides.contains(&a.set);
            a.entries = p
                .entries
                .iter()
                .zip(&reach)
                .filter(|(_, r)| a.function.is_none_or(|f| r.contains(&f)))
                .map(|(e, _)| e.id)
                .collect();
            if a.function.is_none() {
                // In an entry's body: only that entry.
                a.entries.retain(|id| p.entries.iter().any(|e| e.id == *id && block_has(&e.body, a.set)));
            }
            Some(a)
        })
        .collect();
    found.sort_by_key(|a| (a.span.file, a.span.start, a.set));
    Accumulations { found, colliding }
}

/// The read-modify-writes of a body, by their sets.
fn read_modify_writes(
    p: &Program,
    body: &Block,
    function: Option<FnId>,
    writers: &FxHashSet<FnId>,
    out: &mut FxHashMap<VarId, Accumulation>,
) {
    let mut uses: FxHashMap<VarId, usize> = FxHashMap::default();
    let mut defs: FxHashMap<VarId, &Expr> = FxHashMap::default();
    body.for_each_stmt(&mut |s| {
        defs.insert(s.var.id, &s.expr);
        for a in s.expr.operands() {
            if let Atom::Var(v) = a {
                *uses.entry(v.id).or_default() += 1;
            }
        }
    });
    body.for_each_result(&mut |a| {
        if let Atom::Var(v) = a {
            *uses.entry(v.id).or_default() += 1;
        }
    });
    let once = |v: &Var| uses.get(&v.id) == Some(&1);
    let mut blocks = vec![body];
    while let Some(b) = blocks.pop() {
        let position: FxHashMap<VarId, usize> = b.stmts.iter().enumerate().map(|(k, s)| (s.var.id, k)).collect();
        for (k, s) in b.stmts.iter().enumerate() {
            if let Expr::If { then, otherwise, .. } = &s.expr {
                blocks.push(then);
                blocks.push(otherwise);
            }
            let Expr::Prim(Builtin::TensorSetExn, args) = &s.expr else { continue };
            let [t, ix, Atom::Var(w)] = args.as_slice() else { continue };
            let Some((op, xy)) = defs.get(&w.id).and_then(|e| op_of_expr(p, e)) else { continue };
            if !once(w) || !position.contains_key(&w.id) {
                continue;
            }
            // The operand read from the cell, and the other one.
            let read = xy.iter().enumerate().find_map(|(j, a)| match a {
                Atom::Var(r) if once(r) && position.contains_key(&r.id) => match defs.get(&r.id) {
                    Some(Expr::Prim(Builtin::TensorGetExn, g))
                        if same(&g[0], t, &defs) && same_index(&g[1], ix, &defs) =>
                    {
                        Some((r.id, xy[1 - j].clone()))
                    }
                    _ => None,
                },
                _ => None,
            });
            let Some((get, value)) = read else { continue };
            if matches!(&value, Atom::Var(v) if v.id == get) {
                continue;
            }
            let from = position[&get];
            if b.stmts[from + 1..k].iter().any(|s| writes(&s.expr, writers)) {
                continue;
            }
            out.insert(
                s.var.id,
                Accumulation {
                    set: s.var.id,
                    get,
                    op,
                    tensor: t.clone(),
                    index: ix.clone(),
                    value,
                    span: s.span,
                    function,
                    distinct: false,
                    loops: Vec::new(),
                    collides: false,
                    entries: Vec::new(),
                },
            );
        }
    }
}

/// What an atom names, through copies and fields: two atoms with the same
/// key are the same value.
#[derive(PartialEq)]
enum Key {
    Var(VarId),
    Lit(i64),
    Field(Box<Key>, SmolStr),
    Other,
}

fn key(a: &Atom, defs: &FxHashMap<VarId, &Expr>) -> Key {
    match a {
        Atom::Lit(Lit::Int(c)) => Key::Lit(*c),
        Atom::Lit(_) => Key::Other,
        Atom::Var(v) => match defs.get(&v.id) {
            Some(Expr::Atom(inner)) => key(inner, defs),
            Some(Expr::Project(r, label)) => Key::Field(Box::new(key(r, defs)), label.clone()),
            _ => Key::Var(v.id),
        },
    }
}

fn same(a: &Atom, b: &Atom, defs: &FxHashMap<VarId, &Expr>) -> bool {
    let k = key(a, defs);
    k != Key::Other && k == key(b, defs)
}

/// The same index: the same variable, or literals of the same components.
fn same_index(a: &Atom, b: &Atom, defs: &FxHashMap<VarId, &Expr>) -> bool {
    if same(a, b, defs) {
        return true;
    }
    let literal = |x: &Atom| match x {
        Atom::Var(v) => match defs.get(&v.id) {
            Some(Expr::Seq(items)) => Some(items.clone()),
            _ => None,
        },
        _ => None,
    };
    match (literal(a), literal(b)) {
        (Some(x), Some(y)) => x.len() == y.len() && x.iter().zip(&y).all(|(p, q)| same(p, q, defs)),
        _ => false,
    }
}

/// Whether a node may write tensor data, given the functions that may.
fn writes(e: &Expr, writers: &FxHashSet<FnId>) -> bool {
    let callee_writes = |f: &FnId| writers.contains(f);
    match e {
        Expr::Prim(Builtin::TensorSetExn | Builtin::TensorLinearSetExn, _) => true,
        Expr::Call(f, _) => callee_writes(f),
        Expr::If { then, otherwise, .. } => {
            then.any_stmt(|s| writes(&s.expr, writers)) || otherwise.any_stmt(|s| writes(&s.expr, writers))
        }
        e => fun_refs(e).iter().any(|r| match r.callee {
            Callee::Function(f) => callee_writes(&f),
            Callee::Builtin(b) => matches!(b, Builtin::TensorSetExn | Builtin::TensorLinearSetExn),
            _ => false,
        }),
    }
}

/// The functions each entry's code reaches, in the order of the entries.
pub(crate) fn entry_reach(p: &Program) -> Vec<FxHashSet<FnId>> {
    p.entries
        .iter()
        .map(|e| {
            let mut seen = FxHashSet::default();
            let mut stack = Vec::new();
            crate::callgraph::callees(&e.body, &mut stack);
            while let Some(f) = stack.pop() {
                if seen.insert(f) {
                    if let Some(g) = p.function(f) {
                        crate::callgraph::callees(&g.body, &mut stack);
                    }
                }
            }
            seen
        })
        .collect()
}

fn block_has(b: &Block, v: VarId) -> bool {
    b.any_stmt(|s| s.var.id == v)
}

/// The walk from each parallel loop's body through what it may run.
struct Walk<'a> {
    p: &'a Program,
    candidates: &'a FxHashMap<VarId, Accumulation>,
    /// Per accumulation: distinct in every context met so far.
    distinct: FxHashMap<VarId, bool>,
    /// Per accumulation: the kernels that run it.
    loops: FxHashMap<VarId, Vec<Span>>,
    colliding: FxHashMap<Span, bool>,
    /// The accumulations that collide in some loop.
    collides: FxHashSet<VarId>,
    /// In the kernel being walked: the accumulations met, each with
    /// whether its cell is apart from other iterations' there.
    met: Vec<(VarId, bool)>,
    /// The walk is from a kernel's body.
    kernel: bool,
}

impl Walk<'_> {
    fn parallel_loop(&mut self, f: &FunRef, span: Span, kernel: bool) {
        self.kernel = kernel;
        let Callee::Function(id) = f.callee else { return };
        let Some(body) = self.p.function(id) else { return };
        let env = affine::body_env(body, f.bound.len(), true, None);
        let mut unknown = FxHashSet::default();
        self.met.clear();
        self.function(body, env, 0, span, &mut unknown);
        if kernel {
            let met = std::mem::take(&mut self.met);
            let elem = |set: &VarId| element(&self.candidates[set].tensor);
            for (set, apart) in &met {
                // A plain update of a cell that another accumulation of
                // the kernel may update from other iterations would race
                // with those: it is atomic too. Any tensor of the same
                // element type may be that one (two parameters may be
                // views of one storage).
                let shared = |(other, a): &(VarId, bool)| other != set && !a && elem(other) == elem(set);
                if *apart && met.iter().any(shared) {
                    self.distinct.insert(*set, false);
                }
            }
        }
    }

    /// Walks `f`'s statements with its parameters known as `env` says;
    /// `unknown`: the functions already walked with nothing known, for
    /// this loop. What is known of its result (a view a function makes,
    /// such as a row of a matrix).
    fn function(
        &mut self,
        f: &Function,
        env: Env,
        depth: usize,
        l: Span,
        unknown: &mut FxHashSet<FnId>,
    ) -> Option<affine::Val> {
        let mut env = env;
        self.block(&f.body, &mut env, depth, l, unknown);
        affine::value(&f.body.result, &env)
    }

    fn block(&mut self, b: &Block, env: &mut Env, depth: usize, l: Span, unknown: &mut FxHashSet<FnId>) {
        for s in &b.stmts {
            if let Some(a) = self.candidates.get(&s.var.id) {
                let distinct = distinct(a, env);
                if !distinct {
                    *self.colliding.entry(l).or_default() |= a.float();
                    self.collides.insert(s.var.id);
                }
                if self.kernel {
                    self.met.push((s.var.id, distinct));
                    *self.distinct.entry(s.var.id).or_insert(true) &= distinct;
                    let loops = self.loops.entry(s.var.id).or_default();
                    if !loops.contains(&l) {
                        loops.push(l);
                    }
                }
            }
            match &s.expr {
                Expr::If { then, otherwise, .. } => {
                    self.block(then, env, depth, l, unknown);
                    self.block(otherwise, env, depth, l, unknown);
                }
                Expr::Call(g, args) => {
                    let Some(callee) = self.p.function(*g) else { continue };
                    if depth < MAX_DEPTH && !callee.recursive {
                        let inner = affine::call_env(callee, args, env);
                        if let Some(v) = self.function(callee, inner, depth + 1, l, unknown) {
                            env.insert(s.var.id, v);
                        }
                    } else {
                        self.unknown(callee, l, unknown);
                    }
                }
                e => {
                    for r in fun_refs(e) {
                        let Callee::Function(g) = r.callee else { continue };
                        let Some(callee) = self.p.function(g) else { continue };
                        if depth < MAX_DEPTH && !callee.recursive {
                            let inner = affine::body_env(callee, r.bound.len(), false, Some((&r.bound, env)));
                            self.function(callee, inner, depth + 1, l, unknown);
                        } else {
                            self.unknown(callee, l, unknown);
                        }
                    }
                    if let Some(v) = affine::eval(s, env) {
                        env.insert(s.var.id, v);
                    }
                }
            }
        }
    }

    /// Walks `f` with nothing known of its parameters, once per loop.
    fn unknown(&mut self, f: &Function, l: Span, unknown: &mut FxHashSet<FnId>) {
        if unknown.insert(f.id) {
            self.function(f, Env::default(), MAX_DEPTH, l, unknown);
        }
    }
}

/// The element type of a tensor.
fn element(t: &Atom) -> Option<Type> {
    match t.ty() {
        Type::Tensor(e) => Some(*e),
        _ => None,
    }
}

/// Whether the accumulation's cell differs for different iterations, as
/// far as `env` knows: the tensor is a view apart from every other
/// iteration's, or it does not depend on the index and the index tells
/// iterations apart (`affine::injective`).
fn distinct(a: &Accumulation, env: &Env) -> bool {
    affine::disjoint(&a.tensor, env)
        || (affine::invariant(&a.tensor, env).is_some() && affine::injective(&a.index, env))
}
