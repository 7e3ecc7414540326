//! Unboxed scalar code: arithmetic and comparisons on `Int`, `Float` and
//! `Char` compiled to closures that return the machine scalar itself.
//!
//! The operands of a built-in like `addi` have a known type, so a tree of
//! arithmetic needs no [`Value`] between its nodes: each node returns an
//! `i64` (or `f64`, `bool`) and only the root wraps its result. The common
//! leaves (literals, frame slots, captured values, globals) are read in
//! place by the parent node instead of through a call of their own.

use crate::code::{BinOp, Code};
use crate::error::Res;
use crate::eval::{Frame, Machine};
use crate::floats::FloatProgram;
use crate::value::Value;
use pmx_ast::Span;

/// Compiled code that returns `T`.
pub type Compiled<T> = Box<dyn Fn(&mut Machine, &Frame) -> Res<T> + Send + Sync>;

/// A scalar type the machine works on unboxed.
pub trait Scalar: Copy + Send + Sync + 'static {
    /// The scalar in a value (type checking guarantees its type).
    fn of(v: &Value) -> Self;
    /// Compiles code known to produce this type.
    fn code(c: Code) -> Compiled<Self>;
    /// Whether this is `i64` (the type of `Operand::LocalPlus`).
    const IS_INT: bool = false;
    /// The `Int` in `v` plus `k` (only called when `IS_INT`).
    fn plus(v: &Value, k: i64) -> Self {
        let _ = (v, k);
        unreachable!("only integers are offset")
    }
}

impl Scalar for i64 {
    const IS_INT: bool = true;

    #[inline(always)]
    fn of(v: &Value) -> i64 {
        v.as_int()
    }

    #[inline(always)]
    fn plus(v: &Value, k: i64) -> i64 {
        v.as_int().wrapping_add(k)
    }
    fn code(c: Code) -> Compiled<i64> {
        match c {
            Code::Bin(op, x, y, span) if op.int_result() => int_arith(op, operand(*x), operand(*y), span, |i| i),
            Code::TensorGet(t, index, span) => crate::thunk::tensor_get(*t, index, span, Value::into_int),
            Code::App(f, args, span) => crate::thunk::app(*f, args, span, Value::into_int),
            other => {
                let t = crate::thunk::thunk(other);
                Box::new(move |m, fr| Ok(t(m, fr)?.as_int()))
            }
        }
    }
}

impl Scalar for f64 {
    #[inline(always)]
    fn of(v: &Value) -> f64 {
        v.as_float()
    }
    fn code(c: Code) -> Compiled<f64> {
        match c {
            Code::Bin(op, x, y, span) if op.float_result() => float_bin(op, *x, *y, span, |f| f),
            Code::TensorGet(t, index, span) => crate::thunk::tensor_get(*t, index, span, Value::into_float),
            Code::App(f, args, span) => crate::thunk::app(*f, args, span, Value::into_float),
            other => {
                let t = crate::thunk::thunk(other);
                Box::new(move |m, fr| Ok(t(m, fr)?.as_float()))
            }
        }
    }
}

impl Scalar for char {
    #[inline(always)]
    fn of(v: &Value) -> char {
        v.as_char()
    }
    fn code(c: Code) -> Compiled<char> {
        let t = crate::thunk::thunk(c);
        Box::new(move |m, fr| Ok(t(m, fr)?.as_char()))
    }
}

/// An operand of a scalar operation.
pub enum Operand<T> {
    Lit(T),
    Local(usize),
    Capture(usize),
    Global(usize),
    /// `addi x k` or `subi x k` of a frame slot and a literal, as `x + k`
    /// (only for `T = i64`).
    LocalPlus(usize, i64),
    /// The same of a global (`n - 1`).
    GlobalPlus(usize, i64),
    /// The same of a captured value.
    CapturePlus(usize, i64),
    Code(Compiled<T>),
}

impl<T: Scalar> Operand<T> {
    #[inline(always)]
    pub fn eval(&self, m: &mut Machine, fr: &Frame) -> Res<T> {
        match self {
            Operand::Lit(k) => Ok(*k),
            Operand::Local(s) => Ok(T::of(&m.stack[fr.bp + s])),
            Operand::Capture(i) => Ok(T::of(&fr.env()[*i])),
            Operand::Global(g) => match m.shared.globals[*g].get() {
                Some(v) => Ok(T::of(v)),
                None => Err(m.undefined_global(*g)),
            },
            Operand::LocalPlus(s, k) => Ok(T::plus(&m.stack[fr.bp + s], *k)),
            Operand::CapturePlus(i, k) => Ok(T::plus(&fr.env()[*i], *k)),
            Operand::GlobalPlus(g, k) => match m.shared.globals[*g].get() {
                Some(v) => Ok(T::plus(v, *k)),
                None => Err(m.undefined_global(*g)),
            },
            Operand::Code(c) => c(m, fr),
        }
    }
}

