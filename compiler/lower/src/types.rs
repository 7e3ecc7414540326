//! The AST's types to IR types, under a substitution of type variables,
//! and the table of variant type instances they use.

use crate::ir::{Constructor, Type, VariantDef, VariantId};
use crate::subst::{apply, Subst};
use pmx_accelerate::variants::Variants;
use pmx_ast::{NameId, SmolStr, Ty, TyKind};
use rustc_hash::FxHashMap;
use std::borrow::Cow;
use std::fmt;

/// Why a type has no IR type.
#[derive(Clone, Debug)]
pub(crate) enum TypeError {
    /// A function type where a value is expected.
    Function(Ty),
    /// A type variable nothing determines.
    Variable(Ty),
    /// `Ref`, `Symbol`, or a type inference left unknown.
    Unsupported(Ty),
}

#[derive(Default)]
pub(crate) struct Types<'a> {
    pub variants: Vec<VariantDef>,
    index: FxHashMap<(NameId, Vec<Type>), VariantId>,
    /// The program's constructors (the middle end's table: the
    /// analysis's, or the host program's own).
    constructors: Cow<'a, Variants>,
    functions: bool,
}

impl<'a> Types<'a> {
    /// `functions`: whether function types are types of values (host
    /// code).
    pub fn new(constructors: Cow<'a, Variants>, functions: bool) -> Types<'a> {
        Types { constructors, functions, ..Types::default() }
    }

    /// The IR type of `t` with the type variables of `s` replaced.
    pub fn convert(&mut self, t: &Ty, s: &Subst) -> Result<Type, TypeError> {
        Ok(match t.kind() {
            TyKind::Int => Type::Int,
            TyKind::Float => Type::Float,
            TyKind::Bool => Type::Bool,
            TyKind::Char => Type::Char,
            TyKind::Seq(e) => Type::seq(self.convert(e, s)?),
            TyKind::Tensor(e) => Type::Tensor(Box::new(self.convert(e, s)?)),
            TyKind::Record(fields) if fields.is_empty() => Type::Unit,
            TyKind::Record(fields) => {
                let mut out = Vec::with_capacity(fields.len());
                for (l, f) in fields {
                    out.push((l.clone(), self.convert(f, s)?));
                }
                Type::Record(out)
            }
            TyKind::Arrow(a, r) if self.functions => Type::fun(self.convert(a, s)?, self.convert(r, s)?),
            TyKind::Arrow(..) => return Err(TypeError::Function(apply(t, s))),
            TyKind::Var(v) => match s.get(&v.id) {
                // The substitution's types are the caller's: concrete, or
                // with variables of an enclosing scope that it leaves.
                Some(bound) => self.convert(bound, &Subst::default())?,
                None => return Err(TypeError::Variable(t.clone())),
            },
            // Inference left it open: nothing constrains it, so no value of
            // it is ever looked at (the `ints` of a record whose `floats`
            // alone are used, an empty sequence); any type does. `Bool`, not
            // `()`: a sequence of `()` has no leaf in Futhark's entries, so
            // an empty `[]` of it could not cross with its length (fuzz
            // seed 8000316).
            TyKind::Meta(_) => Type::Bool,
            TyKind::All(_, _, body) => self.convert(body, s)?,
            // A variable of higher kind applied to arguments: the
            // substitution makes it a named type, or it stays undetermined.
            TyKind::App(..) => match apply(t, s) {
                named if matches!(named.kind(), TyKind::Con(..)) => self.convert(&named, &Subst::default())?,
                _ => return Err(TypeError::Variable(t.clone())),
            },
            TyKind::Con(id, name, args) if id.as_builtin_type().is_none() => {
                let mut targs = Vec::with_capacity(args.len());
                for a in args {
                    targs.push(self.convert(a, s)?);
                }
                Type::Variant(self.variant(*id, name, &apply(t, s), targs)?)
            }
            // Host code: the interpreter's value, given to its built-ins.
            TyKind::Con(id, _, args) if self.functions => {
                let b = id.as_builtin_type().expect("a built-in type (the arm above takes the others)");
                let mut targs = Vec::with_capacity(args.len());
                for a in args {
                    targs.push(self.convert(a, s)?);
                }
                Type::Opaque(b, targs)
            }
            TyKind::Con(..) | TyKind::Unknown => return Err(TypeError::Unsupported(t.clone())),
        })
    }

    /// The instance of variant type `id` at `args` (`t` is that type),
    /// added to the table the first time it is asked for.
    fn variant(&mut self, id: NameId, name: &SmolStr, t: &Ty, args: Vec<Type>) -> Result<VariantId, TypeError> {
        let key = (id, args);
        if let Some(v) = self.index.get(&key) {
            return Ok(*v);
        }
        let vid = VariantId(self.variants.len() as u32);
        // In the table before its constructors: they may mention it.
        self.index.insert(key.clone(), vid);
        self.variants.push(VariantDef { name: name.clone(), args: key.1, constructors: Vec::new() });
        let mut constructors = Vec::new();
        for (id, name, payload) in self.constructors.payloads(t) {
            // The payload is already at `t`'s type arguments.
            let payload = self.convert(&payload, &Subst::default())?;
            constructors.push(Constructor { id, name, payload });
        }
        self.variants[vid.0 as usize].constructors = constructors;
        Ok(vid)
    }

    /// The variant type and tag of constructor `con` (whose value has the
    /// IR type `of`).
    pub fn tag(&self, of: &Type, con: NameId) -> Option<(crate::ir::VariantId, usize)> {
        let Type::Variant(v) = of else { return None };
        // Constructors are found by identity: two types may both have a
        // constructor named `Leaf`.
        let at = self.variants[v.0 as usize].constructors.iter().position(|c| c.id == con)?;
        Some((*v, at))
    }
}

impl fmt::Display for TypeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TypeError::Function(t) => write!(f, "a function of type `{t}` is used as a value"),
            TypeError::Variable(t) => write!(f, "the type `{t}` is not determined by how the code is used"),
            TypeError::Unsupported(t) => write!(f, "the type `{t}` has no lowered form"),
        }
    }
}
