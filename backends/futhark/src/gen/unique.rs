//! Where generated code may update an array in place (`a with [i] = v`)
//! and consume values, instead of copying them: `set` on an array that
//! nothing uses afterwards, arrays passed to functions that consume them,
//! a `foldl`'s accumulator. Futhark's uniqueness checker judges the
//! result, so this follows its rules (language reference, "In-place
//! updates"), conservatively:
//!
//! - Consuming a value consumes everything it may alias, and nothing
//!   aliased may be used afterwards on the same path. Aliasing is tracked
//!   by *origins*: each variable holding arrays has the set of variables
//!   whose memory it may share. A fresh array (`map`, `iota`,
//!   `replicate`, `++`, a literal, an update, a call of a function whose
//!   result is alias-free) is its own origin; a slice, an element or a
//!   field of something, a `reduce`, a `flatten` or the result of a call
//!   that may return its arguments has the origins of those. A record
//!   holds the origins of all its fields: Futhark 0.22 tracks a record
//!   variable as one, so consuming a field makes every later use of the
//!   record (even of a scalar field) an error.
//! - Only an origin that is a local variable of the function (or entry)
//!   or a parameter declared consuming (`*`) may be consumed. Entry
//!   parameters are never consumed (the engine owns those arrays).
//! - A function's parameter is consuming when its body consumes it at
//!   some site; callers then pass a value they no longer use, or a copy.
//!   A parameter whose type holds more than one array is never consuming:
//!   Futhark 0.22 rejects passing a record variable to a parameter with
//!   several unique fields.
//! - A function's result is alias-free (`*`) when it can alias only
//!   locals and consuming parameters, so that callers may consume it,
//!   and holds one array: Futhark 0.22 takes a returned record variable
//!   with several unique fields as aliasing itself.
//! - Consuming functions are never passed as function values (Futhark
//!   forbids it): `funval` wraps them in a lambda that copies.
//!
//! A tail-recursive function is a `while` loop whose parameters are the
//! function's: a self call in tail position passes the next round's
//! values (a copy unless the value may be consumed), and a round that
//! ends the loop still returns every parameter.

use pmx_ast::Builtin;
use pmx_lower::{Atom, Block, Callee, Expr, FnId, Program, Stmt, Type, Var, VarId};
use rustc_hash::{FxHashMap, FxHashSet};

/// What the writer needs to know about consumption.
#[derive(Default)]
pub struct Unique {
    /// Per function: which parameters are consuming (`*`).
    params: FxHashMap<FnId, Vec<bool>>,
    /// Functions whose result is alias-free (`*`).
    results: FxHashSet<FnId>,
    /// Operands passed without a copy, by the variable their statement
    /// binds and their index: the array of a `set` (0), an argument of a
    /// call (its index), the initial value of a `foldl` (0).
    direct: FxHashSet<(VarId, usize)>,
}

impl Unique {
    pub fn analyse(p: &Program) -> Unique {
        let mut u = Unique::default();
        // Callees come before their callers (a group is one function:
        // only self recursion is generated, as a loop).
        for f in &p.functions {
            let this = (f.recursive && f.tail_recursive).then_some(f.id);
            // Start from every parameter that may be consuming, and drop
            // those the body does not consume until nothing changes (a
            // parameter that is not consuming is not consumable, which
            // may stop other sites).
            let mut assume: Vec<bool> = f.params.iter().map(|v| arrays(&v.ty) == 1).collect();
            loop {
                let mut b = Body::new(&u, this, &f.params, &assume);
                b.run(&f.body);
                let consumed: Vec<bool> = f.params.iter().map(|v| b.consumed.contains(&v.id)).collect();
                if consumed == assume {
                    let alias_free = b.result_roots.iter().all(|o| b.consumable.contains(o));
                    let direct = b.direct;
                    if alias_free && arrays(&f.result) == 1 {
                        u.results.insert(f.id);
                    }
                    u.direct.extend(direct);
                    u.params.insert(f.id, assume);
                    break;
                }
                assume = consumed;
            }
        }
        for e in &p.entries {
            let assume = vec![false; e.params.len()];
            let mut b = Body::new(&u, None, &e.params, &assume);
            b.run(&e.body);
            let direct = b.direct;
            u.direct.extend(direct);
        }
        u
    }

