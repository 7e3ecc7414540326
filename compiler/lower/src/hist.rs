//! Histograms (issue 30) in a Futhark-class program: a `foldl` whose step
//! updates its sequence accumulator `h` at one computed index with an
//! accumulation's operator (`accumulate::Op`),
//!
//! ```text
//! foldl (lam h. lam x. set h (idx x) (addi (get h (idx x)) (val x))) init xs
//! ```
//!
//! gives the same result in every order of the elements (up to rounding
//! for floats), so Futhark runs it as `reduce_by_index`. The step must
//! read `h` only with one `get` at the index its `set` writes (the same
//! variable, or the same computation of the same values), and nothing
//! but the operator may use the old value. `pmx_accelerate`'s
//! `rewrite/hist.rs` recognises the same shapes in MExpr, for
//! classification.
//!
//! The fold is split in two, both ordinary IR, so every pass and
//! generator that does not know histograms still computes the same:
//!
//! ```text
//! let parts = map (step' init) xs   -- (index, value) of each element
//! let r = foldl update init parts   -- update h (i, v) = set h i (op (get h i) v)
//! ```
//!
//! `step'` is the step without its update: it keeps the `get`, whose check
//! (run on `init`, which has the accumulator's length at every step) is
//! the located error debug mode reports for an index out of range, in the
//! same order as the other failures of the element, and the lowest
//! element's first, as the sequential fold fails. `update` is marked
//! (`Function::histogram`): the Futhark generator writes a fold of it as
//! `reduce_by_index`, which ignores indices out of range, so the checks
//! made by `step'` are what keeps it faithful.
//!
//! A step function that anything else calls or refers to is left alone
//! (its fold stays sequential); the lowering makes one function per
//! lambda, so a step written in place is only the fold's.

use crate::accumulate::{op_of_expr, Op};
use crate::ir::*;
use pmx_ast::{Builtin, NameId, SmolStr, Span};
use rustc_hash::{FxHashMap, FxHashSet};

/// Rewrites the histograms of a Futhark-class program as above.
pub fn rewrite(p: &mut Program) {
    let steps = steps(p);
    if steps.is_empty() {
        return;
    }
    let mut fresh = Fresh::new(p);
    let mut names: FxHashSet<SmolStr> = p.functions.iter().map(|f| f.name.clone()).collect();
    let mut updates: FxHashMap<FnId, Update> = FxHashMap::default();
    for (id, step) in steps {
        // After every function of the program: ordered below.
        let new_id = FnId((p.functions.len() + updates.len()) as u32);
        let Some(f) = p.functions.get_mut(id.0 as usize) else { continue };
        updates.insert(id, make_update(f, &step, &mut fresh, &mut names, new_id));
        split(f, step, &mut fresh);
    }
    for f in &mut p.functions {
        let mut names = names_of(&f.params, &f.body);
        replace_folds(&mut f.body, &updates, &mut fresh, &mut names);
    }
    for e in &mut p.entries {
        let mut names = names_of(&e.params, &e.body);
        replace_folds(&mut e.body, &updates, &mut fresh, &mut names);
    }
    let mut new: Vec<Function> = updates.into_values().map(|u| u.function).collect();
    new.sort_by_key(|f| f.id);
    let mut functions = std::mem::take(&mut p.functions);
    functions.extend(new);
    // The updates come after the functions that use them: ordered again.
    let entries = std::mem::take(&mut p.entries);
    let (functions, entries, _) = crate::order::order_mapped(functions, entries);
    p.functions = functions;
    p.entries = entries;
}

/// A histogram fold of a program, for `pmx explain`.
#[derive(Clone, Debug)]
pub struct Found {
    pub op: Op,
    /// The fold's location.
    pub span: Span,
    /// The entries (accelerate bindings) whose code reaches it.
    pub entries: Vec<NameId>,
}

