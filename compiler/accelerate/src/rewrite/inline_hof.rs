//! Higher-order functions inlined for Futhark (`inlineHigherOrderFunctions`,
//! step 8 of section 4.6 of the reference). Futhark passes functions only
//! to its own array combinators (`map`, `reduce`, ...): a function of the
//! program cannot take one as a parameter. So each full call of a
//! top-level function that has function parameters, where each function
//! argument is a known function (a top-level function or a built-in,
//! possibly partially applied), is replaced by a call of a copy of it
//! specialised to those functions: the partial application's arguments
//! become parameters of the copy, in the place of the function parameter,
//! so arguments are still evaluated once and in the same order.
//!
//! Copies are placed right before the declaration that calls them (after
//! every function they use) and are themselves rewritten, so a chain of
//! higher-order functions passing the function along becomes first-order.
//! Higher-order functions left with no use are dropped. A call whose
//! function argument is not known (a function computed at run time) and
//! recursive higher-order functions are left as they are.

use crate::freshen::{freshen, Fresh};
use pmx_ast::*;
use rustc_hash::{FxHashMap, FxHashSet};

/// Identities of the copies and their binders.
const BASE: u32 = (1 << 29) + (1 << 28);

/// A top-level function with at least one function parameter.
struct Hof {
    binding: Binding,
    /// The parameter types, in order.
    params: Vec<Ty>,
}

/// A function argument: the function, the types of the arguments it is
/// partially applied to, and its type there.
type KnownArg = (NameId, Vec<Ty>, Ty);

struct Inliner {
    hofs: FxHashMap<NameId, Hof>,
    /// Top-level functions and externals: names a copy may refer to.
    globals: FxHashSet<NameId>,
    copies: FxHashMap<(NameId, Vec<Option<KnownArg>>), Name>,
    /// Copies made while rewriting the current declaration.
    new: Vec<Binding>,
    /// Local variables bound to a known function: what they stand for.
    locals: FxHashMap<NameId, (Expr, Vec<Expr>)>,
    /// The type of each copy.
    copy_types: FxHashMap<NameId, Ty>,
    fresh: Fresh,
}

pub fn inline_higher_order(program: &mut Expr) {
    let (mut decls, body) = crate::program::split_chain(std::mem::replace(program, Expr::unit(Span::BUILTIN)));
    let mut inl = Inliner {
        hofs: FxHashMap::default(),
        globals: FxHashSet::default(),
        copies: FxHashMap::default(),
        new: Vec::new(),
        copy_types: FxHashMap::default(),
        locals: FxHashMap::default(),
        fresh: Fresh::new(BASE),
    };
    let mut i = 0;
    let mut out: Vec<Expr> = Vec::new();
    while i < decls.len() {
        let mut d = std::mem::replace(&mut decls[i], Expr::unit(Span::BUILTIN));
        match &mut d.kind {
            ExprKind::Let(b, _) => {
                inl.rewrite(&mut b.value);
                if let Some(params) = higher_order(&b.value) {
                    inl.hofs.insert(b.name.id, Hof { binding: (**b).clone(), params });
                }
                if matches!(b.value.kind, ExprKind::Lam { .. }) {
                    inl.globals.insert(b.name.id);
                }
            }
            ExprKind::RecLets(bs, _) => {
                bs.iter().for_each(|b| {
                    inl.globals.insert(b.name.id);
                });
                bs.iter_mut().for_each(|b| inl.rewrite(&mut b.value));
            }
            ExprKind::External(x, _) => {
                inl.globals.insert(x.name.id);
            }
            _ => {}
        }
        // The copies this declaration needs come right before it; they
        // may call other higher-order functions, so they are rewritten in
        // turn (before it, in the next rounds).
        let made = std::mem::take(&mut inl.new);
        if made.is_empty() {
            out.push(d);
            i += 1;
        } else {
            decls[i] = d;
            let at = i;
            for b in made.into_iter().rev() {
                let span = b.span;
                decls.insert(
                    at,
                    Expr { kind: ExprKind::Let(Box::new(b), Box::new(Expr::unit(span))), span, ty: Ty::unit() },
                );
            }
        }
    }
    let mut body = body;
    inl.rewrite(&mut body);
    let is_hof = |d: &Expr| matches!(&d.kind, ExprKind::Let(b, _) if inl.hofs.contains_key(&b.name.id));
    let keep = crate::program::keep_used(&out, std::slice::from_ref(&body), is_hof);
    let out = out.into_iter().zip(keep).filter_map(|(d, k)| k.then_some(d)).collect();
    *program = crate::program::join_chain(out, body);
}

