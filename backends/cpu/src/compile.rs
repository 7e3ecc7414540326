//! Typed AST to [`Code`]: resolves every variable to where its value lives
//! and gives closures flat lists of captured values.

use crate::accelerate::{Accelerated, Site};
use crate::code::*;
use crate::value::Value;
use pmx_ast::{Builtin, Expr, ExprKind, Item, Lit, Module, NameId, PatKind, SmolStr, Utest};
use rustc_hash::{FxHashMap, FxHashSet};
use std::sync::Arc;

/// The number of arguments a built-in takes before it computes (read from
/// a table built once: applying a built-in value asks it every time).
pub fn builtin_arity(b: Builtin) -> usize {
    static ARITIES: std::sync::LazyLock<Vec<u8>> =
        std::sync::LazyLock::new(|| Builtin::ALL.iter().map(|b| b.arity() as u8).collect());
    ARITIES[b as usize] as usize
}

/// One function being compiled: its frame and what it captures.
struct FnCtx {
    locals: FxHashMap<NameId, u32>,
    slots: u32,
    captures: Vec<(NameId, Source)>,
    /// The name the function is bound to in a recursive binding.
    self_name: Option<NameId>,
}

impl FnCtx {
    fn new(self_name: Option<NameId>) -> FnCtx {
        FnCtx { locals: FxHashMap::default(), slots: 0, captures: Vec::new(), self_name }
    }
}

pub struct Compiler {
    /// Top-level functions run as machine code (the native host tier).
    natives: crate::Natives,
    globals: FxHashMap<NameId, u32>,
    global_names: Vec<SmolStr>,
    ctxs: Vec<FnCtx>,
    /// Names bound through recursion cells.
    cells: FxHashSet<NameId>,
    /// Accelerate sites by the span of their `accelerate` expression (how
    /// the expression in the program as written is matched with its
    /// binding; everything at run time goes by site index).
    sites: FxHashMap<pmx_ast::Span, u32>,
    boundaries: Vec<pmx_accelerate::Boundary>,
    /// The sets of float accumulations that `--check-order` tags
    /// (`Accumulations::float_sets`): compiled as the built-in, which
    /// tags, not as a direct write.
    float_sets: FxHashSet<pmx_ast::Span>,
    /// The definition being compiled may run on dual floats (`crate::ad`,
    /// `DualReach`): float operations are calls of the built-ins, which
    /// meet duals, not unboxed arithmetic.
    derivatives: bool,
}

