//! The lowered IR: each backend's program (`pmx_accelerate::Analysis`'s
//! `futhark` and `cuda`, after the backend's rewrites and ANF) in the one
//! form the Futhark and CUDA code generators take, instead of the MExpr
//! tree.
//!
//! [`lower`] starts from the backend's accelerate bindings, which become
//! [`Entry`]s (the `accelerate` wrapper gone, the dummy parameter of an
//! expression without free variables dropped), and lowers each top-level
//! function they use on demand, once per instance of its type variables
//! (`lower.rs`): polymorphic functions are specialised for both backends,
//! so no type variable is left. Function values are resolved at lowering
//! time (`funval.rs`): applied to all their arguments they are calls,
//! primitives or keyword nodes; a keyword's function argument is a
//! [`FunRef`]; lambdas are lifted with the variables they use as leading
//! parameters. Patterns become tests and projections (`pattern.rs`);
//! utests become `SizeEq` (and, for Futhark, `SizeCoerce`) or `Utest`
//! nodes (`utest.rs`). What cannot be lowered is reported as a located
//! [`Diagnostic`] (codes E0430-E0432); the lowering never panics, and a
//! function it gives up on gets a body that is `never`.
//!
//! # Invariants (for every program [`lower`] returns; [`validate`] checks them)
//!
//! 1. **Types are concrete.** [`Type`] has no type variables and, but in
//!    host code, no function types; record types have at least one field (`()` is
//!    `Unit`), labels sorted by `compare_labels` and distinct; every
//!    `Variant` indexes `Program::variants`.
//! 2. **A-normal form.** Every operand is an [`Atom`] (a variable or a
//!    literal); every intermediate value is bound by a [`Stmt`], whose
//!    variable carries the node's type. Only `If` nests blocks.
//! 3. **Scoping.** Every variable is defined once in the program (by
//!    `VarId`), before its uses, in an enclosing block or as a parameter;
//!    each use carries its definition's name and type. Names are unique
//!    within a function or entry.
//! 4. **Types agree at every node**: a primitive's arguments and result fit
//!    its built-in's signature (with one choice of its type variables); a
//!    call passes its callee's parameter types and gets its result; a
//!    keyword's function reference takes the keyword's element types and
//!    returns what the keyword needs; branches return the `If`'s type; a
//!    block's result has the expected type.
//! 5. **First-order.** Functions are top-level with typed parameters; a
//!    [`FunRef`] (only in keyword nodes and utests) names an existing
//!    function or a primitive (never a keyword or a built-in that takes a
//!    function); its bound atoms then its `params` are the callee's
//!    parameters. Host code only (`Target::Host`) also has function
//!    values: `Expr::Closure` makes one of a function or built-in,
//!    `Expr::Apply` and `Callee::Value` apply one, and a primitive node
//!    may be any built-in but `accelerate` (the runtime computes it);
//!    an `accelerate` is an `Expr::Accelerate` naming its binding.
//! 6. **Primitives are saturated**: `Prim(b, args)` has exactly the
//!    number of arguments `b`'s type takes; parallel keywords are their
//!    own nodes.
//! 7. **Order.** `functions[i].id == FnId(i)`; a function refers only to
//!    earlier functions or to those of its own group (a strongly connected
//!    component, consecutive); a function that calls itself is marked
//!    `recursive`; entries refer to existing functions.
//! 8. **Size constraints**: `SizeEq`/`SizeCoerce` name a dimension the
//!    sequence has and an `Int` size; `SizeCoerce` appears only in
//!    Futhark programs.
//!
//! API: [`lower`], [`validate`], [`print`], the IR types in `ir.rs`, the
//! walks into a block's nested blocks (`visit.rs`: [`Block::for_each_stmt`]
//! and its kin, which every pass that looks at all statements uses), the
//! call graph's [`callees`] and [`fixpoint`] (`callgraph.rs`), the seam
//! code generators implement ([`generator`]), and three analyses of a
//! CUDA-class program that several users share: [`affine`] (integers
//! affine in a loop's index, indices and views apart per iteration),
//! [`launch`] (which parallel loops are kernel launches) and
//! [`accumulate`] (read-modify-writes of a cell with an associative and
//! commutative operator in parallel loops: the CUDA generator, `pmx
//! explain` and the interpreter use the one analysis); and [`hist`], the
//! histogram folds of a Futhark-class program, which [`lower`] splits
//! into a `map` of `(index, value)` pairs and a fold of an update marked
//! for the Futhark generator (`reduce_by_index`).

mod accelerate;
pub mod accumulate;
pub mod affine;
mod body;
mod callgraph;
mod cx;
mod funval;
pub mod generator;
pub mod hist;
mod ir;
pub mod launch;
mod lower;
mod order;
mod pattern;
mod print;
mod signature;
mod subst;
mod types;
mod utest;
mod validate;
mod visit;

#[cfg(test)]
mod tests;

pub use callgraph::{callees, fixpoint};
pub use generator::{Generated, Generator, Options, Unsupported};
pub use ir::*;
pub use lower::{host_arity, lower, lower_host};
pub use pmx_diagnostics::Diagnostic;
pub use print::{print, print_only};
pub use validate::{validate, validate_by_function, validate_only};
