//! Type inference.
//!
//! Hindley–Milner inference with let-polymorphism over a resolved
//! [`Module`], filling in the type of every expression, pattern and binding.
//! Generalisation follows the value restriction (only syntactic values are
//! generalised), which keeps references sound. Records are structural: a
//! record literal has a closed record type, while a projection or a record
//! pattern on a value whose type is not yet known constrains that type to
//! "a record with at least these fields"; such constraints are generalised
//! with the variable, solved by whatever later in the file determines the
//! type, and accepted when nothing does (as Miking does: no value of an
//! undetermined type exists at run time, and fields are found by name).
//!
//! API: [`check_module`] types one file, given the type information of the
//! files it includes through [`Imports`], and returns what it exports with
//! its diagnostics. It never fails: an ill-typed part gets the type
//! `Unknown`, which unifies with everything so that one mistake gives one
//! error.

mod annot;
mod builtins;
mod check;
mod differentiable;
mod infer;
mod pat;
mod poly;
mod unify;

use pmx_ast::{FileId, Module, NameId, SmolStr, Span, Ty, TyVar};
use pmx_diagnostics::Diagnostic;
use rustc_hash::FxHashMap;

pub use builtins::builtin_scheme;

/// A declared type constructor: a variant type (no definition) or an alias.
#[derive(Clone, Debug, PartialEq)]
pub struct TyConInfo {
    pub name: SmolStr,
    pub params: Vec<TyVar>,
    /// For an alias, the type it stands for, over `params`.
    pub definition: Option<Ty>,
    pub span: Span,
}

/// What a checked file makes known to the files that include it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TypeExports {
    pub values: FxHashMap<NameId, Ty>,
    pub cons: FxHashMap<NameId, Ty>,
    pub tycons: FxHashMap<NameId, TyConInfo>,
}

/// Type information about names bound in other files.
pub trait Imports {
    fn value(&self, id: NameId) -> Option<Ty>;
    fn con(&self, id: NameId) -> Option<Ty>;
    fn tycon(&self, id: NameId) -> Option<TyConInfo>;
}

/// No other files: for checking a single self-contained file.
pub struct NoImports;

impl Imports for NoImports {
    fn value(&self, _: NameId) -> Option<Ty> {
        None
    }
    fn con(&self, _: NameId) -> Option<Ty> {
        None
    }
    fn tycon(&self, _: NameId) -> Option<TyConInfo> {
        None
    }
}

/// Infers the types of one resolved file in place.
pub fn check_module(module: &mut Module, file: FileId, imports: &dyn Imports) -> (TypeExports, Vec<Diagnostic>) {
    let mut c = check::Checker::new(file, imports);
    c.module(module);
    c.finish()
}
