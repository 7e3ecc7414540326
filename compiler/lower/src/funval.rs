//! Function values made first-order. A function-typed expression is
//! lowered to a [`FunVal`] known at lowering time (a top-level function or
//! built-in applied to some arguments); applying it to all its arguments
//! gives a call, a primitive or a keyword node, and a keyword's function
//! argument becomes a [`FunRef`]. A lambda is lifted to a new top-level
//! function whose leading parameters are the variables it uses from its
//! scope. A function value that would have to exist at run time (stored,
//! returned, chosen by a conditional, passed to a function parameter) is
//! reported.

use crate::body::is_accelerate;
use crate::cx::{Arg, Bound, Cx, FunVal};
use crate::ir::*;
use crate::lower::{Lowered, Lowerer};
use crate::signature;
use crate::subst::{apply, arrows, drop_params};
use pmx_ast::spine::spine;
use pmx_ast::{Builtin, ExprKind, Span, Ty};
use pmx_diagnostics::Code;
use rustc_hash::FxHashMap;

impl Lowerer<'_> {
    /// Lowers an expression of function type to the function value it is.
    pub fn fun(&mut self, cx: &mut Cx, e: &pmx_ast::Expr, out: &mut Vec<Stmt>) -> Lowered<FunVal> {
        let ty = apply(&e.ty, &cx.subst);
        match &e.kind {
            ExprKind::Var(n) => {
                match cx.get(n.id) {
                    Some(Bound::Fun(f)) => return Ok(f.clone()),
                    // Host code: a function value at run time.
                    Some(Bound::Value(a)) if self.target == Target::Host => {
                        return Ok(FunVal { callee: Callee::Value, args: vec![Arg::Atom(a.clone())], ty });
                    }
                    // Host code: a generalised local function
                    // (`let_binding`), lowered at this use's instance.
                    Some(Bound::Poly(b)) if self.target == Target::Host => {
                        let b = b.clone();
                        let saved = cx.subst.clone();
                        let mut at = crate::subst::Subst::default();
                        crate::subst::unify(&b.scheme, &ty, &mut at);
                        for v in crate::body::quantified(&b.scheme) {
                            at.entry(v.id).or_insert_with(Ty::unit);
                        }
                        cx.subst.extend(at);
                        let r = self.fun(cx, &b.value, out);
                        cx.subst = saved;
                        return r;
                    }
                    Some(Bound::Value(_) | Bound::Poly(_)) => {}
                    None => {
                        if let Some(b) = n.id.as_builtin() {
                            if is_accelerate(b) {
                                let message = self.nested_accelerate();
                                return Err(self.error(Code::LowerUnsupported, e.span, message, "nested"));
                            }
                            return Ok(FunVal { callee: Callee::Builtin(b), args: Vec::new(), ty });
                        }
                        if self.computed_function(n.id) {
                            // The interpreter's value of it, computed once.
                            let a = self.global_value(cx, n, e, out)?;
                            return Ok(FunVal { callee: Callee::Value, args: vec![Arg::Atom(a)], ty });
                        }
                        if self.is_top_level(n.id) {
                            let (f, ty) = self.instance(n.id, &[ty], e.span)?;
                            let args = self.captured_args(cx, n.id, e.span, out)?;
                            return Ok(FunVal { callee: Callee::Function(f), args, ty });
                        }
                        if self.is_external(n.id) {
                            if let Some(m) = Math::of_external(&n.text) {
                                return Ok(FunVal { callee: Callee::Math(m), args: Vec::new(), ty });
                            }
                            if self.target == Target::Host {
                                // The interpreter's external, applied.
                                let t = self.ty(cx, &ty, e.span)?;
                                let a = self.external_value(cx, n.id, t, e.span, out);
                                return Ok(FunVal { callee: Callee::Value, args: vec![Arg::Atom(a)], ty });
                            }
                            let message = format!(
                                "the external `{}` cannot be called in accelerated code (only those of \
                                 `ext/math-ext.mc` on floats: exp, log, sin, cos, tan, atan, atan2, pow, sqrt)",
                                n.text
                            );
                            return Err(self.error(Code::LowerUnsupported, e.span, message, "here"));
                        }
                    }
                }
                let message = format!("`{}` holds a function not known where it is used", n.text);
                Err(self.error(Code::LowerFunctionValue, e.span, message, "here"))
            }
            ExprKind::Lam { .. } => self.lambda(cx, e),
            ExprKind::App(..) => {
                let (head, args) = spine(e);
                let mut f = self.head(cx, head, &args, &ty, out)?;
                let args = self.args(cx, &args, out)?;
                let (params, _) = arrows(&f.ty);
                if args.len() >= params.len() {
                    let message = format!("this call returns a function of type `{ty}`");
                    return Err(self.error(Code::LowerFunctionValue, e.span, message, "a function as a result"));
                }
                f.ty = drop_params(&f.ty, args.len());
                f.args.extend(args);
                self.settle(cx, f, e.span, out)
            }
            ExprKind::Let(b, body) => {
                self.let_binding(cx, b, out)?;
                self.fun(cx, body, out)
            }
            ExprKind::Utest(u, body) => {
                self.utest(cx, u, out)?;
                self.fun(cx, body, out)
            }
            ExprKind::TypeDecl(_, body) | ExprKind::ConDecl(_, body) => self.fun(cx, body, out),
            // Host code: a function value chosen or read at run time.
            ExprKind::Match { .. } | ExprKind::Proj(..) if self.target == Target::Host => {
                let a = self.data(cx, e, out)?;
                Ok(FunVal { callee: Callee::Value, args: vec![Arg::Atom(a)], ty })
            }
            ExprKind::Match { .. } => {
                let message = format!("a conditional returns a function of type `{ty}`");
                Err(self.error(Code::LowerFunctionValue, e.span, message, "apply the function in each branch instead"))
            }
            _ => {
                let message = format!("a function of type `{ty}` cannot be made first-order here");
                Err(self.error(Code::LowerFunctionValue, e.span, message, "here"))
            }
        }
    }

    /// The head of an application `head args : result`. A top-level
    /// function's instance is decided by the types of the arguments and
    /// the result first (the middle end's specialised copies can leave the
    /// head's own type with type variables), then by the head's type.
    pub fn head(
        &mut self,
        cx: &mut Cx,
        head: &pmx_ast::Expr,
        args: &[&pmx_ast::Expr],
        result: &Ty,
        out: &mut Vec<Stmt>,
    ) -> Lowered<FunVal> {
        if let ExprKind::Var(n) = &head.kind {
            if cx.get(n.id).is_none()
                && n.id.as_builtin().is_none()
                && self.is_top_level(n.id)
                && !self.computed_function(n.id)
            {
                let from_args =
                    args.iter().rev().fold(result.clone(), |acc, a| Ty::arrow(apply(&a.ty, &cx.subst), acc));
                let own = apply(&head.ty, &cx.subst);
                let (f, ty) = self.instance(n.id, &[from_args, own], head.span)?;
                let args = self.captured_args(cx, n.id, head.span, out)?;
                return Ok(FunVal { callee: Callee::Function(f), args, ty });
            }
        }
        self.fun(cx, head, out)
    }

    /// Applies a function value; all its arguments must be given.
    pub fn apply_fun(
        &mut self,
        cx: &mut Cx,
        f: FunVal,
        args: Vec<Arg>,
        span: Span,
        out: &mut Vec<Stmt>,
    ) -> Lowered<Atom> {
        let (params, result) = arrows(&f.ty);
        if args.len() != params.len() {
            let message =
                format!("a function of type `{}` is applied to {} arguments: not all of them", f.ty, args.len());
            return Err(self.error(Code::LowerFunctionValue, span, message, "a partial application used as data"));
        }
        let mut all = f.args;
        all.extend(args);
        let f = self.settle(cx, FunVal { callee: f.callee, args: all, ty: result.clone() }, span, out)?;
        let result = self.ty(cx, &result, span)?;
        match f.callee {
            Callee::Value if f.args.len() == 1 => self.atom_arg(cx, f.args.into_iter().next().expect("one"), span, out),
            callee => self.saturate(cx, callee, f.args, result, span, out),
        }
    }

    /// How many arguments a callee takes before it computes, where that
    /// may be fewer than its type's arrows (host code: a built-in whose
    /// result is a function value, `get fs i`, or a function that
    /// computes before it returns one, `host_arity`).
    fn own_arity(&self, callee: Callee) -> Option<usize> {
        match callee {
            _ if self.target != Target::Host => None,
            Callee::Function(id) => self.kept.get(&id).copied(),
            Callee::Builtin(b) => Some(signature::arity(b)),
            Callee::Math(m) => Some(m.arity()),
            Callee::Value => None,
        }
    }

    /// Host code: a function value given at least as many arguments as
    /// its callee takes before it computes is the callee's result (a
    /// function value) given the rest: the call is made here, once.
    fn settle(&mut self, cx: &mut Cx, f: FunVal, span: Span, out: &mut Vec<Stmt>) -> Lowered<FunVal> {
        let Some(k) = self.own_arity(f.callee) else { return Ok(f) };
        if f.args.len() < k {
            return Ok(f);
        }
        let mut args = f.args;
        let rest = args.split_off(k);
        // The callee's result: a function of the rest, then of `f.ty`'s.
        let mut ty = self.ty(cx, &f.ty, span)?;
        for a in rest.iter().rev() {
            let t = match a {
                Arg::Atom(a) => a.ty(),
                Arg::Fun(g) => self.ty(cx, &g.ty, span)?,
            };
            ty = Type::Fun(Box::new(t), Box::new(ty));
        }
        let g = self.saturate(cx, f.callee, args, ty, span, out)?;
        let mut all = vec![Arg::Atom(g)];
        all.extend(rest);
        Ok(FunVal { callee: Callee::Value, args: all, ty: f.ty })
    }

    /// A callee applied to all its arguments: a call, a primitive or a
    /// keyword node.
    pub fn saturate(
        &mut self,
        cx: &mut Cx,
        callee: Callee,
        args: Vec<Arg>,
        result: Type,
        span: Span,
        out: &mut Vec<Stmt>,
    ) -> Lowered<Atom> {
        let b = match callee {
            // The type said how many arguments; a built-in's own signature
            // must agree (it does for every well-typed program).
            Callee::Builtin(b) if args.len() != signature::arity(b) => {
                let message =
                    format!("`{}` is applied to {} arguments, not {}", b.name(), args.len(), signature::arity(b));
                return Err(self.error(Code::LowerUnsupported, span, message, "here"));
            }
            Callee::Function(id) => {
                let atoms = self.atoms(cx, args, span, out)?;
                return Ok(self.emit(cx, out, result, Expr::Call(id, atoms), span));
            }
            Callee::Math(m) => {
                let atoms = self.atoms(cx, args, span, out)?;
                return Ok(self.emit(cx, out, result, Expr::Math(m, atoms), span));
            }
            Callee::Value => {
                let mut atoms = self.atoms(cx, args, span, out)?;
                let f = atoms.remove(0);
                return Ok(self.emit(cx, out, result, Expr::Apply(f, atoms), span));
            }
            Callee::Builtin(b) => b,
        };
        if signature::is_primitive(b) {
            let atoms = self.atoms(cx, args, span, out)?;
            return Ok(self.emit(cx, out, result, Expr::Prim(b, atoms), span));
        }
        let mut it = args.into_iter();
        let mut next = || it.next().expect("as many as the type says");
        use Builtin::*;
        let expr = match b {
            // Host code: the generator makes loops of the keywords below
            // (and `accelerate` is refused); every other built-in is the
            // runtime's, given function values: `createList` among them (a
            // native `create` makes a rope, which `isList` tells apart),
            // `reduce`, `flatten`, `tensorCreate...`.
            _ if self.target == Target::Host
                && !matches!(
                    b,
                    Map | ParallelMap | Map2 | Foldl | Create | CreateRope | Loop | SeqLoop | SeqLoopAcc | Accelerate
                ) =>
            {
                let atoms = self.atoms(cx, it.collect(), span, out)?;
                Expr::Prim(b, atoms)
            }
            Map | ParallelMap => {
                let f = self.fun_arg(cx, next(), 1, span)?;
                Expr::Map { f, seqs: vec![self.atom_arg(cx, next(), span, out)?] }
            }
            Map2 => {
                let f = self.fun_arg(cx, next(), 2, span)?;
                Expr::Map {
                    f,
                    seqs: vec![self.atom_arg(cx, next(), span, out)?, self.atom_arg(cx, next(), span, out)?],
                }
            }
            Reduce | Foldl => {
                let f = self.fun_arg(cx, next(), 2, span)?;
                let init = self.atom_arg(cx, next(), span, out)?;
                let seq = self.atom_arg(cx, next(), span, out)?;
                if b == Reduce {
                    Expr::Reduce { f, neutral: init, seq }
                } else {
                    Expr::Foldl { f, init, seq }
                }
            }
            // `createList` and `createRope` differ from `create` only in
            // the CPU representation they pick.
            // Host code: a native `create` makes a rope, so `createList`
            // stays in the interpreter (`isList` tells them apart).
            Create | CreateList | CreateRope => {
                let len = self.atom_arg(cx, next(), span, out)?;
                Expr::Create { len, f: self.fun_arg(cx, next(), 1, span)? }
            }
            Flatten => Expr::Flatten(self.atom_arg(cx, next(), span, out)?),
            Loop | SeqLoop => {
                let n = self.atom_arg(cx, next(), span, out)?;
                Expr::Loop { n, f: self.fun_arg(cx, next(), 1, span)?, parallel: b == Loop }
            }
            SeqLoopAcc => {
                let init = self.atom_arg(cx, next(), span, out)?;
                let n = self.atom_arg(cx, next(), span, out)?;
                Expr::SeqLoopAcc { init, n, f: self.fun_arg(cx, next(), 2, span)? }
            }
            Vjp | Jvp | Grad => {
                let f = self.fun_arg(cx, next(), 1, span)?;
                let args = it.map(|a| self.atom_arg(cx, a, span, out)).collect::<Result<Vec<_>, _>>()?;
                Expr::Derivative { which: b, f, args }
            }
            Accelerate => {
                let message = self.nested_accelerate();
                return Err(self.error(Code::LowerUnsupported, span, message, "nested"));
            }
            _ => {
                let message = format!("the built-in `{}` takes a function and has no lowered form", b.name());
                return Err(self.error(Code::LowerUnsupported, span, message, "not supported by the lowered IR"));
            }
        };
        Ok(self.emit(cx, out, result, expr, span))
    }

    /// Why an `accelerate` is not lowered here.
    fn nested_accelerate(&self) -> String {
        match self.target {
            Target::Host => {
                "an `accelerate` in host code is not compiled yet (the interpreter calls its engine)".into()
            }
            _ => "`accelerate` inside accelerated code".into(),
        }
    }

    fn atoms(&mut self, cx: &mut Cx, args: Vec<Arg>, span: Span, out: &mut Vec<Stmt>) -> Lowered<Vec<Atom>> {
        args.into_iter().map(|a| self.atom_arg(cx, a, span, out)).collect()
    }

    fn atom_arg(&mut self, cx: &mut Cx, a: Arg, span: Span, out: &mut Vec<Stmt>) -> Lowered<Atom> {
        match a {
            Arg::Atom(a) => Ok(a),
            Arg::Fun(f) if self.target == Target::Host => self.closure(cx, f, span, out),
            Arg::Fun(f) => {
                let message = format!("a function of type `{}` is passed where data is expected", f.ty);
                Err(self.error(Code::LowerFunctionValue, span, message, "passed as an argument"))
            }
        }
    }

    /// Host code: a function value known at lowering time made a value
    /// at run time (a closure, or a function value applied to some
    /// arguments).
    pub fn closure(&mut self, cx: &mut Cx, f: FunVal, span: Span, out: &mut Vec<Stmt>) -> Lowered<Atom> {
        // A function that computes before it returns a function, given
        // what it takes (`recursive let foo = let y = 2 in lam x. ..`),
        // is called: its result is the value.
        let f = self.settle(cx, f, span, out)?;
        let ty = self.ty(cx, &f.ty, span)?;
        let mut atoms = self.atoms(cx, f.args, span, out)?;
        match f.callee {
            Callee::Value if atoms.len() == 1 => Ok(atoms.remove(0)),
            Callee::Value => {
                let g = atoms.remove(0);
                Ok(self.emit(cx, out, ty, Expr::Apply(g, atoms), span))
            }
            callee => Ok(self.emit(cx, out, ty, Expr::Closure(callee, atoms), span)),
        }
    }

    /// A keyword's function argument, which the keyword applies to
    /// `arity` arguments.
    fn fun_arg(&mut self, cx: &mut Cx, a: Arg, arity: usize, span: Span) -> Lowered<FunRef> {
        match a {
            Arg::Fun(f) => self.fun_ref_of(cx, f, Some(arity), span),
            // Host code: a function value at run time.
            Arg::Atom(a) if matches!(a.ty(), Type::Fun(..)) => match a.ty().split_params(arity) {
                Some((params, result)) => Ok(FunRef { callee: Callee::Value, bound: vec![a], params, result }),
                None => Err(self.error(
                    Code::LowerFunctionValue,
                    span,
                    format!("a function of type `{}` takes fewer than {arity} arguments", a.ty()),
                    "here",
                )),
            },
            Arg::Atom(_) => {
                Err(self.error(Code::LowerFunctionValue, span, "a function argument is not a function".into(), "here"))
            }
        }
    }

    /// The first-order reference a keyword (or utest) takes: the callee
    /// with its atoms, or, when the callee is a keyword or some argument
    /// is itself a function, a new function that applies it.
    pub fn fun_ref(&mut self, cx: &mut Cx, f: FunVal, span: Span) -> Lowered<FunRef> {
        self.fun_ref_of(cx, f, None, span)
    }

    /// [`Lowerer::fun_ref`] of a function applied to `arity` arguments
    /// (all that its type takes when `None`); in host code, one that
    /// returns a function value after them.
    fn fun_ref_of(&mut self, cx: &mut Cx, f: FunVal, arity: Option<usize>, span: Span) -> Lowered<FunRef> {
        let (all, last) = arrows(&f.ty);
        let n = arity.unwrap_or(all.len()).min(all.len());
        let (params, rest) = all.split_at(n);
        let result_ty = rest.iter().rev().fold(last, |acc, p| Ty::arrow(p.clone(), acc));
        let partial = !rest.is_empty();
        let mut ptys = Vec::with_capacity(params.len());
        for p in params {
            if self.target != Target::Host && p.strip_foralls().as_arrow().is_some() {
                let message = format!("a function of type `{}` takes a function; it cannot be passed on", f.ty);
                return Err(self.error(Code::LowerFunctionValue, span, message, "higher-order argument"));
            }
            ptys.push(self.ty(cx, p, span)?);
        }
        let result = self.ty(cx, &result_ty, span)?;
        let direct = match f.callee {
            // One that takes fewer arguments than the keyword passes
            // (`host_arity`) is applied by a wrapper.
            Callee::Function(id) => self.kept.get(&id).is_none_or(|k| *k == f.args.len() + n),
            Callee::Math(_) | Callee::Value => true,
            Callee::Builtin(b) => signature::is_primitive(b),
        };
        if direct && !partial && f.args.iter().all(|a| matches!(a, Arg::Atom(_))) {
            let bound = f.args.into_iter().filter_map(|a| if let Arg::Atom(a) = a { Some(a) } else { None }).collect();
            return Ok(FunRef { callee: f.callee, bound, params: ptys, result });
        }
        // A wrapper: its leading parameters are the variables `f` uses.
        let mut captured = Vec::new();
        f.vars(&mut captured);
        let mut inner = Cx::new(cx.subst.clone(), cx.source.clone());
        let mut map = FxHashMap::default();
        let mut wparams = Vec::new();
        for v in &captured {
            let p = self.var(&mut inner, &v.name, v.ty.clone());
            map.insert(v.id, p.clone());
            wparams.push(p);
        }
        let inner_f = f.renamed(&map);
        let mut args = Vec::new();
        for t in &ptys {
            let p = self.var(&mut inner, "x", t.clone());
            args.push(Arg::Atom(Atom::Var(p.clone())));
            wparams.push(p);
        }
        let id = self.reserve();
        let name = self.fn_name(&format!("{}_fn", cx.source));
        let mut stmts = Vec::new();
        let applied = if partial && self.target == Target::Host {
            // Host code: the function value the application gives.
            let mut all_args = inner_f.args;
            all_args.extend(args);
            let rest = FunVal { callee: inner_f.callee, args: all_args, ty: result_ty.clone() };
            self.closure(&mut inner, rest, span, &mut stmts)
        } else {
            self.apply_fun(&mut inner, inner_f, args, span, &mut stmts)
        };
        let (params, body) = match applied {
            Ok(r) => (wparams, Block { stmts, result: r }),
            Err(reported) => {
                let (params, _, body) = self.given_up(&mut inner, span);
                self.functions[id.0 as usize] = Some(lifted(id, name, cx, span, params, Type::Unit, body));
                return Err(reported);
            }
        };
        self.functions[id.0 as usize] = Some(lifted(id, name, cx, span, params, result.clone(), body));
        Ok(FunRef {
            callee: Callee::Function(id),
            bound: captured.into_iter().map(Atom::Var).collect(),
            params: ptys,
            result,
        })
    }

    /// Lifts a lambda to a new top-level function. Its leading parameters
    /// are the data it uses from its scope (the variables of function
    /// values it uses included); it is referred to applied to them.
    fn lambda(&mut self, cx: &mut Cx, e: &pmx_ast::Expr) -> Lowered<FunVal> {
        let scope = scope_used(cx, &self.captures, pmx_ast::visit::free_vars(e));
        let (mut inner, params, bound) = self.lifted_scope(cx, &scope);
        let id = self.reserve();
        let name = self.fn_name(&format!("{}_lam", cx.source));
        let keep = self.keeps(id, e, &cx.subst, bound.len());
        let (params, result, body) = match self.define(&mut inner, e, params, keep) {
            Ok(d) => d,
            Err(r) => {
                let (params, result, body) = self.given_up(&mut inner, e.span);
                self.functions[id.0 as usize] = Some(lifted(id, name, cx, e.span, params, result, body));
                return Err(r);
            }
        };
        self.functions[id.0 as usize] = Some(lifted(id, name, cx, e.span, params, result, body));
        Ok(FunVal { callee: Callee::Function(id), args: bound, ty: apply(&e.ty, &cx.subst) })
    }

    /// Host code: a recursive group in the `mexpr` body that uses the
    /// body's data (`recursive let rows = lam i. .. n ..`), lifted in
    /// place as lambdas are: each function takes the data the group uses
    /// as leading parameters, and passes them on where it refers to the
    /// group's functions; the body refers to them applied to its own.
    pub fn rec_group(&mut self, cx: &mut Cx, bs: &[pmx_ast::Binding]) -> Lowered<()> {
        let names: Vec<pmx_ast::NameId> = bs.iter().map(|b| b.name.id).collect();
        let mut fvs: Vec<pmx_ast::visit::FreeVar> = Vec::new();
        for b in bs {
            for fv in pmx_ast::visit::free_vars(&b.value) {
                if !names.contains(&fv.id) && !fvs.iter().any(|f| f.id == fv.id) {
                    fvs.push(fv);
                }
            }
        }
        let scope = scope_used(cx, &self.captures, fvs);
        let ids: Vec<FnId> = bs.iter().map(|_| self.reserve()).collect();
        let tys: Vec<Ty> = bs.iter().map(|b| apply(&b.value.ty, &cx.subst)).collect();
        let mut outer = Vec::new();
        let mut failed = None;
        for (k, b) in bs.iter().enumerate() {
            let (mut inner, params, bound) = self.lifted_scope(cx, &scope);
            outer = bound;
            let own: Vec<Arg> = params.iter().map(|p| Arg::Atom(Atom::Var(p.clone()))).collect();
            for (j, n) in names.iter().enumerate() {
                let f = FunVal { callee: Callee::Function(ids[j]), args: own.clone(), ty: tys[j].clone() };
                inner.bind(*n, Bound::Fun(f));
            }
            let name = self.fn_name(&b.name.text);
            let keep = self.keeps(ids[k], &b.value, &cx.subst, params.len());
            let (params, result, body) = match self.define(&mut inner, &b.value, params, keep) {
                Ok(d) => d,
                Err(r) => {
                    failed = Some(r);
                    self.given_up(&mut inner, b.value.span)
                }
            };
            let mut f = lifted(ids[k], name, cx, b.value.span, params, result, body);
            f.shown = crate::lower::shown_name(&b.name);
            self.functions[ids[k].0 as usize] = Some(f);
        }
        for (j, n) in names.iter().enumerate() {
            cx.bind(
                *n,
                Bound::Fun(FunVal { callee: Callee::Function(ids[j]), args: outer.clone(), ty: tys[j].clone() }),
            );
        }
        failed.map_or(Ok(()), Err)
    }

    /// Host code: whether lifted function `id` (of `value`, after
    /// `leading` parameters of its scope) keeps its own lambdas because
    /// it computes before it returns a function (`host_arity`); then its
    /// arity is recorded, so that a call with more arguments applies the
    /// function value it returns (`settle`).
    fn keeps(&mut self, id: FnId, value: &pmx_ast::Expr, subst: &crate::subst::Subst, leading: usize) -> bool {
        if self.target != Target::Host {
            return false;
        }
        let ty = apply(&value.ty, subst);
        let own = crate::lower::host_arity(value, &ty);
        let keep = own < arrows(&ty).0.len();
        if keep {
            self.kept.insert(id, leading + own);
        }
        keep
    }

    /// The scope of a function lifted from `cx`: a new context binding
    /// what it uses (`scope_used`) to its leading parameters, those
    /// parameters, and the arguments that pass them from `cx`. Each
    /// variable of the scope becomes one parameter, however many captured
    /// names (and function values) use it.
    fn lifted_scope(&mut self, cx: &Cx, scope: &[(pmx_ast::NameId, Bound)]) -> (Cx, Vec<Var>, Vec<Arg>) {
        let mut inner = Cx::new(cx.subst.clone(), cx.source.clone());
        let mut params = Vec::new();
        let mut bound = Vec::new();
        let mut map: FxHashMap<VarId, Var> = FxHashMap::default();
        let mut param = |l: &mut Self, inner: &mut Cx, v: &Var| -> Var {
            if let Some(p) = map.get(&v.id) {
                return p.clone();
            }
            let p = l.var(inner, &v.name, v.ty.clone());
            map.insert(v.id, p.clone());
            params.push(p.clone());
            bound.push(Arg::Atom(Atom::Var(v.clone())));
            p
        };
        for (id, b) in scope {
            match b.clone() {
                Bound::Value(Atom::Var(v)) => {
                    let p = param(self, &mut inner, &v);
                    inner.bind(*id, Bound::Value(Atom::Var(p)));
                }
                Bound::Value(lit) => inner.bind(*id, Bound::Value(lit)),
                Bound::Fun(f) => {
                    let mut vars = Vec::new();
                    f.vars(&mut vars);
                    let renaming: FxHashMap<VarId, Var> =
                        vars.iter().map(|v| (v.id, param(self, &mut inner, v))).collect();
                    inner.bind(*id, Bound::Fun(f.renamed(&renaming)));
                }
                Bound::Poly(b) => inner.bind(*id, Bound::Poly(b)),
            }
        }
        (inner, params, bound)
    }
}

