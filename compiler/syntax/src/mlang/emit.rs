//! A composed language's MExpr: the declarations it adds where it stands.

use super::rename::Renamer;
use super::*;
use pmx_ast::mlang::Lang;
use pmx_ast::{Binding, ExprKind, Ty, TypeExprKind};
use rustc_hash::FxHashMap;

/// The name of the argument a semantic function matches on: no program can
/// write it.
const TARGET: &str = "sem#target";

pub(super) fn emit(
    lang: &Language,
    decl: &Lang,
    visible: &Languages,
    items: &mut Vec<Item>,
    diags: &mut Vec<Diagnostic>,
) {
    let own = &lang.name;
    let mut r = Renamer::new(visible, &lang.env, diags);
    // Types first (constructors and functions name them), then
    // constructors, then the functions.
    for syn in lang.syns.iter().filter(|s| s.mangled == mangle(own, &s.name)) {
        let params = syn.params.to_vec();
        let name = Name::unresolved(syn.mangled.clone(), syn.root);
        items.push(Item::Type(TypeDecl { name, params, definition: None, span: syn.root }));
    }
    for (mangled, t) in lang.types.iter().filter(|(m, t)| *m == mangle(own, &t.name.text)) {
        let mut t = (**t).clone();
        t.name.text = mangled.clone();
        r.type_decl(&mut t);
        items.push(Item::Type(t));
    }
    for syn in &lang.syns {
        for con in syn.cons.iter().filter(|c| c.mangled == mangle(own, &c.decl.name.text)) {
            let decl = &con.decl;
            let span = decl.span;
            let carried = decl.carried.clone().unwrap_or(TypeExpr { kind: TypeExprKind::Record(Vec::new()), span });
            // The syn's parameters as the constructor's fragment names them;
            // where it gives another number (E0503), unknown types fill or
            // drop the rest, so that the constructor's uses report nothing
            // more.
            let args = (0..syn.params.len())
                .map(|i| match con.params.get(i) {
                    Some(p) => TypeExpr { kind: TypeExprKind::Var(p.clone()), span: p.span },
                    None => TypeExpr { kind: TypeExprKind::Unknown, span },
                })
                .collect();
            let result =
                TypeExpr { kind: TypeExprKind::Con(Name::unresolved(syn.mangled.clone(), decl.name.span), args), span };
            let ty = TypeExpr { kind: TypeExprKind::Arrow(Box::new(carried), Box::new(result)), span };
            let mut k = ConDecl {
                name: Name::unresolved(con.mangled.clone(), decl.name.span),
                annotation: Some(ty),
                scheme: Ty::unknown(),
                span,
            };
            r.con_decl(&mut k);
            // The result names the mangled type already.
            items.push(Item::Con(k));
        }
    }
    for (mangled, k) in lang.cons.iter().filter(|(m, k)| *m == mangle(own, &k.name.text)) {
        let mut k = (**k).clone();
        k.name.text = mangled.clone();
        r.con_decl(&mut k);
        items.push(Item::Con(k));
    }
    if !lang.own_sems || lang.sems.is_empty() {
        return;
    }
    let bindings: Vec<Binding> = lang
        .sems
        .iter()
        .map(|sem| {
            let mut b = function(sem, &lang.env.values[&sem.name]);
            r.binding(&mut b);
            b
        })
        .collect();
    // One recursive group per strongly connected component of the calls
    // between them, callees first, so that a function the others use is
    // generalised before they use it (one group for all would make every
    // function monomorphic inside it).
    let index: FxHashMap<&SmolStr, usize> = bindings.iter().enumerate().map(|(i, b)| (&b.name.text, i)).collect();
    let edges: Vec<Vec<usize>> = bindings
        .iter()
        .map(|b| {
            let mut out = Vec::new();
            calls(&b.value, &index, &mut out);
            out.sort_unstable();
            out.dedup();
            out
        })
        .collect();
    let mut slots: Vec<Option<Binding>> = bindings.into_iter().map(Some).collect();
    for component in pmx_ast::scc::components(&edges) {
        let group = component.into_iter().filter_map(|i| slots[i].take()).collect();
        items.push(Item::RecLets(group, decl.span));
    }
}

/// The functions of `index` that `e` names. After renaming, a name with a
/// language's prefix can only be that language's function.
fn calls(e: &Expr, index: &FxHashMap<&SmolStr, usize>, out: &mut Vec<usize>) {
    if let ExprKind::Var(n) = &e.kind {
        if let Some(&i) = index.get(&n.text) {
            out.push(i);
        }
    }
    pmx_ast::visit::children(e, &mut |c| calls(c, index, out));
}

