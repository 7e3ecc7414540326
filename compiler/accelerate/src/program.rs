//! A whole program as one expression: the top-level declarations of every
//! file, in load order, as a chain of `let`/`recursive`/`type`/`con`/
//! `utest`/`external` expressions ending in the main file's `mexpr` body
//! (or `()`). This is the form the paper's algorithms are stated over; it
//! converts back to a module for printing.

use pmx_ast::*;

pub fn to_expr(modules: &[&Module]) -> Expr {
    to_expr_keeping(modules, &|_, _| true)
}

/// [`to_expr`] with only the items `keep` keeps (by module and item
/// index): the native host tier leaves out the definitions a run does not
/// reach, which it would otherwise copy and lift for nothing.
pub fn to_expr_keeping(modules: &[&Module], keep: &dyn Fn(usize, usize) -> bool) -> Expr {
    let main = modules.last().and_then(|m| m.main.clone()).unwrap_or_else(|| Expr::unit(Span::BUILTIN));
    let mut items: Vec<Item> = modules
        .iter()
        .enumerate()
        .flat_map(|(mi, m)| m.items.iter().enumerate().filter(move |(ii, _)| keep(mi, *ii)).map(|(_, i)| i.clone()))
        .collect();
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
    use crate::chain::Decl;
    let mut items = Vec::new();
    let mut cur = e;
    while let Some((d, rest)) = crate::chain::split(cur) {
        items.push(match d {
            // `let _ = e` in the body is sequencing, not a declaration.
            Decl::Let(b) if b.name.text.is_empty() => break,
            Decl::Let(b) => Item::Let(b.clone()),
            Decl::Rec(bs) => Item::RecLets(bs.to_vec(), cur.span),
            Decl::Type(d) => Item::Type(d.clone()),
            Decl::Con(d) => Item::Con(d.clone()),
            Decl::Utest(u) => Item::Utest(u.clone()),
            Decl::External(d) => Item::External(d.clone()),
        });
        cur = rest;
    }
    let main = match &cur.kind {
        ExprKind::Record(fields) if fields.is_empty() => None,
        _ => Some(cur.clone()),
    };
    Module { includes: Vec::new(), items, main }
}

/// The chain's declarations, each with `()` as its rest, and the body.
pub fn split_chain(mut e: Expr) -> (Vec<Expr>, Expr) {
    let mut decls = Vec::new();
    loop {
        let span = e.span;
        let Some(rest) = crate::chain::rest_mut(&mut e) else { return (decls, e) };
        let rest = std::mem::replace(rest, Expr::unit(span));
        decls.push(e);
        e = rest;
    }
}

/// The inverse of [`split_chain`].
pub fn join_chain(decls: Vec<Expr>, body: Expr) -> Expr {
    decls.into_iter().rev().fold(body, |rest, mut d| {
        d.ty = rest.ty.clone();
        *crate::chain::rest_mut(&mut d).expect("split_chain returns declarations") = rest;
        d
    })
}

/// The identities a declaration binds.
fn bound(d: &Expr) -> Vec<NameId> {
    crate::chain::split(d).map(|(d, _)| d.bindings().iter().map(|b| b.name.id).collect()).unwrap_or_default()
}

/// The whole program with a backend's rewritten declarations in place of
/// the ones they came from (the lifted program's `let`s and `recursive`
/// groups with the same identities), and the declarations the backend's
/// rewrites added placed before them; members of a `recursive` group that
/// the backend did not take stay after them. This is what the backend's program
/// would compute as part of the whole, so it can be run and compared with
/// the original (the property tests do).
pub fn splice(lifted: &Expr, backend: &Expr) -> Expr {
    let (ours, _) = split_chain(backend.clone());
    let (theirs, body) = split_chain(lifted.clone());
    let replaced: rustc_hash::FxHashSet<NameId> = ours.iter().flat_map(bound).collect();
    let mut ours = ours.into_iter().filter(|d| matches!(d.kind, ExprKind::Let(..) | ExprKind::RecLets(..))).peekable();
    let mut out = Vec::new();
    for mut d in theirs {
        let ids = bound(&d);
        let mut pending: rustc_hash::FxHashSet<NameId> =
            ids.iter().copied().filter(|id| replaced.contains(id)).collect();
        if pending.is_empty() {
            out.push(d);
            continue;
        }
        // Ours up to (and including) the last one binding these names: a
        // `recursive` group may have been split into several declarations.
        for o in ours.by_ref() {
            bound(&o).iter().for_each(|id| {
                pending.remove(id);
            });
            out.push(o);
            if pending.is_empty() {
                break;
            }
        }
        // Members of a group that the backend did not take (extraction
        // keeps only those accelerated code uses) stay, after ours: they
        // may use ours, ours do not use them.
        if let ExprKind::RecLets(bs, _) = &mut d.kind {
            bs.retain(|b| !replaced.contains(&b.name.id));
            if !bs.is_empty() {
                out.push(d);
            }
        }
    }
    out.extend(ours);
    join_chain(out, body)
}

/// Which declarations to keep when those `droppable` selects are kept
/// only if something kept uses them (`roots` are always kept).
pub fn keep_used(decls: &[Expr], roots: &[Expr], droppable: impl Fn(&Expr) -> bool) -> Vec<bool> {
    fn uses_of(e: &Expr, used: &mut rustc_hash::FxHashSet<NameId>) {
        if let ExprKind::Var(n) = &e.kind {
            used.insert(n.id);
        }
        pmx_ast::visit::children(e, &mut |c| uses_of(c, used));
    }
    let mut keep: Vec<bool> = decls.iter().map(|d| !droppable(d)).collect();
    loop {
        let mut used = rustc_hash::FxHashSet::default();
        decls.iter().zip(&keep).filter(|(_, k)| **k).for_each(|(d, _)| uses_of(d, &mut used));
        roots.iter().for_each(|r| uses_of(r, &mut used));
        let mut changed = false;
        for (d, k) in decls.iter().zip(keep.iter_mut()) {
            if !*k && bound(d).iter().any(|id| used.contains(id)) {
                *k = true;
                changed = true;
            }
        }
        if !changed {
            return keep;
        }
    }
}
