//! Inference variables and unification.
//!
//! An inference variable ("meta") is either bound to a type or unbound with
//! a level (for generalisation) and a list of record fields it must have
//! (when it stands for the type of something projected or matched with a
//! record pattern).

use pmx_ast::{compare_labels, SmolStr, Ty, TyKind, TyVar};
use rustc_hash::{FxHashMap, FxHashSet};
use std::cmp::Ordering;

#[derive(Clone, Debug)]
enum Meta {
    Unbound {
        level: u32,
        fields: Vec<(SmolStr, Ty)>,
    },
    /// Bound to a type, with the unbound variables that type reached when
    /// the occurs check last walked it (`None`: not known, or too many to
    /// remember). A bound type changes only through the variables it
    /// reaches being bound in turn, so the occurs check and the level
    /// adjustment need only look at those (and follow the ones bound since)
    /// instead of walking the whole type again. Without this, binding each
    /// level of a deeply nested value (`[[[..]]]`, or `lam x. [[[x]]]`,
    /// where the innermost variable stays unbound) walked every level below
    /// it again: quadratic time. An empty list: a ground type.
    Link(Ty, Option<Box<[u32]>>),
}

/// The unbound variables a walk of the occurs check has found so far, or
/// `None` once they are too many to remember (see [`Meta::Link`]).
type Found = Option<Vec<u32>>;

/// The most unbound variables remembered for a bound one: a few are
/// what deep types usually reach, and more would make each check slow.
const REMEMBERED: usize = 16;

fn note(found: &mut Found, v: u32) {
    if let Some(vs) = found {
        if vs.contains(&v) {
            return;
        }
        if vs.len() == REMEMBERED {
            *found = None;
        } else {
            vs.push(v);
        }
    }
}

fn merge(found: &mut Found, other: &Found) {
    match other {
        None => *found = None,
        Some(vs) => vs.iter().for_each(|v| note(found, *v)),
    }
}

/// Why two types did not unify.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Mismatch {
    /// Different type constructors somewhere inside.
    Types,
    /// A variable would have to contain itself.
    Occurs,
    /// A record lacks a field that is required of it.
    MissingField(SmolStr),
    /// A type that is not a record was required to have a field.
    NotARecord(SmolStr),
    /// A rigid type variable of a higher-rank type (a skolem) would be
    /// known outside the part of the program it stands for.
    Escape(SmolStr),
}

#[derive(Default)]
pub(crate) struct Unifier {
    metas: Vec<Meta>,
    next_var: u32,
    /// Once inference is over ([`Unifier::freeze`]), what each type zonks
    /// to, by the address of its node (the original is kept so that the
    /// address is not reused). Writing types back into a tree zonks the
    /// type of every node, and nested nodes share their types (the type of
    /// `lam x. e` contains the type of `e`): without this, 100,000 nested
    /// lambdas took quadratic time.
    memo: Option<FxHashMap<usize, (Ty, Option<Ty>)>>,
    /// For unbound variables with many required fields, the position of
    /// each field by label: a record pattern with 100,000 fields on a value
    /// of unknown type searched the list once per field (quadratic). Each
    /// index covers every field of its variable; fields are only added to
    /// a variable while it is unbound, by [`Unifier::require_field`].
    field_index: FxHashMap<u32, FxHashMap<SmolStr, usize>>,
    /// The rigid variables made for higher-rank types (skolems), by id,
    /// with the level they live at: an inference variable of a lower
    /// level, one known outside their scope, is never bound to a type
    /// that holds them (Miking's "type variable escaping its scope").
    skolems: FxHashMap<u32, u32>,
}

/// The parts of a quantified type: its variable, the record fields
/// required of it, its body.
type Quantified<'a> = (&'a TyVar, &'a [(SmolStr, Ty)], &'a Ty);

/// The number of required fields from which they are indexed.
const INDEX_FIELDS_FROM: usize = 16;

/// The type of the field `label` of a record type, whose fields are sorted
/// by [`compare_labels`]: found by binary search (records can be wide).
/// Labels that compare equal but are spelled differently (`1`, `01`) are
/// neighbours, and the first field spelled `label` is the one found.
fn record_field<'a>(fields: &'a [(SmolStr, Ty)], label: &SmolStr) -> Option<&'a Ty> {
    let start = fields.partition_point(|(l, _)| compare_labels(l, label) == Ordering::Less);
    fields[start..]
        .iter()
        .take_while(|(l, _)| compare_labels(l, label) == Ordering::Equal)
        .find(|(l, _)| l == label)
        .map(|(_, t)| t)
}

