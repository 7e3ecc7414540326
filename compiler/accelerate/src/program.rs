//! A whole program as one expression: the top-level declarations of every
//! file, in load order, as a chain of `let`/`recursive`/`type`/`con`/
//! `utest`/`external` expressions ending in the main file's `mexpr` body
//! (or `()`). This is the form the paper's algorithms are stated over; it
//! converts back to a module for printing.

use pmx_ast::*;

pub fn to_expr(modules: &[&Module]) -> Expr {
    let main = modules.last().and_then(|m| m.main.clone()).unwrap_or_else(|| Expr::unit(Span::BUILTIN));
    let mut items: Vec<Item> = modules.iter().flat_map(|m| m.items.iter().cloned()).collect();
    let mut e = main;
    while let Some(item) = items.pop() {
        let span = item.span();
        let kind = match item {
            Item::Let(b) => ExprKind::Let(Box::new(b), Box::new(e)),
            Item::RecLets(bs, _) => ExprKind::RecLets(bs, Box::new(e)),
            Item::Type(d) => ExprKind::TypeDecl(Box::new(d), Box::new(e)),
            Item::Con(d) => ExprKind::ConDecl(Box::new(d), Box::new(e)),
            Item::Utest(u) => ExprKind::Utest(Box::new(u), Box::new(e)),
            Item::External(d) => ExprKind::External(Box::new(d), Box::new(e)),
        };
        let ty = match &kind {
            ExprKind::Let(_, b) | ExprKind::RecLets(_, b) => b.ty.clone(),
            ExprKind::TypeDecl(_, b) | ExprKind::ConDecl(_, b) | ExprKind::Utest(_, b) | ExprKind::External(_, b) => {
                b.ty.clone()
            }
            _ => Ty::unknown(),
        };
        e = Expr { kind, span, ty };
    }
    e
}

/// The chain's declarations become items again; what is left is the body.
pub fn to_module(e: &Expr) -> Module {
    let mut items = Vec::new();
    let mut cur = e;
    loop {
        match &cur.kind {
            ExprKind::Let(b, rest) if !b.name.text.is_empty() => {
                items.push(Item::Let((**b).clone()));
                cur = rest;
            }
            ExprKind::RecLets(bs, rest) => {
                items.push(Item::RecLets(bs.clone(), cur.span));
                cur = rest;
            }
            ExprKind::TypeDecl(d, rest) => {
                items.push(Item::Type((**d).clone()));
                cur = rest;
            }
            ExprKind::ConDecl(d, rest) => {
                items.push(Item::Con((**d).clone()));
                cur = rest;
            }
            ExprKind::Utest(u, rest) => {
                items.push(Item::Utest((**u).clone()));
                cur = rest;
            }
            ExprKind::External(d, rest) => {
                items.push(Item::External((**d).clone()));
                cur = rest;
            }
            _ => break,
        }
    }
    let main = match &cur.kind {
        ExprKind::Record(fields) if fields.is_empty() => None,
        _ => Some(cur.clone()),
    };
    Module { includes: Vec::new(), items, main }
}
