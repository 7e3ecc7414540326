//! How a parse's tree is stored (serde; the parse cache,
//! `pmx_syntax::stored`). Before name resolution and type inference every
//! type is unknown and every name unresolved, so neither is written: a
//! tree with one set fails to store (an error, not a silent loss of what
//! the passes found).

use crate::{NameId, Ty};
use serde::{ser::Error as _, Deserialize, Deserializer, Serializer};

/// A `ty` or `scheme` field: [`Ty::unknown`] only.
pub(crate) mod unknown {
    use super::*;

    pub fn serialize<S: Serializer>(ty: &Ty, s: S) -> Result<S::Ok, S::Error> {
        if !ty.is_unknown() {
            return Err(S::Error::custom("a typed tree is not stored"));
        }
        s.serialize_unit()
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Ty, D::Error> {
        <()>::deserialize(d)?;
        Ok(Ty::unknown())
    }
}

/// A name's identity: [`NameId::UNRESOLVED`] only.
pub(crate) mod unresolved {
    use super::*;

    pub fn serialize<S: Serializer>(id: &NameId, s: S) -> Result<S::Ok, S::Error> {
        if id.is_resolved() {
            return Err(S::Error::custom("a resolved name is not stored"));
        }
        s.serialize_unit()
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<NameId, D::Error> {
        <()>::deserialize(d)?;
        Ok(NameId::UNRESOLVED)
    }
}