impl Unifier {
    pub fn fresh(&mut self, level: u32) -> Ty {
        self.metas.push(Meta::Unbound { level, fields: Vec::new() });
        Ty::new(TyKind::Meta(self.metas.len() as u32 - 1))
    }

    fn fresh_with_fields(&mut self, level: u32, fields: Vec<(SmolStr, Ty)>) -> Ty {
        self.metas.push(Meta::Unbound { level, fields });
        Ty::new(TyKind::Meta(self.metas.len() as u32 - 1))
    }

    pub fn fresh_var(&mut self, name: &str) -> TyVar {
        self.next_var += 1;
        TyVar { id: self.next_var, name: SmolStr::new(name) }
    }

    /// A rigid variable that only inference variables of at least `level`
    /// may be bound to (see [`Unifier::skolems`]).
    pub fn skolem(&mut self, name: &str, level: u32) -> Ty {
        let v = self.fresh_var(name);
        self.skolems.insert(v.id, level);
        Ty::new(TyKind::Var(v))
    }

    /// Follows bound variables until a type that is not a bound variable.
    pub fn shallow(&mut self, t: &Ty) -> Ty {
        let TyKind::Meta(id) = t.kind() else { return t.clone() };
        match &self.metas[*id as usize] {
            Meta::Link(next, reached) => {
                // The end of the chain reaches what its start reaches.
                let (next, reached) = (next.clone(), reached.clone());
                let end = self.shallow(&next);
                self.metas[*id as usize] = Meta::Link(end.clone(), reached);
                end
            }
            Meta::Unbound { .. } => t.clone(),
        }
    }

    /// [`Unifier::shallow`], and for an application of a variable of
    /// higher kind, its head followed too: once the head is solved (to a
    /// named type, perhaps partially applied), the application is that
    /// type with the arguments appended.
    pub fn shallow_app(&mut self, t: &Ty) -> Ty {
        let mut t = self.shallow(t);
        while let TyKind::App(head, args) = t.kind() {
            let solved = self.shallow(head);
            if solved == *head {
                break;
            }
            t = Ty::app(solved, args.clone());
        }
        t
    }

    pub fn unify(&mut self, a: &Ty, b: &Ty) -> Result<(), Mismatch> {
        let a = self.shallow_app(a);
        let b = self.shallow_app(b);
        if a == b {
            return Ok(());
        }
        match (a.kind(), b.kind()) {
            (TyKind::Unknown, _) | (_, TyKind::Unknown) => Ok(()),
            (TyKind::Meta(x), _) => self.bind(*x, &b),
            (_, TyKind::Meta(y)) => self.bind(*y, &a),
            (TyKind::Seq(x), TyKind::Seq(y)) | (TyKind::Tensor(x), TyKind::Tensor(y)) => self.unify(x, y),
            (TyKind::Arrow(a1, r1), TyKind::Arrow(a2, r2)) => {
                self.unify(a1, a2)?;
                self.unify(r1, r2)
            }
            (TyKind::Record(f1), TyKind::Record(f2)) => {
                if f1.len() != f2.len() || f1.iter().zip(f2).any(|(x, y)| x.0 != y.0) {
                    return Err(Mismatch::Types);
                }
                for ((_, x), (_, y)) in f1.iter().zip(f2) {
                    self.unify(x, y)?;
                }
                Ok(())
            }
            (TyKind::Con(i1, _, args1), TyKind::Con(i2, _, args2)) if i1 == i2 && args1.len() == args2.len() => {
                for (x, y) in args1.iter().zip(args2) {
                    self.unify(x, y)?;
                }
                Ok(())
            }
            (TyKind::Var(v1), TyKind::Var(v2)) if v1.id == v2.id => Ok(()),
            (TyKind::All(v1, f1, b1), TyKind::All(v2, f2, b2)) => self.unify_alls((v1, f1, b1), (v2, f2, b2)),
            (TyKind::App(h1, a1), TyKind::App(h2, a2)) => {
                if a1.len() >= a2.len() {
                    self.unify_app(h1, a1, b.clone(), a2)
                } else {
                    self.unify_app(h2, a2, a.clone(), a1)
                }
            }
            (TyKind::App(h, args), TyKind::Con(id, name, cargs))
            | (TyKind::Con(id, name, cargs), TyKind::App(h, args))
                if cargs.len() >= args.len() =>
            {
                let k = cargs.len() - args.len();
                let (head, rest) = (Ty::new(TyKind::Con(*id, name.clone(), cargs[..k].to_vec())), &cargs[k..]);
                self.unify(h, &head)?;
                args.iter().zip(rest).try_for_each(|(x, y)| self.unify(x, y))
            }
            _ => Err(Mismatch::Types),
        }
    }

