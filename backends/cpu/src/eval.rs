//! The machine that runs compiled code (see `thunk.rs`).
//!
//! Each call's frame is a window of the value stack (parameters first).
//! Calls in tail position do not grow the Rust stack: the function body
//! returns the call to make and `enter` loops, reusing the frame. A
//! non-tail recursion deeper than the thread's stack allows ends in a
//! "stack overflow" error.

use crate::code::*;
use crate::error::{Fail, Res, RuntimeError};
use crate::value::*;
use crate::Options;
use pmx_ast::Span;
use smallvec::SmallVec;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

pub type Args = SmallVec<[Value; 4]>;

/// What every machine of one run shares: the program, globals, options and
/// the utest tally.
pub struct Shared {
    pub program: Program,
    pub globals: Box<[OnceLock<Value>]>,
    pub options: Options,
    pub tests: Mutex<TestTally>,
    /// Whether the program has run `unsafeCoerce`: after that, a value of
    /// the wrong type is the program's fault, not a bug in pmx.
    pub coerced: AtomicBool,
    /// The accelerate sites, by index (`accelerate.rs`).
    pub sites: Vec<crate::accelerate::Site>,
}

impl Shared {
    pub fn new(program: Program, options: Options, sites: Vec<crate::accelerate::Site>) -> Shared {
        let globals = (0..program.globals).map(|_| OnceLock::new()).collect();
        Shared {
            program,
            globals,
            options,
            tests: Mutex::new(TestTally::default()),
            coerced: AtomicBool::new(false),
            sites,
        }
    }

    pub fn coerced(&self) -> bool {
        self.coerced.load(Ordering::Relaxed)
    }
}

#[derive(Default)]
pub struct TestTally {
    pub passed: usize,
    pub failed: usize,
}

pub struct Frame<'a> {
    pub bp: usize,
    pub closure: Option<&'a Arc<Closure>>,
}

impl Frame<'_> {
    /// The values captured by the running closure.
    #[inline(always)]
    pub fn env(&self) -> &[Value] {
        &self.closure.expect("captures only inside closures").env
    }
}

/// How a function body ends.
pub enum Flow {
    Ret(Value),
    /// A tail call of the running closure; the arguments are in place.
    Again,
    /// A tail call of another closure with exactly its number of arguments,
    /// which are in place at the frame's base; the closure and the call's
    /// site are in [`Machine::switch_to`].
    Switch,
    /// Any other tail call (rare: boxed to keep `Flow` small).
    Tail(Box<(Value, Args, Span)>),
}

// `Res<Flow>` fits in two registers, so function bodies return it without
// going through memory (a 16-byte value written as two words and read back
// as one stalls the load).
const _: () = assert!(std::mem::size_of::<Res<Flow>>() == 16);
const _: () = assert!(std::mem::size_of::<Res<Value>>() == 16);
// `Value::write_to` moves a value as two words.
const _: () = assert!(std::mem::size_of::<Value>() == 16);

/// One thread of evaluation.
pub struct Machine {
    pub shared: Arc<Shared>,
    pub(crate) stack: Vec<Value>,
    /// The lowest address the stack may grow to before a call fails.
    stack_limit: usize,
    /// Inside an `accelerate` expression.
    pub accelerated: bool,
    /// The innermost `accelerate` expression being evaluated.
    pub accelerate_site: Option<Span>,
    /// Debug mode inside Futhark-class accelerated code: every nested
    /// sequence made must be regular, as a Futhark array is
    /// ([`Machine::check_regular`]).
    pub regular: bool,
    /// Debug mode's checks and order inside accelerated code: in a debug
    /// run, and while a native engine's failure is diagnosed by running
    /// the binding again here ([`crate::accelerate::diagnose`]).
    pub checking: bool,
    /// The callee and site of the tail call a body returned `Flow::Switch` for.
    pub(crate) switch_to: Option<(Arc<Closure>, Span)>,
    /// While `--check-order` runs a loop: the cells (storage, position)
    /// that float accumulations wrote (`builtins/order.rs`).
    pub(crate) accumulated: Option<rustc_hash::FxHashSet<(usize, usize)>>,
}

