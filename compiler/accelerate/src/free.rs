//! Free variables.

use pmx_ast::*;
use rustc_hash::FxHashSet;

/// A variable an expression uses but does not bind: its identity, name,
/// type (at the first use) and the span of that use.
#[derive(Clone, Debug)]
pub struct FreeVar {
    pub id: NameId,
    pub name: Name,
    pub ty: Ty,
}

/// The free variables of `e`, in order of first use, leaving out built-ins.
pub fn free_vars(e: &Expr) -> Vec<FreeVar> {
    let mut out = Vec::new();
    let mut bound = FxHashSet::default();
    walk(e, &mut bound, &mut out);
    out
}

fn walk(e: &Expr, bound: &mut FxHashSet<NameId>, out: &mut Vec<FreeVar>) {
    match &e.kind {
        ExprKind::Var(n) => {
            if n.id.as_builtin().is_none()
                && n.id.is_resolved()
                && !bound.contains(&n.id)
                && !out.iter().any(|f| f.id == n.id)
            {
                out.push(FreeVar { id: n.id, name: n.clone(), ty: e.ty.clone() });
            }
        }
        ExprKind::Lit(_) | ExprKind::Never | ExprKind::Error => {}
        ExprKind::Lam { param, body, .. } => {
            bound.insert(param.id);
            walk(body, bound, out);
        }
        ExprKind::Let(b, body) => {
            walk(&b.value, bound, out);
            bound.insert(b.name.id);
            walk(body, bound, out);
        }
        ExprKind::RecLets(bs, body) => {
            for b in bs {
                bound.insert(b.name.id);
            }
            for b in bs {
                walk(&b.value, bound, out);
            }
            walk(body, bound, out);
        }
        ExprKind::App(f, a) => {
            walk(f, bound, out);
            walk(a, bound, out);
        }
        ExprKind::Match { scrutinee, pattern, then, otherwise } => {
            walk(scrutinee, bound, out);
            pat_binders(pattern, bound);
            walk(then, bound, out);
            walk(otherwise, bound, out);
        }
        ExprKind::Seq(items) => items.iter().for_each(|i| walk(i, bound, out)),
        ExprKind::Record(fields) => fields.iter().for_each(|(_, f)| walk(f, bound, out)),
        ExprKind::RecordUpdate(r, fields) => {
            walk(r, bound, out);
            fields.iter().for_each(|(_, f)| walk(f, bound, out));
        }
        ExprKind::Proj(r, _) => walk(r, bound, out),
        ExprKind::ConApp(_, a) => walk(a, bound, out),
        ExprKind::Utest(u, body) => {
            for x in [Some(&u.test), Some(&u.expected), u.using.as_ref(), u.on_fail.as_ref()].into_iter().flatten() {
                walk(x, bound, out);
            }
            walk(body, bound, out);
        }
        ExprKind::External(d, body) => {
            bound.insert(d.name.id);
            walk(body, bound, out);
        }
        ExprKind::TypeDecl(_, body) | ExprKind::ConDecl(_, body) => walk(body, bound, out),
    }
}

pub fn pat_binders(p: &Pat, bound: &mut FxHashSet<NameId>) {
    match &p.kind {
        PatKind::Bind(n) => {
            bound.insert(n.id);
        }
        PatKind::Con(_, a) | PatKind::Not(a) => pat_binders(a, bound),
        PatKind::Record(fields) => fields.iter().for_each(|(_, f)| pat_binders(f, bound)),
        PatKind::Seq(items) => items.iter().for_each(|i| pat_binders(i, bound)),
        PatKind::Edge { prefix, middle, suffix } => {
            prefix.iter().chain(suffix).for_each(|i| pat_binders(i, bound));
            if let Some(m) = middle {
                bound.insert(m.id);
            }
        }
        PatKind::And(a, b) | PatKind::Or(a, b) => {
            pat_binders(a, bound);
            pat_binders(b, bound);
        }
        PatKind::Wild | PatKind::Int(_) | PatKind::Char(_) | PatKind::Bool(_) | PatKind::Error => {}
    }
}

/// Whether a type is a function type (under quantifiers).
pub fn is_function(t: &Ty) -> bool {
    matches!(t.strip_foralls().kind(), TyKind::Arrow(..))
}

/// Renames variables (references and binders) by a map of identities.
pub fn rename(e: &mut Expr, map: &rustc_hash::FxHashMap<NameId, Name>) {
    match &mut e.kind {
        ExprKind::Var(n) => {
            if let Some(new) = map.get(&n.id) {
                n.id = new.id;
                n.text = new.text.clone();
            }
        }
        ExprKind::Lit(_) | ExprKind::Never | ExprKind::Error => {}
        ExprKind::Lam { body, .. } => rename(body, map),
        ExprKind::Let(b, body) => {
            rename(&mut b.value, map);
            rename(body, map);
        }
        ExprKind::RecLets(bs, body) => {
            bs.iter_mut().for_each(|b| rename(&mut b.value, map));
            rename(body, map);
        }
        ExprKind::App(f, a) => {
            rename(f, map);
            rename(a, map);
        }
        ExprKind::Match { scrutinee, then, otherwise, .. } => {
            rename(scrutinee, map);
            rename(then, map);
            rename(otherwise, map);
        }
        ExprKind::Seq(items) => items.iter_mut().for_each(|i| rename(i, map)),
        ExprKind::Record(fields) => fields.iter_mut().for_each(|(_, f)| rename(f, map)),
        ExprKind::RecordUpdate(r, fields) => {
            rename(r, map);
            fields.iter_mut().for_each(|(_, f)| rename(f, map));
        }
        ExprKind::Proj(r, _) => rename(r, map),
        ExprKind::ConApp(_, a) => rename(a, map),
        ExprKind::Utest(u, body) => {
            rename(&mut u.test, map);
            rename(&mut u.expected, map);
            if let Some(x) = &mut u.using {
                rename(x, map);
            }
            if let Some(x) = &mut u.on_fail {
                rename(x, map);
            }
            rename(body, map);
        }
        ExprKind::External(_, body) | ExprKind::TypeDecl(_, body) | ExprKind::ConDecl(_, body) => rename(body, map),
    }
}