    /// `head args` against `other`, itself `other_head other_args` with no
    /// more arguments than `args`: as Miking's curried applications unify,
    /// the last arguments pair up, and what `head` takes before them makes
    /// the other's head (`v A B` against `w B'`: `v A` against `w`).
    fn unify_app(&mut self, head: &Ty, args: &[Ty], other: Ty, other_args: &[Ty]) -> Result<(), Mismatch> {
        let TyKind::App(other_head, _) = other.kind() else { return Err(Mismatch::Types) };
        let k = args.len() - other_args.len();
        self.unify(&Ty::app(head.clone(), args[..k].to_vec()), other_head)?;
        args[k..].iter().zip(other_args).try_for_each(|(x, y)| self.unify(x, y))
    }

    /// Two quantified types are the same up to the names of their bound
    /// variables (Miking's `boundNames`): both are opened with one rigid
    /// variable that nothing outside may be bound to.
    fn unify_alls(&mut self, a: Quantified, b: Quantified) -> Result<(), Mismatch> {
        let ((v1, f1, b1), (v2, f2, b2)) = (a, b);
        if f1.len() != f2.len() || f1.iter().zip(f2).any(|(x, y)| x.0 != y.0) {
            return Err(Mismatch::Types);
        }
        let bound = self.skolem(&v1.name, u32::MAX);
        let s1: FxHashMap<u32, Ty> = [(v1.id, bound.clone())].into_iter().collect();
        let s2: FxHashMap<u32, Ty> = [(v2.id, bound)].into_iter().collect();
        for ((_, x), (_, y)) in f1.iter().zip(f2) {
            self.unify(&substitute(x, &s1), &substitute(y, &s2))?;
        }
        self.unify(&substitute(b1, &s1), &substitute(b2, &s2))
    }

    fn level_of(&self, id: u32) -> u32 {
        match &self.metas[id as usize] {
            Meta::Unbound { level, .. } => *level,
            Meta::Link(..) => u32::MAX,
        }
    }

    /// Binds the unbound variable `x` to `t` (shallow, not `x` itself).
    fn bind(&mut self, x: u32, t: &Ty) -> Result<(), Mismatch> {
        // Zonk results remembered after `freeze` would go stale.
        self.memo = None;
        let level = self.level_of(x);
        let mut found: Found = Some(Vec::new());
        self.occurs_adjust(x, level, t, &mut found)?;
        let reached = found.map(Vec::into_boxed_slice);
        let fields = match std::mem::replace(&mut self.metas[x as usize], Meta::Link(t.clone(), reached)) {
            Meta::Unbound { fields, .. } => fields,
            Meta::Link(..) => unreachable!("bind on a bound variable"),
        };
        for (label, fty) in fields {
            let found = self.require_field(t, &label)?;
            self.unify(&fty, &found)?;
        }
        Ok(())
    }

    /// The type of field `label` of a value of type `t`, constraining `t` to
    /// have it when `t` is not known yet.
    pub fn require_field(&mut self, t: &Ty, label: &SmolStr) -> Result<Ty, Mismatch> {
        let t = self.shallow(t);
        match t.kind() {
            TyKind::Record(fields) => match record_field(fields, label) {
                Some(ft) => Ok(ft.clone()),
                None => Err(Mismatch::MissingField(label.clone())),
            },
            TyKind::Unknown => Ok(Ty::unknown()),
            TyKind::Meta(id) => {
                let id = *id;
                let level = self.level_of(id);
                if let Meta::Unbound { fields, .. } = &self.metas[id as usize] {
                    let found = if fields.len() < INDEX_FIELDS_FROM {
                        fields.iter().position(|(l, _)| l == label)
                    } else {
                        let index = self.field_index.entry(id).or_insert_with(|| {
                            let mut index = FxHashMap::default();
                            for (i, (l, _)) in fields.iter().enumerate() {
                                index.entry(l.clone()).or_insert(i);
                            }
                            index
                        });
                        index.get(label).copied()
                    };
                    if let Some(i) = found {
                        return Ok(fields[i].1.clone());
                    }
                }
                let ft = self.fresh(level);
                if let Meta::Unbound { fields, .. } = &mut self.metas[id as usize] {
                    fields.push((label.clone(), ft.clone()));
                    if let Some(index) = self.field_index.get_mut(&id) {
                        index.insert(label.clone(), fields.len() - 1);
                    }
                }
                Ok(ft)
            }
            _ => Err(Mismatch::NotARecord(label.clone())),
        }
    }

