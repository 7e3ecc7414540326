//! Which code a derivative (`vjp`, `jvp`, `grad`) may run on dual floats:
//! the interpreter compiles it for duals (float operations as calls of the
//! built-ins) and the native host tier leaves it to the interpreter, while
//! the rest of the program keeps machine floats.
//!
//! A derivative runs its function argument. What that may call is what
//! the argument mentions: top-level definitions, and what their
//! definitions mention, transitively (a data definition holding functions
//! counts by what it mentions). Functions that reach the argument through
//! a local variable of a function type (a parameter, a local closure) are
//! not known here: then every part of the program may see duals. So may
//! they where a derivative is used as a value (`let d = grad in ..`).
//! Besides what the arguments reach, each definition, utest and `mexpr`
//! body that holds a derivative is compiled for duals itself (its
//! lambdas are the arguments).

use crate::reach::Liveness;
use crate::{Builtin, Expr, ExprKind, Item, Module, NameId, TyKind};
use rustc_hash::{FxHashMap, FxHashSet};

/// The definitions (by name; `NameId::MAIN` for the `mexpr` body,
/// `NameId::top_utest` for a top-level utest) that may see dual floats.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DualReach {
    /// No derivative in reached code.
    Nothing,
    Only(FxHashSet<NameId>),
    /// Not known: every definition may (the derivative that makes it so).
    Everything(crate::Span),
}

impl DualReach {
    pub fn covers(&self, id: NameId) -> bool {
        match self {
            DualReach::Nothing => false,
            DualReach::Only(ids) => ids.contains(&id),
            DualReach::Everything(_) => true,
        }
    }

    pub fn any(&self) -> bool {
        *self != DualReach::Nothing
    }

    /// What a program's reached code (`live`) lets derivatives run.
    pub fn of(modules: &[&Module], live: &Liveness) -> DualReach {
        // Most programs take no derivative: one walk says so, and nothing
        // is built for them.
        let mut any = false;
        definitions(modules, live, &mut |_, e| any = any || holds_derivative(e));
        if !any {
            return DualReach::Nothing;
        }
        let mut defs: FxHashMap<NameId, Vec<&Expr>> = FxHashMap::default();
        definitions(modules, live, &mut |id, e| defs.entry(id).or_default().push(e));
        // Every top-level name (externals too, whose rules see duals).
        let mut tops: FxHashSet<NameId> = FxHashSet::default();
        for item in modules.iter().flat_map(|m| &m.items) {
            match item {
                Item::Let(b) => tops.extend([b.name.id]),
                Item::RecLets(bs, _) => tops.extend(bs.iter().map(|b| b.name.id)),
                Item::External(d) => tops.extend([d.name.id]),
                _ => {}
            }
        }
        let mut reached: FxHashSet<NameId> = FxHashSet::default();
        let mut work: Vec<NameId> = Vec::new();
        for (id, exprs) in &defs {
            let mut uses = Uses { tops: &tops, found: false, mentioned: Vec::new(), unknown: None };
            exprs.iter().for_each(|e| uses.expr(e));
            if let Some(at) = uses.unknown {
                return DualReach::Everything(at);
            }
            if uses.found {
                reached.insert(*id);
                work.extend(uses.mentioned);
            }
        }
        // What the arguments mention, through definitions, to a fixpoint:
        // each definition they reach is walked once, even one that holds
        // a derivative itself (all of it then runs on duals).
        let mut walked: FxHashSet<NameId> = FxHashSet::default();
        while let Some(id) = work.pop() {
            let Some(exprs) = defs.get(&id) else { continue };
            if !walked.insert(id) {
                continue;
            }
            reached.insert(id);
            for e in exprs {
                let mut stack = vec![*e];
                while let Some(e) = stack.pop() {
                    if let ExprKind::Var(n) = &e.kind {
                        if defs.contains_key(&n.id) && !walked.contains(&n.id) {
                            work.push(n.id);
                        }
                    }
                    crate::visit::children(e, &mut |c| stack.push(c));
                }
            }
        }
        DualReach::Only(reached)
    }
}

