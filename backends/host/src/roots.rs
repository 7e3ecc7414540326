//! The top-level functions the tier tries to compile: definitions the
//! run reaches (Miking's dead-code elimination, with only the utests
//! that run as roots), bound to a
//! lambda, of a monomorphic type whose parameters and result are scalars,
//! or sequences and records of them (what the entries exchange with the
//! interpreter today). A polymorphic
//! function is compiled where a compiled function uses it, at that type.

use pmx_ast::reach::Liveness;
use pmx_ast::{ExprKind, Item, Module, NameId, SmolStr, Span, Ty, TyKind};

pub struct Root {
    pub id: NameId,
    pub name: SmolStr,
    pub span: Span,
    /// How many arguments its type takes.
    pub arity: usize,
}

pub struct Candidates {
    pub roots: Vec<Root>,
    /// Functions refused on their type alone (by binding; `None` for
    /// the whole program), with the reason.
    pub refused: Vec<(Option<NameId>, SmolStr, String, Span)>,
}

/// `live`: what the run reaches (`Liveness::of_run`).
pub fn candidates(modules: &[&Module], live: &Liveness, utests: &dyn Fn(Span) -> bool) -> Candidates {
    let mut out = Candidates { roots: Vec::new(), refused: Vec::new() };
    // After `unsafeCoerce`, a value may not have the type native code
    // reads it at (the interpreter reports that; machine code could not).
    if let Some(span) = coerces(modules) {
        out.refused.push((
            None,
            "unsafeCoerce".into(),
            "the program uses `unsafeCoerce`: no host code is compiled".into(),
            span,
        ));
        return out;
    }
    // A derivative runs code on dual floats (`pmx_cpu::ad`), which native
    // code, keeping floats as machine numbers, would not see: what it may
    // run is left to the interpreter (`DualReach`).
    let duals = pmx_ast::derivatives::DualReach::of(modules, live);
    if let pmx_ast::derivatives::DualReach::Everything(at) = duals {
        let why = "the functions this derivative runs are not known before the program runs, and \
                   derivatives run only in the interpreter: no host code is compiled";
        out.refused.push((None, "the whole program".into(), why.into(), at));
        return out;
    }
    // A utest that runs: a function of no parameters.
    for (id, u) in top_utests(modules, live).filter(|(_, u)| utests(u.span)) {
        out.roots.push(Root { id, name: "utest".into(), span: u.span, arity: 0 });
    }
    for item in live_items(modules, live) {
        for b in bindings(item) {
            // A top-level value (of a recursive group: never computed
            // there) is one only for the interpreter.
            if !matches!(b.value.kind, ExprKind::Lam { .. }) && !matches!(item, Item::Let(_)) {
                continue;
            }
            // A value is computed by a function of no parameters, whose
            // result the interpreter stores (`Step::NativeDefine`).
            let arity = pmx_lower::host_arity(&b.value, b.scheme.strip_foralls());
            match why_not(&b.scheme) {
                None => out.roots.push(Root { id: b.name.id, name: b.name.text.clone(), span: b.span, arity }),
                Some(why) => out.refused.push((Some(b.name.id), b.name.text.clone(), why, b.span)),
            }
        }
    }
    // The `mexpr` body: a function of no parameters, whose value the
    // interpreter drops.
    if let Some(main) = modules.last().and_then(|m| m.main.as_ref()) {
        out.roots.push(Root { id: NameId::MAIN, name: "mexpr".into(), span: main.span, arity: 0 });
    }
    let (dual, roots): (Vec<Root>, Vec<Root>) =
        std::mem::take(&mut out.roots).into_iter().partition(|r| duals.covers(r.id));
    out.roots = roots;
    for r in dual {
        let why = "a derivative may run it on dual floats, which only the interpreter does".to_string();
        out.refused.push((Some(r.id), r.name, why, r.span));
    }
    out
}

/// What an entry exchanges with the interpreter: scalars, and sequences
/// and records of them (which native code borrows).
fn scalar(t: &Ty) -> bool {
    match t.kind() {
        TyKind::Int | TyKind::Float | TyKind::Bool | TyKind::Char => true,
        TyKind::Record(fields) => fields.iter().all(|(_, f)| scalar(f)),
        TyKind::Seq(e) | TyKind::Tensor(e) => scalar(e),
        // A function value: the interpreter's, passed by pointer.
        TyKind::Arrow(a, r) => scalar(a) && scalar(r),
        // A variant type (the lowering decides whether its payloads
        // are), or a reference or symbol (the interpreter's, by pointer).
        TyKind::Con(_, _, args) => args.iter().all(scalar),
        _ => false,
    }
}

