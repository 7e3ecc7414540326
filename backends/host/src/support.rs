//! Which lowered functions this generator compiles: those whose values
//! are scalars (`Int`, `Float`, `Bool`, `Char`, `()`) or sequences and
//! records they only read (borrowed from the caller: `length`, `null`,
//! `get`, `head`, projections), whose nodes are scalar primitives, math
//! functions, calls, `if`, `never` and `error` of a string literal, and
//! that call only such functions. What it does not compile stays in the
//! interpreter, with the reason.

use pmx_ast::Builtin;
use pmx_lower::{Atom, Block, Callee, Expr, FnId, Function, Program, Stmt, Type, VarId};
use rustc_hash::{FxHashMap, FxHashSet};

/// Why a function is left to the interpreter: what it holds that the
/// generator does not take, where (the generators' one type).
pub use pmx_lower::Unsupported;

pub fn scalar(t: &Type) -> bool {
    matches!(t, Type::Int | Type::Float | Type::Bool | Type::Char | Type::Unit)
}

/// A type native code holds: a scalar, or a sequence, record, variant or
/// tensor type of such types (which it holds by pointer, borrowed or its
/// own; a tensor's elements are read and written by the runtime's
/// built-ins).
pub fn native(program: &Program, t: &Type) -> bool {
    fn go(program: &Program, t: &Type, seen: &mut Vec<pmx_lower::VariantId>) -> bool {
        match t {
            Type::Seq(e) | Type::Tensor(e) => go(program, e, seen),
            Type::Record(fields) => fields.iter().all(|(_, f)| go(program, f, seen)),
            // A function value: the interpreter's, held by pointer.
            Type::Fun(a, r) => go(program, a, seen) && go(program, r, seen),
            // A reference or symbol: the interpreter's, held by pointer.
            Type::Opaque(_, args) => args.iter().all(|a| go(program, a, seen)),
            Type::Variant(v) if seen.contains(v) => true,
            Type::Variant(v) => {
                seen.push(*v);
                program.variants[v.0 as usize].constructors.iter().all(|c| go(program, &c.payload, seen))
            }
            t => scalar(t),
        }
    }
    go(program, t, &mut Vec::new())
}

/// The scalar primitives the generator emits itself (`gen::prim`); the
/// other built-ins of data run in the interpreter's runtime
/// (`runtime::call_builtin`), apart from the sequence primitives and
/// `error`.
pub fn primitive(b: Builtin) -> bool {
    use Builtin::*;
    matches!(
        b,
        Addi | Subi
            | Muli
            | Divi
            | Modi
            | Negi
            | Slli
            | Srli
            | Srai
            | Eqi
            | Neqi
            | Lti
            | Gti
            | Leqi
            | Geqi
            | Addf
            | Subf
            | Mulf
            | Divf
            | Negf
            | Eqf
            | Neqf
            | Ltf
            | Gtf
            | Leqf
            | Geqf
            | Int2float
            | Floorfi
            | Ceilfi
            | Roundfi
            | Char2int
            | Int2char
            | Eqc
    )
}

/// Built-ins native code does not call: `unsafeCoerce`, after which a
/// value may not have the type native code reads it at.
fn unsupported_builtin(b: Builtin) -> bool {
    b == Builtin::UnsafeCoerce
}

/// The primitives on sequences (`seq_prim` in `gen.rs`).
pub fn seq_primitive(b: Builtin) -> bool {
    matches!(b, Builtin::Length | Builtin::Null | Builtin::Get | Builtin::Head)
}

