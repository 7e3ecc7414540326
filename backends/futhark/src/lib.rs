//! The Futhark backend: Futhark-class accelerate bindings compiled by the
//! real Futhark compiler and called through its C API.
//!
//! - `gen/`: the Futhark program from the lowered IR
//!   (`pmx_lower::Program` of the Futhark backend), one `entry` per
//!   binding, with a table from generated lines to MExpr spans.
//! - `abi.rs`: how values cross an entry (leaves: scalars and regular
//!   arrays of scalars).
//! - `marshal.rs`: pmx values to Futhark arrays and back; unboxed `Int`,
//!   `Float`, `Char` and `Bool` sequences are handed over as their buffers.
//! - `backend.rs`: Futhark's `multicore` (CPU) or `cuda` (GPU) backend,
//!   and what differs between their builds and contexts.
//! - `versions.rs`: the supported Futhark versions and what differs
//!   between them (one table the generator and the glue consult).
//! - `engine.rs`: finding `futhark`, compiling (Futhark to C, C to a
//!   shared library, cached), loading, and the `pmx_cpu::Engine` that
//!   runs entries in one Futhark context per run.
//!
//! Invariants: a construct the generator does not take is an
//! [`gen::Unsupported`] at its span, never a panic; a failure inside
//! generated code comes back as an `Err` with the MExpr location found
//! from Futhark's message; nothing here writes outside the cache folder.

pub mod abi;
mod alloc_check;
pub mod backend;
pub mod engine;
pub mod gen;
pub mod manifest;
pub mod marshal;
pub mod versions;
