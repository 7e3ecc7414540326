//! The writer: functions, entries and statements, one line each where a
//! statement fits on one (so that a failure Futhark reports by line is
//! located at the statement's MExpr span).

use super::names::{label, Namer};
use super::unique::Unique;
use super::{leaves_of, EntryAbi, Line, Unsupported};
use crate::abi::{has_record, Leaf, Step};
use pmx_ast::{is_tuple_labels, Builtin, Span};
use pmx_lower::{Atom, Block, Callee, Entry, Expr, FnId, FunRef, Function, Lit, Math, Program, Stmt, Type, Var, VarId};
use rustc_hash::{FxHashMap, FxHashSet};
use std::fmt::Write;

pub struct Writer<'p> {
    p: &'p Program,
    locate: &'p dyn Fn(Span) -> String,
    pub out: String,
    /// Lines written so far (the next line is `written + 1`).
    written: usize,
    pub lines: Vec<Line>,
    pub errors: Vec<Unsupported>,
    functions: FxHashMap<FnId, String>,
    /// Per function or entry: variable names, and the elements of
    /// sequence literals (a `flatten` of one is a concatenation).
    vars: FxHashMap<VarId, String>,
    literals: FxHashMap<VarId, Vec<Atom>>,
    locals: Namer,
    /// The statement being written (failures are located there).
    span: Span,
    /// Which utests count, the functions that use the channel
    /// (`channel.rs`: counted utests and failed checks), and whether the
    /// function or entry being written does.
    counts: &'p dyn Fn(Span) -> bool,
    counted: FxHashSet<FnId>,
    counting: bool,
    /// Channels of the statements written so far in the enclosing blocks
    /// (variables or literals); a block's channel joins those it added.
    terms: Vec<String>,
    /// What each failure id of a check means (id `k + 1` is `failures[k]`).
    pub failures: Vec<(Span, String)>,
    /// What the expression just written returns (read by `stmt`).
    shape: Shape,
    /// Whether entries keep Futhark's run-time checks (`Options`).
    pub checked: bool,
    /// Which updates are in place and which values are consumed
    /// (`unique.rs`).
    unique: Unique,
    /// The variable the statement being written binds (`Unique::direct`
    /// names operands by it).
    stmt_var: Option<VarId>,
    /// Sequence literals of the function or entry being written whose
    /// every use is as the argument of `flatten`: their rows may differ in
    /// length (a `flatten` concatenates them), so no statement makes them.
    only_flattened: FxHashSet<VarId>,
    /// The program's string literals: what `error` says.
    strings: FxHashMap<VarId, String>,
}

/// What an expression returns where the channel is used (`channel.rs`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// Its value.
    Plain,
    /// `(value, channel)`.
    Pair,
    /// An array of `(element, channel)`.
    Pairs,
}

/// What a tail-recursive function's loop needs while its body is written.
struct TailLoop {
    id: FnId,
    /// The loop's parameters (the function's, shadowed by the loop).
    params: Vec<String>,
    /// The result type's zero (the result slot before the last round).
    zero: String,
    /// The loop's utest count, when the function counts.
    count: Option<String>,
}

/// The message of an index out of bounds (debug mode's starts the same).
const OUT_OF_BOUNDS: &str = "Out of bounds access in sequence";

/// The longest sequence `create` makes: 2^48 elements, more than the
/// memory of any machine holds (debug mode fails on less, at its own
/// memory's size), and few enough that a size in bytes cannot overflow.
const CREATE_MAX: &str = "281474976710656i64";

/// Debug mode's message for a length beyond what a machine can address.
const OUT_OF_MEMORY: &str = "out of memory: the program asked for more memory than a machine can address";

/// `divi a d` or `modi a d` that cannot trap: a divisor of 0 (the check
/// fails elsewhere) is taken as 1, and -1 gives `-a` (wrapping, as every
/// engine) and 0, since the smallest Int divided by -1 overflows, which
/// the machine's division traps on (a crash of the whole process) and
/// Futhark's compiler crashes on when both are constants.
fn division(b: Builtin, a: &str, d: &str) -> String {
    let safe = format!("(if {d} != 0 && {d} != -1 then {d} else 1)");
    if b == Builtin::Divi {
        format!("(if {d} == -1 then 0 - {a} else {a} // {safe})")
    } else {
        format!("(if {d} == -1 then 0 else {a} %% {safe})")
    }
}

/// The message of a check that nested sequences made in Futhark code are
/// regular (debug mode's, `pmx_cpu::checks`, starts the same).
const IRREGULAR: &str = "Irregular sequence found";

/// `x :> t`, where an empty `x` is taken as an empty array of `t`: a
/// size coercion compares every size, also those of the rows of an empty
/// array, which MExpr does not have (an empty sequence of sequences is
/// like any other), so that Futhark's empty arrays with other row sizes
/// (`tail [[1, 2]]`) would fail it. (Sizes under an empty dimension deeper
/// in `x` are still compared.)
fn fit(x: &str, t: &str) -> String {
    match t.strip_prefix('[').and_then(|rest| rest.split_once(']')) {
        Some((_, rows)) if rows.starts_with('[') || rows.starts_with('{') || rows.starts_with('(') => {
            format!("(let fitted = {x} in if length fitted == 0 then ([] : [0]{rows}) :> {t} else fitted :> {t})")
        }
        _ => format!("({x} :> {t})"),
    }
}

/// A value of type `t` whose sizes are `sizes` (in the order `sized`
/// names them), made without anything that may fail: zeros, `false`;
/// with no sizes left, a sequence is `[]` (whose type its use fixes).
fn sized_zero<'a>(t: &Type, sizes: &mut impl Iterator<Item = &'a Size>) -> String {
    match t {
        Type::Int => "0i64".into(),
        Type::Float => "0f64".into(),
        Type::Bool => "false".into(),
        Type::Char => "0i32".into(),
        Type::Seq(el) => {
            let Some(m) = sizes.next().map(|s| s.name.clone()) else { return "[]".into() };
            format!("(replicate {m} {})", sized_zero(el, sizes))
        }
        Type::Record(fields) if is_tuple(fields) => {
            let parts: Vec<String> = fields.iter().map(|(_, t)| sized_zero(t, sizes)).collect();
            format!("({})", parts.join(", "))
        }
        Type::Record(fields) => {
            let parts: Vec<String> =
                fields.iter().map(|(l, t)| format!("{} = {}", label(l), sized_zero(t, sizes))).collect();
            format!("{{{}}}", parts.join(", "))
        }
        Type::Unit | Type::Tensor(_) | Type::Variant(_) => "()".into(),
        Type::Fun(..) | Type::Opaque(..) => unreachable!("{}", pmx_lower::HOST_ONLY),
    }
}

/// `x` (of type `ty`, sizes `sizes` from the value itself) as the sized
/// type `t`, where a check of the channel already says whether it has
/// those sizes: zeros of them where it has not, so that nothing fails
/// here (Futhark's failing coercion would stop the program before the
/// channel reports the failure that debug mode reports first).
fn fit_checked(x: &str, t: &str, ty: &Type, sizes: &[Size]) -> String {
    format!(
        "(let fitted = {x} in if {} then {} else {})",
        same_sizes("fitted", sizes),
        fit("fitted", t),
        sized_zero(ty, &mut sizes.iter())
    )
}

/// The sizes of an array of `n` rows whose sizes are `rows`.
fn rows_of(n: &str, rows: &[Size]) -> Vec<Size> {
    let mut out = vec![Size { name: n.to_string(), path: String::new(), outer: 0 }];
    out.extend(rows.iter().map(|s| Size { name: s.name.clone(), path: format!("[0]{}", s.path), outer: s.outer + 1 }));
    out
}

/// `a ++ b ++ ...`: a new array, as `unique.rs` takes a flattened
/// literal to be (one row alone is copied, not aliased).
fn fresh_join(parts: &[String]) -> String {
    match parts {
        [one] => format!("(copy {one})"),
        _ => parts.join(" ++ "),
    }
}

/// How many sequence types `t` holds (each a size of a value of it).
fn seqs_in(t: &Type) -> usize {
    match t {
        Type::Seq(el) => 1 + seqs_in(el),
        Type::Record(fields) => fields.iter().map(|(_, f)| seqs_in(f)).sum(),
        _ => 0,
    }
}

/// Whether a function reference is `concat` itself.
fn is_concat(f: &FunRef) -> bool {
    matches!(f.callee, Callee::Builtin(Builtin::Concat)) && f.bound.is_empty()
}

/// Whether a value of type `t` holds sequences (whose sizes a Futhark
/// array of such values fixes).
fn has_seq(t: &Type) -> bool {
    match t {
        Type::Seq(_) => true,
        Type::Record(fields) => fields.iter().any(|(_, f)| has_seq(f)),
        _ => false,
    }
}

/// A size of a type, named (`Writer::sizes_from`): where it is (a path
/// of `[0]` and field accesses from the value), and how many sizes of
/// sequences around it come before it in the list.
pub(super) struct Size {
    name: String,
    path: String,
    outer: usize,
}

/// Whether `x` has the sizes `sizes` (an empty sequence hides those
/// inside it).
fn same_sizes(x: &str, sizes: &[Size]) -> String {
    let mut tests = Vec::new();
    let mut around: Vec<&str> = Vec::new();
    for s in sizes {
        around.truncate(s.outer);
        let here = format!("length {x}{} == {}", s.path, s.name);
        tests.push(if around.is_empty() {
            here
        } else {
            let hidden: Vec<String> = around.iter().map(|m| format!("{m} == 0")).collect();
            format!("({} || {here})", hidden.join(" || "))
        });
        around.push(&s.name);
    }
    if tests.is_empty() {
        "true".into()
    } else {
        tests.join(" && ")
    }
}

/// Channels joined left to right (`channel.rs`), `0i64` for none.
fn join_channels(terms: &[String]) -> String {
    let join = super::channel::JOIN;
    match terms.split_first() {
        None => "0i64".into(),
        Some((first, rest)) => rest.iter().fold(first.clone(), |acc, t| format!("({join} {acc} {t})")),
    }
}