/// Compiles the modules of a program, in load order, with its accelerated
/// part when the middle end described it: the extracted bindings are
/// compiled first, as globals of their own (lifting changed the functions
/// they share with the program), and each `accelerate` becomes a site.
pub fn compile_program(
    modules: &[&Module],
    acc: Option<&Accelerated>,
    natives: &crate::Natives,
    float_sets: &FxHashSet<pmx_ast::Span>,
) -> (Program, Vec<Site>) {
    let mut c = Compiler {
        natives: natives.clone(),
        globals: FxHashMap::default(),
        global_names: Vec::new(),
        ctxs: Vec::new(),
        cells: FxHashSet::default(),
        sites: FxHashMap::default(),
        boundaries: Vec::new(),
        float_sets: float_sets.clone(),
        derivatives: false,
    };
    // Definitions nothing reaches are left out, as Miking does: they may
    // be an unused `let x = never`, or hold a type error reported as a
    // warning.
    let live = pmx_ast::reach::Liveness::of(modules);
    let duals = pmx_ast::derivatives::DualReach::of(modules, &live);
    // The extracted accelerated program (its functions are copies) runs
    // on duals wherever the program takes derivatives.
    c.derivatives = duals.any();
    let mut steps = Vec::new();
    let mut places = Vec::new();
    let mut sites = Vec::new();
    if let Some(acc) = acc {
        // The extracted program defines functions and externals only (its
        // values are the bindings' parameters), so defining it first
        // changes nothing the program observes.
        let extracted = pmx_accelerate::program::to_module(&acc.program);
        // Accelerated code runs as its engine runs it: natives are host
        // code's (the extracted program shares their identities).
        let natives = std::mem::take(&mut c.natives);
        for item in &extracted.items {
            c.placed_item(item, &mut steps, &mut places);
        }
        c.natives = natives;
        let accelerated_globals = std::mem::take(&mut c.globals);
        sites = crate::accelerate::sites(acc, &accelerated_globals);
        for (i, site) in sites.iter().enumerate() {
            c.sites.insert(site.boundary.span, i as u32);
            c.boundaries.push(site.boundary.clone());
        }
    }
    // The top-level utests' identities, by place: a utest may be compiled
    // to a native function of no parameters, or run on duals.
    let utest_ids: FxHashMap<(usize, usize), NameId> =
        pmx_ast::top_utests(modules).map(|(at, id, _)| (at, id)).collect();
    for (mi, module) in modules.iter().enumerate() {
        for (ii, item) in module.items.iter().enumerate() {
            if live.is_dead(mi, ii) {
                continue;
            }
            c.derivatives = match item {
                Item::Let(b) => duals.covers(b.name.id),
                Item::RecLets(bs, _) => bs.iter().any(|b| duals.covers(b.name.id)),
                Item::Utest(_) => utest_ids.get(&(mi, ii)).is_some_and(|id| duals.covers(*id)),
                Item::Type(_) | Item::Con(_) | Item::External(_) => false,
            };
            let native_utest = utest_ids.get(&(mi, ii)).and_then(|id| c.natives.get(id));
            match (item, native_utest) {
                (Item::Utest(u), Some(native)) => {
                    steps.push(Step::NativeUtest { span: u.span, native: native.clone() });
                    places.push(start(u.span));
                }
                _ => c.placed_item(item, &mut steps, &mut places),
            }
        }
    }
    if let Some(main) = modules.last().and_then(|m| m.main.as_ref()) {
        match c.natives.get(&NameId::MAIN) {
            Some(native) => steps.push(Step::NativeMain(native.clone())),
            None => {
                c.derivatives = duals.covers(NameId::MAIN);
                c.ctxs.push(FnCtx::new(None));
                let code = c.expr(main);
                let slots = c.ctxs.pop().expect("context pushed").slots as usize;
                steps.push(Step::Main { slots, code });
            }
        }
        places.push(start(main.span));
    }
    let steps = steps.into_iter().map(crate::thunk::step).collect();
    let global_ids = std::mem::take(&mut c.globals);
    (Program { steps, places, globals: c.global_names.len(), global_names: c.global_names, global_ids }, sites)
}

/// The start of a span (a place to point at).
fn start(s: pmx_ast::Span) -> pmx_ast::Span {
    pmx_ast::Span::new(s.file, s.start, s.start)
}

impl Compiler {
    /// Compiles an item and records where each step it made is: the name a
    /// definition binds, or the start of a utest.
    fn placed_item(&mut self, item: &Item, steps: &mut Vec<Step>, places: &mut Vec<pmx_ast::Span>) {
        let before = steps.len();
        self.item(item, steps);
        let mut here: Vec<pmx_ast::Span> = match item {
            Item::Let(b) => vec![b.name.span],
            Item::RecLets(bindings, _) => bindings.iter().map(|b| b.name.span).collect(),
            Item::External(d) => vec![d.name.span],
            Item::Utest(u) => vec![start(u.span)],
            Item::Type(_) | Item::Con(_) => Vec::new(),
        };
        here.resize(steps.len() - before, start(item.span()));
        places.extend(here);
    }

    fn global(&mut self, id: NameId, name: &SmolStr) -> u32 {
        let g = self.global_names.len() as u32;
        self.globals.insert(id, g);
        self.global_names.push(name.clone());
        g
    }

    /// Compiles an expression evaluated at the top level in its own frame.
    fn top_expr(&mut self, e: &Expr, name: &SmolStr, self_name: Option<NameId>) -> (usize, Code) {
        self.ctxs.push(FnCtx::new(None));
        let code = self.value(e, name, self_name);
        let slots = self.ctxs.pop().expect("context pushed").slots as usize;
        (slots, code)
    }

