//! Closure compilation: each node of [`Code`] becomes a Rust closure that
//! evaluates it, built once. Dispatch is then an indirect call into code
//! specialised for the node (an integer addition, a call of a top-level
//! function with two arguments), instead of a walk over a tree.

use crate::code::*;
use crate::error::Res;
use crate::eval::{Args, Flow, Frame, Machine};
use crate::scalar::{compare, operand, Compiled, Operand};
use crate::value::{ConValue, Record, Seq, Value};
use pmx_ast::Span;
use rustc_hash::FxHashSet;
use std::cell::RefCell;
use std::sync::Arc;

pub fn step(s: Step) -> StepThunk {
    match s {
        Step::Define { global, slots, code } => {
            let reads = reads_of(&[&code]);
            StepThunk::Define { global, slots, code: with_frame_reads(reads, || thunk(code)) }
        }
        Step::Utest { slots, utest } => {
            let span = utest.span;
            let mut parts = vec![&utest.test, &utest.expected];
            parts.extend(utest.using.as_ref().map(|(c, _)| c));
            parts.extend(utest.on_fail.as_ref());
            let reads = reads_of(&parts);
            StepThunk::Utest { slots, span, utest: with_frame_reads(reads, || utest_thunk(*utest, None)) }
        }
        Step::Main { slots, code } => {
            let reads = reads_of(&[&code]);
            StepThunk::Main { slots, code: with_frame_reads(reads, || thunk(code)) }
        }
        // The body's last call replaced its frame (a tail call): nothing
        // called the body, so that call is the trace's last frame.
        Step::NativeMain(native) => StepThunk::Main { slots: 0, code: native_top(native) },
        Step::NativeDefine { global, native } => StepThunk::Define { global, slots: 0, code: native_top(native) },
        Step::NativeUtest { span, native } => StepThunk::Utest { slots: 0, span, utest: native_top(native) },
    }
}

/// A native function of no parameters run as a step. Its last call
/// replaced its frame (a tail call): nothing called it, so that call is
/// the trace's last frame, as where the interpreter evaluates the step.
fn native_top(native: std::sync::Arc<crate::native::Native>) -> Thunk {
    Box::new(move |m, _| {
        (native.call)(m, &[]).map_err(|mut e| {
            if let Some((name, site)) = e.tail_call.take() {
                e.add_call(&name, site);
            }
            e
        })
    })
}

fn reads_of(codes: &[&Code]) -> FxHashSet<u32> {
    let mut reads = FxHashSet::default();
    codes.iter().for_each(|c| c.collect_reads(&mut reads));
    reads
}

/// Compiles a function body (code in tail position, with a frame of its
/// own).
pub fn function_body(code: Code) -> TailThunk {
    let reads = reads_of(&[&code]);
    with_frame_reads(reads, || tail(code))
}

thread_local! {
    /// The slots read anywhere in the frame being compiled, if known.
    /// Slots are unique per variable within a frame, so a slot read
    /// anywhere is read in the body of the `let` that binds it; one walk
    /// of the frame's code answers for every `let` (see `LetValue::bind`).
    static FRAME_READS: RefCell<Option<FxHashSet<u32>>> = const { RefCell::new(None) };
}

fn with_frame_reads<T>(reads: FxHashSet<u32>, compile: impl FnOnce() -> T) -> T {
    let outer = FRAME_READS.with(|r| r.replace(Some(reads)));
    let result = compile();
    FRAME_READS.with(|r| *r.borrow_mut() = outer);
    result
}

/// Whether the frame's code reads `slot`; `body`, the code in the scope of
/// the variable, is walked only when the frame's reads are not known.
fn frame_reads(slot: u32, body: &Code) -> bool {
    FRAME_READS.with(|r| match &*r.borrow() {
        Some(reads) => reads.contains(&slot),
        None => body.reads_slot(slot),
    })
}

