//! The CPU backend: evaluates typed MExpr programs.
mod buffer;
