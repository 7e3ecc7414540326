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

pub use compile::{builtin_arity, compile_program};
pub use error::RuntimeError;
pub use show::{float2string, show};

use eval::{Machine, Shared, TestTally};
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
    /// The `accelerate` expressions (by span) that the Futhark backend
    /// compiles: their nested-sequence arguments must be regular. `None`:
    /// not known, check every one.
    pub futhark_accelerates: Option<Vec<pmx_ast::Span>>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            debug: false,
            utests: UtestFiles::None,
            tensor_max_rank: 3,
            argv: Vec::new(),
            check_order: false,
            futhark_accelerates: None,
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

/// How a run ended.
pub struct Outcome {
    /// 0, the code given to `exit`, or 1 after a run-time error.
    pub exit_code: i32,
    pub error: Option<RuntimeError>,
    pub passed: usize,
    pub failed: usize,
}

/// Compiles and runs a program; `modules` in load order, the main file last.
pub fn run(modules: &[&Module], options: Options) -> Outcome {
    let program = compile_program(modules);
    let globals = (0..program.globals).map(|_| OnceLock::new()).collect();
    let shared = Arc::new(Shared { program, globals, options, tests: Mutex::new(TestTally::default()) });
    let mut machine = Machine::new(shared.clone());
    let mut outcome = Outcome { exit_code: 0, error: None, passed: 0, failed: 0 };
    for step in &shared.program.steps {
        // A well-typed program never makes the evaluator meet a value of an
        // unexpected type (its accessors panic then); `unsafeCoerce` or a
        // bug in pmx can. Such a panic becomes an error at the top-level
        // declaration being evaluated, with a request to report it.
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| machine.run_step(step)))
            .unwrap_or_else(|_| Err(Box::new(internal_error(modules, &shared.program, step))));
        if let Err(e) = result {
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

/// The error for a panic of the evaluator while it ran `step`: located at
/// that top-level declaration (the last one of that name: steps keep only
/// names), or at the `mexpr` body.
fn internal_error(modules: &[&Module], program: &code::Program, step: &code::StepThunk) -> RuntimeError {
    let main_span = || {
        let last = modules.last();
        let main = last.and_then(|m| m.main.as_ref()).map(|e| e.span);
        main.or_else(|| last.and_then(|m| m.items.last()).map(|i| i.span())).unwrap_or(pmx_ast::Span::new(
            pmx_ast::FileId::BUILTIN,
            0,
            0,
        ))
    };
    let span = match step {
        code::StepThunk::Utest { span, .. } => *span,
        code::StepThunk::Main { .. } => main_span(),
        code::StepThunk::Define { global, .. } => {
            let name = program.global_names.get(*global as usize);
            let mut items = modules.iter().rev().flat_map(|m| m.items.iter().rev());
            let bound = |item: &pmx_ast::Item| match item {
                pmx_ast::Item::Let(b) => Some(&b.name.text) == name,
                pmx_ast::Item::RecLets(bs, _) => bs.iter().any(|b| Some(&b.name.text) == name),
                pmx_ast::Item::External(d) => Some(&d.name.text) == name,
                _ => false,
            };
            items.find(|i| bound(i)).map(|i| i.span()).unwrap_or_else(main_span)
        }
    };
    RuntimeError {
        message: "internal error: the evaluator met a value of an unexpected type while evaluating this \
                  declaration. Unless the program uses `unsafeCoerce`, this is a bug in pmx: please report it \
                  with the program"
            .into(),
        span,
        trace: Vec::new(),
        omitted: 0,
        exit: None,
    }
}
