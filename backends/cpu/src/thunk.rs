//! Closure compilation: each node of [`Code`] becomes a Rust closure that
//! evaluates it, built once. Dispatch is then an indirect call into code
//! specialised for the node (an integer addition, a call of a top-level
//! function with two arguments), instead of a walk over a tree.

use crate::code::*;
use crate::error::Res;
use crate::eval::{Args, Flow, Frame, Machine};
use crate::value::{ConValue, Record, Seq, Value};
use smallvec::SmallVec;
use std::sync::Arc;

pub fn step(s: Step) -> StepThunk {
    match s {
        Step::Define { global, slots, code } => StepThunk::Define { global, slots, code: thunk(code) },
        Step::Utest { slots, utest } => {
            let span = utest.span;
            StepThunk::Utest { slots, span, utest: utest_thunk(*utest, None) }
        }
        Step::Main { slots, code } => StepThunk::Main { slots, code: thunk(code) },
    }
}

fn thunks(codes: Box<[Code]>) -> Box<[Thunk]> {
    codes.into_vec().into_iter().map(thunk).collect()
}

macro_rules! int_op {
    ($x:ident, $y:ident, |$a:ident, $b:ident| $e:expr) => {
        Box::new(move |m: &mut Machine, fr: &Frame| {
            let $a = $x(m, fr)?.as_int();
            let $b = $y(m, fr)?.as_int();
            Ok($e)
        })
    };
}

macro_rules! float_op {
    ($x:ident, $y:ident, |$a:ident, $b:ident| $e:expr) => {
        Box::new(move |m: &mut Machine, fr: &Frame| {
            let $a = $x(m, fr)?.as_float();
            let $b = $y(m, fr)?.as_float();
            Ok($e)
        })
    };
}

fn bin(op: BinOp, x: Code, y: Code, span: pmx_ast::Span) -> Thunk {
    use BinOp::*;
    // A local and a literal: the most common operands, read directly.
    if let (Code::Local(s), Code::Lit(Value::Int(k))) = (&x, &y) {
        let (s, k) = (*s as usize, *k);
        match op {
            Addi => return Box::new(move |m, fr| Ok(Value::Int(m.stack[fr.bp + s].as_int().wrapping_add(k)))),
            Subi => return Box::new(move |m, fr| Ok(Value::Int(m.stack[fr.bp + s].as_int().wrapping_sub(k)))),
            _ => {}
        }
    }
    let (x, y) = (thunk(x), thunk(y));
    match op {
        Addi => int_op!(x, y, |a, b| Value::Int(a.wrapping_add(b))),
        Subi => int_op!(x, y, |a, b| Value::Int(a.wrapping_sub(b))),
        Muli => int_op!(x, y, |a, b| Value::Int(a.wrapping_mul(b))),
        Divi | Modi => Box::new(move |m: &mut Machine, fr: &Frame| {
            let a = x(m, fr)?.as_int();
            let b = y(m, fr)?.as_int();
            if b == 0 {
                return Err(m.fail("Division by zero", span));
            }
            // Truncation toward zero, as OCaml.
            Ok(Value::Int(if op == Divi { a.wrapping_div(b) } else { a.wrapping_rem(b) }))
        }),
        Eqi => int_op!(x, y, |a, b| Value::Bool(a == b)),
        Neqi => int_op!(x, y, |a, b| Value::Bool(a != b)),
        Lti => int_op!(x, y, |a, b| Value::Bool(a < b)),
        Gti => int_op!(x, y, |a, b| Value::Bool(a > b)),
        Leqi => int_op!(x, y, |a, b| Value::Bool(a <= b)),
        Geqi => int_op!(x, y, |a, b| Value::Bool(a >= b)),
        Addf => float_op!(x, y, |a, b| Value::Float(a + b)),
        Subf => float_op!(x, y, |a, b| Value::Float(a - b)),
        Mulf => float_op!(x, y, |a, b| Value::Float(a * b)),
        Divf => float_op!(x, y, |a, b| Value::Float(a / b)),
        Eqf => float_op!(x, y, |a, b| Value::Bool(a == b)),
        Neqf => float_op!(x, y, |a, b| Value::Bool(a != b)),
        Ltf => float_op!(x, y, |a, b| Value::Bool(a < b)),
        Gtf => float_op!(x, y, |a, b| Value::Bool(a > b)),
        Leqf => float_op!(x, y, |a, b| Value::Bool(a <= b)),
        Geqf => float_op!(x, y, |a, b| Value::Bool(a >= b)),
        Eqc => Box::new(move |m: &mut Machine, fr: &Frame| {
            let a = x(m, fr)?.as_char();
            let b = y(m, fr)?.as_char();
            Ok(Value::Bool(a == b))
        }),
    }
}