/// The functions of `program` that can be compiled, given the functions
/// the caller wants (`wanted`); each unsupported function with its
/// reason. A function that calls an unsupported one is unsupported.
pub fn supported(program: &Program, wanted: &[FnId]) -> (FxHashSet<FnId>, FxHashMap<FnId, Unsupported>) {
    // The functions the wanted ones reach.
    let mut reached: Vec<FnId> = Vec::new();
    let mut seen = FxHashSet::default();
    let mut work: Vec<FnId> = wanted.to_vec();
    while let Some(f) = work.pop() {
        if seen.insert(f) {
            reached.push(f);
            let mut called = Vec::new();
            pmx_lower::callees(&program.functions[f.0 as usize].body, &mut called);
            work.extend(called);
        }
    }
    // The IR's invariants, checked (in one pass) before anything is
    // generated from it: a violation is a bug in the lowering, which must
    // not become machine code; the function (and what calls it) runs in
    // the interpreter, with the reason. One of the program as a whole
    // leaves every function.
    let (whole, bodies) = pmx_lower::validate_by_function(program, &|g| seen.contains(&g));
    let invalid = |f: &Function| {
        let problem = whole.first().or_else(|| bodies.get(&f.id))?;
        let message = format!("{}the lowered host code is not valid: {problem}", pmx_cpu::INTERNAL_PREFIX);
        Some(Unsupported { message, span: f.span })
    };
    let mut bad: FxHashMap<FnId, Unsupported> = FxHashMap::default();
    for &f in &reached {
        let f = &program.functions[f.0 as usize];
        if let Some(u) = check_function(program, f).err().or_else(|| invalid(f)) {
            bad.insert(f.id, u);
        }
    }
    loop {
        let mut changed = false;
        for &f in &reached {
            if bad.contains_key(&f) {
                continue;
            }
            let mut called = Vec::new();
            pmx_lower::callees(&program.functions[f.0 as usize].body, &mut called);
            if let Some(c) = called.iter().find(|c| bad.contains_key(c)) {
                let callee = &program.functions[c.0 as usize];
                let what = format!("it calls `{}`, which is left to the interpreter", callee.source);
                bad.insert(f, Unsupported { message: what, span: program.functions[f.0 as usize].span });
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    let good = reached.into_iter().filter(|f| !bad.contains_key(f)).collect();
    (good, bad)
}

fn check_function(program: &Program, f: &Function) -> Result<(), Unsupported> {
    if f.global.is_some() {
        return match native(program, &f.result) {
            true => Ok(()),
            false => Err(Unsupported {
                message: format!("the top-level value `{}` is of type {}", f.source, f.result),
                span: f.span,
            }),
        };
    }
    for p in &f.params {
        if !native(program, &p.ty) {
            return Err(Unsupported {
                message: format!("its parameter `{}` is of type {}", p.name, p.ty),
                span: f.span,
            });
        }
    }
    if !native(program, &f.result) {
        return Err(Unsupported { message: format!("its result is of type {}", f.result), span: f.span });
    }
    let messages = error_messages(&f.body);
    check_block(program, &f.body, &messages)
}

/// The sequence literals the generator does not build: those used only
/// as the message of `error` (the failure's text is known) or as the
/// index of `tensorGetExn`/`tensorSetExn` (read in place: `gen.rs`).
pub fn error_messages(body: &Block) -> FxHashSet<VarId> {
    let mut literals = FxHashSet::default();
    let mut messages = FxHashSet::default();
    let mut other = FxHashSet::default();
    let note = |a: &Atom, set: &mut FxHashSet<VarId>| {
        if let Atom::Var(v) = a {
            set.insert(v.id);
        }
    };
    let mut texts = FxHashSet::default();
    body.for_each_stmt(&mut |s| match &s.expr {
        Expr::Seq(items) => {
            literals.insert(s.var.id);
            if items.iter().all(|a| matches!(a, Atom::Lit(pmx_lower::Lit::Char(_)))) {
                texts.insert(s.var.id);
            }
        }
        // A message is read at compile time: only a literal text.
        Expr::Prim(Builtin::Error, args) => args.iter().for_each(|a| match a {
            Atom::Var(v) if texts.contains(&v.id) => note(a, &mut messages),
            _ => note(a, &mut other),
        }),
        Expr::Prim(Builtin::TensorGetExn | Builtin::TensorSetExn, args) => {
            for (i, a) in args.iter().enumerate() {
                note(a, if i == 1 { &mut messages } else { &mut other });
            }
        }
        e => e.operands().into_iter().for_each(|a| note(a, &mut other)),
    });
    body.for_each_result(&mut |a| note(a, &mut other));
    messages.retain(|v| literals.contains(v) && !other.contains(v));
    messages
}

fn check_block(program: &Program, b: &Block, messages: &FxHashSet<VarId>) -> Result<(), Unsupported> {
    b.try_for_each_stmt(&mut |s| check_stmt(program, s, messages))
}

/// Whether the generator takes a statement (an `If`'s branches are
/// `check_block`'s).
fn check_stmt(program: &Program, s: &Stmt, messages: &FxHashSet<VarId>) -> Result<(), Unsupported> {
    let unsupported = |what: String| Err(Unsupported { message: what, span: s.span });
    match &s.expr {
        Expr::Seq(_) if messages.contains(&s.var.id) => {}
        _ if !native(program, &s.var.ty) => return unsupported(format!("a value of type {}", s.var.ty)),
        Expr::Atom(_)
        | Expr::Math(..)
        | Expr::Call(..)
        | Expr::Never
        | Expr::Project(..)
        | Expr::Record(_)
        | Expr::Seq(_)
        | Expr::Con { .. }
        | Expr::IsCon { .. }
        | Expr::Payload { .. } => {}
        Expr::Apply(..) => {}
        // A utest of host code: its functions are function values.
        Expr::Utest { using, on_fail, .. }
            if using.iter().chain(on_fail.iter()).all(|f| f.callee == Callee::Value && f.bound.len() == 1) => {}
        Expr::Closure(Callee::Builtin(b), _) if unsupported_builtin(*b) => {
            return unsupported(format!("the built-in `{}` as a value", b.name()))
        }
        Expr::Closure(Callee::Function(_) | Callee::Builtin(_), _) => {}
        Expr::Closure(Callee::Math(m), _) => {
            return unsupported(format!("the external `{}` as a value (not compiled yet)", m.external()))
        }
        Expr::Prim(b, _) if unsupported_builtin(*b) => return unsupported(format!("the built-in `{}`", b.name())),
        Expr::Prim(..) | Expr::Accelerate { .. } => {}
        Expr::Foldl { f, .. }
        | Expr::Map { f, .. }
        | Expr::Create { f, .. }
        | Expr::Loop { f, .. }
        | Expr::SeqLoopAcc { f, .. } => match f.callee {
            Callee::Builtin(b) if unsupported_builtin(b) || b == Builtin::Error => {
                return unsupported(format!("a sequence keyword given the built-in `{}`", b.name()))
            }
            _ => {}
        },
        Expr::If { .. } => {}
        e => return unsupported(format!("a node the generator does not compile yet ({})", node_name(e))),
    }
    Ok(())
}

fn node_name(e: &Expr) -> &'static str {
    match e {
        Expr::Record(_) => "a record",
        Expr::Project(..) => "a projection",
        Expr::Seq(_) => "a sequence",
        Expr::Con { .. } => "a constructor",
        Expr::IsCon { .. } | Expr::Payload { .. } => "a match on a constructor",
        Expr::Map { .. } | Expr::Reduce { .. } | Expr::Foldl { .. } | Expr::Create { .. } | Expr::Flatten(_) => {
            "a sequence keyword"
        }
        Expr::Loop { .. } | Expr::SeqLoopAcc { .. } => "a loop",
        Expr::SizeEq { .. } | Expr::SizeCoerce { .. } | Expr::Utest { .. } => "a utest",
        _ => "a node",
    }
}
