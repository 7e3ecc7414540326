//! Derivatives in the interpreter: `jvp` (forward mode), `vjp` (reverse
//! mode) and `grad`, by running the program's own code on *dual* floats.
//!
//! A derivative seeds each `Float` of its input with a [`Dual`]: forward
//! mode carries a tangent beside the value; reverse mode records a node
//! of the computation graph. The function then runs as any function runs
//! (`if`, `match`, recursion, closures, `foldl`, `map`, records and
//! sequences move duals as they move any value), and each float operation
//! that meets a dual applies its rule from the one table (`rules.rs`),
//! which gives the local partial derivatives both modes use: forward mode
//! sums them times the tangents, reverse mode records them on the node
//! and multiplies them by the adjoint on the way back (`modes.rs`).
//!
//! Invariants: a dual only exists while its derivative runs (the result
//! is read out of it as plain floats); a program that takes derivatives
//! is compiled without the interpreter's unboxed float operations
//! (`Compiler::derivatives`), which read floats as machine numbers and
//! would not see a dual, and without native host code, for the same
//! reason. Comparisons and conversions read a dual's value, so control
//! flow follows the value: at a kink, the derivative is the one of the
//! branch the program takes. Derivatives nested in the function of
//! another are refused with a located error.

mod dual;
mod modes;
mod ops;
pub mod rules;

pub use dual::Dual;
pub use modes::call;
pub use ops::{builtin, external, sees};
