//! Pattern matching lowered to explicit tests and projections.
//!
//! `match s with p then a else b` becomes `let ok = <test of p on s> in
//! if ok then <bindings of p>; a else b`. The test is pure and evaluates
//! only what it may: a `get` or a constructor's payload is read under the
//! test that makes it safe (nested `if`s act as short-circuit `and`). The
//! bindings are read again after the test succeeded, which duplicates a
//! few projections but never the branches. An or-pattern binds each of
//! its variables from the alternative that matched (`if` on that
//! alternative's test); a not-pattern binds nothing.

use crate::cx::{Bound, Cx};
use crate::ir::*;
use crate::lower::{Lowered, Lowerer};
use pmx_ast::{Builtin, NameId, Pat, PatKind, SmolStr, Span};
use pmx_diagnostics::Code;
use rustc_hash::FxHashSet;

/// How a part of the matched value is reached.
#[derive(Clone)]
enum Access {
    Field(SmolStr),
    /// `get s i`.
    Index(i64),
    /// `get s (length s - k)`.
    FromEnd(i64),
    Payload(VariantId, usize),
}

/// Whether some value can fail to match.
fn refutable(p: &Pat) -> bool {
    match &p.kind {
        PatKind::Wild | PatKind::Bind(_) | PatKind::Error => false,
        PatKind::Record(fields) => fields.iter().any(|(_, f)| refutable(f)),
        PatKind::And(a, b) => refutable(a) || refutable(b),
        PatKind::Or(a, b) => refutable(a) && refutable(b),
        _ => true,
    }
}

fn binders(p: &Pat) -> Vec<NameId> {
    let mut set = FxHashSet::default();
    pmx_ast::visit::pat_binders(p, &mut set);
    // Names under `!` are not bound.
    let mut hidden = FxHashSet::default();
    not_binders(p, &mut hidden);
    let mut out: Vec<NameId> = set.into_iter().filter(|id| !hidden.contains(id)).collect();
    out.sort();
    out
}

fn not_binders(p: &Pat, out: &mut FxHashSet<NameId>) {
    match &p.kind {
        PatKind::Not(inner) => pmx_ast::visit::pat_binders(inner, out),
        PatKind::Con(_, a) => not_binders(a, out),
        PatKind::Record(fields) => fields.iter().for_each(|(_, f)| not_binders(f, out)),
        PatKind::Seq(items) | PatKind::Edge { prefix: items, .. } => items.iter().for_each(|i| not_binders(i, out)),
        PatKind::And(a, b) | PatKind::Or(a, b) => {
            not_binders(a, out);
            not_binders(b, out);
        }
        _ => {}
    }
    if let PatKind::Edge { suffix, .. } = &p.kind {
        suffix.iter().for_each(|i| not_binders(i, out));
    }
}