    /// Fails when `x` occurs in `t`; lowers the level of every variable in
    /// `t` to at most `level`. Adds the unbound variables `t` reaches to
    /// `found` (not those only in their record constraints, which can
    /// grow and are walked each time).
    fn occurs_adjust(&mut self, x: u32, level: u32, t: &Ty, found: &mut Found) -> Result<(), Mismatch> {
        match t.kind() {
            TyKind::Meta(y) => {
                let y = *y;
                match &self.metas[y as usize] {
                    Meta::Link(next, Some(reached)) => {
                        let (next, reached) = (next.clone(), reached.clone());
                        let mut now: Found = Some(Vec::new());
                        let mut changed = false;
                        for &v in reached.iter() {
                            if matches!(self.metas[v as usize], Meta::Unbound { .. }) {
                                self.occurs_unbound(x, level, v)?;
                                note(&mut now, v);
                            } else {
                                // Bound since: what it reaches now.
                                changed = true;
                                self.occurs_adjust(x, level, &Ty::new(TyKind::Meta(v)), &mut now)?;
                            }
                        }
                        if changed {
                            self.metas[y as usize] = Meta::Link(next, now.clone().map(Vec::into_boxed_slice));
                        }
                        merge(found, &now);
                    }
                    Meta::Link(next, None) => {
                        let next = next.clone();
                        let mut now: Found = Some(Vec::new());
                        self.occurs_adjust(x, level, &next, &mut now)?;
                        self.metas[y as usize] = Meta::Link(next, now.clone().map(Vec::into_boxed_slice));
                        merge(found, &now);
                    }
                    Meta::Unbound { .. } => {
                        self.occurs_unbound(x, level, y)?;
                        note(found, y);
                    }
                }
                Ok(())
            }
            TyKind::Seq(e) | TyKind::Tensor(e) => self.occurs_adjust(x, level, e, found),
            TyKind::Arrow(a, b) => {
                self.occurs_adjust(x, level, a, found)?;
                self.occurs_adjust(x, level, b, found)
            }
            TyKind::Record(fields) => {
                for (_, f) in fields {
                    self.occurs_adjust(x, level, f, found)?;
                }
                Ok(())
            }
            TyKind::Con(_, _, args) => {
                for a in args {
                    self.occurs_adjust(x, level, a, found)?;
                }
                Ok(())
            }
            TyKind::App(head, args) => {
                self.occurs_adjust(x, level, head, found)?;
                for a in args {
                    self.occurs_adjust(x, level, a, found)?;
                }
                Ok(())
            }
            // The record constraints of a quantifier are not walked, so what
            // its type reaches is never taken to be known.
            TyKind::All(_, _, body) => {
                self.occurs_adjust(x, level, body, &mut None)?;
                *found = None;
                Ok(())
            }
            // A skolem of a deeper level must not be known at `level`
            // (`x == u32::MAX`: only levels are lowered, nothing bound).
            // What reaches one is never taken to be known, so that each
            // binding walks to it again.
            TyKind::Var(v) => match self.skolems.get(&v.id) {
                Some(&l) => {
                    *found = None;
                    if l > level && x != u32::MAX {
                        return Err(Mismatch::Escape(v.name.clone()));
                    }
                    Ok(())
                }
                None => Ok(()),
            },
            TyKind::Unknown | TyKind::Int | TyKind::Float | TyKind::Bool | TyKind::Char => Ok(()),
        }
    }

