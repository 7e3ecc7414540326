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
//! Invariants: evaluation never panics on a well-typed program; every
//! failure (division by zero, an index out of bounds, `error`, an
//! incomplete match, too deep a recursion) is a [`RuntimeError`] with the
//! span of the failing expression and the calls that led there. Run it on
//! a thread with a large stack (the driver's `with_stack`).

pub mod accelerate;
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
mod prim;
mod scalar;
mod show;
pub mod tensor;
mod thunk;
pub mod value;

pub use accelerate::{Accelerated, Engine, Interpreter, Site};
pub use compile::{builtin_arity, compile_program};
pub use error::{Res, RuntimeError};
pub use eval::{Args, Machine};
pub use show::{float2string, show};

use eval::{Shared, TestTally};
use pmx_ast::Module;
use std::sync::{Arc, Mutex, OnceLock};

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
}

impl Default for Options {
    fn default() -> Self {
        Options { debug: false, utests: UtestFiles::None, tensor_max_rank: 3, argv: Vec::new(), check_order: false }
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

/// How a run ended.
pub struct Outcome {
    /// 0, the code given to `exit`, or 1 after a run-time error.
    pub exit_code: i32,
    pub error: Option<RuntimeError>,
    pub passed: usize,
    pub failed: usize,
}

/// Compiles and runs a program; `modules` in load order, the main file last;
/// `accelerated`: its accelerate sites as the middle end described them
/// (without it, each `accelerate` body runs in place, unchecked).
pub fn run(modules: &[&Module], accelerated: Option<&Accelerated>, options: Options) -> Outcome {
    let (program, sites) = compile_program(modules, accelerated);
    let globals = (0..program.globals).map(|_| OnceLock::new()).collect();
    let shared = Arc::new(Shared { program, globals, options, tests: Mutex::new(TestTally::default()), sites });
    let mut machine = Machine::new(shared.clone());
    let mut outcome = Outcome { exit_code: 0, error: None, passed: 0, failed: 0 };
    for step in &shared.program.steps {
        if let Err(e) = machine.run_step(step) {
            match e.exit {
                Some(code) => outcome.exit_code = code,
                None => {
                    outcome.exit_code = 1;
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
