//! The evaluator: runs [`Code`] on a machine with a value stack.
//!
//! Each call's frame is a window of the value stack (parameters first).
//! Calls in tail position do not grow the Rust stack: the function body
//! returns the call to make and `apply` loops. A non-tail recursion deeper
//! than the thread's stack allows ends in a "stack overflow" error.

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

enum Flow {
    Ret(Value),
    /// A tail call of the running closure; the arguments are in place.
    Again,
    /// A tail call of another closure with exactly its number of arguments,
    /// which are in place at the frame's base.
    Switch(Arc<Closure>),
    Tail(Value, Args, Span),
}

/// One thread of evaluation.
pub struct Machine {
    pub shared: Arc<Shared>,
    stack: Vec<Value>,
    /// Calls in progress: the function's code and the call site. The code
    /// is alive while its call is (its closure is held by the caller).
    calls: Vec<(*const LamCode, Span)>,
    /// The lowest address the stack may grow to before a call fails.
    stack_limit: usize,
    /// Inside an `accelerate` expression.
    pub accelerated: bool,
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
        Machine { shared, stack: Vec::with_capacity(1024), calls: Vec::new(), stack_limit, accelerated: false }
    }

    pub fn fail(&self, message: impl Into<String>, span: Span) -> Fail {
        let shown = self.calls.len().min(TRACE_LIMIT);
        Box::new(RuntimeError {
            message: message.into(),
            span,
            // Safety: each recorded code is alive while its call is.
            trace: self.calls.iter().rev().take(shown).map(|(code, span)| (unsafe { (**code).name.clone() }, *span)).collect(),
            omitted: self.calls.len() - shown,
            exit: None,
        })
    }

    pub fn run_step(&mut self, step: &Step) -> Res<Option<Value>> {
        match step {
            Step::Define { global, slots, code } => {
                let v = self.eval_top(*slots, code)?;
                let _ = self.shared.globals[*global as usize].set(v);
                Ok(None)
            }
            Step::Utest { slots, utest } => {
                if self.shared.options.utests.includes(utest.span) {
                    let bp = self.push_frame(*slots);
                    let r = self.utest(utest, &Frame { bp, closure: None });
                    self.stack.truncate(bp);
                    r?;
                }
                Ok(None)
            }
            Step::Main { slots, code } => self.eval_top(*slots, code).map(Some),
        }
    }

    fn eval_top(&mut self, slots: usize, code: &Code) -> Res<Value> {
        let bp = self.push_frame(slots);
        let r = self.eval(code, &Frame { bp, closure: None });
        self.stack.truncate(bp);
        r
    }

    /// Drops a frame's values; scalars need no destructor call.
    #[inline(always)]
    fn pop_frame(&mut self, bp: usize) {
        while self.stack.len() > bp {
            match self.stack.pop() {
                Some(Value::Int(_) | Value::Float(_) | Value::Bool(_) | Value::Char(_)) => {}
                Some(other) => drop(other),
                None => break,
            }
        }
    }

    fn push_frame(&mut self, slots: usize) -> usize {
        let bp = self.stack.len();
        self.stack.resize(bp + slots, Value::Int(0));
        bp
    }

    fn local(&self, fr: &Frame, slot: u32) -> Value {
        self.stack[fr.bp + slot as usize].clone()
    }

    /// A simple operand without a call of `eval` (locals and literals are
    /// the common case).
    #[inline(always)]
    fn leaf(&self, c: &Code, fr: &Frame) -> Option<Value> {
        match c {
            Code::Local(s) => Some(self.stack[fr.bp + *s as usize].clone()),
            Code::Lit(v) => Some(v.clone()),
            _ => None,
        }
    }

    /// An operand: leaves, and operators and calls on leaves, are computed
    /// here without going through `eval`.
    #[inline(always)]
    fn operand(&mut self, c: &Code, fr: &Frame) -> Res<Value> {
        match c {
            Code::Local(s) => Ok(self.stack[fr.bp + *s as usize].clone()),
            Code::Lit(v) => Ok(v.clone()),
            Code::Bin(op, x, y, span) => match (self.leaf(x, fr), self.leaf(y, fr)) {
                (Some(a), Some(b)) => self.bin(*op, a, b, *span),
                _ => self.eval(c, fr),
            },
            _ => self.eval(c, fr),
        }
    }

    fn global(&self, g: u32) -> Res<Value> {
        match self.shared.globals[g as usize].get() {
            Some(v) => Ok(v.clone()),
            None => Err(self.fail(
                format!("`{}` is used before it is defined", self.shared.program.global_names[g as usize]),
                Span::BUILTIN,
            )),
        }
    }

    pub fn eval(&mut self, code: &Code, fr: &Frame) -> Res<Value> {
        let mut code = code;
        loop {
            match code {
                Code::Lit(v) => return Ok(v.clone()),
                Code::Local(s) => return Ok(self.local(fr, *s)),
                Code::Capture(i) => {
                    return Ok(fr.closure.expect("captures only inside closures").env[*i as usize].clone())
                }
                Code::Global(g) => return self.global(*g),
                Code::Bin(op, x, y, span) => {
                    let a = self.operand(x, fr)?;
                    let b = self.operand(y, fr)?;
                    return self.bin(*op, a, b, *span);
                }
                Code::App(f, args, span) => return self.app(f, args, *span, fr),
                Code::TensorGet(t, index, span) => {
                    let tv = self.operand(t, fr)?;
                    let mut ix: SmallVec<[i64; 4]> = SmallVec::new();
                    for c in index.iter() {
                        ix.push(self.operand(c, fr)?.as_int());
                    }
                    return tv.as_tensor().get(&ix).map_err(|m| self.fail(m, *span));
                }
                Code::TensorSet(parts, index, span) => {
                    let tv = self.operand(&parts.0, fr)?;
                    let mut ix: SmallVec<[i64; 4]> = SmallVec::new();
                    for c in index.iter() {
                        ix.push(self.operand(c, fr)?.as_int());
                    }
                    let v = self.operand(&parts.1, fr)?;
                    tv.as_tensor().set(&ix, v).map_err(|m| self.fail(m, *span))?;
                    return Ok(Value::unit());
                }
                Code::Prim(b, args, span) => {
                    let mut argv = Args::with_capacity(args.len());
                    for a in args.iter() {
                        argv.push(self.operand(a, fr)?);
                    }
                    return crate::builtins::call(self, *b, argv, *span);
                }
                Code::Let(slot, value, body) => {
                    let v = self.eval(value, fr)?;
                    self.stack[fr.bp + *slot as usize] = v;
                    code = body;
                }
                Code::If(op, parts) => {
                    let (x, y, then, otherwise) = &**parts;
                    let a = self.operand(x, fr)?;
                    let b = self.operand(y, fr)?;
                    code = if op.compare(&a, &b) { then } else { otherwise };
                }
                Code::Match(scrutinee, pat, then, otherwise) => {
                    let v = self.operand(scrutinee, fr)?;
                    let hit = match (&**pat, &v) {
                        (Pat::Bool(p), Value::Bool(b)) => p == b,
                        _ => self.matches(pat, &v, fr),
                    };
                    code = if hit { then } else { otherwise };
                }
                Code::LetRec { members, cells, body } => {
                    self.letrec(members, *cells, fr)?;
                    code = body;
                }
                Code::Utest(u, body) => {
                    if self.shared.options.utests.includes(u.span) {
                        self.utest(u, fr)?;
                    }
                    code = body;
                }
                _ => return self.eval_cold(code, fr),
            }
        }
    }

    /// The forms that are not on the hot path, kept out of `eval` so that
    /// its frame stays small (deep recursion uses less stack).
    #[inline(never)]
    fn eval_cold(&mut self, code: &Code, fr: &Frame) -> Res<Value> {
        match code {
            Code::SelfClosure => Ok(Value::Closure(fr.closure.expect("self inside a closure").clone())),
            Code::Builtin(b) => Ok(Value::Builtin(*b)),
            Code::External(name) => Ok(crate::builtins::external(name)),
            Code::Lam(lam, sources) => Ok(self.closure(lam, sources, fr)),
            Code::CellGet(cell) => match self.eval(cell, fr)? {
                Value::Ref(r) => Ok(r.lock().unwrap_or_else(|e| e.into_inner()).clone()),
                _ => unreachable!("recursion cells are references"),
            },
            Code::Seq(items) => {
                let mut values = Vec::with_capacity(items.len());
                for i in items.iter() {
                    values.push(self.eval(i, fr)?);
                }
                Ok(Value::seq(Seq::from_values(values)))
            }
            Code::Record(labels, fields) => {
                if fields.is_empty() {
                    return Ok(Value::unit());
                }
                let mut values = Vec::with_capacity(fields.len());
                for f in fields.iter() {
                    values.push(self.eval(f, fr)?);
                }
                Ok(Value::Record(Arc::new(Record { labels: labels.clone(), values: values.into_boxed_slice() })))
            }
            Code::RecordUpdate(record, updates) => {
                let Value::Record(r) = self.eval(record, fr)? else { unreachable!("type checking: a record") };
                let mut values = r.values.to_vec();
                for (label, code) in updates.iter() {
                    let v = self.eval(code, fr)?;
                    if let Some(i) = r.labels.iter().position(|l| l == label) {
                        values[i] = v;
                    }
                }
                Ok(Value::Record(Arc::new(Record { labels: r.labels.clone(), values: values.into_boxed_slice() })))
            }
            Code::Proj(record, label) => {
                let Value::Record(r) = self.eval(record, fr)? else { unreachable!("type checking: a record") };
                Ok(r.get(label).cloned().expect("type checking: the field exists"))
            }
            Code::ConApp(tag, name, arg) => {
                let arg = self.eval(arg, fr)?;
                Ok(Value::Con(Arc::new(ConValue { tag: *tag, name: name.clone(), arg })))
            }
            Code::Never(span) => {
                Err(self.fail("Reached a never term, which should be impossible (no pattern matched)", *span))
            }
            Code::Accelerate(body, checks, span) => self.accelerate(body, checks, *span, fr),
            Code::Error(span) => Err(self.fail("this part of the program has errors and cannot run", *span)),
            other => self.eval(other, fr),
        }
    }

    #[inline(always)]
    fn bin(&self, op: BinOp, a: Value, b: Value, span: Span) -> Res<Value> {
        use BinOp::*;
        Ok(match op {
            Addi => Value::Int(a.as_int().wrapping_add(b.as_int())),
            Subi => Value::Int(a.as_int().wrapping_sub(b.as_int())),
            Muli => Value::Int(a.as_int().wrapping_mul(b.as_int())),
            Divi | Modi => {
                let (x, y) = (a.as_int(), b.as_int());
                if y == 0 {
                    return Err(self.fail("Division by zero", span));
                }
                Value::Int(if op == Divi { x.wrapping_div(y) } else { x.wrapping_rem(y) })
            }
            Eqi => Value::Bool(a.as_int() == b.as_int()),
            Neqi => Value::Bool(a.as_int() != b.as_int()),
            Lti => Value::Bool(a.as_int() < b.as_int()),
            Gti => Value::Bool(a.as_int() > b.as_int()),
            Leqi => Value::Bool(a.as_int() <= b.as_int()),
            Geqi => Value::Bool(a.as_int() >= b.as_int()),
            Addf => Value::Float(a.as_float() + b.as_float()),
            Subf => Value::Float(a.as_float() - b.as_float()),
            Mulf => Value::Float(a.as_float() * b.as_float()),
            Divf => Value::Float(a.as_float() / b.as_float()),
            Eqf => Value::Bool(a.as_float() == b.as_float()),
            Neqf => Value::Bool(a.as_float() != b.as_float()),
            Ltf => Value::Bool(a.as_float() < b.as_float()),
            Gtf => Value::Bool(a.as_float() > b.as_float()),
            Leqf => Value::Bool(a.as_float() <= b.as_float()),
            Geqf => Value::Bool(a.as_float() >= b.as_float()),
            Eqc => Value::Bool(a.as_char() == b.as_char()),
        })
    }

    /// A call. A closure applied to exactly its number of arguments gets
    /// them evaluated straight into its frame.
    fn app(&mut self, f: &Code, args: &[Code], span: Span, fr: &Frame) -> Res<Value> {
        if let Code::Global(g) = f {
            // A top-level function is borrowed, not cloned: globals are set
            // once and live as long as `shared`, which outlives this call.
            let shared: *const Shared = &*self.shared;
            // Safety: see above; `shared` is kept alive by `self.shared`.
            let global = unsafe { (*shared).globals[*g as usize].get() };
            if let Some(Value::Closure(c)) = global {
                if c.code.arity == args.len() {
                    return self.call_with(c, args, span, fr);
                }
            }
        }
        let fv = self.operand(f, fr)?;
        if let Value::Closure(c) = &fv {
            if c.code.arity == args.len() {
                return self.call_with(c, args, span, fr);
            }
        }
        self.app_generic(fv, args, span, fr)
    }

    /// Calls a closure with exactly its number of arguments, evaluated
    /// straight into its frame.
    #[inline]
    fn call_with(&mut self, c: &Arc<Closure>, args: &[Code], span: Span, fr: &Frame) -> Res<Value> {
        let bp = self.stack.len();
        for a in args {
            match self.operand(a, fr) {
                Ok(v) => self.stack.push(v),
                Err(e) => {
                    self.stack.truncate(bp);
                    return Err(e);
                }
            }
        }
        self.enter(c, bp, span)
    }

    fn app_generic(&mut self, fv: Value, args: &[Code], span: Span, fr: &Frame) -> Res<Value> {
        let mut argv = Args::with_capacity(args.len());
        for a in args {
            argv.push(self.operand(a, fr)?);
        }
        self.apply(fv, argv, span)
    }

    /// Runs a closure whose arguments are on the stack from `bp`. Tail
    /// calls with exactly the callee's number of arguments reuse the frame.
    fn enter(&mut self, c: &Arc<Closure>, bp: usize, span: Span) -> Res<Value> {
        if stack_address() < self.stack_limit {
            self.stack.truncate(bp);
            return Err(self.fail("stack overflow: the recursion is too deep", span));
        }
        let top = bp + c.code.slots;
        if self.stack.len() < top {
            self.stack.resize(top, Value::Int(0));
        }
        self.calls.push((&*c.code as *const LamCode, span));
        let mut owned: Option<Arc<Closure>> = None;
        loop {
            let current = owned.as_ref().unwrap_or(c);
            let result = self.eval_tail(&current.code.body, &Frame { bp, closure: Some(current) });
            match result {
                Ok(Flow::Again) => continue,
                Ok(Flow::Switch(next)) => {
                    let top = bp + next.code.slots;
                    if self.stack.len() < top {
                        self.stack.resize(top, Value::Int(0));
                    }
                    if let Some(last) = self.calls.last_mut() {
                        last.0 = &*next.code as *const LamCode;
                    }
                    owned = Some(next);
                    continue;
                }
                other => {
                    self.pop_frame(bp);
                    self.calls.pop();
                    return match other? {
                        Flow::Ret(v) => Ok(v),
                        Flow::Tail(g, args, s) => self.apply(g, args, s),
                        Flow::Again | Flow::Switch(_) => unreachable!("handled above"),
                    };
                }
            }
        }
    }

    /// A call in tail position. With exactly the callee's number of
    /// arguments, they are written over the current frame's parameters.
    fn tail_call(&mut self, f: &Code, args: &[Code], span: Span, fr: &Frame) -> Res<Flow> {
        let fv = self.operand(f, fr)?;
        if let Value::Closure(target) = fv {
            if target.code.arity == args.len() {
                // Temporaries go above both frames' parameters, so that
                // moving them down cannot overwrite one not yet moved.
                if self.stack.len() < fr.bp + args.len() {
                    self.stack.resize(fr.bp + args.len(), Value::Int(0));
                }
                let top = self.stack.len();
                for a in args {
                    match self.operand(a, fr) {
                        Ok(v) => self.stack.push(v),
                        Err(e) => {
                            self.stack.truncate(top);
                            return Err(e);
                        }
                    }
                }
                for k in 0..args.len() {
                    let v = std::mem::replace(&mut self.stack[top + k], Value::Int(0));
                    self.stack[fr.bp + k] = v;
                }
                self.pop_frame(top);
                if fr.closure.is_some_and(|c| Arc::ptr_eq(c, &target)) {
                    return Ok(Flow::Again);
                }
                return Ok(Flow::Switch(target));
            }
            let mut argv = Args::with_capacity(args.len());
            for a in args {
                argv.push(self.operand(a, fr)?);
            }
            return Ok(Flow::Tail(Value::Closure(target), argv, span));
        }
        let mut argv = Args::with_capacity(args.len());
        for a in args {
            argv.push(self.operand(a, fr)?);
        }
        Ok(Flow::Tail(fv, argv, span))
    }

    /// Evaluates a function body: a call in tail position is returned, not
    /// made, so that the caller's loop makes it without growing the stack.
    fn eval_tail(&mut self, code: &Code, fr: &Frame) -> Res<Flow> {
        let mut code = code;
        loop {
            match code {
                Code::App(f, args, span) => return self.tail_call(f, args, *span, fr),
                Code::Let(slot, value, body) => {
                    let v = self.eval(value, fr)?;
                    self.stack[fr.bp + *slot as usize] = v;
                    code = body;
                }
                Code::LetRec { members, cells, body } => {
                    self.letrec(members, *cells, fr)?;
                    code = body;
                }
                Code::If(op, parts) => {
                    let (x, y, then, otherwise) = &**parts;
                    let a = self.operand(x, fr)?;
                    let b = self.operand(y, fr)?;
                    code = if op.compare(&a, &b) { then } else { otherwise };
                }
                Code::Match(scrutinee, pat, then, otherwise) => {
                    let v = self.operand(scrutinee, fr)?;
                    let hit = match (&**pat, &v) {
                        (Pat::Bool(p), Value::Bool(b)) => p == b,
                        _ => self.matches(pat, &v, fr),
                    };
                    code = if hit { then } else { otherwise };
                }
                Code::Utest(u, body) => {
                    if self.shared.options.utests.includes(u.span) {
                        self.utest(u, fr)?;
                    }
                    code = body;
                }
                other => return Ok(Flow::Ret(self.eval(other, fr)?)),
            }
        }
    }

    fn letrec(&mut self, members: &[(u32, Code)], cells: bool, fr: &Frame) -> Res<()> {
        if !cells {
            for (slot, value) in members {
                let v = self.eval(value, fr)?;
                self.stack[fr.bp + *slot as usize] = v;
            }
            return Ok(());
        }
        let cells: Vec<Arc<Mutex<Value>>> = members
            .iter()
            .map(|(slot, _)| {
                let cell = Arc::new(Mutex::new(Value::unit()));
                self.stack[fr.bp + *slot as usize] = Value::Ref(cell.clone());
                cell
            })
            .collect();
        for ((_, value), cell) in members.iter().zip(cells) {
            let v = self.eval(value, fr)?;
            *cell.lock().unwrap_or_else(|e| e.into_inner()) = v;
        }
        Ok(())
    }

    fn closure(&self, lam: &Arc<LamCode>, sources: &[Source], fr: &Frame) -> Value {
        let env: Box<[Value]> = sources
            .iter()
            .map(|s| match s {
                Source::Local(slot) => self.local(fr, *slot),
                Source::Capture(i) => fr.closure.expect("captures only inside closures").env[*i as usize].clone(),
                Source::SelfClosure => Value::Closure(fr.closure.expect("self inside a closure").clone()),
            })
            .collect();
        Value::Closure(Arc::new(Closure { code: lam.clone(), env }))
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
    fn matches(&mut self, p: &Pat, v: &Value, fr: &Frame) -> bool {
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

    fn utest(&mut self, u: &UtestCode, fr: &Frame) -> Res<()> {
        let a = self.eval(&u.test, fr)?;
        let b = self.eval(&u.expected, fr)?;
        let ok = match &u.using {
            Some((eq, _)) => {
                let f = self.eval(eq, fr)?;
                self.apply(f, smallvec::smallvec![a.clone(), b.clone()], u.span)?.as_bool()
            }
            None => crate::show::equal(&a, &b).map_err(|m| self.fail(m, u.span))?,
        };
        if ok {
            self.shared.tests.lock().unwrap_or_else(|e| e.into_inner()).passed += 1;
            crate::io::out(".");
            return Ok(());
        }
        let mut detail = match &u.on_fail {
            Some(f) => {
                let f = self.eval(f, fr)?;
                self.apply(f, smallvec::smallvec![a.clone(), b.clone()], u.span)?.as_string()
            }
            None => format!("    LHS: {}\n    RHS: {}", crate::show::show(&a), crate::show::show(&b)),
        };
        if let Some((_, name)) = &u.using {
            detail.push_str(&format!("\n    Using: {name}"));
        }
        self.shared.tests.lock().unwrap_or_else(|e| e.into_inner()).failed += 1;
        crate::io::utest_failure(u.span, &detail);
        Ok(())
    }

    fn accelerate(&mut self, body: &Code, checks: &[BoundaryCheck], span: Span, fr: &Frame) -> Res<Value> {
        if self.shared.options.debug {
            for check in checks {
                let v = self.eval(&check.value, fr)?;
                if let Err(m) = crate::checks::check(check.kind, &v, self.shared.options.tensor_max_rank) {
                    return Err(self.fail(format!("{m} (in the value of `{}` passed to accelerate)", check.name), span));
                }
            }
        }
        let saved = std::mem::replace(&mut self.accelerated, true);
        let r = self.eval(body, fr);
        self.accelerated = saved;
        r
    }
}
