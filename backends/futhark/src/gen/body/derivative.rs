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

    pub(super) fn derivative(&mut self, which: Builtin, f: &FunRef, args: &[Atom]) -> String {
        let counts = self.fun_counts(f);
        let fv = self.funval(f);
        let x = self.atom(&args[0]);
        let seed = match which {
            Builtin::Grad => "1.0f64".to_string(),
            _ => self.atom(&args[1]),
        };
        self.locate_next();
        if !counts {
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
