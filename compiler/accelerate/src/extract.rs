//! Extraction, exactly Algorithm 1 of the paper: walking the lifted
//! program's chain of declarations from the bottom up, keep a binding when
//! it is in the set of identifiers to extract, and then add the identifiers
//! its value uses. Recursive groups keep the members reachable from the
//! set, by a fixed point. Type and constructor declarations are kept (the
//! kept bindings' types may mention them); top-level utests are dropped
//! (utests inside kept functions stay). The result
//! ends in `()`.

use crate::free::free_vars;
use pmx_ast::*;
use rustc_hash::FxHashSet;

pub fn extract(ids: &FxHashSet<NameId>, e: &Expr) -> (FxHashSet<NameId>, Expr) {
    let unit = || Expr::unit(e.span);
    match &e.kind {
        ExprKind::RecLets(bs, rest) => {
            let (mut found, rest) = extract(ids, rest);
            let group: FxHashSet<NameId> = bs.iter().map(|b| b.name.id).collect();
            let mut kept: FxHashSet<NameId> = group.intersection(&found).copied().collect();
            // FIX of the paper: add the members that kept members use, until stable.
            loop {
                let before = kept.len();
                let used: Vec<NameId> = bs
                    .iter()
                    .filter(|b| kept.contains(&b.name.id))
                    .flat_map(|b| free_vars(&b.value))
                    .map(|f| f.id)
                    .filter(|id| group.contains(id))
                    .collect();
                kept.extend(used);
                if kept.len() == before {
                    break;
                }
            }
            for b in bs.iter().filter(|b| kept.contains(&b.name.id)) {
                found.extend(free_vars(&b.value).into_iter().map(|f| f.id));
            }
            found.extend(kept.iter().copied());
            let members: Vec<Binding> = bs.iter().filter(|b| kept.contains(&b.name.id)).cloned().collect();
            if members.is_empty() {
                return (found, rest);
            }
            (found, Expr { kind: ExprKind::RecLets(members, Box::new(rest)), span: e.span, ty: e.ty.clone() })
        }
        ExprKind::Let(b, rest) => {
            let (mut found, rest) = extract(ids, rest);
            if found.contains(&b.name.id) {
                found.extend(free_vars(&b.value).into_iter().map(|f| f.id));
                (found, Expr { kind: ExprKind::Let(b.clone(), Box::new(rest)), span: e.span, ty: e.ty.clone() })
            } else {
                (found, rest)
            }
        }
        ExprKind::External(d, rest) => {
            let (found, rest) = extract(ids, rest);
            if found.contains(&d.name.id) {
                (found, Expr { kind: ExprKind::External(d.clone(), Box::new(rest)), span: e.span, ty: e.ty.clone() })
            } else {
                (found, rest)
            }
        }
        ExprKind::TypeDecl(d, rest) => {
            let (found, rest) = extract(ids, rest);
            (found, Expr { kind: ExprKind::TypeDecl(d.clone(), Box::new(rest)), span: e.span, ty: e.ty.clone() })
        }
        ExprKind::ConDecl(d, rest) => {
            let (found, rest) = extract(ids, rest);
            (found, Expr { kind: ExprKind::ConDecl(d.clone(), Box::new(rest)), span: e.span, ty: e.ty.clone() })
        }
        ExprKind::Utest(_, rest) => extract(ids, rest),
        _ => (ids.clone(), unit()),
    }
}

/// The identities of the bindings of an extracted program, in order.
pub fn bindings(e: &Expr) -> Vec<(NameId, SmolStr)> {
    crate::chain::bindings(e).map(|b| (b.name.id, b.name.text.clone())).collect()
}