impl Lowerer<'_> {
    /// `match scrutinee with pattern then a else b`.
    pub fn matching(&mut self, cx: &mut Cx, e: &pmx_ast::Expr, out: &mut Vec<Stmt>) -> Lowered<Atom> {
        let pmx_ast::ExprKind::Match { scrutinee, pattern, then, otherwise } = &e.kind else {
            return Err(self.error(Code::LowerUnsupported, e.span, "not a match".into(), "here"));
        };
        let ty = self.ty(cx, &e.ty, e.span)?;
        let s = self.value(cx, scrutinee, out)?;
        // `if`: the scrutinee is the condition.
        let (cond, then, otherwise) = match &pattern.kind {
            PatKind::Bool(true) => (Some(s.clone()), then, otherwise),
            PatKind::Bool(false) => (Some(s.clone()), otherwise, then),
            _ => (self.test(cx, pattern, &s, out)?, then, otherwise),
        };
        let Some(cond) = cond else {
            // Always matches: the else branch cannot run.
            self.bind_pattern(cx, pattern, &s, out)?;
            return self.value(cx, then, out);
        };
        let mark = cx.mark();
        let mut stmts = Vec::new();
        let bound = self.bind_pattern(cx, pattern, &s, &mut stmts);
        let r = bound.and_then(|_| self.value(cx, then, &mut stmts));
        cx.close(mark);
        let then = Block { stmts, result: r? };
        let otherwise = self.block(cx, otherwise)?;
        Ok(self.emit(cx, out, ty, Expr::If { cond, then, otherwise }, e.span))
    }

    /// Appends the test of `p` on `s`; `None` when every value matches.
    fn test(&mut self, cx: &mut Cx, p: &Pat, s: &Atom, out: &mut Vec<Stmt>) -> Lowered<Option<Atom>> {
        let span = p.span;
        Ok(match &p.kind {
            PatKind::Wild | PatKind::Bind(_) => None,
            PatKind::Int(i) => Some(self.prim(cx, out, Type::Bool, Builtin::Eqi, vec![s.clone(), int(*i)], span)),
            PatKind::Char(c) => {
                Some(self.prim(cx, out, Type::Bool, Builtin::Eqc, vec![s.clone(), Atom::Lit(Lit::Char(*c))], span))
            }
            PatKind::Bool(true) => Some(s.clone()),
            PatKind::Bool(false) => Some(self.not(cx, s.clone(), span, out)),
            PatKind::Record(fields) => {
                let parts: Vec<(Access, &Pat)> =
                    fields.iter().map(|(l, f)| (Access::Field(l.text.clone()), f)).collect();
                self.all(cx, &parts, s, out)?
            }
            PatKind::Seq(items) => {
                let len = self.prim(cx, out, Type::Int, Builtin::Length, vec![s.clone()], span);
                let guard = self.prim(cx, out, Type::Bool, Builtin::Eqi, vec![len, int(items.len() as i64)], span);
                let parts: Vec<(Access, &Pat)> =
                    items.iter().enumerate().map(|(i, p)| (Access::Index(i as i64), p)).collect();
                Some(self.guarded(cx, guard, &parts, s, span, out)?)
            }
            PatKind::Edge { prefix, suffix, .. } => {
                let len = self.prim(cx, out, Type::Int, Builtin::Length, vec![s.clone()], span);
                let least = int((prefix.len() + suffix.len()) as i64);
                let guard = self.prim(cx, out, Type::Bool, Builtin::Geqi, vec![len, least], span);
                let k = suffix.len() as i64;
                let parts: Vec<(Access, &Pat)> = prefix
                    .iter()
                    .enumerate()
                    .map(|(i, p)| (Access::Index(i as i64), p))
                    .chain(suffix.iter().enumerate().map(|(j, p)| (Access::FromEnd(k - j as i64), p)))
                    .collect();
                Some(self.guarded(cx, guard, &parts, s, span, out)?)
            }
            PatKind::Con(k, arg) => {
                let (variant, tag) = self.constructor(&s.ty(), k, span)?;
                let guard = self.emit(cx, out, Type::Bool, Expr::IsCon { value: s.clone(), variant, tag }, span);
                Some(self.guarded(cx, guard, &[(Access::Payload(variant, tag), arg)], s, span, out)?)
            }
            PatKind::And(a, b) => {
                let Some(ta) = self.test(cx, a, s, out)? else { return self.test(cx, b, s, out) };
                let mut rest = Vec::new();
                match self.test(cx, b, s, &mut rest)? {
                    None => Some(ta),
                    Some(tb) => Some(self.emit(cx, out, Type::Bool, if_(ta, rest, tb, false_block()), span)),
                }
            }
            PatKind::Or(a, b) => {
                let mut rest = Vec::new();
                let Some(tb) = self.test(cx, b, s, &mut rest)? else { return Ok(None) };
                let Some(ta) = self.test(cx, a, s, out)? else { return Ok(None) };
                Some(self.emit(
                    cx,
                    out,
                    Type::Bool,
                    if_(ta, Vec::new(), Atom::Lit(Lit::Bool(true)), rest_block(rest, tb)),
                    span,
                ))
            }
            PatKind::Not(inner) => match self.test(cx, inner, s, out)? {
                None => Some(Atom::Lit(Lit::Bool(false))),
                Some(t) => Some(self.not(cx, t, span, out)),
            },
            PatKind::Error => {
                return Err(self.error(Code::LowerUnsupported, span, "a pattern that did not parse".into(), "here"))
            }
        })
    }

    /// `guard && <every part matches>`, each part tested only when the
    /// ones before it (and the guard) matched.
    fn guarded(
        &mut self,
        cx: &mut Cx,
        guard: Atom,
        parts: &[(Access, &Pat)],
        s: &Atom,
        span: Span,
        out: &mut Vec<Stmt>,
    ) -> Lowered<Atom> {
        let mut rest = Vec::new();
        match self.all(cx, parts, s, &mut rest)? {
            None => Ok(guard),
            Some(t) => Ok(self.emit(cx, out, Type::Bool, if_(guard, rest, t, false_block()), span)),
        }
    }

    /// Whether every part matches, short-circuiting.
    fn all(&mut self, cx: &mut Cx, parts: &[(Access, &Pat)], s: &Atom, out: &mut Vec<Stmt>) -> Lowered<Option<Atom>> {
        for (i, (access, p)) in parts.iter().enumerate() {
            if !refutable(p) {
                continue;
            }
            let part = self.access(cx, access, s, p.span, out)?;
            let Some(t) = self.test(cx, p, &part, out)? else { continue };
            let mut rest = Vec::new();
            return Ok(Some(match self.all(cx, &parts[i + 1..], s, &mut rest)? {
                None => t,
                Some(r) => self.emit(cx, out, Type::Bool, if_(t, rest, r, false_block()), p.span),
            }));
        }
        Ok(None)
    }

    /// Appends the statements that read a part of `s`.
    fn access(&mut self, cx: &mut Cx, access: &Access, s: &Atom, span: Span, out: &mut Vec<Stmt>) -> Lowered<Atom> {
        let sty = s.ty();
        let bad = |l: &mut Self, what: &str| {
            let message = format!("a {what} pattern on a value of type `{sty}`");
            Err(l.error(Code::LowerUnsupported, span, message, "here"))
        };
        Ok(match access {
            Access::Field(l) => {
                let Some(t) = sty.field(l).cloned() else { return bad(self, "record") };
                self.emit(cx, out, t, Expr::Project(s.clone(), l.clone()), span)
            }
            Access::Index(i) => {
                let Some(t) = sty.elem().cloned() else { return bad(self, "sequence") };
                self.prim(cx, out, t, Builtin::Get, vec![s.clone(), int(*i)], span)
            }
            Access::FromEnd(k) => {
                let Some(t) = sty.elem().cloned() else { return bad(self, "sequence") };
                let len = self.prim(cx, out, Type::Int, Builtin::Length, vec![s.clone()], span);
                let at = self.prim(cx, out, Type::Int, Builtin::Subi, vec![len, int(*k)], span);
                self.prim(cx, out, t, Builtin::Get, vec![s.clone(), at], span)
            }
            Access::Payload(variant, tag) => {
                let t = self.types.variants[variant.0 as usize].constructors[*tag].payload.clone();
                self.emit(cx, out, t, Expr::Payload { value: s.clone(), variant: *variant, tag: *tag }, span)
            }
        })
    }

    /// Binds the variables of `p`, which matched `s`.
    pub fn bind_pattern(&mut self, cx: &mut Cx, p: &Pat, s: &Atom, out: &mut Vec<Stmt>) -> Lowered<()> {
        let span = p.span;
        match &p.kind {
            PatKind::Bind(n) => cx.bind(n.id, Bound::Value(s.clone())),
            PatKind::Wild | PatKind::Int(_) | PatKind::Char(_) | PatKind::Bool(_) | PatKind::Not(_) => {}
            PatKind::Record(fields) => {
                for (l, f) in fields {
                    if !binders(f).is_empty() {
                        let part = self.access(cx, &Access::Field(l.text.clone()), s, span, out)?;
                        self.bind_pattern(cx, f, &part, out)?;
                    }
                }
            }
            PatKind::Seq(items) => {
                for (i, item) in items.iter().enumerate() {
                    if !binders(item).is_empty() {
                        let part = self.access(cx, &Access::Index(i as i64), s, span, out)?;
                        self.bind_pattern(cx, item, &part, out)?;
                    }
                }
            }
            PatKind::Edge { prefix, middle, suffix } => {
                for (i, item) in prefix.iter().enumerate() {
                    if !binders(item).is_empty() {
                        let part = self.access(cx, &Access::Index(i as i64), s, span, out)?;
                        self.bind_pattern(cx, item, &part, out)?;
                    }
                }
                let k = suffix.len() as i64;
                for (j, item) in suffix.iter().enumerate() {
                    if !binders(item).is_empty() {
                        let part = self.access(cx, &Access::FromEnd(k - j as i64), s, span, out)?;
                        self.bind_pattern(cx, item, &part, out)?;
                    }
                }
                if let Some(m) = middle.as_ref().filter(|m| !m.is_anonymous()) {
                    // subsequence s |prefix| (length s - |prefix| - |suffix|)
                    let len = self.prim(cx, out, Type::Int, Builtin::Length, vec![s.clone()], span);
                    let outer = int((prefix.len() + suffix.len()) as i64);
                    let n = self.prim(cx, out, Type::Int, Builtin::Subi, vec![len, outer], span);
                    let from = int(prefix.len() as i64);
                    let mid = self.prim(cx, out, s.ty(), Builtin::Subsequence, vec![s.clone(), from, n], span);
                    cx.bind(m.id, Bound::Value(mid));
                }
            }
            PatKind::Con(k, arg) => {
                if !binders(arg).is_empty() {
                    let (variant, tag) = self.constructor(&s.ty(), k, span)?;
                    let part = self.access(cx, &Access::Payload(variant, tag), s, span, out)?;
                    self.bind_pattern(cx, arg, &part, out)?;
                }
            }
            PatKind::And(a, b) => {
                self.bind_pattern(cx, a, s, out)?;
                self.bind_pattern(cx, b, s, out)?;
            }
            PatKind::Or(a, b) => self.bind_or(cx, a, b, s, span, out)?,
            PatKind::Error => {}
        }
        Ok(())
    }

    /// The variables of `a | b` (both sides bind the same identities):
    /// from `a` when `a` matches, else from `b`.
    fn bind_or(&mut self, cx: &mut Cx, a: &Pat, b: &Pat, s: &Atom, span: Span, out: &mut Vec<Stmt>) -> Lowered<()> {
        let names = binders(a);
        if names.is_empty() {
            return Ok(());
        }
        let Some(ta) = self.test(cx, a, s, out)? else { return self.bind_pattern(cx, a, s, out) };
        let side = |l: &mut Self, cx: &mut Cx, p: &Pat| -> Lowered<(Vec<Stmt>, Vec<Atom>)> {
            let mark = cx.mark();
            let mut stmts = Vec::new();
            let r = l.bind_pattern(cx, p, s, &mut stmts);
            let atoms = names.iter().map(|id| match cx.get(*id) {
                Some(Bound::Value(a)) => a.clone(),
                _ => Atom::Lit(Lit::Unit),
            });
            let atoms: Vec<Atom> = atoms.collect();
            cx.close(mark);
            r.map(|_| (stmts, atoms))
        };
        let (mut sa, va) = side(self, cx, a)?;
        let (mut sb, vb) = side(self, cx, b)?;
        let types: Vec<Type> = va.iter().map(Atom::ty).collect();
        if vb.iter().map(Atom::ty).collect::<Vec<_>>() != types {
            let message = "the two sides of an or-pattern bind variables of different types".to_string();
            return Err(self.error(Code::LowerUnsupported, span, message, "here"));
        }
        let (ra, rb, ty) = if va.len() == 1 {
            (va[0].clone(), vb[0].clone(), types[0].clone())
        } else {
            let labels: Vec<SmolStr> = (0..va.len()).map(|i| SmolStr::new(i.to_string())).collect();
            let ty = Type::Record(labels.iter().cloned().zip(types.iter().cloned()).collect());
            let ra = self.emit(cx, &mut sa, ty.clone(), Expr::Record(labels.iter().cloned().zip(va).collect()), span);
            let rb = self.emit(cx, &mut sb, ty.clone(), Expr::Record(labels.iter().cloned().zip(vb).collect()), span);
            (ra, rb, ty)
        };
        let chosen = self.emit(
            cx,
            out,
            ty,
            Expr::If { cond: ta, then: Block { stmts: sa, result: ra }, otherwise: Block { stmts: sb, result: rb } },
            span,
        );
        if names.len() == 1 {
            cx.bind(names[0], Bound::Value(chosen));
            return Ok(());
        }
        for (i, (id, t)) in names.iter().zip(types).enumerate() {
            let v = self.emit(cx, out, t, Expr::Project(chosen.clone(), SmolStr::new(i.to_string())), span);
            cx.bind(*id, Bound::Value(v));
        }
        Ok(())
    }

    fn constructor(&mut self, ty: &Type, k: &pmx_ast::Name, span: Span) -> Lowered<(VariantId, usize)> {
        match self.types.tag(ty, k.id) {
            Some(t) => Ok(t),
            None => {
                let message = format!("the constructor `{}` does not build values of type `{ty}`", k.text);
                Err(self.error(Code::LowerUnsupported, span, message, "here"))
            }
        }
    }

    pub fn prim(
        &mut self,
        cx: &mut Cx,
        out: &mut Vec<Stmt>,
        ty: Type,
        b: Builtin,
        args: Vec<Atom>,
        span: Span,
    ) -> Atom {
        self.emit(cx, out, ty, Expr::Prim(b, args), span)
    }

    fn not(&mut self, cx: &mut Cx, a: Atom, span: Span, out: &mut Vec<Stmt>) -> Atom {
        let e = if_(
            a,
            Vec::new(),
            Atom::Lit(Lit::Bool(false)),
            Block { stmts: Vec::new(), result: Atom::Lit(Lit::Bool(true)) },
        );
        self.emit(cx, out, Type::Bool, e, span)
    }
}

fn int(i: i64) -> Atom {
    Atom::Lit(Lit::Int(i))
}

fn false_block() -> Block {
    Block { stmts: Vec::new(), result: Atom::Lit(Lit::Bool(false)) }
}

fn rest_block(stmts: Vec<Stmt>, result: Atom) -> Block {
    Block { stmts, result }
}

/// `if cond then { stmts; result } else otherwise`.
fn if_(cond: Atom, stmts: Vec<Stmt>, result: Atom, otherwise: Block) -> Expr {
    Expr::If { cond, then: Block { stmts, result }, otherwise }
}
