//! The channel: an `i64` that generated code returns beside a value, for
//! what the interpreter reports as it goes and a Futhark program can only
//! return. It counts the utests that ran (`pmx test` counts a utest inside
//! accelerated code once each time it runs), and it carries the first
//! failure of a check: a negative number, `-id` (`Writer::check`; the
//! entry's `failures`). Two channels join left to right with `pmx_join`:
//! the first failure stays, else the counts add up. A function that uses
//! it returns `(value, i64)`, a `map` of one is unzipped and its channels
//! joined, a fold carries it in its loop (a `while` loop stops at a
//! failure), and an entry that uses it has one more `i64` result, which
//! the engine reads.
//!
//! Failures are data, not Futhark's certificates, because MExpr is strict
//! and Futhark is not: Futhark computes nothing nobody reads (a value
//! nothing uses, the rows of an empty array, all but one element of a
//! `map` of which one is taken), and its checks with it, where debug mode
//! fails; and Futhark 0.22.7 drops certificates where it computes values
//! at compile time (`FUTHARK_BUGS.md`). A channel is read by the entry, so
//! every check it holds ran.

use pmx_ast::{Builtin, Span};
use pmx_lower::{Block, Callee, Expr, FnId, FunRef, Program, Type};
use rustc_hash::FxHashSet;

/// The function that joins two channels (written once at the top of the
/// generated program).
pub const JOIN: &str = "pmx_join";

/// Its definition.
pub const JOIN_DEF: &str = "def pmx_join (a: i64) (b: i64) : i64 = if a < 0 then a else if b < 0 then b else a + b";

/// Which statements use the channel: those that run a counted utest
/// (`counts` says which utests count) and, where the code keeps its
/// checks (`checked`), those that check something.
#[derive(Clone, Copy)]
pub struct Uses<'a> {
    pub counts: &'a dyn Fn(Span) -> bool,
    pub checked: bool,
}

/// The functions that use the channel (directly, or through a function
/// they call or pass to a keyword), by a fixpoint over the call graph
/// (recursive groups reach it too).
pub fn channel_functions(p: &Program, uses: Uses) -> FxHashSet<FnId> {
    pmx_lower::fixpoint(&p.functions, FxHashSet::default(), |b, set| block_uses(b, uses, set))
}

/// Whether running `b` may use the channel.
pub fn block_uses(b: &Block, uses: Uses, set: &FxHashSet<FnId>) -> bool {
    let flattened = super::body::only_flattened(b);
    let mut found = false;
    b.for_each_stmt(&mut |s| {
        found |= match &s.expr {
            Expr::Utest { .. } => (uses.counts)(s.span),
            Expr::Call(id, _) => set.contains(id),
            Expr::Map { f, .. }
            | Expr::Reduce { f, .. }
            | Expr::Foldl { f, .. }
            | Expr::Create { f, .. }
            | Expr::Derivative { f, .. }
                if fun_uses(f, set) =>
            {
                true
            }
            _ if (uses.counts)(s.span) && matches!(s.expr, Expr::SizeEq { .. }) => true,
            e => uses.checked && checks(e, &s.var.ty, flattened.contains(&s.var.id)),
        };
    });
    found
}

/// Whether a function value returns `(value, channel)`.
pub fn fun_uses(f: &FunRef, set: &FxHashSet<FnId>) -> bool {
    matches!(f.callee, Callee::Function(id) if set.contains(&id))
}

/// Whether a node (binding a value of type `ty`) has a check of its own
/// (`Writer::check`): what the writer checks, in one place.
pub fn checks(e: &Expr, ty: &Type, only_flattened: bool) -> bool {
    use Builtin::*;
    match e {
        Expr::Prim(b, _) => match b {
            Get | Set | Head | Tail | Divi | Modi | SplitAt | Subsequence | Int2char | Error => true,
            Concat | Cons | Snoc => nested(ty),
            _ => false,
        },
        Expr::Create { .. } | Expr::SizeEq { .. } | Expr::Never => true,
        Expr::Map { f, seqs } => seqs.len() > 1 || has_seq(&f.result),
        Expr::Seq(items) => items.len() > 1 && nested(ty) && !only_flattened,
        Expr::Flatten(_) => nested(ty),
        Expr::Reduce { f, .. } | Expr::Foldl { f, .. } => nested(&f.result),
        Expr::Derivative { which, f, args } => super::body::derivative_checks(*which, f, args),
        _ => false,
    }
}

/// A sequence whose elements hold sequences (whose sizes Futhark fixes).
pub fn nested(t: &Type) -> bool {
    t.elem().is_some_and(has_seq)
}

/// Whether a value of type `t` holds sequences.
pub fn has_seq(t: &Type) -> bool {
    match t {
        Type::Seq(_) => true,
        Type::Record(fields) => fields.iter().any(|(_, f)| has_seq(f)),
        _ => false,
    }
}