    /// Whether parameter `k` of `f` is consuming.
    pub fn param(&self, f: FnId, k: usize) -> bool {
        self.params.get(&f).is_some_and(|ps| ps.get(k).copied().unwrap_or(false))
    }

    /// Whether `f` has a consuming parameter.
    pub fn consumes(&self, f: FnId) -> bool {
        self.params.get(&f).is_some_and(|ps| ps.iter().any(|&c| c))
    }

    /// Whether `f`'s result is alias-free.
    pub fn result(&self, f: FnId) -> bool {
        self.results.contains(&f)
    }

    /// Whether operand `k` of the statement binding `stmt` is consumed
    /// as it is (otherwise it is copied first).
    pub fn direct(&self, stmt: VarId, k: usize) -> bool {
        self.direct.contains(&(stmt, k))
    }
}

/// How many arrays a value of type `t` holds outside arrays: one for an
/// array, the sum of its fields' for a record.
pub fn arrays(t: &Type) -> usize {
    match t {
        Type::Seq(_) => 1,
        Type::Record(fields) => fields.iter().map(|(_, t)| arrays(t)).sum(),
        _ => 0,
    }
}

/// Origins: sorted, without repeats.
type Roots = Vec<VarId>;

fn union(a: &[VarId], b: &[VarId]) -> Roots {
    let mut out: Roots = a.iter().chain(b).copied().collect();
    out.sort_unstable();
    out.dedup();
    out
}

fn meets(a: &[VarId], live: &FxHashSet<VarId>) -> bool {
    a.iter().any(|o| live.contains(o))
}

/// The analysis of one function or entry body under an assumption about
/// which parameters are consuming.
struct Body<'a> {
    u: &'a Unique,
    /// The tail-recursive function being analysed (its self calls in tail
    /// position are the loop's next round).
    this: Option<FnId>,
    params: Vec<(VarId, Type)>,
    /// The parameters assumed consuming.
    unique: Vec<bool>,
    roots: FxHashMap<VarId, Roots>,
    /// Origins that may be consumed: locals and consuming parameters.
    consumable: FxHashSet<VarId>,
    /// Sequence literals (a `flatten` of one uses its elements).
    literals: FxHashMap<VarId, Vec<Atom>>,
    direct: Vec<(VarId, usize)>,
    /// Origins consumed at a `set`, a call or a `foldl` (not a tail call,
    /// which only passes a value on).
    consumed: FxHashSet<VarId>,
    /// The origins of what the body returns.
    result_roots: Roots,
}