/// Each reached definition's expressions, with the name it binds, every
/// top-level utest's (`NameId::top_utest`) and the `mexpr` body's
/// (`NameId::MAIN`).
fn definitions<'m>(modules: &'m [&'m Module], live: &Liveness, each: &mut impl FnMut(NameId, &'m Expr)) {
    for (mi, module) in modules.iter().enumerate() {
        for (ii, item) in module.items.iter().enumerate() {
            match item {
                _ if live.is_dead(mi, ii) => {}
                Item::Let(b) => each(b.name.id, &b.value),
                Item::RecLets(bs, _) => bs.iter().for_each(|b| each(b.name.id, &b.value)),
                _ => {}
            }
        }
    }
    for (_, id, u) in crate::top_utests(modules) {
        for e in [Some(&u.test), Some(&u.expected), u.using.as_ref(), u.on_fail.as_ref()].into_iter().flatten() {
            each(id, e);
        }
    }
    if let Some(main) = modules.last().and_then(|m| m.main.as_ref()) {
        each(NameId::MAIN, main);
    }
}

/// Whether an expression uses a derivative.
fn holds_derivative(e: &Expr) -> bool {
    // An explicit stack: expressions nest as deep as programs do.
    let mut stack = vec![e];
    while let Some(e) = stack.pop() {
        if let ExprKind::Var(n) = &e.kind {
            if n.id.as_builtin().is_some_and(Builtin::is_derivative) {
                return true;
            }
        }
        crate::visit::children(e, &mut |c| stack.push(c));
    }
    false
}

/// The derivatives in one definition.
struct Uses<'a> {
    tops: &'a FxHashSet<NameId>,
    /// It holds one.
    found: bool,
    /// Top-level names the function arguments mention.
    mentioned: Vec<NameId>,
    /// A function argument reaches a function value not known here (that
    /// derivative).
    unknown: Option<crate::Span>,
}

impl Uses<'_> {
    fn expr(&mut self, e: &Expr) {
        let mut stack = vec![e];
        while let Some(e) = stack.pop() {
            let (head, args) = crate::spine::spine(e);
            if let ExprKind::Var(n) = &head.kind {
                if n.id.as_builtin().is_some_and(Builtin::is_derivative) {
                    self.found = true;
                    match args.first() {
                        Some(f) if self.known(f) => {}
                        _ => self.unknown = Some(e.span),
                    }
                }
            }
            if matches!(e.kind, ExprKind::App(..)) {
                // The spine's parts, not the application nodes again.
                stack.extend(args);
                if !matches!(&head.kind, ExprKind::Var(_)) {
                    stack.push(head);
                }
            } else {
                crate::visit::children(e, &mut |c| stack.push(c));
            }
        }
    }

    /// A derivative's function argument: notes the top-level names it
    /// mentions; whether it is known (no free local variable of it holds
    /// functions).
    fn known(&mut self, f: &Expr) -> bool {
        let mut known = true;
        for v in crate::visit::free_vars(f) {
            if self.tops.contains(&v.id) {
                self.mentioned.push(v.id);
            } else if holds_functions(&v.ty) {
                known = false;
            }
        }
        known
    }
}

/// Whether values of type `t` may hold a function (an unknown type may).
fn holds_functions(t: &crate::Ty) -> bool {
    match t.kind() {
        TyKind::Arrow(..) | TyKind::Unknown | TyKind::Var(_) | TyKind::Meta(_) | TyKind::Con(..) | TyKind::App(..) => {
            true
        }
        TyKind::Int | TyKind::Float | TyKind::Bool | TyKind::Char => false,
        TyKind::Seq(e) | TyKind::Tensor(e) => holds_functions(e),
        TyKind::Record(fields) => fields.iter().any(|(_, f)| holds_functions(f)),
        TyKind::All(_, _, body) => holds_functions(body),
    }
}
