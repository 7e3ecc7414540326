//! Which functions and entries count utests (`pmx test`). A utest inside
//! accelerated code counts once each time it runs, as in the interpreter,
//! so generated code that runs one returns, beside its value, how many
//! ran: a counting function returns `(value, i64)`, a `map` of one is
//! unzipped and its counts summed, a fold carries the count in its loop,
//! and an entry that counts has one more `i64` result, which the engine
//! adds to the run's tally. Code that runs no counted utest is generated
//! as before (a `pmx run` counts nothing).

use pmx_ast::Span;
use pmx_lower::{Block, Callee, Expr, FnId, FunRef, Program};
use rustc_hash::FxHashSet;

/// The functions that count (directly, or through a function they call
/// or pass to a keyword), by a fixpoint over the call graph (recursive
/// groups reach it too).
pub fn counting_functions(p: &Program, counts: &dyn Fn(Span) -> bool) -> FxHashSet<FnId> {
    let mut set = FxHashSet::default();
    loop {
        let before = set.len();
        for f in &p.functions {
            if !set.contains(&f.id) && block_counts(&f.body, counts, &set) {
                set.insert(f.id);
            }
        }
        if set.len() == before {
            return set;
        }
    }
}

/// Whether running `b` may run a counted utest.
pub fn block_counts(b: &Block, counts: &dyn Fn(Span) -> bool, set: &FxHashSet<FnId>) -> bool {
    b.stmts.iter().any(|s| match &s.expr {
        Expr::SizeEq { .. } | Expr::Utest { .. } => counts(s.span),
        Expr::Call(id, _) => set.contains(id),
        Expr::If { then, otherwise, .. } => block_counts(then, counts, set) || block_counts(otherwise, counts, set),
        Expr::Map { f, .. } | Expr::Reduce { f, .. } | Expr::Foldl { f, .. } | Expr::Create { f, .. } => {
            fun_counts(f, set)
        }
        _ => false,
    })
}

/// Whether a function value returns `(value, count)`.
pub fn fun_counts(f: &FunRef, set: &FxHashSet<FnId>) -> bool {
    matches!(f.callee, Callee::Function(id) if set.contains(&id))
}
