//! Host code's `accelerate`: a call of the engine its binding runs on
//! (`Expr::Accelerate`), given the values the boundary names.
//!
//! Two lambda liftings meet here. The boundary (`pmx_accelerate::Boundary`)
//! comes from the accelerate passes' lifting, where every function
//! captures the values it reads; host code is lifted on its own
//! (`lift_with`, top-level values read in place), so there the
//! expression sits alone in a binding of that lifting, whose parameters
//! are passed the variables it uses. Both name each parameter by the
//! variable passed for it at the `accelerate` (its `source`), which is
//! how they are matched: a boundary parameter is read as the host
//! binding's parameter passed the same variable, or, where the host's
//! lifting passed none (a top-level value that a lifted function reads
//! in place), as that variable itself. The host binding itself is never
//! lowered: each call of it is the engine's call, in place.

use crate::cx::Cx;
use crate::ir::*;
use crate::lower::{Lowered, Lowerer};
use pmx_accelerate::{AccBinding, Boundary};
use pmx_ast::{ExprKind, Name, NameId, SmolStr, Ty};
use rustc_hash::FxHashMap;

/// One `accelerate` of the host program, as its lowering needs it.
pub(crate) struct HostSite {
    /// The binding's identity and name (the boundary's).
    id: NameId,
    name: SmolStr,
    /// How many arguments the host's binding takes.
    arity: usize,
    /// What to pass for each of the boundary's parameters, in its order;
    /// `None` for a binding that takes the dummy `Int`.
    reads: Option<Vec<Read>>,
}

#[derive(Clone)]
enum Read {
    /// The host binding's argument at this index.
    Arg(usize),
    /// A variable the host's lifting does not pass (read in place).
    Var(Name, Ty),
}

/// The host program's accelerate bindings (`lifted`, the host lifting's),
/// by identity, matched with their boundaries by span.
pub(crate) fn host_sites(boundaries: &[Boundary], lifted: &[AccBinding]) -> FxHashMap<NameId, HostSite> {
    let by_span: FxHashMap<_, &Boundary> = boundaries.iter().map(|b| (b.span, b)).collect();
    lifted
        .iter()
        .filter_map(|host| {
            let b = by_span.get(&host.span)?;
            let reads = (!b.dummy).then(|| {
                b.params
                    .iter()
                    .map(|p| match host.params.iter().position(|h| h.source.id == p.source.id) {
                        Some(k) => Read::Arg(k),
                        None => Read::Var(p.source.clone(), p.ty.clone()),
                    })
                    .collect()
            });
            let arity = host.params.len().max(1);
            Some((host.id, HostSite { id: b.id, name: b.name.clone(), arity, reads }))
        })
        .collect()
}

impl Lowerer<'_> {
    /// A call `binding args` at `e` of a host accelerate binding: the
    /// engine's call, in place (the binding is not a function of host
    /// code, so no call of it shows in a trace). `None` where `binding`
    /// is not one, or the call is not saturated.
    pub(crate) fn host_accelerate(
        &mut self,
        cx: &mut Cx,
        binding: NameId,
        args: &[&pmx_ast::Expr],
        e: &pmx_ast::Expr,
        out: &mut Vec<Stmt>,
    ) -> Option<Lowered<Atom>> {
        let site = self.host_sites.get(&binding)?;
        if site.arity != args.len() {
            return None;
        }
        let (id, name, reads) = (site.id, site.name.clone(), site.reads.clone());
        Some((|| {
            let args = match reads {
                None => vec![Atom::Lit(Lit::Int(0))],
                Some(reads) => {
                    let mut atoms = Vec::with_capacity(reads.len());
                    for r in reads {
                        atoms.push(match r {
                            Read::Arg(k) => self.value(cx, args[k], out)?,
                            Read::Var(n, ty) => {
                                let var = pmx_ast::Expr { kind: ExprKind::Var(n), span: e.span, ty };
                                self.value(cx, &var, out)?
                            }
                        });
                    }
                    atoms
                }
            };
            let ty = self.ty(cx, &e.ty, e.span)?;
            Ok(self.emit(cx, out, ty, Expr::Accelerate { site: id, name, args }, e.span))
        })())
    }
}
