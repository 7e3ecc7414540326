//! Copies of code with fresh binders. Specialising a function (Futhark's
//! higher-order inlining, CUDA's monomorphisation) copies its body; every
//! identity in a program names one binder, so each copy's parameters,
//! `let`s and pattern variables get new identities (in `SYNTHETIC`, from
//! the pass's own range) and their uses follow.

use crate::lift::SYNTHETIC;
use pmx_ast::*;
use rustc_hash::FxHashMap;

/// New identities from one range of `SYNTHETIC`.
pub struct Fresh {
    base: u32,
    next: u32,
}

impl Fresh {
    pub fn new(base: u32) -> Fresh {
        Fresh { base, next: 0 }
    }

    /// A new name that prints like `like`.
    pub fn name(&mut self, like: &Name) -> Name {
        self.named(like.text.clone(), like.span)
    }

    /// A new name that prints as `text`.
    pub fn named(&mut self, text: SmolStr, span: Span) -> Name {
        self.next += 1;
        Name { text, span, id: NameId { file: SYNTHETIC, index: self.base + self.next } }
    }
}

/// Gives every binder inside `e` a fresh identity.
pub fn freshen(e: &mut Expr, fresh: &mut Fresh) {
    let mut map = FxHashMap::default();
    expr(e, fresh, &mut map);
}

fn bind(n: &mut Name, fresh: &mut Fresh, map: &mut FxHashMap<NameId, Name>) {
    let new = fresh.name(n);
    map.insert(n.id, new.clone());
    *n = new;
}

fn expr(e: &mut Expr, fresh: &mut Fresh, map: &mut FxHashMap<NameId, Name>) {
    match &mut e.kind {
        ExprKind::Var(n) => {
            if let Some(new) = map.get(&n.id) {
                n.id = new.id;
            }
            return;
        }
        ExprKind::Lam { param, .. } => bind(param, fresh, map),
        ExprKind::Let(b, body) => {
            expr(&mut b.value, fresh, map);
            bind(&mut b.name, fresh, map);
            expr(body, fresh, map);
            return;
        }
        ExprKind::RecLets(bs, _) => bs.iter_mut().for_each(|b| bind(&mut b.name, fresh, map)),
        ExprKind::Match { pattern, .. } => pat(pattern, fresh, map),
        _ => {}
    }
    pmx_ast::visit::children_mut(e, &mut |c| expr(c, fresh, map));
}

fn pat(p: &mut Pat, fresh: &mut Fresh, map: &mut FxHashMap<NameId, Name>) {
    match &mut p.kind {
        PatKind::Bind(n) => bind(n, fresh, map),
        PatKind::Con(_, a) | PatKind::Not(a) => pat(a, fresh, map),
        PatKind::Record(fields) => fields.iter_mut().for_each(|(_, f)| pat(f, fresh, map)),
        PatKind::Seq(items) => items.iter_mut().for_each(|i| pat(i, fresh, map)),
        PatKind::Edge { prefix, middle, suffix } => {
            prefix.iter_mut().for_each(|i| pat(i, fresh, map));
            if let Some(m) = middle {
                bind(m, fresh, map);
            }
            suffix.iter_mut().for_each(|i| pat(i, fresh, map));
        }
        PatKind::And(a, b) | PatKind::Or(a, b) => {
            // Both sides of an `|` pattern bind the same names: one new
            // identity each.
            pat(a, fresh, map);
            rebind(b, map, fresh);
        }
        _ => {}
    }
}

/// The second side of an and/or pattern: names already seen on the first
/// side keep the identity given there.
fn rebind(p: &mut Pat, map: &mut FxHashMap<NameId, Name>, fresh: &mut Fresh) {
    match &mut p.kind {
        PatKind::Bind(n) => match map.get(&n.id) {
            Some(new) => *n = new.clone(),
            None => bind(n, fresh, map),
        },
        PatKind::Edge { prefix, middle, suffix } => {
            prefix.iter_mut().for_each(|i| rebind(i, map, fresh));
            if let Some(m) = middle {
                match map.get(&m.id) {
                    Some(new) => *m = new.clone(),
                    None => bind(m, fresh, map),
                }
            }
            suffix.iter_mut().for_each(|i| rebind(i, map, fresh));
        }
        PatKind::Con(_, a) | PatKind::Not(a) => rebind(a, map, fresh),
        PatKind::Record(fields) => fields.iter_mut().for_each(|(_, f)| rebind(f, map, fresh)),
        PatKind::Seq(items) => items.iter_mut().for_each(|i| rebind(i, map, fresh)),
        PatKind::And(a, b) | PatKind::Or(a, b) => {
            rebind(a, map, fresh);
            rebind(b, map, fresh);
        }
        _ => {}
    }
}
