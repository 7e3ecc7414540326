//! Futhark types of IR types (with unique arrays, `*`, for consuming
//! parameters and alias-free results), and a value of a type for a slot
//! never looked at.

use super::*;

impl Writer<'_> {
    /// A Futhark type with anonymous sizes.
    pub(super) fn ty(&mut self, t: &Type) -> String {
        match t {
            Type::Int => "i64".into(),
            Type::Float => "f64".into(),
            Type::Bool => "bool".into(),
            Type::Char => "i32".into(),
            Type::Unit => "()".into(),
            Type::Seq(e) => format!("[]{}", self.ty(e)),
            Type::Record(fields) if is_tuple(fields) => {
                let parts: Vec<String> = fields.iter().map(|(_, t)| self.ty(t)).collect();
                format!("({})", parts.join(", "))
            }
            Type::Record(fields) => {
                let parts: Vec<String> = fields.iter().map(|(l, t)| format!("{}: {}", label(l), self.ty(t))).collect();
                format!("{{{}}}", parts.join(", "))
            }
            Type::Tensor(_) => {
                self.unsupported("tensors in Futhark code");
                "()".into()
            }
            Type::Variant(v) => {
                let name = self.p.variant(*v).map(|d| d.name.to_string()).unwrap_or_default();
                self.unsupported(format!("values of the variant type {name} in Futhark code"));
                "()".into()
            }
            Type::Fun(..) | Type::Opaque(..) => unreachable!("{}", pmx_lower::HOST_ONLY),
        }
    }

    /// A Futhark type whose arrays are unique (`*`): a consuming
    /// parameter, an alias-free result.
    pub(super) fn uty(&mut self, t: &Type) -> String {
        match t {
            Type::Seq(_) => format!("*{}", self.ty(t)),
            Type::Record(fields) if is_tuple(fields) => {
                let parts: Vec<String> = fields.iter().map(|(_, t)| self.uty(t)).collect();
                format!("({})", parts.join(", "))
            }
            Type::Record(fields) => {
                let parts: Vec<String> = fields.iter().map(|(l, t)| format!("{}: {}", label(l), self.uty(t))).collect();
                format!("{{{}}}", parts.join(", "))
            }
            _ => self.ty(t),
        }
    }

    /// A value of type `t` that is never looked at (the result slot of a
    /// loop before its last round).
    pub(super) fn zero(&mut self, t: &Type) -> String {
        if let Type::Tensor(_) | Type::Variant(_) = t {
            // Not in Futhark code: said by `ty`.
            self.ty(t);
        }
        sized_zero(t, &mut std::iter::empty())
    }
}
