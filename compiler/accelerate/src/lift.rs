//! Accelerate bindings and lambda lifting (section 4.1 of the paper).
//!
//! Every `accelerate e` becomes a top-level function, its *accelerate
//! binding*, whose parameters are the variables `e` uses from outside that
//! are not top-level functions (the data that crosses the boundary); with
//! none, it takes a dummy `Int`. The expression is replaced by a call.
//! Every function is lifted: its free variables that are not top-level
//! functions (values, even top-level ones, and local functions) become
//! leading parameters, and each use becomes a partial application, so that
//! accelerated code refers to no value computed outside it. Recursive
//! groups are lifted together. Nested functions are placed right before
//! the top-level declaration they came from, inner ones first; top-level
//! functions stay where they are.

use crate::free::{free_vars, is_function, rename, FreeVar};
use pmx_ast::spine::spine;
use pmx_ast::*;
use rustc_hash::{FxHashMap, FxHashSet};

/// Identities made by the accelerate passes live in this pseudo-file.
pub const SYNTHETIC: FileId = FileId(u32::MAX - 2);

/// A parameter of an accelerate binding: the value that crosses into it.
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    /// The parameter (a fresh identity).
    pub name: Name,
    pub ty: Ty,
    /// The variable passed for it at the call.
    pub source: Name,
}

/// One `accelerate` expression after lifting.
#[derive(Clone, Debug, PartialEq)]
pub struct AccBinding {
    pub id: NameId,
    pub name: SmolStr,
    /// The `accelerate e` expression.
    pub span: Span,
    pub params: Vec<Param>,
    /// It had no free variables, so it takes a dummy `Int`.
    pub dummy: bool,
    pub result: Ty,
}

enum Pending {
    Let(Box<Binding>),
    Rec(Vec<Binding>),
}

pub struct Lifter {
    next: u32,
    /// Top-level functions defined so far (visible to lifted functions).
    globals: FxHashSet<NameId>,
    /// Uses of top-level functions that gained parameters: replaced by the
    /// function applied to the variables they captured.
    subst: FxHashMap<NameId, Expr>,
    /// How many lambdas each top-level function's definition opens with
    /// (before lifting): applied to fewer arguments, it evaluates nothing.
    arity: FxHashMap<NameId, usize>,
    pending: Vec<Pending>,
    pub accelerates: Vec<AccBinding>,
    /// Top-level values are globals, not captured (`lift_with`).
    keep_values: bool,
}

pub fn lift(program: Expr) -> (Expr, Vec<AccBinding>) {
    lift_with(program, false)
}

/// [`lift`], where with `keep_values` a function's top-level values stay
/// free variables instead of becoming parameters (the native host tier
/// reads them where they are, in the interpreter's globals).
pub fn lift_with(program: Expr, keep_values: bool) -> (Expr, Vec<AccBinding>) {
    let mut l = Lifter {
        keep_values,
        next: 0,
        globals: FxHashSet::default(),
        subst: FxHashMap::default(),
        arity: FxHashMap::default(),
        pending: Vec::new(),
        accelerates: Vec::new(),
    };
    let mut e = program;
    l.top(&mut e);
    (e, l.accelerates)
}

fn arrows(params: &[Ty], result: Ty) -> Ty {
    params.iter().rev().fold(result, |acc, p| Ty::arrow(p.clone(), acc))
}

fn var(name: &Name, ty: Ty, span: Span) -> Expr {
    Expr { kind: ExprKind::Var(name.clone()), span, ty }
}

/// `f a1 .. an`, with types peeled from `f`'s type.
fn apply(f: Expr, args: Vec<Expr>) -> Expr {
    args.into_iter().fold(f, |acc, a| {
        let ty = match acc.ty.strip_foralls().as_arrow() {
            Some((_, r)) => r.clone(),
            None => Ty::unknown(),
        };
        let span = acc.span;
        Expr { kind: ExprKind::App(Box::new(acc), Box::new(a)), span, ty }
    })
}

/// A call of a lifted function (`f c1 .. cn`, the captured values) that
/// replaces a use of the function whose type there was `use_ty`: typed at
/// that use, not at the function's general type, so that a polymorphic
/// function keeps the instance its use had (the lowering picks instances
/// from these types).
fn at_use(call: &Expr, use_ty: &Ty) -> Expr {
    if matches!(use_ty.kind(), pmx_ast::TyKind::Unknown) {
        return call.clone();
    }
    let (head, args) = spine(call);
    let tys: Vec<Ty> = args.iter().map(|a| a.ty.clone()).collect();
    let mut callee = head.clone();
    callee.ty = arrows(&tys, use_ty.clone());
    apply(callee, args.into_iter().cloned().collect())
}