/// The condition of an `if` on a comparison, as a closure to a `bool`.
type Cond = Box<dyn Fn(&mut Machine, &Frame) -> Res<bool> + Send + Sync>;

fn cond(op: BinOp, x: Code, y: Code) -> Cond {
    use BinOp::*;
    if let (Code::Local(s), Code::Lit(Value::Int(k))) = (&x, &y) {
        let (s, k) = (*s as usize, *k);
        match op {
            Eqi => return Box::new(move |m, fr| Ok(m.stack[fr.bp + s].as_int() == k)),
            Lti => return Box::new(move |m, fr| Ok(m.stack[fr.bp + s].as_int() < k)),
            Leqi => return Box::new(move |m, fr| Ok(m.stack[fr.bp + s].as_int() <= k)),
            Gti => return Box::new(move |m, fr| Ok(m.stack[fr.bp + s].as_int() > k)),
            _ => {}
        }
    }
    let (x, y) = (thunk(x), thunk(y));
    macro_rules! cmp {
        ($as:ident, |$a:ident, $b:ident| $e:expr) => {
            Box::new(move |m: &mut Machine, fr: &Frame| {
                let $a = x(m, fr)?.$as();
                let $b = y(m, fr)?.$as();
                Ok($e)
            })
        };
    }
    match op {
        Eqi => cmp!(as_int, |a, b| a == b),
        Neqi => cmp!(as_int, |a, b| a != b),
        Lti => cmp!(as_int, |a, b| a < b),
        Gti => cmp!(as_int, |a, b| a > b),
        Leqi => cmp!(as_int, |a, b| a <= b),
        Geqi => cmp!(as_int, |a, b| a >= b),
        Eqf => cmp!(as_float, |a, b| a == b),
        Neqf => cmp!(as_float, |a, b| a != b),
        Ltf => cmp!(as_float, |a, b| a < b),
        Gtf => cmp!(as_float, |a, b| a > b),
        Leqf => cmp!(as_float, |a, b| a <= b),
        Geqf => cmp!(as_float, |a, b| a >= b),
        Eqc => cmp!(as_char, |a, b| a == b),
        _ => unreachable!("an `if` is fused only with a comparison"),
    }
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

fn app(f: Code, args: Box<[Code]>, span: pmx_ast::Span) -> Thunk {
    let args = thunks(args);
    if let Code::Global(g) = f {
        let g = g as usize;
        return Box::new(move |m, fr| {
            // A top-level function is borrowed, not cloned: globals are set
            // once and `shared` outlives the call.
            let shared: *const crate::eval::Shared = &*m.shared;
            // Safety: `m.shared` keeps the shared state alive.
            if let Some(Value::Closure(c)) = unsafe { (*shared).globals[g].get() } {
                if c.code.arity == args.len() {
                    let bp = push_args(m, fr, &args)?;
                    return m.enter(c, bp, span);
                }
            }
            let fv = m.global(g as u32)?;
            let argv = collect_args(m, fr, &args)?;
            m.apply(fv, argv, span)
        });
    }
    let f = thunk(f);
    Box::new(move |m, fr| {
        let fv = f(m, fr)?;
        if let Value::Closure(c) = &fv {
            if c.code.arity == args.len() {
                let bp = push_args(m, fr, &args)?;
                return m.enter(c, bp, span);
            }
        }
        let argv = collect_args(m, fr, &args)?;
        m.apply(fv, argv, span)
    })
}

/// A call in tail position: with exactly the callee's number of arguments
/// they are written over the current frame's parameters and the caller's
/// loop runs the callee, so tail recursion runs in constant stack.
fn tail_app(f: Code, args: Box<[Code]>, span: pmx_ast::Span) -> TailThunk {
    let f = thunk(f);
    let args = thunks(args);
    Box::new(move |m, fr| {
        let fv = f(m, fr)?;
        if let Value::Closure(target) = fv {
            if target.code.arity == args.len() {
                // Temporaries go above both frames' parameters, so that
                // moving them down cannot overwrite one not yet moved.
                if m.stack.len() < fr.bp + args.len() {
                    m.stack.resize(fr.bp + args.len(), Value::Int(0));
                }
                let top = push_args(m, fr, &args)?;
                for k in 0..args.len() {
                    let v = std::mem::replace(&mut m.stack[top + k], Value::Int(0));
                    m.stack[fr.bp + k] = v;
                }
                m.pop_frame(top);
                if fr.closure.is_some_and(|c| Arc::ptr_eq(c, &target)) {
                    return Ok(Flow::Again);
                }
                return Ok(Flow::Switch(target, span));
            }
            let argv = collect_args(m, fr, &args)?;
            return Ok(Flow::Tail(Box::new((Value::Closure(target), argv, span))));
        }
        let argv = collect_args(m, fr, &args)?;
        Ok(Flow::Tail(Box::new((fv, argv, span))))
    })
}

fn utest_thunk(u: UtestCode, body: Option<Thunk>) -> Thunk {
    let span = u.span;
    let size_constraint = u.size_constraint;
    let test = thunk(u.test);
    let expected = thunk(u.expected);
    let using = u.using.map(|(c, name)| (thunk(c), name));
    let on_fail = u.on_fail.map(thunk);
    Box::new(move |m, fr| {
        if let (Some(param), true, Some(site)) = (&size_constraint, m.shared.options.debug, m.accelerate_site) {
            // A size constraint of accelerated code: checked in debug mode.
            let a = test(m, fr)?;
            let b = expected(m, fr)?;
            if a.as_int() != b.as_int() {
                return Err(m.fail(
                    format!(
                        "Size constraint violated: a size of `{param}` is {} where {} is required (the utest at {})",
                        a.as_int(),
                        b.as_int(),
                        crate::io::locate(span)
                    ),
                    site,
                ));
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

fn indices(m: &mut Machine, fr: &Frame, index: &[Thunk]) -> Res<SmallVec<[i64; 4]>> {
    let mut ix: SmallVec<[i64; 4]> = SmallVec::new();
    for c in index {
        ix.push(c(m, fr)?.as_int());
    }
    Ok(ix)
}

/// `tensorGetExn t [i, ..]`: the tensor is borrowed from its slot when it
/// is a variable (no reference count traffic per access).
fn tensor_get(t: Code, index: Box<[Code]>, span: pmx_ast::Span) -> Thunk {
    let index = thunks(index);
    if let Some(p) = place(&t) {
        return Box::new(move |m, fr| {
            let ix = indices(m, fr, &index)?;
            let r = borrowed(m, fr, p).as_tensor().get(&ix);
            r.map_err(|e| m.fail(e, span))
        });
    }
    let t = thunk(t);
    Box::new(move |m, fr| {
        let tv = t(m, fr)?;
        let ix = indices(m, fr, &index)?;
        tv.as_tensor().get(&ix).map_err(|e| m.fail(e, span))
    })
}

fn tensor_set(t: Code, v: Code, index: Box<[Code]>, span: pmx_ast::Span) -> Thunk {
    let index = thunks(index);
    let v = thunk(v);
    if let Some(p) = place(&t) {
        return Box::new(move |m, fr| {
            let ix = indices(m, fr, &index)?;
            let x = v(m, fr)?;
            let r = borrowed(m, fr, p).as_tensor().set(&ix, x);
            r.map_err(|e| m.fail(e, span))?;
            Ok(Value::unit())
        });
    }
    let t = thunk(t);
    Box::new(move |m, fr| {
        let tv = t(m, fr)?;
        let ix = indices(m, fr, &index)?;
        let x = v(m, fr)?;
        tv.as_tensor().set(&ix, x).map_err(|e| m.fail(e, span))?;
        Ok(Value::unit())
    })
}

/// Compiled code returning `T`: a value ([`Thunk`]) or, in tail
/// position, how the function body ends ([`TailThunk`]).
type Compiled<T> = Box<dyn Fn(&mut Machine, &Frame) -> Res<T> + Send + Sync>;

/// The forms that pass control on to a sub-expression in the same
/// position (`let`, `recursive`, `if`, `match`), compiled with `next` for
/// that position: [`thunk`] or [`tail`].
fn continuation<T: 'static>(code: Code, next: fn(Code) -> Compiled<T>) -> Result<Compiled<T>, Code> {
    Ok(match code {
        Code::Let(slot, value, body) => {
            let (slot, value, body) = (slot as usize, thunk(*value), next(*body));
            Box::new(move |m, fr| {
                let v = value(m, fr)?;
                m.stack[fr.bp + slot] = v;
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
            let (c, t, o) = (cond(op, x, y), next(t), next(o));
            Box::new(move |m, fr| if c(m, fr)? { t(m, fr) } else { o(m, fr) })
        }
        Code::Match(scrutinee, pat, then, otherwise) => {
            let (s, t, o) = (thunk(*scrutinee), next(*then), next(*otherwise));
            Box::new(move |m, fr| {
                let v = s(m, fr)?;
                if m.matches(&pat, &v, fr) {
                    t(m, fr)
                } else {
                    o(m, fr)
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
        Code::App(f, args, span) => app(*f, args, span),
        Code::Prim(b, args, span) => {
            let args = thunks(args);
            Box::new(move |m, fr| {
                let argv = collect_args(m, fr, &args)?;
                crate::builtins::call(m, b, argv, span)
            })
        }
        Code::Bin(op, x, y, span) => bin(op, *x, *y, span),
        Code::TensorGet(t, index, span) => tensor_get(*t, index, span),
        Code::TensorSet(parts, index, span) => tensor_set(parts.0, parts.1, index, span),
        Code::CellGet(cell) => {
            let cell = thunk(*cell);
            Box::new(move |m, fr| match cell(m, fr)? {
                Value::Ref(r) => Ok(r.lock().unwrap_or_else(|e| e.into_inner()).clone()),
                _ => unreachable!("recursion cells are references"),
            })
        }
        Code::Seq(items) => {
            let items = thunks(items);
            Box::new(move |m, fr| {
                let mut values = Vec::with_capacity(items.len());
                for i in items.iter() {
                    values.push(i(m, fr)?);
                }
                Ok(Value::seq(Seq::from_values(values)))
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
                let Value::Record(r) = record(m, fr)? else { unreachable!("type checking: a record") };
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
                let Value::Record(r) = record(m, fr)? else { unreachable!("type checking: a record") };
                Ok(r.get(&label).cloned().expect("type checking: the field exists"))
            })
        }
        Code::ConApp(tag, name, arg) => {
            let arg = thunk(*arg);
            Box::new(move |m, fr| {
                let a = arg(m, fr)?;
                Ok(Value::Con(Arc::new(ConValue { tag, name: name.clone(), arg: a })))
            })
        }
        Code::Never(span) => Box::new(move |m, _| {
            Err(m.fail("Reached a never term, which should be impossible (no pattern matched)", span))
        }),
        Code::Utest(u, body) => utest_thunk(*u, Some(thunk(*body))),
        Code::Accelerate(body, checks, span) => {
            let body = thunk(*body);
            let checks: Vec<(pmx_ast::SmolStr, Thunk, CheckKind)> =
                checks.into_vec().into_iter().map(|c| (c.name, thunk(c.value), c.kind)).collect();
            Box::new(move |m, fr| {
                if m.shared.options.debug {
                    // Regularity matters to Futhark code only.
                    let futhark = match &m.shared.options.futhark_accelerates {
                        Some(spans) => spans.contains(&span),
                        None => true,
                    };
                    for (name, value, kind) in &checks {
                        if *kind == CheckKind::Regular && !futhark {
                            continue;
                        }
                        let v = value(m, fr)?;
                        if let Err(e) = crate::checks::check(*kind, &v, m.shared.options.tensor_max_rank) {
                            return Err(m.fail(format!("{e} (in the value of `{name}` passed to accelerate)"), span));
                        }
                    }
                }
                let saved = std::mem::replace(&mut m.accelerated, true);
                let site = m.accelerate_site.replace(span);
                let r = body(m, fr);
                m.accelerated = saved;
                m.accelerate_site = site;
                r
            })
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
        Err(other) => {
            let t = thunk(other);
            Box::new(move |m, fr| Ok(Flow::Ret(t(m, fr)?)))
        }
    }
}
