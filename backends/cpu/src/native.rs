//! Top-level functions compiled to machine code by the native host tier
//! (`pmx-host`), which the interpreter calls as it calls its own closures:
//! a native function is a closure of the program whose body hands the
//! frame's arguments to the machine code. The interpreter knows nothing
//! of how it was compiled; the host tier knows nothing of frames.

use crate::code::{Code, LamCode};
use crate::error::Res;
use crate::eval::{Flow, Machine};
use crate::value::Value;
use pmx_ast::{NameId, SmolStr, Span};
use rustc_hash::FxHashMap;
use std::sync::Arc;

/// Calls the machine code with the function's arguments (as many as its
/// arity). A failure is an error located in the program, with the calls
/// made inside native code in its trace; the interpreter adds the call
/// that entered it, as for its own functions.
pub type NativeCall = dyn Fn(&mut Machine, &[Value]) -> Res<Value> + Send + Sync;

pub struct Native {
    pub arity: usize,
    pub call: Box<NativeCall>,
}

/// The native functions of a run, by the top-level binding they replace.
pub type Natives = FxHashMap<NameId, Arc<Native>>;

/// The closure code of a native function bound to `name` at `span`.
pub(crate) fn code(native: &Arc<Native>, name: &SmolStr, span: Span) -> Code {
    Code::Lam(Arc::new(lam(native, name, span)), Box::new([]))
}

fn lam(native: &Arc<Native>, name: &SmolStr, span: Span) -> LamCode {
    let arity = native.arity;
    let n = native.clone();
    let body: crate::code::TailThunk = Box::new(move |m, fr| {
        // Moved out of the frame, which nothing reads again (its slots
        // are the parameters): no count is bumped.
        let args: smallvec::SmallVec<[Value; 4]> =
            m.stack[fr.bp..fr.bp + arity].iter_mut().map(|v| std::mem::replace(v, Value::Int(0))).collect();
        (n.call)(m, &args).map(Flow::Ret)
    });
    LamCode { name: name.clone(), arity, slots: arity, body, span }
}

/// A function value that calls native function `native` (named `name`
/// in traces, defined at `span`): what native code makes of one of its
/// functions when it passes, stores or returns it.
pub fn closure(native: &Arc<Native>, name: &SmolStr, span: Span) -> Value {
    // Closures refer to their code for the whole run (`Closure::code`):
    // this one is made once per native function that native code makes
    // values of, when the program is compiled, and lives for the process.
    let code: &'static LamCode = Box::leak(Box::new(lam(native, name, span)));
    Value::Closure(Arc::new(crate::value::Closure { code, env: Box::new([]) }))
}