    fn item(&mut self, item: &Item, steps: &mut Vec<Step>) {
        match item {
            // A value: computed by its native function.
            Item::Let(b) if self.natives.get(&b.name.id).is_some_and(|n| n.arity == 0) => {
                let global = self.global(b.name.id, &b.name.text);
                steps.push(Step::NativeDefine { global, native: self.natives[&b.name.id].clone() });
            }
            Item::Let(b) if self.natives.contains_key(&b.name.id) => {
                let global = self.global(b.name.id, &b.name.text);
                let code = crate::native::code(&self.natives[&b.name.id], &b.name.text, b.span);
                steps.push(Step::Define { global, slots: 0, code });
            }
            Item::Let(b) => {
                let (slots, code) = self.top_expr(&b.value, &b.name.text, None);
                let global = self.global(b.name.id, &b.name.text);
                steps.push(Step::Define { global, slots, code });
            }
            Item::RecLets(bindings, _) => {
                // Globals need no cells: each refers to the others by slot.
                let globals: Vec<u32> = bindings.iter().map(|b| self.global(b.name.id, &b.name.text)).collect();
                for (b, global) in bindings.iter().zip(globals) {
                    let (slots, code) = match self.natives.get(&b.name.id) {
                        Some(n) => (0, crate::native::code(n, &b.name.text, b.span)),
                        None => self.top_expr(&b.value, &b.name.text, None),
                    };
                    steps.push(Step::Define { global, slots, code });
                }
            }
            Item::External(d) => {
                let global = self.global(d.name.id, &d.name.text);
                steps.push(Step::Define { global, slots: 0, code: Code::External(d.name.text.clone()) });
            }
            Item::Utest(u) => {
                self.ctxs.push(FnCtx::new(None));
                let utest = self.utest(u);
                let slots = self.ctxs.pop().expect("context pushed").slots as usize;
                steps.push(Step::Utest { slots, utest: Box::new(utest) });
            }
            Item::Type(_) | Item::Con(_) => {}
        }
    }

    fn ctx(&mut self) -> &mut FnCtx {
        self.ctxs.last_mut().expect("inside a function context")
    }

    fn new_slot(&mut self, id: NameId) -> u32 {
        let ctx = self.ctx();
        if let Some(s) = ctx.locals.get(&id) {
            return *s;
        }
        let s = ctx.slots;
        ctx.slots += 1;
        ctx.locals.insert(id, s);
        s
    }

    fn var(&mut self, id: NameId, span: pmx_ast::Span) -> Code {
        if let Some(b) = id.as_builtin() {
            return if builtin_arity(b) == 0 { Code::Prim(b, Box::new([]), span) } else { Code::Builtin(b) };
        }
        if let Some(g) = self.globals.get(&id) {
            return Code::Global(*g);
        }
        let depth = self.ctxs.len() - 1;
        let Some(loc) = self.lookup(depth, id) else { return Code::Error(span) };
        if self.cells.contains(&id) {
            Code::CellGet(Box::new(loc))
        } else {
            loc
        }
    }

    fn lookup(&mut self, depth: usize, id: NameId) -> Option<Code> {
        let ctx = &self.ctxs[depth];
        if let Some(s) = ctx.locals.get(&id) {
            return Some(Code::Local(*s));
        }
        if ctx.self_name == Some(id) {
            return Some(Code::SelfClosure);
        }
        if let Some(i) = ctx.captures.iter().position(|(n, _)| *n == id) {
            return Some(Code::Capture(i as u32));
        }
        if depth == 0 {
            return None;
        }
        let source = match self.lookup(depth - 1, id)? {
            Code::Local(s) => Source::Local(s),
            Code::Capture(i) => Source::Capture(i),
            Code::SelfClosure => Source::SelfClosure,
            _ => return None,
        };
        let ctx = &mut self.ctxs[depth];
        ctx.captures.push((id, source));
        Some(Code::Capture(ctx.captures.len() as u32 - 1))
    }

    /// A bound value: lambdas become named functions.
    fn value(&mut self, e: &Expr, name: &SmolStr, self_name: Option<NameId>) -> Code {
        match &e.kind {
            ExprKind::Lam { .. } => self.lam(e, name.clone(), self_name),
            _ => self.expr(e),
        }
    }