    /// [`Unifier::occurs_adjust`] on the unbound variable `y`: fails when it
    /// is `x`, lowers its level, and walks its record constraints.
    fn occurs_unbound(&mut self, x: u32, level: u32, y: u32) -> Result<(), Mismatch> {
        if y == x {
            return Err(Mismatch::Occurs);
        }
        let Meta::Unbound { level: l, fields } = &mut self.metas[y as usize] else {
            unreachable!("called on an unbound variable")
        };
        *l = (*l).min(level);
        let fields = fields.clone();
        for (_, f) in fields {
            self.occurs_adjust(x, level, &f, &mut None)?;
        }
        Ok(())
    }

    /// Declares inference over: no variable is bound from here on, so what
    /// a type zonks to can be remembered.
    pub fn freeze(&mut self) {
        self.memo = Some(FxHashMap::default());
    }

    /// Replaces every bound variable by what it is bound to.
    pub fn zonk(&mut self, t: &Ty) -> Ty {
        self.zonk_changed(t).unwrap_or_else(|| t.clone())
    }

    fn zonk_changed(&mut self, t: &Ty) -> Option<Ty> {
        let composite = matches!(
            t.kind(),
            TyKind::Seq(_)
                | TyKind::Tensor(_)
                | TyKind::Arrow(..)
                | TyKind::Record(_)
                | TyKind::Con(..)
                | TyKind::App(..)
                | TyKind::All(..)
        );
        if !composite {
            return self.zonk_node(t);
        }
        let key = t.kind() as *const TyKind as usize;
        if let Some((_, z)) = self.memo.as_ref().and_then(|m| m.get(&key)) {
            return z.clone();
        }
        let z = self.zonk_node(t);
        if let Some(memo) = &mut self.memo {
            memo.insert(key, (t.clone(), z.clone()));
        }
        z
    }

    fn zonk_node(&mut self, t: &Ty) -> Option<Ty> {
        match t.kind() {
            TyKind::Meta(_) => {
                let s = self.shallow(t);
                if matches!(s.kind(), TyKind::Meta(_)) {
                    return if s == *t { None } else { Some(s) };
                }
                Some(self.zonk(&s))
            }
            TyKind::Seq(e) => self.zonk_changed(e).map(Ty::seq),
            TyKind::Tensor(e) => self.zonk_changed(e).map(Ty::tensor),
            TyKind::Arrow(a, b) => {
                let (za, zb) = (self.zonk_changed(a), self.zonk_changed(b));
                if za.is_none() && zb.is_none() {
                    return None;
                }
                Some(Ty::arrow(za.unwrap_or_else(|| a.clone()), zb.unwrap_or_else(|| b.clone())))
            }
            TyKind::Record(fields) => {
                let z = self.zonk_fields(fields)?;
                Some(Ty::new(TyKind::Record(z)))
            }
            TyKind::Con(id, name, args) => {
                let zs: Vec<Option<Ty>> = args.iter().map(|a| self.zonk_changed(a)).collect();
                if zs.iter().all(Option::is_none) {
                    return None;
                }
                let args = zs.into_iter().zip(args).map(|(z, a)| z.unwrap_or_else(|| a.clone())).collect();
                Some(Ty::new(TyKind::Con(*id, name.clone(), args)))
            }
            // A solved head makes the application a named type again.
            TyKind::App(head, args) => {
                let zh = self.zonk_changed(head);
                let zs: Vec<Option<Ty>> = args.iter().map(|a| self.zonk_changed(a)).collect();
                if zh.is_none() && zs.iter().all(Option::is_none) {
                    return None;
                }
                let args = zs.into_iter().zip(args).map(|(z, a)| z.unwrap_or_else(|| a.clone())).collect();
                Some(Ty::app(zh.unwrap_or_else(|| head.clone()), args))
            }
            TyKind::All(v, fields, body) => {
                let zf = self.zonk_fields(fields);
                let zb = self.zonk_changed(body);
                if zf.is_none() && zb.is_none() {
                    return None;
                }
                Some(Ty::new(TyKind::All(
                    v.clone(),
                    zf.unwrap_or_else(|| fields.clone()),
                    zb.unwrap_or_else(|| body.clone()),
                )))
            }
            TyKind::Unknown | TyKind::Int | TyKind::Float | TyKind::Bool | TyKind::Char | TyKind::Var(_) => None,
        }
    }

    fn zonk_fields(&mut self, fields: &[(SmolStr, Ty)]) -> Option<Vec<(SmolStr, Ty)>> {
        let zs: Vec<Option<Ty>> = fields.iter().map(|(_, f)| self.zonk_changed(f)).collect();
        if zs.iter().all(Option::is_none) {
            return None;
        }
        Some(zs.into_iter().zip(fields).map(|(z, (l, f))| (l.clone(), z.unwrap_or_else(|| f.clone()))).collect())
    }