pub fn operand<T: Scalar>(c: Code) -> Operand<T> {
    match c {
        Code::Lit(v) => Operand::Lit(T::of(&v)),
        Code::Local(s) => Operand::Local(s as usize),
        Code::Capture(i) => Operand::Capture(i as usize),
        Code::Global(g) => Operand::Global(g as usize),
        Code::Bin(op @ (BinOp::Addi | BinOp::Subi), x, y, span) if T::IS_INT => match (*x, *y) {
            // Wrapping subtraction is wrapping addition of the negation.
            (Code::Local(s), Code::Lit(Value::Int(k))) => {
                Operand::LocalPlus(s as usize, if op == BinOp::Addi { k } else { k.wrapping_neg() })
            }
            (Code::Global(g), Code::Lit(Value::Int(k))) => {
                Operand::GlobalPlus(g as usize, if op == BinOp::Addi { k } else { k.wrapping_neg() })
            }
            (Code::Capture(i), Code::Lit(Value::Int(k))) => {
                Operand::CapturePlus(i as usize, if op == BinOp::Addi { k } else { k.wrapping_neg() })
            }
            (x, y) => Operand::Code(T::code(Code::Bin(op, Box::new(x), Box::new(y), span))),
        },
        other => Operand::Code(T::code(other)),
    }
}

impl BinOp {
    /// The operation on two values; `None` for a division by zero (the
    /// caller reports it).
    #[inline]
    pub fn eval(self, a: &Value, b: &Value) -> Option<Value> {
        use BinOp::*;
        Some(match self {
            Addi => Value::Int(a.as_int().wrapping_add(b.as_int())),
            Subi => Value::Int(a.as_int().wrapping_sub(b.as_int())),
            Muli => Value::Int(a.as_int().wrapping_mul(b.as_int())),
            Divi | Modi => {
                let (x, y) = (a.as_int(), b.as_int());
                if y == 0 {
                    return None;
                }
                Value::Int(if self == Divi { x.wrapping_div(y) } else { x.wrapping_rem(y) })
            }
            Addf => Value::Float(a.as_float() + b.as_float()),
            Subf => Value::Float(a.as_float() - b.as_float()),
            Mulf => Value::Float(a.as_float() * b.as_float()),
            Divf => Value::Float(a.as_float() / b.as_float()),
            _ => Value::Bool(self.compare(a, b)),
        })
    }

    pub fn int_result(self) -> bool {
        matches!(self, BinOp::Addi | BinOp::Subi | BinOp::Muli | BinOp::Divi | BinOp::Modi)
    }

    pub fn float_result(self) -> bool {
        matches!(self, BinOp::Addf | BinOp::Subf | BinOp::Mulf | BinOp::Divf)
    }
}

/// Integer arithmetic, its result passed through `wrap` (to a [`Value`],
/// or kept as it is).
pub fn int_arith<R: 'static>(
    op: BinOp,
    x: Operand<i64>,
    y: Operand<i64>,
    span: Span,
    wrap: impl Fn(i64) -> R + Copy + Send + Sync + 'static,
) -> Compiled<R> {
    macro_rules! op {
        (|$a:ident, $b:ident| $e:expr) => {
            Box::new(move |m: &mut Machine, fr: &Frame| {
                let $a = x.eval(m, fr)?;
                let $b = y.eval(m, fr)?;
                Ok(wrap($e))
            })
        };
    }
    // A slot and a literal, the most common operands (`subi n 1`), read
    // without dispatching on the operand kinds.
    if let (Operand::Local(s), Operand::Lit(k)) = (&x, &y) {
        let (s, k) = (*s, *k);
        match op {
            BinOp::Addi => return Box::new(move |m, fr| Ok(wrap(m.stack[fr.bp + s].as_int().wrapping_add(k)))),
            BinOp::Subi => return Box::new(move |m, fr| Ok(wrap(m.stack[fr.bp + s].as_int().wrapping_sub(k)))),
            _ => {}
        }
    }
    match op {
        BinOp::Addi => op!(|a, b| a.wrapping_add(b)),
        BinOp::Subi => op!(|a, b| a.wrapping_sub(b)),
        BinOp::Muli => op!(|a, b| a.wrapping_mul(b)),
        BinOp::Divi | BinOp::Modi => Box::new(move |m: &mut Machine, fr: &Frame| {
            let a = x.eval(m, fr)?;
            let b = y.eval(m, fr)?;
            if b == 0 {
                return Err(m.fail("Division by zero", span));
            }
            // Truncation toward zero, as OCaml.
            Ok(wrap(if op == BinOp::Divi { a.wrapping_div(b) } else { a.wrapping_rem(b) }))
        }),
        _ => unreachable!("not integer arithmetic: {op:?}"),
    }
}