impl<'a> Body<'a> {
    fn new(u: &'a Unique, this: Option<FnId>, params: &[Var], unique: &[bool]) -> Body<'a> {
        let mut b = Body {
            u,
            this,
            params: params.iter().map(|v| (v.id, v.ty.clone())).collect(),
            unique: unique.to_vec(),
            roots: FxHashMap::default(),
            consumable: FxHashSet::default(),
            literals: FxHashMap::default(),
            direct: Vec::new(),
            consumed: FxHashSet::default(),
            result_roots: Vec::new(),
        };
        for (v, &u) in params.iter().zip(unique) {
            if arrays(&v.ty) > 0 {
                b.roots.insert(v.id, vec![v.id]);
            }
            if u {
                b.consumable.insert(v.id);
            }
        }
        b
    }

    fn run(&mut self, body: &Block) {
        self.forward(body);
        let mut live = FxHashSet::default();
        self.backward(body, &mut live, self.this.is_some(), true);
    }

    fn roots(&self, a: &Atom) -> Roots {
        match a {
            Atom::Var(v) => self.roots.get(&v.id).cloned().unwrap_or_default(),
            Atom::Lit(_) => Vec::new(),
        }
    }

    fn roots_of(&self, atoms: &[Atom]) -> Roots {
        let mut out = Vec::new();
        for a in atoms {
            out = union(&out, &self.roots(a));
        }
        out
    }

    /// Whether a function's parameter `k` is consuming (the function
    /// being analysed: as assumed).
    fn param_unique(&self, f: FnId, k: usize) -> bool {
        if Some(f) == self.this {
            return self.unique.get(k).copied().unwrap_or(false);
        }
        self.u.param(f, k)
    }

    /// The origins of every variable bound in `b`, in order.
    fn forward(&mut self, b: &Block) {
        // An `If`'s roots are its branches' results': those first.
        b.for_each_stmt_inner_first(&mut |s| {
            if let Expr::Seq(items) = &s.expr {
                self.literals.insert(s.var.id, items.clone());
            }
            let r = self.stmt_roots(s);
            self.consumable.insert(s.var.id);
            if arrays(&s.var.ty) > 0 {
                self.roots.insert(s.var.id, r);
            }
        });
    }

    /// What the value bound by `s` may alias.
    fn stmt_roots(&mut self, s: &Stmt) -> Roots {
        let y = s.var.id;
        let fresh = vec![y];
        // Everything the node reads, and itself: when unsure.
        let all = |b: &Self| union(&fresh, &b.roots_of(&operands(&s.expr)));
        match &s.expr {
            Expr::Atom(a) => self.roots(a),
            Expr::Prim(b, args) => match b {
                Builtin::Set | Builtin::Concat | Builtin::Cons | Builtin::Snoc | Builtin::Error => fresh,
                // Elements, slices and views of the first argument.
                Builtin::Get
                | Builtin::Head
                | Builtin::Tail
                | Builtin::Reverse
                | Builtin::SplitAt
                | Builtin::Subsequence => self.roots(&args[0]),
                _ => all(self),
            },
            // Futhark takes a literal of arrays to alias its rows (0.22.7:
            // "Unique-typed return value is aliased to" a row).
            Expr::Seq(_) if s.var.ty.elem().is_some_and(|e| arrays(e) > 0) => all(self),
            Expr::Math(..) | Expr::Seq(_) | Expr::Map { .. } | Expr::Create { .. } | Expr::Never => fresh,
            // Futhark types `vjp` and `jvp` as polymorphic functions,
            // whose result aliases their arguments.
            Expr::Derivative { .. } => all(self),
            Expr::Apply(..) | Expr::Closure(..) | Expr::Accelerate { .. } => unreachable!("{}", pmx_lower::HOST_ONLY),
            Expr::Call(g, args) => {
                if self.this != Some(*g) && self.u.result(*g) {
                    return fresh;
                }
                // A result that is not alias-free aliases every argument
                // that is not consumed.
                let mut out = fresh;
                for (k, a) in args.iter().enumerate() {
                    if !self.param_unique(*g, k) {
                        out = union(&out, &self.roots(a));
                    }
                }
                out
            }
            Expr::Record(fields) => {
                let atoms: Vec<Atom> = fields.iter().map(|(_, a)| a.clone()).collect();
                self.roots_of(&atoms)
            }
            Expr::Project(r, _) => self.roots(r),
            Expr::If { then, otherwise, .. } => union(&self.roots(&then.result), &self.roots(&otherwise.result)),
            // Futhark's `reduce` may return its neutral element or an
            // element of the array.
            Expr::Reduce { .. } => all(self),
            Expr::Foldl { f, init, seq } => {
                let mut out = fresh;
                let acc_consumed = match f.callee {
                    Callee::Function(g) => self.param_unique(g, f.bound.len()),
                    _ => false,
                };
                // A loop that consumes its accumulator owns the memory of
                // its initial value (consumed, or a copy): what it returns
                // does not alias what the initial value aliased.
                if !acc_consumed {
                    out = union(&out, &self.roots(init));
                }
                let alias_free = matches!(f.callee, Callee::Function(g) if self.this != Some(g) && self.u.result(g));
                if !alias_free {
                    out = union(&out, &self.roots_of(&f.bound));
                    out = union(&out, &self.roots(seq));
                }
                out
            }
            Expr::Flatten(s) => match s {
                Atom::Var(v) if self.literals.contains_key(&v.id) => fresh,
                _ => self.roots(s),
            },
            Expr::SizeCoerce { seq, .. } => self.roots(seq),
            Expr::SizeEq { .. } | Expr::Utest { .. } => Vec::new(),
            Expr::Con { .. }
            | Expr::IsCon { .. }
            | Expr::Payload { .. }
            | Expr::Loop { .. }
            | Expr::SeqLoopAcc { .. } => all(self),
        }
    }

    /// The origins read by `s` (a `flatten` of a literal reads its
    /// elements: that is what the generated code names).
    fn uses(&self, s: &Stmt) -> Roots {
        let mut out = self.roots_of(&operands(&s.expr));
        if let Expr::Flatten(Atom::Var(v)) = &s.expr {
            if let Some(items) = self.literals.get(&v.id) {
                out = union(&out, &self.roots_of(items));
            }
        }
        out
    }

    /// Whether operand `x` may be consumed where the origins in `live`
    /// are used afterwards and `others` are read by the same statement;
    /// recorded as direct when it may (and, for `real` sites, its origins
    /// as consumed).
    fn site(&mut self, stmt: VarId, k: usize, x: &Atom, others: &[Atom], live: &FxHashSet<VarId>, real: bool) {
        let r = self.roots(x);
        if r.is_empty() || !r.iter().all(|o| self.consumable.contains(o)) || meets(&r, live) {
            return;
        }
        let others = self.roots_of(others);
        if r.iter().any(|o| others.contains(o)) {
            return;
        }
        self.direct.push((stmt, k));
        if real {
            self.consumed.extend(r);
        }
    }

    /// Walks `b` backwards from its end, where the origins in `live` are
    /// used by what follows; leaves in `live` those used before it.
    /// `tail`: the block ends a round of a tail-recursive function's
    /// loop; `top`: it is the body (its result is returned).
    fn backward(&mut self, b: &Block, live: &mut FxHashSet<VarId>, tail: bool, top: bool) {
        let mut stmts: &[Stmt] = &b.stmts;
        let last = match (&b.result, b.stmts.last()) {
            (Atom::Var(v), Some(s)) if s.var.id == v.id => Some(s),
            _ => None,
        };
        let tail_stmt = last.filter(|s| {
            tail && match &s.expr {
                Expr::Call(id, _) => Some(*id) == self.this,
                Expr::If { .. } => true,
                _ => false,
            }
        });
        match tail_stmt {
            Some(s) => {
                stmts = &stmts[..stmts.len() - 1];
                match &s.expr {
                    Expr::Call(g, args) => {
                        // The next round's parameters: nothing follows.
                        for (k, a) in args.iter().enumerate() {
                            if self.param_unique(*g, k) {
                                let others: Vec<Atom> =
                                    args.iter().enumerate().filter(|(j, _)| *j != k).map(|(_, a)| a.clone()).collect();
                                self.site(s.var.id, k, a, &others, &FxHashSet::default(), false);
                            }
                        }
                        live.extend(self.roots_of(args));
                    }
                    Expr::If { then, otherwise, .. } => {
                        let mut other = live.clone();
                        self.backward(then, live, true, top);
                        self.backward(otherwise, &mut other, true, top);
                        live.extend(other);
                    }
                    _ => unreachable!("only calls and ifs are tail statements"),
                }
            }
            None => {
                let r = self.roots(&b.result);
                live.extend(r.iter().copied());
                if top {
                    self.result_roots = union(&self.result_roots, &r);
                }
                if tail {
                    // A round that ends the loop returns every parameter.
                    let params: Vec<VarId> =
                        self.params.iter().filter(|(_, t)| arrays(t) > 0).map(|(v, _)| *v).collect();
                    live.extend(params);
                }
            }
        }
        for s in stmts.iter().rev() {
            self.stmt(s, live);
        }
    }

    fn stmt(&mut self, s: &Stmt, live: &mut FxHashSet<VarId>) {
        let y = s.var.id;
        match &s.expr {
            Expr::If { then, otherwise, .. } => {
                let mut other = live.clone();
                self.backward(then, live, false, false);
                self.backward(otherwise, &mut other, false, false);
                live.extend(other);
                return;
            }
            Expr::Prim(Builtin::Set, args) => {
                self.site(y, 0, &args[0], &args[1..], live, true);
            }
            Expr::Call(g, args) => {
                for (k, a) in args.iter().enumerate() {
                    if self.param_unique(*g, k) {
                        let others: Vec<Atom> =
                            args.iter().enumerate().filter(|(j, _)| *j != k).map(|(_, a)| a.clone()).collect();
                        self.site(y, k, a, &others, live, true);
                    }
                }
            }
            Expr::Foldl { f, init, seq } => {
                if let Callee::Function(g) = f.callee {
                    if self.param_unique(g, f.bound.len()) {
                        let mut others = f.bound.clone();
                        others.push(seq.clone());
                        self.site(y, 0, init, &others, live, true);
                    }
                }
            }
            _ => {}
        }
        live.extend(self.uses(s));
    }
}

/// The atoms a node reads (its blocks' are read by their statements).
fn operands(e: &Expr) -> Vec<Atom> {
    let mut out = Vec::new();
    match e {
        Expr::Atom(a) => out.push(a.clone()),
        Expr::Prim(_, args) | Expr::Math(_, args) | Expr::Call(_, args) | Expr::Seq(args) => {
            out.extend(args.iter().cloned())
        }
        Expr::Record(fields) => out.extend(fields.iter().map(|(_, a)| a.clone())),
        Expr::Project(a, _) | Expr::Flatten(a) => out.push(a.clone()),
        Expr::Con { payload, .. } => out.push(payload.clone()),
        Expr::IsCon { value, .. } | Expr::Payload { value, .. } => out.push(value.clone()),
        Expr::If { cond, .. } => out.push(cond.clone()),
        Expr::Map { f, seqs } => {
            out.extend(f.bound.iter().cloned());
            out.extend(seqs.iter().cloned());
        }
        Expr::Reduce { f, neutral, seq } => {
            out.extend(f.bound.iter().cloned());
            out.push(neutral.clone());
            out.push(seq.clone());
        }
        Expr::Foldl { f, init, seq } => {
            out.extend(f.bound.iter().cloned());
            out.push(init.clone());
            out.push(seq.clone());
        }
        Expr::Derivative { f, args, .. } => {
            out.extend(f.bound.iter().cloned());
            out.extend(args.iter().cloned());
        }
        Expr::Create { len, f } => {
            out.push(len.clone());
            out.extend(f.bound.iter().cloned());
        }
        Expr::Loop { n, f, .. } => {
            out.push(n.clone());
            out.extend(f.bound.iter().cloned());
        }
        Expr::SeqLoopAcc { init, n, f } => {
            out.push(init.clone());
            out.push(n.clone());
            out.extend(f.bound.iter().cloned());
        }
        Expr::SizeEq { seq, size, .. } | Expr::SizeCoerce { seq, size, .. } => {
            out.push(seq.clone());
            out.push(size.clone());
        }
        Expr::Utest { test, expected, using, on_fail } => {
            out.push(test.clone());
            out.push(expected.clone());
            for f in using.iter().chain(on_fail) {
                out.extend(f.bound.iter().cloned());
            }
        }
        Expr::Never => {}
        Expr::Apply(..) | Expr::Closure(..) | Expr::Accelerate { .. } => unreachable!("{}", pmx_lower::HOST_ONLY),
    }
    out
}

#[cfg(test)]
mod tests {
    //! The Futhark-class programs that reach the generator do not recurse
    //! (the well-formedness check rejects recursion the rewrites leave),
    //! so the tail-recursive loop is tested on IR written here.
    use crate::gen::{generate, Options};
    use pmx_ast::{NameId, Span};
    use pmx_lower::{Entry, Function, Lit};

