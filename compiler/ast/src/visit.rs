//! Walking the tree: the direct sub-expressions of an expression, and the
//! free variables of one. Passes that rewrite or inspect the tree build on
//! these instead of each spelling out every form.

use crate::*;
use rustc_hash::FxHashSet;

/// Calls `f` on each direct sub-expression of `e`, in evaluation order
/// (binding values before bodies, utest parts before the body).
pub fn children<'a>(e: &'a Expr, f: &mut impl FnMut(&'a Expr)) {
    match &e.kind {
        ExprKind::Var(_) | ExprKind::Lit(_) | ExprKind::Never | ExprKind::Error => {}
        ExprKind::Lam { body, .. } => f(body),
        ExprKind::Let(b, body) => {
            f(&b.value);
            f(body);
        }
        ExprKind::RecLets(bs, body) => {
            bs.iter().for_each(|b| f(&b.value));
            f(body);
        }
        ExprKind::App(g, a) => {
            f(g);
            f(a);
        }
        ExprKind::Match { scrutinee, then, otherwise, .. } => {
            f(scrutinee);
            f(then);
            f(otherwise);
        }
        ExprKind::Seq(items) => items.iter().for_each(f),
        ExprKind::Record(fields) => fields.iter().for_each(|(_, x)| f(x)),
        ExprKind::RecordUpdate(r, fields) => {
            f(r);
            fields.iter().for_each(|(_, x)| f(x));
        }
        ExprKind::Proj(r, _) => f(r),
        ExprKind::ConApp(_, a) => f(a),
        ExprKind::Utest(u, body) => {
            f(&u.test);
            f(&u.expected);
            if let Some(x) = &u.using {
                f(x);
            }
            if let Some(x) = &u.on_fail {
                f(x);
            }
            f(body);
        }
        ExprKind::External(_, body) | ExprKind::TypeDecl(_, body) | ExprKind::ConDecl(_, body) => f(body),
    }
}

/// How many lambdas `e` opens with (`lam x. lam y. ..`: 2). A definition
/// whose type takes more arguments than that computes something before it
/// returns a function, which code generators that make one function of
/// all the parameters must refuse (they would compute it at every call).
pub fn leading_lambdas(e: &Expr) -> usize {
    under_lambdas(e).0
}

/// [`leading_lambdas`], and the body they leave.
pub fn under_lambdas(e: &Expr) -> (usize, &Expr) {
    let mut n = 0;
    let mut v = e;
    while let ExprKind::Lam { body, .. } = &v.kind {
        n += 1;
        v = body;
    }
    (n, v)
}

/// Calls `f` on each direct sub-expression of `e`, mutably.
pub fn children_mut(e: &mut Expr, f: &mut impl FnMut(&mut Expr)) {
    match &mut e.kind {
        ExprKind::Var(_) | ExprKind::Lit(_) | ExprKind::Never | ExprKind::Error => {}
        ExprKind::Lam { body, .. } => f(body),
        ExprKind::Let(b, body) => {
            f(&mut b.value);
            f(body);
        }
        ExprKind::RecLets(bs, body) => {
            bs.iter_mut().for_each(|b| f(&mut b.value));
            f(body);
        }
        ExprKind::App(g, a) => {
            f(g);
            f(a);
        }
        ExprKind::Match { scrutinee, then, otherwise, .. } => {
            f(scrutinee);
            f(then);
            f(otherwise);
        }
        ExprKind::Seq(items) => items.iter_mut().for_each(f),
        ExprKind::Record(fields) => fields.iter_mut().for_each(|(_, x)| f(x)),
        ExprKind::RecordUpdate(r, fields) => {
            f(r);
            fields.iter_mut().for_each(|(_, x)| f(x));
        }
        ExprKind::Proj(r, _) => f(r),
        ExprKind::ConApp(_, a) => f(a),
        ExprKind::Utest(u, body) => {
            f(&mut u.test);
            f(&mut u.expected);
            if let Some(x) = &mut u.using {
                f(x);
            }
            if let Some(x) = &mut u.on_fail {
                f(x);
            }
            f(body);
        }
        ExprKind::External(_, body) | ExprKind::TypeDecl(_, body) | ExprKind::ConDecl(_, body) => f(body),
    }
}