    fn lam(&mut self, e: &Expr, name: SmolStr, self_name: Option<NameId>) -> Code {
        let mut params = Vec::new();
        let mut body = e;
        while let ExprKind::Lam { param, body: b, .. } = &body.kind {
            params.push(param.id);
            body = b;
        }
        let mut ctx = FnCtx::new(self_name);
        for (i, p) in params.iter().enumerate() {
            ctx.locals.insert(*p, i as u32);
        }
        ctx.slots = params.len() as u32;
        self.ctxs.push(ctx);
        let body = self.expr(body);
        let ctx = self.ctxs.pop().expect("context pushed");
        let body = crate::thunk::function_body(body);
        let code = LamCode { name, arity: params.len(), slots: ctx.slots as usize, body, span: e.span };
        let sources: Vec<Source> = ctx.captures.into_iter().map(|(_, s)| s).collect();
        Code::Lam(Arc::new(code), sources.into_boxed_slice())
    }

    fn utest(&mut self, u: &Utest) -> UtestCode {
        UtestCode {
            // The sequence a size-constraint utest is about (one recogniser for
            // every backend: `pmx_accelerate::size`).
            size_constraint: pmx_accelerate::size::size_constraint(u).map(|c| c.seq.text.clone()),
            test: self.expr(&u.test),
            expected: self.expr(&u.expected),
            using: u.using.as_ref().zip(u.using_name()).map(|(e, name)| (self.expr(e), name.to_string())),
            on_fail: u.on_fail.as_ref().map(|e| self.expr(e)),
            span: u.span,
        }
    }

    fn exprs(&mut self, es: &[Expr]) -> Box<[Code]> {
        es.iter().map(|e| self.expr(e)).collect()
    }

    pub fn expr(&mut self, e: &Expr) -> Code {
        match &e.kind {
            ExprKind::Var(name) => self.var(name.id, e.span),
            ExprKind::Lit(lit) => Code::Lit(match lit {
                Lit::Int(i) => Value::Int(*i),
                Lit::Float(f) => Value::Float(*f),
                Lit::Char(c) => Value::Char(*c),
                Lit::Bool(b) => Value::Bool(*b),
                Lit::Str(s) => Value::string(s),
            }),
            ExprKind::Lam { .. } => self.lam(e, SmolStr::new_static("<lambda>"), None),
            ExprKind::Let(b, body) => {
                let value = match &b.value.kind {
                    ExprKind::Seq(items) if only_flattened(b.name.id, body) => Code::Seq(self.exprs(items), None),
                    _ => self.value(&b.value, &b.name.text, None),
                };
                let slot = self.new_slot(b.name.id);
                Code::Let(slot, Box::new(value), Box::new(self.expr(body)))
            }
            ExprKind::RecLets(bindings, body) => {
                let single_fn = bindings.len() == 1 && matches!(bindings[0].value.kind, ExprKind::Lam { .. });
                let slots: Vec<u32> = bindings.iter().map(|b| self.new_slot(b.name.id)).collect();
                let members: Box<[(u32, Code)]> = if single_fn {
                    let b = &bindings[0];
                    Box::new([(slots[0], self.value(&b.value, &b.name.text, Some(b.name.id)))])
                } else {
                    for b in bindings {
                        self.cells.insert(b.name.id);
                    }
                    bindings.iter().zip(&slots).map(|(b, s)| (*s, self.value(&b.value, &b.name.text, None))).collect()
                };
                Code::LetRec { members, cells: !single_fn, body: Box::new(self.expr(body)) }
            }
            ExprKind::App(..) => self.application(e),
            ExprKind::Match { scrutinee, pattern, then, otherwise } => {
                let s = self.expr(scrutinee);
                if let (Code::Bin(op, _, _, _), PatKind::Bool(true)) = (&s, &pattern.kind) {
                    if op.is_comparison() {
                        let Code::Bin(op, x, y, _) = s else { unreachable!("matched above") };
                        let (t, o) = (self.expr(then), self.expr(otherwise));
                        return Code::If(op, Box::new((*x, *y, t, o)));
                    }
                }
                let p = self.pat(pattern);
                Code::Match(Box::new(s), Box::new(p), Box::new(self.expr(then)), Box::new(self.expr(otherwise)))
            }
            ExprKind::Seq(items) => Code::Seq(self.exprs(items), Some(e.span)),
            ExprKind::Record(fields) => {
                let mut fields: Vec<(SmolStr, Code)> =
                    fields.iter().map(|(l, f)| (l.text.clone(), self.expr(f))).collect();
                fields.sort_by(|a, b| pmx_ast::compare_labels(&a.0, &b.0));
                let (labels, codes): (Vec<SmolStr>, Vec<Code>) = fields.into_iter().unzip();
                Code::Record(Arc::from(labels), codes.into_boxed_slice())
            }
            ExprKind::RecordUpdate(record, fields) => {
                let r = self.expr(record);
                let fields = fields.iter().map(|(l, f)| (l.text.clone(), self.expr(f))).collect();
                Code::RecordUpdate(Box::new(r), fields)
            }
            ExprKind::Proj(record, label) => Code::Proj(Box::new(self.expr(record)), label.text.clone()),
            ExprKind::ConApp(con, arg) => Code::ConApp(con.id, con.text.clone(), Box::new(self.expr(arg))),
            ExprKind::Never => Code::Never(e.span),
            ExprKind::Utest(u, body) => Code::Utest(Box::new(self.utest(u)), Box::new(self.expr(body))),
            ExprKind::External(d, body) => {
                let slot = self.new_slot(d.name.id);
                Code::Let(slot, Box::new(Code::External(d.name.text.clone())), Box::new(self.expr(body)))
            }
            ExprKind::TypeDecl(_, body) | ExprKind::ConDecl(_, body) => self.expr(body),
            ExprKind::Error => Code::Error(e.span),
        }
    }

