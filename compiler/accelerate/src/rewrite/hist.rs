//! Histograms (issue 30), as classification sees them: a `foldl` whose
//! accumulator is a sequence that each step updates at one computed index
//! with an accumulation's operator (`crate::accumulation::Op`),
//!
//! ```text
//! foldl (lam h. lam x. set h (idx x) (addi (get h (idx x)) (val x))) init xs
//! ```
//!
//! also through `let`s (`let i = idx x in let old = get h i in set h i
//! (addi old v)`), the old value on either side of the operator. Its
//! result does not depend on the order of the elements (up to rounding
//! for floats), so it is a parallel pattern: Futhark's `reduce_by_index`.
//! Classification (`classify.rs`) counts it as the Futhark keyword of a
//! binding that uses no other keyword; with another keyword it decides
//! nothing (a fold in CUDA-class code stays a sequential fold there).
//!
//! The rule: the step reads its accumulator once, with `get` at the
//! index it then writes with `set` (the same expression, or the same
//! variable), and nothing else in the step reads the accumulator or the
//! old value. The generator's decision is `pmx_lower::hist`'s, which
//! checks the same rule on the lowered IR (the form the generator
//! emits from); `tests/futhark.rs` runs the programs of both forms.

use super::assoc::{self, UserOp, UserOps};
use super::{builtin_of, is_var, spine};
use crate::accumulation::Op;
use crate::free::free_vars;
use pmx_ast::*;
use rustc_hash::FxHashMap;

/// What recognises histograms in one program: the operators it defines
/// (`maxi`, `mini`, known by their definitions).
pub(crate) struct Histograms {
    user: UserOps,
}

impl Histograms {
    pub fn new(program: &Expr) -> Histograms {
        Histograms { user: assoc::user_ops(program) }
    }

    /// The `foldl`s in `e` that are histograms, by the span of their
    /// `foldl`, in source order; `value` gives a top-level function's
    /// definition (lifting made every step function one).
    pub fn folds<'a>(&self, e: &'a Expr, value: &dyn Fn(NameId) -> Option<&'a Expr>) -> Vec<Span> {
        let mut out = Vec::new();
        self.walk(e, value, &mut out);
        out
    }

    fn walk<'a>(&self, e: &'a Expr, value: &dyn Fn(NameId) -> Option<&'a Expr>, out: &mut Vec<Span>) {
        if let ExprKind::App(..) = &e.kind {
            let (head, args) = spine(e);
            if builtin_of(head) == Some(Builtin::Foldl) && args.len() == 3 && self.step(args[0], value).is_some() {
                out.push(head.span);
            }
        }
        pmx_ast::visit::children(e, &mut |c| self.walk(c, value, out));
    }

    /// The operator of a step function that updates one cell of its
    /// accumulator: a lambda, or a top-level function applied to some
    /// leading arguments.
    fn step<'a>(&self, f: &'a Expr, value: &dyn Fn(NameId) -> Option<&'a Expr>) -> Option<Op> {
        let (head, bound) = spine(f);
        let mut def = match &head.kind {
            ExprKind::Lam { .. } if bound.is_empty() => head,
            ExprKind::Var(n) => value(n.id)?,
            _ => return None,
        };
        for _ in 0..bound.len() {
            let ExprKind::Lam { body, .. } = &def.kind else { return None };
            def = body;
        }
        let ExprKind::Lam { param: h, body, .. } = &def.kind else { return None };
        let ExprKind::Lam { body, .. } = &body.kind else { return None };
        self.update(h.id, body)
    }

    /// `set h I (op (get h I) V)` after `let`s, the read and the new
    /// value maybe bound by them (as in A-normal form).
    fn update(&self, h: NameId, body: &Expr) -> Option<Op> {
        let mut lets = Vec::new();
        let cur = flatten(body, &mut lets);
        // What each `let` binds, and the one that binds the read
        // (`let old = get h J`) with `J`.
        let mut defs: Defs = FxHashMap::default();
        let mut read: Option<(NameId, &Expr)> = None;
        for (name, value) in lets {
            if mentions(value, h) {
                if read.is_some() {
                    return None;
                }
                read = Some((name, get_of(value, h)?));
            }
            defs.insert(name, value);
        }
        let (set, args) = spine(cur);
        if builtin_of(set) != Some(Builtin::Set) || args.len() != 3 || !is_var(args[0], h) {
            return None;
        }
        let index = args[1];
        // The new value, or the `let` that binds it (read nowhere else).
        let new = match &args[2].kind {
            ExprKind::Var(w) if defs.contains_key(&w.id) && uses(body, w.id) == 1 => defs[&w.id],
            _ => args[2],
        };
        let ExprKind::App(g, r) = &new.kind else { return None };
        let ExprKind::App(op, l) = &g.kind else { return None };
        let op = self.op(op)?;
        // Which operand is the old value, and the other.
        let old = |e: &Expr| match read {
            Some((v, j)) => is_var(e, v) && same(j, index, &defs, 0),
            None => get_of(e, h).is_some_and(|j| same(j, index, &defs, 0)),
        };
        let other = if old(l) {
            &**r
        } else if old(r) {
            &**l
        } else {
            return None;
        };
        // Nothing else reads the accumulator or the old value.
        let reads = |e: &Expr| mentions(e, h) || read.is_some_and(|(v, _)| mentions(e, v));
        if reads(index) || reads(other) || read.is_some_and(|(v, _)| uses(body, v) != 1) {
            return None;
        }
        Some(op)
    }

    fn op(&self, e: &Expr) -> Option<Op> {
        if let Some(b) = builtin_of(e) {
            return Op::of_builtin(b);
        }
        let ExprKind::Var(n) = &e.kind else { return None };
        match self.user.get(&n.id)? {
            UserOp::Max => Some(Op::Maxi),
            UserOp::Min => Some(Op::Mini),
            UserOp::And | UserOp::Or => None,
        }
    }
}

