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

/// A type with no type variables left.
fn concrete(t: &Ty) -> bool {
    match t.kind() {
        TyKind::Var(_) | TyKind::Meta(_) | TyKind::All(..) | TyKind::Unknown => false,
        TyKind::Seq(e) | TyKind::Tensor(e) => concrete(e),
        TyKind::Record(fs) => fs.iter().all(|(_, f)| concrete(f)),
        TyKind::Arrow(a, b) => concrete(a) && concrete(b),
        TyKind::Con(_, _, args) => args.iter().all(concrete),
        TyKind::Int | TyKind::Float | TyKind::Bool | TyKind::Char => true,
    }
}

/// Binds the type variables of `pattern` to the parts of `t` they match.
fn unify(pattern: &Ty, t: &Ty, map: &mut FxHashMap<u32, Ty>) {
    match (pattern.kind(), t.kind()) {
        (TyKind::Var(v), _) => {
            map.entry(v.id).or_insert_with(|| t.clone());
        }
        (TyKind::Seq(a), TyKind::Seq(b)) | (TyKind::Tensor(a), TyKind::Tensor(b)) => unify(a, b, map),
        (TyKind::Arrow(a1, r1), TyKind::Arrow(a2, r2)) => {
            unify(a1, a2, map);
            unify(r1, r2, map);
        }
        (TyKind::Record(f1), TyKind::Record(f2)) => {
            for (l, x) in f1 {
                if let Some((_, y)) = f2.iter().find(|(m, _)| m == l) {
                    unify(x, y, map);
                }
            }
        }
        (TyKind::Con(_, _, a1), TyKind::Con(_, _, a2)) => a1.iter().zip(a2).for_each(|(x, y)| unify(x, y, map)),
        _ => {}
    }
}

/// `t` with its type variables replaced (and quantifiers over them gone).
fn subst(t: &Ty, map: &FxHashMap<u32, Ty>) -> Ty {
    let k = match t.kind() {
        TyKind::Var(v) => return map.get(&v.id).cloned().unwrap_or_else(|| t.clone()),
        TyKind::All(v, _, body) if map.contains_key(&v.id) => return subst(body, map),
        TyKind::All(v, fs, body) => {
            TyKind::All(v.clone(), fs.iter().map(|(l, f)| (l.clone(), subst(f, map))).collect(), subst(body, map))
        }
        TyKind::Seq(e) => TyKind::Seq(subst(e, map)),
        TyKind::Tensor(e) => TyKind::Tensor(subst(e, map)),
        TyKind::Record(fs) => TyKind::Record(fs.iter().map(|(l, f)| (l.clone(), subst(f, map))).collect()),
        TyKind::Arrow(a, b) => TyKind::Arrow(subst(a, map), subst(b, map)),
        TyKind::Con(id, n, args) => TyKind::Con(*id, n.clone(), args.iter().map(|a| subst(a, map)).collect()),
        _ => return t.clone(),
    };
    Ty::new(k)
}

/// Makes every type in a copy concrete; annotations (which may name the
/// type variables) are dropped, the types say the same.
fn subst_expr(e: &mut Expr, map: &FxHashMap<u32, Ty>) {
    e.ty = subst(&e.ty, map);
    match &mut e.kind {
        ExprKind::Lam { annotation, .. } => *annotation = None,
        ExprKind::Let(b, _) => {
            b.scheme = subst(&b.scheme, map);
            b.annotation = None;
        }
        ExprKind::RecLets(bs, _) => bs.iter_mut().for_each(|b| {
            b.scheme = subst(&b.scheme, map);
            b.annotation = None;
        }),
        ExprKind::Match { pattern, .. } => subst_pat(pattern, map),
        _ => {}
    }
    pmx_ast::visit::children_mut(e, &mut |c| subst_expr(c, map));
}

fn subst_pat(p: &mut Pat, map: &FxHashMap<u32, Ty>) {
    p.ty = subst(&p.ty, map);
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