/// Below this much stack left, a call fails instead of overflowing.
const STACK_RESERVE: usize = 256 * 1024;

/// The current stack address (approximately: the address of a local).
#[inline(always)]
fn stack_address() -> usize {
    let marker = 0u8;
    std::hint::black_box(&marker) as *const u8 as usize
}

impl Machine {
    /// The lowest stack address this thread's code may use before a call
    /// is a "recursion too deep" error: native code checks against it too.
    pub fn stack_limit(&self) -> usize {
        self.stack_limit
    }

    pub fn new(shared: Arc<Shared>) -> Machine {
        let here = stack_address();
        let stack_limit = match stacker::remaining_stack() {
            Some(left) => here.saturating_sub(left) + STACK_RESERVE,
            None => 0,
        };
        let shared_debug = shared.options.debug;
        Machine {
            shared,
            stack: Vec::with_capacity(1024),
            stack_limit,
            accelerated: false,
            accelerate_site: None,
            regular: false,
            checking: shared_debug,
            switch_to: None,
            accumulated: None,
        }
    }

    /// An error at `span`. The calls that led there are added as it
    /// unwinds through them (see [`Machine::enter`]), so that calls that
    /// succeed record nothing.
    #[cold]
    pub fn fail(&self, message: impl Into<String>, span: Span) -> Fail {
        Box::new(RuntimeError::new(message.into(), span))
    }

    /// In Futhark-class code in debug mode: the sequence `s` just made at
    /// `span` is regular (its elements all have the layout of the first,
    /// `checks::layout`), as the native code assumes and checks there.
    #[inline]
    pub fn check_regular(&self, s: &Value, span: Span) -> crate::error::Res<()> {
        if !self.regular {
            return Ok(());
        }
        crate::checks::elements_alike(s).map_err(|e| self.fail(e, span))
    }

    /// In Futhark-class code in debug mode: `x`, about to join the
    /// elements of `s` (`cons`, `snoc`, `concat`, `set`), has their layout.
    #[inline]
    pub fn check_joins(&self, x: &Value, s: &Value, span: Span) -> crate::error::Res<()> {
        if !self.regular {
            return Ok(());
        }
        crate::checks::joins(x, s).map_err(|e| self.fail(e, span))
    }

    /// Writes a value into a stack slot; an old scalar needs no drop.
    #[inline(always)]
    pub(crate) fn set_slot(&mut self, i: usize, v: Value) {
        let slot = &mut self.stack[i];
        if slot.is_scalar() {
            // Safety: the old value owns nothing, so overwriting it without
            // a drop is dropping it; `slot` is a valid, aligned value.
            unsafe { v.write_to(slot) };
        } else {
            *slot = v;
        }
    }

    /// Writes a value into a stack slot as two words, dropping the old
    /// one after: a pattern's binders are written right after the value is
    /// cloned in two halves, and a 16-byte store of it stalled on reading
    /// those halves back (most of the time of matching a tuple pattern).
    #[inline(always)]
    pub(crate) fn replace_slot(&mut self, i: usize, v: Value) {
        let slot: *mut Value = &mut self.stack[i];
        // Safety: `slot` is a valid, aligned value of the stack; the old
        // value moves out before the new one moves in, and is dropped once.
        let old = unsafe {
            let old = Value::take_words(slot);
            v.write_to(slot);
            old
        };
        drop(old);
    }

    /// Pushes a value moved as two words (see [`Value::write_to`]).
    #[inline(always)]
    pub(crate) fn push_word_wise(&mut self, v: Value) {
        self.stack.reserve(1);
        let len = self.stack.len();
        // Safety: `reserve` made room for the slot at `len`, which is
        // written before the length covers it.
        unsafe {
            v.write_to(self.stack.as_mut_ptr().add(len));
            self.stack.set_len(len + 1);
        }
    }

