//! The CPU backend: evaluates typed MExpr programs.
//!
//! [`run`] compiles the typed modules of a program (in load order) to
//! [`code::Code`], in which every variable is resolved to a frame slot, a
//! captured value or a global, then runs the top-level steps in order and,
//! last, the `mexpr` body. Utests run only in test mode. Inside
//! `accelerate`, the parallel keywords run on rayon's threads, except in
//! debug mode, where everything is sequential and the values crossing each
//! `accelerate` boundary are checked (tensor ranks, regular sequences).
//!
//! Invariants: evaluation never panics out of [`run`]; every failure
//! (division by zero, an index out of bounds, `error`, an incomplete
//! match, too deep a recursion, memory the system refuses for a sequence,
//! tensor or buffer) is a [`RuntimeError`] with the span of the failing
//! expression and the calls that led there. A panic inside pmx (a bug) is
//! caught too and becomes an error of [`ErrorKind::Internal`] at the
//! source location being evaluated (`error.rs`). Run it on a thread with a
//! large stack (the driver's `with_stack`); parallel threads get a stack as
//! large.

pub mod accelerate;
mod accumulations;
pub mod ad;
mod buffer;
mod builtins;
mod call;
mod checks;
pub mod code;
mod compile;
mod error;
mod eval;
mod floats;
pub mod io;
pub mod native;
mod prim;
mod scalar;
mod show;
pub mod tensor;
mod thunk;
pub mod value;

pub use accelerate::{Accelerated, CallStats, Checked, Engine, Interpreter, Registered, Site};
pub use accumulations::Accumulations;
/// What `tensorCreate*` does before and per element, for native code that
/// computes the elements itself.
pub use builtins::tensor::{index_of as tensor_index_of, shape as tensor_shape};
pub use compile::{builtin_arity, compile_program};
pub use error::{
    alloc_vec, evaluating, payload_text, record_panic, type_confusion, ErrorKind, Res, RuntimeError, INTERNAL_PREFIX,
};
pub use eval::{Args, Machine};
pub use native::{Native, Natives};
pub use show::{float2string, show};
pub use thunk::never_message;

use eval::Shared;
use pmx_ast::Module;
use std::sync::Arc;

#[derive(Clone, Debug)]
pub struct Options {
    /// Debug mode: accelerated code runs sequentially, with boundary checks.
    pub debug: bool,
    /// Which utests run.
    pub utests: UtestFiles,
    /// The largest tensor rank accelerated code accepts.
    pub tensor_max_rank: usize,
    /// The program's arguments, its file name first.
    pub argv: Vec<String>,
    /// Debug mode only: run every `loop` in accelerated code in several
    /// iteration orders, and every `reduce` with two bracketings, and fail
    /// where the result depends on the order.
    pub check_order: bool,
    /// The accumulations of accelerated code (`accumulations.rs`).
    pub accumulations: Arc<Accumulations>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            debug: false,
            utests: UtestFiles::None,
            tensor_max_rank: 3,
            argv: Vec::new(),
            check_order: false,
            accumulations: Arc::default(),
        }
    }
}

/// The files whose utests run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UtestFiles {
    None,
    Only(pmx_ast::FileId),
    All,
}

impl UtestFiles {
    pub fn includes(self, span: pmx_ast::Span) -> bool {
        match self {
            UtestFiles::None => false,
            UtestFiles::Only(f) => span.file == f,
            UtestFiles::All => true,
        }
    }
}

/// Built-in `b` applied to all its arguments, none a function, as the
/// interpreter applies it (the one implementation of the built-ins, which
/// native host code calls too); a panic inside becomes a located error.
pub fn call_builtin(m: &mut Machine, b: pmx_ast::Builtin, args: Args, span: pmx_ast::Span) -> Res<value::Value> {
    builtins::call(m, b, args, span)
}

/// Records one utest as the interpreter does (`eq`: the `using` function
/// and how the failure message names it; `on_fail`: the `else`
/// function): for native host code.
pub fn utest(
    m: &mut Machine,
    a: value::Value,
    b: value::Value,
    eq: Option<(value::Value, &str)>,
    on_fail: Option<value::Value>,
    span: pmx_ast::Span,
) -> Res<()> {
    m.utest(a, b, eq, on_fail, span)
}

/// The located error that an unwinding payload stands for (memory the
/// system refused, a bug), as the evaluator reports it: for code that
/// catches unwinding itself (native host code's runtime calls).
pub fn error_of_panic(payload: Box<dyn std::any::Any + Send>, span: pmx_ast::Span) -> RuntimeError {
    *error::from_panic(payload, span, false)
}

/// The exit code after an internal error (a bug in pmx): Rust's own for a
/// panic, so that scripts and tests tell it apart from a program's error.
pub const INTERNAL_ERROR_EXIT: i32 = 101;

/// How a run ended.
pub struct Outcome {
    /// 0, the code given to `exit`, 1 after a run-time error, or
    /// [`INTERNAL_ERROR_EXIT`] after an internal one.
    pub exit_code: i32,
    pub error: Option<RuntimeError>,
    pub passed: usize,
    pub failed: usize,
}

/// Compiles and runs a program; `modules` in load order, the main file last;
/// `accelerated`: its accelerate sites as the middle end described them
/// (without it, each `accelerate` body runs in place, unchecked).
///
/// A panic inside pmx while the program runs (a bug, or a value of the
/// wrong type after `unsafeCoerce`) and memory the system refuses end the
/// run with an error at the source location being evaluated, as any
/// run-time error does; [`RuntimeError::kind`] tells a bug apart.
pub fn run(modules: &[&Module], accelerated: Option<&Accelerated>, options: Options) -> Outcome {
    run_with(modules, accelerated, options, &Natives::default())
}

/// [`run`], with the top-level functions in `natives` called as machine
/// code (the native host tier's).
pub fn run_with(
    modules: &[&Module],
    accelerated: Option<&Accelerated>,
    options: Options,
    natives: &Natives,
) -> Outcome {
    let _evaluating = error::Evaluating::start();
    builtins::parallel::use_this_stack_for_workers();
    let (program, sites) = compile_program(modules, accelerated, natives, &options.accumulations.float_sets);
    let shared = Arc::new(Shared::new(program, options, sites));
    let mut machine = Machine::new(shared.clone());
    let mut outcome = Outcome { exit_code: 0, error: None, passed: 0, failed: 0 };
    for (step, &place) in shared.program.steps.iter().zip(&shared.program.places) {
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| machine.run_step(step)))
            .unwrap_or_else(|payload| Err(error::from_panic(payload, place, shared.coerced())));
        if let Err(e) = result {
            match e.exit {
                Some(code) => outcome.exit_code = code,
                None => {
                    outcome.exit_code = if e.kind == ErrorKind::Internal { INTERNAL_ERROR_EXIT } else { 1 };
                    outcome.error = Some(*e);
                }
            }
            break;
        }
    }
    io::flush();
    let tally = shared.tests.lock().unwrap_or_else(|e| e.into_inner());
    outcome.passed = tally.passed;
    outcome.failed = tally.failed;
    outcome
}