    /// The record fields required of an unbound variable.
    pub fn required_fields(&self, id: u32) -> Vec<(SmolStr, Ty)> {
        match &self.metas[id as usize] {
            Meta::Unbound { fields, .. } => fields.clone(),
            Meta::Link(..) => Vec::new(),
        }
    }

    /// Lowers the level of every unbound variable of `t` to at most
    /// `level`: a binding that is not generalised leaves its variables to
    /// the enclosing level, so that a later generalisation there (of a
    /// function that uses the binding) does not quantify them.
    pub fn lower_levels(&mut self, t: &Ty, level: u32) {
        // No variable has the id `u32::MAX`, so the occurs check never fails.
        let _ = self.occurs_adjust(u32::MAX, level, t, &mut None);
    }

    /// Generalises the unbound variables of `t` whose level is above
    /// `level`: each becomes a quantified variable.
    pub fn generalize(&mut self, t: &Ty, level: u32) -> Ty {
        self.generalize_group(std::slice::from_ref(t), level).pop().expect("one type in, one out")
    }

    /// Generalises the types of a recursive group together: a variable
    /// shared by several members becomes quantified in each of them.
    pub fn generalize_group(&mut self, types: &[Ty], level: u32) -> Vec<Ty> {
        // Membership is tested with sets: a type can hold a great many
        // variables (`lam x. lam x. ...` nested 100,000 times), and searching
        // lists made this quadratic.
        let mut found = (Vec::new(), FxHashSet::default());
        for t in types {
            self.collect_generalizable(t, level, &mut found);
        }
        let found = found.0;
        if found.is_empty() {
            return types.iter().map(|t| self.zonk(t)).collect();
        }
        self.memo = None;
        let mut vars = Vec::new();
        for (i, id) in found.iter().enumerate() {
            let var = self.fresh_var(&var_name(i));
            let fields = self.required_fields(*id);
            self.metas[*id as usize] = Meta::Link(Ty::new(TyKind::Var(var.clone())), Some(Box::new([])));
            vars.push((var, fields));
        }
        let vars: Vec<(TyVar, Vec<(SmolStr, Ty)>)> =
            vars.into_iter().map(|(v, fs)| (v, fs.into_iter().map(|(l, f)| (l, self.zonk(&f))).collect())).collect();
        let index: FxHashMap<u32, usize> = vars.iter().enumerate().map(|(i, (v, _))| (v.id, i)).collect();
        types
            .iter()
            .map(|t| {
                let body = self.zonk(t);
                let mut used = (Vec::new(), FxHashSet::default());
                collect_vars(&body, &mut used);
                // Variables mentioned only in another's record constraint.
                let mut i = 0;
                while i < used.0.len() {
                    if let Some(&k) = index.get(&used.0[i]) {
                        for (_, f) in &vars[k].1 {
                            collect_vars(f, &mut used);
                        }
                    }
                    i += 1;
                }
                // The quantifiers in the order of `vars`, found through the
                // variables used (a recursive group can have many members,
                // each with few variables of its own).
                let mut mine: Vec<usize> = used.0.iter().filter_map(|id| index.get(id).copied()).collect();
                mine.sort_unstable();
                mine.iter().rev().fold(body, |acc, &k| {
                    let (v, fields) = &vars[k];
                    Ty::new(TyKind::All(v.clone(), fields.clone(), acc))
                })
            })
            .collect()
    }

    fn collect_generalizable(&mut self, t: &Ty, level: u32, out: &mut (Vec<u32>, FxHashSet<u32>)) {
        let t = self.shallow(t);
        match t.kind() {
            TyKind::Meta(id) => {
                if self.level_of(*id) > level && out.1.insert(*id) {
                    out.0.push(*id);
                    for (_, f) in self.required_fields(*id) {
                        self.collect_generalizable(&f, level, out);
                    }
                }
            }
            TyKind::Seq(e) | TyKind::Tensor(e) => self.collect_generalizable(e, level, out),
            TyKind::Arrow(a, b) => {
                self.collect_generalizable(a, level, out);
                self.collect_generalizable(b, level, out);
            }
            TyKind::Record(fields) => fields.iter().for_each(|(_, f)| self.collect_generalizable(f, level, out)),
            TyKind::Con(_, _, args) => args.iter().for_each(|a| self.collect_generalizable(a, level, out)),
            TyKind::App(head, args) => {
                self.collect_generalizable(head, level, out);
                args.iter().for_each(|a| self.collect_generalizable(a, level, out));
            }
            TyKind::All(_, _, body) => self.collect_generalizable(body, level, out),
            TyKind::Unknown | TyKind::Int | TyKind::Float | TyKind::Bool | TyKind::Char | TyKind::Var(_) => {}
        }
    }

