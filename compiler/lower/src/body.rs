//! Expressions that compute data, lowered to statements: each
//! intermediate value gets a typed variable, operands are atoms.

use crate::cx::{Arg, Bound, Cx, FunVal};
use crate::ir::*;
use crate::lower::{Lowered, Lowerer};
use crate::subst::{apply, unify, Subst};
use pmx_ast::spine::spine;
use pmx_ast::{compare_labels, Builtin, ExprKind, Label, Span, Ty};
use pmx_diagnostics::Code;

/// Whether a `let`'s scheme quantifies a variable the function being
/// lowered has not fixed.
fn polymorphic(cx: &Cx, scheme: &Ty) -> bool {
    quantified(scheme).any(|v| !cx.subst.contains_key(&v.id))
}

/// The variables a scheme's leading `all`s bind.
pub(crate) fn quantified(scheme: &Ty) -> impl Iterator<Item = &pmx_ast::TyVar> {
    std::iter::successors(Some(scheme), |t| match t.kind() {
        pmx_ast::TyKind::All(_, _, body) => Some(body),
        _ => None,
    })
    .filter_map(|t| match t.kind() {
        pmx_ast::TyKind::All(v, _, _) => Some(v),
        _ => None,
    })
}

pub(crate) fn is_function(cx: &Cx, t: &Ty) -> bool {
    apply(t, &cx.subst).strip_foralls().as_arrow().is_some()
}

