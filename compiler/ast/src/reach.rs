//! Which top-level definitions a program reaches, as Miking's dead-code
//! elimination decides it (`deadcode.ml`): Miking drops every unused `let`,
//! `recursive` group and `external` before checking and running, so a
//! library may hold an unused definition that does not type-check, or an
//! unused `let x = never`. pmx checks everything, then reports errors in
//! unreached definitions as warnings (the driver) and does not evaluate
//! those definitions (the CPU backend).
//!
//! Roots: the `mexpr` body of the program's main file (the last module),
//! every `utest`, and every definition whose evaluation may have an effect
//! and is not a function (its type is not an arrow: a partial application
//! does nothing until called). A definition may have an effect when it
//! mentions, anywhere, a built-in with an effect (input and output, `error`,
//! `exit`, references, tensors, random numbers, time, symbols), an
//! `external` declared with `!`, or a definition that may have an effect;
//! `never` has none. What the roots mention is reached, transitively. Type,
//! constructor and utest declarations are always kept.

use crate::{Builtin, Expr, ExprKind, Item, Module, NameId, TyKind};
use rustc_hash::{FxHashMap, FxHashSet};

/// The top-level items of a program that nothing reaches.
#[derive(Clone, Debug, Default)]
pub struct Liveness {
    /// Per module (in the order given), per item: unreached.
    dead: Vec<Vec<bool>>,
}

/// A definition: the items are nodes, edges are mentions.
struct Node {
    refs: Vec<NameId>,
    effect: bool,
    /// Evaluating it at the top level may do something by itself.
    root_if_effect: bool,
}

impl Liveness {
    /// Decides which items of `modules` (in load order, the main file last)
    /// are reached.
    pub fn of(modules: &[&Module]) -> Liveness {
        Liveness::of_run(modules, |_| true)
    }

    /// [`Liveness::of`] for one run, whose utests that `runs` accepts
    /// (by their span) are roots and the others not: what that run may
    /// reach (the native host tier compiles no more).
    pub fn of_run(modules: &[&Module], runs: impl Fn(crate::Span) -> bool) -> Liveness {
        let mut nodes: Vec<Node> = Vec::new();
        let mut place: Vec<(usize, usize)> = Vec::new();
        let mut node_of: FxHashMap<NameId, usize> = FxHashMap::default();
        let mut roots: FxHashSet<NameId> = FxHashSet::default();
        let mut root_nodes: Vec<usize> = Vec::new();
        for (mi, module) in modules.iter().enumerate() {
            for (ii, item) in module.items.iter().enumerate() {
                let mut mentions = Mentions::default();
                let (names, root_if_effect, effect) = match item {
                    Item::Let(b) => {
                        mentions.expr(&b.value);
                        (vec![b.name.id], !is_function(&b.value), false)
                    }
                    Item::RecLets(bs, _) => {
                        bs.iter().for_each(|b| mentions.expr(&b.value));
                        let root = bs.iter().any(|b| !is_function(&b.value));
                        (bs.iter().map(|b| b.name.id).collect(), root, false)
                    }
                    Item::External(d) => (vec![d.name.id], false, d.effect),
                    Item::Utest(u) if !runs(u.span) => continue,
                    Item::Utest(u) => {
                        let mut m = Mentions::default();
                        m.expr(&u.test);
                        m.expr(&u.expected);
                        u.using.iter().chain(u.on_fail.iter()).for_each(|e| m.expr(e));
                        roots.extend(m.names);
                        continue;
                    }
                    Item::Type(_) | Item::Con(_) => continue,
                };
                let n = nodes.len();
                for id in names {
                    node_of.insert(id, n);
                }
                nodes.push(Node {
                    refs: mentions.names.into_iter().collect(),
                    effect: effect || mentions.effect,
                    root_if_effect,
                });
                place.push((mi, ii));
            }
        }
        if let Some(main) = modules.last().and_then(|m| m.main.as_ref()) {
            let mut m = Mentions::default();
            m.expr(main);
            roots.extend(m.names);
        }
        // Effects flow from a definition to those that mention it.
        let mut users: Vec<Vec<usize>> = vec![Vec::new(); nodes.len()];
        for (n, node) in nodes.iter().enumerate() {
            for r in &node.refs {
                if let Some(&m) = node_of.get(r) {
                    users[m].push(n);
                }
            }
        }
        let mut work: Vec<usize> = (0..nodes.len()).filter(|&n| nodes[n].effect).collect();
        while let Some(n) = work.pop() {
            for &u in &users[n] {
                if !nodes[u].effect {
                    nodes[u].effect = true;
                    work.push(u);
                }
            }
        }
        root_nodes.extend((0..nodes.len()).filter(|&n| nodes[n].effect && nodes[n].root_if_effect));
        root_nodes.extend(roots.iter().filter_map(|r| node_of.get(r).copied()));
        let mut live = vec![false; nodes.len()];
        while let Some(n) = root_nodes.pop() {
            if std::mem::replace(&mut live[n], true) {
                continue;
            }
            root_nodes.extend(nodes[n].refs.iter().filter_map(|r| node_of.get(r).copied()));
        }
        let mut dead: Vec<Vec<bool>> = modules.iter().map(|m| vec![false; m.items.len()]).collect();
        for (n, (mi, ii)) in place.into_iter().enumerate() {
            dead[mi][ii] = !live[n];
        }
        Liveness { dead }
    }

    /// Whether item `item` of module `module` is unreached.
    pub fn is_dead(&self, module: usize, item: usize) -> bool {
        self.dead.get(module).and_then(|m| m.get(item)).copied().unwrap_or(false)
    }
}

/// A function value: evaluating it does nothing until it is called.
fn is_function(e: &Expr) -> bool {
    matches!(e.kind, ExprKind::Lam { .. }) || matches!(e.ty.kind(), TyKind::Arrow(..))
}

/// The names an expression mentions, and whether it mentions a built-in
/// with an effect.
#[derive(Default)]
struct Mentions {
    names: FxHashSet<NameId>,
    effect: bool,
}

impl Mentions {
    fn expr(&mut self, e: &Expr) {
        // An explicit stack: definitions nest as deep as programs do.
        let mut stack = vec![e];
        while let Some(e) = stack.pop() {
            if let ExprKind::Var(n) = &e.kind {
                match n.id.as_builtin() {
                    Some(b) => self.effect |= has_effect(b),
                    None => {
                        self.names.insert(n.id);
                    }
                }
            }
            crate::visit::children(e, &mut |c| stack.push(c));
        }
    }
}

/// Built-ins whose evaluation may do more than compute a value (Miking's
/// `const_has_side_effect`): those below and every tensor built-in.
fn has_effect(b: Builtin) -> bool {
    use Builtin::*;
    b.is_tensor()
        || matches!(
            b,
            Print
                | PrintError
                | Dprint
                | PrintFloat
                | FlushStdout
                | FlushStderr
                | ReadLine
                | ReadBytesAsString
                | ReadFile
                | WriteFile
                | FileExists
                | DeleteFile
                | Command
                | Exit
                | Error
                | RandIntU
                | RandSetSeed
                | WallTimeMs
                | SleepMs
                | Ref
                | Deref
                | Modref
                | Gensym
                | Eqsym
                | Sym2hash
                | ConstructorTag
        )
}
