//! The code the evaluator runs, compiled from the typed AST.
//!
//! Variables are resolved to where their values live: a slot of the
//! current frame, a value captured by the current closure, a global (a
//! top-level binding), or the closure itself (for self-recursion, so that
//! recursive closures need no reference cycle). Nested lambdas
//! `lam a. lam b. e` become one function of two parameters; application
//! spines `f x y` are one call, and saturated built-in calls are direct
//! operations.

use crate::eval::{Frame, Machine};
use crate::value::Value;
use pmx_ast::{Builtin, NameId, SmolStr, Span};
use std::sync::Arc;

/// Compiled code: a closure that evaluates one node (see `thunk.rs`).
pub type Thunk = Box<dyn Fn(&mut Machine, &Frame) -> crate::error::Res<Value> + Send + Sync>;
/// Compiled code in tail position: calls are returned, not made.
pub type TailThunk = Box<dyn Fn(&mut Machine, &Frame) -> crate::error::Res<crate::eval::Flow> + Send + Sync>;

/// Where a captured value comes from, in the frame that creates the closure.
#[derive(Clone, Copy, Debug)]
pub enum Source {
    Local(u32),
    Capture(u32),
    /// The closure running in that frame.
    SelfClosure,
}

pub struct LamCode {
    /// The name it was bound to, for call traces.
    pub name: SmolStr,
    pub arity: usize,
    /// Frame size: parameters first, then locals.
    pub slots: usize,
    pub body: TailThunk,
    pub span: Span,
}

pub enum Code {
    Lit(Value),
    Local(u32),
    Capture(u32),
    Global(u32),
    SelfClosure,
    Builtin(Builtin),
    External(SmolStr),
    Lam(Arc<LamCode>, Box<[Source]>),
    /// A call with at least one argument.
    App(Box<Code>, Box<[Code]>, Span),
    /// A built-in applied to exactly its number of arguments.
    Prim(Builtin, Box<[Code]>, Span),
    /// A scalar built-in of two arguments (arithmetic, comparison).
    Bin(BinOp, Box<Code>, Box<Code>, Span),
    /// `tensorGetExn t [i, j]` with the index written as a list: the
    /// index is not built as a sequence.
    TensorGet(Box<Code>, Box<[Code]>, Span),
    /// `tensorSetExn t [i, j] v`, likewise: the tensor and the value.
    TensorSet(Box<(Code, Code)>, Box<[Code]>, Span),
    /// `if x op y then a else b` for a comparison `op`: no Bool is built.
    If(BinOp, Box<(Code, Code, Code, Code)>),
    Let(u32, Box<Code>, Box<Code>),
    /// Local recursive bindings. With `cells`, each slot first holds an
    /// empty cell that the bindings read through `CellGet` and that is
    /// filled once every value exists (mutual recursion); without, there
    /// is one function that refers to itself through `SelfClosure`.
    LetRec {
        members: Box<[(u32, Code)]>,
        cells: bool,
        body: Box<Code>,
    },
    /// The value in a recursion cell.
    CellGet(Box<Code>),
    Match(Box<Code>, Box<Pat>, Box<Code>, Box<Code>),
    /// A sequence literal, with its span where debug mode checks that it
    /// is regular in Futhark-class code (not where it is only flattened).
    Seq(Box<[Code]>, Option<Span>),
    Record(Arc<[SmolStr]>, Box<[Code]>),
    RecordUpdate(Box<Code>, Box<[(SmolStr, Code)]>),
    Proj(Box<Code>, SmolStr),
    ConApp(NameId, SmolStr, Box<Code>),
    Never(Span),
    Utest(Box<UtestCode>, Box<Code>),
    Accelerate(Box<AccelerateCode>),
    /// A part of the program that did not compile (reported statically).
    Error(Span),
}

pub struct UtestCode {
    pub test: Code,
    pub expected: Code,
    pub using: Option<(Code, String)>,
    pub on_fail: Option<Code>,
    pub span: Span,
    /// `utest length s with n` (either way round, `using eqi` or none):
    /// a size constraint on `s` (named here) for Futhark code. In
    /// accelerated code in debug mode it is checked even when utests do
    /// not run, and a violation is an error.
    pub size_constraint: Option<SmolStr>,
}