/// Runs compiled code, moving its value out of the returned result as two
/// words: the code just wrote it, and a 16-byte copy of a value written as
/// two words stalls (see [`Value::write_to`]).
#[inline(always)]
pub fn run(t: &Thunk, m: &mut Machine, fr: &Frame) -> Res<Value> {
    let r = std::mem::ManuallyDrop::new(t(m, fr));
    match &*r {
        // Safety: `r` is never dropped; its value moves out exactly once.
        Ok(v) => Ok(unsafe { Value::take_words(v) }),
        Err(_) => std::mem::ManuallyDrop::into_inner(r),
    }
}

fn thunks(codes: Box<[Code]>) -> Box<[Thunk]> {
    codes.into_vec().into_iter().map(thunk).collect()
}

/// Evaluates call arguments onto the value stack (a closure's frame).
#[inline(always)]
fn push_args(m: &mut Machine, fr: &Frame, args: &[Thunk]) -> Res<usize> {
    let bp = m.stack.len();
    for a in args {
        match a(m, fr) {
            Ok(v) => m.stack.push(v),
            Err(e) => {
                m.stack.truncate(bp);
                return Err(e);
            }
        }
    }
    Ok(bp)
}

fn collect_args(m: &mut Machine, fr: &Frame, args: &[Thunk]) -> Res<Args> {
    let mut argv = Args::with_capacity(args.len());
    for a in args {
        argv.push(a(m, fr)?);
    }
    Ok(argv)
}

/// A call that is not in tail position, its result passed through `out`
/// (kept a value, or unboxed where a scalar is expected).
pub fn app<R: 'static>(
    f: Code,
    args: Box<[Code]>,
    span: pmx_ast::Span,
    out: impl Fn(Value) -> R + Copy + Send + Sync + 'static,
) -> Compiled<R> {
    // Top-level functions and self-recursion: see `call.rs`.
    let (f, args) = match crate::call::known(f, args, span, out) {
        Ok(compiled) => return compiled,
        Err(parts) => parts,
    };
    let args = thunks(args);
    let f = thunk(f);
    Box::new(move |m, fr| {
        let fv = f(m, fr)?;
        if let Value::Closure(c) = &fv {
            if c.code.arity == args.len() {
                let bp = push_args(m, fr, &args)?;
                return Ok(out(m.enter(c, bp, span)?));
            }
        }
        let argv = collect_args(m, fr, &args)?;
        Ok(out(m.apply(fv, argv, span)?))
    })
}

/// A call in tail position: with exactly the callee's number of arguments
/// they are written over the current frame's parameters and the caller's
/// loop runs the callee, so tail recursion runs in constant stack.
fn tail_app(f: Code, args: Box<[Code]>, span: pmx_ast::Span) -> TailThunk {
    // Top-level functions and self-recursion: see `call.rs`.
    let (f, args) = match crate::call::known_tail(f, args, span) {
        Ok(compiled) => return compiled,
        Err(parts) => parts,
    };
    let args = thunks(args);
    let f = thunk(f);
    Box::new(move |m, fr| {
        let fv = f(m, fr)?;
        if let Value::Closure(target) = fv {
            if target.code.arity == args.len() {
                move_args(m, fr, &args)?;
                if fr.closure.is_some_and(|c| Arc::ptr_eq(c, &target)) {
                    return Ok(Flow::Again);
                }
                m.switch_to = Some((target, span));
                return Ok(Flow::Switch);
            }
            let argv = collect_args(m, fr, &args)?;
            return Ok(Flow::Tail(Box::new((Value::Closure(target), argv, span))));
        }
        let argv = collect_args(m, fr, &args)?;
        Ok(Flow::Tail(Box::new((fv, argv, span))))
    })
}

/// Evaluates a tail call's arguments and writes them over the frame's
/// parameters.
#[inline(always)]
fn move_args(m: &mut Machine, fr: &Frame, args: &[Thunk]) -> Res<()> {
    if let [a] = args {
        // One argument: evaluated before anything is overwritten.
        let v = a(m, fr)?;
        m.set_slot(fr.bp, v);
        return Ok(());
    }
    // Temporaries go above both frames' parameters, so that moving them
    // down cannot overwrite one not yet moved.
    if m.stack.len() < fr.bp + args.len() {
        m.stack.resize(fr.bp + args.len(), Value::Int(0));
    }
    let top = push_args(m, fr, args)?;
    for k in 0..args.len() {
        let v = std::mem::replace(&mut m.stack[top + k], Value::Int(0));
        m.set_slot(fr.bp + k, v);
    }
    m.stack.truncate(top);
    Ok(())
}

