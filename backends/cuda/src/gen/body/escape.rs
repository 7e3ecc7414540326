//! Escape analysis of host code: which values may point into a frame
//! (shapes, and what code outside host code returns that may hold one)
//! and must be copied into the call's memory where they may reach a
//! queued kernel or outlive the entry, and the copiers that do it.

use super::*;

/// The values of host code `b` that may point into a frame and must be
/// copied into the call's memory: shapes (`tensorShape`, a view of a
/// tensor's dimensions) and what code outside host code that may take a
/// shape (`shape_fns`, `gen::shape_functions`) returns, where its type
/// may hold a sequence of scalars (alone or in a record or variant), where
/// they are used other than read in place and so may reach a kernel
/// (queued, it may run after the frame is gone) or outlive the frame. The
/// others stay views, as in device code.
pub(super) fn escaping_seqs(
    p: &Program,
    b: &Block,
    host_fns: &FxHashSet<FnId>,
    shape_fns: &FxHashSet<FnId>,
) -> FxHashSet<VarId> {
    let from_device =
        |e: &Expr| crate::gen::host_callee(e).is_some_and(|id| !host_fns.contains(&id) && shape_fns.contains(&id));
    let mut all = Vec::new();
    b.for_each_stmt(&mut |s| match &s.expr {
        Expr::Prim(Builtin::TensorShape, _) => all.push(s.var.id),
        e if from_device(e) && may_hold_shape(p, &s.var.ty) => all.push(s.var.id),
        _ => {}
    });
    fn escapes(b: &Block, v: VarId) -> bool {
        use Builtin::*;
        let is = |a: &Atom| matches!(a, Atom::Var(x) if x.id == v);
        let mut result = false;
        b.for_each_result(&mut |a| result |= is(a));
        result
            || b.any_stmt(|s| match &s.expr {
                Expr::Prim(Get | Length | Head | Null, args) => args.iter().skip(1).any(is),
                Expr::Foldl { f, init, .. } => f.bound.iter().any(is) || is(init),
                Expr::SizeEq { size, .. } => is(size),
                // An `If`'s operand is its condition.
                e => e.operands().into_iter().any(is),
            })
    }
    all.into_iter().filter(|&v| escapes(b, v)).collect()
}

/// Whether a function body takes the shape of a tensor view that lives in
/// its frame: one it made, not a parameter or a part of one (those are
/// bound by reference, `types::by_ref`, to the caller's).
pub(super) fn shape_of_local(b: &Block) -> bool {
    fn local(a: &Atom, defs: &FxHashMap<VarId, &Expr>) -> bool {
        let Atom::Var(v) = a else { return false };
        match defs.get(&v.id) {
            None => false,
            Some(Expr::Atom(x) | Expr::Project(x, _) | Expr::Payload { value: x, .. }) => local(x, defs),
            Some(_) => true,
        }
    }
    let mut all = FxHashMap::default();
    b.for_each_stmt(&mut |s| {
        all.insert(s.var.id, &s.expr);
    });
    all.values().any(|e| matches!(e, Expr::Prim(Builtin::TensorShape, args) if local(&args[0], &all)))
}

/// Whether a value of type `t` may hold a sequence (`seen`: the variants
/// already looked into, which may be recursive).
pub(super) fn holds_seq(p: &Program, t: &Type, seen: &mut Vec<pmx_lower::VariantId>) -> bool {
    holds(p, t, &|_| true, seen)
}

/// Whether a value of type `t` may hold a sequence whose elements satisfy
/// `elem`, outside any sequence (the parts of a value that a copy of it
/// copies).
pub(super) fn holds(p: &Program, t: &Type, elem: &dyn Fn(&Type) -> bool, seen: &mut Vec<pmx_lower::VariantId>) -> bool {
    match t {
        Type::Seq(e) => elem(e),
        Type::Record(fields) => fields.iter().any(|(_, f)| holds(p, f, elem, seen)),
        Type::Variant(id) if !seen.contains(id) => {
            seen.push(*id);
            p.variants[id.0 as usize].constructors.iter().any(|c| holds(p, &c.payload, elem, seen))
        }
        _ => false,
    }
}

/// Whether a value of type `t` may hold a sequence that points into a
/// frame: a sequence of scalars (a shape) outside any sequence. Other
/// sequences that code not in host code can return are a parameter's,
/// in the call's memory (a literal returned is refused).
pub(super) fn may_hold_shape(p: &Program, t: &Type) -> bool {
    holds(p, t, &scalar, &mut Vec::new())
}

impl Body<'_> {
    /// After a loop of host code whose result may hold a shape its body
    /// took (`escaping_seqs`): the result copied, as a call's is.
    pub(super) fn copy_if_escaping(&mut self, types: &mut Types, v: &Var, host: bool, code: &mut String, pad: &str) {
        if host && self.engine_seqs.contains(&v.id) {
            let copy = self.copier(types, &v.ty);
            let name = var(v);
            let _ = writeln!(code, "{pad}{name} = {copy}({name}, rt);");
        }
    }

    /// The host function that copies a value of type `t` with each of its
    /// sequences of scalars outside a sequence (`may_hold_shape`) copied
    /// into the call's memory, written once per type.
    pub(super) fn copier(&mut self, types: &mut Types, t: &Type) -> String {
        if matches!(t, Type::Seq(_)) {
            return "pmx_host_copy".into();
        }
        if let Some(n) = self.copier_names.get(t) {
            return n.clone();
        }
        // The name is taken before the parts are written: a variant type
        // that contains itself (refused by `Types::c`, E0421 before that)
        // then refers to its own copier instead of recursing forever.
        let name = format!("pmx_copy_{}", self.copier_names.len());
        self.copier_names.insert(t.clone(), name.clone());
        let ct = types.c(t);
        let mut parts = String::new();
        match t {
            Type::Record(fields) => {
                for (l, ft) in fields {
                    if may_hold_shape(self.p, ft) {
                        let f = self.copier(types, ft);
                        let m = field(l);
                        let _ = writeln!(parts, "  c.{m} = {f}(v.{m}, rt);");
                    }
                }
            }
            Type::Variant(id) => {
                let constructors = self.p.variant(*id).map(|d| d.constructors.clone()).unwrap_or_default();
                let mut cases = String::new();
                for (k, c) in constructors.iter().enumerate() {
                    if may_hold_shape(self.p, &c.payload) {
                        let f = self.copier(types, &c.payload);
                        let _ = writeln!(cases, "  case {k}: c.c{k} = {f}(v.c{k}, rt); break;");
                    }
                }
                if !cases.is_empty() {
                    let _ = write!(parts, "  switch (v.tag) {{\n{cases}  default: break;\n  }}\n");
                }
            }
            _ => {}
        }
        let _ = writeln!(
            self.unpackers,
            "static {ct} {name}(const {ct} &v, const pmx_runtime *rt) {{\n  {ct} c = v;\n  (void)rt;\n{parts}  return c;\n}}\n"
        );
        name
    }
}
