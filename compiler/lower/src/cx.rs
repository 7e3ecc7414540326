//! What the lowering knows while it lowers one function or entry: the
//! substitution it is specialised at, what each MExpr variable in scope
//! stands for, and the names already given to its variables.

use crate::ir::{Atom, Callee, VarId};
use crate::subst::Subst;
use pmx_ast::{NameId, SmolStr, Ty};
use rustc_hash::{FxHashMap, FxHashSet};

/// A function value known while lowering: a callee applied to some
/// arguments. It only exists at lowering time; the IR gets a call when it
/// is applied to all its arguments, or a [`crate::ir::FunRef`] where a
/// keyword takes it.
#[derive(Clone, Debug)]
pub(crate) struct FunVal {
    pub callee: Callee,
    pub args: Vec<Arg>,
    /// The type of what is left to apply (the substitution applied).
    pub ty: Ty,
}

/// An argument of a function value: data, or a function (given to a
/// keyword: `map (map f)`).
#[derive(Clone, Debug)]
pub(crate) enum Arg {
    Atom(Atom),
    Fun(FunVal),
}

impl FunVal {
    /// The variables its arguments use, each once, in order.
    pub fn vars(&self, out: &mut Vec<crate::ir::Var>) {
        for a in &self.args {
            match a {
                Arg::Atom(Atom::Var(v)) => {
                    if !out.iter().any(|o| o.id == v.id) {
                        out.push(v.clone());
                    }
                }
                Arg::Atom(Atom::Lit(_)) => {}
                Arg::Fun(f) => f.vars(out),
            }
        }
    }

    /// The same function value with its variables replaced.
    pub fn renamed(&self, map: &FxHashMap<VarId, crate::ir::Var>) -> FunVal {
        let args = self
            .args
            .iter()
            .map(|a| match a {
                Arg::Atom(Atom::Var(v)) => Arg::Atom(Atom::Var(map.get(&v.id).cloned().unwrap_or_else(|| v.clone()))),
                Arg::Atom(l) => Arg::Atom(l.clone()),
                Arg::Fun(f) => Arg::Fun(f.renamed(map)),
            })
            .collect();
        FunVal { callee: self.callee, args, ty: self.ty.clone() }
    }
}

/// What an MExpr variable stands for.
#[derive(Clone, Debug)]
pub(crate) enum Bound {
    Value(Atom),
    Fun(FunVal),
    /// A `let` of a polymorphic value (`let e = [] in`, generalised):
    /// lowered again at each use, at that use's instance, since the IR's
    /// types are concrete.
    Poly(std::rc::Rc<pmx_ast::Binding>),
}

pub(crate) struct Cx {
    pub subst: Subst,
    /// The MExpr name of the function being lowered (lifted lambdas are
    /// named after it).
    pub source: SmolStr,
    env: FxHashMap<NameId, Bound>,
    /// Previous meanings, to restore when a scope closes.
    undo: Vec<(NameId, Option<Bound>)>,
    names: FxHashSet<SmolStr>,
    /// Variables made for intermediate values: a `let` may give them its
    /// name.
    pub temps: FxHashSet<VarId>,
}

impl Cx {
    pub fn new(subst: Subst, source: SmolStr) -> Cx {
        Cx {
            subst,
            source,
            env: FxHashMap::default(),
            undo: Vec::new(),
            names: FxHashSet::default(),
            temps: FxHashSet::default(),
        }
    }

    pub fn get(&self, id: NameId) -> Option<&Bound> {
        self.env.get(&id)
    }

    pub fn bind(&mut self, id: NameId, b: Bound) {
        let old = self.env.insert(id, b);
        self.undo.push((id, old));
    }

    /// Where the scope is now, for [`Cx::close`].
    pub fn mark(&self) -> usize {
        self.undo.len()
    }

    /// Forgets what was bound since `mark` (a branch's bindings, or a size
    /// coercion's, do not reach past the branch).
    pub fn close(&mut self, mark: usize) {
        while self.undo.len() > mark {
            let (id, old) = self.undo.pop().expect("longer than mark");
            match old {
                Some(b) => self.env.insert(id, b),
                None => self.env.remove(&id),
            };
        }
    }

    /// Makes a name free again (a temporary renamed after a `let`).
    pub fn forget(&mut self, name: &str) {
        self.names.remove(name);
    }

    /// A name not yet used in this function, from a hint.
    pub fn name(&mut self, hint: &str) -> SmolStr {
        let base: String = hint.chars().filter(|c| c.is_alphanumeric() || *c == '_').collect();
        let base = if base.is_empty() { "_".to_string() } else { base };
        if self.names.insert(SmolStr::new(&base)) {
            return SmolStr::new(base);
        }
        (1..)
            .map(|i| SmolStr::new(format!("{base}_{i}")))
            .find(|n| self.names.insert(n.clone()))
            .expect("some suffix is free")
    }
}
