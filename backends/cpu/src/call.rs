//! Calls whose callee is known by where it lives: a top-level function
//! (a global) or the running closure itself (local self-recursion).
//!
//! These are most of the calls a program makes, so they get code
//! specialised for their number of arguments: the arguments are evaluated
//! into a fixed-size array (the simple ones, a slot or `n - 1`, read in
//! place instead of through a call of their own), copied straight into
//! the callee's frame, and the callee is entered without cloning it. A
//! callee that turns out not to be a closure of that arity (a global bound
//! to a partial application, say) takes the general path of `apply`.

use crate::code::{BinOp, Code, Thunk};
use crate::error::Res;
use crate::eval::{Args, Flow, Frame, Machine};
use crate::scalar::Compiled;
use crate::value::{Closure, Value};
use pmx_ast::Span;
use std::sync::Arc;

/// A call argument.
pub enum Arg {
    Lit(Value),
    Local(usize),
    Capture(usize),
    /// `addi x k` or `subi x k` of a frame slot and a literal, as `x + k`.
    LocalPlus(usize, i64),
    Code(Thunk),
}

impl Arg {
    pub fn new(c: Code) -> Arg {
        match c {
            Code::Lit(v) => Arg::Lit(v),
            Code::Local(s) => Arg::Local(s as usize),
            Code::Capture(i) => Arg::Capture(i as usize),
            Code::Bin(op @ (BinOp::Addi | BinOp::Subi), x, y, span) => match (*x, *y) {
                (Code::Local(s), Code::Lit(Value::Int(k))) => {
                    // Wrapping subtraction is wrapping addition of the negation.
                    Arg::LocalPlus(s as usize, if op == BinOp::Addi { k } else { k.wrapping_neg() })
                }
                (x, y) => Arg::Code(crate::thunk::thunk(Code::Bin(op, Box::new(x), Box::new(y), span))),
            },
            other => Arg::Code(crate::thunk::thunk(other)),
        }
    }

    #[inline(always)]
    pub fn eval(&self, m: &mut Machine, fr: &Frame) -> Res<Value> {
        match self {
            Arg::Lit(v) => Ok(v.clone()),
            Arg::Local(s) => Ok(m.stack[fr.bp + s].clone()),
            Arg::Capture(i) => Ok(fr.env()[*i].clone()),
            Arg::LocalPlus(s, k) => Ok(Value::Int(m.stack[fr.bp + s].as_int().wrapping_add(*k))),
            Arg::Code(t) => crate::thunk::run(t, m, fr),
        }
    }
}

fn args_array<const N: usize>(args: Box<[Code]>) -> [Arg; N] {
    let args: Vec<Arg> = args.into_vec().into_iter().map(Arg::new).collect();
    args.try_into().unwrap_or_else(|_| unreachable!("N arguments"))
}

/// A fixed number of arguments, evaluated left to right before any is
/// stored (unrolled: an array filled in a loop needs placeholder values
/// whose drops the compiler does not remove).
trait ArgList: Send + Sync + 'static {
    const N: usize;
    /// Pushes the values (a new frame's parameters).
    fn push(&self, m: &mut Machine, fr: &Frame) -> Res<()>;
    /// Writes the values over the running frame's parameters.
    fn store(&self, m: &mut Machine, fr: &Frame) -> Res<()>;
    fn all(&self) -> &[Arg];
}

macro_rules! arg_list {
    ($n:literal, $($v:ident),+) => {
        impl ArgList for [Arg; $n] {
            const N: usize = $n;
            #[inline(always)]
            fn push(&self, m: &mut Machine, fr: &Frame) -> Res<()> {
                // Room first: a value pushed right after it is computed
                // stays in registers (a push that may grow the stack makes
                // the value wait in memory, and reading it back stalls).
                // Evaluating the arguments leaves the length as it was and
                // never shrinks the capacity, so the room is still there.
                m.stack.reserve($n);
                let [$($v),+] = self;
                $(let $v = $v.eval(m, fr)?;)+
                $(push_reserved(m, $v);)+
                Ok(())
            }
            #[inline(always)]
            fn store(&self, m: &mut Machine, fr: &Frame) -> Res<()> {
                let [$($v),+] = self;
                $(let $v = $v.eval(m, fr)?;)+
                let mut k = fr.bp;
                $(set_param(m, k, $v); k += 1;)+
                let _ = k;
                Ok(())
            }
            fn all(&self) -> &[Arg] {
                self
            }
        }
    };
}

arg_list!(1, a);
arg_list!(2, a, b);
arg_list!(3, a, b, c);
arg_list!(4, a, b, c, d);
arg_list!(5, a, b, c, d, e);
arg_list!(6, a, b, c, d, e, f);

