//! The compiler driver: a salsa database and the queries of the front end.
//!
//! Inputs are [`SourceFile`]s (a path and its text), created lazily as
//! includes are followed. Queries, each memoised per file:
//! [`parse_file`] (text → AST with syntax errors), [`file_includes`]
//! (include paths → files), [`desugared`] (MLang to MExpr, given the
//! languages of the included files, [`language_exports`]), [`check_file`] (names and types, given the
//! exports of the included files), [`name_exports`] and [`type_exports`]
//! (what a file gives the files that include it, compared after each edit
//! so that unchanged exports stop the re-checking), [`file_diagnostics`]; and
//! per program: [`program_files`] (every file in load order) and
//! [`program_diagnostics`], which adds what [`accelerate_analysis`] (the
//! accelerate passes) finds. Editing one file's text re-runs only what
//! depends on it.
//!
//! Invariants: no query fails or panics on bad input; every problem is a
//! diagnostic. Include cycles are cut before any query recurses along them,
//! so queries never form a cycle. The front end recurses as deep as the
//! program nests, so run it with [`with_stack`].

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

mod db;
mod freed;
mod includes;
mod mlang;
mod parse_cache;
mod prefetch;
mod program;
mod queries;
mod stdlib_hint;

pub use db::{normalize, Database, Db, Disk, SourceFile};
pub use includes::{file_includes, IncludeTarget};
pub use mlang::{desugared, language_exports, plain_module};
pub use parse_cache::ParseCache;
pub use prefetch::prefetch;
pub use program::{checked_in, program_checks, program_modules, ProgramChecks};
pub use queries::{
    accelerate_analysis, check_file, current_parse, file_diagnostics, front_end_diagnostics, name_exports, parse_file,
    program_diagnostics, program_files, type_exports, CheckedFile,
};

/// The stack the front end needs for the deepest program it accepts.
pub const STACK_SIZE: usize = 1 << 30;

/// The smallest stack [`with_stack`] starts a thread with; below it, the
/// calling thread's own stack is used.
const MIN_STACK: usize = 8 << 20;

/// The stack of the threads the front end starts: [`STACK_SIZE`], or what
/// [`with_stack`] could get when the system refused that (a memory limit
/// such as `ulimit -v` counts reserved stacks).
pub fn stack_size() -> usize {
    STACK_IN_USE.load(Ordering::Relaxed)
}

static STACK_IN_USE: AtomicUsize = AtomicUsize::new(STACK_SIZE);

/// Runs `f` on a thread with a stack of [`STACK_SIZE`] bytes (reserved,
/// not committed: only the pages a deep program touches are used). When
/// the system refuses a stack that large, smaller ones are tried, and last
/// the calling thread's own; the syntax pass's depth limit is lowered to
/// what the stack holds, so that deeper programs are reported, not
/// overflowing.
pub fn with_stack<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    // The job stays here until a thread starts and takes it: a thread that
    // cannot start drops only its closure, which borrows the job.
    let job = Mutex::new(Some(f));
    let take = || job.lock().unwrap_or_else(|e| e.into_inner()).take().expect("the job runs once");
    let mut size = STACK_SIZE;
    while size >= MIN_STACK {
        use_stack_size(size);
        let ran = std::thread::scope(|s| {
            let handle =
                std::thread::Builder::new().name("pmx-compiler".into()).stack_size(size).spawn_scoped(s, || take()());
            handle.ok().map(|h| h.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
        });
        if let Some(result) = ran {
            return result;
        }
        size /= 4;
    }
    // No thread at all: this one, with the limit for what is left of it.
    use_stack_size(stacker::remaining_stack().unwrap_or(MIN_STACK).saturating_sub(MIN_STACK / 8));
    take()()
}

/// Records the stack the front end runs with and lowers the depth limit
/// to match.
fn use_stack_size(bytes: usize) {
    STACK_IN_USE.store(bytes, Ordering::Relaxed);
    pmx_syntax::set_stack_size(bytes);
}