    pub fn run_step(&mut self, step: &StepThunk) -> Res<Option<Value>> {
        match step {
            StepThunk::Define { global, slots, code } => {
                let v = self.run_top(*slots, code)?;
                let _ = self.shared.globals[*global as usize].set(v);
                Ok(None)
            }
            StepThunk::Utest { slots, span, utest } => {
                if self.shared.options.utests.includes(*span) {
                    self.run_top(*slots, utest)?;
                }
                Ok(None)
            }
            StepThunk::Main { slots, code } => self.run_top(*slots, code).map(Some),
        }
    }

    fn run_top(&mut self, slots: usize, code: &Thunk) -> Res<Value> {
        let bp = self.stack.len();
        self.stack.resize(bp + slots, Value::Int(0));
        let r = code(self, &Frame { bp, closure: None });
        self.pop_frame(bp);
        r
    }

    /// Drops a frame's values; scalars need no destructor call.
    #[inline(always)]
    pub(crate) fn pop_frame(&mut self, bp: usize) {
        if self.stack.len() <= bp {
            return;
        }
        if self.stack[bp..].iter().all(Value::is_scalar) {
            // Safety: the values above `bp` own nothing (`is_scalar`), so
            // forgetting them is dropping them, and `bp` is below the
            // length.
            unsafe { self.stack.set_len(bp) };
        } else {
            self.stack.truncate(bp);
        }
    }

    /// The value of the program's top-level binding `id`, where it is
    /// (globals never change once defined), or the error of a use before
    /// its definition.
    pub fn global_by_name(&self, id: pmx_ast::NameId) -> Res<&Value> {
        let g = *self.shared.program.global_ids.get(&id).ok_or_else(|| {
            self.fail("internal error: a top-level value native code reads is not a global", Span::BUILTIN)
        })?;
        self.shared.globals[g as usize].get().ok_or_else(|| self.undefined_global(g as usize))
    }

    pub(crate) fn global(&self, g: u32) -> Res<Value> {
        match self.shared.globals[g as usize].get() {
            Some(v) => Ok(v.clone()),
            None => Err(self.undefined_global(g as usize)),
        }
    }

    #[cold]
    pub(crate) fn undefined_global(&self, g: usize) -> Fail {
        self.fail(format!("`{}` is used before it is defined", self.shared.program.global_names[g]), Span::BUILTIN)
    }

    /// Runs a closure whose arguments are on the stack from `bp`. Tail
    /// calls with exactly the callee's number of arguments reuse the frame.
    /// An error leaving the call records it in the error's trace.
    #[inline(always)]
    pub(crate) fn enter(&mut self, c: &Arc<Closure>, bp: usize, span: Span) -> Res<Value> {
        self.enter_as(c, bp, span, |v| v)
    }

    /// [`Machine::enter`] with the result passed through `out` as soon as
    /// the body returns it: an unboxed scalar result is then read from
    /// where the body wrote it and kept in a register, instead of being
    /// copied as a value first.
    #[inline(always)]
    pub(crate) fn enter_as<R>(&mut self, c: &Arc<Closure>, bp: usize, span: Span, out: impl Fn(Value) -> R) -> Res<R> {
        // A panic inside the call is reported at its site, the innermost
        // source location known.
        let _locate = crate::error::Locate(span);
        if stack_address() < self.stack_limit {
            return Err(self.overflow(bp, span));
        }
        let top = bp + c.code.slots;
        if self.stack.len() < top {
            self.grow_frame(top);
        }
        let result = std::mem::ManuallyDrop::new((c.code.body)(self, &Frame { bp, closure: Some(c) }));
        if let Ok(Flow::Ret(v)) = &*result {
            // Safety: `result` is never dropped; its value moves out here
            // exactly once (read as two words: the body just wrote it).
            let r = out(unsafe { Value::take_words(v) });
            self.pop_frame(bp);
            return Ok(r);
        }
        self.enter_loop(c, bp, span, std::mem::ManuallyDrop::into_inner(result)).map(out)
    }