pub fn float_arith<R: 'static>(
    op: BinOp,
    x: Operand<f64>,
    y: Operand<f64>,
    wrap: impl Fn(f64) -> R + Copy + Send + Sync + 'static,
) -> Compiled<R> {
    macro_rules! op {
        (|$a:ident, $b:ident| $e:expr) => {
            Box::new(move |m: &mut Machine, fr: &Frame| {
                let $a = x.eval(m, fr)?;
                let $b = y.eval(m, fr)?;
                Ok(wrap($e))
            })
        };
    }
    match op {
        BinOp::Addf => op!(|a, b| a + b),
        BinOp::Subf => op!(|a, b| a - b),
        BinOp::Mulf => op!(|a, b| a * b),
        BinOp::Divf => op!(|a, b| a / b),
        _ => unreachable!("not float arithmetic: {op:?}"),
    }
}

/// A comparison of two scalars of type `T`.
fn compare_as<T: Scalar + PartialOrd, R: 'static>(
    op: BinOp,
    x: Code,
    y: Code,
    wrap: impl Fn(bool) -> R + Copy + Send + Sync + 'static,
) -> Compiled<R> {
    let (x, y) = (operand::<T>(x), operand::<T>(y));
    if let (Operand::Local(s), Operand::Lit(k)) = (&x, &y) {
        return compare_slot(op, *s, *k, wrap);
    }
    macro_rules! op {
        (|$a:ident, $b:ident| $e:expr) => {
            Box::new(move |m: &mut Machine, fr: &Frame| {
                let $a = x.eval(m, fr)?;
                let $b = y.eval(m, fr)?;
                Ok(wrap($e))
            })
        };
    }
    use BinOp::*;
    match op {
        Eqi | Eqf | Eqc => op!(|a, b| a == b),
        Neqi | Neqf => op!(|a, b| a != b),
        Lti | Ltf => op!(|a, b| a < b),
        Gti | Gtf => op!(|a, b| a > b),
        Leqi | Leqf => op!(|a, b| a <= b),
        Geqi | Geqf => op!(|a, b| a >= b),
        _ => unreachable!("not a comparison: {op:?}"),
    }
}

/// A comparison of a frame slot with a literal (`lti n 2`).
fn compare_slot<T: Scalar + PartialOrd, R: 'static>(
    op: BinOp,
    s: usize,
    k: T,
    wrap: impl Fn(bool) -> R + Copy + Send + Sync + 'static,
) -> Compiled<R> {
    macro_rules! op {
        (|$a:ident| $e:expr) => {
            Box::new(move |m: &mut Machine, fr: &Frame| {
                let $a = T::of(&m.stack[fr.bp + s]);
                Ok(wrap($e))
            })
        };
    }
    use BinOp::*;
    match op {
        Eqi | Eqf | Eqc => op!(|a| a == k),
        Neqi | Neqf => op!(|a| a != k),
        Lti | Ltf => op!(|a| a < k),
        Gti | Gtf => op!(|a| a > k),
        Leqi | Leqf => op!(|a| a <= k),
        Geqi | Geqf => op!(|a| a >= k),
        _ => unreachable!("not a comparison: {op:?}"),
    }
}

/// A comparison (`op.is_comparison()`), its result passed through `wrap`.
pub fn compare<R: 'static>(
    op: BinOp,
    x: Code,
    y: Code,
    wrap: impl Fn(bool) -> R + Copy + Send + Sync + 'static,
) -> Compiled<R> {
    use BinOp::*;
    match op {
        Eqi | Neqi | Lti | Gti | Leqi | Geqi => compare_as::<i64, R>(op, x, y, wrap),
        Eqf | Neqf | Ltf | Gtf | Leqf | Geqf => compare_as::<f64, R>(op, x, y, wrap),
        Eqc => compare_as::<char, R>(op, x, y, wrap),
        _ => unreachable!("not a comparison: {op:?}"),
    }
}

/// A scalar built-in of two arguments as code returning its value passed
/// through `wrap` (in tail position: the function's return).
pub fn bin<R: 'static>(
    op: BinOp,
    x: Code,
    y: Code,
    span: Span,
    wrap: impl Fn(Value) -> R + Copy + Send + Sync + 'static,
) -> Compiled<R> {
    if op.int_result() {
        int_arith(op, operand(x), operand(y), span, move |i| wrap(Value::Int(i)))
    } else if op.float_result() {
        float_bin(op, x, y, span, move |f| wrap(Value::Float(f)))
    } else {
        compare(op, x, y, move |b| wrap(Value::Bool(b)))
    }
}

/// Float arithmetic, its result passed through `wrap`: a tree of it whose
/// leaves are variables and literals becomes one [`FloatProgram`].
fn float_bin<R: 'static>(
    op: BinOp,
    x: Code,
    y: Code,
    span: Span,
    wrap: impl Fn(f64) -> R + Copy + Send + Sync + 'static,
) -> Compiled<R> {
    let c = Code::Bin(op, Box::new(x), Box::new(y), span);
    if let Some(program) = FloatProgram::compile(&c) {
        return Box::new(move |m, fr| Ok(wrap(program.eval(m, fr))));
    }
    let Code::Bin(op, x, y, _) = c else { unreachable!("built above") };
    float_arith(op, operand(*x), operand(*y), wrap)
}
