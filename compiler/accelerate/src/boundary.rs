//! The boundary description: what crosses one `accelerate`. The middle end
//! makes one per accelerate binding and everyone else reads it: the CPU
//! runtime (which values to load at the site, the debug checks on them,
//! the dispatch by binding id), marshaling, both code generators, and
//! `pmx explain` (which renders it at the edge). Nothing re-derives it.

use crate::chain;
use crate::classify::Class;
use crate::free::lambdas;
use crate::size::{length_of, size_constraint};
use crate::Passing;
use pmx_ast::spine::spine;
use pmx_ast::*;
use rustc_hash::{FxHashMap, FxHashSet};

/// One accelerate binding as seen from outside.
#[derive(Clone, Debug, PartialEq)]
pub struct Boundary {
    /// The accelerate binding's identity: sites, engines and generated
    /// entry points are keyed by it.
    pub id: NameId,
    /// Its name in emitted programs (`accelerate1`, ...).
    pub name: SmolStr,
    /// The `accelerate e` expression.
    pub span: Span,
    /// The backend that compiles it (`Class::One`), or why none does.
    pub class: Class,
    /// The values that cross into it, in the order the binding takes them.
    pub params: Vec<BoundaryParam>,
    /// It uses no data from outside: the binding takes one dummy `Int`,
    /// which is not a parameter here.
    pub dummy: bool,
    /// Size equalities the binding relies on that can be stated in terms
    /// of its parameters (each parameter lists those that mention it).
    pub sizes: Vec<SizeConstraint>,
    pub result: BoundaryResult,
}

/// One value that crosses into an accelerate binding.
#[derive(Clone, Debug, PartialEq)]
pub struct BoundaryParam {
    /// The binding's parameter.
    pub name: Name,
    pub ty: Ty,
    /// The variable passed for it at the `accelerate` (in the program as
    /// written: the runtime loads it there).
    pub source: Name,
    /// How it is passed in and back (copy analysis).
    pub passing: Passing,
    /// Whether the binding may write it (a tensor in it, through any view).
    pub written: bool,
    /// The indices in [`Boundary::sizes`] of the constraints mentioning it.
    pub sizes: Vec<usize>,
}

/// How the result comes back.
#[derive(Clone, Debug, PartialEq)]
pub struct BoundaryResult {
    pub ty: Ty,
    /// Always a value made by the binding: `Value` for scalars and records
    /// of scalars, `CopyOut` when it holds sequences or tensors.
    pub passing: Passing,
}

/// A size equality stated by a `utest` in accelerated code.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SizeConstraint {
    /// The utest that states it.
    pub span: Span,
    pub lhs: Size,
    pub rhs: Size,
}

/// One side of a size equality, in terms of the binding's parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Size {
    /// The length of dimension `depth` of sequence parameter `param`.
    Dim {
        param: usize,
        depth: usize,
    },
    /// The value of `Int` parameter `param`.
    Param(usize),
    Lit(i64),
}

impl Size {
    fn params(self) -> Option<usize> {
        match self {
            Size::Dim { param, .. } | Size::Param(param) => Some(param),
            Size::Lit(_) => None,
        }
    }
}

impl Boundary {
    /// The constraints that mention parameter `i`.
    pub fn constraints_of(&self, i: usize) -> impl Iterator<Item = &SizeConstraint> {
        self.params[i].sizes.iter().map(|k| &self.sizes[*k])
    }

    /// The backend that compiles it, if it is well classified.
    pub fn backend(&self) -> Option<crate::Backend> {
        match self.class {
            Class::One(b) => Some(b),
            _ => None,
        }
    }
}

impl BoundaryResult {
    pub fn of(ty: &Ty, variants: &crate::variants::Variants) -> BoundaryResult {
        let passing = match crate::copy::passing(ty, true, variants) {
            Passing::Value | Passing::None => Passing::Value,
            _ => Passing::CopyOut,
        };
        BoundaryResult { ty: ty.clone(), passing }
    }
}