/// The histogram folds of a program that [`rewrite`] has split, in
/// program order.
pub fn found(p: &Program) -> Vec<Found> {
    let reach = crate::accumulate::entry_reach(p);
    let mut out = Vec::new();
    let mut look = |b: &Block, function: Option<FnId>, entry: Option<NameId>| {
        b.for_each_stmt(&mut |s| {
            let Expr::Foldl { f, .. } = &s.expr else { return };
            let Callee::Function(g) = f.callee else { return };
            let Some(op) = p.function(g).and_then(|g| g.histogram) else { return };
            let entries = match (function, entry) {
                (Some(fid), _) => {
                    p.entries.iter().zip(&reach).filter(|(_, r)| r.contains(&fid)).map(|(e, _)| e.id).collect()
                }
                (None, e) => e.into_iter().collect(),
            };
            out.push(Found { op, span: s.span, entries });
        });
    };
    for f in &p.functions {
        look(&f.body, Some(f.id), None);
    }
    for e in &p.entries {
        look(&e.body, None, Some(e.id));
    }
    // One per place: the lowering copies a function per instance.
    out.sort_by_key(|f| (f.span.file, f.span.start));
    let mut merged: Vec<Found> = Vec::with_capacity(out.len());
    for f in out {
        match merged.last_mut() {
            Some(last) if last.span == f.span => {
                for e in f.entries {
                    if !last.entries.contains(&e) {
                        last.entries.push(e);
                    }
                }
            }
            _ => merged.push(f),
        }
    }
    merged
}

/// What a step function's update is made of: the positions in its body
/// of the operator's and the `set`'s statements, and their parts.
struct Step {
    op: Op,
    /// The operator's node, with the old value's operand at `old`.
    op_expr: Expr,
    old: usize,
    op_stmt: usize,
    set_stmt: usize,
    index: Atom,
    value: Atom,
    /// The accumulator's element type.
    elem: Type,
    /// The `set`'s location: the update's.
    span: Span,
}

/// The step functions of histogram folds, by id.
fn steps(p: &Program) -> Vec<(FnId, Step)> {
    // How each function is referred to: as a fold's step, or otherwise.
    let mut as_step: FxHashSet<FnId> = FxHashSet::default();
    let mut other: FxHashSet<FnId> = FxHashSet::default();
    let bodies = p.functions.iter().map(|f| &f.body).chain(p.entries.iter().map(|e| &e.body));
    for b in bodies {
        b.for_each_stmt(&mut |s| match &s.expr {
            Expr::Foldl { f: FunRef { callee: Callee::Function(g), .. }, .. } => {
                as_step.insert(*g);
            }
            Expr::Call(g, _) | Expr::Closure(Callee::Function(g), _) => {
                other.insert(*g);
            }
            e => {
                for r in crate::callgraph::fun_refs(e) {
                    if let Callee::Function(g) = r.callee {
                        other.insert(g);
                    }
                }
            }
        });
    }
    let mut out: Vec<(FnId, Step)> = as_step
        .into_iter()
        .filter(|g| !other.contains(g))
        .filter_map(|g| {
            let f = p.function(g)?;
            Some((g, recognise(p, f)?))
        })
        .collect();
    out.sort_by_key(|(g, _)| *g);
    out
}

/// The update of a step function `f(.., h, x)`, if its body ends with
/// `r = set h i w` (its result), `w = op g v` (or `op v g`) and
/// `g = get h j` with `j` the same index, and reads `h` nowhere else.
fn recognise(p: &Program, f: &Function) -> Option<Step> {
    if f.recursive || f.histogram.is_some() || f.params.len() < 2 {
        return None;
    }
    let h = &f.params[f.params.len() - 2];
    let Type::Seq(elem) = &h.ty else { return None };
    let stmts = &f.body.stmts;
    let set_stmt = stmts.len().checked_sub(1)?;
    let set = &stmts[set_stmt];
    if !matches!(&f.body.result, Atom::Var(r) if r.id == set.var.id) {
        return None;
    }
    let Expr::Prim(Builtin::Set, args) = &set.expr else { return None };
    let [Atom::Var(h1), index, Atom::Var(w)] = args.as_slice() else { return None };
    let defs: FxHashMap<VarId, (usize, &Expr)> =
        stmts.iter().enumerate().map(|(k, s)| (s.var.id, (k, &s.expr))).collect();
    let &(op_stmt, op_expr) = defs.get(&w.id)?;
    let (op, operands) = op_of_expr(p, op_expr)?;
    let old = operands.iter().position(|a| match a {
        Atom::Var(g) => matches!(defs.get(&g.id), Some((_, Expr::Prim(Builtin::Get, ga)))
            if matches!(&ga[0], Atom::Var(h2) if h2.id == h.id) && same(&ga[1], index, &defs, 0)),
        Atom::Lit(_) => false,
    })?;
    let Atom::Var(g) = &operands[old] else { return None };
    let value = operands[1 - old].clone();
    // The accumulator only at the `get` and the `set`, the old value only
    // at the operator, the operator's result only at the `set`.
    let uses = uses(&f.body);
    let count = |v: VarId| uses.get(&v).copied().unwrap_or(0);
    if h1.id != h.id || count(h.id) != 2 || count(g.id) != 1 || count(w.id) != 1 {
        return None;
    }
    Some(Step {
        op,
        op_expr: op_expr.clone(),
        old,
        op_stmt,
        set_stmt,
        index: index.clone(),
        value,
        elem: (**elem).clone(),
        span: set.span,
    })
}

