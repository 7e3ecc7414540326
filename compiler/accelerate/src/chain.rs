//! The top-level chain: a program as one expression (`program.rs`) is a
//! chain of declarations ending in a body. Every pass that walks the chain
//! uses [`decls`] (each declaration with the node that holds it) and
//! [`body`], so that a new kind of declaration is handled in one place.

use pmx_ast::*;

/// One declaration of the chain.
#[derive(Clone, Copy, Debug)]
pub enum Decl<'a> {
    Let(&'a Binding),
    Rec(&'a [Binding]),
    Utest(&'a Utest),
    External(&'a ExternalDecl),
    Type(&'a TypeDecl),
    Con(&'a ConDecl),
}

impl<'a> Decl<'a> {
    /// The bindings it makes (`let`s and `recursive` groups).
    pub fn bindings(self) -> &'a [Binding] {
        match self {
            Decl::Let(b) => std::slice::from_ref(b),
            Decl::Rec(bs) => bs,
            _ => &[],
        }
    }
}

/// The declaration a chain node holds and the rest of the chain; `None`
/// for the body.
pub fn split(e: &Expr) -> Option<(Decl<'_>, &Expr)> {
    Some(match &e.kind {
        ExprKind::Let(b, rest) => (Decl::Let(b), &**rest),
        ExprKind::RecLets(bs, rest) => (Decl::Rec(bs), &**rest),
        ExprKind::Utest(u, rest) => (Decl::Utest(u), &**rest),
        ExprKind::External(d, rest) => (Decl::External(d), &**rest),
        ExprKind::TypeDecl(d, rest) => (Decl::Type(d), &**rest),
        ExprKind::ConDecl(d, rest) => (Decl::Con(d), &**rest),
        _ => return None,
    })
}

/// The rest of the chain after the declaration `e` holds (mutable).
pub fn rest_mut(e: &mut Expr) -> Option<&mut Expr> {
    match &mut e.kind {
        ExprKind::Let(_, rest)
        | ExprKind::RecLets(_, rest)
        | ExprKind::Utest(_, rest)
        | ExprKind::External(_, rest)
        | ExprKind::TypeDecl(_, rest)
        | ExprKind::ConDecl(_, rest) => Some(rest),
        _ => None,
    }
}

/// The declarations of the chain, in order, each with its node.
pub fn decls(e: &Expr) -> Decls<'_> {
    Decls { cur: e }
}

pub struct Decls<'a> {
    cur: &'a Expr,
}

impl<'a> Iterator for Decls<'a> {
    type Item = (Decl<'a>, &'a Expr);

    fn next(&mut self) -> Option<Self::Item> {
        let node = self.cur;
        let (d, rest) = split(node)?;
        self.cur = rest;
        Some((d, node))
    }
}

/// The body the chain ends in.
pub fn body(e: &Expr) -> &Expr {
    let mut cur = e;
    while let Some((_, rest)) = split(cur) {
        cur = rest;
    }
    cur
}

/// The bindings of the chain (`let`s and members of `recursive` groups),
/// in order.
pub fn bindings(e: &Expr) -> impl Iterator<Item = &Binding> {
    decls(e).flat_map(|(d, _)| d.bindings())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit() -> Expr {
        Expr::unit(Span::BUILTIN)
    }

    fn binding(text: &str, index: u32) -> Binding {
        let name = Name { text: SmolStr::new(text), span: Span::BUILTIN, id: NameId { file: FileId(0), index } };
        Binding { name, annotation: None, value: unit(), scheme: Ty::unit(), span: Span::BUILTIN }
    }

    #[test]
    fn walks_declarations_then_stops_at_the_body() {
        let end = Expr { kind: ExprKind::Lit(Lit::Int(7)), span: Span::BUILTIN, ty: Ty::int() };
        let rec = Expr {
            kind: ExprKind::RecLets(vec![binding("g", 2), binding("h", 3)], Box::new(end)),
            span: Span::BUILTIN,
            ty: Ty::int(),
        };
        let chain =
            Expr { kind: ExprKind::Let(Box::new(binding("f", 1)), Box::new(rec)), span: Span::BUILTIN, ty: Ty::int() };
        let names: Vec<&str> = bindings(&chain).map(|b| b.name.text.as_str()).collect();
        assert_eq!(names, ["f", "g", "h"]);
        assert_eq!(decls(&chain).count(), 2);
        assert!(matches!(body(&chain).kind, ExprKind::Lit(Lit::Int(7))));
    }
}
