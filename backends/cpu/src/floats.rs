//! Float arithmetic over variables and literals (`mulf 0.2 (addf c (addf u
//! d))`) compiled to one straight-line program.
//!
//! Such a tree cannot fail, so it needs no `Result` per node, and it is
//! run by one loop over a few operations on a small stack of floats,
//! instead of one call per node. An operation with a leaf operand (a
//! variable or a literal) reads the leaf itself, on whichever side it is
//! (reading a variable has no effect, so when it is read does not
//! matter), so a tree leaning either way runs with one float in flight.
//! Each operation keeps its operands in their order.

use crate::code::{BinOp, Code};
use crate::eval::{Frame, Machine};
use crate::value::Value;

/// The most floats a program keeps at once (deeper trees are not compiled).
const DEPTH: usize = 8;

#[derive(Clone, Copy)]
enum Leaf {
    Lit(f64),
    Local(usize),
    Capture(usize),
}

#[derive(Clone, Copy)]
enum Op {
    /// Push a leaf.
    Load(Leaf),
    /// `top = top op leaf`, or `leaf op top` when reversed.
    WithLeaf(BinOp, Leaf, bool),
    /// Pop `b`; `top = top op b`.
    Pop(BinOp),
}

pub struct FloatProgram {
    ops: Box<[Op]>,
}

fn leaf(c: &Code) -> Option<Leaf> {
    match c {
        Code::Lit(Value::Float(k)) => Some(Leaf::Lit(*k)),
        Code::Local(s) => Some(Leaf::Local(*s as usize)),
        Code::Capture(i) => Some(Leaf::Capture(*i as usize)),
        _ => None,
    }
}

impl FloatProgram {
    /// The program of `c`, when it is float arithmetic (at least one
    /// operation) over variables and literals.
    pub fn compile(c: &Code) -> Option<FloatProgram> {
        if !matches!(c, Code::Bin(op, ..) if op.float_result()) {
            return None;
        }
        let mut ops = Vec::new();
        let depth = emit(c, &mut ops)?;
        (depth <= DEPTH).then(|| FloatProgram { ops: ops.into_boxed_slice() })
    }

    #[inline]
    pub fn eval(&self, m: &Machine, fr: &Frame) -> f64 {
        let read = |l: Leaf| match l {
            Leaf::Lit(k) => k,
            Leaf::Local(s) => m.stack[fr.bp + s].as_float(),
            Leaf::Capture(i) => fr.env()[i].as_float(),
        };
        // The top of the stack stays in a register (`top`); `below` holds
        // the rest, plus the meaningless `top` from before the first load.
        // `compile` checked that at most DEPTH floats are on the stack.
        let mut below = [0.0f64; DEPTH];
        let (mut n, mut top) = (0usize, 0.0f64);
        for op in self.ops.iter() {
            match *op {
                Op::Load(l) => {
                    below[n] = top;
                    n += 1;
                    top = read(l);
                }
                Op::WithLeaf(o, l, reversed) => {
                    top = if reversed { apply(o, read(l), top) } else { apply(o, top, read(l)) };
                }
                Op::Pop(o) => {
                    n -= 1;
                    top = apply(o, below[n], top);
                }
            }
        }
        top
    }
}

#[inline(always)]
fn apply(op: BinOp, a: f64, b: f64) -> f64 {
    match op {
        BinOp::Addf => a + b,
        BinOp::Subf => a - b,
        BinOp::Mulf => a * b,
        _ => a / b,
    }
}

/// Appends the operations computing `c` (leaving one float on the stack);
/// the most floats on the stack meanwhile, or `None` when `c` does not
/// fit.
fn emit(c: &Code, ops: &mut Vec<Op>) -> Option<usize> {
    if let Some(l) = leaf(c) {
        ops.push(Op::Load(l));
        return Some(1);
    }
    let Code::Bin(op, x, y, _) = c else { return None };
    if !op.float_result() {
        return None;
    }
    match (leaf(x), leaf(y)) {
        (_, Some(l)) => {
            let d = emit(x, ops)?;
            ops.push(Op::WithLeaf(*op, l, false));
            Some(d)
        }
        (Some(l), None) => {
            let d = emit(y, ops)?;
            // `l op y`: with `y` on the stack, the leaf is the left operand.
            ops.push(Op::WithLeaf(*op, l, true));
            Some(d)
        }
        (None, None) => {
            let dx = emit(x, ops)?;
            let dy = emit(y, ops)?;
            ops.push(Op::Pop(*op));
            Some(dx.max(dy + 1))
        }
    }
}