/// The annotation that writes `ty` when it is closed and built from
/// primitives, sequences, tensors and records: an accelerate binding's
/// parameters carry it, so that the lifted program, printed and read back,
/// keeps the boundary's types instead of generalising them (nothing else
/// would fix them there when the binding's body does not).
fn annotation(ty: &Ty, span: Span) -> Option<Box<TypeExpr>> {
    fn go(ty: &Ty, span: Span) -> Option<TypeExpr> {
        let kind = match ty.kind() {
            TyKind::Int => TypeExprKind::Prim(Prim::Int),
            TyKind::Float => TypeExprKind::Prim(Prim::Float),
            TyKind::Bool => TypeExprKind::Prim(Prim::Bool),
            TyKind::Char => TypeExprKind::Prim(Prim::Char),
            TyKind::Seq(t) => TypeExprKind::Seq(Box::new(go(t, span)?)),
            TyKind::Tensor(t) => TypeExprKind::Tensor(Box::new(go(t, span)?)),
            TyKind::Record(fs) => TypeExprKind::Record(
                fs.iter()
                    .map(|(l, t)| Some((Label { text: l.clone(), span }, go(t, span)?)))
                    .collect::<Option<Vec<_>>>()?,
            ),
            _ => return None,
        };
        Some(TypeExpr { kind, span })
    }
    go(ty, span).map(Box::new)
}

/// `lam p1. .. lam pn. body`.
fn lams(params: &[(Name, Ty, Option<Box<TypeExpr>>)], body: Expr) -> Expr {
    params.iter().rev().fold(body, |acc, (p, t, ann)| {
        let span = acc.span;
        let ty = Ty::arrow(t.clone(), acc.ty.clone());
        Expr { kind: ExprKind::Lam { param: p.clone(), annotation: ann.clone(), body: Box::new(acc) }, span, ty }
    })
}

/// Moves `e` out, leaving `()` (which allocates nothing).
fn take(e: &mut Expr) -> Expr {
    let span = e.span;
    std::mem::replace(e, Expr::unit(span))
}

fn is_lambda(e: &Expr) -> bool {
    matches!(e.kind, ExprKind::Lam { .. })
}

impl Lifter {
    fn fresh(&mut self, text: &str, span: Span) -> Name {
        self.next += 1;
        Name { text: SmolStr::new(text), span, id: NameId { file: SYNTHETIC, index: self.next } }
    }

    /// Puts lifted bindings before the declaration at `at`; returns where
    /// that declaration is now.
    fn place(pending: Vec<Pending>, at: &mut Expr) -> &mut Expr {
        let mut at = at;
        for p in pending {
            let node = take(at);
            let (span, ty) = (node.span, node.ty.clone());
            let kind = match p {
                Pending::Let(b) => ExprKind::Let(b, Box::new(node)),
                Pending::Rec(bs) => ExprKind::RecLets(bs, Box::new(node)),
            };
            *at = Expr { kind, span, ty };
            at = match &mut at.kind {
                ExprKind::Let(_, rest) | ExprKind::RecLets(_, rest) => rest,
                _ => unreachable!("just built"),
            };
        }
        at
    }

    /// The top-level chain: its bindings stay where they are. The tree is
    /// changed in place (rebuilding it would free and allocate every node).
    fn top(&mut self, e: &mut Expr) {
        let mut cur = e;
        loop {
            match &mut cur.kind {
                ExprKind::Let(b, _) => {
                    if let Some(eta) = self.alias(&b.value) {
                        b.value = eta;
                    }
                    if is_lambda(&b.value) {
                        self.top_functions(std::slice::from_mut(&mut **b));
                    } else {
                        self.expr(&mut b.value);
                        if self.keep_values {
                            self.globals.insert(b.name.id);
                        }
                    }
                }
                ExprKind::RecLets(bs, _) if bs.iter().all(|b| is_lambda(&b.value)) => self.top_functions(bs),
                ExprKind::RecLets(bs, _) => {
                    bs.iter_mut().for_each(|b| self.expr(&mut b.value));
                    if self.keep_values {
                        self.globals.extend(bs.iter().map(|b| b.name.id));
                    }
                }
                ExprKind::External(d, _) => {
                    self.globals.insert(d.name.id);
                }
                ExprKind::TypeDecl(..) | ExprKind::ConDecl(..) => {}
                ExprKind::Utest(u, _) => {
                    self.expr(&mut u.test);
                    self.expr(&mut u.expected);
                    if let Some(x) = &mut u.using {
                        self.expr(x);
                    }
                    if let Some(x) = &mut u.on_fail {
                        self.expr(x);
                    }
                }
                _ => {
                    self.expr(cur);
                    let pending = std::mem::take(&mut self.pending);
                    Self::place(pending, cur);
                    return;
                }
            }
            // What this declaration lifted goes right before it.
            let pending = std::mem::take(&mut self.pending);
            let at = Self::place(pending, cur);
            cur = crate::chain::rest_mut(at).expect("a declaration of the chain");
        }
    }