    /// Replaces the quantified variables of a scheme by fresh variables.
    pub fn instantiate(&mut self, scheme: &Ty, level: u32) -> Ty {
        let mut subst = FxHashMap::default();
        let mut pending = Vec::new();
        let mut t = scheme;
        while let TyKind::All(v, fields, body) = t.kind() {
            let m = self.fresh_with_fields(level, Vec::new());
            subst.insert(v.id, m.clone());
            pending.push((m, fields));
            t = body;
        }
        if subst.is_empty() {
            return t.clone();
        }
        for (m, fields) in pending {
            if let TyKind::Meta(id) = m.kind() {
                let fields: Vec<_> = fields.iter().map(|(l, f)| (l.clone(), substitute(f, &subst))).collect();
                self.metas[*id as usize] = Meta::Unbound { level, fields };
            }
        }
        substitute(t, &subst)
    }
}

/// The ids of the type variables in `t`, in order of appearance (and as a
/// set).
fn collect_vars(t: &Ty, out: &mut (Vec<u32>, FxHashSet<u32>)) {
    match t.kind() {
        TyKind::Var(v) if out.1.insert(v.id) => out.0.push(v.id),
        TyKind::Seq(e) | TyKind::Tensor(e) => collect_vars(e, out),
        TyKind::Arrow(a, b) => {
            collect_vars(a, out);
            collect_vars(b, out);
        }
        TyKind::Record(fields) => fields.iter().for_each(|(_, f)| collect_vars(f, out)),
        TyKind::Con(_, _, args) => args.iter().for_each(|a| collect_vars(a, out)),
        TyKind::App(head, args) => {
            collect_vars(head, out);
            args.iter().for_each(|a| collect_vars(a, out));
        }
        TyKind::All(_, fields, body) => {
            fields.iter().for_each(|(_, f)| collect_vars(f, out));
            collect_vars(body, out)
        }
        _ => {}
    }
}

/// Replaces quantified variables by types.
pub(crate) fn substitute(t: &Ty, subst: &FxHashMap<u32, Ty>) -> Ty {
    match t.kind() {
        TyKind::Var(v) => subst.get(&v.id).cloned().unwrap_or_else(|| t.clone()),
        TyKind::Seq(e) => Ty::seq(substitute(e, subst)),
        TyKind::Tensor(e) => Ty::tensor(substitute(e, subst)),
        TyKind::Arrow(a, b) => Ty::arrow(substitute(a, subst), substitute(b, subst)),
        TyKind::Record(fields) => {
            Ty::new(TyKind::Record(fields.iter().map(|(l, f)| (l.clone(), substitute(f, subst))).collect()))
        }
        TyKind::Con(id, name, args) => {
            Ty::new(TyKind::Con(*id, name.clone(), args.iter().map(|a| substitute(a, subst)).collect()))
        }
        // A variable of higher kind replaced by a named type: `Ty::app`
        // makes the application that type with the arguments appended.
        TyKind::App(head, args) => {
            Ty::app(substitute(head, subst), args.iter().map(|a| substitute(a, subst)).collect())
        }
        TyKind::All(v, fields, body) => Ty::new(TyKind::All(
            v.clone(),
            fields.iter().map(|(l, f)| (l.clone(), substitute(f, subst))).collect(),
            substitute(body, subst),
        )),
        TyKind::Unknown | TyKind::Int | TyKind::Float | TyKind::Bool | TyKind::Char | TyKind::Meta(_) => t.clone(),
    }
}

/// `a`, `b`, ..., `z`, `a1`, ...
fn var_name(i: usize) -> String {
    let letter = (b'a' + (i % 26) as u8) as char;
    if i < 26 {
        letter.to_string()
    } else {
        format!("{letter}{}", i / 26)
    }
}
