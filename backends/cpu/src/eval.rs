//! The machine that runs compiled code (see `thunk.rs`).
//!
//! Each call's frame is a window of the value stack (parameters first).
//! Calls in tail position do not grow the Rust stack: the function body
//! returns the call to make and `enter` loops, reusing the frame. A
//! non-tail recursion deeper than the thread's stack allows ends in a
//! "stack overflow" error.

use crate::code::*;
use crate::error::{Fail, Res, RuntimeError, TRACE_LIMIT};
use crate::value::*;
use crate::Options;
use pmx_ast::Span;
use smallvec::SmallVec;
use std::sync::{Arc, Mutex, OnceLock};

pub type Args = SmallVec<[Value; 4]>;

/// What every machine of one run shares: the program, globals, options and
/// the utest tally.
pub struct Shared {
    pub program: Program,
    pub globals: Box<[OnceLock<Value>]>,
    pub options: Options,
    pub tests: Mutex<TestTally>,
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

/// How a function body ends.
pub enum Flow {
    Ret(Value),
    /// A tail call of the running closure; the arguments are in place.
    Again,
    /// A tail call of another closure with exactly its number of arguments,
    /// which are in place at the frame's base; and the call's site.
    Switch(Arc<Closure>, Span),
    /// Any other tail call (rare: boxed to keep `Flow` small).
    Tail(Box<(Value, Args, Span)>),
}

/// One thread of evaluation.
pub struct Machine {
    pub shared: Arc<Shared>,
    pub(crate) stack: Vec<Value>,
    /// Calls in progress: the function's code and the call site. The code
    /// is alive while its call is (its closure is held by the caller).
    calls: Vec<(*const LamCode, Span)>,
    /// The lowest address the stack may grow to before a call fails.
    stack_limit: usize,
    /// Inside an `accelerate` expression.
    pub accelerated: bool,
    /// The innermost `accelerate` expression being evaluated.
    pub accelerate_site: Option<Span>,
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
    pub fn new(shared: Arc<Shared>) -> Machine {
        let here = stack_address();
        let stack_limit = match stacker::remaining_stack() {
            Some(left) => here.saturating_sub(left) + STACK_RESERVE,
            None => 0,
        };
        Machine {
            shared,
            stack: Vec::with_capacity(1024),
            calls: Vec::new(),
            stack_limit,
            accelerated: false,
            accelerate_site: None,
        }
    }

    pub fn fail(&self, message: impl Into<String>, span: Span) -> Fail {
        let shown = self.calls.len().min(TRACE_LIMIT);
        Box::new(RuntimeError {
            message: message.into(),
            span,
            // Safety: each recorded code is alive while its call is.
            trace: self
                .calls
                .iter()
                .rev()
                .take(shown)
                .map(|(code, span)| (unsafe { (**code).name.clone() }, *span))
                .collect(),
            omitted: self.calls.len() - shown,
            exit: None,
        })
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
        while self.stack.len() > bp {
            match self.stack.pop() {
                Some(Value::Int(_) | Value::Float(_) | Value::Bool(_) | Value::Char(_)) => {}
                Some(other) => drop(other),
                None => break,
            }
        }
    }

    pub(crate) fn global(&self, g: u32) -> Res<Value> {
        match self.shared.globals[g as usize].get() {
            Some(v) => Ok(v.clone()),
            None => Err(self.fail(
                format!("`{}` is used before it is defined", self.shared.program.global_names[g as usize]),
                Span::BUILTIN,
            )),
        }
    }

    /// Runs a closure whose arguments are on the stack from `bp`. Tail
    /// calls with exactly the callee's number of arguments reuse the frame.
    pub(crate) fn enter(&mut self, c: &Arc<Closure>, bp: usize, span: Span) -> Res<Value> {
        if stack_address() < self.stack_limit {
            self.stack.truncate(bp);
            return Err(self.fail("stack overflow: the recursion is too deep", span));
        }
        let top = bp + c.code.slots;
        if self.stack.len() < top {
            self.stack.resize(top, Value::Int(0));
        }
        self.calls.push((c.code as *const LamCode, span));
        let mut owned: Option<Arc<Closure>> = None;
        loop {
            let current = owned.as_ref().unwrap_or(c);
            let result = (current.code.body)(self, &Frame { bp, closure: Some(current) });
            match result {
                Ok(Flow::Again) => continue,
                Ok(Flow::Switch(next, site)) => {
                    let top = bp + next.code.slots;
                    if self.stack.len() < top {
                        self.stack.resize(top, Value::Int(0));
                    }
                    // The caller's frame is gone: the trace shows the callee
                    // at the tail call's site.
                    if let Some(last) = self.calls.last_mut() {
                        *last = (next.code as *const LamCode, site);
                    }
                    owned = Some(next);
                }
                other => {
                    self.pop_frame(bp);
                    self.calls.pop();
                    return match other? {
                        Flow::Ret(v) => Ok(v),
                        Flow::Tail(call) => {
                            let (g, args, s) = *call;
                            self.apply(g, args, s)
                        }
                        Flow::Again | Flow::Switch(..) => unreachable!("handled above"),
                    };
                }
            }
        }
    }

    pub(crate) fn letrec(&mut self, members: &[(usize, Thunk)], cells: bool, fr: &Frame) -> Res<()> {
        if !cells {
            for (slot, value) in members {
                let v = value(self, fr)?;
                self.stack[fr.bp + *slot] = v;
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
                    let v = run(&args);
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
                self.stack[fr.bp + *slot as usize] = v.clone();
                true
            }
            Pat::Int(i) => matches!(v, Value::Int(x) if x == i),
            Pat::Char(c) => matches!(v, Value::Char(x) if x == c),
            Pat::Bool(b) => matches!(v, Value::Bool(x) if x == b),
            Pat::Con(tag, arg) => match v {
                Value::Con(c) if c.tag == *tag => {
                    let a = c.arg.clone();
                    self.matches(arg, &a, fr)
                }
                _ => false,
            },
            Pat::Record(fields) => match v {
                Value::Record(r) => fields.iter().all(|(l, fp)| match r.get(l) {
                    Some(fv) => {
                        let fv = fv.clone();
                        self.matches(fp, &fv, fr)
                    }
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
            crate::io::out(".");
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