    /// An application spine: saturated built-ins become direct operations.
    fn application(&mut self, e: &Expr) -> Code {
        let (head, args) = pmx_ast::spine::spine(e);
        if let ExprKind::Var(name) = &head.kind {
            if let Some(b) = name.id.as_builtin() {
                if b == Builtin::Accelerate && args.len() == 1 {
                    return self.accelerate(args[0], e.span);
                }
                let arity = builtin_arity(b);
                // The rows of a literal only flattened may differ in
                // length (Futhark code concatenates them).
                if let (Builtin::Flatten, [Expr { kind: ExprKind::Seq(items), .. }]) = (b, args.as_slice()) {
                    let lit = Code::Seq(self.exprs(items), None);
                    return Code::Prim(b, Box::new([lit]), e.span);
                }
                if let (Builtin::TensorGetExn | Builtin::TensorSetExn, ExprKind::Seq(items)) =
                    (b, args.get(1).map(|a| &a.kind).unwrap_or(&ExprKind::Never))
                {
                    // Not where derivatives are taken: the built-in refuses
                    // a dual (`crate::ad`), the direct access would not.
                    if args.len() == arity && !self.float_sets.contains(&e.span) && !self.derivatives {
                        let t = self.expr(args[0]);
                        let index: Box<[Code]> = items.iter().map(|i| self.expr(i)).collect();
                        if b == Builtin::TensorGetExn {
                            return Code::TensorGet(Box::new(t), index, e.span);
                        }
                        let v = self.expr(args[2]);
                        return Code::TensorSet(Box::new((t, v)), index, e.span);
                    }
                }
                if let (Some(op), 2) = (BinOp::from_builtin(b), args.len()) {
                    if self.derivatives && op.reads_floats() {
                        return Code::Prim(b, args.iter().map(|a| self.expr(a)).collect(), e.span);
                    }
                    let (x, y) = (self.expr(args[0]), self.expr(args[1]));
                    return Code::Bin(op, Box::new(x), Box::new(y), e.span);
                }
                if args.len() >= arity && arity > 0 {
                    let prim = Code::Prim(b, args[..arity].iter().map(|a| self.expr(a)).collect(), e.span);
                    if args.len() == arity {
                        return prim;
                    }
                    let rest = args[arity..].iter().map(|a| self.expr(a)).collect();
                    return Code::App(Box::new(prim), rest, e.span);
                }
            }
        }
        let f = self.expr(head);
        let args = args.iter().map(|a| self.expr(a)).collect();
        Code::App(Box::new(f), args, e.span)
    }

