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
use pmx_ast::{SmolStr, Span};
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
    Tail(Value, Args, Span),
}

/// One thread of evaluation.
pub struct Machine {
    pub shared: Arc<Shared>,
    stack: Vec<Value>,
    /// Calls in progress: function name and call site.
    calls: Vec<(SmolStr, Span)>,
    /// Inside an `accelerate` expression.
    pub accelerated: bool,
}

/// Below this much stack left, a call fails instead of overflowing.
const STACK_RESERVE: usize = 256 * 1024;

impl Machine {
    pub fn new(shared: Arc<Shared>) -> Machine {
        Machine { shared, stack: Vec::with_capacity(1024), calls: Vec::new(), accelerated: false }
    }

    /// A machine for another thread, in the same accelerated state.
    pub fn fork(&self) -> Machine {
        let mut m = Machine::new(self.shared.clone());
        m.accelerated = self.accelerated;
        m
    }

    pub fn fail(&self, message: impl Into<String>, span: Span) -> Fail {
        let shown = self.calls.len().min(TRACE_LIMIT);
        Box::new(RuntimeError {
            message: message.into(),
            span,
            trace: self.calls.iter().rev().take(shown).cloned().collect(),
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

    fn push_frame(&mut self, slots: usize) -> usize {
        let bp = self.stack.len();
        self.stack.resize(bp + slots, Value::Int(0));
        bp
    }

    fn local(&self, fr: &Frame, slot: u32) -> Value {
        self.stack[fr.bp + slot as usize].clone()
    }

    pub fn eval(&mut self, code: &Code, fr: &Frame) -> Res<Value> {
        match code {
            Code::Lit(v) => Ok(v.clone()),
            Code::Local(s) => Ok(self.local(fr, *s)),
            Code::Capture(i) => Ok(fr.closure.expect("captures only inside closures").env[*i as usize].clone()),
            Code::Global(g) => match self.shared.globals[*g as usize].get() {
                Some(v) => Ok(v.clone()),
                None => Err(self.fail(
                    format!("`{}` is used before it is defined", self.shared.program.global_names[*g as usize]),
                    Span::BUILTIN,
                )),
            },
            Code::SelfClosure => Ok(Value::Closure(fr.closure.expect("self inside a closure").clone())),
            Code::Builtin(b) => Ok(Value::Builtin(*b)),
            Code::External(name) => Ok(crate::builtins::external(name)),
            Code::Lam(lam, sources) => Ok(self.closure(lam, sources, fr)),
            Code::App(f, args, span) => {
                let fv = self.eval(f, fr)?;
                let mut argv = Args::with_capacity(args.len());
                for a in args.iter() {
                    argv.push(self.eval(a, fr)?);
                }
                self.apply(fv, argv, *span)
            }
            Code::Prim(b, args, span) => {
                let mut argv = Args::with_capacity(args.len());
                for a in args.iter() {
                    argv.push(self.eval(a, fr)?);
                }
                crate::builtins::call(self, *b, argv, *span)
            }
            Code::Let(..) | Code::LetRec { .. } | Code::Match(..) | Code::Utest(..) => {
                match self.eval_tail(code, fr)? {
                    Flow::Ret(v) => Ok(v),
                    Flow::Tail(f, args, span) => self.apply(f, args, span),
                }
            }
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
            Code::Never(span) => Err(self.fail("Reached a never term, which should be impossible (no pattern matched)", *span)),
            Code::Accelerate(body, checks, span) => self.accelerate(body, checks, *span, fr),
            Code::Error(span) => Err(self.fail("this part of the program has errors and cannot run", *span)),
        }
    }

    fn eval_tail(&mut self, code: &Code, fr: &Frame) -> Res<Flow> {
        let mut code = code;
        loop {
            match code {
                Code::App(f, args, span) => {
                    let fv = self.eval(f, fr)?;
                    let mut argv = Args::with_capacity(args.len());
                    for a in args.iter() {
                        argv.push(self.eval(a, fr)?);
                    }
                    return Ok(Flow::Tail(fv, argv, *span));
                }
                Code::Let(slot, value, body) => {
                    let v = self.eval(value, fr)?;
                    self.stack[fr.bp + *slot as usize] = v;
                    code = body;
                }
                Code::LetRec { members, cells, body } => {
                    self.letrec(members, *cells, fr)?;
                    code = body;
                }
                Code::Match(scrutinee, pat, then, otherwise) => {
                    let v = self.eval(scrutinee, fr)?;
                    code = if self.matches(pat, &v, fr) { then } else { otherwise };
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
        let (mut f, mut args, mut span) = (f, args, span);
        loop {
            match f {
                Value::Closure(c) => {
                    let arity = c.code.arity;
                    if args.len() < arity {
                        return Ok(Value::Partial(Arc::new(Partial { func: Value::Closure(c), args: args.to_vec() })));
                    }
                    if stacker::remaining_stack().is_some_and(|left| left < STACK_RESERVE) {
                        return Err(self.fail("stack overflow: the recursion is too deep", span));
                    }
                    let rest: Args = args.drain(arity..).collect();
                    let bp = self.stack.len();
                    self.stack.extend(args.drain(..));
                    self.stack.resize(bp + c.code.slots, Value::Int(0));
                    self.calls.push((c.code.name.clone(), span));
                    let result = self.eval_tail(&c.code.body, &Frame { bp, closure: Some(&c) });
                    self.stack.truncate(bp);
                    self.calls.pop();
                    match result? {
                        Flow::Ret(v) => {
                            if rest.is_empty() {
                                return Ok(v);
                            }
                            f = v;
                            args = rest;
                        }
                        Flow::Tail(g, mut more, s) => {
                            more.extend(rest);
                            f = g;
                            args = more;
                            span = s;
                        }
                    }
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
