//! Types as written in annotations and declarations.

use crate::name::{Label, Name};
use pmx_diagnostics::Span;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Prim {
    Int,
    Float,
    Bool,
    Char,
    /// `String`, sugar for `[Char]`.
    String,
}

#[derive(Clone, Debug, PartialEq)]
pub struct TypeExpr {
    pub kind: TypeExprKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum TypeExprKind {
    Prim(Prim),
    /// `Unknown`: a type left for inference to find.
    Unknown,
    Seq(Box<TypeExpr>),
    Tensor(Box<TypeExpr>),
    /// Records; tuples are records labelled `0`, `1`, ...; `()` has no field.
    Record(Vec<(Label, TypeExpr)>),
    Arrow(Box<TypeExpr>, Box<TypeExpr>),
    All(Name, Box<TypeExpr>),
    /// A type variable bound by `all` or by a type declaration's parameters.
    Var(Name),
    /// A named type (a variant type, an alias or a built-in such as `Ref`)
    /// applied to arguments.
    Con(Name, Vec<TypeExpr>),
    /// Stands for a part that did not parse; no further error is reported.
    Error,
}