pub enum Pat {
    Wild,
    Bind(u32),
    Int(i64),
    Char(char),
    Bool(bool),
    Con(NameId, Box<Pat>),
    Record(Box<[(SmolStr, Pat)]>),
    /// A record pattern on a value of a known record type: each field by
    /// its position among the record's labels (sorted as every record's
    /// are), found at compile time instead of by comparing labels at each
    /// match (which was most of the time of code that takes tuples apart).
    RecordAt(Box<[(usize, Pat)]>),
    Seq(Box<[Pat]>),
    Edge(Box<[Pat]>, Option<u32>, Box<[Pat]>),
    And(Box<Pat>, Box<Pat>),
    Or(Box<Pat>, Box<Pat>),
    Not(Box<Pat>),
}

/// An `accelerate` expression.
pub struct AccelerateCode {
    /// Its site (an index into the run's sites), when the middle end
    /// described it; `None` when the program runs without that
    /// description (the body is then evaluated in place, unchecked).
    pub site: Option<u32>,
    /// The values of the boundary's parameters, in its order.
    pub args: Box<[Code]>,
    /// The expression itself, for a run without sites.
    pub body: Option<Code>,
    pub span: Span,
}

/// A compiled top-level step.
pub enum StepThunk {
    Define { global: u32, slots: usize, code: Thunk },
    Utest { slots: usize, span: Span, utest: Thunk },
    Main { slots: usize, code: Thunk },
}

/// One step of a program's top level, run in order.
pub enum Step {
    /// Evaluate in a fresh frame of `slots` and store in a global.
    Define {
        global: u32,
        slots: usize,
        code: Code,
    },
    Utest {
        slots: usize,
        utest: Box<UtestCode>,
    },
    Main {
        slots: usize,
        code: Code,
    },
    /// The `mexpr` body compiled to native code (`Natives`' `MAIN`).
    NativeMain(std::sync::Arc<crate::native::Native>),
    /// A top-level value computed by native code (a native function of
    /// no parameters, by the binding's identity), stored in a global.
    NativeDefine {
        global: u32,
        native: std::sync::Arc<crate::native::Native>,
    },
    /// A top-level `utest` run by native code (`NameId::top_utest`).
    NativeUtest {
        span: pmx_ast::Span,
        native: std::sync::Arc<crate::native::Native>,
    },
}

pub struct Program {
    pub steps: Vec<StepThunk>,
    /// Where each step is, for a failure that unwinds out of it with no
    /// more precise location.
    pub places: Vec<pmx_ast::Span>,
    pub globals: usize,
    /// The names of globals, for messages.
    pub global_names: Vec<SmolStr>,
    /// The program's own top-level bindings' globals (not the extracted
    /// accelerated program's), by binding.
    pub global_ids: rustc_hash::FxHashMap<NameId, u32>,
}

/// The two-argument scalar built-ins, evaluated without a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    Addi,
    Subi,
    Muli,
    Divi,
    Modi,
    Eqi,
    Neqi,
    Lti,
    Gti,
    Leqi,
    Geqi,
    Addf,
    Subf,
    Mulf,
    Divf,
    Eqf,
    Neqf,
    Ltf,
    Gtf,
    Leqf,
    Geqf,
    Eqc,
}

impl BinOp {
    /// Whether its operands are floats (which may be duals, `crate::ad`).
    pub fn reads_floats(self) -> bool {
        use BinOp::*;
        matches!(self, Addf | Subf | Mulf | Divf | Eqf | Neqf | Ltf | Gtf | Leqf | Geqf)
    }

    pub fn is_comparison(self) -> bool {
        use BinOp::*;
        matches!(self, Eqi | Neqi | Lti | Gti | Leqi | Geqi | Eqf | Neqf | Ltf | Gtf | Leqf | Geqf | Eqc)
    }

