//! Demotion of `recursive` groups (`demoteRecursive`, step 7 of the
//! Futhark side of section 4.6 of the reference): Futhark has no
//! recursion, so a group is split into its strongly connected components
//! (functions that call each other, directly or through others), placed
//! in dependency order (each after the components it uses; otherwise in
//! the order of their first member). A component of one binding that does
//! not call itself becomes a plain `let`; the others stay `recursive`
//! groups (which the Futhark well-formedness check then reports).
//!
//! Reordering is only safe when evaluating the members does nothing, so a
//! group is split only when every member is a lambda. Otherwise only a
//! group of one binding that does not use itself becomes a `let`.

use crate::free::free_vars;
use pmx_ast::*;
use rustc_hash::FxHashMap;

/// Demotes every `recursive` group in `e`, at any depth.
pub fn demote_recursive(e: &mut Expr) {
    if let ExprKind::RecLets(bs, _) = &e.kind {
        if let Some((components, self_using)) = split(bs) {
            let ExprKind::RecLets(bs, rest) = std::mem::replace(&mut e.kind, ExprKind::Never) else {
                unreachable!("matched above")
            };
            *e = rebuild(bs, components, &self_using, *rest, e.span, &e.ty);
        }
    }
    pmx_ast::visit::children_mut(e, &mut demote_recursive);
}

/// The group's components (member indices, in program order), in the
/// order they are to be declared, and which members use themselves;
/// `None` when the group stays as it is.
fn split(bs: &[Binding]) -> Option<(Vec<Vec<usize>>, Vec<bool>)> {
    let index: FxHashMap<NameId, usize> = bs.iter().enumerate().map(|(i, b)| (b.name.id, i)).collect();
    let uses: Vec<Vec<usize>> = bs
        .iter()
        .map(|b| {
            let mut u: Vec<usize> = free_vars(&b.value).iter().filter_map(|f| index.get(&f.id).copied()).collect();
            u.sort_unstable();
            u.dedup();
            u
        })
        .collect();
    let self_using: Vec<bool> = uses.iter().enumerate().map(|(i, u)| u.contains(&i)).collect();
    if !bs.iter().all(|b| matches!(b.value.kind, ExprKind::Lam { .. })) {
        return (bs.len() == 1 && !self_using[0]).then(|| (vec![vec![0]], self_using));
    }
    let components = order(&uses, pmx_ast::scc::components(&uses));
    let unchanged = components.len() == 1 && (bs.len() > 1 || self_using[0]);
    (!unchanged).then_some((components, self_using))
}

/// The components in dependency order; among those ready, the one whose
/// first member comes first in the program.
fn order(uses: &[Vec<usize>], members: Vec<Vec<usize>>) -> Vec<Vec<usize>> {
    let count = members.len();
    let mut component = vec![0; uses.len()];
    for (c, m) in members.iter().enumerate() {
        for &v in m {
            component[v] = c;
        }
    }
    let mut done = vec![false; count];
    let mut ordered = Vec::with_capacity(count);
    while ordered.len() < count {
        let ready = (0..count)
            .filter(|&c| !done[c])
            .filter(|&c| members[c].iter().all(|&v| uses[v].iter().all(|&w| component[w] == c || done[component[w]])))
            .min_by_key(|&c| members[c][0])
            .expect("the components form a DAG");
        done[ready] = true;
        ordered.push(members[ready].clone());
    }
    ordered
}

/// The chain of declarations for `components`, then `rest`.
fn rebuild(
    bs: Vec<Binding>,
    components: Vec<Vec<usize>>,
    self_using: &[bool],
    rest: Expr,
    span: Span,
    ty: &Ty,
) -> Expr {
    let mut slots: Vec<Option<Binding>> = bs.into_iter().map(Some).collect();
    components.into_iter().rev().fold(rest, |rest, c| {
        let kind = if c.len() == 1 && !self_using[c[0]] {
            ExprKind::Let(Box::new(slots[c[0]].take().expect("each member once")), Box::new(rest))
        } else {
            let group = c.iter().map(|&i| slots[i].take().expect("each member once")).collect();
            ExprKind::RecLets(group, Box::new(rest))
        };
        Expr { kind, span, ty: ty.clone() }
    })
}