    #[cold]
    #[inline(never)]
    fn overflow(&mut self, bp: usize, span: Span) -> Fail {
        self.pop_frame(bp);
        self.fail("stack overflow: the recursion is too deep", span)
    }

    /// Room for a frame's locals (its parameters are pushed already).
    #[inline(never)]
    fn grow_frame(&mut self, top: usize) {
        self.stack.resize(top, Value::Int(0));
    }

    /// The rest of [`Machine::enter`] after the body's first run: tail
    /// calls, errors and calls of other values.
    fn enter_loop(&mut self, c: &Arc<Closure>, bp: usize, span: Span, first: Res<Flow>) -> Res<Value> {
        let mut owned: Option<Arc<Closure>> = None;
        // The call the trace shows: after a tail call, the callee at the
        // tail call's site (the caller's frame is gone).
        let mut site = span;
        let mut result = first;
        loop {
            match result {
                Ok(Flow::Again) => {}
                Ok(Flow::Switch) => {
                    let (next, s) = self.switch_to.take().expect("a switch names its callee");
                    let top = bp + next.code.slots;
                    if self.stack.len() < top {
                        self.stack.resize(top, Value::Int(0));
                    }
                    site = s;
                    owned = Some(next);
                }
                Ok(Flow::Ret(v)) => {
                    self.pop_frame(bp);
                    return Ok(v);
                }
                Ok(Flow::Tail(call)) => {
                    self.pop_frame(bp);
                    let (g, args, s) = *call;
                    return self.apply(g, args, s);
                }
                Err(mut e) => {
                    self.pop_frame(bp);
                    e.add_call(&owned.as_ref().unwrap_or(c).code.name, site);
                    return Err(e);
                }
            }
            let current = owned.as_ref().unwrap_or(c);
            result = (current.code.body)(self, &Frame { bp, closure: Some(current) });
        }
    }

    pub(crate) fn letrec(&mut self, members: &[(usize, Thunk)], cells: bool, fr: &Frame) -> Res<()> {
        if !cells {
            for (slot, value) in members {
                let v = value(self, fr)?;
                self.set_slot(fr.bp + *slot, v);
            }
            return Ok(());
        }
        let cells: Vec<Arc<Mutex<Value>>> = members
            .iter()
            .map(|(slot, _)| {
                let cell = Arc::new(Mutex::new(Value::unit()));
                self.stack[fr.bp + *slot] = Value::Ref(cell.clone());
                cell
            })
            .collect();
        for ((_, value), cell) in members.iter().zip(cells) {
            let v = value(self, fr)?;
            *cell.lock().unwrap_or_else(|e| e.into_inner()) = v;
        }
        Ok(())
    }

    pub(crate) fn closure(&self, lam: &Arc<LamCode>, sources: &[Source], fr: &Frame) -> Value {
        let env: Box<[Value]> = sources
            .iter()
            .map(|s| match s {
                Source::Local(slot) => self.stack[fr.bp + *slot as usize].clone(),
                Source::Capture(i) => fr.closure.expect("captures only inside closures").env[*i as usize].clone(),
                Source::SelfClosure => Value::Closure(fr.closure.expect("self inside a closure").clone()),
            })
            .collect();
        // Safety: the code belongs to the program in `shared`, which
        // outlives every value of this run (see `Closure`).
        let code: &'static LamCode = unsafe { &*Arc::as_ptr(lam) };
        Value::Closure(Arc::new(Closure { code, env }))
    }

