//! The MExpr abstract syntax tree, shared by every pass.
//!
//! One tree type serves all stages. The syntax pass builds it with every
//! [`Name`] unresolved and every type [`Ty::unknown`]; name resolution fills
//! in each name's [`NameId`]; type inference fills in the type of every
//! expression, pattern and binding. Later passes (accelerate extraction,
//! evaluation) read and rewrite the same tree.
//!
//! Invariants after type checking: every binder has a program-unique
//! `NameId`, every reference carries the `NameId` of its binder, and every
//! `ty` field holds the inferred type (a binding's `scheme` holds its
//! generalised type). Strings are sequences of `Char`; tuples are records
//! labelled `0`, `1`, ...; `()` is the empty record.

mod builtin;
pub mod derivatives;
mod expr;
pub mod externals;
pub mod mlang;
mod name;
pub mod print;
pub mod reach;
pub mod scc;
pub mod shift;
pub mod signature;
pub mod spine;
mod stored;
pub mod subst;
mod ty;
mod typeexpr;
pub mod visit;

pub use builtin::{Builtin, BuiltinType};
pub use expr::*;
pub use name::{Label, Name, NameId};
pub use pmx_diagnostics::{FileId, Span};
pub use smol_str::SmolStr;
pub use ty::{compare_labels, is_tuple_labels, Ty, TyKind, TyVar};
pub use typeexpr::{KindEntry, Prim, Restriction, TypeExpr, TypeExprKind};
