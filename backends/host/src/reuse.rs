//! Reuse in place of a unique value (Perceus's reuse, for the pattern
//! persistent data structures are written in): a function that matches
//! its parameter `t` against constructor `C`, reads the record `r` in it,
//! and returns `C {r with f = e, ..}` rebuilds the same node. Where `t`
//! and `r` are unique when the function runs (nobody else holds them),
//! the new node can be the old one with the new fields written in, and a
//! field passed to a recursive call that rebuilds it the same way can be
//! taken out first, so the callee finds it unique too: an insertion into
//! a tree the caller gives away then allocates nothing on its path.
//!
//! This file finds the sites (`sites`); `gen.rs` makes the function own
//! `t` (its callers give it), tests uniqueness at run time and keeps the
//! ordinary path for shared values. What makes it safe, checked here:
//! the new node is the function's result (nothing after it reads what
//! the old fields held); between a field's taking and the node's
//! rebuilding nothing reads `t` or `r` but other fields, and the taken
//! field is read by nothing but the call.

use pmx_lower::{Atom, Block, Expr, Function, Type, VarId, VariantId};
use rustc_hash::FxHashMap;

/// One node rebuilt in place where unique.
#[derive(Debug, Clone)]
pub struct Site {
    /// The parameter matched (its index) and its variable, and the
    /// record read from it.
    pub param: usize,
    pub value: VarId,
    pub payload: VarId,
    /// The record statement's variable, its fields given new values (by
    /// index in the record type, with the position of their atom in the
    /// statement) and the constructor statement's variable.
    pub record: VarId,
    pub replaced: Vec<(usize, usize)>,
    pub con: VarId,
    /// Calls that are given a field taken out of the record: the call's
    /// variable, the argument's position, the field's index.
    pub takes: Vec<(VarId, usize, usize)>,
}

/// The reuse sites of `f`.
pub fn sites(f: &Function) -> Vec<Site> {
    let mut binders: FxHashMap<VarId, &Expr> = FxHashMap::default();
    f.body.for_each_stmt(&mut |s| {
        binders.insert(s.var.id, &s.expr);
    });
    let mut uses: FxHashMap<VarId, usize> = FxHashMap::default();
    f.body.for_each_stmt(&mut |s| {
        for a in s.expr.operands() {
            if let Atom::Var(v) = a {
                *uses.entry(v.id).or_default() += 1;
            }
        }
    });
    f.body.for_each_result(&mut |a| {
        if let Atom::Var(v) = a {
            *uses.entry(v.id).or_default() += 1;
        }
    });
    let mut out = Vec::new();
    f.body.for_each_tail_block(&mut |b| {
        if let Some(site) = site_in(f, b, &binders, &uses) {
            out.push(site);
        }
    });
    out
}

fn var(a: &Atom) -> Option<VarId> {
    match a {
        Atom::Var(v) => Some(v.id),
        Atom::Lit(_) => None,
    }
}

fn site_in(f: &Function, b: &Block, binders: &FxHashMap<VarId, &Expr>, uses: &FxHashMap<VarId, usize>) -> Option<Site> {
    let last = b.stmts.len().checked_sub(1)?;
    let con_stmt = &b.stmts[last];
    if var(&b.result) != Some(con_stmt.var.id) {
        return None;
    }
    let Expr::Con { variant, tag, payload } = &con_stmt.expr else { return None };
    let record = var(payload)?;
    let at = b.stmts.iter().position(|s| s.var.id == record)?;
    let Expr::Record(fields) = &b.stmts[at].expr else { return None };
    let Type::Record(types) = &b.stmts[at].var.ty else { return None };
    // The record read from a parameter matched against the same
    // constructor: every field kept is a projection of it.
    let mut payload_var: Option<VarId> = None;
    let mut replaced = Vec::new();
    for (pos, (label, a)) in fields.iter().enumerate() {
        let index = types.iter().position(|(l, _)| l == label)?;
        match var(a).and_then(|x| binders.get(&x)) {
            Some(Expr::Project(Atom::Var(r), l)) if l == label => {
                if payload_var.is_some_and(|p| p != r.id) {
                    return None;
                }
                payload_var = Some(r.id);
            }
            _ => replaced.push((index, pos)),
        }
    }
    let r = payload_var?;
    let (t, param) = matched_param(f, binders.get(&r)?, *variant, *tag)?;
    // The record is read by nothing but its node (it is made with it).
    if replaced.is_empty() || uses.get(&record) != Some(&1) {
        return None;
    }
    let mut takes = Vec::new();
    for &(index, pos) in &replaced {
        if let Some(take) = take_for(f, b, at, t, r, fields[pos].0.as_str(), index, &fields[pos].1, binders, uses) {
            takes.push(take);
        }
    }
    Some(Site { param, value: t, payload: r, record, replaced, con: con_stmt.var.id, takes })
}

/// The parameter (its variable and index) whose payload `e` reads, if it
/// reads constructor `tag` of `variant`'s payload of a boxed parameter.
fn matched_param(f: &Function, e: &Expr, variant: VariantId, tag: usize) -> Option<(VarId, usize)> {
    let Expr::Payload { value: Atom::Var(t), variant: v, tag: c } = e else { return None };
    if *v != variant || *c != tag {
        return None;
    }
    let param = f.params.iter().position(|p| p.id == t.id)?;
    Some((t.id, param))
}

/// The call that may be given field `label` (index `index`) taken out of
/// `r`: the statement before the record (at `record_at` in `b`) making
/// the field's new value `a` is a call of `f` itself whose argument at the
/// matched parameter's place is that field, read only there, and nothing
/// from the call on reads `t` or `r` but as projections.
#[allow(clippy::too_many_arguments)]
fn take_for(
    f: &Function,
    b: &Block,
    record_at: usize,
    t: VarId,
    r: VarId,
    label: &str,
    index: usize,
    a: &Atom,
    binders: &FxHashMap<VarId, &Expr>,
    uses: &FxHashMap<VarId, usize>,
) -> Option<(VarId, usize, usize)> {
    let v = var(a)?;
    let call_at = b.stmts[..record_at].iter().position(|s| s.var.id == v)?;
    let Expr::Call(g, args) = &b.stmts[call_at].expr else { return None };
    if *g != f.id {
        return None;
    }
    let param = f.params.iter().position(|p| p.id == t)?;
    let field = var(args.get(param)?)?;
    match binders.get(&field) {
        Some(Expr::Project(Atom::Var(x), l)) if x.id == r && l == label => {}
        _ => return None,
    }
    if uses.get(&field) != Some(&1) {
        return None;
    }
    // From the call on, up to the constructor: `t` and `r` read only as
    // projections of other fields (the taken one is a hole meanwhile).
    let mentions = |o: &Atom| matches!(var(o), Some(x) if x == t || x == r);
    let allowed = |e: &Expr| match e {
        Expr::Project(Atom::Var(x), l) if x.id == r => l != label,
        e => !e.operands().into_iter().any(mentions),
    };
    let clean = |s: &pmx_lower::Stmt| {
        allowed(&s.expr)
            && match &s.expr {
                Expr::If { then, otherwise, .. } => [then, otherwise].iter().all(|blk| {
                    let mut hit = false;
                    blk.for_each_result(&mut |o| hit |= mentions(o));
                    !hit && !blk.any_stmt(|n| !allowed(&n.expr))
                }),
                _ => true,
            }
    };
    let last = b.stmts.len() - 1;
    if !b.stmts[call_at..last].iter().all(clean) {
        return None;
    }
    Some((v, param, index))
}