/// The same value: the same variable or literal, or variables bound in
/// the body to the same node of the same values (Futhark-class code has
/// no effects but failures, which the first of the two meets), up to a
/// few levels deep.
fn same(a: &Atom, b: &Atom, defs: &FxHashMap<VarId, (usize, &Expr)>, depth: usize) -> bool {
    match (a, b) {
        (Atom::Lit(x), Atom::Lit(y)) => x == y,
        (Atom::Var(x), Atom::Var(y)) if x.id == y.id => true,
        (Atom::Var(x), Atom::Var(y)) if depth < 8 => {
            let (Some((_, ex)), Some((_, ey))) = (defs.get(&x.id), defs.get(&y.id)) else { return false };
            let all = |xs: &[Atom], ys: &[Atom]| {
                xs.len() == ys.len() && xs.iter().zip(ys).all(|(p, q)| same(p, q, defs, depth + 1))
            };
            match (ex, ey) {
                (Expr::Atom(p), Expr::Atom(q)) => same(p, q, defs, depth + 1),
                (Expr::Prim(f, xs), Expr::Prim(g, ys)) => f == g && all(xs, ys),
                (Expr::Math(f, xs), Expr::Math(g, ys)) => f == g && all(xs, ys),
                (Expr::Call(f, xs), Expr::Call(g, ys)) => f == g && all(xs, ys),
                (Expr::Project(p, l), Expr::Project(q, m)) => l == m && same(p, q, defs, depth + 1),
                _ => false,
            }
        }
        _ => false,
    }
}

/// How many times each variable is read in a block (its branches too).
fn uses(b: &Block) -> FxHashMap<VarId, usize> {
    let mut out: FxHashMap<VarId, usize> = FxHashMap::default();
    let mut count = |a: &Atom| {
        if let Atom::Var(v) = a {
            *out.entry(v.id).or_default() += 1;
        }
    };
    b.for_each_stmt(&mut |s| s.expr.operands().into_iter().for_each(&mut count));
    b.for_each_result(&mut count);
    out
}

/// Fresh variable identities: past every one the program binds.
struct Fresh(u32);

impl Fresh {
    fn new(p: &Program) -> Fresh {
        let mut max = 0;
        let mut see = |params: &[Var], b: &Block| {
            for v in params {
                max = max.max(v.id.0);
            }
            b.for_each_stmt(&mut |s| max = max.max(s.var.id.0));
        };
        for f in &p.functions {
            see(&f.params, &f.body);
        }
        for e in &p.entries {
            see(&e.params, &e.body);
        }
        Fresh(max)
    }

    fn var(&mut self, name: SmolStr, ty: Type) -> Var {
        self.0 += 1;
        Var { id: VarId(self.0), name, ty }
    }
}

/// A name not in `taken`, which then holds it.
fn unique(taken: &mut FxHashSet<SmolStr>, base: &str) -> SmolStr {
    let mut name = SmolStr::new(base);
    let mut k = 0;
    while taken.contains(&name) {
        k += 1;
        name = SmolStr::new(format!("{base}_{k}"));
    }
    taken.insert(name.clone());
    name
}

fn names_of(params: &[Var], b: &Block) -> FxHashSet<SmolStr> {
    let mut out: FxHashSet<SmolStr> = params.iter().map(|v| v.name.clone()).collect();
    b.for_each_stmt(&mut |s| {
        out.insert(s.var.name.clone());
    });
    out
}

/// The pair a step's remainder returns: the index and the value.
fn pair_type(elem: &Type) -> Type {
    Type::Record(vec![("0".into(), Type::Int), ("1".into(), elem.clone())])
}

/// What replaces the folds of one step function.
struct Update {
    function: Function,
    elem: Type,
}