    /// Compares two scalars (`self` must be a comparison).
    #[inline(always)]
    pub fn compare(self, a: &Value, b: &Value) -> bool {
        use BinOp::*;
        match (self, a, b) {
            (Eqi, Value::Int(x), Value::Int(y)) => x == y,
            (Neqi, Value::Int(x), Value::Int(y)) => x != y,
            (Lti, Value::Int(x), Value::Int(y)) => x < y,
            (Gti, Value::Int(x), Value::Int(y)) => x > y,
            (Leqi, Value::Int(x), Value::Int(y)) => x <= y,
            (Geqi, Value::Int(x), Value::Int(y)) => x >= y,
            (Eqf, Value::Float(x), Value::Float(y)) => x == y,
            (Neqf, Value::Float(x), Value::Float(y)) => x != y,
            (Ltf, Value::Float(x), Value::Float(y)) => x < y,
            (Gtf, Value::Float(x), Value::Float(y)) => x > y,
            (Leqf, Value::Float(x), Value::Float(y)) => x <= y,
            (Geqf, Value::Float(x), Value::Float(y)) => x >= y,
            (Eqc, Value::Char(x), Value::Char(y)) => x == y,
            _ => crate::error::type_confusion("comparable scalars"),
        }
    }

    pub fn from_builtin(b: Builtin) -> Option<BinOp> {
        use Builtin as B;
        Some(match b {
            B::Addi => BinOp::Addi,
            B::Subi => BinOp::Subi,
            B::Muli => BinOp::Muli,
            B::Divi => BinOp::Divi,
            B::Modi => BinOp::Modi,
            B::Eqi => BinOp::Eqi,
            B::Neqi => BinOp::Neqi,
            B::Lti => BinOp::Lti,
            B::Gti => BinOp::Gti,
            B::Leqi => BinOp::Leqi,
            B::Geqi => BinOp::Geqi,
            B::Addf => BinOp::Addf,
            B::Subf => BinOp::Subf,
            B::Mulf => BinOp::Mulf,
            B::Divf => BinOp::Divf,
            B::Eqf => BinOp::Eqf,
            B::Neqf => BinOp::Neqf,
            B::Ltf => BinOp::Ltf,
            B::Gtf => BinOp::Gtf,
            B::Leqf => BinOp::Leqf,
            B::Geqf => BinOp::Geqf,
            B::Eqc => BinOp::Eqc,
            _ => return None,
        })
    }
}

impl Code {
    /// Adds every frame slot this code reads (directly, or by capturing it
    /// in a closure) to `out`: one walk, where asking [`Code::reads_slot`]
    /// of each `let` in turn walks the rest of a chain once per binding.
    pub fn collect_reads(&self, out: &mut rustc_hash::FxHashSet<u32>) {
        let all = |cs: &[Code], out: &mut rustc_hash::FxHashSet<u32>| cs.iter().for_each(|c| c.collect_reads(out));
        match self {
            Code::Local(s) => {
                out.insert(*s);
            }
            Code::Lit(_)
            | Code::Capture(_)
            | Code::Global(_)
            | Code::SelfClosure
            | Code::Builtin(_)
            | Code::External(_)
            | Code::Never(_)
            | Code::Error(_) => {}
            Code::Lam(_, sources) => out.extend(sources.iter().filter_map(|s| match s {
                Source::Local(l) => Some(*l),
                _ => None,
            })),
            Code::App(f, args, _) => {
                f.collect_reads(out);
                all(args, out);
            }
            Code::Prim(_, args, _) | Code::Seq(args, _) | Code::Record(_, args) => all(args, out),
            Code::Bin(_, x, y, _) => {
                x.collect_reads(out);
                y.collect_reads(out);
            }
            Code::TensorGet(t, index, _) => {
                t.collect_reads(out);
                all(index, out);
            }
            Code::TensorSet(parts, index, _) => {
                parts.0.collect_reads(out);
                parts.1.collect_reads(out);
                all(index, out);
            }
            Code::If(_, parts) => {
                let (a, b, c, d) = &**parts;
                [a, b, c, d].into_iter().for_each(|x| x.collect_reads(out));
            }
            Code::Let(_, v, body) => {
                v.collect_reads(out);
                body.collect_reads(out);
            }
            Code::LetRec { members, body, .. } => {
                members.iter().for_each(|(_, c)| c.collect_reads(out));
                body.collect_reads(out);
            }
            Code::CellGet(c) | Code::Proj(c, _) | Code::ConApp(_, _, c) => c.collect_reads(out),
            Code::Match(s, _, t, o) => [s, t, o].into_iter().for_each(|x| x.collect_reads(out)),
            Code::RecordUpdate(r, updates) => {
                r.collect_reads(out);
                updates.iter().for_each(|(_, c)| c.collect_reads(out));
            }
            Code::Utest(u, body) => {
                u.test.collect_reads(out);
                u.expected.collect_reads(out);
                if let Some((c, _)) = &u.using {
                    c.collect_reads(out);
                }
                if let Some(c) = &u.on_fail {
                    c.collect_reads(out);
                }
                body.collect_reads(out);
            }
            Code::Accelerate(a) => {
                if let Some(body) = &a.body {
                    body.collect_reads(out);
                }
                a.args.iter().for_each(|c| c.collect_reads(out));
            }
        }
    }