    /// Top-level functions (one, or a recursive group) stay where they
    /// are; what is inside them is lifted, and the values they use from
    /// outside become parameters.
    fn top_functions(&mut self, bs: &mut [Binding]) {
        let ids: Vec<NameId> = bs.iter().map(|b| b.name.id).collect();
        for b in bs.iter() {
            let mut n = 0;
            let mut e = &b.value;
            while let ExprKind::Lam { body, .. } = &e.kind {
                n += 1;
                e = body;
            }
            self.arity.insert(b.name.id, n);
        }
        for b in bs.iter_mut() {
            self.inside_lambda(&mut b.value);
        }
        let mut fvs: Vec<FreeVar> = Vec::new();
        for b in bs.iter() {
            for f in self.captured(&b.value, &ids) {
                if !fvs.iter().any(|g| g.id == f.id) {
                    fvs.push(f);
                }
            }
        }
        for id in &ids {
            self.globals.insert(*id);
        }
        if fvs.is_empty() {
            return;
        }
        let fv_tys: Vec<Ty> = fvs.iter().map(|f| f.ty.clone()).collect();
        let tys: Vec<Ty> = bs.iter().map(|b| arrows(&fv_tys, b.value.ty.clone())).collect();
        let names: Vec<Name> = bs.iter().map(|b| b.name.clone()).collect();
        for b in bs.iter_mut() {
            let mut v = std::mem::replace(&mut b.value, Expr::unit(b.span));
            let params = self.parameters(&fvs, &mut v);
            let args: Vec<Expr> = params.iter().map(|(p, t, _)| var(p, t.clone(), b.span)).collect();
            for (j, id) in ids.iter().enumerate() {
                let callee = var(&names[j], tys[j].clone(), b.span);
                substitute(&mut v, *id, &apply(callee, args.clone()));
            }
            b.value = lams(&params, v);
            b.scheme = b.value.ty.clone();
            // The written type no longer says what the value takes (the
            // captured values come first); its scheme does.
            b.annotation = None;
        }
        for (b, ty) in bs.iter().zip(&tys) {
            let call = apply(
                var(&b.name, ty.clone(), b.span),
                fvs.iter().map(|f| var(&f.name, f.ty.clone(), b.span)).collect(),
            );
            self.subst.insert(b.name.id, call);
        }
    }

    /// A top-level value that is a known function: a built-in or a
    /// top-level function (`let plus = addf`), or one applied to fewer
    /// arguments than it takes, each a variable or a literal
    /// (`let inc = addi 1`). Such a value evaluates nothing, so it is the
    /// same function as its eta-expansion (`lam x. lam y. addf x y`),
    /// which is a top-level function like any other: accelerated code
    /// calls it instead of receiving a function value, which no backend
    /// can take (Miking accepts both spellings).
    fn alias(&mut self, value: &Expr) -> Option<Expr> {
        let arity = self.aliased_arity(value)?;
        let args = spine(value).1.len();
        let mut params = Vec::new();
        let mut ty = value.ty.strip_foralls().clone();
        for _ in args..arity {
            let (p, r) = ty.as_arrow()?;
            let (p, r) = (p.clone(), r.clone());
            let name = self.fresh("x", value.span);
            params.push((name, p.clone(), annotation(&p, value.span)));
            ty = r;
        }
        let body = apply(value.clone(), params.iter().map(|(p, t, _)| var(p, t.clone(), value.span)).collect());
        Some(lams(&params, body))
    }

    /// How many arguments the known function takes that `value` applies
    /// to fewer, each a variable or a literal, if it is such an alias
    /// ([`Self::alias`]).
    fn aliased_arity(&self, value: &Expr) -> Option<usize> {
        let (head, args) = spine(value);
        let ExprKind::Var(n) = &head.kind else { return None };
        let arity = match n.id.as_builtin() {
            Some(Builtin::Accelerate) => return None,
            Some(b) => b.arity(),
            None if self.globals.contains(&n.id) => *self.arity.get(&n.id)?,
            None => return None,
        };
        let atoms = args.iter().all(|a| matches!(a.kind, ExprKind::Var(_) | ExprKind::Lit(_)));
        (args.len() < arity && atoms).then_some(arity)
    }

