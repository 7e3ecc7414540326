//! A histogram's fold (`pmx_lower::hist`): `foldl update init parts`,
//! whose update the lowering marked (`Function::histogram`), is Futhark's
//! `reduce_by_index`: each pair `(i, v)` of `parts` combines `v` into
//! cell `i` with the update's operator, in parallel. `reduce_by_index`
//! ignores an index out of range; the map that made the pairs checked
//! each one as the `get` of the fold's step (its failure is the
//! channel's), so none reaches it where the code keeps its checks.
//! Integer results are exact in every order; a float sum or product may
//! round differently from the sequential fold (`pmx explain` says so).

use super::*;
use pmx_lower::accumulate::Op;

impl Writer<'_> {
    /// The operator of a histogram's update, where `f` is one.
    pub(super) fn histogram(&self, f: &FunRef) -> Option<Op> {
        match f.callee {
            Callee::Function(g) => self.p.function(g)?.histogram,
            _ => None,
        }
    }

    /// `reduce_by_index` into `init` (in place where the fold could
    /// consume it, as a fold of the update would; else into a copy) of
    /// the pairs `parts`.
    pub(super) fn reduce_by_index(&mut self, f: &FunRef, op: Op, init: &Atom, parts: &Atom, depth: usize) -> String {
        let consumes = matches!(f.callee, Callee::Function(g) if self.unique.param(g, f.bound.len()));
        let dest = self.atom(init);
        let dest = match self.stmt_var {
            Some(v) if consumes && self.unique.direct(v, 0) => dest,
            _ => format!("(copy {dest})"),
        };
        let (is, vs) = (self.locals.fresh("is"), self.locals.fresh("vs"));
        let parts = self.atom(parts);
        self.line(depth, &format!("let ({is}, {vs}) = unzip {parts}"));
        format!("reduce_by_index {dest} {} {} {is} {vs}", operator(op), neutral(op))
    }
}

/// The operator as a Futhark function.
fn operator(op: Op) -> &'static str {
    match op {
        Op::Addi => "(\\a b -> a + b : i64)",
        Op::Addf => "(\\a b -> a + b : f64)",
        Op::Muli => "(\\a b -> a * b : i64)",
        Op::Mulf => "(\\a b -> a * b : f64)",
        Op::Maxi => "i64.max",
        Op::Mini => "i64.min",
    }
}

/// Its neutral element (`Op::neutral`), as a Futhark literal.
fn neutral(op: Op) -> String {
    match op.neutral() {
        pmx_ast::Lit::Int(i64::MIN) => "i64.lowest".into(),
        pmx_ast::Lit::Int(i64::MAX) => "i64.highest".into(),
        pmx_ast::Lit::Int(n) => format!("{n}i64"),
        pmx_ast::Lit::Float(x) => format!("{x:?}f64"),
        other => format!("{other:?}"),
    }
}
