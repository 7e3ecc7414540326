//! Name resolution.
//!
//! Gives every binder of one file a [`NameId`] unique in the program (its
//! file and an index) and points every reference at its binder. Names live
//! in three namespaces: values, constructors and types (type variables are
//! scoped like values, in their own namespace). The scope of a file is, from
//! outermost: the built-ins, the exports of its included files, then its own
//! declarations in order. User bindings shadow built-ins, the parallel
//! keywords included.
//!
//! Also checked here: the parallel keywords are applied to exactly their
//! number of arguments, record labels are not repeated, the names of one
//! recursive group or one pattern are distinct, and both sides of an or
//! pattern bind the same names.
//!
//! API: [`resolve_module`] rewrites a [`Module`] in place and returns its
//! [`Exports`] and [`NameTable`] with the diagnostics found; it never fails.

mod expr;
mod pat;
mod scope;
mod types;

use pmx_ast::{FileId, Module, NameId, SmolStr, Span};
use pmx_diagnostics::Diagnostic;
use rustc_hash::FxHashMap;

pub use scope::Resolver;

/// The top-level names a file makes visible to the files that include it
/// (its own and, transitively, its includes').
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Exports {
    pub values: FxHashMap<SmolStr, NameId>,
    pub cons: FxHashMap<SmolStr, NameId>,
    pub types: FxHashMap<SmolStr, NameId>,
}

impl Exports {
    /// Adds another file's exports; names already present are shadowed.
    pub fn extend_from(&mut self, other: &Exports) {
        self.values.extend(other.values.iter().map(|(k, v)| (k.clone(), *v)));
        self.cons.extend(other.cons.iter().map(|(k, v)| (k.clone(), *v)));
        self.types.extend(other.types.iter().map(|(k, v)| (k.clone(), *v)));
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NameKind {
    /// A variable bound by `let`, `lam`, a pattern or a top-level let.
    Value,
    External,
    Constructor,
    Type,
    TypeVar,
}

/// What each index of a file's [`NameId`]s stands for.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NameTable {
    pub entries: Vec<NameEntry>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NameEntry {
    pub text: SmolStr,
    pub span: Span,
    pub kind: NameKind,
    /// Bound at the top level of the file (visible to other files).
    pub top_level: bool,
}

impl NameTable {
    pub fn get(&self, id: NameId) -> Option<&NameEntry> {
        self.entries.get(id.index as usize)
    }
}

/// Resolves the names of one file. `imports` are the merged exports of the
/// files it includes.
pub fn resolve_module(module: &mut Module, file: FileId, imports: &Exports) -> (Exports, NameTable, Vec<Diagnostic>) {
    let mut r = Resolver::new(file, imports);
    r.module(module);
    r.finish()
}
