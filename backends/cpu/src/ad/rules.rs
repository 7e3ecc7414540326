//! The differentiation rules: for each float operation, its value and its
//! partial derivatives with respect to each operand. The one table both
//! modes read (forward mode multiplies the partials by the tangents,
//! reverse mode by the adjoint).
//!
//! Conventions where a partial is not defined: `pow x y` with respect to
//! `y` at `x = 0` is 0 (the limit from the right for `y > 0`); otherwise
//! the partials are the formulas' values (`sqrt` at 0 gives an infinite
//! partial) and the modes multiply them in IEEE arithmetic, as Futhark's
//! `vjp` and `jvp` do, so that every mode gives the same numbers: a zero
//! adjoint through an infinite partial is NaN (`grad (lam x. mulf 0.
//! (sqrt x)) 0.`), as in Futhark and JAX. Values that do not depend on
//! the point are constants: they have no partials at all.

use pmx_ast::externals::Math;
use pmx_ast::Builtin;

/// A float operation with a rule: float arithmetic, and every math
/// external (`pmx_ast::externals::Math`, the one list of them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Add,
    Sub,
    Mul,
    Div,
    Neg,
    Math(Math),
}

impl Op {
    pub fn of_builtin(b: Builtin) -> Option<Op> {
        Some(match b {
            Builtin::Addf => Op::Add,
            Builtin::Subf => Op::Sub,
            Builtin::Mulf => Op::Mul,
            Builtin::Divf => Op::Div,
            Builtin::Negf => Op::Neg,
            _ => return None,
        })
    }

    pub fn of_external(name: &str) -> Option<Op> {
        Math::of_external(name).map(Op::Math)
    }

    pub fn arity(self) -> usize {
        match self {
            Op::Add | Op::Sub | Op::Mul | Op::Div => 2,
            Op::Neg => 1,
            Op::Math(m) => m.arity(),
        }
    }

    /// The value at `x` (its first `arity` operands) and the partial
    /// derivative with respect to each operand.
    pub fn apply(self, x: [f64; 2]) -> (f64, [f64; 2]) {
        let [a, b] = x;
        match self {
            Op::Add => (a + b, [1.0, 1.0]),
            Op::Sub => (a - b, [1.0, -1.0]),
            Op::Mul => (a * b, [b, a]),
            Op::Div => (a / b, [1.0 / b, -a / (b * b)]),
            Op::Neg => (-a, [-1.0, 0.0]),
            Op::Math(Math::Exp) => {
                let e = a.exp();
                (e, [e, 0.0])
            }
            Op::Math(Math::Log) => (a.ln(), [1.0 / a, 0.0]),
            Op::Math(Math::Sin) => (a.sin(), [a.cos(), 0.0]),
            Op::Math(Math::Cos) => (a.cos(), [-a.sin(), 0.0]),
            Op::Math(Math::Tan) => {
                let c = a.cos();
                (a.tan(), [1.0 / (c * c), 0.0])
            }
            Op::Math(Math::Atan) => (a.atan(), [1.0 / (1.0 + a * a), 0.0]),
            Op::Math(Math::Sqrt) => {
                let s = a.sqrt();
                (s, [0.5 / s, 0.0])
            }
            Op::Math(Math::Atan2) => {
                // atan2 y x (Miking's argument order: `externalAtan2 y x`).
                let r = a * a + b * b;
                (a.atan2(b), [b / r, -a / r])
            }
            Op::Math(Math::Pow) => {
                let v = a.powf(b);
                let da = if b == 0.0 { 0.0 } else { b * a.powf(b - 1.0) };
                let db = if a == 0.0 { 0.0 } else { v * a.ln() };
                (v, [da, db])
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Math, Op};

    /// Every rule against a central difference.
    #[test]
    fn partials_match_central_differences() {
        // Every math external: the one list of them.
        let ops = [Op::Add, Op::Sub, Op::Mul, Op::Div, Op::Neg].into_iter().chain(Math::ALL.map(Op::Math));
        let at = [0.7, 1.3];
        let h = 1e-6;
        for op in ops {
            let (_, partials) = op.apply(at);
            for i in 0..op.arity() {
                let (mut up, mut down) = (at, at);
                up[i] += h;
                down[i] -= h;
                let numeric = (op.apply(up).0 - op.apply(down).0) / (2.0 * h);
                let err = (numeric - partials[i]).abs() / numeric.abs().max(1.0);
                assert!(err < 1e-7, "{op:?} operand {i}: rule {} numeric {numeric}", partials[i]);
            }
        }
    }
}