fn utest_thunk(u: UtestCode, body: Option<Thunk>) -> Thunk {
    let span = u.span;
    let size_constraint = u.size_constraint;
    let test = thunk(u.test);
    let expected = thunk(u.expected);
    let using = u.using.map(|(c, name)| (thunk(c), name));
    let on_fail = u.on_fail.map(thunk);
    Box::new(move |m, fr| {
        if let (Some(param), true, Some(site)) = (&size_constraint, m.checking, m.accelerate_site) {
            // A size constraint of accelerated code: checked in debug mode
            // whether utests run or not; where they run, it counts as one
            // (as it does outside debug mode, and as in Miking).
            let a = test(m, fr)?;
            let b = expected(m, fr)?;
            if a.as_int() != b.as_int() {
                return Err(m.fail(crate::checks::size_violation(param, a.as_int(), b.as_int(), span), site));
            }
            if m.shared.options.utests.includes(span) {
                m.utest(a, b, None, None, span)?;
            }
        } else if m.shared.options.utests.includes(span) {
            let a = test(m, fr)?;
            let b = expected(m, fr)?;
            let eq = match &using {
                Some((t, name)) => Some((t(m, fr)?, name.as_str())),
                None => None,
            };
            let fail = match &on_fail {
                Some(t) => Some(t(m, fr)?),
                None => None,
            };
            m.utest(a, b, eq, fail, span)?;
        }
        match &body {
            Some(b) => b(m, fr),
            None => Ok(Value::unit()),
        }
    })
}

/// Where a tensor operand lives when it can be borrowed in place.
#[derive(Clone, Copy)]
enum Place {
    Local(usize),
    Capture(usize),
}

fn place(c: &Code) -> Option<Place> {
    match c {
        Code::Local(s) => Some(Place::Local(*s as usize)),
        Code::Capture(i) => Some(Place::Capture(*i as usize)),
        _ => None,
    }
}

fn borrowed<'a>(m: &'a Machine, fr: &'a Frame, p: Place) -> &'a Value {
    match p {
        Place::Local(s) => &m.stack[fr.bp + s],
        Place::Capture(i) => &fr.closure.expect("captures only inside closures").env[i],
    }
}

/// Evaluates index operands into `buf`, or a vector when there are many.
#[inline(always)]
fn with_indices<R>(
    m: &mut Machine,
    fr: &Frame,
    index: &[Operand<i64>],
    then: impl FnOnce(&mut Machine, &[i64]) -> Res<R>,
) -> Res<R> {
    let mut buf = [0i64; 4];
    if index.len() <= buf.len() {
        for (slot, c) in buf.iter_mut().zip(index) {
            *slot = c.eval(m, fr)?;
        }
        return then(m, &buf[..index.len()]);
    }
    let mut ix = Vec::with_capacity(index.len());
    for c in index {
        ix.push(c.eval(m, fr)?);
    }
    then(m, &ix)
}

fn index_operands(index: Box<[Code]>) -> Box<[Operand<i64>]> {
    index.into_vec().into_iter().map(operand).collect()
}

/// Evaluates exactly `N` index operands (unrolled).
#[inline(always)]
fn indices_n<const N: usize>(m: &mut Machine, fr: &Frame, index: &[Operand<i64>; N]) -> Res<[i64; N]> {
    let mut ix = [0i64; N];
    for k in 0..N {
        ix[k] = index[k].eval(m, fr)?;
    }
    Ok(ix)
}

/// `tensorGetExn t [i, ..]` with an index of `N` elements and the tensor in
/// a variable: evaluated inline by the code that uses it.
pub struct GetN<const N: usize> {
    p: Place,
    index: [Operand<i64>; N],
    span: pmx_ast::Span,
}

