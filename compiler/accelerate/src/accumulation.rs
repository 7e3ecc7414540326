//! The operators of an accumulation (issue 30): a read-modify-write of one
//! cell (`op (get c i) v` written back to `c i`) whose result is the same
//! in every order of the updates (up to rounding for floats), because the
//! operator is associative and commutative.
//!
//! One table for every place that recognises one: CUDA-class parallel
//! loops (`pmx_lower::accumulate`, on the lowered IR), Futhark-class folds
//! over a sequence accumulator (`rewrite/hist.rs` for classification,
//! `pmx_lower::hist` for the generator). It lives here, below both crates,
//! because `pmx-lower` depends on this crate. `maxi` and `mini` are
//! functions of the standard library (`std/int.mc`), known by their
//! definitions where each tree is looked at (`rewrite/assoc.rs` on the
//! AST, `pmx_lower::accumulate::max_or_min` on the IR), not by name.

use pmx_ast::{Builtin, Lit};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Addi,
    Addf,
    Muli,
    Mulf,
    Maxi,
    Mini,
}

impl Op {
    /// Its name in MExpr and in the CUDA prelude's atomic updates.
    pub fn name(self) -> &'static str {
        match self {
            Op::Addi => "addi",
            Op::Addf => "addf",
            Op::Muli => "muli",
            Op::Mulf => "mulf",
            Op::Maxi => "maxi",
            Op::Mini => "mini",
        }
    }

    /// The operator a built-in is (`maxi` and `mini` are not built-ins).
    pub fn of_builtin(b: Builtin) -> Option<Op> {
        Some(match b {
            Builtin::Addi => Op::Addi,
            Builtin::Addf => Op::Addf,
            Builtin::Muli => Op::Muli,
            Builtin::Mulf => Op::Mulf,
            _ => return None,
        })
    }

    /// Its operands are floats: another order of the updates may round
    /// differently.
    pub fn float(self) -> bool {
        matches!(self, Op::Addf | Op::Mulf)
    }

    /// Its neutral element: what a parallel version starts each partial
    /// result from (Futhark's `reduce_by_index` needs one).
    pub fn neutral(self) -> Lit {
        match self {
            Op::Addi => Lit::Int(0),
            Op::Addf => Lit::Float(0.0),
            Op::Muli => Lit::Int(1),
            Op::Mulf => Lit::Float(1.0),
            Op::Maxi => Lit::Int(i64::MIN),
            Op::Mini => Lit::Int(i64::MAX),
        }
    }
}