/// The parameter types of a function with a function parameter, or one
/// whose type is a type variable (a call may give it a function: `lam g.
/// lam y. []` applied to a lambda; fuzz seed 8000316).
fn higher_order(value: &Expr) -> Option<Vec<Ty>> {
    let mut params = Vec::new();
    let mut v = value;
    while let ExprKind::Lam { body, .. } = &v.kind {
        params.push(v.ty.as_arrow()?.0.clone());
        v = body;
    }
    params.iter().any(|p| crate::free::is_function(p) || is_variable(p)).then_some(params)
}

fn is_variable(t: &Ty) -> bool {
    matches!(t.strip_foralls().kind(), TyKind::Var(_) | TyKind::Meta(_))
}

/// Whether parameter `p` of a higher-order function takes a function at a
/// call that gives it `a`.
fn takes_function(p: &Ty, a: &Expr) -> bool {
    crate::free::is_function(p) || (is_variable(p) && crate::free::is_function(&a.ty))
}

impl Inliner {
    /// Rewrites every call in `e` that can be specialised.
    fn rewrite(&mut self, e: &mut Expr) {
        if let ExprKind::Let(b, body) = &mut e.kind {
            // `let g = f x in .. h g ..`: `g` is known to be `f x` (when
            // `x` is a variable or literal, so naming it again later
            // computes nothing and cannot fail).
            self.rewrite(&mut b.value);
            if crate::free::is_function(&b.value.ty) {
                if let Some((f, fargs)) = self.known_function(&b.value) {
                    if fargs.iter().all(|a| matches!(a.kind, ExprKind::Var(_) | ExprKind::Lit(_))) {
                        self.locals.insert(b.name.id, (f, fargs));
                    }
                }
            }
            self.rewrite(body);
            return;
        }
        pmx_ast::visit::children_mut(e, &mut |c| self.rewrite(c));
        if let Some(new) = self.specialise(e) {
            *e = new;
        }
    }

    /// A full call of a higher-order function with known functions.
    fn specialise(&mut self, e: &Expr) -> Option<Expr> {
        let (head, args) = super::spine(e);
        let ExprKind::Var(h) = &head.kind else { return None };
        let hof = self.hofs.get(&h.id)?;
        // Every function parameter must be given (the call may stop
        // short of the data parameters after them: those stay lambdas).
        if hof.params.iter().rposition(crate::free::is_function).is_some_and(|last| args.len() <= last) {
            return None;
        }
        let n = hof.params.len().min(args.len());
        if !hof.params.iter().zip(&args).take(n).any(|(p, a)| takes_function(p, a)) {
            return None;
        }
        // Each function parameter's argument: its head and arguments.
        let mut known: Vec<Option<KnownArg>> = Vec::new();
        let mut parts: Vec<Option<(Expr, Vec<Expr>, Ty)>> = Vec::new();
        for (p, a) in hof.params.iter().zip(&args).take(n) {
            if !takes_function(p, a) {
                known.push(None);
                parts.push(None);
                continue;
            }
            let (f, fargs) = self.known_function(a)?;
            let ExprKind::Var(fname) = &f.kind else { return None };
            known.push(Some((fname.id, fargs.iter().map(|x| x.ty.clone()).collect(), a.ty.clone())));
            parts.push(Some((f, fargs, a.ty.clone())));
        }
        let key = (h.id, known);
        let name = match self.copies.get(&key) {
            Some(name) => name.clone(),
            None => {
                let name = self.copy(h, &parts);
                self.copies.insert(key, name.clone());
                name
            }
        };
        // The call: the copy applied to the partial applications'
        // arguments in place of the functions, then the other arguments.
        let mut new_args: Vec<Expr> = Vec::new();
        for (i, a) in args.iter().enumerate() {
            match parts.get(i) {
                Some(Some((_, fargs, _))) => new_args.extend(fargs.iter().cloned()),
                _ => new_args.push((*a).clone()),
            }
        }
        // The copy at this call's instance: a copy whose other parameters
        // have types of their own (`lam g. lam y. []`) is not decided by
        // its function arguments.
        self.copy_types.get(&name.id)?;
        let instance = new_args.iter().rev().fold(e.ty.clone(), |acc, a| Ty::arrow(a.ty.clone(), acc));
        let f = Expr { kind: ExprKind::Var(name), span: head.span, ty: instance };
        Some(super::app(f, new_args, &e.ty))
    }