/// What a function lifted from `cx` uses of its scope, given its free
/// variables: their bindings in `cx` (top-level functions and built-ins,
/// the same everywhere, are not in it). A polymorphic value it uses is
/// lowered inside it, so what that value uses is taken too, as is what a
/// deferred function of the `mexpr` body it uses takes (`captures`).
fn scope_used(
    cx: &Cx,
    captures: &FxHashMap<pmx_ast::NameId, Vec<pmx_ast::visit::FreeVar>>,
    mut fvs: Vec<pmx_ast::visit::FreeVar>,
) -> Vec<(pmx_ast::NameId, Bound)> {
    let mut i = 0;
    while i < fvs.len() {
        let more = match cx.get(fvs[i].id) {
            Some(Bound::Poly(b)) => pmx_ast::visit::free_vars(&b.value),
            // A deferred function of the `mexpr` body: the data it uses.
            _ => captures.get(&fvs[i].id).cloned().unwrap_or_default(),
        };
        for more in more {
            if !fvs.iter().any(|f| f.id == more.id) {
                fvs.push(more);
            }
        }
        i += 1;
    }
    fvs.iter().filter_map(|fv| cx.get(fv.id).map(|b| (fv.id, b.clone()))).collect()
}

fn lifted(
    id: FnId,
    name: pmx_ast::SmolStr,
    cx: &Cx,
    span: Span,
    params: Vec<Var>,
    result: Type,
    body: Block,
) -> Function {
    let shown = pmx_ast::SmolStr::new_static("<lambda>");
    Function { lifted: true, ..Function::new(id, name, cx.source.clone(), shown, span, params, result, body) }
}