fn collect(m: &mut Machine, fr: &Frame, args: &[Arg]) -> Res<Args> {
    let mut argv = Args::with_capacity(args.len());
    for a in args {
        argv.push(a.eval(m, fr)?);
    }
    Ok(argv)
}

/// Where a known callee lives.
trait Callee: Copy + Send + Sync + 'static {
    /// Whether the callee is always the running closure (a tail call of it
    /// is then always a loop).
    const RUNNING: bool = false;
    /// The callee when it is a closure of `arity` parameters.
    fn closure<'a>(self, m: &Machine, fr: &'a Frame, arity: usize) -> Option<&'a Arc<Closure>>;
    /// The callee as a value, for the general path.
    fn value(self, m: &Machine, fr: &Frame) -> Res<Value>;
}

#[derive(Clone, Copy)]
struct Global(usize);

impl Callee for Global {
    #[inline(always)]
    fn closure<'a>(self, m: &Machine, _: &'a Frame, arity: usize) -> Option<&'a Arc<Closure>> {
        // Safety: globals are set once and never replaced, and the shared
        // state that holds them outlives the frame (the machine keeps it
        // alive for the whole run), so the borrow outlives `'a`.
        let shared: *const crate::eval::Shared = &*m.shared;
        match unsafe { (*shared).globals[self.0].get() } {
            Some(Value::Closure(c)) if c.code.arity == arity => Some(c),
            _ => None,
        }
    }

    fn value(self, m: &Machine, _: &Frame) -> Res<Value> {
        m.global(self.0 as u32)
    }
}

#[derive(Clone, Copy)]
struct SelfClosure;

impl Callee for SelfClosure {
    const RUNNING: bool = true;

    #[inline(always)]
    fn closure<'a>(self, _: &Machine, fr: &'a Frame, arity: usize) -> Option<&'a Arc<Closure>> {
        let c = fr.closure.expect("self inside a closure");
        (c.code.arity == arity).then_some(c)
    }

    fn value(self, _: &Machine, fr: &Frame) -> Res<Value> {
        Ok(Value::Closure(fr.closure.expect("self inside a closure").clone()))
    }
}

/// A call of a known callee not in tail position, or `Err` with the parts
/// back when the callee is not a global or the running closure.
pub fn known<R: 'static>(
    f: Code,
    args: Box<[Code]>,
    span: Span,
    out: impl Fn(Value) -> R + Copy + Send + Sync + 'static,
) -> Result<Compiled<R>, (Code, Box<[Code]>)> {
    match f {
        Code::Global(g) => Ok(by_arity(Global(g as usize), args, span, out)),
        Code::SelfClosure => Ok(by_arity(SelfClosure, args, span, out)),
        f => Err((f, args)),
    }
}

fn by_arity<C: Callee, R: 'static>(
    callee: C,
    args: Box<[Code]>,
    span: Span,
    out: impl Fn(Value) -> R + Copy + Send + Sync + 'static,
) -> Compiled<R> {
    match args.len() {
        1 => call_n::<[Arg; 1], C, R>(callee, args_array(args), span, out),
        2 => call_n::<[Arg; 2], C, R>(callee, args_array(args), span, out),
        3 => call_n::<[Arg; 3], C, R>(callee, args_array(args), span, out),
        4 => call_n::<[Arg; 4], C, R>(callee, args_array(args), span, out),
        5 => call_n::<[Arg; 5], C, R>(callee, args_array(args), span, out),
        6 => call_n::<[Arg; 6], C, R>(callee, args_array(args), span, out),
        _ => {
            let args: Box<[Arg]> = args.into_vec().into_iter().map(Arg::new).collect();
            Box::new(move |m, fr| {
                if let Some(c) = callee.closure(m, fr, args.len()) {
                    let bp = m.stack.len();
                    for a in args.iter() {
                        match a.eval(m, fr) {
                            Ok(v) => m.stack.push(v),
                            Err(e) => {
                                m.stack.truncate(bp);
                                return Err(e);
                            }
                        }
                    }
                    return Ok(out(m.enter(c, bp, span)?));
                }
                let fv = callee.value(m, fr)?;
                let argv = collect(m, fr, &args)?;
                Ok(out(m.apply(fv, argv, span)?))
            })
        }
    }
}