    use super::*;

    fn var(id: u32, name: &str, ty: Type) -> Var {
        Var { id: VarId(id), name: name.into(), ty }
    }

    fn v(x: &Var) -> Atom {
        Atom::Var(x.clone())
    }

    fn int(n: i64) -> Atom {
        Atom::Lit(Lit::Int(n))
    }

    fn stmt(var: &Var, expr: Expr) -> Stmt {
        Stmt { var: var.clone(), expr, span: Span::BUILTIN }
    }

    /// `doubles a i = if geqi i (length a) then a else doubles (set a i
    /// (muli 2 i)) (addi i 1)`, and entries that call it on their
    /// parameter (which must be copied) and on a fresh array (which need
    /// not be).
    fn program() -> Program {
        let ints = Type::seq(Type::Int);
        let (a, i) = (var(0, "a", ints.clone()), var(1, "i", Type::Int));
        let (n, c, r) = (var(2, "n", Type::Int), var(3, "c", Type::Bool), var(4, "r", ints.clone()));
        let (two, a2, i2, r2) =
            (var(5, "two", Type::Int), var(6, "a2", ints.clone()), var(7, "i2", Type::Int), var(8, "r2", ints.clone()));
        let body = Block {
            stmts: vec![
                stmt(&n, Expr::Prim(Builtin::Length, vec![v(&a)])),
                stmt(&c, Expr::Prim(Builtin::Geqi, vec![v(&i), v(&n)])),
                stmt(
                    &r,
                    Expr::If {
                        cond: v(&c),
                        then: Block { stmts: vec![], result: v(&a) },
                        otherwise: Block {
                            stmts: vec![
                                stmt(&two, Expr::Prim(Builtin::Muli, vec![int(2), v(&i)])),
                                stmt(&a2, Expr::Prim(Builtin::Set, vec![v(&a), v(&i), v(&two)])),
                                stmt(&i2, Expr::Prim(Builtin::Addi, vec![v(&i), int(1)])),
                                stmt(&r2, Expr::Call(FnId(0), vec![v(&a2), v(&i2)])),
                            ],
                            result: v(&r2),
                        },
                    },
                ),
            ],
            result: v(&r),
        };
        let doubles = Function {
            id: FnId(0),
            name: "doubles".into(),
            source: "doubles".into(),
            shown: "doubles".into(),
            span: Span::BUILTIN,
            instance: vec![],
            lifted: false,
            params: vec![a, i],
            result: ints.clone(),
            body,
            group: 0,
            recursive: true,
            tail_recursive: true,
            global: None,
            stub: false,
            histogram: None,
        };
        let entry = |k: u32, fresh: bool| {
            let xs = var(100 * k, "xs", ints.clone());
            let (ys, out) = (var(100 * k + 1, "ys", ints.clone()), var(100 * k + 2, "out", ints.clone()));
            let mut stmts = Vec::new();
            let arg = if fresh {
                stmts.push(stmt(&ys, Expr::Prim(Builtin::Concat, vec![v(&xs), v(&xs)])));
                v(&ys)
            } else {
                v(&xs)
            };
            stmts.push(stmt(&out, Expr::Call(FnId(0), vec![arg, int(1)])));
            Entry {
                id: NameId { file: pmx_ast::FileId(0), index: k },
                name: format!("accelerate{k}").into(),
                span: Span::BUILTIN,
                params: vec![xs],
                result: ints.clone(),
                body: Block { stmts, result: v(&out) },
            }
        };
        Program {
            target: pmx_lower::Target::Futhark,
            variants: vec![],
            functions: vec![doubles],
            entries: vec![entry(1, false), entry(2, true)],
            using_names: vec![],
        }
    }

