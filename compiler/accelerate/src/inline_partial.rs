//! The CUDA rewrite `inlinePartialFunctions` (section 4.6 of the
//! reference): a variable bound to a partial application
//! (`let g = f x in loop n g`) is replaced by the application where it is
//! used, so that the well-formedness rules see `loop n (f x)`.
//!
//! Copying an application to its uses must not change when its parts are
//! evaluated: an unused `let g = f (head s)` must still fail on an empty
//! `s`, and `count c` in `let g = f (count c)` must run once however often
//! `g` is used. So the parts of the application that are not values
//! (anything but variables, literals, lambdas and partial applications of
//! values) are first bound to fresh variables, where the application was
//! bound and in evaluation order (head, then arguments left to right):
//! `let a = head s in let g = f a in ...`, and `f a` is what is copied.
//! A partial application of values evaluates nothing in well-formed CUDA
//! code, where functions are nested lambdas with nothing between them.

use crate::freshen::Fresh;
use pmx_ast::*;
use rustc_hash::FxHashMap;

/// Identities of the variables that hold the arguments.
const BASE: u32 = (1 << 29) + (1 << 28) + (1 << 27) + (1 << 26);

struct Inliner {
    /// Each inlined variable and its application (parts all values).
    map: FxHashMap<NameId, Expr>,
    fresh: Fresh,
}

pub fn inline_partial_applications(e: &mut Expr) {
    let mut inliner = Inliner { map: FxHashMap::default(), fresh: Fresh::new(BASE) };
    inliner.inline(e);
}

impl Inliner {
    fn inline(&mut self, e: &mut Expr) {
        if let ExprKind::Var(n) = &e.kind {
            if let Some(v) = self.map.get(&n.id) {
                let span = e.span;
                *e = v.clone();
                e.span = span;
            }
            return;
        }
        if let ExprKind::Let(b, body) = &mut e.kind {
            self.inline(&mut b.value);
            if matches!(b.value.kind, ExprKind::App(..)) && b.value.ty.as_arrow().is_some() {
                let mut lets = Vec::new();
                self.bind_parts(&mut b.value, &mut lets);
                self.map.insert(b.name.id, b.value.clone());
                let mut body = std::mem::replace(&mut **body, Expr::unit(e.span));
                self.inline(&mut body);
                *e = wrap(lets, body);
                return;
            }
            self.inline(body);
            return;
        }
        pmx_ast::visit::children_mut(e, &mut |c| self.inline(c));
    }

    /// Binds each part of an application spine that is not a value to a
    /// fresh variable (head first, then the arguments in order).
    fn bind_parts(&mut self, e: &mut Expr, lets: &mut Vec<Binding>) {
        match &mut e.kind {
            ExprKind::App(f, a) => {
                self.bind_parts(f, lets);
                self.bind_part(a, lets);
            }
            _ => self.bind_part(e, lets),
        }
    }

    fn bind_part(&mut self, e: &mut Expr, lets: &mut Vec<Binding>) {
        if value(e) {
            return;
        }
        let (span, ty) = (e.span, e.ty.clone());
        let name = self.fresh.named(SmolStr::new("a"), span);
        let var = Expr { kind: ExprKind::Var(name.clone()), span, ty: ty.clone() };
        let value = std::mem::replace(e, var);
        lets.push(Binding { name, annotation: None, scheme: ty, span, value });
    }
}

/// Whether evaluating `e` does nothing but make a value, so that copying
/// it to each use (or to none) changes nothing.
fn value(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Var(_) | ExprKind::Lit(_) | ExprKind::Lam { .. } => true,
        ExprKind::Record(fields) => fields.is_empty(),
        ExprKind::App(f, a) => e.ty.as_arrow().is_some() && value(f) && value(a),
        _ => false,
    }
}

fn wrap(lets: Vec<Binding>, e: Expr) -> Expr {
    lets.into_iter().rev().fold(e, |body, b| {
        let (span, ty) = (body.span, body.ty.clone());
        Expr { kind: ExprKind::Let(Box::new(b), Box::new(body)), span, ty }
    })
}
