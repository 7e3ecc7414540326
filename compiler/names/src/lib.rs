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
//! pattern bind the same names. A name that nothing binds and that Miking
//! reads as a construct of one of its other extensions (`prerun`, `hole`,
//! `specialize`, Python's intrinsics) is reported as unsupported.
//!
//! API: [`resolve_module`] rewrites a [`Module`] in place and returns its
//! [`Exports`] and [`NameTable`] with the diagnostics found; it never fails.

mod expr;
mod extensions;
mod pat;
mod scope;
mod types;

use pmx_ast::{FileId, Module, NameId, SmolStr, Span};
use pmx_diagnostics::Diagnostic;
use rustc_hash::FxBuildHasher;

pub use scope::Resolver;

/// Names to identities, as a persistent map: copies share structure, so
/// that a file's exports can start as a copy of its include's at no cost.
/// (With ordinary maps, a chain of n files each including the one before
/// copied every earlier file's names into every later one: time and memory
/// grew as n squared.)
pub type NameMap = imbl::GenericHashMap<SmolStr, NameId, FxBuildHasher, imbl::shared_ptr::DefaultSharedPtr>;

/// The top-level names a file makes visible to the files that include it
/// (its own and, transitively, its includes').
#[derive(Clone, Debug, Default)]
pub struct Exports {
    pub values: NameMap,
    pub cons: NameMap,
    pub types: NameMap,
}

impl Exports {
    /// Adds another file's exports; names already present are shadowed.
    pub fn extend_from(&mut self, other: &Exports) {
        shadow(&mut self.values, &other.values);
        shadow(&mut self.cons, &other.cons);
        shadow(&mut self.types, &other.types);
    }
}

/// `base` with `newer`'s names added over its own, walking the smaller of
/// the two (a copy of the larger is shared, not walked).
fn shadow(base: &mut NameMap, newer: &NameMap) {
    if newer.len() >= base.len() {
        let older = std::mem::replace(base, newer.clone());
        for (k, v) in older.iter() {
            if !base.contains_key(k) {
                base.insert(k.clone(), *v);
            }
        }
    } else {
        for (k, v) in newer.iter() {
            base.insert(k.clone(), *v);
        }
    }
}

/// Equal names to equal identities. Shared maps are equal at once; others
/// are compared key by key (imbl's own comparison builds a hash set).
fn same_names(a: &NameMap, b: &NameMap) -> bool {
    a.ptr_eq(b) || (a.len() == b.len() && a.iter().all(|(k, v)| b.get(k) == Some(v)))
}

impl PartialEq for Exports {
    fn eq(&self, other: &Exports) -> bool {
        same_names(&self.values, &other.values)
            && same_names(&self.cons, &other.cons)
            && same_names(&self.types, &other.types)
    }
}

impl Eq for Exports {}

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

/// The namespaces a file takes names from other files in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Namespace {
    Value,
    Con,
    Type,
}

/// A name a file looked up outside its own scope, and what `imports` gave
/// for it (`None`: a built-in, or nothing). Resolving the file again with
/// other imports gives the same result exactly when those imports give
/// the same for each of these names: that is how the driver knows whether
/// a file's names mean the same in a program that merges its files in
/// Miking's order (each file seeing every name defined before it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outside {
    pub ns: Namespace,
    pub text: SmolStr,
    pub found: Option<NameId>,
}

impl Exports {
    /// The names of one namespace.
    pub fn names(&self, ns: Namespace) -> &NameMap {
        match ns {
            Namespace::Value => &self.values,
            Namespace::Con => &self.cons,
            Namespace::Type => &self.types,
        }
    }

    /// Whether resolving with these exports gives what `outside` records.
    pub fn agrees_with(&self, outside: &[Outside]) -> bool {
        outside.iter().all(|o| self.names(o.ns).get(&o.text).copied() == o.found)
    }
}

/// Resolves the names of one file. `imports` are the names visible to it
/// from other files (the merged exports of the files it includes, or of
/// every file before it in a program's order). Also returns the names it
/// looked up outside its own scope.
pub fn resolve_module(
    module: &mut Module,
    file: FileId,
    imports: &Exports,
) -> (Exports, NameTable, Vec<Diagnostic>, Vec<Outside>) {
    let mut r = Resolver::new(file, imports);
    r.module(module);
    r.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(names: &[(&str, u32)]) -> NameMap {
        names.iter().map(|(n, i)| (SmolStr::new(n), NameId { file: FileId(0), index: *i })).collect()
    }

    #[test]
    fn later_exports_shadow_earlier_ones_whichever_map_is_larger() {
        for (old, new) in [
            (vec![("a", 1), ("b", 2), ("c", 3)], vec![("b", 20)]),
            (vec![("b", 2)], vec![("a", 10), ("b", 20), ("c", 30)]),
        ] {
            let mut exports = Exports { values: map(&old), ..Exports::default() };
            let newer = Exports { values: map(&new), ..Exports::default() };
            exports.extend_from(&newer);
            assert_eq!(exports.values.get("b").map(|id| id.index), Some(20));
            for (n, _) in old.iter().chain(&new) {
                assert!(exports.values.contains_key(*n), "{n} is lost");
            }
        }
    }

    #[test]
    fn exports_compare_by_content() {
        let a = Exports { values: map(&[("x", 1), ("y", 2)]), ..Exports::default() };
        let b = Exports { values: map(&[("y", 2), ("x", 1)]), ..Exports::default() };
        let c = Exports { values: map(&[("x", 1), ("y", 3)]), ..Exports::default() };
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_eq!(a, a.clone());
    }
}