/// A variable an expression uses but does not bind: its name (identity
/// and the span of its first use) and its type at that use.
#[derive(Clone, Debug)]
pub struct FreeVar {
    pub id: NameId,
    pub name: Name,
    pub ty: Ty,
}

/// The free variables of `e`, in order of first use, leaving out built-ins.
pub fn free_vars(e: &Expr) -> Vec<FreeVar> {
    let mut free = Free::default();
    walk_free(e, &mut free);
    free.out
}

/// The state of [`free_vars`]' walk. Fx hashing: the accelerate passes ask
/// for the free variables of every function after every edit, and these
/// sets were a visible part of that time with the default hasher.
#[derive(Default)]
struct Free {
    bound: FxHashSet<NameId>,
    seen: FxHashSet<NameId>,
    out: Vec<FreeVar>,
}

fn walk_free(e: &Expr, free: &mut Free) {
    let bound = &mut free.bound;
    match &e.kind {
        ExprKind::Var(n) => {
            if n.id.as_builtin().is_none() && n.id.is_resolved() && !bound.contains(&n.id) && free.seen.insert(n.id) {
                free.out.push(FreeVar { id: n.id, name: n.clone(), ty: e.ty.clone() });
            }
            return;
        }
        ExprKind::Lam { param, .. } => {
            bound.insert(param.id);
        }
        ExprKind::Let(b, body) => {
            // The value first: a let does not bind its name in its value.
            walk_free(&b.value, free);
            free.bound.insert(b.name.id);
            walk_free(body, free);
            return;
        }
        ExprKind::RecLets(bs, _) => bs.iter().for_each(|b| {
            bound.insert(b.name.id);
        }),
        ExprKind::Match { scrutinee, pattern, then, otherwise } => {
            walk_free(scrutinee, free);
            pat_binders(pattern, &mut free.bound);
            walk_free(then, free);
            walk_free(otherwise, free);
            return;
        }
        ExprKind::External(d, _) => {
            bound.insert(d.name.id);
        }
        _ => {}
    }
    children(e, &mut |c| walk_free(c, free));
}

/// Adds the names a pattern binds.
pub fn pat_binders(p: &Pat, bound: &mut FxHashSet<NameId>) {
    pat_binder_names(p, &mut |n| {
        bound.insert(n.id);
    });
}

/// Calls `f` on each name a pattern binds (before name resolution too).
pub fn pat_binder_names<'a>(p: &'a Pat, f: &mut dyn FnMut(&'a Name)) {
    pat_binders_at(p, &mut |n, _| f(n));
}

/// Calls `f` on each name a pattern binds, in source order, with the
/// pattern that binds it, whose type is the name's (a variable pattern,
/// or the sequence pattern whose middle it names).
pub fn pat_binders_at<'a>(p: &'a Pat, f: &mut dyn FnMut(&'a Name, &'a Pat)) {
    match &p.kind {
        PatKind::Bind(n) => f(n, p),
        PatKind::Con(_, a) | PatKind::Not(a) => pat_binders_at(a, f),
        PatKind::Record(fields) => fields.iter().for_each(|(_, q)| pat_binders_at(q, f)),
        PatKind::Seq(items) => items.iter().for_each(|i| pat_binders_at(i, f)),
        PatKind::Edge { prefix, middle, suffix } => {
            prefix.iter().for_each(|i| pat_binders_at(i, f));
            if let Some(m) = middle {
                f(m, p);
            }
            suffix.iter().for_each(|i| pat_binders_at(i, f));
        }
        PatKind::And(a, b) | PatKind::Or(a, b) => {
            pat_binders_at(a, f);
            pat_binders_at(b, f);
        }
        PatKind::Wild | PatKind::Int(_) | PatKind::Char(_) | PatKind::Bool(_) | PatKind::Error => {}
    }
}