    /// Whether this code reads frame slot `slot` (directly, or by capturing
    /// it in a closure). Slots are unique per variable within a function,
    /// so a `let` whose slot its body never reads (`a; b`) need not store
    /// its value.
    pub fn reads_slot(&self, slot: u32) -> bool {
        let any = |cs: &[Code]| cs.iter().any(|c| c.reads_slot(slot));
        match self {
            Code::Local(s) => *s == slot,
            Code::Lit(_)
            | Code::Capture(_)
            | Code::Global(_)
            | Code::SelfClosure
            | Code::Builtin(_)
            | Code::External(_)
            | Code::Never(_)
            | Code::Error(_) => false,
            Code::Lam(_, sources) => sources.iter().any(|s| matches!(s, Source::Local(l) if *l == slot)),
            Code::App(f, args, _) => f.reads_slot(slot) || any(args),
            Code::Prim(_, args, _) | Code::Seq(args, _) | Code::Record(_, args) => any(args),
            Code::Bin(_, x, y, _) => x.reads_slot(slot) || y.reads_slot(slot),
            Code::TensorGet(t, index, _) => t.reads_slot(slot) || any(index),
            Code::TensorSet(parts, index, _) => parts.0.reads_slot(slot) || parts.1.reads_slot(slot) || any(index),
            Code::If(_, parts) => {
                let (a, b, c, d) = &**parts;
                a.reads_slot(slot) || b.reads_slot(slot) || c.reads_slot(slot) || d.reads_slot(slot)
            }
            Code::Let(_, v, body) => v.reads_slot(slot) || body.reads_slot(slot),
            Code::LetRec { members, body, .. } => {
                members.iter().any(|(_, c)| c.reads_slot(slot)) || body.reads_slot(slot)
            }
            Code::CellGet(c) | Code::Proj(c, _) | Code::ConApp(_, _, c) => c.reads_slot(slot),
            Code::Match(s, _, t, o) => s.reads_slot(slot) || t.reads_slot(slot) || o.reads_slot(slot),
            Code::RecordUpdate(r, updates) => r.reads_slot(slot) || updates.iter().any(|(_, c)| c.reads_slot(slot)),
            Code::Utest(u, body) => {
                u.test.reads_slot(slot)
                    || u.expected.reads_slot(slot)
                    || u.using.as_ref().is_some_and(|(c, _)| c.reads_slot(slot))
                    || u.on_fail.as_ref().is_some_and(|c| c.reads_slot(slot))
                    || body.reads_slot(slot)
            }
            Code::Accelerate(a) => {
                a.body.as_ref().is_some_and(|b| b.reads_slot(slot)) || a.args.iter().any(|c| c.reads_slot(slot))
            }
        }
    }
}
