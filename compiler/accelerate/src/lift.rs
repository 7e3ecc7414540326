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
    pub source: NameId,
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
    pending: Vec<Pending>,
    pub accelerates: Vec<AccBinding>,
}

pub fn lift(program: Expr) -> (Expr, Vec<AccBinding>) {
    let mut l = Lifter {
        next: 0,
        globals: FxHashSet::default(),
        subst: FxHashMap::default(),
        pending: Vec::new(),
        accelerates: Vec::new(),
    };
    let e = l.top(program);
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

/// `lam p1. .. lam pn. body`.
fn lams(params: &[(Name, Ty, Option<Box<TypeExpr>>)], body: Expr) -> Expr {
    params.iter().rev().fold(body, |acc, (p, t, ann)| {
        let span = acc.span;
        let ty = Ty::arrow(t.clone(), acc.ty.clone());
        Expr { kind: ExprKind::Lam { param: p.clone(), annotation: ann.clone(), body: Box::new(acc) }, span, ty }
    })
}

fn is_lambda(e: &Expr) -> bool {
    matches!(e.kind, ExprKind::Lam { .. })
}

impl Lifter {
    fn fresh(&mut self, text: &str, span: Span) -> Name {
        self.next += 1;
        Name { text: SmolStr::new(text), span, id: NameId { file: SYNTHETIC, index: self.next } }
    }

    /// Puts lifted bindings before `e`.
    fn place(pending: Vec<Pending>, e: Expr) -> Expr {
        pending.into_iter().rev().fold(e, |rest, p| {
            let (span, ty) = (rest.span, rest.ty.clone());
            let kind = match p {
                Pending::Let(b) => ExprKind::Let(b, Box::new(rest)),
                Pending::Rec(bs) => ExprKind::RecLets(bs, Box::new(rest)),
            };
            Expr { kind, span, ty }
        })
    }

    /// The top-level chain: its bindings stay where they are.
    fn top(&mut self, e: Expr) -> Expr {
        let Expr { kind, span, ty } = e;
        let (kind, rest) = match kind {
            ExprKind::Let(mut b, rest) => {
                if is_lambda(&b.value) {
                    self.top_functions(std::slice::from_mut(&mut b));
                } else {
                    b.value = self.expr(b.value);
                }
                (ExprKind::Let(b, Box::new(Expr::unit(span))), rest)
            }
            ExprKind::RecLets(mut bs, rest) if bs.iter().all(|b| is_lambda(&b.value)) => {
                self.top_functions(&mut bs);
                (ExprKind::RecLets(bs, Box::new(Expr::unit(span))), rest)
            }
            ExprKind::RecLets(mut bs, rest) => {
                for b in &mut bs {
                    let v = std::mem::replace(&mut b.value, Expr::unit(span));
                    b.value = self.expr(v);
                }
                (ExprKind::RecLets(bs, Box::new(Expr::unit(span))), rest)
            }
            ExprKind::External(d, rest) => {
                self.globals.insert(d.name.id);
                (ExprKind::External(d, Box::new(Expr::unit(span))), rest)
            }
            ExprKind::TypeDecl(d, rest) => (ExprKind::TypeDecl(d, Box::new(Expr::unit(span))), rest),
            ExprKind::ConDecl(d, rest) => (ExprKind::ConDecl(d, Box::new(Expr::unit(span))), rest),
            ExprKind::Utest(mut u, rest) => {
                u.test = self.expr(u.test);
                u.expected = self.expr(u.expected);
                u.using = u.using.map(|x| self.expr(x));
                u.on_fail = u.on_fail.map(|x| self.expr(x));
                (ExprKind::Utest(u, Box::new(Expr::unit(span))), rest)
            }
            other => {
                let e = self.expr(Expr { kind: other, span, ty });
                let pending = std::mem::take(&mut self.pending);
                return Self::place(pending, e);
            }
        };
        // What this declaration lifted goes right before it.
        let pending = std::mem::take(&mut self.pending);
        let rest = self.top(*rest);
        let mut node = Expr { kind, span, ty };
        match &mut node.kind {
            ExprKind::Let(_, r)
            | ExprKind::RecLets(_, r)
            | ExprKind::External(_, r)
            | ExprKind::TypeDecl(_, r)
            | ExprKind::ConDecl(_, r)
            | ExprKind::Utest(_, r) => **r = rest,
            _ => unreachable!("a declaration of the chain"),
        }
        Self::place(pending, node)
    }

    /// Top-level functions (one, or a recursive group) stay where they
    /// are; what is inside them is lifted, and the values they use from
    /// outside become parameters.
    fn top_functions(&mut self, bs: &mut [Binding]) {
        let ids: Vec<NameId> = bs.iter().map(|b| b.name.id).collect();
        for b in bs.iter_mut() {
            let v = std::mem::replace(&mut b.value, Expr::unit(b.span));
            b.value = self.inside_lambda(v);
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
        }
        for (b, ty) in bs.iter().zip(&tys) {
            let call = apply(
                var(&b.name, ty.clone(), b.span),
                fvs.iter().map(|f| var(&f.name, f.ty.clone(), b.span)).collect(),
            );
            self.subst.insert(b.name.id, call);
        }
    }

    /// Lifts what is inside the body of a chain of lambdas.
    fn inside_lambda(&mut self, e: Expr) -> Expr {
        match e.kind {
            ExprKind::Lam { param, annotation, body } => {
                let body = self.inside_lambda(*body);
                Expr { kind: ExprKind::Lam { param, annotation, body: Box::new(body) }, span: e.span, ty: e.ty }
            }
            kind => self.expr(Expr { kind, span: e.span, ty: e.ty }),
        }
    }

    /// An expression below the top level.
    fn expr(&mut self, e: Expr) -> Expr {
        let Expr { kind, span, ty } = e;
        let kind = match kind {
            ExprKind::Lam { .. } => {
                return self.lift_fn("lambda", Expr { kind, span, ty });
            }
            ExprKind::Let(b, body) if is_lambda(&b.value) => {
                // A local function: lifted, and each use becomes the lifted
                // function applied to what it captured.
                let b = *b;
                let call = self.lift_fn(&b.name.text, b.value);
                self.subst.insert(b.name.id, call);
                return self.expr(*body);
            }
            ExprKind::Let(mut b, body) => {
                let v = std::mem::replace(&mut b.value, Expr::unit(span));
                b.value = self.expr(v);
                ExprKind::Let(b, Box::new(self.expr(*body)))
            }
            ExprKind::RecLets(bs, body) if bs.iter().all(|b| is_lambda(&b.value)) => {
                return self.lift_group(bs, *body, span, ty);
            }
            ExprKind::RecLets(mut bs, body) => {
                for b in &mut bs {
                    let v = std::mem::replace(&mut b.value, Expr::unit(span));
                    b.value = self.expr(v);
                }
                ExprKind::RecLets(bs, Box::new(self.expr(*body)))
            }
            ExprKind::App(f, a) => {
                if let ExprKind::Var(n) = &f.kind {
                    if n.id.as_builtin() == Some(Builtin::Accelerate) {
                        return self.accelerate(*f, *a, span, ty);
                    }
                }
                ExprKind::App(Box::new(self.expr(*f)), Box::new(self.expr(*a)))
            }
            ExprKind::Match { scrutinee, pattern, then, otherwise } => ExprKind::Match {
                scrutinee: Box::new(self.expr(*scrutinee)),
                pattern,
                then: Box::new(self.expr(*then)),
                otherwise: Box::new(self.expr(*otherwise)),
            },
            ExprKind::Seq(items) => ExprKind::Seq(items.into_iter().map(|i| self.expr(i)).collect()),
            ExprKind::Record(fields) => ExprKind::Record(fields.into_iter().map(|(l, f)| (l, self.expr(f))).collect()),
            ExprKind::RecordUpdate(r, fields) => ExprKind::RecordUpdate(
                Box::new(self.expr(*r)),
                fields.into_iter().map(|(l, f)| (l, self.expr(f))).collect(),
            ),
            ExprKind::Proj(r, l) => ExprKind::Proj(Box::new(self.expr(*r)), l),
            ExprKind::ConApp(k, a) => ExprKind::ConApp(k, Box::new(self.expr(*a))),
            ExprKind::Utest(mut u, body) => {
                u.test = self.expr(u.test);
                u.expected = self.expr(u.expected);
                u.using = u.using.map(|x| self.expr(x));
                u.on_fail = u.on_fail.map(|x| self.expr(x));
                ExprKind::Utest(u, Box::new(self.expr(*body)))
            }
            ExprKind::External(d, body) => ExprKind::External(d, Box::new(self.expr(*body))),
            ExprKind::TypeDecl(d, body) => ExprKind::TypeDecl(d, Box::new(self.expr(*body))),
            ExprKind::ConDecl(d, body) => ExprKind::ConDecl(d, Box::new(self.expr(*body))),
            ExprKind::Var(n) => match self.subst.get(&n.id) {
                Some(call) => {
                    let mut call = call.clone();
                    call.span = span;
                    return call;
                }
                None => ExprKind::Var(n),
            },
            k @ (ExprKind::Lit(_) | ExprKind::Never | ExprKind::Error) => k,
        };
        Expr { kind, span, ty }
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
    fn lift_fn(&mut self, name: &str, lam: Expr) -> Expr {
        let mut lam = self.inside_lambda(lam);
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
    fn lift_group(&mut self, bs: Vec<Binding>, body: Expr, span: Span, ty: Ty) -> Expr {
        let ids: Vec<NameId> = bs.iter().map(|b| b.name.id).collect();
        let mut values: Vec<Expr> = bs.iter().map(|b| self.inside_lambda(b.value.clone())).collect();
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
            let value = lams(&params, v.clone());
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
        let _ = ty;
        self.expr(body)
    }

    /// `accelerate e` becomes an accelerate binding and a call of it.
    fn accelerate(&mut self, keyword: Expr, arg: Expr, span: Span, ty: Ty) -> Expr {
        let arg = self.expr(arg);
        // Data crosses the boundary: every free variable but top-level
        // functions (which are extracted with it).
        let fvs: Vec<FreeVar> =
            free_vars(&arg).into_iter().filter(|f| !(self.globals.contains(&f.id) && is_function(&f.ty))).collect();
        let mut body = Expr { kind: ExprKind::App(Box::new(keyword), Box::new(arg)), span, ty: ty.clone() };
        let mut params = self.parameters(&fvs, &mut body);
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
                    .map(|((p, t, _), f)| Param { name: p.clone(), ty: t.clone(), source: f.id })
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
            *e = with.clone();
        }
        return;
    }
    pmx_ast::visit::children_mut(e, &mut |c| substitute(c, id, with));
}
