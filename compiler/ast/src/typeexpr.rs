//! Types as written in annotations and declarations.

use crate::name::{Label, Name};
use pmx_diagnostics::Span;
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Prim {
    Int,
    Float,
    Bool,
    Char,
    /// `String`, sugar for `[Char]`.
    String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TypeExpr {
    pub kind: TypeExprKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum TypeExprKind {
    Prim(Prim),
    /// `Unknown`: a type left for inference to find.
    Unknown,
    Seq(Box<TypeExpr>),
    Tensor(Box<TypeExpr>),
    /// Records; tuples are records labelled `0`, `1`, ...; `()` has no field.
    Record(Vec<(Label, TypeExpr)>),
    Arrow(Box<TypeExpr>, Box<TypeExpr>),
    /// `all a. t`, or `all a :: {T[> K], ...}. t` with Miking's kind on
    /// the variable (empty when none is written).
    All(Name, Vec<KindEntry>, Box<TypeExpr>),
    /// A type variable bound by `all` or by a type declaration's parameters.
    Var(Name),
    /// A type variable standing for a type constructor, applied to
    /// arguments: Miking's `self LClosed RClosed` (at least one argument).
    VarApp(Name, Vec<TypeExpr>),
    /// A named type (a variant type, an alias or a built-in such as `Ref`)
    /// applied to arguments.
    Con(Name, Vec<TypeExpr>),
    /// A variant type narrowed to some constructors: `Tree{a}` (by a kinded
    /// variable), `Tree{Leaf Node}`, `Tree{!Leaf}`.
    Restricted(Name, Restriction),
    /// Stands for a part that did not parse; no further error is reported.
    Error,
}

/// One entry of a kind: the constructors of variant type `ty` that a value
/// has at least (`lower`) and at most (`upper`, `None` when unbounded).
/// `T[> A]` is lower `[A]`; `T[< A B | A]` is upper `[A, B]`, lower `[A]`;
/// `T[| A]` has both `[A]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KindEntry {
    pub ty: Name,
    pub lower: Vec<Name>,
    pub upper: Option<Vec<Name>>,
}

/// What narrows a restricted type.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Restriction {
    /// A type variable whose kind says which constructors are allowed.
    Var(Name),
    /// These constructors (`negated`: all but these).
    Cons { negated: bool, cons: Vec<Name> },
}
