//! The lowering's driver: the backend program's top-level declarations,
//! the entries, and the functions they use, each lowered on demand at the
//! types it is used at (a worklist), then put in dependency order.

use crate::cx::{Bound, Cx};
use crate::ir::*;
use crate::subst::{apply, arrows, type_vars, unify, Subst};
use crate::types::{TypeError, Types};
use pmx_accelerate::variants::Variants;
use pmx_accelerate::{Analysis, Backend, Boundary, Class};
use pmx_ast::{Binding, Builtin, ExprKind, NameId, SmolStr, Span, Ty};
use pmx_diagnostics::{Code, Diagnostic};
use rustc_hash::{FxHashMap, FxHashSet};
use std::borrow::Cow;

/// A diagnostic was reported; the part being lowered is given up.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Reported;

pub(crate) type Lowered<T> = Result<T, Reported>;

/// How many copies of one polymorphic function the lowering makes before
/// it reports polymorphic recursion.
const MAX_INSTANCES: usize = 64;

/// A function asked for and not yet lowered.
struct Pending<'a> {
    id: FnId,
    binding: &'a Binding,
    subst: Subst,
}

pub(crate) struct Lowerer<'a> {
    pub target: Target,
    pub types: Types<'a>,
    decls: FxHashMap<NameId, &'a Binding>,
    externals: FxHashMap<NameId, &'a pmx_ast::ExternalDecl>,
    instances: FxHashMap<(NameId, Vec<Type>), FnId>,
    copies: FxHashMap<NameId, usize>,
    /// First asked, first lowered (and named).
    pending: std::collections::VecDeque<Pending<'a>>,
    /// Indexed by `FnId` (in the order they were asked for); `None` until
    /// lowered.
    pub functions: Vec<Option<Function>>,
    /// Functions whose lowering reported a diagnostic (their body is
    /// `never`).
    given_up: FxHashSet<FnId>,
    /// Host code: the function standing for each top-level value read.
    globals: FxHashMap<(NameId, Type), FnId>,
    /// Host code: each instance of a top-level binding, with its
    /// substitution (what a stub of it needs).
    origins: FxHashMap<FnId, (&'a Binding, Subst)>,
    /// The program's last expression (its `mexpr` body).
    main: Option<&'a pmx_ast::Expr>,
    /// Host code: the utests that run (by span); the others are not
    /// lowered, as the interpreter does not evaluate them.
    pub running_utests: FxHashSet<Span>,
    /// Host code: `Program::using_names`.
    pub using_names: Vec<(Span, SmolStr)>,
    /// Host code: the top-level bindings the interpreter defines (those
    /// of the program's modules, not the ones lambda lifting made): a
    /// stub can apply only those.
    interpreted: FxHashSet<NameId>,
    /// Host code: the functions that take fewer arguments than their
    /// type's arrows (`host_arity`), and how many.
    pub(crate) kept: FxHashMap<FnId, usize>,
    /// Host code: the program's top-level utests, by span.
    top_utests: FxHashMap<Span, &'a pmx_ast::Utest>,
    /// Host code: functions of the `mexpr` body lowered as top-level ones
    /// (`defer_in_main`).
    pub(crate) deferred: FxHashSet<NameId>,
    /// Host code: the body's data a deferred function of the `mexpr` body
    /// uses (`let lookup = lam x. assocLookup traits x`, polymorphic, so
    /// lowered per instance away from `traits`): its instances take them
    /// as leading parameters, and its uses pass them.
    pub(crate) captures: FxHashMap<NameId, Vec<pmx_ast::visit::FreeVar>>,
    /// Host code: its accelerate bindings (the host lifting's), by name.
    pub(crate) host_sites: FxHashMap<NameId, crate::accelerate::HostSite>,
    fn_names: FxHashSet<SmolStr>,
    next_var: u32,
    pub diags: Vec<Diagnostic>,
}

pub fn lower(analysis: &Analysis, backend: Backend) -> (Program, Vec<Diagnostic>) {
    let program = match backend {
        Backend::Futhark => &analysis.futhark,
        Backend::Cuda => &analysis.cuda,
    };
    let mut l = Lowerer::new(program, Cow::Borrowed(&analysis.variants), backend.into());
    let mut entries = Vec::new();
    for a in analysis.accelerates.iter().filter(|a| a.class == Class::One(backend)) {
        match l.decls.get(&a.boundary.id).copied() {
            Some(b) => entries.extend(l.entry(&a.boundary, b)),
            // The middle end's rewrites dropped it (the Futhark
            // specialisation of higher-order functions drops a binding
            // that takes a function and that nothing calls).
            None => {
                let message = "the backend's program lost this accelerate expression's binding".to_string();
                l.error(Code::LowerUnsupported, a.boundary.span, message, "no entry for it");
            }
        }
    }
    let (mut program, _, diags) = l.finish(entries, &[]);
    if backend == Backend::Futhark {
        crate::hist::rewrite(&mut program);
    }
    (program, diags)
}