/// The sequence literals of a body whose every use is as the argument of
/// `flatten`.
pub(super) fn only_flattened(body: &Block) -> FxHashSet<VarId> {
    let mut literals = FxHashSet::default();
    let mut flattened = FxHashSet::default();
    let mut other_uses = FxHashSet::default();
    body.for_each_stmt(&mut |s| {
        if matches!(&s.expr, Expr::Seq(items) if !items.is_empty()) {
            literals.insert(s.var.id);
        }
        for a in s.expr.operands() {
            if let Atom::Var(v) = a {
                if matches!(s.expr, Expr::Flatten(_)) {
                    flattened.insert(v.id);
                } else {
                    other_uses.insert(v.id);
                }
            }
        }
    });
    body.for_each_result(&mut |a| {
        if let Atom::Var(v) = a {
            other_uses.insert(v.id);
        }
    });
    literals.retain(|v| flattened.contains(v) && !other_uses.contains(v));
    literals
}

fn is_tuple(fields: &[(pmx_ast::SmolStr, Type)]) -> bool {
    fields.len() > 1 && is_tuple_labels(fields.iter().map(|(l, _)| l))
}

fn ind(depth: usize) -> String {
    "  ".repeat(depth)
}

impl<'p> Writer<'p> {
    pub fn new(
        p: &'p Program,
        locate: &'p dyn Fn(Span) -> String,
        counts: &'p dyn Fn(Span) -> bool,
        checked: bool,
    ) -> Writer<'p> {
        let mut globals = Namer::default();
        let mut functions = FxHashMap::default();
        // Entries keep their binding's name (it is the C symbol's suffix);
        // functions get the names left.
        for e in &p.entries {
            globals.reserve(&super::names::sanitize(&e.name));
        }
        for f in &p.functions {
            functions.insert(f.id, globals.fresh(&f.name));
        }
        Writer {
            p,
            locate,
            out: String::new(),
            written: 0,
            lines: Vec::new(),
            errors: Vec::new(),
            functions,
            vars: FxHashMap::default(),
            literals: FxHashMap::default(),
            locals: Namer::default(),
            span: Span::BUILTIN,
            counts,
            counted: super::channel::channel_functions(p, super::channel::Uses { counts, checked }),
            counting: false,
            terms: Vec::new(),
            shape: Shape::Plain,
            checked,
            failures: Vec::new(),
            unique: Unique::analyse(p),
            stmt_var: None,
            only_flattened: FxHashSet::default(),
            strings: p.string_literals(),
        }
    }

    pub fn line(&mut self, depth: usize, text: &str) {
        if text.is_empty() {
            self.out.push('\n');
            self.written += 1;
            return;
        }
        for l in text.lines() {
            self.out.push_str(&ind(depth));
            self.out.push_str(l);
            self.out.push('\n');
            self.written += 1;
        }
    }

    /// Records that the next line may fail, at the current statement.
    fn mark(&mut self, what: Option<&str>) {
        match what {
            Some(what) => self.locate_as(what),
            None => self.locate_next(),
        }
    }

    /// Locates failures Futhark reports at the next line (an operation
    /// that a `check` before it guards) at the statement being written,
    /// as `what`.
    fn locate_as(&mut self, what: &str) {
        self.locate_next();
        if let Some(l) = self.lines.last_mut() {
            l.what = Some(what.to_string());
        }
    }

    /// A check of the statement being written, on a line of its own:
    /// its channel (`channel.rs`) is 0, or `-id` where `cond` does not
    /// hold, `failures[id - 1]` saying what failed where. The operation it
    /// guards is written so that it cannot fail where the check fails
    /// (`checked_prim`), and where Futhark still fails first, the line
    /// locates it the same way. Under `--unchecked`, nothing.
    fn check(&mut self, cond: &str, what: &str, depth: usize) {
        self.check_counting(cond, what, "0i64", depth);
    }

    /// `check`, with channel `ok` where `cond` holds (1 for a utest that
    /// counts).
    fn check_counting(&mut self, cond: &str, what: &str, ok: &str, depth: usize) {
        if !self.checked && ok == "0i64" {
            return;
        }
        if !self.counting {
            self.unsupported(format!("internal error: a check ({what}) where no channel is returned"));
            return;
        }
        self.failures.push((self.span, what.to_string()));
        let id = self.failures.len();
        let e = self.locals.fresh("e");
        self.locate_as(what);
        let cond = if self.checked { cond } else { "true" };
        self.line(depth, &format!("let {e} = if {cond} then {ok} else -{id}i64"));
        self.terms.push(e);
    }

    /// Locates failures Futhark reports at the next line (a call's, a
    /// loop's) at the current statement, whose own failures are its
    /// callee's (`applies_failing`).
    fn locate_next(&mut self) {
        let line = Line { line: self.written + 1, span: self.span, what: None };
        self.lines.push(line);
    }

    fn unsupported(&mut self, message: impl Into<String>) {
        self.errors.push(Unsupported { span: self.span, message: message.into() });
    }

    fn begin(&mut self, span: Span, counting: bool, body: &Block) {
        self.only_flattened = only_flattened(body);
        self.counting = counting;
        self.terms.clear();
        self.vars.clear();
        self.literals.clear();
        self.locals = Namer::default();
        // Function names stay visible inside bodies.
        for name in self.functions.values() {
            self.locals.reserve(name);
        }
        self.span = span;
    }

    fn bind(&mut self, v: &Var) -> String {
        let name = self.locals.fresh(&v.name);
        self.vars.insert(v.id, name.clone());
        name
    }

    fn var(&self, v: &Var) -> String {
        self.vars.get(&v.id).cloned().unwrap_or_else(|| super::names::sanitize(&v.name))
    }

    fn atom(&self, a: &Atom) -> String {
        match a {
            Atom::Var(v) => self.var(v),
            Atom::Lit(l) => lit(l),
        }
    }

    /// A Futhark type with anonymous sizes.
    fn ty(&mut self, t: &Type) -> String {
        match t {
            Type::Int => "i64".into(),
            Type::Float => "f64".into(),
            Type::Bool => "bool".into(),
            Type::Char => "i32".into(),
            Type::Unit => "()".into(),
            Type::Seq(e) => format!("[]{}", self.ty(e)),
            Type::Record(fields) if is_tuple(fields) => {
                let parts: Vec<String> = fields.iter().map(|(_, t)| self.ty(t)).collect();
                format!("({})", parts.join(", "))
            }
            Type::Record(fields) => {
                let parts: Vec<String> = fields.iter().map(|(l, t)| format!("{}: {}", label(l), self.ty(t))).collect();
                format!("{{{}}}", parts.join(", "))
            }
            Type::Tensor(_) => {
                self.unsupported("tensors in Futhark code");
                "()".into()
            }
            Type::Variant(v) => {
                let name = self.p.variant(*v).map(|d| d.name.to_string()).unwrap_or_default();
                self.unsupported(format!("values of the variant type {name} in Futhark code"));
                "()".into()
            }
            Type::Fun(..) | Type::Opaque(..) => unreachable!("{}", pmx_lower::HOST_ONLY),
        }
    }

    /// A Futhark type whose arrays are unique (`*`): a consuming
    /// parameter, an alias-free result.
    fn uty(&mut self, t: &Type) -> String {
        match t {
            Type::Seq(_) => format!("*{}", self.ty(t)),
            Type::Record(fields) if is_tuple(fields) => {
                let parts: Vec<String> = fields.iter().map(|(_, t)| self.uty(t)).collect();
                format!("({})", parts.join(", "))
            }
            Type::Record(fields) => {
                let parts: Vec<String> = fields.iter().map(|(l, t)| format!("{}: {}", label(l), self.uty(t))).collect();
                format!("{{{}}}", parts.join(", "))
            }
            _ => self.ty(t),
        }
    }

    /// A value of type `t` that is never looked at (the result slot of a
    /// loop before its last round).
    fn zero(&mut self, t: &Type) -> String {
        if let Type::Tensor(_) | Type::Variant(_) = t {
            // Not in Futhark code: said by `ty`.
            self.ty(t);
        }
        sized_zero(t, &mut std::iter::empty())
    }

    fn comment_for(&self, what: &str, span: Span) -> String {
        format!("-- {what} at {}", (self.locate)(span))
    }

    pub fn function(&mut self, f: &Function) {
        self.begin(f.span, self.counted.contains(&f.id), &f.body);
        let mut head = self.comment_for(&f.source, f.span);
        if !f.instance.is_empty() {
            let inst: Vec<String> = f.instance.iter().map(|(v, t)| format!("{v} = {t}")).collect();
            let _ = write!(head, ", instance {}", inst.join(", "));
        }
        self.line(0, &head);
        if f.recursive && !f.tail_recursive {
            self.unsupported(format!(
                "`{}` is recursive, and not only in tail position (Futhark has no recursion; tail recursion becomes \
                 a loop)",
                f.source
            ));
        }
        let params: Vec<String> = f
            .params
            .iter()
            .enumerate()
            .map(|(k, v)| {
                let name = self.bind(v);
                let t = if self.unique.param(f.id, k) { self.uty(&v.ty) } else { self.ty(&v.ty) };
                format!("({name}: {t})")
            })
            .collect();
        let name = self.functions[&f.id].clone();
        let result = if self.unique.result(f.id) { self.uty(&f.result) } else { self.ty(&f.result) };
        let result = if self.counting { format!("({result}, i64)") } else { result };
        let params = if params.is_empty() { String::new() } else { format!(" {}", params.join(" ")) };
        self.line(0, &format!("def {name}{params} : {result} ="));
        if f.recursive && f.tail_recursive {
            self.tail_loop(f);
        } else {
            self.nested(&f.body, 1);
        }
        self.line(0, "");
    }

    /// A tail-recursive function as a `while` loop over its parameters:
    /// a tail call is another round with new parameters, a result ends
    /// the loop.
    fn tail_loop(&mut self, f: &Function) {
        let params: Vec<String> = f.params.iter().map(|v| self.var(v)).collect();
        let zero = self.zero(&f.result);
        let go = self.locals.fresh("go");
        let res = self.locals.fresh("res");
        // A function that counts utests carries the count in the loop.
        let count = self.counting.then(|| self.locals.fresh("cnt"));
        let mut pattern = vec![go.clone(), res.clone()];
        let mut init = vec!["true".to_string(), zero.clone()];
        let mut kept = res.clone();
        if let Some(c) = &count {
            pattern.push(c.clone());
            init.push("0i64".into());
            kept = format!("{res}, {c}");
        }
        pattern.extend(params.iter().cloned());
        init.extend(params.iter().cloned());
        let ignored: Vec<&str> = std::iter::repeat_n("_", params.len()).collect();
        let rest = if ignored.is_empty() { String::new() } else { format!(", {}", ignored.join(", ")) };
        self.line(1, &format!("let (_, {kept}{rest}) ="));
        // A failure ends the loop, as it ends the interpreter's recursion
        // (the rounds after it would run on values a failed check gave).
        let cond = match &count {
            Some(c) => format!("{go} && {c} >= 0"),
            None => go.clone(),
        };
        self.line(2, &format!("loop ({}) = ({}) while {cond} do", pattern.join(", "), init.join(", ")));
        let tail = TailLoop { id: f.id, params, zero, count };
        self.tail_block(&f.body, &tail, 3);
        let result = if self.counting { format!("({kept})") } else { res };
        self.line(1, &format!("in {result}"));
    }

    /// A block in tail position of a loop body: its value is the loop's
    /// next state.
    fn tail_block(&mut self, b: &Block, t: &TailLoop, depth: usize) {
        let last = match (&b.result, b.stmts.last()) {
            (Atom::Var(v), Some(s)) if s.var.id == v.id => Some(s),
            _ => None,
        };
        let tail_stmt = last.filter(|s| match &s.expr {
            Expr::Call(id, _) => *id == t.id,
            Expr::If { .. } => true,
            _ => false,
        });
        let n = if tail_stmt.is_some() { b.stmts.len() - 1 } else { b.stmts.len() };
        let before = self.written;
        for st in &b.stmts[..n] {
            self.stmt(st, depth);
        }
        // The channel so far: the loop's and this round's statements'.
        let count = t.count.as_ref().map(|c| {
            let mut all = vec![c.clone()];
            all.extend(self.terms.iter().cloned());
            format!("{}, ", join_channels(&all))
        });
        let count = count.unwrap_or_default();
        // A block without statements is the bare expression.
        let lead = if self.written == before { "" } else { "in " };
        let Some(s) = tail_stmt else {
            let r = self.atom(&b.result);
            let state = format!("(false, {r}, {count}{})", t.params.join(", "));
            self.line(depth, &format!("{lead}{state}"));
            return;
        };
        self.span = s.span;
        match &s.expr {
            Expr::Call(_, args) => {
                // A consumed parameter gets a value nothing else uses, or
                // a copy.
                let args: Vec<String> =
                    args.iter().enumerate().map(|(k, a)| self.consumed_arg(t.id, s.var.id, k, a)).collect();
                let state = format!("(true, {}, {count}{})", t.zero, args.join(", "));
                self.line(depth, &format!("{lead}{state}"));
            }
            Expr::If { cond, then, otherwise } => {
                let c = self.atom(cond);
                self.line(depth, &format!("{lead}if {c} then"));
                let mark = self.terms.len();
                self.tail_block(then, t, depth + 1);
                self.terms.truncate(mark);
                self.line(depth, "else");
                self.tail_block(otherwise, t, depth + 1);
                self.terms.truncate(mark);
            }
            _ => unreachable!("only calls and ifs are tail statements"),
        }
    }

    pub fn entry(&mut self, e: &Entry) -> Option<EntryAbi> {
        let uses = super::channel::Uses { counts: self.counts, checked: self.checked };
        let counting = super::channel::block_uses(&e.body, uses, &self.counted);
        self.begin(e.span, counting, &e.body);
        let comment = self.comment_for("accelerate", e.span);
        self.line(0, &comment);
        let mut inputs = Vec::new();
        let mut params = Vec::new();
        let mut sizes = Vec::new();
        let mut rebuild = Vec::new();
        for v in &e.params {
            let leaves = match leaves_of(&v.ty) {
                Ok(l) => l,
                Err(why) => {
                    self.unsupported(why);
                    return None;
                }
            };
            let name = self.bind(v);
            // A parameter that is one leaf crosses as it is; others are
            // rebuilt from leaf parameters named after their paths.
            if leaves.len() == 1 && leaves[0].path.iter().all(|s| *s == Step::Elems) {
                params.push(format!("({name}: {})", self.ty(&v.ty)));
            } else {
                let mut leaf_names = Vec::new();
                // The leaves of a sequence of records share its length.
                let outer = matches!(v.ty, Type::Seq(_)).then(|| self.locals.fresh(&format!("n_{name}")));
                if let Some(n) = &outer {
                    sizes.push(format!("[{n}]"));
                }
                for l in &leaves {
                    let leaf = self.locals.fresh(&format!("{name}_{}", path_name(&l.path)));
                    let t = l.futhark_type();
                    let t = match &outer {
                        Some(n) => format!("[{n}]{}", &t[2..]),
                        None => t,
                    };
                    params.push(format!("({leaf}: {t})"));
                    leaf_names.push(leaf);
                }
                let mut it = leaf_names.into_iter();
                let value = self.assemble(&v.ty, &mut it, outer.as_deref(), "");
                rebuild.push(format!("let {name} = {value}"));
            }
            inputs.extend(leaves);
        }
        let outputs = match leaves_of(&e.result) {
            Ok(l) => l,
            Err(why) => {
                self.unsupported(why);
                return None;
            }
        };
        // An entry that counts utests returns the count last.
        let dummy_output = outputs.is_empty() && !counting;
        let mut out_types: Vec<String> = outputs.iter().map(Leaf::futhark_type).collect();
        if counting {
            out_types.push("i64".into());
        }
        let result_type = match out_types.len() {
            0 => "bool".to_string(),
            1 => out_types[0].clone(),
            _ => format!("({})", out_types.join(", ")),
        };
        let name = super::names::sanitize(&e.name);
        let sizes = if sizes.is_empty() { String::new() } else { format!(" {}", sizes.join(" ")) };
        // An entry without parameters is a constant, which Futhark
        // computes when the context is made, where a failure could not be
        // told apart from a failure to make it: such entries take an
        // unused `i64`.
        let dummy_input = params.is_empty();
        if dummy_input {
            params.push("(_: i64)".into());
        }
        self.line(0, &format!("entry {name}{sizes} {} : {result_type} =", params.join(" ")));
        if !self.checked {
            self.line(1, "#[unsafe]");
        }
        let before = self.written;
        for r in rebuild {
            self.line(1, &r);
        }
        let r = self.block(&e.body, 1);
        let mut parts = self.extract(&e.result, &r, 0);
        if counting {
            parts.push(self.count_since(0));
        }
        let value = match parts.len() {
            0 => "true".to_string(),
            1 => parts[0].clone(),
            _ => format!("({})", parts.join(", ")),
        };
        let lead = if self.written == before { "" } else { "in " };
        self.line(1, &format!("{lead}{value}"));
        self.line(0, "");
        Some(EntryAbi {
            id: e.id,
            name,
            params: e.params.iter().map(|v| v.ty.clone()).collect(),
            inputs,
            dummy_input,
            result: e.result.clone(),
            outputs,
            dummy_output,
            counts: counting,
        })
    }

    /// A value of type `t` from its leaf parameters; `n` is the length
    /// shared by the leaves of a sequence of records, `index` the element
    /// being built inside one.
    fn assemble(
        &mut self,
        t: &Type,
        leaves: &mut impl Iterator<Item = String>,
        n: Option<&str>,
        index: &str,
    ) -> String {
        match t {
            Type::Unit => "()".into(),
            Type::Record(fields) => {
                let parts: Vec<(String, String)> =
                    fields.iter().map(|(l, ft)| (label(l), self.assemble(ft, leaves, n, index))).collect();
                if is_tuple(fields) {
                    format!("({})", parts.into_iter().map(|(_, v)| v).collect::<Vec<_>>().join(", "))
                } else {
                    let parts: Vec<String> = parts.into_iter().map(|(l, v)| format!("{l} = {v}")).collect();
                    format!("{{{}}}", parts.join(", "))
                }
            }
            Type::Seq(e) if has_record(e) && index.is_empty() => {
                let i = self.locals.fresh("i");
                let n = n.unwrap_or("0").to_string();
                let elem = self.assemble(e, leaves, Some(&n), &format!("[{i}]"));
                format!("map (\\{i} -> {elem}) (iota {n})")
            }
            _ => format!("{}{index}", leaves.next().unwrap_or_default()),
        }
    }

    /// The leaves of a value `v` of type `t` as expressions.
    fn extract(&mut self, t: &Type, v: &str, depth: usize) -> Vec<String> {
        match t {
            Type::Unit => Vec::new(),
            Type::Record(fields) => {
                let mut out = Vec::new();
                for (l, ft) in fields {
                    let field = if is_tuple(fields) { l.to_string() } else { label(l) };
                    out.extend(self.extract(ft, &format!("{v}.{field}"), depth));
                }
                out
            }
            Type::Seq(e) if has_record(e) => {
                let x = format!("x{depth}");
                self.extract(e, &x, depth + 1).into_iter().map(|inner| format!("map (\\{x} -> {inner}) {v}")).collect()
            }
            _ => vec![v.to_string()],
        }
    }

    /// The statements of a block (each ending without `in`); returns the
    /// block's result.
    fn block(&mut self, b: &Block, depth: usize) -> String {
        for st in &b.stmts {
            self.stmt(st, depth);
        }
        self.atom(&b.result)
    }

    /// The channel of the statements added since `mark`: their channels
    /// joined in order (`channel.rs`).
    fn count_since(&self, mark: usize) -> String {
        join_channels(&self.terms[mark..])
    }

    /// A nested block as an expression: `let ... in r`, or `r` (with the
    /// count of its statements, `(r, c)`, when counting).
    fn nested(&mut self, b: &Block, depth: usize) {
        let mark = self.terms.len();
        let before = self.written;
        let r = self.block(b, depth);
        let r = if self.counting { format!("({r}, {})", self.count_since(mark)) } else { r };
        self.terms.truncate(mark);
        let text = if self.written == before { r } else { format!("in {r}") };
        self.line(depth, &text);
    }

    fn stmt(&mut self, s: &Stmt, depth: usize) {
        let outer = self.span;
        if s.span != Span::BUILTIN {
            self.span = s.span;
        }
        self.write_stmt(s, depth);
        self.span = outer;
    }

    fn write_stmt(&mut self, s: &Stmt, depth: usize) {
        let name = self.bind(&s.var);
        self.stmt_var = Some(s.var.id);
        match &s.expr {
            Expr::If { cond, then, otherwise } => {
                let c = self.atom(cond);
                if self.counting {
                    let count = self.locals.fresh("c");
                    self.line(depth, &format!("let ({name}, {count}) ="));
                    self.terms.push(count);
                } else {
                    self.line(depth, &format!("let {name} ="));
                }
                self.line(depth + 1, &format!("if {c} then"));
                self.nested(then, depth + 2);
                self.line(depth + 1, "else");
                self.nested(otherwise, depth + 2);
            }
            Expr::Seq(items) => {
                self.literals.insert(s.var.id, items.clone());
                // Only flattened: its rows are concatenated where it is.
                if !self.only_flattened.contains(&s.var.id) {
                    let e = self.seq_literal(items, s.var.ty.elem(), depth);
                    self.line(depth, &format!("let {name} = {e}"));
                }
            }
            other => {
                self.shape = Shape::Plain;
                let e = self.expr(other, &s.var.ty, depth);
                match std::mem::replace(&mut self.shape, Shape::Plain) {
                    Shape::Plain => self.line(depth, &format!("let {name} = {e}")),
                    Shape::Pair => {
                        let count = self.locals.fresh("c");
                        self.line(depth, &format!("let ({name}, {count}) = {e}"));
                        self.terms.push(count);
                    }
                    Shape::Pairs => {
                        // Joined at once: `unzip`'s results alias each
                        // other, and the array may be consumed after.
                        let (counts, c) = (self.locals.fresh("cs"), self.locals.fresh("c"));
                        self.line(depth, &format!("let ({name}, {counts}) = unzip ({e})"));
                        self.line(depth, &format!("let {c} = reduce {} 0i64 {counts}", super::channel::JOIN));
                        self.terms.push(c);
                    }
                }
            }
        }
    }

    /// Whether `a` names an empty sequence literal.
    fn empty_literal(&self, a: &Atom) -> bool {
        matches!(a, Atom::Var(v) if self.literals.get(&v.id).is_some_and(|items| items.is_empty()))
    }

    /// A sequence literal; rows of a literal of arrays are coerced to the
    /// first row's sizes (lets before it name them), a check that fails
    /// where the rows differ, as debug mode's does. It is `opaque`: from
    /// an array it knows, Futhark 0.22.7's simplifier computes what uses
    /// it at compile time and drops the checks on the way (an index past
    /// the end, an `assert` on the result).
    fn seq_literal(&mut self, items: &[Atom], elem: Option<&Type>, depth: usize) -> String {
        let values: Vec<String> = items.iter().map(|a| self.atom(a)).collect();
        if values.is_empty() {
            // Typed, every size 0 (a size left open is ambiguous to
            // Futhark; an empty sequence hides the sizes inside it).
            // Of sizes Futhark cannot know (`opaque 0i64`): with sizes in
            // its type (`[] : [0][0]i64`), 0.22.7's and 0.25.8's
            // simplifiers fail on a fold whose accumulator starts with
            // other sizes ("Type error after pass 'simplify'").
            return match elem {
                // Each size its own expression: with the same one twice,
                // 0.22.7 takes the sizes for one and fails where they meet
                // others ("Type annotation is [?0][?0]i64").
                Some(e) => {
                    let sizes: Vec<Size> = (1..=seqs_in(e))
                        .map(|k| Size { name: format!("(opaque {k}i64 - {k}i64)"), path: String::new(), outer: 0 })
                        .collect();
                    format!("opaque (replicate (opaque 0i64) {})", sized_zero(e, &mut sizes.iter()))
                }
                None => "[]".into(),
            };
        }
        match elem {
            Some(row) if values.len() > 1 && has_seq(row) => {
                let (t, sizes) = self.named_sizes(row, &values[0], depth);
                let alike: Vec<String> = values[1..].iter().map(|v| format!("({})", same_sizes(v, &sizes))).collect();
                self.check(&alike.join(" && "), IRREGULAR, depth);
                let rows: Vec<String> = values.iter().map(|v| fit_checked(v, &t, row, &sizes)).collect();
                self.locate_as(IRREGULAR);
                format!("opaque [{}]", rows.join(", "))
            }
            _ => format!("opaque [{}]", values.join(", ")),
        }
    }

    /// A node as an expression (lets it needs are written first). Lines
    /// that can fail are marked.
    fn expr(&mut self, e: &Expr, ty: &Type, depth: usize) -> String {
        match e {
            Expr::Atom(a) => self.atom(a),
            Expr::Prim(Builtin::Set, args) => {
                let in_place = self.stmt_var.is_some_and(|v| self.unique.direct(v, 0));
                let elem = args[0].ty().elem().cloned();
                let args: Vec<String> = args.iter().map(|a| self.atom(a)).collect();
                self.set(&args, elem.as_ref(), in_place, Some(depth))
            }
            // `[] ++ s` is a copy of `s`: written as a concatenation,
            // Futhark 0.22's simplifier folds it with later literals into
            // an array whose size then contradicts a size coercion around
            // it (an internal compiler error).
            Expr::Prim(Builtin::Concat, args) if args.iter().any(|a| self.empty_literal(a)) => {
                let other = if self.empty_literal(&args[0]) { &args[1] } else { &args[0] };
                format!("(copy {})", self.atom(other))
            }
            // Sequences of sequences joined: one row type.
            Expr::Prim(b @ (Builtin::Concat | Builtin::Cons | Builtin::Snoc), args)
                if ty.elem().is_some_and(has_seq) =>
            {
                let row = ty.elem().cloned().expect("a sequence of sequences");
                let args: Vec<String> = args.iter().map(|a| self.atom(a)).collect();
                let single = |x: &str| format!("[{x}]");
                let (a, b) = match b {
                    Builtin::Cons => (single(&args[0]), args[1].clone()),
                    Builtin::Snoc => (args[0].clone(), single(&args[1])),
                    _ => (args[0].clone(), args[1].clone()),
                };
                let (la, lb) = (self.locals.fresh("s"), self.locals.fresh("s"));
                self.line(depth, &format!("let {la} = {a}"));
                self.line(depth, &format!("let {lb} = {b}"));
                self.join_rows(&row, &la, &lb, depth)
            }
            Expr::Prim(Builtin::Error, args) => {
                let what = pmx_lower::error_text(&self.strings, &args[0]);
                self.check("false", &what, depth);
                self.zero(ty)
            }
            Expr::Prim(b, args) => {
                let args: Vec<String> = args.iter().map(|a| self.atom(a)).collect();
                match self.checked_prim(*b, &args, ty, depth) {
                    Some(e) => e,
                    None => self.prim(*b, &args, ty),
                }
            }
            Expr::Math(m, args) => {
                let args: Vec<String> = args.iter().map(|a| self.atom(a)).collect();
                math(*m, &args)
            }
            Expr::Call(id, args) => {
                let name = self.functions.get(id).cloned().unwrap_or_else(|| format!("f{}", id.0));
                let stmt = self.stmt_var;
                let args: Vec<String> = args
                    .iter()
                    .enumerate()
                    .map(|(k, a)| match stmt {
                        Some(v) => self.consumed_arg(*id, v, k, a),
                        None => self.atom(a),
                    })
                    .collect();
                // A failure inside the callee is located there; the call
                // line locates failures Futhark reports only by caller.
                self.locate_next();
                if self.counted.contains(id) {
                    self.shape = Shape::Pair;
                }
                if args.is_empty() {
                    name
                } else {
                    format!("{name} {}", args.join(" "))
                }
            }
            Expr::Record(fields) => {
                let is_tup = fields.len() > 1 && is_tuple_labels(fields.iter().map(|(l, _)| l));
                let parts: Vec<String> = fields
                    .iter()
                    .map(|(l, a)| if is_tup { self.atom(a) } else { format!("{} = {}", label(l), self.atom(a)) })
                    .collect();
                if is_tup {
                    format!("({})", parts.join(", "))
                } else {
                    format!("{{{}}}", parts.join(", "))
                }
            }
            Expr::Project(r, l) => {
                let tuple = matches!(r.ty(), Type::Record(ref fs) if is_tuple(fs));
                let field = if tuple { l.to_string() } else { label(l) };
                format!("{}.{field}", self.atom(r))
            }
            Expr::Seq(items) => self.seq_literal(items, ty.elem(), depth),
            Expr::Map { f: fr, seqs } => {
                let names: Vec<String> = seqs.iter().map(|a| self.atom(a)).collect();
                let mut shortest = None;
                if names.len() > 1 {
                    // `map2` needs equal lengths: checked against the
                    // first's, on a line of its own, before the function
                    // runs on the first elements (as debug mode checks
                    // the lengths first); then the function runs over
                    // the indices all have (below).
                    let first = self.locals.fresh("n");
                    self.line(depth, &format!("let {first} = length {}", names[0]));
                    let message = "map2 on sequences of different lengths";
                    let equal: Vec<String> = names.iter().skip(1).map(|s| format!("length {s} == {first}")).collect();
                    self.check(&equal.join(" && "), message, depth);
                    shortest = Some(first);
                }
                // The first elements, for the sizes of the results: the
                // others read as in the map below.
                let mut firsts: Vec<String> = names.iter().take(1).map(|s| format!("{s}[0]")).collect();
                for (s, sq) in names.iter().zip(seqs).skip(1) {
                    let elem = sq.ty().elem().cloned().unwrap_or(Type::Unit);
                    firsts.push(self.element(s, &format!("0 < length {s}"), "0", &elem));
                }
                let guard = match &shortest {
                    Some(n) => n.clone(),
                    None => names.first().map(|s| format!("length {s}")).unwrap_or_default(),
                };
                let f = self.sized_funval(fr, &firsts, &guard, depth);
                if self.fun_counts(fr) {
                    self.shape = Shape::Pairs;
                }
                match (names.as_slice(), shortest) {
                    ([s], _) => format!("map {f} {s}"),
                    ([], _) => "[]".into(),
                    // Over the first's indices (so that a fold that maps
                    // over its accumulator keeps its size, and Futhark
                    // its memory: cutting all to the shortest doubled the
                    // time of matmul `g`), the others read where they
                    // have the index (zeros, or a clamped row, where the
                    // check above failed): a coercion would fail before
                    // the channel says which failure came first.
                    (all, Some(n)) => {
                        let j = self.locals.fresh("j");
                        let mut args = vec![format!("{}[{j}]", all[0])];
                        for (s, sq) in all.iter().zip(seqs).skip(1) {
                            let elem = sq.ty().elem().cloned().unwrap_or(Type::Unit);
                            args.push(self.element(s, &format!("{j} < length {s}"), &j, &elem));
                        }
                        format!("map (\\{j} -> {f} {}) (iota {n})", args.join(" "))
                    }
                    (all, None) => format!("map{} {f} {}", all.len(), all.join(" ")),
                }
            }
            // A concatenation of all the elements after the first value.
            Expr::Reduce { f, neutral: init, seq } | Expr::Foldl { f, init, seq } if is_concat(f) => {
                let (init, s) = (self.atom(init), self.atom(seq));
                self.concat_all(ty, &init, &s, depth)
            }
            Expr::Reduce { f, neutral, seq } if self.fun_counts(f) => {
                // An operator that runs utests runs as the interpreter
                // runs it in debug mode (a fold from the neutral element),
                // so that the count is the same.
                let ne = self.atom(neutral);
                self.counted_fold(f, &ne, seq, false)
            }
            Expr::Reduce { f, neutral, seq } => {
                let ne = self.atom(neutral);
                match &f.result {
                    // Futhark's operator must return arrays of one known
                    // size: the neutral element's.
                    // Futhark's operator must return arrays of one known
                    // size, the neutral element's: a parallel reduce
                    // where every element has those sizes (as the
                    // operator of a vector sum keeps them), else a fold
                    // (an operator such as `concat` grows its result).
                    // Debug mode decides the same way (`regular_reduce`).
                    Type::Seq(_) => {
                        let (t, sizes) = self.named_sizes(&f.result, &ne, depth);
                        let s = self.atom(seq);
                        let x = self.locals.fresh("x");
                        let same = same_sizes(&x, &sizes);
                        let parallel = self.locals.fresh("par");
                        self.line(depth, &format!("let {parallel} = all (\\{x} -> {same}) {s}"));
                        let n = self.locals.fresh("n");
                        self.line(depth, &format!("let {n} = length {s}"));
                        let params = [self.locals.fresh("p"), self.locals.fresh("p")];
                        let body = self.apply(f, &params);
                        let (acc, y) = (self.locals.fresh("acc"), self.locals.fresh("y"));
                        let step = self.apply(f, &[acc.clone(), y.clone()]);
                        self.mark(Some(IRREGULAR));
                        format!(
                            "if {parallel} then reduce (\\{} {} -> {}) {} ({s} :> [{n}]{t}) \
                             else loop {acc} = {ne} for {y} in {s} do {step}",
                            params[0],
                            params[1],
                            fit(&body, &t),
                            fit(&ne, &t)
                        )
                    }
                    _ => {
                        let f = self.funval(f);
                        format!("reduce {f} {ne} {}", self.atom(seq))
                    }
                }
            }
            Expr::Foldl { f, init, seq } => {
                // When the function consumes its accumulator, the loop
                // does: its initial value is one nothing uses afterwards,
                // or a copy made once.
                let consumes = matches!(f.callee, Callee::Function(g) if self.unique.param(g, f.bound.len()));
                let init = self.atom(init);
                let init = match self.stmt_var {
                    Some(v) if consumes && !self.unique.direct(v, 0) => format!("(copy {init})"),
                    _ => init,
                };
                if self.fun_counts(f) {
                    return self.counted_fold(f, &init, seq, consumes);
                }
                let acc = self.locals.fresh("acc");
                let x = self.locals.fresh("x");
                let body = self.apply_consuming(f, &[acc.clone(), x.clone()], &[consumes]);
                self.locate_next();
                format!("loop {acc} = {init} for {x} in {} do {body}", self.atom(seq))
            }
            Expr::Create { len, f } => {
                let n = self.atom(len);
                self.check(&format!("{n} >= 0"), "Create with a negative length", depth);
                // A length no machine's memory holds: debug mode's failure.
                // Unchecked, Futhark's size in bytes would overflow, and
                // its allocation be too small for what it then writes.
                self.check(&format!("{n} <= {CREATE_MAX}"), OUT_OF_MEMORY, depth);
                let len = self.locals.fresh("n");
                self.line(depth, &format!("let {len} = if {n} >= 0 && {n} <= {CREATE_MAX} then {n} else 0"));
                let counts = self.fun_counts(f);
                let f = self.sized_funval(f, &["0".to_string()], &len, depth);
                if counts {
                    self.shape = Shape::Pairs;
                }
                format!("map {f} (iota {len})")
            }
            Expr::Flatten(s) => {
                let literal = match s {
                    Atom::Var(v) => self.literals.get(&v.id).cloned(),
                    Atom::Lit(_) => None,
                };
                match literal {
                    // The rows of a literal may differ in length, which a
                    // Futhark array cannot hold: concatenated instead.
                    Some(rows) if !rows.is_empty() => {
                        let rows: Vec<String> = rows.iter().map(|a| self.atom(a)).collect();
                        match ty.elem() {
                            // Rows of sequences: one row type (a check,
                            // as debug mode's of the result).
                            Some(elem) if has_seq(elem) => {
                                let mut lets = Vec::new();
                                let (t, sizes) = self.row_sizes(elem, &rows, &mut lets);
                                let mut parts = Vec::new();
                                for r in &rows {
                                    let n = self.locals.fresh("n");
                                    lets.push(format!("let {n} = length {r}"));
                                    let whole = Type::Seq(Box::new(elem.clone()));
                                    let t = format!("[{n}]{t}");
                                    // `opaque` around the fitted row too
                                    // (as in `join_rows`).
                                    let fitted = fit_checked(&format!("opaque {r}"), &t, &whole, &rows_of(&n, &sizes));
                                    parts.push(format!("(opaque {fitted})"));
                                }
                                for l in lets {
                                    self.line(depth, &l);
                                }
                                self.check_rows(&rows, &sizes, depth);
                                fresh_join(&parts)
                            }
                            _ => fresh_join(&rows),
                        }
                    }
                    _ => format!("flatten {}", self.atom(s)),
                }
            }
            Expr::SizeEq { seq, dim, size } => {
                let test = size_test(&self.atom(seq), *dim, &self.atom(size));
                // A size constraint of a utest that counts counts once.
                let ok = if self.counting && (self.counts)(self.span) { "1i64" } else { "0i64" };
                self.check_counting(&test, "a size constraint does not hold", ok, depth);
                "()".into()
            }
            Expr::SizeCoerce { seq, dim, size } => {
                let t = seq.ty();
                let mut dims = String::new();
                let mut elem = &t;
                for k in 0..=*dim {
                    match elem {
                        Type::Seq(e) => {
                            dims.push_str(&if k == *dim { format!("[{}]", self.atom(size)) } else { "[]".into() });
                            elem = e;
                        }
                        _ => break,
                    }
                }
                let elem = elem.clone();
                self.mark(Some("a size constraint does not hold"));
                format!("{} :> {dims}{}", self.atom(seq), self.ty(&elem))
            }
            Expr::Never => {
                self.check("false", "Reached a never term, which should be impossible", depth);
                self.zero(ty)
            }
            Expr::Apply(..) | Expr::Closure(..) | Expr::Accelerate { .. } => unreachable!("{}", pmx_lower::HOST_ONLY),
            Expr::Con { .. } | Expr::IsCon { .. } | Expr::Payload { .. } => {
                self.unsupported("variant types (constructors and matches on them) in Futhark code");
                "()".into()
            }
            Expr::Loop { .. } | Expr::SeqLoopAcc { .. } => {
                self.unsupported("`loop` in Futhark code (it is CUDA's keyword)");
                "()".into()
            }
            // A utest runs where the interpreter would run it (`pmx test`),
            // and a failing one is an error: generated code cannot report
            // it and go on.
            Expr::Utest { .. } if !(self.counting && (self.counts)(self.span)) => "()".into(),
            Expr::Utest { test, expected, using, .. } => {
                let (a, b) = (self.atom(test), self.atom(expected));
                let holds = match using {
                    Some(eq) => self.apply(eq, &[a, b]),
                    None if is_scalar(&test.ty()) => format!("({a} == {b})"),
                    None => {
                        self.unsupported(format!(
                            "a utest on values of type {} inside Futhark code without a `using` function (only \
                             Int, Float, Bool and Char compare)",
                            test.ty()
                        ));
                        "true".into()
                    }
                };
                self.check_counting(&holds, "a utest inside accelerated code failed", "1i64", depth);
                "()".into()
            }
            Expr::If { .. } => unreachable!("ifs are statements"),
        }
    }

    fn fun_counts(&self, f: &FunRef) -> bool {
        self.counting && super::channel::fun_uses(f, &self.counted)
    }

    /// `foldl f init seq` for an `f` that counts: a loop carrying the
    /// count (`(value, count)`); `consumes`: the loop consumes its
    /// accumulator (`init` may be consumed).
    fn counted_fold(&mut self, f: &FunRef, init: &str, seq: &Atom, consumes: bool) -> String {
        let [acc, c, x, a, k] = ["acc", "c", "x", "a", "k"].map(|n| self.locals.fresh(n));
        let body = self.apply_consuming(f, &[acc.clone(), x.clone()], &[consumes]);
        self.shape = Shape::Pair;
        self.locate_next();
        format!(
            "loop ({acc}, {c}) = ({init}, 0i64) for {x} in {} do let ({a}, {k}) = {body} in ({a}, {} {c} {k})",
            self.atom(seq),
            super::channel::JOIN
        )
    }

    /// A function reference as a Futhark function value.
    fn funval(&mut self, f: &FunRef) -> String {
        match f.callee {
            // Futhark does not pass a function that consumes its
            // arguments: a lambda that copies them calls it.
            Callee::Function(id) if self.unique.consumes(id) => {
                let params: Vec<String> = (0..f.params.len()).map(|_| self.locals.fresh("p")).collect();
                let body = self.apply(f, &params);
                format!("(\\{} -> {body})", params.join(" "))
            }
            Callee::Function(id) => {
                let name = self.functions.get(&id).cloned().unwrap_or_else(|| format!("f{}", id.0));
                if f.bound.is_empty() {
                    name
                } else {
                    let bound: Vec<String> = f.bound.iter().map(|a| self.atom(a)).collect();
                    format!("({name} {})", bound.join(" "))
                }
            }
            Callee::Builtin(_) | Callee::Math(_) => {
                let params: Vec<String> = (0..f.params.len()).map(|_| self.locals.fresh("p")).collect();
                let body = self.apply(f, &params);
                format!("(\\{} -> {body})", params.join(" "))
            }
            Callee::Value => unreachable!("{}", pmx_lower::HOST_ONLY),
        }
    }

    /// A function reference as the function of a `map`: one that returns
    /// arrays is coerced to the sizes of its result on the first elements
    /// (`firsts`, evaluated only when `guard`, the length mapped over, is
    /// not zero), since Futhark's `map` needs the sizes of its rows before
    /// it runs them; rows of other sizes fail when the program runs.
    fn sized_funval(&mut self, f: &FunRef, firsts: &[String], guard: &str, depth: usize) -> String {
        if !has_seq(&f.result) {
            return self.funval(f);
        }
        let counts = self.fun_counts(f);
        let r = self.locals.fresh("r");
        let first = self.apply(f, firsts);
        // The sizes come from a run whose utests are not counted.
        let first = if counts { format!("({first}).0") } else { first };
        let mut lets = Vec::new();
        let mut sizes = Vec::new();
        let t =
            self.sized(&f.result.clone(), &[(r.clone(), None)], String::new(), &mut Vec::new(), &mut lets, &mut sizes);
        let names: Vec<String> = sizes.iter().map(|s| s.name.clone()).collect();
        let tuple = |xs: Vec<String>| if xs.len() == 1 { xs[0].clone() } else { format!("({})", xs.join(", ")) };
        self.line(
            depth,
            &format!(
                "let {} = if {guard} == 0 then {} else let {r} = {first} {} in {}",
                tuple(names.clone()),
                tuple(names.iter().map(|_| "0i64".to_string()).collect()),
                lets.join(" "),
                tuple(names)
            ),
        );
        let params: Vec<String> = (0..f.params.len()).map(|_| self.locals.fresh("p")).collect();
        let body = self.apply(f, &params);
        let (v, c) = (self.locals.fresh("v"), self.locals.fresh("c"));
        let params = params.join(" ");
        if !self.counting {
            self.mark(Some(IRREGULAR));
            return format!("(\\{params} -> {})", fit(&body, &t));
        }
        // Each result's sizes are checked against the first's: the
        // channel of the function (where it has one), joined with this
        // check's (`check`), beside the result.
        self.failures.push((self.span, IRREGULAR.to_string()));
        let id = self.failures.len();
        let ok = self.locals.fresh("ok");
        let check = format!("(if {ok} then 0i64 else -{id}i64)");
        let channel = if counts { format!("({} {c} {check})", super::channel::JOIN) } else { check };
        let value = if counts { format!("let ({v}, {c}) = {body}") } else { format!("let {v} = {body}") };
        self.locate_as(IRREGULAR);
        self.shape = Shape::Pairs;
        // A result of other sizes is replaced by zeros of the first's
        // (the channel says it failed) rather than coerced: Futhark hoists
        // a body that does not use its parameter out of the `map`, so a
        // coercion that fails would fail even where the map is empty.
        // `opaque`: Futhark 0.22.7's inliner fails on a coercion of a
        // result whose size it knows ("Type error after pass 'Inline
        // conservatively'", FUTHARK_BUGS.md).
        let zero = sized_zero(&f.result, &mut sizes.iter());
        format!(
            "(\\{params} -> {value} let {ok} = {} in (if {ok} then {} else {zero}, {channel}))",
            same_sizes(&v, &sizes),
            fit(&format!("opaque {v}"), &t)
        )
    }

    /// Names for the sizes of `v` (of type `t`: sequences, records of
    /// them) written as lets; the type `[m1][m2]e` with them, and the
    /// sizes.
    fn named_sizes(&mut self, t: &Type, v: &str, depth: usize) -> (String, Vec<Size>) {
        self.sizes_from(t, &[(v.to_string(), None)], depth)
    }

    /// Names for the sizes of the rows (of type `row`) of the sequences
    /// `containers`, taken from the first that has them (an empty
    /// sequence hides its rows' sizes), written as lets; the row type
    /// `[m1][m2]e` with them.
    fn row_sizes(&mut self, row: &Type, containers: &[String], lets: &mut Vec<String>) -> (String, Vec<Size>) {
        let candidates: Vec<(String, Option<String>)> =
            containers.iter().map(|c| (format!("{c}[0]"), Some(format!("length {c} > 0")))).collect();
        let mut sizes = Vec::new();
        let t = self.sized(&row.clone(), &candidates, String::new(), &mut Vec::new(), lets, &mut sizes);
        (t, sizes)
    }

    /// Sequences of rows `containers` joined into one: a check that the
    /// rows of each have the sizes of the first row there is (`sizes`),
    /// then the operation (which Futhark checks again, located alike).
    fn check_rows(&mut self, containers: &[String], sizes: &[Size], depth: usize) {
        let alike: Vec<String> = containers
            .iter()
            .map(|c| format!("(length {c} == 0 || ({}))", same_sizes(&format!("{c}[0]"), sizes)))
            .collect();
        self.check(&alike.join(" && "), IRREGULAR, depth);
        self.locate_as(IRREGULAR);
    }

    /// The type `t` with a name for each of its sizes (a `let` each): the
    /// size of the first of `candidates` (values of type `t`, each with
    /// the test that it exists) in which it exists (an empty sequence
    /// hides the sizes inside it), else 0. Returns the type and the sizes.
    fn sizes_from(&mut self, t: &Type, candidates: &[(String, Option<String>)], depth: usize) -> (String, Vec<Size>) {
        let mut sizes = Vec::new();
        let mut lets = Vec::new();
        let ty = self.sized(t, candidates, String::new(), &mut Vec::new(), &mut lets, &mut sizes);
        for l in lets {
            self.line(depth, &l);
        }
        (ty, sizes)
    }

    fn sized(
        &mut self,
        t: &Type,
        candidates: &[(String, Option<String>)],
        path: String,
        outer: &mut Vec<String>,
        lets: &mut Vec<String>,
        sizes: &mut Vec<Size>,
    ) -> String {
        match t {
            Type::Seq(el) => {
                let m = self.locals.fresh("m");
                let mut len = "0i64".to_string();
                for (k, (c, exists)) in candidates.iter().enumerate().rev() {
                    let mut tests: Vec<String> = exists.iter().cloned().collect();
                    tests.extend(outer.iter().map(|p| format!("length {c}{p} > 0")));
                    let here = format!("length {c}{path}");
                    len = match (tests.is_empty(), k + 1 == candidates.len()) {
                        (true, _) => here,
                        (false, _) => format!("if {} then {here} else {len}", tests.join(" && ")),
                    };
                }
                lets.push(format!("let {m} = {len}"));
                sizes.push(Size { name: m.clone(), path: path.clone(), outer: outer.len() });
                outer.push(path.clone());
                let inner = self.sized(el, candidates, format!("{path}[0]"), outer, lets, sizes);
                outer.pop();
                format!("[{m}]{inner}")
            }
            Type::Record(fields) => {
                let tuple = is_tuple(fields);
                let parts: Vec<(String, String)> = fields
                    .iter()
                    .map(|(l, ft)| {
                        let access = if tuple { l.to_string() } else { label(l) };
                        let inner = self.sized(ft, candidates, format!("{path}.{access}"), outer, lets, sizes);
                        (label(l), inner)
                    })
                    .collect();
                if tuple {
                    format!("({})", parts.into_iter().map(|(_, t)| t).collect::<Vec<_>>().join(", "))
                } else {
                    let parts: Vec<String> = parts.into_iter().map(|(l, t)| format!("{l}: {t}")).collect();
                    format!("{{{}}}", parts.join(", "))
                }
            }
            other => self.ty(other),
        }
    }

    /// `a ++ b` of sequences of sequences: both coerced to one row type
    /// (a check that fails where their rows differ, as debug mode's does).
    /// The lets it needs are written first, at `depth`.
    fn join_rows(&mut self, row: &Type, a: &str, b: &str, depth: usize) -> String {
        let mut lets = Vec::new();
        let (t, sizes) = self.row_sizes(row, &[a.to_string(), b.to_string()], &mut lets);
        // Futhark 0.22 takes only names as sizes in types.
        let (na, nb) = (self.locals.fresh("n"), self.locals.fresh("n"));
        lets.push(format!("let {na} = length {a}"));
        lets.push(format!("let {nb} = length {b}"));
        // `opaque`: Futhark 0.22.7's simplifier folds a concatenation of
        // array literals of arrays into one and fails on it (a type error
        // after `simplify`, "concat_lit"); it cannot look through it.
        let whole = Type::Seq(Box::new(row.clone()));
        // The fitted operands `opaque` too: their zeros (`replicate`) are
        // what the simplifier folds into a `concat_lit` it then rejects.
        let join = format!(
            "(opaque {} ++ opaque {})",
            fit_checked(&format!("opaque {a}"), &format!("[{na}]{t}"), &whole, &rows_of(&na, &sizes)),
            fit_checked(&format!("opaque {b}"), &format!("[{nb}]{t}"), &whole, &rows_of(&nb, &sizes))
        );
        for l in lets {
            self.line(depth, &l);
        }
        self.check_rows(&[a.to_string(), b.to_string()], &sizes, depth);
        join
    }

    /// `init ++ flatten s`: what `reduce concat init s` and `foldl concat
    /// init s` give, in one parallel step, with one row type where the
    /// rows are sequences.
    fn concat_all(&mut self, t: &Type, init: &str, s: &str, depth: usize) -> String {
        let flat = self.locals.fresh("flat");
        self.line(depth, &format!("let {flat} = flatten {s}"));
        match t.elem() {
            Some(row) if has_seq(row) => self.join_rows(&row.clone(), init, &flat, depth),
            _ => format!("({init} ++ {flat})"),
        }
    }

    /// A function reference applied to more arguments (copied where
    /// the function consumes them).
    fn apply(&mut self, f: &FunRef, args: &[String]) -> String {
        self.apply_consuming(f, args, &[])
    }

    /// `apply`, where `direct[k]` says that `args[k]` may be consumed as
    /// it is (a loop's accumulator). The bound arguments are the
    /// caller's variables, used again at every application: copied.
    fn apply_consuming(&mut self, f: &FunRef, args: &[String], direct: &[bool]) -> String {
        let mut all: Vec<String> = f.bound.iter().map(|a| self.atom(a)).collect();
        all.extend(args.iter().cloned());
        match f.callee {
            Callee::Function(id) => {
                let name = self.functions.get(&id).cloned().unwrap_or_else(|| format!("f{}", id.0));
                let bound = f.bound.len();
                let all: Vec<String> = all
                    .into_iter()
                    .enumerate()
                    .map(|(k, a)| {
                        let keep = k >= bound && direct.get(k - bound).copied().unwrap_or(false);
                        if self.unique.param(id, k) && !keep {
                            format!("(copy {a})")
                        } else {
                            a
                        }
                    })
                    .collect();
                format!("({name} {})", all.join(" "))
            }
            Callee::Builtin(b) => {
                let result = f.result.clone();
                self.prim(b, &all, &result)
            }
            Callee::Math(m) => math(m, &all),
            Callee::Value => unreachable!("{}", pmx_lower::HOST_ONLY),
        }
    }

    /// `set a i v` (`a`, `i`, `v` written): in place when `a` may be
    /// consumed, else on a copy. A row `v` of an array of arrays must
    /// have the type of `a`'s rows, which Futhark cannot see when their
    /// sizes come from different places: both are coerced to `v`'s
    /// sizes (checked when it runs: MExpr would make the array
    /// irregular, which no Futhark array can be). The sizes are lets
    /// written before the statement (at `depth`), so that the result's
    /// type names them for the statements after it (Futhark 0.22 cannot
    /// take the length of an array whose size went out of scope); inside
    /// an expression (`None`), lets in it.
    fn set(&mut self, a: &[String], elem: Option<&Type>, in_place: bool, depth: Option<usize>) -> String {
        let (arr, i, v) = (&a[0], &a[1], &a[2]);
        // Records that hold sequences are copied anyway: Futhark 0.22.7
        // rejects an update in place of a fold's result that began as a
        // literal of them ("referenced after being consumed",
        // FUTHARK_BUGS.md).
        let records = matches!(elem, Some(Type::Record(_))) && elem.is_some_and(has_seq);
        let copy = if in_place && !records { "" } else { "copy " };
        let in_bounds = format!("{i} >= 0 && {i} < length {arr}");
        let Some(elem) = elem.filter(|e| has_seq(e)) else {
            match depth {
                // The check on a line of its own (`check`): the update
                // itself needs no reading afterwards.
                // The check on a line of its own (`check`); where it
                // fails, the update goes to index 0 (an update out of
                // bounds would stop the program before the channel says
                // which failure came first, and the channel's failure
                // discards the array). An `if` around the update instead
                // doubled the time of loops that set rows (Viterbi).
                Some(depth) => {
                    let ok = self.locals.fresh("ok");
                    self.line(depth, &format!("let {ok} = {in_bounds}"));
                    self.check(&ok, OUT_OF_BOUNDS, depth);
                    self.locate_as(OUT_OF_BOUNDS);
                    return format!("({copy}{arr} with [if {ok} then {i} else 0] = {v})");
                }
                None => self.mark(Some(OUT_OF_BOUNDS)),
            }
            return format!("({copy}{arr} with [{i}] = {v})");
        };
        let n = self.locals.fresh("n");
        let mut lets = vec![format!("let {n} = length {arr}")];
        // The new row's sizes (an empty sequence hides those inside it).
        let mut sizes = Vec::new();
        let row_t =
            self.sized(&elem.clone(), &[(v.clone(), None)], String::new(), &mut Vec::new(), &mut lets, &mut sizes);
        let Some(depth) = depth else {
            let update = format!("{copy}({arr} :> [{n}]{row_t}) with [{i}] = ({v} :> {row_t})");
            // Futhark's message says which (an index, or a row's length).
            self.mark(None);
            return format!("({} in {update})", lets.join(" "));
        };
        for l in &lets {
            self.line(depth, l);
        }
        // The rows must have the new row's sizes (the row replaced too, as
        // debug mode checks: a Futhark array's rows are of one type); they
        // are alike, so the first stands for them. Both checks on lines of
        // their own (`check`), the rows' first, as debug mode has them.
        let first = format!("{arr}[0]");
        self.check(&format!("{n} == 0 || ({})", same_sizes(&first, &sizes)), IRREGULAR, depth);
        let ok = self.locals.fresh("ok");
        self.line(depth, &format!("let {ok} = {in_bounds}"));
        self.check(&ok, OUT_OF_BOUNDS, depth);
        self.locate_as(IRREGULAR);
        // The array keeps its rows' sizes (so its coercion holds whenever
        // it has a row), and the new row is fitted to them, zeros where
        // the check above failed: coercing the array to the new row's
        // sizes instead let Futhark 0.22.7 write a longer row past the end
        // of the array's (a heap overflow) before it reported the
        // coercion. Out of bounds, to index 0 (as above).
        let mut own = Vec::new();
        let mut lets = Vec::new();
        let exists = Some(format!("{n} > 0"));
        let arr_t = self.sized(elem, &[(first, exists)], String::new(), &mut Vec::new(), &mut lets, &mut own);
        for l in &lets {
            self.line(depth, l);
        }
        let at = format!("if {ok} then {i} else 0");
        if let (Type::Seq(inner), [row]) = (elem, own.as_slice()) {
            if !has_seq(inner) {
                // A row of scalars: as many elements as both have, a
                // slice written in place (an `if` of rows, a new array,
                // cost Viterbi's binding a copy of each row it set).
                let k = self.locals.fresh("k");
                self.line(depth, &format!("let {k} = i64.min (length {v}) {}", row.name));
                return format!("({copy}({arr} :> [{n}]{arr_t}) with [{at}, 0:{k}] = {v}[0:{k}])");
            }
        }
        let row = fit_checked(v, &arr_t, elem, &own);
        format!("({copy}({arr} :> [{n}]{arr_t}) with [{at}] = {row})")
    }

    /// Argument `k` (`a`) of a call of `f` by the statement binding
    /// `stmt`: copied when `f` consumes it and the analysis did not find
    /// that nothing uses it afterwards.
    fn consumed_arg(&mut self, f: FnId, stmt: VarId, k: usize, a: &Atom) -> String {
        let a = self.atom(a);
        if self.unique.param(f, k) && !self.unique.direct(stmt, k) {
            format!("(copy {a})")
        } else {
            a
        }
    }

    /// A primitive that may fail, as a statement: its checks on lines of
    /// their own (`check`), then the operation. `None` for the others.
    fn checked_prim(&mut self, b: Builtin, a: &[String], ty: &Type, depth: usize) -> Option<String> {
        use Builtin::*;
        // Where its check fails, the operation runs on arguments that
        // cannot fail (an index clamped, a divisor of 1; an element of an
        // empty sequence is zeros, `element`), so that the first failure
        // in the program's order is the one reported.
        Some(match b {
            Get => {
                let ok = format!("{1} >= 0 && {1} < length {0}", a[0], a[1]);
                self.check(&ok, OUT_OF_BOUNDS, depth);
                self.element(&a[0], &ok, &a[1], ty)
            }
            Head => {
                self.check(&format!("length {} > 0", a[0]), "Head on empty sequence", depth);
                self.element(&a[0], &format!("length {} > 0", a[0]), "0", ty)
            }
            Tail => {
                self.check(&format!("length {} > 0", a[0]), "Tail on empty sequence", depth);
                format!("{0}[i64.min 1 (length {0}):]", a[0])
            }
            Divi | Modi => {
                self.check(&format!("{} != 0", a[1]), "Division by zero", depth);
                division(b, &a[0], &a[1])
            }
            SplitAt => {
                self.check(
                    &format!("{1} >= 0 && {1} <= length {0}", a[0], a[1]),
                    "Split at index out of bounds",
                    depth,
                );
                // The bound is a statement of its own (a fresh name, which
                // no variable of the program can take), so that the parts'
                // sizes are in scope where the pair is used: a local `let`
                // inside the expression made them existential, which
                // Futhark 0.22.7 refused under `opaque` (fuzz seed 8000351).
                let j = self.locals.fresh("split_at");
                self.line(depth, &format!("let {j} = i64.max 0 (i64.min {1} (length {0}))", a[0], a[1]));
                format!("({0}[:{j}], {0}[{j}:])", a[0])
            }
            Subsequence => {
                self.check(
                    &format!("{} >= 0 && {} >= 0", a[1], a[2]),
                    "Subsequence using a negative index or length",
                    depth,
                );
                // The bounds are statements of their own, as `splitAt`'s.
                let from = self.locals.fresh("sub_from");
                let to = self.locals.fresh("sub_to");
                self.line(depth, &format!("let {from} = i64.min (i64.max 0 {1}) (length {0})", a[0], a[1]));
                self.line(depth, &format!("let {to} = i64.min ({from} + i64.max 0 {1}) (length {0})", a[0], a[2]));
                format!("{0}[{from}:{to}]", a[0])
            }
            Int2char => {
                let ok = format!("{0} >= 0 && {0} <= 0x10FFFF && ({0} < 0xD800 || {0} > 0xDFFF)", a[0]);
                self.check(&ok, "int2char: not the code of a character", depth);
                format!("(i32.i64 (if {ok} then {} else 0))", a[0])
            }
            _ => return None,
        })
    }

    /// Element `index` of `seq` (of elements of type `elem`), where `ok`
    /// says it is in range: else zeros, for an element without sequences
    /// (`if ok then s[i] else 0`, which also lets Futhark drop its own
    /// bounds check; an `if length s > 0` around a clamped index cost
    /// Viterbi's binding half again). A row of a sequence of sequences is
    /// read at a clamped index: on an empty sequence that still fails
    /// there, with Futhark's message, located as the check is (zeros of
    /// the row's sizes made every row read an `if` of arrays, which
    /// doubled the time of Viterbi's and matmul's bindings).
    fn element(&mut self, seq: &str, ok: &str, index: &str, elem: &Type) -> String {
        if has_seq(elem) {
            return format!("{seq}[if {ok} then {index} else 0]");
        }
        let zero = self.zero(elem);
        format!("(if {ok} then {seq}[{index}] else {zero})")
    }

    /// A primitive with Miking's semantics.
    fn prim(&mut self, b: Builtin, a: &[String], ty: &Type) -> String {
        use Builtin::*;
        let bin = |op: &str| format!("({} {op} {})", a[0], a[1]);
        // Futhark simplifies `x * 0.0` to 0.0 (and so on), which IEEE
        // arithmetic does not (-1 * 0 is -0, NaN * 0 is NaN): a float
        // zero in arithmetic is a value it cannot see (FUTHARK_BUGS.md).
        let float = |op: &str| {
            let z = |x: &String| if x == "0.0f64" { "(opaque 0.0f64)".to_string() } else { x.clone() };
            format!("({} {op} {})", z(&a[0]), z(&a[1]))
        };
        match b {
            Addi => bin("+"),
            Subi => bin("-"),
            Muli => bin("*"),
            Addf => float("+"),
            Subf => float("-"),
            Mulf => float("*"),
            Divf => float("/"),
            // OCaml's division and remainder truncate (Futhark's `//` and
            // `%%`); dividing by zero fails.
            Divi | Modi => {
                self.mark(Some("Division by zero"));
                format!("(assert ({} != 0) {})", a[1], division(b, &a[0], &a[1]))
            }
            Negi => format!("(-{})", a[0]),
            // Flips the sign bit: Futhark negates as `0 - x`, which gives
            // 0.0 for 0.0 (MExpr's `negf 0.0` is -0.0).
            Negf => format!("(f64.from_bits (f64.to_bits {} ^ 0x8000000000000000u64))", a[0]),
            // A count outside 0..63 shifts every bit out, as the
            // interpreter does.
            Slli => format!("(if {1} >= 0 && {1} < 64 then {0} << {1} else 0)", a[0], a[1]),
            Srli => format!("(if {1} >= 0 && {1} < 64 then i64.u64 (u64.i64 {0} >> u64.i64 {1}) else 0)", a[0], a[1]),
            Srai => format!("({0} >> (if {1} >= 0 && {1} < 64 then {1} else 63))", a[0], a[1]),
            Eqi | Eqf | Eqc => bin("=="),
            Neqi | Neqf => bin("!="),
            Lti | Ltf => bin("<"),
            Gti | Gtf => bin(">"),
            Leqi | Leqf => bin("<="),
            Geqi | Geqf => bin(">="),
            Int2float => format!("(f64.i64 {})", a[0]),
            Floorfi => float_to_int(&format!("f64.floor {}", a[0])),
            Ceilfi => float_to_int(&format!("f64.ceil {}", a[0])),
            // Halves away from zero (OCaml's `Float.round`; Futhark's
            // `f64.round` takes them to even). Truncated by floor or ceil:
            // Futhark 0.22.7's `f64.trunc` goes through i64 and is wrong
            // past its range (`f64.trunc 1e30` is -2^63).
            // The argument is bound first: a variable of the program named
            // `t` would otherwise be taken for the local `t`.
            Roundfi => float_to_int(&format!(
                "let x = {} in let t = if x >= 0 then f64.floor x else f64.ceil x in if f64.abs (x - t) >= 0.5 then \
                 t + (if x < 0 then -1 else 1) else t",
                a[0]
            )),
            Char2int => format!("(i64.i32 {})", a[0]),
            Int2char => {
                self.mark(Some("int2char: not the code of a character"));
                format!("(assert ({0} >= 0 && {0} <= 0x10FFFF && ({0} < 0xD800 || {0} > 0xDFFF)) (i32.i64 {0}))", a[0])
            }
            Length => format!("(length {})", a[0]),
            Get => {
                self.mark(Some(OUT_OF_BOUNDS));
                format!("{}[{}]", a[0], a[1])
            }
            Set => {
                let elem = ty.elem().cloned();
                self.set(a, elem.as_ref(), false, None)
            }
            Concat => bin("++"),
            Cons => format!("([{}] ++ {})", a[0], a[1]),
            Snoc => format!("({} ++ [{}])", a[0], a[1]),
            Head => {
                self.mark(Some("Head on empty sequence"));
                format!("{}[0]", a[0])
            }
            Tail => {
                self.mark(Some("Tail on empty sequence"));
                format!("{}[1:]", a[0])
            }
            Null => format!("(length {} == 0)", a[0]),
            // `opaque`: Futhark 0.22.7 gives wrong elements for a slice of
            // the reverse (or the reverse of a slice) of an array it knows
            // holds one value (`tail (reverse (map (lam x. 27) s))`; the
            // multicore backend).
            Reverse => format!("(reverse (opaque {}))", a[0]),
            SplitAt => {
                self.mark(Some("Split at index out of bounds"));
                format!("({0}[:{1}], {0}[{1}:])", a[0], a[1])
            }
            // Clamped to what is there, as the interpreter does; negative
            // arguments fail.
            Subsequence => {
                self.mark(Some("Subsequence using a negative index or length"));
                format!(
                    "(assert ({1} >= 0 && {2} >= 0) (let (sq, from, n) = ({0}, {1}, {2}) in let s = i64.min from \
                     (length sq) in sq[s:i64.min (s + n) (length sq)]))",
                    a[0], a[1], a[2]
                )
            }
            Error => {
                self.mark(Some("error"));
                format!("(assert false {})", self.zero(ty))
            }
            other => {
                self.unsupported(format!("the built-in `{}` in Futhark code", other.name()));
                "()".into()
            }
        }
    }
}

