//! Saturated calls of the most used sequence built-ins, compiled to code
//! that evaluates the arguments and computes, without collecting the
//! arguments in a vector and dispatching on the built-in at run time.

use crate::code::{Code, Thunk};
use crate::scalar::{operand, Operand};
use crate::thunk::thunk;
use crate::value::Value;
use pmx_ast::{Builtin, Span};

/// Direct code for `b` applied to exactly `args`, for the built-ins that
/// have it; otherwise the arguments back.
pub fn direct(b: Builtin, args: Box<[Code]>, span: Span) -> Result<Thunk, Box<[Code]>> {
    if b == Builtin::Get {
        return Ok(get(args, span));
    }
    if !matches!(b, Builtin::Snoc | Builtin::Cons | Builtin::Length | Builtin::Null) {
        return Err(args);
    }
    let mut args = args.into_vec().into_iter().map(thunk);
    let mut next = move || args.next().expect("the built-in's arity");
    Ok(match b {
        Builtin::Snoc => {
            let (s, x) = (next(), next());
            Box::new(move |m, fr| {
                let s = s(m, fr)?;
                let x = x(m, fr)?;
                m.check_joins(&x, &s, span)?;
                Ok(Value::seq(s.as_seq().snoc(x)))
            })
        }
        Builtin::Cons => {
            let (x, s) = (next(), next());
            Box::new(move |m, fr| {
                let x = x(m, fr)?;
                let s = s(m, fr)?;
                m.check_joins(&x, &s, span)?;
                Ok(Value::seq(s.as_seq().cons(x)))
            })
        }
        Builtin::Length => {
            let s = next();
            Box::new(move |m, fr| Ok(Value::Int(s(m, fr)?.as_seq().len() as i64)))
        }
        Builtin::Null => {
            let s = next();
            Box::new(move |m, fr| Ok(Value::Bool(s(m, fr)?.as_seq().is_empty())))
        }
        _ => unreachable!("checked above"),
    })
}

/// `get s i`. A sequence in a variable is read where it is, without
/// counting a reference to it (evaluating the index cannot rebind the
/// variable: slots are unique per variable).
fn get(args: Box<[Code]>, span: Span) -> Thunk {
    let [s, i]: [Code; 2] = args.into_vec().try_into().unwrap_or_else(|_| unreachable!("two arguments"));
    let i: Operand<i64> = operand(i);
    if let Code::Local(slot) = s {
        let slot = slot as usize;
        return Box::new(move |m, fr| {
            let i = i.eval(m, fr)?;
            let n = m.stack[fr.bp + slot].as_seq().len();
            let i = crate::builtins::seq::index(m, i, n, span)?;
            Ok(m.stack[fr.bp + slot].as_seq().get(i))
        });
    }
    let s = thunk(s);
    Box::new(move |m, fr| {
        let s = s(m, fr)?;
        let i = i.eval(m, fr)?;
        let seq = s.as_seq();
        let i = crate::builtins::seq::index(m, i, seq.len(), span)?;
        Ok(seq.get(i))
    })
}
