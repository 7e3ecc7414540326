//! Classification (Figure 6 of the paper): an accelerate binding is
//! Futhark-class when it or a binding it depends on uses `map`, `map2`,
//! `reduce` or `flatten`, or a `foldl` that is a histogram
//! (`rewrite/hist.rs`, issue 30: Futhark's `reduce_by_index`); CUDA-class
//! when `loop`, `seqLoop`, `seqLoopAcc` or `printFloat`; Invalid when
//! both; Any when neither. Each binding is
//! counted once (the set V of the paper), which also handles recursion.
//! Beside the class, it records why: the chain of bindings from the
//! accelerate binding to the use of the keyword that decided it.

use crate::free::free_vars;
use pmx_ast::*;
use rustc_hash::{FxHashMap, FxHashSet};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Backend {
    Futhark,
    Cuda,
}

impl Backend {
    pub fn name(self) -> &'static str {
        match self {
            Backend::Futhark => "Futhark",
            Backend::Cuda => "CUDA",
        }
    }

    pub fn of_keyword(b: Builtin) -> Option<Backend> {
        use Builtin::*;
        match b {
            Map | ParallelMap | Map2 | Reduce | Flatten => Some(Backend::Futhark),
            Loop | SeqLoop | SeqLoopAcc | PrintFloat => Some(Backend::Cuda),
            _ => None,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Class {
    /// No parallel keyword.
    Any,
    /// Nested in another accelerate expression (an error): not classified
    /// on its own, since it is not compiled on its own.
    Nested,
    One(Backend),
    Invalid,
}

/// Why a binding has its class: for each backend found, the bindings
/// passed through (name and span) and the keyword's use.
#[derive(Clone, Debug, PartialEq)]
pub struct Reason {
    pub backend: Backend,
    pub chain: Vec<(SmolStr, Span)>,
    pub keyword: SmolStr,
    pub keyword_span: Span,
}

/// The top-level bindings of a program: what each uses.
pub struct Graph<'a> {
    values: FxHashMap<NameId, (&'a Binding, Vec<NameId>)>,
    histograms: crate::rewrite::hist::Histograms,
}

impl<'a> Graph<'a> {
    pub fn new(program: &'a Expr) -> Graph<'a> {
        let values = crate::chain::bindings(program)
            .map(|b| (b.name.id, (b, free_vars(&b.value).into_iter().map(|f| f.id).collect())))
            .collect();
        Graph { values, histograms: crate::rewrite::hist::Histograms::new(program) }
    }

    /// The bindings and other names the binding `id` uses (none when `id`
    /// is not a top-level binding of the program).
    pub fn deps(&self, id: NameId) -> &[NameId] {
        self.values.get(&id).map_or(&[], |(_, deps)| deps.as_slice())
    }

    /// The bindings reachable from `id` (itself first), each once.
    pub fn reachable(&self, id: NameId) -> Vec<NameId> {
        let mut seen = FxHashSet::default();
        let mut order = Vec::new();
        let mut stack = vec![id];
        while let Some(n) = stack.pop() {
            if !seen.insert(n) {
                continue;
            }
            if let Some((_, deps)) = self.values.get(&n) {
                order.push(n);
                for d in deps.iter().rev() {
                    stack.push(*d);
                }
            }
        }
        order
    }

    /// The class of a binding and the reasons for it (one per backend).
    pub fn classify(&self, id: NameId) -> (Class, Vec<Reason>) {
        let mut reasons: Vec<Reason> = Vec::new();
        // Breadth-first, so that each reason's chain is a shortest one.
        let mut parent: FxHashMap<NameId, NameId> = FxHashMap::default();
        let mut seen = FxHashSet::default();
        let mut queue = std::collections::VecDeque::from([id]);
        seen.insert(id);
        while let Some(n) = queue.pop_front() {
            let Some((b, deps)) = self.values.get(&n) else { continue };
            for (backend, kw, span) in self.keyword_uses(&b.value) {
                if reasons.iter().any(|r| r.backend == backend) {
                    continue;
                }
                let mut chain = Vec::new();
                let mut cur = n;
                loop {
                    let (cb, _) = self.values[&cur];
                    chain.push((cb.name.text.clone(), cb.name.span));
                    match parent.get(&cur) {
                        Some(p) => cur = *p,
                        None => break,
                    }
                }
                chain.reverse();
                reasons.push(Reason { backend, chain, keyword: SmolStr::new(kw), keyword_span: span });
            }
            for d in deps {
                if seen.insert(*d) && self.values.contains_key(d) {
                    parent.insert(*d, n);
                    queue.push_back(*d);
                }
            }
        }
        let class = match reasons.as_slice() {
            [] => Class::Any,
            [r] => Class::One(r.backend),
            _ => Class::Invalid,
        };
        (class, reasons)
    }

    /// The uses of keywords in an expression: built-ins, in source order,
    /// then the histogram folds.
    fn keyword_uses(&self, e: &Expr) -> Vec<(Backend, &'static str, Span)> {
        let mut out = Vec::new();
        walk(e, &mut out);
        let value = |id: NameId| self.values.get(&id).map(|(b, _)| &b.value);
        for span in self.histograms.folds(e, &value) {
            out.push((Backend::Futhark, Builtin::Foldl.name(), span));
        }
        out
    }
}

/// The uses of built-in keywords in an expression, in source order.
fn walk(e: &Expr, out: &mut Vec<(Backend, &'static str, Span)>) {
    if let ExprKind::Var(n) = &e.kind {
        if let Some(b) = n.id.as_builtin() {
            if let Some(backend) = Backend::of_keyword(b) {
                out.push((backend, b.name(), e.span));
            }
        }
    }
    pmx_ast::visit::children(e, &mut |c| walk(c, out));
}