/// Why a function of type `scheme` is not a candidate.
fn why_not(scheme: &Ty) -> Option<String> {
    if !std::ptr::eq(scheme.strip_foralls(), scheme) {
        return Some("it is polymorphic".into());
    }
    let mut t = scheme;
    while let Some((param, result)) = t.as_arrow() {
        if !scalar(param) {
            return Some("it takes a value that is not a scalar, sequence or record".into());
        }
        t = result;
    }
    (!scalar(t)).then(|| "it returns a value that is not a scalar, sequence or record".into())
}

/// Where the program first uses `unsafeCoerce`, if it does.
fn coerces(modules: &[&Module]) -> Option<Span> {
    fn find(e: &pmx_ast::Expr) -> Option<Span> {
        if let ExprKind::Var(n) = &e.kind {
            if n.id.as_builtin() == Some(pmx_ast::Builtin::UnsafeCoerce) {
                return Some(e.span);
            }
        }
        let mut found = None;
        pmx_ast::visit::children(e, &mut |c| {
            if found.is_none() {
                found = find(c);
            }
        });
        found
    }
    let exprs = modules.iter().flat_map(|m| {
        m.items
            .iter()
            .flat_map(|item| -> Vec<&pmx_ast::Expr> {
                match item {
                    Item::Let(b) => vec![&b.value],
                    Item::RecLets(bs, _) => bs.iter().map(|b| &b.value).collect(),
                    Item::Utest(u) => {
                        [&u.test, &u.expected].into_iter().chain(u.using.iter()).chain(u.on_fail.iter()).collect()
                    }
                    _ => Vec::new(),
                }
            })
            .chain(m.main.iter())
    });
    for e in exprs {
        if let Some(s) = find(e) {
            return Some(s);
        }
    }
    None
}

/// The top-level bindings that code the interpreter runs uses: the
/// `mexpr` body unless it is `compiled`, the utests that run, top-level
/// values, the functions in `interpreted`, and, through their bodies, the
/// bindings these use that are not compiled. A function refused here runs
/// in the interpreter only if it is one of them (compiled code uses its
/// own instances of a polymorphic function).
pub fn used_by_interpreter(
    modules: &[&Module],
    live: &Liveness,
    utests: &dyn Fn(Span) -> bool,
    compiled: &rustc_hash::FxHashSet<NameId>,
    interpreted: &[NameId],
) -> rustc_hash::FxHashSet<NameId> {
    let mut bodies: rustc_hash::FxHashMap<NameId, &pmx_ast::Expr> = Default::default();
    let mut work: Vec<&pmx_ast::Expr> = Vec::new();
    for (id, u) in top_utests(modules, live) {
        if utests(u.span) && !compiled.contains(&id) {
            work.extend([&u.test, &u.expected].into_iter().chain(u.using.iter()).chain(u.on_fail.iter()));
        }
    }
    for item in live_items(modules, live) {
        for b in bindings(item) {
            bodies.insert(b.name.id, &b.value);
            // The interpreter computes a top-level value when it defines
            // it; an alias (`let sort = quickSort`) computes nothing, and
            // what it names runs in the interpreter only if interpreted
            // code uses the alias.
            let computes = !matches!(b.value.kind, ExprKind::Lam { .. } | ExprKind::Var(_));
            if computes && !compiled.contains(&b.name.id) {
                work.push(&b.value);
            }
        }
    }
    if !compiled.contains(&NameId::MAIN) {
        work.extend(modules.last().and_then(|m| m.main.as_ref()));
    }
    let mut used: rustc_hash::FxHashSet<NameId> = interpreted.iter().copied().collect();
    work.extend(interpreted.iter().filter_map(|id| bodies.get(id).copied()));
    while let Some(e) = work.pop() {
        for v in pmx_ast::visit::free_vars(e) {
            if compiled.contains(&v.id) || !used.insert(v.id) {
                continue;
            }
            work.extend(bodies.get(&v.id).copied());
        }
    }
    used
}

/// The top-level utests a run reaches, each with its identity
/// (`pmx_ast::top_utests`).
fn top_utests<'a>(
    modules: &'a [&'a Module],
    live: &'a Liveness,
) -> impl Iterator<Item = (NameId, &'a pmx_ast::Utest)> + 'a {
    pmx_ast::top_utests(modules).filter(|((mi, ii), ..)| !live.is_dead(*mi, *ii)).map(|(_, id, u)| (id, u))
}

/// The items of the modules that a run reaches.
fn live_items<'a>(modules: &'a [&'a Module], live: &'a Liveness) -> impl Iterator<Item = &'a Item> + 'a {
    modules.iter().enumerate().flat_map(move |(mi, m)| {
        m.items.iter().enumerate().filter(move |(ii, _)| !live.is_dead(mi, *ii)).map(|(_, item)| item)
    })
}

/// The bindings an item declares.
pub fn bindings(item: &Item) -> &[pmx_ast::Binding] {
    match item {
        Item::Let(b) => std::slice::from_ref(b),
        Item::RecLets(bs, _) => &bs[..],
        _ => &[],
    }
}