    /// Applies a function value to one argument: a closure of one
    /// parameter is entered directly, without an argument vector.
    #[inline]
    pub fn call1(&mut self, f: &Value, a: Value, span: Span) -> Res<Value> {
        if let Value::Closure(c) = f {
            if c.code.arity == 1 {
                let bp = self.stack.len();
                self.push_word_wise(a);
                return self.enter(c, bp, span);
            }
        }
        self.apply(f.clone(), smallvec::smallvec![a], span)
    }

    /// Applies a function value to two arguments (see [`Machine::call1`]);
    /// a scalar built-in like `addi` computes directly.
    #[inline]
    pub fn call2(&mut self, f: &Value, a: Value, b: Value, span: Span) -> Res<Value> {
        match f {
            Value::Closure(c) if c.code.arity == 2 => {
                let bp = self.stack.len();
                self.push_word_wise(a);
                self.push_word_wise(b);
                self.enter(c, bp, span)
            }
            // Not of duals (`crate::ad`), which the built-in's rule takes.
            Value::Builtin(op) if !matches!((&a, &b), (Value::Dual(_), _) | (_, Value::Dual(_))) => {
                match BinOp::from_builtin(*op).and_then(|o| o.eval(&a, &b)) {
                    Some(v) => Ok(v),
                    None => self.apply(f.clone(), smallvec::smallvec![a, b], span),
                }
            }
            _ => self.apply(f.clone(), smallvec::smallvec![a, b], span),
        }
    }

    /// Applies a function value to arguments.
    pub fn apply(&mut self, f: Value, args: Args, span: Span) -> Res<Value> {
        let (mut f, mut args) = (f, args);
        loop {
            match f {
                Value::Closure(c) => {
                    let arity = c.code.arity;
                    if args.len() < arity {
                        return Ok(Value::Partial(Arc::new(Partial { func: Value::Closure(c), args: args.to_vec() })));
                    }
                    let rest: Args = if args.len() > arity { args.drain(arity..).collect() } else { Args::new() };
                    let bp = self.stack.len();
                    self.stack.extend(args.drain(..));
                    let v = self.enter(&c, bp, span)?;
                    if rest.is_empty() {
                        return Ok(v);
                    }
                    f = v;
                    args = rest;
                }
                Value::Partial(p) => {
                    let mut all: Args = p.args.iter().cloned().collect();
                    all.extend(args);
                    f = p.func.clone();
                    args = all;
                }
                Value::Builtin(b) => {
                    let arity = crate::compile::builtin_arity(b);
                    if args.len() < arity {
                        return Ok(Value::Partial(Arc::new(Partial { func: f, args: args.to_vec() })));
                    }
                    let rest: Args = args.drain(arity..).collect();
                    let v = crate::builtins::call(self, b, args, span)?;
                    if rest.is_empty() {
                        return Ok(v);
                    }
                    f = v;
                    args = rest;
                }
                Value::External(ref e) => {
                    let Some(run) = e.run else {
                        return Err(self.fail(format!("the external `{}` is not implemented by pmx", e.name), span));
                    };
                    if args.len() < e.arity {
                        return Ok(Value::Partial(Arc::new(Partial { func: f, args: args.to_vec() })));
                    }
                    let rest: Args = args.drain(e.arity..).collect();
                    let v = if args.iter().any(|a| matches!(a, Value::Dual(_))) {
                        crate::ad::external(self, &e.name, &args, span)?
                    } else {
                        run(self, &args, span)?
                    };
                    if rest.is_empty() {
                        return Ok(v);
                    }
                    f = v;
                    args = rest;
                }
                _ => return Err(self.fail("a value that is not a function was applied to an argument", span)),
            }
        }
    }