/// The host lowering: the top-level functions `roots` of a whole program
/// (its chain of declarations, `pmx_accelerate::program::to_expr`), each
/// at its own type, which must have no type variables, and the functions
/// they use. Returns the program (no entries), each root's function where
/// it and everything it calls lowered, and the diagnostics of those that
/// did not (what the native host tier reports as its reasons to leave a
/// function to the interpreter).
///
/// `roots`: each with its span (a binding's, or a utest's); they may hold
/// [`NameId::MAIN`]: the program's `mexpr` body (the expression of the
/// chain at span `main`, whose own `let`s are not declarations), lowered
/// as a function of no parameters named `main`, and top-level utests
/// (`NameId::top_utest`), each a function of no parameters.
/// `interpreted`: the top-level bindings the interpreter defines, which
/// a function that cannot be lowered may apply instead (a stub);
/// `running_utests`: the utests that run (by span).
pub fn lower_host(
    program: &pmx_ast::Expr,
    roots: &[(NameId, Span)],
    interpreted: &FxHashSet<NameId>,
    main: Option<Span>,
    running_utests: &FxHashSet<Span>,
    accelerates: (&[pmx_accelerate::Boundary], &[pmx_accelerate::AccBinding]),
) -> (Program, Vec<Option<FnId>>, Vec<Diagnostic>) {
    let mut l = Lowerer::new_unscanned(Cow::Owned(Variants::new(program)), Target::Host);
    l.collect(program, main);
    l.host_sites = crate::accelerate::host_sites(accelerates.0, accelerates.1);
    l.interpreted = interpreted.clone();
    l.running_utests = running_utests.clone();
    let asked: Vec<Option<FnId>> = roots
        .iter()
        .map(|(id, span)| {
            if *id == NameId::MAIN {
                return l.main_function();
            }
            if id.is_top_utest() {
                return l.utest_function(*span);
            }
            l.instance(*id, &[], *span).ok().map(|(f, _)| f)
        })
        .collect();
    l.finish(Vec::new(), &asked)
}

