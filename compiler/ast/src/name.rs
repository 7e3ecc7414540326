//! Names and their identities.

use crate::builtin::{Builtin, BuiltinType};
use pmx_diagnostics::{FileId, Span};
use serde::{Deserialize, Serialize};
use smol_str::SmolStr;

/// The identity of a binding: the file that binds it and an index that is
/// unique within that file. Built-ins live in [`FileId::BUILTIN`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NameId {
    pub file: FileId,
    pub index: u32,
}

const BUILTIN_TYPE_BASE: u32 = 1 << 20;

impl NameId {
    /// The identity of a name that resolution has not (yet) bound.
    pub const UNRESOLVED: NameId = NameId { file: FileId(u32::MAX - 1), index: u32::MAX };

    /// The program's `mexpr` body, where something (the native host
    /// tier's functions) is keyed by binding.
    pub const MAIN: NameId = NameId { file: FileId(u32::MAX - 2), index: 0 };

    /// The `n`th top-level `utest` of a program (`top_utests` numbers
    /// them), where something (the native host tier's functions) is keyed
    /// by binding.
    pub fn top_utest(n: u32) -> NameId {
        NameId { file: FileId(u32::MAX - 3), index: n }
    }

    /// Whether this is a `top_utest`'s.
    pub fn is_top_utest(self) -> bool {
        self.file == FileId(u32::MAX - 3)
    }

    pub fn builtin(b: Builtin) -> NameId {
        NameId { file: FileId::BUILTIN, index: b as u32 }
    }

    pub fn builtin_type(t: BuiltinType) -> NameId {
        NameId { file: FileId::BUILTIN, index: BUILTIN_TYPE_BASE + t as u32 }
    }

    pub fn is_resolved(self) -> bool {
        self != NameId::UNRESOLVED
    }

    /// The built-in constant this name refers to, if any.
    pub fn as_builtin(self) -> Option<Builtin> {
        if self.file == FileId::BUILTIN && self.index < BUILTIN_TYPE_BASE {
            Builtin::ALL.get(self.index as usize).copied()
        } else {
            None
        }
    }

    pub fn as_builtin_type(self) -> Option<BuiltinType> {
        if self.file == FileId::BUILTIN && self.index >= BUILTIN_TYPE_BASE {
            BuiltinType::ALL.get((self.index - BUILTIN_TYPE_BASE) as usize).copied()
        } else {
            None
        }
    }
}

/// A name as written, where it was written, and what it refers to.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Name {
    pub text: SmolStr,
    pub span: Span,
    #[serde(with = "crate::stored::unresolved")]
    pub id: NameId,
}

impl Name {
    pub fn unresolved(text: impl Into<SmolStr>, span: Span) -> Name {
        Name { text: text.into(), span, id: NameId::UNRESOLVED }
    }

    /// The empty name bound by `lam.` and by sequencing `a; b`.
    pub fn is_anonymous(&self) -> bool {
        self.text.is_empty() || self.text == "_"
    }
}

/// A record label as written.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Label {
    pub text: SmolStr,
    pub span: Span,
}
