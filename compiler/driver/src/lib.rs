//! The compiler driver: a salsa database and the queries of the front end.
//!
//! Inputs are [`SourceFile`]s (a path and its text), created lazily as
//! includes are followed. Queries, each memoised per file:
//! [`parse_file`] (text → AST with syntax errors), [`file_includes`]
//! (include paths → files), [`check_file`] (names and types, given the
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

mod db;
mod includes;
mod prefetch;
mod queries;

pub use db::{normalize, Database, Db, Disk, SourceFile};
pub use includes::{file_includes, IncludeTarget};
pub use prefetch::prefetch;
pub use queries::{
    accelerate_analysis, check_file, current_parse, file_diagnostics, front_end_diagnostics, name_exports, parse_file,
    program_diagnostics, program_files, type_exports, CheckedFile,
};

/// The stack the front end needs for the deepest program it accepts.
pub const STACK_SIZE: usize = 1 << 30;

/// Runs `f` on a thread with a stack of [`STACK_SIZE`] bytes (reserved,
/// not committed: only the pages a deep program touches are used).
pub fn with_stack<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|s| {
        std::thread::Builder::new()
            .name("pmx-compiler".into())
            .stack_size(STACK_SIZE)
            .spawn_scoped(s, f)
            .expect("cannot start the compiler thread")
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
}