impl<const N: usize> GetN<N> {
    fn new(p: Place, index: Box<[Operand<i64>]>, span: pmx_ast::Span) -> GetN<N> {
        let index: [Operand<i64>; N] = index.into_vec().try_into().unwrap_or_else(|_| unreachable!("N operands"));
        GetN { p, index, span }
    }

    #[inline(always)]
    fn get(&self, m: &mut Machine, fr: &Frame) -> Res<Value> {
        let ix = indices_n(m, fr, &self.index)?;
        match borrowed(m, fr, self.p).as_tensor().get(&ix) {
            Ok(v) => Ok(v),
            Err(e) => Err(m.fail(e, self.span)),
        }
    }
}

/// `tensor_get` with an index of `N` elements, the tensor in a variable.
fn tensor_get_n<const N: usize, R: 'static>(
    p: Place,
    index: Box<[Operand<i64>]>,
    span: pmx_ast::Span,
    out: impl Fn(Value) -> R + Copy + Send + Sync + 'static,
) -> Compiled<R> {
    let get = GetN::<N>::new(p, index, span);
    Box::new(move |m, fr| Ok(out(get.get(m, fr)?)))
}

/// The value of a `let`: tensor reads of rank 1 and 2 (the common ones in
/// loops) are evaluated by the `let` itself.
enum LetValue {
    Get1(GetN<1>),
    Get2(GetN<2>),
    Code(Thunk),
    /// A value the body never reads, computed for its effect only.
    Effect(Compiled<()>),
}

impl LetValue {
    /// The value of `let slot = c in body`.
    fn bind(slot: u32, c: Code, body: &Code) -> LetValue {
        if frame_reads(slot, body) {
            return LetValue::new(c);
        }
        match c {
            Code::TensorSet(parts, index, span) => LetValue::Effect(tensor_set(parts.0, parts.1, index, span, || ())),
            other => LetValue::new(other),
        }
    }

    fn new(c: Code) -> LetValue {
        if let Code::TensorGet(t, index, span) = c {
            if let (Some(p), 1 | 2) = (place(&t), index.len()) {
                let index = index_operands(index);
                return if index.len() == 1 {
                    LetValue::Get1(GetN::new(p, index, span))
                } else {
                    LetValue::Get2(GetN::new(p, index, span))
                };
            }
            return LetValue::Code(thunk(Code::TensorGet(t, index, span)));
        }
        LetValue::Code(thunk(c))
    }

    #[inline(always)]
    fn eval(&self, m: &mut Machine, fr: &Frame) -> Res<Value> {
        match self {
            LetValue::Get1(g) => g.get(m, fr),
            LetValue::Get2(g) => g.get(m, fr),
            LetValue::Code(t) => run(t, m, fr),
            LetValue::Effect(t) => {
                t(m, fr)?;
                Ok(Value::Int(0))
            }
        }
    }
}

/// `tensorGetExn t [i, ..]`: the tensor is borrowed from its slot when it
/// is a variable (no reference count traffic per access); the element is
/// passed through `out` (kept a value, or unboxed).
pub fn tensor_get<R: 'static>(
    t: Code,
    index: Box<[Code]>,
    span: pmx_ast::Span,
    out: impl Fn(Value) -> R + Copy + Send + Sync + 'static,
) -> Compiled<R> {
    let index = index_operands(index);
    if let Some(p) = place(&t) {
        match index.len() {
            1 => return tensor_get_n::<1, R>(p, index, span, out),
            2 => return tensor_get_n::<2, R>(p, index, span, out),
            3 => return tensor_get_n::<3, R>(p, index, span, out),
            _ => {}
        }
        return Box::new(move |m, fr| {
            with_indices(m, fr, &index, |m, ix| match borrowed(m, fr, p).as_tensor().get(ix) {
                Ok(v) => Ok(out(v)),
                Err(e) => Err(m.fail(e, span)),
            })
        });
    }
    let t = thunk(t);
    Box::new(move |m, fr| {
        let tv = t(m, fr)?;
        with_indices(m, fr, &index, |m, ix| match tv.as_tensor().get(ix) {
            Ok(v) => Ok(out(v)),
            Err(e) => Err(m.fail(e, span)),
        })
    })
}