    /// Whether `v` matches `p`, binding the pattern's variables.
    pub(crate) fn matches(&mut self, p: &Pat, v: &Value, fr: &Frame) -> bool {
        match p {
            Pat::Wild => true,
            Pat::Bind(slot) => {
                self.replace_slot(fr.bp + *slot as usize, v.clone());
                true
            }
            Pat::Int(i) => matches!(v, Value::Int(x) if x == i),
            Pat::Char(c) => matches!(v, Value::Char(x) if x == c),
            Pat::Bool(b) => matches!(v, Value::Bool(x) if x == b),
            // `v` is not borrowed from the stack that binders write (the
            // caller holds it), so its parts are matched in place.
            Pat::Con(tag, arg) => match v {
                Value::Con(c) if c.tag == *tag => self.matches(arg, &c.arg, fr),
                _ => false,
            },
            Pat::Record(fields) => match v {
                Value::Record(r) => fields.iter().all(|(l, fp)| match r.get(l) {
                    Some(fv) => self.matches(fp, fv, fr),
                    None => false,
                }),
                _ => false,
            },
            Pat::RecordAt(fields) => match v {
                Value::Record(r) => fields.iter().all(|(i, fp)| match r.values.get(*i) {
                    Some(fv) => self.matches(fp, fv, fr),
                    None => false,
                }),
                _ => false,
            },
            Pat::Seq(items) => {
                let Value::Seq(s) = v else { return false };
                s.len() == items.len() && items.iter().enumerate().all(|(i, ip)| self.matches(ip, &s.get(i), fr))
            }
            Pat::Edge(prefix, middle, suffix) => {
                let Value::Seq(s) = v else { return false };
                let (n, np, ns) = (s.len(), prefix.len(), suffix.len());
                if n < np + ns {
                    return false;
                }
                let ok = prefix.iter().enumerate().all(|(i, ip)| self.matches(ip, &s.get(i), fr))
                    && suffix.iter().enumerate().all(|(i, ip)| self.matches(ip, &s.get(n - ns + i), fr));
                if ok {
                    if let Some(slot) = middle {
                        self.stack[fr.bp + *slot as usize] = Value::seq(s.slice(np, n - ns));
                    }
                }
                ok
            }
            Pat::And(a, b) => self.matches(a, v, fr) && self.matches(b, v, fr),
            Pat::Or(a, b) => self.matches(a, v, fr) || self.matches(b, v, fr),
            Pat::Not(a) => !self.matches(a, v, fr),
        }
    }

    /// Records `n` utests that passed in code run elsewhere (a native
    /// engine counts those its accelerated code ran).
    pub fn utests_passed(&mut self, n: usize) {
        if n == 0 {
            return;
        }
        self.shared.tests.lock().unwrap_or_else(|e| e.into_inner()).passed += n;
        for _ in 0..n {
            crate::io::dot();
        }
    }

    /// Records one utest: `a` and `b` compared with `eq` (a function and
    /// its name) or structurally; `on_fail` makes the failure message.
    pub(crate) fn utest(
        &mut self,
        a: Value,
        b: Value,
        eq: Option<(Value, &str)>,
        on_fail: Option<Value>,
        span: Span,
    ) -> Res<()> {
        let ok = match &eq {
            Some((f, _)) => self.apply(f.clone(), smallvec::smallvec![a.clone(), b.clone()], span)?.as_bool(),
            None => crate::show::equal(&a, &b).map_err(|m| self.fail(m, span))?,
        };
        if ok {
            self.shared.tests.lock().unwrap_or_else(|e| e.into_inner()).passed += 1;
            crate::io::dot();
            return Ok(());
        }
        let mut detail = match on_fail {
            Some(f) => self.apply(f, smallvec::smallvec![a.clone(), b.clone()], span)?.as_string(),
            None => format!("    LHS: {}\n    RHS: {}", crate::show::show(&a), crate::show::show(&b)),
        };
        if let Some((_, name)) = eq {
            detail.push_str(&format!("\n    Using: {name}"));
        }
        self.shared.tests.lock().unwrap_or_else(|e| e.into_inner()).failed += 1;
        crate::io::utest_failure(span, &detail);
        Ok(())
    }
}
