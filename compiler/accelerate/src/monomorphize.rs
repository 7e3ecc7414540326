//! Monomorphisation for CUDA (`monomorphize`, step 1 of the CUDA side of
//! section 4.6 of the reference). C has no polymorphism: each C function
//! has one signature, and every sequence, tensor and record type becomes
//! its own struct. So each polymorphic top-level function the CUDA program
//! uses is copied once per concrete type it is used at, its types made
//! concrete, and each use calls the copy for its type. Copies are placed
//! right after the function they copy (after everything it uses); a copy's
//! body is monomorphised in turn, so a polymorphic function that calls
//! another gives a copy of each. Polymorphic functions left with no use
//! are dropped. Uses at types that are still not concrete (inside a
//! polymorphic function nothing uses at a concrete type), and recursive
//! groups of several polymorphic functions, are left as they are.

use crate::freshen::{freshen, Fresh};
use crate::program::{join_chain, split_chain};
use pmx_ast::subst::{apply, concrete, unify};
use pmx_ast::*;
use rustc_hash::FxHashMap;

/// Identities of the copies and their binders.
const BASE: u32 = (1 << 29) + (1 << 28) + (1 << 27);

struct Poly {
    /// Where it is declared.
    at: usize,
    binding: Binding,
    recursive: bool,
}

struct Mono {
    poly: FxHashMap<NameId, Poly>,
    instances: FxHashMap<(NameId, Ty), Name>,
    /// Copies to place after each declaration.
    after: FxHashMap<usize, Vec<Expr>>,
    fresh: Fresh,
}

pub fn monomorphize(program: &mut Expr) {
    let (mut decls, mut body) = split_chain(std::mem::replace(program, Expr::unit(Span::BUILTIN)));
    let mut m = Mono {
        poly: FxHashMap::default(),
        instances: FxHashMap::default(),
        after: FxHashMap::default(),
        fresh: Fresh::new(BASE),
    };
    for (i, d) in decls.iter().enumerate() {
        match &d.kind {
            ExprKind::Let(b, _) if polymorphic(b) => {
                m.poly.insert(b.name.id, Poly { at: i, binding: (**b).clone(), recursive: false });
            }
            ExprKind::RecLets(bs, _) if bs.len() == 1 && polymorphic(&bs[0]) => {
                m.poly.insert(bs[0].name.id, Poly { at: i, binding: bs[0].clone(), recursive: true });
            }
            _ => {}
        }
    }
    for d in decls.iter_mut() {
        let own: Vec<NameId> = match &d.kind {
            ExprKind::Let(b, _) => vec![b.name.id],
            ExprKind::RecLets(bs, _) => bs.iter().map(|b| b.name.id).collect(),
            _ => Vec::new(),
        };
        if own.iter().any(|id| m.poly.contains_key(id)) {
            continue;
        }
        match &mut d.kind {
            ExprKind::Let(b, _) => m.uses(&mut b.value),
            ExprKind::RecLets(bs, _) => bs.iter_mut().for_each(|b| m.uses(&mut b.value)),
            ExprKind::Utest(u, _) => {
                m.uses(&mut u.test);
                m.uses(&mut u.expected);
            }
            _ => {}
        }
    }
    m.uses(&mut body);
    let copies_at: FxHashMap<usize, usize> = m.after.iter().map(|(i, c)| (*i, c.len())).collect();
    // Polymorphic functions still used by what is kept stay (used at
    // types that are not concrete); the others are dropped.
    let copies: Vec<Expr> = (0..decls.len()).flat_map(|i| m.after.remove(&i).unwrap_or_default()).collect();
    let poly_at = |d: &Expr| match &d.kind {
        ExprKind::Let(b, _) => m.poly.contains_key(&b.name.id),
        ExprKind::RecLets(bs, _) => bs.iter().any(|b| m.poly.contains_key(&b.name.id)),
        _ => false,
    };
    let keep = crate::program::keep_used(&decls, &[&copies[..], std::slice::from_ref(&body)].concat(), poly_at);
    let mut copies = copies.into_iter();
    let mut out = Vec::new();
    for (i, d) in decls.into_iter().enumerate() {
        let n = copies_at.get(&i).copied().unwrap_or(0);
        if keep[i] {
            out.push(d);
        }
        out.extend(copies.by_ref().take(n));
    }
    *program = join_chain(out, body);
}