impl Lowerer<'_> {
    /// A block of its own for `e` (a branch): what it binds does not leak.
    pub fn block(&mut self, cx: &mut Cx, e: &pmx_ast::Expr) -> Lowered<Block> {
        let mark = cx.mark();
        let mut stmts = Vec::new();
        let r = self.value(cx, e, &mut stmts);
        cx.close(mark);
        Ok(Block { stmts, result: r? })
    }

    /// Lowers `e`, whose type is not a function type, appending its
    /// statements to `out`; returns the atom that holds its value.
    pub fn value(&mut self, cx: &mut Cx, e: &pmx_ast::Expr, out: &mut Vec<Stmt>) -> Lowered<Atom> {
        if is_function(cx, &e.ty) && self.target == Target::Host {
            // Host code: a function value made a value at run time.
            let f = self.fun(cx, e, out)?;
            return self.closure(cx, f, e.span, out);
        }
        if is_function(cx, &e.ty) {
            let message = format!("a function of type `{}` is used as a value", apply(&e.ty, &cx.subst));
            return Err(self.error(Code::LowerFunctionValue, e.span, message, "stored, returned or compared here"));
        }
        self.data(cx, e, out)
    }

    /// [`Lowerer::value`] of an expression of any type (host code: a
    /// function value chosen or read at run time).
    pub fn data(&mut self, cx: &mut Cx, e: &pmx_ast::Expr, out: &mut Vec<Stmt>) -> Lowered<Atom> {
        match &e.kind {
            ExprKind::Var(n) => self.var_value(cx, n, e, out),
            ExprKind::Lit(l) => self.literal(cx, l, e.span, out),
            ExprKind::Let(b, body) => {
                self.let_binding(cx, b, out)?;
                self.value(cx, body, out)
            }
            ExprKind::App(..) => {
                let (head, args) = spine(e);
                if let ExprKind::Var(n) = &head.kind {
                    if let Some(r) = self.host_accelerate(cx, n.id, &args, e, out) {
                        return r;
                    }
                }
                let ty = apply(&e.ty, &cx.subst);
                let f = self.head(cx, head, &args, &ty, out)?;
                let args = self.args(cx, &args, out)?;
                self.apply_fun(cx, f, args, e.span, out)
            }
            ExprKind::Match { .. } => self.matching(cx, e, out),
            ExprKind::Seq(items) => {
                let ty = self.ty(cx, &e.ty, e.span)?;
                let mut atoms = Vec::with_capacity(items.len());
                for i in items {
                    atoms.push(self.value(cx, i, out)?);
                }
                Ok(self.emit(cx, out, ty, Expr::Seq(atoms), e.span))
            }
            ExprKind::Record(fields) if fields.is_empty() => Ok(Atom::Lit(Lit::Unit)),
            ExprKind::Record(fields) => {
                let ty = self.ty(cx, &e.ty, e.span)?;
                let mut atoms = Vec::with_capacity(fields.len());
                for (l, f) in fields {
                    atoms.push((l.text.clone(), self.value(cx, f, out)?));
                }
                atoms.sort_by(|a, b| compare_labels(&a.0, &b.0));
                Ok(self.emit(cx, out, ty, Expr::Record(atoms), e.span))
            }
            ExprKind::RecordUpdate(r, fields) => self.record_update(cx, r, fields, e, out),
            ExprKind::Proj(record, l) => {
                let ty = self.ty(cx, &e.ty, e.span)?;
                let r = self.value(cx, record, out)?;
                // A record type inference left open (its value is never
                // made: `[]`'s elements) has no lowered form. No value of
                // it exists, so in host code the projection is never
                // reached (`lam y. y.0` given to a function that never
                // calls it), as `never` is.
                let open = matches!(apply(&record.ty, &cx.subst).kind(), pmx_ast::TyKind::Meta(_));
                let found = matches!(r.ty(), Type::Record(fields) if fields.iter().any(|(f, _)| *f == l.text));
                if !found && open && self.target == Target::Host {
                    return Ok(self.emit(cx, out, ty, Expr::Never, e.span));
                }
                if !found {
                    let message = format!(
                        "the record type of this projection (`{}`) is not determined by how the code is used",
                        l.text
                    );
                    return Err(self.error(Code::LowerTypeNotConcrete, e.span, message, "here"));
                }
                Ok(self.emit(cx, out, ty, Expr::Project(r, l.text.clone()), e.span))
            }
            ExprKind::ConApp(k, a) => {
                let ty = self.ty(cx, &e.ty, e.span)?;
                let payload = self.value(cx, a, out)?;
                let Some((variant, tag)) = self.types.tag(&ty, k.id) else {
                    let message = format!("the constructor `{}` does not belong to `{ty}`", k.text);
                    return Err(self.error(Code::LowerUnsupported, k.span, message, "here"));
                };
                Ok(self.emit(cx, out, ty, Expr::Con { variant, tag, payload }, e.span))
            }
            ExprKind::Never => {
                let ty = self.ty(cx, &e.ty, e.span)?;
                Ok(self.emit(cx, out, ty, Expr::Never, e.span))
            }
            ExprKind::Utest(u, body) => {
                self.utest(cx, u, out)?;
                self.value(cx, body, out)
            }
            // Constructors are collected for the whole program up front.
            ExprKind::TypeDecl(_, body) | ExprKind::ConDecl(_, body) => self.value(cx, body, out),
            ExprKind::RecLets(bs, body) if bs.iter().all(|b| self.deferred.contains(&b.name.id)) => {
                self.value(cx, body, out)
            }
            // Host code: a recursive group that uses its scope's data (in
            // the `mexpr` body, `defer_in_main` leaves those here).
            ExprKind::RecLets(bs, body) if self.target == Target::Host => {
                self.rec_group(cx, bs)?;
                self.value(cx, body, out)
            }
            ExprKind::RecLets(..) => Err(self.error(
                Code::LowerUnsupported,
                e.span,
                "a local recursive binding is left after lambda lifting".into(),
                "not lifted to the top level",
            )),
            ExprKind::External(..) => Err(self.error(
                Code::LowerUnsupported,
                e.span,
                "external declarations cannot be lowered".into(),
                "in accelerated code",
            )),
            ExprKind::Lam { .. } | ExprKind::Error => {
                Err(self.error(Code::LowerUnsupported, e.span, "this expression cannot be lowered".into(), "here"))
            }
        }
    }

    fn var_value(&mut self, cx: &mut Cx, n: &pmx_ast::Name, e: &pmx_ast::Expr, out: &mut Vec<Stmt>) -> Lowered<Atom> {
        match cx.get(n.id) {
            Some(Bound::Value(a)) => return Ok(a.clone()),
            Some(Bound::Poly(b)) => {
                let b = b.clone();
                let saved = cx.subst.clone();
                let mut at = Subst::default();
                unify(&b.scheme, &apply(&e.ty, &cx.subst), &mut at);
                // A variable the use leaves open types nothing this use
                // looks at (`r.floats` of `{ints = [], floats = []}`).
                for v in quantified(&b.scheme) {
                    at.entry(v.id).or_insert_with(Ty::unit);
                }
                cx.subst.extend(at);
                let r = self.value(cx, &b.value, out);
                cx.subst = saved;
                return r;
            }
            Some(Bound::Fun(_)) => {
                let message = format!("the function `{}` is used as a value", n.text);
                return Err(self.error(Code::LowerFunctionValue, e.span, message, "here"));
            }
            None => {}
        }
        if let Some(b) = n.id.as_builtin() {
            // A built-in constant (`argv`): a primitive of no argument.
            let ty = self.ty(cx, &e.ty, e.span)?;
            return self.saturate(cx, Callee::Builtin(b), Vec::new(), ty, e.span, out);
        }
        if self.target == Target::Host && self.is_top_level(n.id) {
            return self.global_value(cx, n, e, out);
        }
        if self.target == Target::Host && self.is_external(n.id) {
            // An external that is a value (`stdout`): read where the
            // interpreter keeps it.
            let ty = self.ty(cx, &e.ty, e.span)?;
            return Ok(self.external_value(cx, n.id, ty, e.span, out));
        }
        let why = if self.is_external(n.id) {
            format!("the external `{}` cannot be used in lowered code", n.text)
        } else if self.is_top_level(n.id) {
            format!("the top-level value `{}` is used inside a function; values enter as parameters", n.text)
        } else {
            format!("`{}` is not bound here", n.text)
        };
        Err(self.error(Code::LowerUnsupported, e.span, why, "here"))
    }

    fn literal(&mut self, cx: &mut Cx, l: &pmx_ast::Lit, span: Span, out: &mut Vec<Stmt>) -> Lowered<Atom> {
        Ok(Atom::Lit(match l {
            pmx_ast::Lit::Int(i) => Lit::Int(*i),
            pmx_ast::Lit::Float(f) => Lit::Float(*f),
            pmx_ast::Lit::Char(c) => Lit::Char(*c),
            pmx_ast::Lit::Bool(b) => Lit::Bool(*b),
            pmx_ast::Lit::Str(s) => {
                let chars = s.chars().map(|c| Atom::Lit(Lit::Char(c))).collect();
                return Ok(self.emit(cx, out, Type::seq(Type::Char), Expr::Seq(chars), span));
            }
        }))
    }

    /// `let x = e`: a function value is remembered (no statement); data
    /// is computed, its last statement taking the name `x`.
    pub fn let_binding(&mut self, cx: &mut Cx, b: &pmx_ast::Binding, out: &mut Vec<Stmt>) -> Lowered<()> {
        // Host code: an accelerate binding the host lifting placed in the
        // `mexpr` body; its calls are the engine's (`accelerate.rs`).
        if self.host_sites.contains_key(&b.name.id) || self.deferred.contains(&b.name.id) {
            return Ok(());
        }
        // Host code: a local function generalised by its `let` (`let tget
        // = tensorGetExn in`) is lowered again at each use, at that use's
        // instance, as a polymorphic value is.
        if self.target == Target::Host
            && !b.name.is_anonymous()
            && is_function(cx, &b.value.ty)
            && polymorphic(cx, &b.scheme)
        {
            cx.bind(b.name.id, Bound::Poly(std::rc::Rc::new(b.clone())));
            return Ok(());
        }
        if is_function(cx, &b.value.ty) {
            let lifted = self.functions.len();
            let f = self.fun(cx, &b.value, out)?;
            // A lambda lifted here is the closure named after the binding.
            if let (ExprKind::Lam { .. }, Callee::Function(id)) = (&b.value.kind, f.callee) {
                if id.0 as usize >= lifted {
                    if let Some(g) = self.functions.get_mut(id.0 as usize).and_then(|g| g.as_mut()) {
                        g.shown = crate::lower::shown_name(&b.name);
                    }
                }
            }
            cx.bind(b.name.id, Bound::Fun(f));
            return Ok(());
        }
        if !b.name.is_anonymous() && polymorphic(cx, &b.scheme) {
            cx.bind(b.name.id, Bound::Poly(std::rc::Rc::new(b.clone())));
            return Ok(());
        }
        let start = out.len();
        let mut a = self.value(cx, &b.value, out)?;
        if let Atom::Var(v) = &mut a {
            let fresh = out.len() > start && out.last().is_some_and(|s| s.var.id == v.id) && cx.temps.remove(&v.id);
            if fresh && !b.name.is_anonymous() {
                cx.forget(&v.name);
                let name = cx.name(&b.name.text);
                v.name = name.clone();
                if let Some(s) = out.last_mut() {
                    s.var.name = name;
                }
            }
        }
        if !b.name.is_anonymous() {
            cx.bind(b.name.id, Bound::Value(a));
        }
        Ok(())
    }

    /// `{r with l = e}`: the record rebuilt, its other fields projected.
    fn record_update(
        &mut self,
        cx: &mut Cx,
        r: &pmx_ast::Expr,
        fields: &[(Label, pmx_ast::Expr)],
        e: &pmx_ast::Expr,
        out: &mut Vec<Stmt>,
    ) -> Lowered<Atom> {
        let ty = self.ty(cx, &e.ty, e.span)?;
        let open = matches!(apply(&r.ty, &cx.subst).kind(), pmx_ast::TyKind::Meta(_));
        let r = self.value(cx, r, out)?;
        let mut updated = Vec::with_capacity(fields.len());
        for (l, f) in fields {
            updated.push((l.text.clone(), self.value(cx, f, out)?));
        }
        // A record type inference left open: as for a projection
        // (`data`), no value of it exists, so in host code the update is
        // never reached.
        if open && !matches!(ty, Type::Record(_)) && self.target == Target::Host {
            return Ok(self.emit(cx, out, ty, Expr::Never, e.span));
        }
        let Type::Record(all) = &ty else {
            return Err(self.error(Code::LowerUnsupported, e.span, format!("`{ty}` is not a record"), "updated here"));
        };
        let mut atoms = Vec::with_capacity(all.len());
        for (l, t) in all {
            // The last update of a label wins, as in evaluation.
            let a = match updated.iter().rev().find(|(u, _)| u == l) {
                Some((_, a)) => a.clone(),
                None => self.emit(cx, out, t.clone(), Expr::Project(r.clone(), l.clone()), e.span),
            };
            atoms.push((l.clone(), a));
        }
        Ok(self.emit(cx, out, ty, Expr::Record(atoms), e.span))
    }

    /// The arguments of an application: functions stay function values,
    /// data becomes atoms.
    pub fn args(&mut self, cx: &mut Cx, args: &[&pmx_ast::Expr], out: &mut Vec<Stmt>) -> Lowered<Vec<Arg>> {
        let mut out_args = Vec::with_capacity(args.len());
        for a in args {
            if is_function(cx, &a.ty) {
                match self.fun(cx, a, out)? {
                    // Host code: a function value at run time is an atom.
                    FunVal { callee: Callee::Value, args, .. }
                        if args.len() == 1 && matches!(args[0], Arg::Atom(_)) =>
                    {
                        out_args.extend(args)
                    }
                    f => out_args.push(Arg::Fun(f)),
                }
            } else {
                out_args.push(Arg::Atom(self.value(cx, a, out)?));
            }
        }
        Ok(out_args)
    }
}

/// Whether a built-in is `accelerate` (which only the entry strips).
pub(crate) fn is_accelerate(b: Builtin) -> bool {
    b == Builtin::Accelerate
}
