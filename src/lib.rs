//! `pmx`: the command-line interface and the edge where diagnostics are
//! rendered. The compiler itself lives in `compiler/`; this crate only reads
//! arguments, asks the driver's queries and prints.

pub mod accumulations;
pub mod alloc;
pub mod cli;
pub mod engines;
mod excerpt;
pub mod histograms;
pub mod render;