impl<'a> Lowerer<'a> {
    fn new(program: &'a pmx_ast::Expr, variants: Cow<'a, Variants>, target: Target) -> Lowerer<'a> {
        let mut l = Lowerer::new_unscanned(variants, target);
        l.collect(program, None);
        l
    }

    /// A lowerer that knows no declaration yet (`collect`).
    fn new_unscanned(variants: Cow<'a, Variants>, target: Target) -> Lowerer<'a> {
        Lowerer {
            target,
            types: Types::new(variants, target == Target::Host),
            decls: FxHashMap::default(),
            externals: FxHashMap::default(),
            instances: FxHashMap::default(),
            copies: FxHashMap::default(),
            pending: std::collections::VecDeque::new(),
            functions: Vec::new(),
            given_up: FxHashSet::default(),
            globals: FxHashMap::default(),
            origins: FxHashMap::default(),
            interpreted: FxHashSet::default(),
            host_sites: FxHashMap::default(),
            kept: FxHashMap::default(),
            deferred: FxHashSet::default(),
            captures: FxHashMap::default(),
            top_utests: FxHashMap::default(),
            main: None,
            running_utests: FxHashSet::default(),
            using_names: Vec::new(),
            fn_names: FxHashSet::default(),
            next_var: 0,
            diags: Vec::new(),
        }
    }

    /// Lowers what is pending and puts the functions in dependency order;
    /// `asked` functions come back renumbered, `None` where the function
    /// or one it calls was given up.
    fn finish(mut self, entries: Vec<Entry>, asked: &[Option<FnId>]) -> (Program, Vec<Option<FnId>>, Vec<Diagnostic>) {
        while let Some(p) = self.pending.pop_front() {
            self.function(p);
        }
        let mut broken = self.broken();
        if self.target == Target::Host {
            // Host code: a top-level function that could not be lowered
            // (or uses one) is called in the interpreter instead. The stubs
            // go where the failure is, then outwards: a broken function
            // is stubbed if it was given up itself or calls one that no
            // stub can stand for (a lifted function, or one whose stub
            // failed), so the callers of a stub are compiled.
            let mut stubbed = FxHashSet::default();
            let mut tried = FxHashSet::default();
            loop {
                let broken = self.broken();
                let lost = |c: &FnId| broken.contains(c) && (!self.origins.contains_key(c) || tried.contains(c));
                let frontier: Vec<FnId> = self
                    .functions
                    .iter()
                    .flatten()
                    .filter(|g| broken.contains(&g.id) && self.origins.contains_key(&g.id) && !tried.contains(&g.id))
                    .filter(|g| {
                        let mut called = Vec::new();
                        crate::callgraph::callees(&g.body, &mut called);
                        self.given_up.contains(&g.id) || called.iter().any(lost)
                    })
                    .map(|g| g.id)
                    .collect();
                if frontier.is_empty() {
                    break;
                }
                for f in frontier {
                    tried.insert(f);
                    if self.stub(f) {
                        stubbed.insert(f);
                        self.given_up.remove(&f);
                    }
                }
            }
            if !stubbed.is_empty() {
                broken = self.broken();
                // A stub stands for the interpreter's function: it is no
                // function of the host code's own.
                broken.extend(stubbed);
            }
        }
        let functions: Vec<Function> = self.functions.into_iter().flatten().collect();
        let (functions, entries, renumber) = crate::order::order_mapped(functions, entries);
        let asked =
            asked.iter().map(|a| a.filter(|f| !broken.contains(f)).and_then(|f| renumber.get(&f).copied())).collect();
        let mut diags = self.diags;
        pmx_diagnostics::sort_and_dedup(&mut diags);
        let using_names = self.using_names;
        (Program { target: self.target, variants: self.types.variants, functions, entries, using_names }, asked, diags)
    }

    /// The functions given up and those that call one, to a fixpoint.
    fn broken(&self) -> FxHashSet<FnId> {
        crate::callgraph::fixpoint(self.functions.iter().flatten(), self.given_up.clone(), |body, broken| {
            let mut called = Vec::new();
            crate::callgraph::callees(body, &mut called);
            called.iter().any(|c| broken.contains(c))
        })
    }

    /// The top-level bindings of the program's chain of declarations.
    /// The declarations of the program's chain; with `main`, the chain
    /// ends at the expression at that span (the `mexpr` body).
    fn collect(&mut self, program: &'a pmx_ast::Expr, main: Option<Span>) {
        use pmx_accelerate::chain::{self, Decl};
        let mut cur = program;
        loop {
            if Some(cur.span) == main {
                self.main = Some(cur);
                self.defer_in_main(cur);
                return;
            }
            let Some((d, rest)) = chain::split(cur) else { return };
            cur = rest;
            match d {
                Decl::Let(_) | Decl::Rec(_) => d.bindings().iter().for_each(|b| {
                    self.decls.insert(b.name.id, b);
                }),
                Decl::External(x) => {
                    self.externals.insert(x.name.id, x);
                }
                Decl::Utest(u) => {
                    self.top_utests.insert(u.span, u);
                }
                Decl::Type(_) | Decl::Con(_) => {}
            }
        }
    }

    /// Host code: the polymorphic functions declared along the `mexpr`
    /// body's chain of `let`s (the lambda lifting places there what it
    /// lifts from the body, those of its `accelerate`s among them) are
    /// lowered as top-level functions, at each type a use asks for,
    /// rather than in place at none; one that nothing lowered uses is
    /// never lowered.
    fn defer_in_main(&mut self, main: &'a pmx_ast::Expr) {
        use pmx_accelerate::chain::{self, Decl};
        for (d, _) in chain::decls(main) {
            // A recursive group has no place in a body (its functions
            // call each other by name), so it is lowered so too.
            let group = matches!(d, Decl::Rec(_));
            let bs = d.bindings();
            let poly = |b: &Binding| !type_vars(&b.scheme).is_empty();
            // A monomorphic group that uses the body's data is lifted in
            // place, with that data as leading parameters (`rec_group`).
            let names: Vec<NameId> = bs.iter().map(|b| b.name.id).collect();
            let local = |v: &pmx_ast::visit::FreeVar| {
                !names.contains(&v.id) && !self.decls.contains_key(&v.id) && !self.externals.contains_key(&v.id)
            };
            let in_place = group
                && !bs.iter().any(poly)
                && bs.iter().any(|b| pmx_ast::visit::free_vars(&b.value).iter().any(local));
            if in_place {
                continue;
            }
            if !bs.is_empty() && bs.iter().all(|b| matches!(b.value.kind, ExprKind::Lam { .. }) && (group || poly(b))) {
                let used: Vec<Vec<pmx_ast::visit::FreeVar>> = bs
                    .iter()
                    .map(|b| match group {
                        true => Vec::new(),
                        false => pmx_ast::visit::free_vars(&b.value).into_iter().filter(|v| local(v)).collect(),
                    })
                    .collect();
                for (b, used) in bs.iter().zip(used) {
                    if !used.is_empty() {
                        self.captures.insert(b.name.id, used);
                    }
                    self.decls.insert(b.name.id, b);
                    self.deferred.insert(b.name.id);
                }
            }
        }
    }

    pub fn error(&mut self, code: Code, span: Span, message: String, label: &str) -> Reported {
        let backend = self.target.name();
        self.diags.push(
            Diagnostic::error(code, span, format!("lowering for {backend}: {message}"))
                .with_label(label)
                .with_note("the code generators take the lowered IR: first-order, monomorphic, in A-normal form"),
        );
        Reported
    }

    /// The IR type of an AST type under the current substitution.
    pub fn ty(&mut self, cx: &Cx, t: &Ty, span: Span) -> Lowered<Type> {
        match self.types.convert(t, &cx.subst) {
            Ok(t) => Ok(t),
            Err(e) => {
                let code = match e {
                    TypeError::Function(_) => Code::LowerFunctionValue,
                    TypeError::Variable(_) => Code::LowerTypeNotConcrete,
                    TypeError::Unsupported(_) => Code::LowerUnsupported,
                };
                Err(self.error(code, span, e.to_string(), "here"))
            }
        }
    }

    /// A fresh variable.
    pub fn var(&mut self, cx: &mut Cx, hint: &str, ty: Type) -> Var {
        self.next_var += 1;
        Var { id: VarId(self.next_var), name: cx.name(hint), ty }
    }

    /// Appends `let v : ty = expr` and returns `v`.
    pub fn emit(&mut self, cx: &mut Cx, out: &mut Vec<Stmt>, ty: Type, expr: Expr, span: Span) -> Atom {
        let v = self.var(cx, "t", ty);
        cx.temps.insert(v.id);
        out.push(Stmt { var: v.clone(), expr, span });
        Atom::Var(v)
    }

    /// A name for a new function: unique, and not a built-in's.
    pub fn fn_name(&mut self, hint: &str) -> SmolStr {
        let base: String = hint.chars().filter(|c| c.is_alphanumeric() || *c == '_').collect();
        let base = if base.is_empty() { "f".to_string() } else { base };
        let free = |n: &str, names: &FxHashSet<SmolStr>| !names.contains(n) && Builtin::from_name(n).is_none();
        let name = if free(&base, &self.fn_names) {
            SmolStr::new(&base)
        } else {
            (1..).map(|i| SmolStr::new(format!("{base}_{i}"))).find(|n| free(n, &self.fn_names)).expect("free suffix")
        };
        self.fn_names.insert(name.clone());
        name
    }

    /// Host code: a read of top-level value `n` (a call of the function
    /// that stands for it, made once per value).
    pub fn global_value(
        &mut self,
        cx: &mut Cx,
        n: &pmx_ast::Name,
        e: &pmx_ast::Expr,
        out: &mut Vec<Stmt>,
    ) -> Lowered<Atom> {
        let Some(b) = self.decls.get(&n.id).copied() else {
            return Err(self.error(Code::LowerUnsupported, e.span, "unknown top-level value".into(), "here"));
        };
        // A polymorphic value (`let empty = []`, generalised because it is
        // a value) holds nothing of its type variables: it is read at the
        // type of each use, as one function per type.
        let ty = self.ty(cx, &e.ty, e.span)?;
        let f = match self.globals.get(&(n.id, ty.clone())) {
            Some(f) => *f,
            None => {
                let f = self.interpreter_value(n.id, &b.name, ty.clone(), b.span);
                self.globals.insert((n.id, ty.clone()), f);
                f
            }
        };
        Ok(self.emit(cx, out, ty, Expr::Call(f, Vec::new()), e.span))
    }

    /// Host code: a function of no parameters that stands for the
    /// interpreter's top-level value `id` (a binding or an external,
    /// named `name`, defined at `span`) at type `ty`: a call of it is a
    /// read of that value (`Function::global`).
    pub fn interpreter_value(&mut self, id: NameId, name: &pmx_ast::Name, ty: Type, span: Span) -> FnId {
        let f = self.reserve();
        let mut inner = Cx::new(Subst::default(), name.text.clone());
        let mut stmts = Vec::new();
        let r = self.emit(&mut inner, &mut stmts, ty.clone(), Expr::Never, span);
        let fname = self.fn_name(&name.text);
        let g = Function::new(
            f,
            fname,
            name.text.clone(),
            shown_name(name),
            span,
            Vec::new(),
            ty,
            Block { stmts, result: r },
        );
        self.functions[f.0 as usize] = Some(Function { global: Some(id), ..g });
        f
    }

    /// Host code: the value of external `id` at type `ty` (its IR type),
    /// read where the interpreter keeps it.
    pub fn external_value(&mut self, cx: &mut Cx, id: NameId, ty: Type, span: Span, out: &mut Vec<Stmt>) -> Atom {
        // A polymorphic external is read at each type it is used at.
        let f = match self.globals.get(&(id, ty.clone())) {
            Some(f) => *f,
            None => {
                let d = self.externals[&id];
                let f = self.interpreter_value(id, &d.name, ty.clone(), d.span);
                self.globals.insert((id, ty.clone()), f);
                f
            }
        };
        self.emit(cx, out, ty, Expr::Call(f, Vec::new()), span)
    }

    /// A slot for a function about to be lowered.
    pub fn reserve(&mut self) -> FnId {
        self.functions.push(None);
        FnId(self.functions.len() as u32 - 1)
    }

    /// The arguments a use of top-level function `id` passes first: the
    /// `mexpr` body's data it uses (`captures`), as bound where it is used
    /// (a local function of the body as a function value).
    pub fn captured_args(
        &mut self,
        cx: &mut Cx,
        id: NameId,
        span: Span,
        out: &mut Vec<Stmt>,
    ) -> Lowered<Vec<crate::cx::Arg>> {
        let Some(used) = self.captures.get(&id).cloned() else { return Ok(Vec::new()) };
        let mut args = Vec::with_capacity(used.len());
        for v in used {
            match cx.get(v.id).cloned() {
                Some(Bound::Value(a)) => args.push(crate::cx::Arg::Atom(a)),
                Some(Bound::Fun(f)) => args.push(crate::cx::Arg::Atom(self.closure(cx, f, span, out)?)),
                _ => {
                    let message = format!("a function here uses `{}`, which is not data where it is used", v.name.text);
                    return Err(self.error(Code::LowerUnsupported, span, message, "here"));
                }
            }
        }
        Ok(args)
    }

    pub fn is_top_level(&self, id: NameId) -> bool {
        self.decls.contains_key(&id)
    }

    /// Host code: whether top-level binding `id` is a function value the
    /// interpreter computes (`let g = let c = .. in lam x. ..`), which
    /// native code reads where the interpreter keeps it rather than
    /// computing it again at each use.
    pub fn computed_function(&self, id: NameId) -> bool {
        self.target == Target::Host
            && self.interpreted.contains(&id)
            && self.decls.get(&id).is_some_and(|b| {
                type_vars(&b.scheme).is_empty() && b.scheme.as_arrow().is_some() && host_arity(&b.value, &b.scheme) == 0
            })
    }

    pub fn is_external(&self, id: NameId) -> bool {
        self.externals.contains_key(&id)
    }

    /// The function for top-level binding `id` used at the types `uses`
    /// (the substitution applied; the first that decides a type variable
    /// wins): one copy per instance of its type variables. Returns it and
    /// its type at that instance.
    pub fn instance(&mut self, id: NameId, uses: &[Ty], span: Span) -> Lowered<(FnId, Ty)> {
        let Some(b) = self.decls.get(&id).copied() else {
            return Err(self.error(Code::LowerUnsupported, span, "unknown top-level binding".into(), "here"));
        };
        let vars = type_vars(&b.scheme);
        let mut map = Subst::default();
        for u in uses {
            unify(b.scheme.strip_foralls(), u, &mut map);
        }
        let mut key = Vec::with_capacity(vars.len());
        for v in &vars {
            // A type variable the type does not mention (nothing in the
            // body can observe it) is taken as `()`.
            let t = map.entry(v.id).or_insert_with(Ty::unit).clone();
            match self.types.convert(&t, &Subst::default()) {
                Ok(t) => key.push(t),
                Err(e) => {
                    let message = format!("`{}` is used where {e}", b.name.text);
                    let code = match e {
                        TypeError::Function(_) => Code::LowerFunctionValue,
                        _ => Code::LowerTypeNotConcrete,
                    };
                    return Err(self.error(code, span, message, "this use"));
                }
            }
        }
        let ty = apply(b.scheme.strip_foralls(), &map);
        if let Some(f) = self.instances.get(&(id, key.clone())) {
            return Ok((*f, ty));
        }
        let copies = self.copies.entry(id).or_default();
        *copies += 1;
        if *copies > MAX_INSTANCES {
            let message = format!("`{}` is used at more than {MAX_INSTANCES} types", b.name.text);
            return Err(self.error(Code::LowerTypeNotConcrete, span, message, "polymorphic recursion?"));
        }
        let f = self.reserve();
        self.instances.insert((id, key), f);
        if self.target == Target::Host {
            self.origins.insert(f, (b, map.clone()));
            let k = host_arity(&b.value, &ty);
            if k < arrows(&ty).0.len() {
                let leading = self.captures.get(&id).map_or(0, Vec::len);
                self.kept.insert(f, leading + k);
            }
        }
        self.pending.push_back(Pending { id: f, binding: b, subst: map });
        Ok((f, ty))
    }

    /// Lowers a top-level function at one instance.
    fn function(&mut self, p: Pending<'a>) {
        let b = p.binding;
        let vars = type_vars(&b.scheme);
        let mut cx = Cx::new(p.subst, b.name.text.clone());
        let instance: Vec<(SmolStr, Type)> = vars
            .iter()
            .filter_map(|v| {
                let t = cx.subst.get(&v.id)?;
                let t = self.types.convert(t, &Subst::default()).ok()?;
                Some((v.name.clone(), t))
            })
            .collect();
        let name = self.fn_name(&b.name.text);
        let keep = self.kept.contains_key(&p.id);
        // The body's data it uses, as leading parameters.
        let mut leading = Some(Vec::new());
        for v in self.captures.get(&b.name.id).cloned().unwrap_or_default() {
            match (self.ty(&cx, &v.ty, b.span), leading.as_mut()) {
                (Ok(t), Some(leading)) => {
                    let param = self.var(&mut cx, &v.name.text, t);
                    cx.bind(v.id, Bound::Value(Atom::Var(param.clone())));
                    leading.push(param);
                }
                _ => leading = None,
            }
        }
        let defined = match leading {
            Some(leading) => self.define(&mut cx, &b.value, leading, keep),
            None => Err(Reported),
        };
        let (params, result, body) = match defined {
            Ok(d) => d,
            Err(Reported) => {
                self.given_up.insert(p.id);
                self.given_up(&mut cx, b.value.span)
            }
        };
        let f = Function::new(p.id, name, b.name.text.clone(), shown_name(&b.name), b.span, params, result, body);
        self.functions[p.id.0 as usize] = Some(Function { instance, ..f });
    }

    /// Host code: the program's `mexpr` body as a function of no
    /// parameters (`None` where it cannot be lowered: reported).
    fn main_function(&mut self) -> Option<FnId> {
        let main = self.main?;
        let f = self.reserve();
        let mut cx = Cx::new(Subst::default(), SmolStr::new_static("main"));
        let name = self.fn_name("main");
        let (params, result, body) = match self.define(&mut cx, main, Vec::new(), false) {
            Ok(d) if d.0.is_empty() => d,
            _ => {
                self.given_up.insert(f);
                self.given_up(&mut cx, main.span)
            }
        };
        let shown = SmolStr::new_static("mexpr");
        self.functions[f.0 as usize] =
            Some(Function::new(f, name, shown.clone(), shown, main.span, params, result, body));
        Some(f)
    }

    /// Host code: the program's top-level utest at `span` as a function
    /// of no parameters (`None` where it cannot be lowered: reported).
    fn utest_function(&mut self, span: Span) -> Option<FnId> {
        let u = *self.top_utests.get(&span)?;
        let f = self.reserve();
        let mut cx = Cx::new(Subst::default(), SmolStr::new_static("utest"));
        let name = self.fn_name("utest");
        let mut stmts = Vec::new();
        let (params, result, body) = match self.utest(&mut cx, u, &mut stmts) {
            Ok(()) => (Vec::new(), Type::Unit, Block { stmts, result: Atom::Lit(Lit::Unit) }),
            Err(Reported) => {
                self.given_up.insert(f);
                self.given_up(&mut cx, u.span)
            }
        };
        let shown = SmolStr::new_static("utest");
        self.functions[f.0 as usize] = Some(Function::new(f, name, shown.clone(), shown, u.span, params, result, body));
        Some(f)
    }

    /// Host code: replaces function `f`, an instance of a top-level
    /// binding, by a stub that applies the interpreter's value of the
    /// binding to its parameters (as many as the function takes,
    /// `kept`); whether it could.
    fn stub(&mut self, f: FnId) -> bool {
        let Some((b, subst)) = self.origins.get(&f).cloned() else { return false };
        if !self.interpreted.contains(&b.name.id) {
            return false;
        }
        let ty = apply(b.scheme.strip_foralls(), &subst);
        let (mut params, _) = arrows(&ty);
        let n = self.kept.get(&f).copied().unwrap_or(params.len());
        if params.is_empty() || pmx_ast::visit::leading_lambdas(&b.value) != n {
            return false;
        }
        params.truncate(n);
        let result = crate::subst::drop_params(&ty, n);
        let mut cx = Cx::new(subst, b.name.text.clone());
        let (Ok(fun_ty), Ok(result)) = (self.types.convert(&ty, &cx.subst), self.types.convert(&result, &cx.subst))
        else {
            return false;
        };
        let mut vars = Vec::with_capacity(params.len());
        for p in &params {
            let Ok(t) = self.types.convert(p, &cx.subst) else { return false };
            vars.push(self.var(&mut cx, "x", t));
        }
        // The interpreter's value, read as a top-level value is.
        let g = self.interpreter_value(b.name.id, &b.name, fun_ty.clone(), b.span);
        let mut stmts = Vec::new();
        let value = self.emit(&mut cx, &mut stmts, fun_ty, Expr::Call(g, Vec::new()), b.span);
        let args = vars.iter().map(|v| Atom::Var(v.clone())).collect();
        let r = self.emit(&mut cx, &mut stmts, result.clone(), Expr::Apply(value, args), b.span);
        let old = self.functions[f.0 as usize].take().expect("a lowered function");
        self.functions[f.0 as usize] =
            Some(Function { params: vars, result, body: Block { stmts, result: r }, stub: true, ..old });
        true
    }

    /// What a function whose lowering failed (and was reported) becomes:
    /// no parameters, and a body that never returns.
    pub fn given_up(&mut self, cx: &mut Cx, span: Span) -> (Vec<Var>, Type, Block) {
        let mut stmts = Vec::new();
        let r = self.emit(cx, &mut stmts, Type::Unit, Expr::Never, span);
        (Vec::new(), Type::Unit, Block { stmts, result: r })
    }

    /// A function from its definition: the parameters of its lambdas after
    /// `leading` ones; a body of function type (a definition by partial
    /// application) is applied to one more parameter per arrow left.
    pub fn define(
        &mut self,
        cx: &mut Cx,
        value: &pmx_ast::Expr,
        mut params: Vec<Var>,
        keep: bool,
    ) -> Lowered<(Vec<Var>, Type, Block)> {
        let mut body = value;
        while let ExprKind::Lam { param, body: inner, .. } = &body.kind {
            let ty = apply(&body.ty, &cx.subst);
            let Some((p, _)) = ty.as_arrow() else { break };
            let pty = self.param_type(cx, p, &param.text, param.span)?;
            let v = self.var(cx, &param.text, pty);
            cx.bind(param.id, Bound::Value(Atom::Var(v.clone())));
            params.push(v);
            body = inner;
        }
        let (extra, result) = arrows(&apply(&body.ty, &cx.subst));
        let result_ty = self.ty(cx, &result, body.span)?;
        let mut out = Vec::new();
        let atom = if extra.is_empty() {
            self.value(cx, body, &mut out)?
        } else if keep {
            // Host code: the function returns the function value its body
            // computes (`host_arity`).
            let a = self.value(cx, body, &mut out)?;
            return Ok((params, a.ty(), Block { stmts: out, result: a }));
        } else if self.target == Target::Host && !computes_nothing(body) {
            // `lam x. e; lam y. ..` computes `e` once per partial
            // application in the interpreter; one function of both
            // parameters would compute it at every call.
            let message = "this function computes something before it returns a function".to_string();
            return Err(self.error(Code::LowerFunctionValue, body.span, message, "not compiled yet"));
        } else {
            let f = self.fun(cx, body, &mut out)?;
            let mut args = Vec::new();
            for t in &extra {
                let pty = self.param_type(cx, t, "x", body.span)?;
                let v = self.var(cx, "x", pty);
                params.push(v.clone());
                args.push(crate::cx::Arg::Atom(Atom::Var(v)));
            }
            self.apply_fun(cx, f, args, body.span, &mut out)?
        };
        Ok((params, result_ty, Block { stmts: out, result: atom }))
    }

    fn param_type(&mut self, cx: &Cx, t: &Ty, name: &str, span: Span) -> Lowered<Type> {
        if self.target != Target::Host && apply(t, &cx.subst).strip_foralls().as_arrow().is_some() {
            let message = format!("the parameter `{name}` is a function; only first-order functions can be lowered");
            return Err(self.error(Code::LowerFunctionValue, span, message, "a function parameter"));
        }
        self.ty(cx, t, span)
    }

    /// An accelerate binding's entry: its parameters (without the dummy)
    /// and the body of its `accelerate`.
    fn entry(&mut self, acc: &Boundary, b: &'a Binding) -> Option<Entry> {
        let mut cx = Cx::new(Subst::default(), b.name.text.clone());
        let mut params = Vec::new();
        let mut body = &b.value;
        let mut first = true;
        while let ExprKind::Lam { param, body: inner, .. } = &body.kind {
            let dummy = first && acc.dummy;
            first = false;
            let Some((p, _)) = body.ty.as_arrow() else { break };
            if !dummy {
                let ty = self.param_type(&cx, p, &param.text, param.span).ok()?;
                let v = self.var(&mut cx, &param.text, ty);
                cx.bind(param.id, Bound::Value(Atom::Var(v.clone())));
                params.push(v);
            }
            body = inner;
        }
        // The `accelerate` wrapper is gone: its argument is the body.
        if let ExprKind::App(f, arg) = &body.kind {
            if matches!(&f.kind, ExprKind::Var(n) if n.id.as_builtin() == Some(Builtin::Accelerate)) {
                body = arg;
            }
        }
        let result = self.ty(&cx, &acc.result.ty, acc.span).ok()?;
        let mut out = Vec::new();
        let atom = self.value(&mut cx, body, &mut out).ok()?;
        Some(Entry {
            id: acc.id,
            name: acc.name.clone(),
            span: acc.span,
            params,
            result,
            body: Block { stmts: out, result: atom },
        })
    }
}