    #[test]
    fn a_tail_recursive_loop_updates_its_parameter_in_place() {
        let p = program();
        let u = Unique::analyse(&p);
        assert!(u.param(FnId(0), 0) && !u.param(FnId(0), 1), "the array parameter is consumed");
        assert!(u.result(FnId(0)));
        let g = generate(&p, &|_| String::new(), &Options::RUN).expect("generated");
        let src = g.source;
        // The channel (the set's check) beside the unique result.
        assert!(src.contains("def doubles (a: *[]i64) (i: i64) : (*[]i64, i64) ="), "{src}");
        assert!(src.contains("(a with [if ok then i else 0] = two)"), "{src}");
        // The entry's parameter belongs to the engine: copied once; the
        // fresh array is consumed as it is.
        assert!(src.contains("doubles (copy xs) 1i64"), "{src}");
        assert!(src.contains("doubles ys 1i64"), "{src}");
        let Ok(futhark) = crate::engine::find() else {
            eprintln!("skipped futhark run: no futhark");
            return;
        };
        let dir = std::env::temp_dir().join(format!("pmx-unique-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let file = dir.join("pmx.fut");
        std::fs::write(&file, &src).expect("writable");
        for (entry, expected) in
            [("accelerate1", "[5i64, 2i64, 4i64]"), ("accelerate2", "[5i64, 2i64, 4i64, 6i64, 8i64, 10i64]")]
        {
            let mut run = std::process::Command::new(&futhark.program)
                .args(["run", "-e", entry])
                .arg(&file)
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("futhark runs");
            use std::io::Write as _;
            run.stdin.take().expect("stdin").write_all(b"[5i64, 6i64, 7i64]").expect("input");
            let out = run.wait_with_output().expect("futhark ran");
            let stdout = String::from_utf8_lossy(&out.stdout);
            assert!(out.status.success(), "{}\n{src}", String::from_utf8_lossy(&out.stderr));
            // The result, then the channel (0: no failure, no utest).
            assert_eq!(stdout.trim(), format!("{expected}\n0i64"), "{entry}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