/// `update h q = set h q.0 (op (get h q.0) q.1)`, marked as a histogram's.
fn make_update(f: &Function, s: &Step, fresh: &mut Fresh, names: &mut FxHashSet<SmolStr>, id: FnId) -> Update {
    let seq = Type::seq(s.elem.clone());
    let pair = pair_type(&s.elem);
    let h = fresh.var("h".into(), seq.clone());
    let q = fresh.var("q".into(), pair);
    let i = fresh.var("i".into(), Type::Int);
    let v = fresh.var("v".into(), s.elem.clone());
    let g = fresh.var("old".into(), s.elem.clone());
    let w = fresh.var("new".into(), s.elem.clone());
    let r = fresh.var("r".into(), seq.clone());
    let mut operands = vec![Atom::Var(v.clone())];
    operands.insert(s.old, Atom::Var(g.clone()));
    let op_expr = match &s.op_expr {
        Expr::Prim(b, _) => Expr::Prim(*b, operands),
        Expr::Call(m, _) => Expr::Call(*m, operands),
        other => other.clone(),
    };
    let stmt = |var: &Var, expr: Expr| Stmt { var: var.clone(), expr, span: s.span };
    let body = Block {
        stmts: vec![
            stmt(&i, Expr::Project(Atom::Var(q.clone()), "0".into())),
            stmt(&v, Expr::Project(Atom::Var(q.clone()), "1".into())),
            stmt(&g, Expr::Prim(Builtin::Get, vec![Atom::Var(h.clone()), Atom::Var(i.clone())])),
            stmt(&w, op_expr),
            stmt(&r, Expr::Prim(Builtin::Set, vec![Atom::Var(h.clone()), Atom::Var(i), Atom::Var(w)])),
        ],
        result: Atom::Var(r),
    };
    let name = unique(names, &format!("{}_update", f.name));
    let mut function = Function::new(id, name, f.source.clone(), f.shown.clone(), f.span, vec![h, q], seq, body);
    function.instance = f.instance.clone();
    function.lifted = true;
    function.histogram = Some(s.op);
    Update { function, elem: s.elem.clone() }
}

/// The step without its update: it returns `(index, value)`.
fn split(f: &mut Function, s: Step, fresh: &mut Fresh) {
    let mut names = names_of(&f.params, &f.body);
    let pair = fresh.var(unique(&mut names, "part"), pair_type(&s.elem));
    let span = s.span;
    // The set is last; the operator before it.
    f.body.stmts.truncate(s.set_stmt);
    f.body.stmts.remove(s.op_stmt);
    f.body.stmts.push(Stmt {
        var: pair.clone(),
        expr: Expr::Record(vec![("0".into(), s.index), ("1".into(), s.value)]),
        span,
    });
    f.body.result = Atom::Var(pair.clone());
    f.result = pair.ty;
}

/// Each `r = foldl step init xs` of a split step becomes
/// `parts = map (step init) xs; r = foldl update init parts`.
fn replace_folds(b: &mut Block, updates: &FxHashMap<FnId, Update>, fresh: &mut Fresh, names: &mut FxHashSet<SmolStr>) {
    let mut out = Vec::with_capacity(b.stmts.len());
    for mut s in std::mem::take(&mut b.stmts) {
        if let Expr::If { then, otherwise, .. } = &mut s.expr {
            replace_folds(then, updates, fresh, names);
            replace_folds(otherwise, updates, fresh, names);
        }
        let Expr::Foldl { f, init, seq } = &s.expr else {
            out.push(s);
            continue;
        };
        let Some(u) = (match f.callee {
            Callee::Function(g) => updates.get(&g),
            _ => None,
        }) else {
            out.push(s);
            continue;
        };
        let pair = pair_type(&u.elem);
        let parts = fresh.var(unique(names, &format!("{}_parts", s.var.name)), Type::seq(pair.clone()));
        let mut bound = f.bound.clone();
        bound.push(init.clone());
        let map = Expr::Map {
            f: FunRef { callee: f.callee, bound, params: f.params[1..].to_vec(), result: pair.clone() },
            seqs: vec![seq.clone()],
        };
        let fold = Expr::Foldl {
            f: FunRef {
                callee: Callee::Function(u.function.id),
                bound: Vec::new(),
                params: vec![Type::seq(u.elem.clone()), pair],
                result: Type::seq(u.elem.clone()),
            },
            init: init.clone(),
            seq: Atom::Var(parts.clone()),
        };
        out.push(Stmt { var: parts, expr: map, span: s.span });
        out.push(Stmt { var: s.var, expr: fold, span: s.span });
    }
    b.stmts = out;
}