    /// Lifts what is inside the body of a chain of lambdas.
    fn inside_lambda(&mut self, e: &mut Expr) {
        match &mut e.kind {
            ExprKind::Lam { body, .. } => self.inside_lambda(body),
            _ => self.expr(e),
        }
    }

    /// An expression below the top level, changed in place.
    fn expr(&mut self, e: &mut Expr) {
        // A local alias of a known function (`let tget = tensorGetExn in`,
        // `let scale = mulf k in`) evaluates nothing: each use becomes the
        // aliased expression, typed at the use. Passed as a parameter of
        // the lifted functions using it, it would have one type for all
        // their uses, where it is polymorphic.
        if let ExprKind::Let(b, _) = &e.kind {
            if !is_lambda(&b.value) && self.aliased_arity(&b.value).is_some() {
                let Expr { kind: ExprKind::Let(mut b, body), .. } = take(e) else { unreachable!("matched above") };
                self.expr(&mut b.value);
                self.subst.insert(b.name.id, b.value);
                *e = *body;
                self.expr(e);
                return;
            }
        }
        match &mut e.kind {
            ExprKind::Lam { .. } => {
                let lam = take(e);
                *e = self.lift_fn("lambda", lam);
            }
            ExprKind::Let(b, body) if is_lambda(&b.value) => {
                // A local function: lifted, and each use becomes the lifted
                // function applied to what it captured.
                let value = take(&mut b.value);
                let (text, id) = (b.name.text.clone(), b.name.id);
                let mut body = take(body);
                let call = self.lift_fn(&text, value);
                self.subst.insert(id, call);
                self.expr(&mut body);
                *e = body;
            }
            ExprKind::RecLets(bs, _) if bs.iter().all(|b| is_lambda(&b.value)) => {
                let Expr { kind: ExprKind::RecLets(bs, body), span, .. } = take(e) else {
                    unreachable!("matched above")
                };
                *e = self.lift_group(bs, *body, span);
            }
            ExprKind::App(f, _) if matches!(&f.kind, ExprKind::Var(n) if n.id.as_builtin() == Some(Builtin::Accelerate)) =>
            {
                let Expr { kind: ExprKind::App(f, a), span, ty } = take(e) else { unreachable!("matched above") };
                *e = self.accelerate(*f, *a, span, ty);
            }
            ExprKind::Var(n) => {
                if let Some(call) = self.subst.get(&n.id) {
                    let span = e.span;
                    *e = at_use(call, &e.ty);
                    e.span = span;
                }
            }
            // The rest in evaluation order (the order fresh names and
            // lifted functions are made in).
            _ => pmx_ast::visit::children_mut(e, &mut |c| self.expr(c)),
        }
    }

    /// The free variables that must become parameters of a lifted function:
    /// those that are not top-level bindings.
    fn captured(&self, e: &Expr, exclude: &[NameId]) -> Vec<FreeVar> {
        free_vars(e).into_iter().filter(|f| !self.globals.contains(&f.id) && !exclude.contains(&f.id)).collect()
    }

    /// Fresh parameters for captured variables, renaming their uses in `e`.
    fn parameters(&mut self, fvs: &[FreeVar], e: &mut Expr) -> Vec<(Name, Ty, Option<Box<TypeExpr>>)> {
        let mut map = FxHashMap::default();
        let params: Vec<(Name, Ty, Option<Box<TypeExpr>>)> = fvs
            .iter()
            .map(|f| {
                let p = self.fresh(&f.name.text, f.name.span);
                map.insert(f.id, p.clone());
                (p, f.ty.clone(), None)
            })
            .collect();
        rename(e, &map);
        params
    }

    /// Lifts one function to the top level; returns what replaces it.
    fn lift_fn(&mut self, name: &str, mut lam: Expr) -> Expr {
        self.inside_lambda(&mut lam);
        let fvs = self.captured(&lam, &[]);
        let params = self.parameters(&fvs, &mut lam);
        let span = lam.span;
        let fname = self.fresh(if name.is_empty() { "lambda" } else { name }, span);
        let value = lams(&params, lam);
        let ty = value.ty.clone();
        self.pending.push(Pending::Let(Box::new(Binding {
            name: fname.clone(),
            annotation: None,
            value,
            scheme: ty.clone(),
            span,
        })));
        self.globals.insert(fname.id);
        apply(var(&fname, ty, span), fvs.iter().map(|f| var(&f.name, f.ty.clone(), span)).collect())
    }

