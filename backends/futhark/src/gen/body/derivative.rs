//! Derivatives (`vjp`, `jvp`, `grad`) as Futhark's own: Futhark
//! differentiates the generated code (its `vjp`/`jvp` from the prelude),
//! so accelerated derivatives cost what reverse or forward mode costs
//! there. A function that uses the channel (it may fail, or counts
//! utests) returns its count beside its value: `vjp2`/`jvp2` give the
//! primal result too, whose count is this node's, and the count's
//! cotangent is 0.

use super::*;

impl Writer<'_> {
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
