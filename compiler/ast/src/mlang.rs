//! MLang declarations as written, before desugaring.
//!
//! MLang never reaches the tree every pass reads ([`crate::Module`]): the
//! syntax pass keeps a file's `lang` blocks beside its module
//! (`pmx_syntax::Parsed::langs`) and marks each `use L in e` in the module
//! with [`use_marker`]; `pmx_syntax::mlang` turns both into plain MExpr
//! declarations before name resolution, as Miking does.

use crate::expr::{Expr, Pat};
use crate::name::Name;
use crate::typeexpr::TypeExpr;
use pmx_diagnostics::Span;
use serde::{Deserialize, Serialize};

/// `lang L = A + B  decls  end`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Lang {
    pub name: Name,
    /// The languages it extends (`A`, `B`).
    pub includes: Vec<Name>,
    /// Its `with` clauses, in order.
    pub withs: Vec<LangWith>,
    pub decls: Vec<LangDecl>,
    pub span: Span,
    /// How many top-level items of the module come before it.
    pub at: usize,
}

/// `with T = A.T + B.T` (a type) or `with f = A.f + B.f` (a semantic
/// function) in a language's header: the definitions named in the
/// languages it extends become one definition, as if they had one root.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LangWith {
    /// The name the merged definition takes (`T`).
    pub name: Name,
    /// Whether it names types (`syn`s or type aliases) or semantic
    /// functions.
    pub kind: WithKind,
    /// Each language (one of those extended) and its definition: `(A, T)`.
    pub sources: Vec<(Name, Name)>,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum WithKind {
    Type,
    Value,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum LangDecl {
    Syn(SynDecl),
    Sem(SemDecl),
    /// `type T a = t` (an alias) or `type T` (a variant type).
    Type(crate::TypeDecl),
    /// `con K : T`.
    Con(crate::ConDecl),
}

/// `syn T a = | K1 t1 | K2 t2`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SynDecl {
    pub name: Name,
    pub params: Vec<Name>,
    pub cons: Vec<SynCon>,
    pub span: Span,
}

/// `| K t`; without `t` the constructor carries `()`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SynCon {
    pub name: Name,
    pub carried: Option<TypeExpr>,
    pub span: Span,
}

/// `sem f : T` (a signature: `params` is `None`) or `sem f p (q : T) = |
/// pat -> e ...`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SemDecl {
    pub name: Name,
    pub signature: Option<TypeExpr>,
    pub params: Option<Vec<SemParam>>,
    pub cases: Vec<SemCase>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SemParam {
    pub name: Name,
    pub annotation: Option<TypeExpr>,
    pub span: Span,
}

/// `| pat -> body`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SemCase {
    pub pattern: Pat,
    pub body: Expr,
    pub span: Span,
}

/// The prefix of the variable that marks `use L in e` in a module before
/// desugaring: `App(Var("use#L"), e)`, the variable at `L`'s span. No
/// program can write the name as a plain identifier.
pub const USE_MARKER: &str = "use#";

/// `use L in e` as the syntax pass writes it.
pub fn use_marker(lang: &Name, body: Expr, span: Span) -> Expr {
    use crate::expr::ExprKind;
    let marker = Name::unresolved(format!("{USE_MARKER}{}", lang.text), lang.span);
    let f = Expr::new(ExprKind::Var(marker), lang.span);
    Expr::new(ExprKind::App(Box::new(f), Box::new(body)), span)
}

/// The language a `use` marker names, and its body, if `e` is one.
pub fn as_use(e: &Expr) -> Option<(&Name, &str)> {
    use crate::expr::ExprKind;
    match &e.kind {
        ExprKind::App(f, _) => match &f.kind {
            ExprKind::Var(n) => n.text.strip_prefix(USE_MARKER).map(|l| (n, l)),
            _ => None,
        },
        _ => None,
    }
}

/// `use L in T` as the syntax pass writes it: `Con("use#L", [T])`.
pub fn use_type_marker(lang: &Name, body: TypeExpr, span: Span) -> TypeExpr {
    use crate::typeexpr::TypeExprKind;
    let marker = Name::unresolved(format!("{USE_MARKER}{}", lang.text), lang.span);
    TypeExpr { kind: TypeExprKind::Con(marker, vec![body]), span }
}