/// `tensorSetExn t [i, ..] v` with `N` indices and the tensor in a variable.
fn tensor_set_n<const N: usize, R: 'static>(
    p: Place,
    v: Code,
    index: Box<[Operand<i64>]>,
    span: pmx_ast::Span,
    unit: fn() -> R,
) -> Compiled<R> {
    let index: Box<[Operand<i64>; N]> = index.try_into().unwrap_or_else(|_| unreachable!("N operands"));
    let v = match crate::floats::FloatProgram::compile(&v) {
        Some(program) => {
            // Float arithmetic on variables: computed here, in a register.
            return Box::new(move |m, fr| {
                let ix = indices_n(m, fr, &index)?;
                let x = program.eval(m, fr);
                match borrowed(m, fr, p).as_tensor().set(&ix, Value::Float(x)) {
                    Ok(()) => Ok(unit()),
                    Err(e) => Err(m.fail(e, span)),
                }
            });
        }
        None => thunk(v),
    };
    Box::new(move |m, fr| {
        let ix = indices_n(m, fr, &index)?;
        let x = v(m, fr)?;
        match borrowed(m, fr, p).as_tensor().set(&ix, x) {
            Ok(()) => Ok(unit()),
            Err(e) => Err(m.fail(e, span)),
        }
    })
}

/// `tensorSetExn t [i, ..] v`; its `()` result made by `unit` (a value,
/// or nothing where the result is not used: the shared `()` costs two
/// atomic reference count updates).
fn tensor_set<R: 'static>(t: Code, v: Code, index: Box<[Code]>, span: pmx_ast::Span, unit: fn() -> R) -> Compiled<R> {
    let index = index_operands(index);
    if let (Some(p), 1..=3) = (place(&t), index.len()) {
        return match index.len() {
            1 => tensor_set_n::<1, R>(p, v, index, span, unit),
            2 => tensor_set_n::<2, R>(p, v, index, span, unit),
            _ => tensor_set_n::<3, R>(p, v, index, span, unit),
        };
    }
    let v = thunk(v);
    if let Some(p) = place(&t) {
        return Box::new(move |m, fr| {
            with_indices(m, fr, &index, |m, ix| {
                let x = v(m, fr)?;
                let r = borrowed(m, fr, p).as_tensor().set(ix, x);
                r.map_err(|e| m.fail(e, span))?;
                Ok(unit())
            })
        });
    }
    let t = thunk(t);
    Box::new(move |m, fr| {
        let tv = t(m, fr)?;
        with_indices(m, fr, &index, |m, ix| {
            let x = v(m, fr)?;
            tv.as_tensor().set(ix, x).map_err(|e| m.fail(e, span))?;
            Ok(unit())
        })
    })
}

/// What code in a position returns: a value, or a function body's flow.
pub trait Out: 'static {
    fn of_value(v: Value) -> Self;
}

impl Out for Value {
    #[inline(always)]
    fn of_value(v: Value) -> Value {
        v
    }
}

impl Out for Flow {
    #[inline(always)]
    fn of_value(v: Value) -> Flow {
        Flow::Ret(v)
    }
}

/// A branch of an `if` or `match`: the common leaves (a variable, a
/// literal, `()`) are evaluated by the branching code itself, without a
/// call of their own.
enum Branch<T> {
    Local(usize),
    Lit(Value),
    Code(Compiled<T>),
}

impl<T: Out> Branch<T> {
    fn new(c: Code, next: fn(Code) -> Compiled<T>) -> Branch<T> {
        match c {
            Code::Local(s) => Branch::Local(s as usize),
            Code::Lit(v) => Branch::Lit(v),
            Code::Record(_, fields) if fields.is_empty() => Branch::Lit(Value::unit()),
            other => Branch::Code(next(other)),
        }
    }