/// The `let`s in front of `e`, those inside their values first (A-normal
/// form nests them: `let w = let g = get h i in addi g 1 in set h i w`),
/// each with the value its own `let`s give; what is left after them.
fn flatten<'a>(e: &'a Expr, out: &mut Vec<(NameId, &'a Expr)>) -> &'a Expr {
    let mut cur = e;
    while let ExprKind::Let(b, rest) = &cur.kind {
        let value = flatten(&b.value, out);
        out.push((b.name.id, value));
        cur = rest;
    }
    cur
}

/// `get h J`: `J`.
fn get_of(e: &Expr, h: NameId) -> Option<&Expr> {
    let (head, args) = spine(e);
    (builtin_of(head) == Some(Builtin::Get) && args.len() == 2 && is_var(args[0], h)).then(|| args[1])
}

fn mentions(e: &Expr, v: NameId) -> bool {
    free_vars(e).iter().any(|f| f.id == v)
}

/// How many times `e` reads the variable `v`.
fn uses(e: &Expr, v: NameId) -> usize {
    let mut n = usize::from(is_var(e, v));
    pmx_ast::visit::children(e, &mut |c| n += uses(c, v));
    n
}

/// What the `let`s before the update bind.
type Defs<'a> = FxHashMap<NameId, &'a Expr>;

/// The same expression (up to locations) of variables, literals,
/// applications and projections, `let`-bound variables seen through a
/// few levels deep: the same value, Futhark-class code having no effects
/// but failures, which the first of the two meets.
fn same(a: &Expr, b: &Expr, defs: &Defs, depth: usize) -> bool {
    if depth > 8 {
        return false;
    }
    let bound = |e: &Expr| match &e.kind {
        ExprKind::Var(x) => defs.get(&x.id).copied(),
        _ => None,
    };
    match (&a.kind, &b.kind) {
        (ExprKind::Var(x), ExprKind::Var(y)) if x.id == y.id => true,
        (ExprKind::Lit(x), ExprKind::Lit(y)) => x == y,
        (ExprKind::App(f, x), ExprKind::App(g, y)) => same(f, g, defs, depth + 1) && same(x, y, defs, depth + 1),
        (ExprKind::Proj(x, l), ExprKind::Proj(y, m)) => l.text == m.text && same(x, y, defs, depth + 1),
        _ => match (bound(a), bound(b)) {
            (Some(x), _) => same(x, b, defs, depth + 1),
            (None, Some(y)) => same(a, y, defs, depth + 1),
            (None, None) => false,
        },
    }
}