fn call_n<A: ArgList, C: Callee, R: 'static>(
    callee: C,
    args: A,
    span: Span,
    out: impl Fn(Value) -> R + Copy + Send + Sync + 'static,
) -> Compiled<R> {
    Box::new(move |m, fr| {
        if let Some(c) = callee.closure(m, fr, A::N) {
            let bp = m.stack.len();
            args.push(m, fr)?;
            return m.enter_as(c, bp, span, out);
        }
        let fv = callee.value(m, fr)?;
        let argv = collect(m, fr, args.all())?;
        Ok(out(m.apply(fv, argv, span)?))
    })
}

/// A call of a known callee in tail position (see `thunk::tail_app`).
pub fn known_tail(f: Code, args: Box<[Code]>, span: Span) -> Result<crate::code::TailThunk, (Code, Box<[Code]>)> {
    match f {
        Code::Global(g) => Ok(tail_by_arity(Global(g as usize), args, span)),
        Code::SelfClosure => Ok(tail_by_arity(SelfClosure, args, span)),
        f => Err((f, args)),
    }
}

fn tail_by_arity<C: Callee>(callee: C, args: Box<[Code]>, span: Span) -> crate::code::TailThunk {
    match args.len() {
        1 => tail_n::<[Arg; 1], C>(callee, args_array::<1>(args), span),
        2 => tail_n::<[Arg; 2], C>(callee, args_array::<2>(args), span),
        3 => tail_n::<[Arg; 3], C>(callee, args_array::<3>(args), span),
        4 => tail_n::<[Arg; 4], C>(callee, args_array::<4>(args), span),
        5 => tail_n::<[Arg; 5], C>(callee, args_array::<5>(args), span),
        6 => tail_n::<[Arg; 6], C>(callee, args_array::<6>(args), span),
        _ => {
            let args: Box<[Arg]> = args.into_vec().into_iter().map(Arg::new).collect();
            Box::new(move |m, fr| {
                if let Some(c) = callee.closure(m, fr, args.len()) {
                    // The values go above both frames' parameters first, so
                    // that moving them down overwrites none not yet read.
                    if m.stack.len() < fr.bp + args.len() {
                        m.stack.resize(fr.bp + args.len(), Value::Int(0));
                    }
                    let top = m.stack.len();
                    for a in args.iter() {
                        match a.eval(m, fr) {
                            Ok(v) => m.stack.push(v),
                            Err(e) => {
                                m.stack.truncate(top);
                                return Err(e);
                            }
                        }
                    }
                    for k in 0..args.len() {
                        let v = std::mem::replace(&mut m.stack[top + k], Value::Int(0));
                        m.set_slot(fr.bp + k, v);
                    }
                    m.stack.truncate(top);
                    return Ok(switch(m, fr, c, span));
                }
                let argv = collect(m, fr, &args)?;
                Ok(Flow::Tail(Box::new((callee.value(m, fr)?, argv, span))))
            })
        }
    }
}

fn tail_n<A: ArgList, C: Callee>(callee: C, args: A, span: Span) -> crate::code::TailThunk {
    Box::new(move |m, fr| {
        if let Some(c) = callee.closure(m, fr, A::N) {
            // All arguments are evaluated before any parameter is
            // overwritten: they may read the parameters.
            args.store(m, fr)?;
            if C::RUNNING {
                return Ok(Flow::Again);
            }
            return Ok(switch(m, fr, c, span));
        }
        let fv = callee.value(m, fr)?;
        let argv = collect(m, fr, args.all())?;
        Ok(Flow::Tail(Box::new((fv, argv, span))))
    })
}

/// Pushes a value where room was reserved.
#[inline(always)]
fn push_reserved(m: &mut Machine, v: Value) {
    let len = m.stack.len();
    assert!(len < m.stack.capacity());
    // Safety: the slot at `len` is within the capacity (checked above) and
    // unused; it is written before the length covers it.
    unsafe {
        v.write_to(m.stack.as_mut_ptr().add(len));
        m.stack.set_len(len + 1);
    }
}

/// Writes a tail call's argument over a parameter slot; the frame has at
/// least as many slots as the caller has parameters, and the callee's
/// frame is grown by `enter` when it needs more.
#[inline(always)]
fn set_param(m: &mut Machine, i: usize, v: Value) {
    if i < m.stack.len() {
        m.set_slot(i, v);
    } else {
        m.stack.push(v);
    }
}

/// The flow of a tail call whose arguments are in place.
#[inline(always)]
fn switch(m: &mut Machine, fr: &Frame, c: &Arc<Closure>, span: Span) -> Flow {
    if fr.closure.is_some_and(|me| Arc::ptr_eq(me, c)) {
        Flow::Again
    } else {
        m.switch_to = Some((c.clone(), span));
        Flow::Switch
    }
}
