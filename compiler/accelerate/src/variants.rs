//! The variant types a program declares, for the passes that look inside
//! values of a type (a tensor or a sequence in a constructor's payload):
//! each type's constructors with their payload types at given type
//! arguments, and whether a type contains itself, which the CUDA backend
//! refuses (a value of it has no fixed-size layout). The lowering builds
//! its table of variant type instances from the same constructors.

use pmx_ast::subst::{apply, unify, Subst};
use pmx_ast::*;
use rustc_hash::FxHashMap;

/// A constructor as declared: its identity, name and type scheme.
#[derive(Clone, Debug, PartialEq)]
struct Con {
    id: NameId,
    name: SmolStr,
    scheme: Ty,
}

/// Every constructor of the program, by the variant type it builds.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Variants {
    constructors: FxHashMap<NameId, Vec<Con>>,
}

impl Variants {
    /// Collects every constructor declared in `program` (at the top level
    /// or locally).
    pub fn new(program: &Expr) -> Variants {
        let mut v = Variants::default();
        v.collect(program);
        v
    }

    fn collect(&mut self, e: &Expr) {
        if let ExprKind::ConDecl(d, _) = &e.kind {
            let (_, result) = payload_and_result(&d.scheme);
            if let TyKind::Con(ty, _, _) = result.kind() {
                self.constructors.entry(*ty).or_default().push(Con {
                    id: d.name.id,
                    name: d.name.text.clone(),
                    scheme: d.scheme.clone(),
                });
            }
        }
        pmx_ast::visit::children(e, &mut |c| self.collect(c));
    }

    /// The constructors of `t` (a variant type), in declaration order, with
    /// their names and payload types at `t`'s type arguments (`()` for a
    /// constant constructor); nothing for any other type.
    pub fn payloads(&self, t: &Ty) -> Vec<(NameId, SmolStr, Ty)> {
        let TyKind::Con(id, _, _) = t.kind() else { return Vec::new() };
        let Some(cons) = self.constructors.get(id) else { return Vec::new() };
        cons.iter()
            .map(|c| {
                let (payload, result) = payload_and_result(&c.scheme);
                let mut map = Subst::default();
                unify(&result, t, &mut map);
                (c.id, c.name.clone(), payload.map(|p| apply(&p, &map)).unwrap_or_else(Ty::unit))
            })
            .collect()
    }

    /// A part of `t` that `bad` holds for, looking through sequences,
    /// tensors, records, type arguments, arrows and constructors' payloads
    /// (each variant type once, so recursive types end).
    pub fn find(&self, t: &Ty, bad: &dyn Fn(&Ty) -> bool) -> Option<Ty> {
        self.find_in(t, bad, &mut Vec::new())
    }

    fn find_in(&self, t: &Ty, bad: &dyn Fn(&Ty) -> bool, seen: &mut Vec<NameId>) -> Option<Ty> {
        if bad(t) {
            return Some(t.clone());
        }
        match t.kind() {
            TyKind::Seq(e) | TyKind::Tensor(e) => self.find_in(e, bad, seen),
            TyKind::Record(fields) => fields.iter().find_map(|(_, f)| self.find_in(f, bad, seen)),
            TyKind::Arrow(a, b) => self.find_in(a, bad, seen).or_else(|| self.find_in(b, bad, seen)),
            TyKind::All(_, _, b) => self.find_in(b, bad, seen),
            TyKind::Con(id, _, args) => {
                if let Some(found) = args.iter().find_map(|a| self.find_in(a, bad, seen)) {
                    return Some(found);
                }
                if seen.contains(id) {
                    return None;
                }
                seen.push(*id);
                self.payloads(t).iter().find_map(|(_, _, p)| self.find_in(p, bad, seen))
            }
            _ => None,
        }
    }

    /// Whether a value of type `t` may hold a part for which `f` holds.
    pub fn holds(&self, t: &Ty, f: &dyn Fn(&Ty) -> bool) -> bool {
        self.find(t, f).is_some()
    }

    /// Whether `t` is a variant type whose values may contain a value of
    /// the same type (directly, or through records, sequences, tensors or
    /// other variant types).
    pub fn recursive(&self, t: &Ty) -> bool {
        let TyKind::Con(id, _, _) = t.kind() else { return false };
        if !self.constructors.contains_key(id) {
            return false;
        }
        let mentions = |x: &Ty| matches!(x.kind(), TyKind::Con(other, _, _) if other == id);
        self.payloads(t).iter().any(|(_, _, p)| self.holds(p, &mentions))
    }
}

/// A constructor's payload type (none for a constant constructor) and
/// the variant type it builds.
fn payload_and_result(scheme: &Ty) -> (Option<Ty>, Ty) {
    let t = scheme.strip_foralls();
    match t.as_arrow() {
        Some((p, r)) => (Some(p.clone()), r.strip_foralls().clone()),
        None => (None, t.clone()),
    }
}
