//! Derivatives (`vjp`, `jvp`, `grad`) as Futhark's own: Futhark
//! differentiates the generated code (its `vjp`/`jvp` from the prelude),
//! so accelerated derivatives cost what reverse or forward mode costs
//! there. A function that uses the channel (it may fail, or counts
//! utests) returns its count beside its value: `vjp2`/`jvp2` give the
//! primal result too, whose count is this node's, and the count's
//! cotangent is 0.

use super::*;

/// The functions a derivative runs: those its function references name,
/// and what they call, transitively. Their code must be what Futhark's
/// reverse mode differentiates (`Writer::negation`).
pub(crate) fn differentiated(p: &Program) -> FxHashSet<FnId> {
    let mut work: Vec<FnId> = Vec::new();
    let mut seed = |b: &Block| {
        b.for_each_stmt(&mut |s| {
            if let Expr::Derivative { f: FunRef { callee: Callee::Function(id), .. }, .. } = &s.expr {
                work.push(*id);
            }
        })
    };
    p.functions.iter().for_each(|f| seed(&f.body));
    p.entries.iter().for_each(|e| seed(&e.body));
    let mut found = FxHashSet::default();
    while let Some(id) = work.pop() {
        if found.insert(id) {
            if let Some(f) = p.function(id) {
                pmx_lower::callees(&f.body, &mut work);
            }
        }
    }
    found
}

impl Writer<'_> {
    /// `negf x`. Futhark negates as `0 - x`, which gives 0.0 for 0.0
    /// (MExpr's `negf 0.0` is -0.0): the sign bit is flipped instead, except
    /// in code a derivative runs, which Futhark's reverse mode cannot
    /// differentiate through bits; there `-1 * x`, which keeps -0.0 (a NaN
    /// keeps its sign, which no MExpr program can observe: NaN prints as
    /// `nan`).
    pub(super) fn negation(&self, x: &str) -> String {
        if self.in_differentiated {
            format!("(-1f64 * {x})")
        } else {
            format!("(f64.from_bits (f64.to_bits {x} ^ 0x8000000000000000u64))")
        }
    }

    pub(super) fn derivative(&mut self, which: Builtin, f: &FunRef, args: &[Atom], depth: usize) -> String {
        let x = self.atom(&args[0]);
        let xt = args[0].ty();
        // Futhark's `vjp` and `jvp` are polymorphic functions: the sizes
        // of the arrays their type variables stand for must be known, and
        // alike where two arguments share one. Where arrays are involved,
        // sizes are named and the other values fitted to them, checked
        // as debug mode checks them (`pmx_cpu::ad`'s messages).
        let (x, seed) = match which {
            Builtin::Grad => (x, "1.0f64".to_string()),
            Builtin::Jvp if has_seq(&xt) => {
                let dx = self.atom(&args[1]);
                let (t, sizes) = self.named_sizes(&xt, &x, depth);
                self.check(&same_sizes(&dx, &sizes), TANGENT_SHAPE, depth);
                (fit(&x, &t), fit_checked(&dx, &t, &xt, &sizes))
            }
            _ => (x, self.atom(&args[1])),
        };
        let (fv, pairs, seed) = match which {
            // The result's sizes: those of the function's result at the
            // point.
            Builtin::Jvp if has_seq(&f.result) => {
                (self.sized_funval(f, std::slice::from_ref(&x), "1", depth), self.counting, seed)
            }
            // The result fitted to the cotangent's sizes (named after it,
            // which then has them).
            Builtin::Vjp if has_seq(&f.result) => {
                let (t, sizes) = self.named_sizes(&f.result, &seed, depth);
                (self.fitted_funval(f, &t, &sizes, COTANGENT_SHAPE), self.counting, fit(&seed, &t))
            }
            _ => (self.funval(f), self.fun_counts(f), seed),
        };
        self.shape = Shape::Plain;
        self.locate_next();
        if !pairs {
            return match which {
                Builtin::Jvp => format!("jvp {fv} {x} {seed}"),
                _ => format!("vjp {fv} {x} {seed}"),
            };
        }
        self.shape = Shape::Pair;
        let [c, d, t] = ["c", "d", "t"].map(|n| self.locals.fresh(n));
        match which {
            Builtin::Jvp => format!("(let ((_, {c}), ({t}, _)) = jvp2 {fv} {x} {seed} in ({t}, {c}))"),
            _ => format!("(let ((_, {c}), {d}) = vjp2 {fv} {x} ({seed}, 0i64) in ({d}, {c}))"),
        }
    }
}

/// Debug mode's messages (`pmx_cpu::ad`) up to their first `: `.
const TANGENT_SHAPE: &str = "jvp's tangent has another shape than the point";
const COTANGENT_SHAPE: &str = "vjp's cotangent has another shape than the function's result";

/// Whether a derivative checks sizes of its own (`channel::checks`):
/// `jvp`'s tangent against its point, `vjp`'s function's result against
/// its cotangent, where they hold arrays.
pub(crate) fn checks(which: Builtin, f: &FunRef, args: &[Atom]) -> bool {
    match which {
        Builtin::Jvp => args.first().is_some_and(|x| has_seq(&x.ty())) || has_seq(&f.result),
        Builtin::Vjp => has_seq(&f.result),
        _ => false,
    }
}