    /// A copy of `h` with each known function in place of its parameter,
    /// at the types those functions have (a polymorphic `h`, say a local
    /// `lam g. lam x. g x`, is copied at the instance its function
    /// arguments decide, so that nothing later takes its type variables
    /// as undecided).
    fn copy(&mut self, h: &Name, parts: &[Option<(Expr, Vec<Expr>, Ty)>]) -> Name {
        let mut value = self.hofs[&h.id].binding.value.clone();
        freshen(&mut value, &mut self.fresh);
        let mut instance = FxHashMap::default();
        let mut t = &value.ty;
        for part in parts {
            let Some((p, rest)) = t.as_arrow() else { break };
            if let Some((_, _, used)) = part {
                pmx_ast::subst::unify(p, used, &mut instance);
            }
            t = rest;
        }
        if !instance.is_empty() {
            crate::monomorphize::subst_expr(&mut value, &instance);
        }
        let mut params: Vec<(Name, Ty, Option<Box<TypeExpr>>)> = Vec::new();
        let mut body = value;
        for part in parts {
            let pty = body.ty.as_arrow().map(|(p, _)| p.clone()).unwrap_or_else(Ty::unknown);
            let ExprKind::Lam { param, annotation, body: inner } = body.kind else {
                unreachable!("a higher-order function has one lambda per parameter")
            };
            body = *inner;
            match part {
                None => params.push((param, pty, annotation)),
                Some((f, fargs, _)) => {
                    // `g q1 .. qk` for the parameter, the `q`s new parameters.
                    let qs: Vec<(Name, Ty, Option<Box<TypeExpr>>)> =
                        fargs.iter().map(|a| (self.fresh.name(&param), a.ty.clone(), None)).collect();
                    let qargs = qs.iter().map(|(q, t, _)| super::var(q, t, param.span)).collect();
                    let with = super::app(f.clone(), qargs, &pty);
                    substitute(&mut body, param.id, &with);
                    params.extend(qs);
                }
            }
        }
        let value = params.into_iter().rev().fold(body, |acc, (p, t, annotation)| {
            let span = acc.span;
            let ty = Ty::arrow(t, acc.ty.clone());
            Expr { kind: ExprKind::Lam { param: p, annotation, body: Box::new(acc) }, span, ty }
        });
        let name = self.fresh.name(h);
        self.copy_types.insert(name.id, value.ty.clone());
        let span = self.hofs[&h.id].binding.span;
        self.new.push(Binding { name: name.clone(), annotation: None, scheme: value.ty.clone(), value, span });
        name
    }

    /// `g a1 .. ak` with `g` a top-level function or a built-in.
    fn known_function(&self, a: &Expr) -> Option<(Expr, Vec<Expr>)> {
        let (head, fargs) = pmx_ast::spine::spine(a);
        let fargs: Vec<Expr> = fargs.into_iter().cloned().collect();
        let ExprKind::Var(n) = &head.kind else { return None };
        if let Some((f, bound)) = self.locals.get(&n.id) {
            return Some((f.clone(), bound.iter().cloned().chain(fargs).collect()));
        }
        (n.id.as_builtin().is_some() || self.globals.contains(&n.id)).then(|| (head.clone(), fargs))
    }
}

/// Replaces every use of `id` in `e` by `with`.
fn substitute(e: &mut Expr, id: NameId, with: &Expr) {
    if let ExprKind::Var(n) = &e.kind {
        if n.id == id {
            let span = e.span;
            *e = with.clone();
            e.span = span;
        }
        return;
    }
    pmx_ast::visit::children_mut(e, &mut |c| substitute(c, id, with));
}