fn polymorphic(b: &Binding) -> bool {
    matches!(b.scheme.kind(), TyKind::All(..))
}

/// Makes every type in a copy concrete; annotations (which may name the
/// type variables) are dropped, the types say the same.
pub(crate) fn subst_expr(e: &mut Expr, map: &FxHashMap<u32, Ty>) {
    e.ty = apply(&e.ty, map);
    match &mut e.kind {
        ExprKind::Lam { annotation, .. } => *annotation = None,
        ExprKind::Let(b, _) => {
            b.scheme = apply(&b.scheme, map);
            b.annotation = None;
        }
        ExprKind::RecLets(bs, _) => bs.iter_mut().for_each(|b| {
            b.scheme = apply(&b.scheme, map);
            b.annotation = None;
        }),
        ExprKind::Match { pattern, .. } => subst_pat(pattern, map),
        _ => {}
    }
    pmx_ast::visit::children_mut(e, &mut |c| subst_expr(c, map));
}

fn subst_pat(p: &mut Pat, map: &FxHashMap<u32, Ty>) {
    p.ty = apply(&p.ty, map);
    match &mut p.kind {
        PatKind::Con(_, a) | PatKind::Not(a) => subst_pat(a, map),
        PatKind::Record(fields) => fields.iter_mut().for_each(|(_, f)| subst_pat(f, map)),
        PatKind::Seq(items) => items.iter_mut().for_each(|i| subst_pat(i, map)),
        PatKind::Edge { prefix, suffix, .. } => prefix.iter_mut().chain(suffix).for_each(|i| subst_pat(i, map)),
        PatKind::And(a, b) | PatKind::Or(a, b) => {
            subst_pat(a, map);
            subst_pat(b, map);
        }
        _ => {}
    }
}

impl Mono {
    /// Points each use of a polymorphic function at a concrete type to the
    /// copy for that type.
    fn uses(&mut self, e: &mut Expr) {
        if let ExprKind::Var(n) = &mut e.kind {
            if self.poly.contains_key(&n.id) && concrete(&e.ty) {
                let copy = self.instance(n.id, &e.ty);
                n.id = copy.id;
            }
            return;
        }
        pmx_ast::visit::children_mut(e, &mut |c| self.uses(c));
    }

    /// The copy of `f` at type `t`, made the first time it is asked for.
    fn instance(&mut self, f: NameId, t: &Ty) -> Name {
        if let Some(n) = self.instances.get(&(f, t.clone())) {
            return n.clone();
        }
        let p = &self.poly[&f];
        let (at, recursive) = (p.at, p.recursive);
        let mut b = p.binding.clone();
        let mut map = FxHashMap::default();
        unify(b.scheme.strip_foralls(), t, &mut map);
        let name = self.fresh.name(&b.name);
        self.instances.insert((f, t.clone()), name.clone());
        freshen(&mut b.value, &mut self.fresh);
        subst_expr(&mut b.value, &map);
        if recursive {
            // Its calls of itself are at the same type: the copy itself.
            rename(&mut b.value, f, &name);
        }
        self.uses(&mut b.value);
        b.name = name.clone();
        b.scheme = t.clone();
        b.annotation = None;
        let span = b.span;
        let rest = Box::new(Expr::unit(span));
        let kind = if recursive { ExprKind::RecLets(vec![b], rest) } else { ExprKind::Let(Box::new(b), rest) };
        self.after.entry(at).or_default().push(Expr { kind, span, ty: Ty::unit() });
        name
    }
}

fn rename(e: &mut Expr, from: NameId, to: &Name) {
    if let ExprKind::Var(n) = &mut e.kind {
        if n.id == from {
            n.id = to.id;
        }
        return;
    }
    pmx_ast::visit::children_mut(e, &mut |c| rename(c, from, to));
}
