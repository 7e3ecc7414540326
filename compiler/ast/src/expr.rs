//! Expressions, patterns, declarations and files.

use crate::name::{Label, Name};
use crate::ty::Ty;
use crate::typeexpr::TypeExpr;
use pmx_diagnostics::Span;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Lit {
    Int(i64),
    Float(f64),
    Char(char),
    Bool(bool),
    /// A string literal: a sequence of `Char`.
    Str(String),
}

/// The parameter of the identity that marks Miking's `#frozen"x"` (a
/// variable whose polymorphic type is not instantiated where it is used):
/// the parser writes `(lam P. P) x`, and the type checker takes the mark
/// away again, so no later pass sees it. No program can write this name.
pub const FROZEN_MARK: &str = "frozen#";

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
    #[serde(with = "crate::stored::unknown")]
    pub ty: Ty,
}

impl Expr {
    pub fn new(kind: ExprKind, span: Span) -> Expr {
        Expr { kind, span, ty: Ty::unknown() }
    }

    pub fn unit(span: Span) -> Expr {
        Expr::new(ExprKind::Record(Vec::new()), span)
    }
}

/// `let x : T = e` at the top level, in `let .. in`, or in a recursive group.
/// (The annotation is boxed here and in `ExprKind::Lam`: annotations are
/// rare, and inline they made every expression node 168 bytes, not 88.)
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Binding {
    pub name: Name,
    pub annotation: Option<Box<TypeExpr>>,
    pub value: Expr,
    /// The generalised type of the name (filled in by type inference).
    #[serde(with = "crate::stored::unknown")]
    pub scheme: Ty,
    pub span: Span,
}

/// `utest test with expected using eq else onFail`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Utest {
    pub test: Expr,
    pub expected: Expr,
    pub using: Option<Expr>,
    pub on_fail: Option<Expr>,
    pub span: Span,
}

impl Utest {
    /// How a failure's message names the `using` function (as Miking's
    /// does): its name, or `<function>` for any other expression.
    pub fn using_name(&self) -> Option<crate::SmolStr> {
        self.using.as_ref().map(|e| match &e.kind {
            ExprKind::Var(n) => n.text.clone(),
            _ => crate::SmolStr::new_static("<function>"),
        })
    }
}

/// `type T a b` (a variant type) or `type T a = T'` (an alias).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TypeDecl {
    pub name: Name,
    pub params: Vec<Name>,
    pub definition: Option<TypeExpr>,
    pub span: Span,
}

/// `con K : A -> T a`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ConDecl {
    pub name: Name,
    pub annotation: Option<TypeExpr>,
    /// The constructor's type scheme (filled in by type inference).
    #[serde(with = "crate::stored::unknown")]
    pub scheme: Ty,
    pub span: Span,
}

/// `external x ! : T`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExternalDecl {
    pub name: Name,
    pub effect: bool,
    pub annotation: TypeExpr,
    #[serde(with = "crate::stored::unknown")]
    pub scheme: Ty,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum ExprKind {
    Var(Name),
    Lit(Lit),
    /// `lam x : T. body`; `lam. body` binds the anonymous name.
    Lam {
        param: Name,
        annotation: Option<Box<TypeExpr>>,
        body: Box<Expr>,
    },
    /// `let x = e in body`; sequencing `a; b` is `let _ = a in b`.
    Let(Box<Binding>, Box<Expr>),
    /// `recursive let f = .. let g = .. in body`.
    RecLets(Vec<Binding>, Box<Expr>),
    App(Box<Expr>, Box<Expr>),
    /// `match e with p then a else b`; `if` and `switch` become matches and
    /// a missing else branch is `never`.
    Match {
        scrutinee: Box<Expr>,
        pattern: Box<Pat>,
        then: Box<Expr>,
        otherwise: Box<Expr>,
    },
    /// A sequence literal `[a, b]`.
    Seq(Vec<Expr>),
    /// A record literal; tuples and `()` too.
    Record(Vec<(Label, Expr)>),
    /// `{r with l = e}`.
    RecordUpdate(Box<Expr>, Vec<(Label, Expr)>),
    /// `e.l`, `e.0`.
    Proj(Box<Expr>, Label),
    /// `K e`.
    ConApp(Name, Box<Expr>),
    Never,
    Utest(Box<Utest>, Box<Expr>),
    External(Box<ExternalDecl>, Box<Expr>),
    TypeDecl(Box<TypeDecl>, Box<Expr>),
    ConDecl(Box<ConDecl>, Box<Expr>),
    /// Stands for a part that did not parse; no further error is reported.
    Error,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Pat {
    pub kind: PatKind,
    pub span: Span,
    #[serde(with = "crate::stored::unknown")]
    pub ty: Ty,
}

impl Pat {
    pub fn new(kind: PatKind, span: Span) -> Pat {
        Pat { kind, span, ty: Ty::unknown() }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum PatKind {
    Wild,
    Bind(Name),
    Int(i64),
    Char(char),
    Bool(bool),
    /// `K p`; a constructor written without argument matches any argument.
    Con(Name, Box<Pat>),
    /// Records, tuples and `()`.
    Record(Vec<(Label, Pat)>),
    /// `[p, q]` and string patterns.
    Seq(Vec<Pat>),
    /// `[p] ++ x ++ [q]`: a prefix, a middle bound to a name (or `_`: None)
    /// and a suffix.
    Edge {
        prefix: Vec<Pat>,
        middle: Option<Name>,
        suffix: Vec<Pat>,
    },
    And(Box<Pat>, Box<Pat>),
    Or(Box<Pat>, Box<Pat>),
    Not(Box<Pat>),
    Error,
}

/// `include "path"` as written.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Include {
    pub path: String,
    pub span: Span,
}

/// A top-level declaration.
// A file has few items, each stored once: boxing the large variants
// (`Utest` holds four expressions) would save little and add indirection.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Item {
    Let(Binding),
    RecLets(Vec<Binding>, Span),
    Type(TypeDecl),
    Con(ConDecl),
    Utest(Utest),
    External(ExternalDecl),
}

impl Item {
    pub fn span(&self) -> Span {
        match self {
            Item::Let(b) => b.span,
            Item::RecLets(_, span) => *span,
            Item::Type(d) => d.span,
            Item::Con(d) => d.span,
            Item::Utest(u) => u.span,
            Item::External(d) => d.span,
        }
    }
}

/// The top-level utests of a program's modules (in load order), each
/// with where it is (module, item) and its identity (`NameId::top_utest`:
/// the utests numbered in that order), the one numbering every tier
/// keys them by.
pub fn top_utests<'a>(
    modules: &'a [&'a Module],
) -> impl Iterator<Item = ((usize, usize), crate::NameId, &'a Utest)> + 'a {
    modules
        .iter()
        .enumerate()
        .flat_map(|(mi, m)| m.items.iter().enumerate().map(move |(ii, item)| ((mi, ii), item)))
        .filter_map(|(at, item)| match item {
            Item::Utest(u) => Some((at, u)),
            _ => None,
        })
        .enumerate()
        .map(|(n, (at, u))| (at, crate::NameId::top_utest(n as u32), u))
}

/// One source file: its includes, its declarations and its `mexpr` body.
#[derive(Clone, Debug, PartialEq, Default, Serialize, Deserialize)]
pub struct Module {
    pub includes: Vec<Include>,
    pub items: Vec<Item>,
    pub main: Option<Expr>,
}