/// The name the interpreter's closure of a top-level binding has: an
/// anonymous lambda that lambda lifting made a binding (`lambda`, in the
/// passes' own file) is `<lambda>`. (A local function the program itself
/// names `lambda` is shown so too.)
pub(crate) fn shown_name(n: &pmx_ast::Name) -> SmolStr {
    if n.id.file == pmx_accelerate::SYNTHETIC && n.text == "lambda" {
        SmolStr::new_static("<lambda>")
    } else {
        n.text.clone()
    }
}

/// Host code: how many arguments the native function that stands for a
/// top-level binding of `value`, of type `ty`, takes: one per arrow of
/// `ty` where what its lambdas leave computes nothing (a partial
/// application is eta-expanded), else as many as its lambdas. So a
/// function that computes something before it returns a function keeps
/// its own lambdas (`lam x. e; lam y. ..` computes `e` once per
/// application to `x` in the interpreter; one function of both
/// parameters would compute it at every call) and returns the function
/// value, and a value that computes something takes none (the function
/// computes the value).
pub fn host_arity(value: &pmx_ast::Expr, ty: &pmx_ast::Ty) -> usize {
    let (lambdas, body) = pmx_ast::visit::under_lambdas(value);
    let arrows = arrows(ty).0.len();
    if lambdas < arrows && computes_nothing(body) {
        arrows
    } else {
        lambdas
    }
}

/// Whether evaluating `e` (a function value) computes nothing: a variable,
/// or a function applied to variables, literals and lambdas (a partial
/// application). Only then is making a function of all the parameters
/// (eta-expansion) the same program.
fn computes_nothing(e: &pmx_ast::Expr) -> bool {
    match &e.kind {
        ExprKind::Var(_) | ExprKind::Lam { .. } => true,
        ExprKind::App(..) => {
            let (head, args) = pmx_ast::spine::spine(e);
            matches!(head.kind, ExprKind::Var(_))
                && args.iter().all(|a| matches!(a.kind, ExprKind::Var(_) | ExprKind::Lit(_) | ExprKind::Lam { .. }))
        }
        _ => false,
    }
}
