//! The seam every code generator plugs into: a lowered [`Program`] in; the
//! generated artifact (with each entry's ABI) or the constructs it does
//! not take ([`Unsupported`], located) out. The Futhark and CUDA
//! generators implement [`Generator`]; the CLI's engine table
//! (`src/engines.rs`) lowers a class of bindings once, generates once
//! through this interface, and hands the artifact to the builders of that
//! class's engines, which implement `pmx_cpu::Engine`, the runtime's one
//! dispatch point. The native host tier (`pmx-host`) reports what it does
//! not take with the same [`Unsupported`].

use crate::Program;
use pmx_ast::{NameId, Span};

/// A construct a generator does not take, where (plain data: the CLI says
/// it, with `--target auto` the bindings then run in the interpreter).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unsupported {
    pub span: Span,
    pub message: String,
}

/// What a program is generated for, the same for every generator.
#[derive(Clone, Copy)]
pub struct Options<'a> {
    /// Whether the utest at a span runs and counts (`pmx test`: those of
    /// the main file, or all with `--all-utests`; `pmx run`: none). A size
    /// constraint is checked either way.
    pub utests: &'a dyn Fn(Span) -> bool,
    /// `false` (`--unchecked`): the generated code drops its run-time
    /// checks (bounds, sizes, division by zero, utests, `error`); code
    /// that would fail there gives unspecified results instead.
    pub checked: bool,
}

impl Options<'_> {
    /// As `pmx run` runs it: no utest runs; checked.
    pub const RUN: Options<'static> = Options { utests: &|_| false, checked: true };
}

/// A code generator over the lowered IR.
pub trait Generator {
    /// The generated program and its entries' ABI.
    type Output: Generated;
    /// The class of accelerate bindings it compiles: the program it takes
    /// is `pmx_lower::lower(analysis, BACKEND)`.
    const BACKEND: pmx_accelerate::Backend;
    /// The program of `p`, or every construct it does not take; `locate`
    /// writes a span as `file:line:column` (for comments in the output).
    fn generate(
        &self,
        p: &Program,
        locate: &dyn Fn(Span) -> String,
        options: &Options,
    ) -> Result<Self::Output, Vec<Unsupported>>;
}

/// What every generated artifact tells the engines that run it.
pub trait Generated {
    /// The generated source, as written to disk and hashed for the cache.
    fn source(&self) -> &str;
    /// The accelerate bindings (`Boundary::id`) with an entry, in order.
    fn bindings(&self) -> Vec<NameId>;
}