    /// `accelerate e`: loads the values its boundary names and runs its
    /// site. Without a description of the site, the body runs in place.
    fn accelerate(&mut self, body: &Expr, span: pmx_ast::Span) -> Code {
        let Some(&site) = self.sites.get(&span) else {
            let body = self.expr(body);
            return Code::Accelerate(Box::new(AccelerateCode {
                site: None,
                args: Box::new([]),
                body: Some(body),
                span,
            }));
        };
        let boundary = &self.boundaries[site as usize];
        let args: Box<[Code]> = if boundary.dummy {
            Box::new([Code::Lit(Value::Int(0))])
        } else {
            let sources: Vec<pmx_ast::Name> = boundary.params.iter().map(|p| p.source.clone()).collect();
            sources.iter().map(|s| self.var(s.id, s.span)).collect()
        };
        Code::Accelerate(Box::new(AccelerateCode { site: Some(site), args, body: None, span }))
    }

    fn pat(&mut self, p: &pmx_ast::Pat) -> Pat {
        match &p.kind {
            PatKind::Wild | PatKind::Error => Pat::Wild,
            PatKind::Bind(name) => Pat::Bind(self.new_slot(name.id)),
            PatKind::Int(i) => Pat::Int(*i),
            PatKind::Char(c) => Pat::Char(*c),
            PatKind::Bool(b) => Pat::Bool(*b),
            PatKind::Con(con, arg) => Pat::Con(con.id, Box::new(self.pat(arg))),
            PatKind::Record(fields) => match record_positions(&p.ty, fields.iter().map(|(l, _)| l.text.as_str())) {
                Some(at) => {
                    Pat::RecordAt(at.into_iter().zip(fields.iter()).map(|(i, (_, f))| (i, self.pat(f))).collect())
                }
                None => Pat::Record(fields.iter().map(|(l, f)| (l.text.clone(), self.pat(f))).collect()),
            },
            PatKind::Seq(items) => Pat::Seq(items.iter().map(|i| self.pat(i)).collect()),
            PatKind::Edge { prefix, middle, suffix } => Pat::Edge(
                prefix.iter().map(|i| self.pat(i)).collect(),
                middle.as_ref().filter(|m| !m.is_anonymous()).map(|m| self.new_slot(m.id)),
                suffix.iter().map(|i| self.pat(i)).collect(),
            ),
            PatKind::And(a, b) => Pat::And(Box::new(self.pat(a)), Box::new(self.pat(b))),
            PatKind::Or(a, b) => Pat::Or(Box::new(self.pat(a)), Box::new(self.pat(b))),
            PatKind::Not(a) => Pat::Not(Box::new(self.pat(a))),
        }
    }
}

/// The positions of `labels` in a value of type `ty` when it is a known
/// record type: records keep their labels sorted by `compare_labels`.
fn record_positions<'a>(ty: &pmx_ast::Ty, labels: impl Iterator<Item = &'a str>) -> Option<Vec<usize>> {
    let pmx_ast::TyKind::Record(fields) = ty.kind() else { return None };
    let mut sorted: Vec<&str> = fields.iter().map(|(l, _)| l.as_str()).collect();
    sorted.sort_by(|a, b| pmx_ast::compare_labels(a, b));
    labels.map(|l| sorted.iter().position(|s| *s == l)).collect()
}

/// Whether every use of the variable `x` in `body` is as the argument of
/// `flatten` (a literal bound to it may then be irregular, as in
/// Futhark-class code, which concatenates its rows).
fn only_flattened(x: NameId, body: &Expr) -> bool {
    fn count(x: NameId, e: &Expr, uses: &mut usize, flattened: &mut usize) {
        match &e.kind {
            ExprKind::Var(n) if n.id == x => *uses += 1,
            ExprKind::App(f, a) => {
                let flatten = matches!(&f.kind, ExprKind::Var(n) if n.id.as_builtin() == Some(Builtin::Flatten));
                if flatten && matches!(&a.kind, ExprKind::Var(n) if n.id == x) {
                    *flattened += 1;
                }
                count(x, f, uses, flattened);
                count(x, a, uses, flattened);
            }
            _ => pmx_ast::visit::children(e, &mut |c| count(x, c, uses, flattened)),
        }
    }
    let (mut uses, mut flattened) = (0, 0);
    count(x, body, &mut uses, &mut flattened);
    uses > 0 && uses == flattened
}
