//! The writer: functions, entries and statements, one line each where a
//! statement fits on one (so that a failure Futhark reports by line is
//! located at the statement's MExpr span). Here: its state, lines and
//! their locations, checks, names; its parts, one concern each, in
//! `body/`: `function.rs`, `entry.rs`, `stmt.rs`, `prim.rs` (built-ins),
//! `funval.rs` (function values), `sizes.rs`, `types.rs`.

mod derivative;
pub(crate) use derivative::checks as derivative_checks;
mod entry;
mod function;
mod funval;
mod hist;
mod prim;
mod sizes;
mod stmt;
mod types;

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
    /// The functions a derivative runs (`derivative::differentiated`), and
    /// whether the one being written is one of them.
    differentiated: FxHashSet<FnId>,
    in_differentiated: bool,
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
            differentiated: derivative::differentiated(p),
            in_differentiated: false,
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

    fn comment_for(&self, what: &str, span: Span) -> String {
        format!("-- {what} at {}", (self.locate)(span))
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