    #[inline(always)]
    fn run(&self, m: &mut Machine, fr: &Frame) -> Res<T> {
        match self {
            Branch::Local(s) => Ok(T::of_value(m.stack[fr.bp + s].clone())),
            Branch::Lit(v) => Ok(T::of_value(v.clone())),
            Branch::Code(c) => c(m, fr),
        }
    }
}

/// The forms that pass control on to a sub-expression in the same
/// position (`let`, `recursive`, `if`, `match`), compiled with `next` for
/// that position: [`thunk`] or [`tail`].
fn continuation<T: Out>(code: Code, next: fn(Code) -> Compiled<T>) -> Result<Compiled<T>, Code> {
    Ok(match code {
        Code::Let(slot, value, body) => {
            // A chain of `let`s (and of `a; b`) runs in one loop instead of
            // one nested call per binding.
            let mut steps: Vec<(usize, LetValue)> = vec![(slot as usize, LetValue::bind(slot, *value, &body))];
            let mut rest = *body;
            while let Code::Let(slot, value, body) = rest {
                steps.push((slot as usize, LetValue::bind(slot, *value, &body)));
                rest = *body;
            }
            let body = next(rest);
            if steps.len() == 1 {
                let (slot, value) = steps.pop().expect("one binding");
                return Ok(Box::new(move |m, fr| {
                    let v = value.eval(m, fr)?;
                    m.set_slot(fr.bp + slot, v);
                    body(m, fr)
                }));
            }
            let steps = steps.into_boxed_slice();
            Box::new(move |m, fr| {
                for (slot, value) in steps.iter() {
                    let v = value.eval(m, fr)?;
                    m.set_slot(fr.bp + slot, v);
                }
                body(m, fr)
            })
        }
        Code::LetRec { members, cells, body } => {
            let members: Vec<(usize, Thunk)> =
                members.into_vec().into_iter().map(|(s, c)| (s as usize, thunk(c))).collect();
            let body = next(*body);
            Box::new(move |m, fr| {
                m.letrec(&members, cells, fr)?;
                body(m, fr)
            })
        }
        Code::If(op, parts) => {
            let (x, y, t, o) = *parts;
            if let (Code::Local(s), Code::Lit(Value::Int(k))) = (&x, &y) {
                // `if lti n 2`: the slot is read by the `if` itself.
                let (s, k, t, o) = (*s as usize, *k, Branch::new(t, next), Branch::new(o, next));
                macro_rules! if_slot {
                    (|$a:ident| $e:expr) => {
                        Box::new(move |m, fr| {
                            let $a = m.stack[fr.bp + s].as_int();
                            if $e {
                                t.run(m, fr)
                            } else {
                                o.run(m, fr)
                            }
                        })
                    };
                }
                return Ok(match op {
                    BinOp::Eqi => if_slot!(|a| a == k),
                    BinOp::Neqi => if_slot!(|a| a != k),
                    BinOp::Lti => if_slot!(|a| a < k),
                    BinOp::Gti => if_slot!(|a| a > k),
                    BinOp::Leqi => if_slot!(|a| a <= k),
                    _ => if_slot!(|a| a >= k),
                });
            }
            if matches!(op, BinOp::Eqi | BinOp::Neqi | BinOp::Lti | BinOp::Gti | BinOp::Leqi | BinOp::Geqi) {
                // Integer operands are read by the `if` itself.
                let (x, y) = (operand::<i64>(x), operand::<i64>(y));
                let (t, o) = (Branch::new(t, next), Branch::new(o, next));
                macro_rules! if_int {
                    (|$a:ident, $b:ident| $e:expr) => {
                        Box::new(move |m, fr| {
                            let $a = x.eval(m, fr)?;
                            let $b = y.eval(m, fr)?;
                            if $e {
                                t.run(m, fr)
                            } else {
                                o.run(m, fr)
                            }
                        })
                    };
                }
                return Ok(match op {
                    BinOp::Eqi => if_int!(|a, b| a == b),
                    BinOp::Neqi => if_int!(|a, b| a != b),
                    BinOp::Lti => if_int!(|a, b| a < b),
                    BinOp::Gti => if_int!(|a, b| a > b),
                    BinOp::Leqi => if_int!(|a, b| a <= b),
                    _ => if_int!(|a, b| a >= b),
                });
            }
            let (c, t, o) = (compare(op, x, y, |b| b), Branch::new(t, next), Branch::new(o, next));
            Box::new(move |m, fr| if c(m, fr)? { t.run(m, fr) } else { o.run(m, fr) })
        }
        Code::Match(scrutinee, pat, then, otherwise) => {
            let (s, t, o) = (thunk(*scrutinee), Branch::new(*then, next), Branch::new(*otherwise, next));
            Box::new(move |m, fr| {
                let v = s(m, fr)?;
                if m.matches(&pat, &v, fr) {
                    t.run(m, fr)
                } else {
                    o.run(m, fr)
                }
            })
        }
        other => return Err(other),
    })
}