/// `let L.f : sig = lam p1. .. lam target. match target with case1 then
/// body1 else .. never`, the cases most specific first. Each generated
/// node spans what it holds that is written in one file with it (a match
/// its case and the cases after it, a lambda the sem and its cases), so
/// the editor's walks find the user's code inside it.
fn function(sem: &Sem, mangled: &SmolStr) -> Binding {
    let span = sem.span;
    let target = Name::unresolved(TARGET, span);
    let params: &[SemParam] = sem.params.as_deref().map_or(&[], |ps| ps);
    // Where every fragment names the parameters alike, the lambdas take
    // those names; else they take names no program writes, and each case
    // binds its own fragment's names to them (`renamed_params`).
    let same = |c: &Case| {
        let own: &[SemParam] = c.params.as_deref().map_or(&[], |ps| ps);
        own.len() == params.len() && own.iter().zip(params).all(|(a, b)| a.name.text == b.name.text)
    };
    let renamed = !sem.cases.iter().all(|c| same(c));
    let mut body = Expr::new(ExprKind::Never, span);
    for case in ordered(sem).into_iter().rev() {
        let at = case.pattern.span;
        let scrutinee = Expr::new(ExprKind::Var(Name::unresolved(TARGET, at)), at);
        let mut here = union(at, case.body.span);
        if !matches!(body.kind, ExprKind::Never) {
            here = union(here, body.span);
        }
        let then = if renamed { renamed_params(case, params.len()) } else { case.body.clone() };
        let kind = ExprKind::Match {
            scrutinee: Box::new(scrutinee),
            pattern: Box::new(case.pattern.clone()),
            then: Box::new(then),
            otherwise: Box::new(body),
        };
        body = Expr::new(kind, here);
    }
    let whole = union(span, body.span);
    let mut value = Expr::new(ExprKind::Lam { param: target, annotation: None, body: Box::new(body) }, whole);
    for (i, p) in params.iter().enumerate().rev() {
        let param = if renamed { Name::unresolved(hidden_param(i), p.name.span) } else { p.name.clone() };
        let kind = ExprKind::Lam { param, annotation: p.annotation.clone().map(Box::new), body: Box::new(value) };
        value = Expr::new(kind, union(whole, p.span));
    }
    Binding {
        name: Name::unresolved(mangled.clone(), span),
        annotation: sem.signature.as_ref().map(|t| Box::new((**t).clone())),
        span: value.span,
        value,
        scheme: Ty::unknown(),
    }
}

/// The name of a semantic function's `i`th parameter where its fragments
/// name it differently: no program can write it.
fn hidden_param(i: usize) -> SmolStr {
    SmolStr::new(format!("sem#param{i}"))
}

/// A case's body with its fragment's names for the parameters bound to
/// the function's (`let y = sem#param0 in body`), as Miking substitutes
/// them; a name the case's pattern binds is the pattern's. A parameter
/// past the function's `arity` (E0503 is reported) is `never`, so that its
/// uses report nothing more.
fn renamed_params(case: &Case, arity: usize) -> Expr {
    let mut bound = Vec::new();
    pmx_ast::visit::pat_binder_names(&case.pattern, &mut |n| bound.push(n.text.clone()));
    let mut body = case.body.clone();
    let own: &[SemParam] = case.params.as_deref().map_or(&[], |ps| ps);
    for (i, p) in own.iter().enumerate().rev() {
        if bound.contains(&p.name.text) {
            continue;
        }
        let at = p.name.span;
        let value = match i < arity {
            true => Expr::new(ExprKind::Var(Name::unresolved(hidden_param(i), at)), at),
            false => Expr::new(ExprKind::Never, at),
        };
        let binding = Binding {
            name: p.name.clone(),
            annotation: p.annotation.clone().map(Box::new),
            span: p.span,
            value,
            scheme: Ty::unknown(),
        };
        let span = body.span;
        body = Expr::new(ExprKind::Let(Box::new(binding), Box::new(body)), span);
    }
    body
}

/// The smallest span holding both, where they are in one file; else `a`.
fn union(a: Span, b: Span) -> Span {
    if a.file != b.file {
        return a;
    }
    Span::new(a.file, a.start.min(b.start), a.end.max(b.end))
}

/// The cases in Miking's order: each after every case more specific than
/// it, otherwise in the order they were added (inherited ones first).
/// (Kahn's algorithm, always taking the first case that is ready.)
fn ordered(sem: &Sem) -> Vec<&Case> {
    let cases: Vec<&Case> = sem.cases.iter().map(|c| &**c).collect();
    let at: FxHashMap<Span, usize> = cases.iter().enumerate().map(|(i, c)| (c.id(), i)).collect();
    let mut before = vec![0usize; cases.len()];
    let mut after = vec![Vec::new(); cases.len()];
    for (a, b) in &sem.below {
        if let (Some(&a), Some(&b)) = (at.get(a), at.get(b)) {
            before[b] += 1;
            after[a].push(b);
        }
    }
    let mut taken = vec![false; cases.len()];
    let mut out = Vec::with_capacity(cases.len());
    while out.len() < cases.len() {
        // A cycle cannot happen (specificity is a strict order); if one
        // did, the first case left is taken.
        let next = (0..cases.len())
            .find(|&i| !taken[i] && before[i] == 0)
            .or_else(|| (0..cases.len()).find(|&i| !taken[i]))
            .unwrap_or(0);
        taken[next] = true;
        for &b in &after[next] {
            before[b] = before[b].saturating_sub(1);
        }
        out.push(cases[next]);
    }
    out
}
