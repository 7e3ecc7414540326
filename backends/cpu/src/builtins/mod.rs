//! The built-in constants, with the semantics of section 2 of the
//! reference (and of Miking where it is silent). Every failure is a
//! run-time error at the call's span; nothing panics.

mod externals;
mod order;
pub(crate) mod parallel;
pub(crate) mod seq;
mod system;
pub(crate) mod tensor;

use crate::error::Res;
use crate::eval::{Args, Machine};
use crate::value::{ExternFn, Value};
use pmx_ast::{Builtin, Span};
use std::sync::Arc;

/// Calls a built-in with exactly its number of arguments. Unwinding out of
/// it (memory the system refuses, a bug) becomes an error at the call.
pub fn call(m: &mut Machine, b: Builtin, args: Args, span: Span) -> Res<Value> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| call_unguarded(m, b, args, span))) {
        Ok(r) => r,
        Err(payload) => Err(crate::error::from_panic(payload, span, m.shared.coerced())),
    }
}

fn call_unguarded(m: &mut Machine, b: Builtin, args: Args, span: Span) -> Res<Value> {
    use Builtin::*;
    if crate::ad::sees(b, &args) {
        return crate::ad::builtin(m, b, args, span);
    }
    let a = &args;
    Ok(match b {
        Addi => Value::Int(a[0].as_int().wrapping_add(a[1].as_int())),
        Subi => Value::Int(a[0].as_int().wrapping_sub(a[1].as_int())),
        Muli => Value::Int(a[0].as_int().wrapping_mul(a[1].as_int())),
        Divi | Modi => {
            let (x, y) = (a[0].as_int(), a[1].as_int());
            if y == 0 {
                return Err(m.fail("Division by zero", span));
            }
            // Truncation toward zero, as OCaml.
            Value::Int(if b == Divi { x.wrapping_div(y) } else { x.wrapping_rem(y) })
        }
        Negi => Value::Int(a[0].as_int().wrapping_neg()),
        // A count of 64 or more, or a negative one, shifts every bit out
        // (OCaml leaves it unspecified; x86-64 would take it modulo 64 and
        // make `slli 1 64` 1). See README, "Differences from Miking".
        Slli => Value::Int(shift_count(a[1].as_int()).map_or(0, |n| a[0].as_int() << n)),
        Srli => Value::Int(shift_count(a[1].as_int()).map_or(0, |n| ((a[0].as_int() as u64) >> n) as i64)),
        Srai => {
            let x = a[0].as_int();
            Value::Int(x >> shift_count(a[1].as_int()).unwrap_or(63))
        }
        Eqi => Value::Bool(a[0].as_int() == a[1].as_int()),
        Neqi => Value::Bool(a[0].as_int() != a[1].as_int()),
        Lti => Value::Bool(a[0].as_int() < a[1].as_int()),
        Gti => Value::Bool(a[0].as_int() > a[1].as_int()),
        Leqi => Value::Bool(a[0].as_int() <= a[1].as_int()),
        Geqi => Value::Bool(a[0].as_int() >= a[1].as_int()),
        Addf => Value::Float(a[0].as_float() + a[1].as_float()),
        Subf => Value::Float(a[0].as_float() - a[1].as_float()),
        Mulf => Value::Float(a[0].as_float() * a[1].as_float()),
        Divf => Value::Float(a[0].as_float() / a[1].as_float()),
        Negf => Value::Float(-a[0].as_float()),
        Eqf => Value::Bool(a[0].as_float() == a[1].as_float()),
        Neqf => Value::Bool(a[0].as_float() != a[1].as_float()),
        Ltf => Value::Bool(a[0].as_float() < a[1].as_float()),
        Gtf => Value::Bool(a[0].as_float() > a[1].as_float()),
        Leqf => Value::Bool(a[0].as_float() <= a[1].as_float()),
        Geqf => Value::Bool(a[0].as_float() >= a[1].as_float()),
        Int2float => Value::Float(a[0].as_int() as f64),
        Floorfi => Value::Int(a[0].as_float().floor() as i64),
        Ceilfi => Value::Int(a[0].as_float().ceil() as i64),
        Roundfi => Value::Int(a[0].as_float().round() as i64),
        Char2int => Value::Int(a[0].as_char() as i64),
        Int2char => {
            let i = a[0].as_int();
            match u32::try_from(i).ok().and_then(char::from_u32) {
                Some(c) => Value::Char(c),
                None => return Err(m.fail(format!("int2char: {i} is not the code of a character"), span)),
            }
        }
        Eqc => Value::Bool(a[0].as_char() == a[1].as_char()),
        Float2string => Value::string(&crate::show::float2string(a[0].as_float())),
        String2float => {
            let s = a[0].as_string();
            match parse_float(&s) {
                Some(f) => Value::Float(f),
                None => return Err(m.fail(format!("string2float: \"{s}\" is not a float"), span)),
            }
        }
        StringIsFloat => Value::Bool(parse_float(&a[0].as_string()).is_some()),
        Ref => Value::Ref(Arc::new(std::sync::Mutex::new(a[0].clone()))),
        Deref => match &a[0] {
            Value::Ref(r) => r.lock().unwrap_or_else(|e| e.into_inner()).clone(),
            _ => crate::error::type_confusion("a reference"),
        },
        Modref => match &a[0] {
            Value::Ref(r) => {
                *r.lock().unwrap_or_else(|e| e.into_inner()) = a[1].clone();
                Value::unit()
            }
            _ => crate::error::type_confusion("a reference"),
        },
        ConstructorTag => match &a[0] {
            Value::Con(c) => Value::Int(c.tag.index as i64),
            _ => Value::Int(0),
        },
        UnsafeCoerce => {
            m.shared.coerced.store(true, std::sync::atomic::Ordering::Relaxed);
            a[0].clone()
        }
        PrintFloat => {
            crate::io::out(&crate::show::float2string(a[0].as_float()));
            Value::unit()
        }
        Accelerate => a[0].clone(),
        Vjp | Jvp | Grad => return crate::ad::call(m, b, args, span),
        Create | CreateList | CreateRope | IsList | IsRope | Length | Concat | Get | Set | Cons | Snoc | SplitAt
        | Reverse | Head | Tail | Null | Map | ParallelMap | Mapi | Iter | Iteri | Foldl | Foldr | Subsequence
        | Map2 | Reduce | Flatten | Loop | SeqLoop | SeqLoopAcc => return seq::call(m, b, args, span),
        Print | PrintError | Dprint | FlushStdout | FlushStderr | ReadLine | ReadBytesAsString | ReadFile
        | WriteFile | FileExists | DeleteFile | Argv | Command | Exit | Error | RandIntU | RandSetSeed | WallTimeMs
        | SleepMs | Eqsym | Gensym | Sym2hash => return system::call(m, b, args, span),
        // The rest are the tensor built-ins (`Builtin::is_tensor`, the
        // table's list); `tensor::call` refuses any other.
        _ => return tensor::call(m, b, args, span),
    })
}

/// A shift count below 64, the ones that keep some bits.
fn shift_count(n: i64) -> Option<u32> {
    u32::try_from(n).ok().filter(|&n| n < 64)
}

/// OCaml's `float_of_string` on the forms MExpr programs use.
fn parse_float(s: &str) -> Option<f64> {
    let t = s.trim();
    if t.is_empty() {
        return None;
    }
    t.replace('_', "").parse::<f64>().ok()
}

pub use externals::ExternCode;

/// The value of an `external` declaration: its value for a value-typed
/// external (`stdin`), else a function (which fails when called if pmx
/// does not implement it; `pmx check` reports those first).
pub fn external(name: &str) -> Value {
    if let Some(v) = externals::value(name) {
        return v;
    }
    let (arity, run) = match externals::function(name) {
        Some((arity, code)) => (arity, Some(code)),
        None => (0, None),
    };
    Value::External(Arc::new(ExternFn { name: name.into(), arity, run }))
}