pub fn thunk(code: Code) -> Thunk {
    let code = match continuation(code, thunk) {
        Ok(compiled) => return compiled,
        Err(code) => code,
    };
    match code {
        Code::Lit(v) => Box::new(move |_, _| Ok(v.clone())),
        Code::Local(s) => {
            let s = s as usize;
            Box::new(move |m, fr| Ok(m.stack[fr.bp + s].clone()))
        }
        Code::Capture(i) => {
            let i = i as usize;
            Box::new(move |_, fr| Ok(fr.closure.expect("captures only inside closures").env[i].clone()))
        }
        Code::Global(g) => Box::new(move |m, _| m.global(g)),
        Code::SelfClosure => Box::new(|_, fr| Ok(Value::Closure(fr.closure.expect("self inside a closure").clone()))),
        Code::Builtin(b) => Box::new(move |_, _| Ok(Value::Builtin(b))),
        Code::External(name) => Box::new(move |_, _| Ok(crate::builtins::external(&name))),
        Code::Lam(lam, sources) => Box::new(move |m, fr| Ok(m.closure(&lam, &sources, fr))),
        Code::App(f, args, span) => app(*f, args, span, |v| v),
        Code::Prim(b, args, span) => {
            let args = match crate::prim::direct(b, args, span) {
                Ok(direct) => return direct,
                Err(args) => thunks(args),
            };
            Box::new(move |m, fr| {
                let argv = collect_args(m, fr, &args)?;
                crate::builtins::call(m, b, argv, span)
            })
        }
        Code::Bin(op, x, y, span) => crate::scalar::bin(op, *x, *y, span, |v| v),
        Code::TensorGet(t, index, span) => tensor_get(*t, index, span, |v| v),
        Code::TensorSet(parts, index, span) => tensor_set(parts.0, parts.1, index, span, Value::unit),
        Code::CellGet(cell) => {
            let cell = thunk(*cell);
            Box::new(move |m, fr| match cell(m, fr)? {
                Value::Ref(r) => Ok(r.lock().unwrap_or_else(|e| e.into_inner()).clone()),
                _ => unreachable!("recursion cells are references"),
            })
        }
        Code::Seq(items, span) => {
            let items = thunks(items);
            Box::new(move |m, fr| {
                let mut values = Vec::with_capacity(items.len());
                for i in items.iter() {
                    values.push(i(m, fr)?);
                }
                let s = Value::seq(Seq::from_values(values));
                if let Some(span) = span {
                    m.check_regular(&s, span)?;
                }
                Ok(s)
            })
        }
        Code::Record(labels, fields) => {
            if fields.is_empty() {
                return Box::new(|_, _| Ok(Value::unit()));
            }
            let fields = thunks(fields);
            Box::new(move |m, fr| {
                let mut values = Vec::with_capacity(fields.len());
                for f in fields.iter() {
                    values.push(f(m, fr)?);
                }
                Ok(Value::Record(Arc::new(Record { labels: labels.clone(), values: values.into_boxed_slice() })))
            })
        }
        Code::RecordUpdate(record, updates) => {
            let record = thunk(*record);
            let updates: Vec<(pmx_ast::SmolStr, Thunk)> =
                updates.into_vec().into_iter().map(|(l, c)| (l, thunk(c))).collect();
            Box::new(move |m, fr| {
                let Value::Record(r) = record(m, fr)? else { crate::error::type_confusion("a record") };
                let mut values = r.values.to_vec();
                for (label, t) in &updates {
                    let v = t(m, fr)?;
                    if let Some(i) = r.labels.iter().position(|l| l == label) {
                        values[i] = v;
                    }
                }
                Ok(Value::Record(Arc::new(Record { labels: r.labels.clone(), values: values.into_boxed_slice() })))
            })
        }
        Code::Proj(record, label) => {
            let record = thunk(*record);
            Box::new(move |m, fr| {
                let Value::Record(r) = record(m, fr)? else { crate::error::type_confusion("a record") };
                Ok(r.get(&label).cloned().unwrap_or_else(|| crate::error::type_confusion("a record with this field")))
            })
        }
        Code::ConApp(tag, name, arg) => {
            let arg = thunk(*arg);
            Box::new(move |m, fr| {
                let a = arg(m, fr)?;
                Ok(Value::Con(Arc::new(ConValue { tag, name: name.clone(), arg: a })))
            })
        }
        Code::Never(span) => Box::new(move |m, _| Err(m.fail(never_message(span), span))),
        Code::Utest(u, body) => utest_thunk(*u, Some(thunk(*body))),
        Code::Accelerate(a) => {
            let AccelerateCode { site, args, body, span } = *a;
            match (site, body) {
                (Some(site), _) => {
                    let args: Vec<Thunk> = args.into_vec().into_iter().map(thunk).collect();
                    Box::new(move |m, fr| {
                        let mut values = crate::eval::Args::new();
                        for a in &args {
                            values.push(a(m, fr)?);
                        }
                        crate::accelerate::run_site(m, site as usize, values)
                    })
                }
                (None, body) => {
                    let body = thunk(body.unwrap_or(Code::Error(span)));
                    Box::new(move |m, fr| {
                        let saved = std::mem::replace(&mut m.accelerated, true);
                        let outer = m.accelerate_site.replace(span);
                        let r = body(m, fr);
                        m.accelerated = saved;
                        m.accelerate_site = outer;
                        r
                    })
                }
            }
        }
        Code::Error(span) => {
            Box::new(move |m, _| Err(m.fail("this part of the program has errors and cannot run", span)))
        }
        Code::Let(..) | Code::LetRec { .. } | Code::If(..) | Code::Match(..) => {
            unreachable!("compiled by `continuation`")
        }
    }
}