    /// Lifts a recursive group of functions together.
    fn lift_group(&mut self, mut bs: Vec<Binding>, mut body: Expr, span: Span) -> Expr {
        let ids: Vec<NameId> = bs.iter().map(|b| b.name.id).collect();
        let mut values: Vec<Expr> = bs.iter_mut().map(|b| take(&mut b.value)).collect();
        values.iter_mut().for_each(|v| self.inside_lambda(v));
        // The group captures what any member captures.
        let mut fvs: Vec<FreeVar> = Vec::new();
        for v in &values {
            for f in self.captured(v, &ids) {
                if !fvs.iter().any(|g| g.id == f.id) {
                    fvs.push(f);
                }
            }
        }
        let names: Vec<Name> = bs.iter().map(|b| self.fresh(&b.name.text, b.span)).collect();
        let fv_tys: Vec<Ty> = fvs.iter().map(|f| f.ty.clone()).collect();
        let member_tys: Vec<Ty> = values.iter().map(|v| arrows(&fv_tys, v.ty.clone())).collect();
        let mut lifted = Vec::new();
        for (i, v) in values.iter_mut().enumerate() {
            let params = self.parameters(&fvs, v);
            // Members refer to each other through the lifted functions
            // applied to this member's parameters.
            let args: Vec<Expr> = params.iter().map(|(p, t, _)| var(p, t.clone(), span)).collect();
            for (j, id) in ids.iter().enumerate() {
                let call = apply(var(&names[j], member_tys[j].clone(), span), args.clone());
                substitute(v, *id, &call);
            }
            let value = lams(&params, take(v));
            lifted.push(Binding {
                name: names[i].clone(),
                annotation: None,
                value,
                scheme: member_tys[i].clone(),
                span: bs[i].span,
            });
        }
        for n in &names {
            self.globals.insert(n.id);
        }
        self.pending.push(Pending::Rec(lifted));
        // Each use of a member becomes the lifted member applied to what
        // the group captured.
        for (i, b) in bs.iter().enumerate() {
            let call = apply(
                var(&names[i], member_tys[i].clone(), span),
                fvs.iter().map(|f| var(&f.name, f.ty.clone(), span)).collect(),
            );
            self.subst.insert(b.name.id, call);
        }
        self.expr(&mut body);
        body
    }

    /// `accelerate e` becomes an accelerate binding and a call of it.
    fn accelerate(&mut self, keyword: Expr, mut arg: Expr, span: Span, ty: Ty) -> Expr {
        self.expr(&mut arg);
        // Data crosses the boundary: every free variable but top-level
        // functions (which are extracted with it).
        let fvs: Vec<FreeVar> =
            free_vars(&arg).into_iter().filter(|f| !(self.globals.contains(&f.id) && is_function(&f.ty))).collect();
        let mut body = Expr { kind: ExprKind::App(Box::new(keyword), Box::new(arg)), span, ty: ty.clone() };
        let mut params = self.parameters(&fvs, &mut body);
        for (p, t, ann) in &mut params {
            *ann = annotation(t, p.span);
        }
        let dummy = params.is_empty();
        if dummy {
            let p = self.fresh("", span);
            params.push((p, Ty::int(), Some(Box::new(TypeExpr { kind: TypeExprKind::Prim(Prim::Int), span }))));
        }
        let n = self.accelerates.len() + 1;
        let fname = self.fresh(&format!("accelerate{n}"), span);
        let value = lams(&params, body);
        let fty = value.ty.clone();
        self.pending.push(Pending::Let(Box::new(Binding {
            name: fname.clone(),
            annotation: None,
            value,
            scheme: fty.clone(),
            span,
        })));
        self.globals.insert(fname.id);
        self.accelerates.push(AccBinding {
            id: fname.id,
            name: fname.text.clone(),
            span,
            params: if dummy {
                Vec::new()
            } else {
                params
                    .iter()
                    .zip(&fvs)
                    .map(|((p, t, _), f)| Param { name: p.clone(), ty: t.clone(), source: f.name.clone() })
                    .collect()
            },
            dummy,
            result: ty,
        });
        let args = if dummy {
            vec![Expr { kind: ExprKind::Lit(Lit::Int(0)), span, ty: Ty::int() }]
        } else {
            fvs.iter().map(|f| var(&f.name, f.ty.clone(), span)).collect()
        };
        apply(var(&fname, fty, span), args)
    }
}

/// Replaces every use of `id` in `e` by `with`.
fn substitute(e: &mut Expr, id: NameId, with: &Expr) {
    if let ExprKind::Var(n) = &e.kind {
        if n.id == id {
            *e = at_use(with, &e.ty);
        }
        return;
    }
    pmx_ast::visit::children_mut(e, &mut |c| substitute(c, id, with));
}
