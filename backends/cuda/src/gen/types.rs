//! C++ types for IR types: scalars map to fixed-width C types, sequences
//! and tensors to the prelude's templates, records and variants to
//! structs declared once each (in dependency order) with their MExpr type
//! in a comment.

use pmx_lower::{Program, Type};
use rustc_hash::FxHashMap;

pub struct Types<'p> {
    program: &'p Program,
    names: FxHashMap<Type, String>,
    /// Struct declarations, each after the ones it uses.
    pub decls: String,
    /// Variants being declared (a variant that contains itself has no
    /// finite C layout).
    open: Vec<u32>,
    pub errors: Vec<String>,
}

impl<'p> Types<'p> {
    pub fn new(program: &'p Program) -> Types<'p> {
        Types { program, names: FxHashMap::default(), decls: String::new(), open: Vec::new(), errors: Vec::new() }
    }

    pub fn c(&mut self, t: &Type) -> String {
        match t {
            Type::Int => "int64_t".into(),
            Type::Float => "double".into(),
            Type::Bool => "bool".into(),
            Type::Char => "uint32_t".into(),
            Type::Unit => "pmx_unit".into(),
            Type::Seq(e) => format!("pmx_seq<{}>", self.c(e)),
            Type::Tensor(e) => format!("pmx_tensor<{}>", self.c(e)),
            Type::Fun(..) | Type::Opaque(..) => unreachable!("{}", pmx_lower::HOST_ONLY),
            Type::Record(fields) => {
                if let Some(n) = self.names.get(t) {
                    return n.clone();
                }
                let members: Vec<(String, String)> = fields.iter().map(|(l, ft)| (field(l), self.c(ft))).collect();
                let name = format!("rec{}", self.names.len());
                let shown: Vec<String> =
                    fields.iter().map(|(l, ft)| format!("{l} : {}", self.program.type_name(ft))).collect();
                self.decls.push_str(&format!("// {{{}}}\nstruct {name} {{\n", shown.join(", ")));
                for (m, ct) in members {
                    self.decls.push_str(&format!("  {ct} {m};\n"));
                }
                self.decls.push_str("};\n");
                self.names.insert(t.clone(), name.clone());
                name
            }
            Type::Variant(id) => {
                if let Some(n) = self.names.get(t) {
                    return n.clone();
                }
                let Some(def) = self.program.variant(*id) else {
                    self.errors.push(format!("unknown variant type #{}", id.0));
                    return "pmx_unit".into();
                };
                if self.open.contains(&id.0) {
                    // The middle end refuses recursive variant types in
                    // CUDA code, where they are written (E0421); this only
                    // keeps a lowered program made otherwise from looping.
                    self.errors.push(format!(
                        "the recursive variant type `{}` has no fixed-size layout for CUDA code",
                        def.name
                    ));
                    return "pmx_unit".into();
                }
                self.open.push(id.0);
                let payloads: Vec<String> = def.constructors.iter().map(|c| self.c(&c.payload)).collect();
                self.open.pop();
                let name = format!("var{}", id.0);
                // A tagged union: the tag is the constructor's index, and
                // only that constructor's member of the union is set. Every
                // member is a plain struct or scalar, so the union needs no
                // constructor, and `var()` zeroes the tag and the first one.
                self.decls.push_str(&format!(
                    "// type {}: a tag (the constructor's index) and its payload\nstruct {name} {{\n  int64_t tag;\n  union {{\n",
                    self.program.type_name(t)
                ));
                for (k, (c, ct)) in def.constructors.iter().zip(payloads).enumerate() {
                    self.decls.push_str(&format!("    {ct} c{k}; // {k}: {}\n", c.name));
                }
                self.decls.push_str("  };\n};\n");
                self.names.insert(t.clone(), name.clone());
                name
            }
        }
    }
}

/// Whether a value of type `t` is passed to functions by `const`
/// reference and bound by reference where it is a variable or a part of
/// one: tensors (a view with its dimensions), records and variants are
/// tens to thousands of bytes that the C++ compiler otherwise copies at
/// every call and every field access (a network's record of weight
/// tensors, passed to each loop body, is 2 KB). Values are never changed
/// in place once bound, so a reference reads what a copy would.
pub fn by_ref(t: &Type) -> bool {
    match t {
        Type::Tensor(_) | Type::Variant(_) => true,
        Type::Record(fields) => !fields.is_empty(),
        _ => false,
    }
}

/// A parameter (or a binding by reference, see [`by_ref`]) of type `ct`.
pub fn param(t: &Type, ct: &str, name: &str) -> String {
    if by_ref(t) {
        format!("const {ct} &{name}")
    } else {
        format!("{ct} {name}")
    }
}

/// A record label as a C member name (labels may be numbers).
pub fn field(label: &str) -> String {
    format!("f_{}", ident(label))
}

/// Any text as a C identifier fragment: letters, digits and `_` kept,
/// anything else written as its code point.
pub fn ident(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if c.is_ascii_alphanumeric() || c == '_' {
            out.push(c);
        } else {
            out.push_str(&format!("_{:x}", c as u32));
        }
    }
    out
}