/// Compiles code in tail position (a function body).
pub fn tail(code: Code) -> TailThunk {
    match continuation(code, tail) {
        Ok(compiled) => compiled,
        Err(Code::App(f, args, span)) => tail_app(*f, args, span),
        // The common leaves return directly, without a nested call.
        Err(Code::Local(s)) => {
            let s = s as usize;
            Box::new(move |m, fr| Ok(Flow::Ret(m.stack[fr.bp + s].clone())))
        }
        Err(Code::Lit(v)) => Box::new(move |_, _| Ok(Flow::Ret(v.clone()))),
        Err(Code::Bin(op, x, y, span)) => crate::scalar::bin(op, *x, *y, span, Flow::Ret),
        Err(other) => {
            let t = thunk(other);
            Box::new(move |m, fr| Ok(Flow::Ret(t(m, fr)?)))
        }
    }
}

/// What reaching `never` at `span` reports. The parser gives the `never`
/// it writes for `match .. in` and `switch` the span of the whole
/// construct; one written in the source spans its five letters, and no
/// match failed there.
pub fn never_message(span: Span) -> &'static str {
    if span.end - span.start == "never".len() as u32 {
        "Reached a never term, which should be impossible"
    } else {
        "Reached a never term, which should be impossible (no pattern matched)"
    }
}