/// Whether dimension `dim` of `s` has length `n` (an empty outer
/// dimension hides the inner ones: true, as the debug checks take it).
fn size_test(s: &str, dim: usize, n: &str) -> String {
    let mut parts = Vec::new();
    let mut e = s.to_string();
    for _ in 0..dim {
        parts.push(format!("length {e} == 0"));
        e = format!("{e}[0]");
    }
    parts.push(format!("length {e} == {n}"));
    parts.join(" || ")
}

fn is_scalar(t: &Type) -> bool {
    matches!(t, Type::Int | Type::Float | Type::Bool | Type::Char)
}

fn path_name(path: &[Step]) -> String {
    let parts: Vec<String> = path
        .iter()
        .filter_map(|s| match s {
            Step::Field(l) => Some(label(l)),
            Step::Elems => None,
        })
        .collect();
    if parts.is_empty() {
        "v".into()
    } else {
        parts.join("_")
    }
}

fn lit(l: &Lit) -> String {
    match l {
        Lit::Int(n) if *n < 0 => format!("({n}i64)"),
        Lit::Int(n) => format!("{n}i64"),
        Lit::Float(x) if x.is_nan() => "f64.nan".into(),
        Lit::Float(x) if x.is_infinite() => {
            if *x > 0.0 {
                "f64.inf".into()
            } else {
                "(-f64.inf)".into()
            }
        }
        // Futhark folds `-0.0` to 0.0, and takes a constant -0.0 for a
        // constant 0.0 elsewhere in the program (they compare equal):
        // bits it cannot see.
        Lit::Float(x) if *x == 0.0 && x.is_sign_negative() => "(f64.from_bits (opaque 0x8000000000000000u64))".into(),
        Lit::Float(x) if x.is_sign_negative() => format!("({x:?}f64)"),
        Lit::Float(x) => format!("{x:?}f64"),
        Lit::Bool(b) => b.to_string(),
        Lit::Char(c) => format!("{}i32", *c as u32),
        Lit::Unit => "()".into(),
    }
}

/// An integral Float (`y`, an expression) as an Int, saturating as every
/// engine does (README): NaN is 0, a value past either end of Int is that
/// end (`i64.f64` is undefined there).
fn float_to_int(y: &str) -> String {
    format!(
        "(let y = ({y}) in if f64.isnan y then 0i64 else if y >= 9.223372036854775808e18f64 then i64.highest else if y < \
         -9.223372036854775808e18f64 then i64.lowest else i64.f64 y)"
    )
}

/// A math external: `f64.NAME`, except that Futhark writes `pow` as `**`.
fn math(m: Math, a: &[String]) -> String {
    match m {
        Math::Pow => format!("({} ** {})", a[0], a[1]),
        _ => format!("(f64.{} {})", m.name(), a.join(" ")),
    }
}