/// The size constraints an accelerate binding surely checks before it
/// returns, in terms of its parameters: utests on the path every call
/// takes (its body's `let`s and utests, and the bodies of the functions it
/// calls with all their arguments there), not those under a branch, a
/// lambda or a parallel keyword's function.
pub fn size_constraints(program: &Expr, binding: NameId, params: &[NameId]) -> Vec<SizeConstraint> {
    let functions: FxHashMap<NameId, &Binding> = chain::bindings(program).map(|b| (b.name.id, b)).collect();
    let Some(b) = functions.get(&binding) else { return Vec::new() };
    let (lams, body) = lambdas(&b.value);
    let env: FxHashMap<NameId, usize> = lams.iter().zip(params).enumerate().map(|(i, (l, _))| (*l, i)).collect();
    let mut found = Sizes { functions: &functions, out: Vec::new(), entered: FxHashSet::default(), calls: 1000 };
    found.expr(body, &env);
    let mut seen = FxHashSet::default();
    found.out.retain(|c| seen.insert(c.clone()));
    found.out
}

struct Sizes<'a> {
    functions: &'a FxHashMap<NameId, &'a Binding>,
    out: Vec<SizeConstraint>,
    /// The functions being followed (the call path).
    entered: FxHashSet<NameId>,
    /// How many more calls may be followed.
    calls: usize,
}

impl Sizes<'_> {
    fn size(&self, e: &Expr, env: &FxHashMap<NameId, usize>) -> Option<Size> {
        if let Some((seq, depth)) = length_of(e) {
            return env.get(&seq.id).map(|p| Size::Dim { param: *p, depth });
        }
        match &e.kind {
            ExprKind::Lit(Lit::Int(n)) => Some(Size::Lit(*n)),
            ExprKind::Var(v) => env.get(&v.id).map(|p| Size::Param(*p)),
            _ => None,
        }
    }

    /// Follows what every evaluation of `e` evaluates.
    fn expr(&mut self, e: &Expr, env: &FxHashMap<NameId, usize>) {
        match &e.kind {
            ExprKind::Let(b, rest) => {
                self.expr(&b.value, env);
                // `let y = x` renames a parameter.
                let mut env = env.clone();
                if let ExprKind::Var(v) = &b.value.kind {
                    if let Some(p) = env.get(&v.id).copied() {
                        env.insert(b.name.id, p);
                    }
                }
                self.expr(rest, &env);
            }
            ExprKind::Utest(u, rest) => {
                if let Some(c) = size_constraint(u) {
                    let lhs = env.get(&c.seq.id).map(|p| Size::Dim { param: *p, depth: c.dim });
                    if let (Some(lhs), Some(rhs)) = (lhs, self.size(c.size, env)) {
                        self.out.push(SizeConstraint { span: u.span, lhs, rhs });
                    }
                }
                self.expr(rest, env);
            }
            ExprKind::App(..) => {
                let (head, args) = spine(e);
                args.iter().for_each(|a| self.expr(a, env));
                let ExprKind::Var(f) = &head.kind else { return };
                if f.id.as_builtin() == Some(Builtin::Accelerate) {
                    return;
                }
                let Some(callee) = self.functions.get(&f.id) else { return };
                let (params, body) = lambdas(&callee.value);
                // Recursion is not followed into again, and a program that
                // calls many functions from many places stops being followed
                // after a while (the constraints found are still sound).
                if params.len() != args.len() || self.calls == 0 || !self.entered.insert(f.id) {
                    return;
                }
                self.calls -= 1;
                let inner: FxHashMap<NameId, usize> = params
                    .iter()
                    .zip(&args)
                    .filter_map(|(p, a)| match &a.kind {
                        ExprKind::Var(v) => env.get(&v.id).map(|i| (*p, *i)),
                        _ => None,
                    })
                    .collect();
                if !inner.is_empty() {
                    self.expr(body, &inner);
                }
                self.entered.remove(&f.id);
            }
            ExprKind::Record(fields) => fields.iter().for_each(|(_, f)| self.expr(f, env)),
            ExprKind::Seq(items) => items.iter().for_each(|i| self.expr(i, env)),
            ExprKind::Proj(r, _) | ExprKind::ConApp(_, r) => self.expr(r, env),
            ExprKind::Match { scrutinee, .. } => self.expr(scrutinee, env),
            _ => {}
        }
    }
}

/// Attaches each constraint to the parameters it mentions.
pub fn index_sizes(params: &mut [BoundaryParam], sizes: &[SizeConstraint]) {
    for (k, c) in sizes.iter().enumerate() {
        for p in [c.lhs.params(), c.rhs.params()].into_iter().flatten() {
            if let Some(param) = params.get_mut(p) {
                if !param.sizes.contains(&k) {
                    param.sizes.push(k);
                }
            }
        }
    }
}
