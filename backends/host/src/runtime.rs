//! What native host code calls back into, and what it reads: the
//! context of one call from the interpreter (`Ctx`), the tables of
//! failures and call sites a compiled program refers to by number, and
//! the helpers its failure paths and some primitives call.
//!
//! Failures are data, not unwinding: a failing function records the error
//! in the context, sets `failed`, and returns; each caller checks `failed`
//! after a call, records its own frame (the call trace, as the
//! interpreter shows it) and returns too, up to the entry, which hands
//! the error to the interpreter. No Rust frame is ever unwound through
//! machine code.

use pmx_ast::{SmolStr, Span};
use pmx_cpu::value::{Seq, Value};
use pmx_cpu::RuntimeError;

use crate::word;

/// A site id's bit saying that the frame it entered replaced the frame
/// the interpreter called (a tail call made from the root): its failure
/// is shown at the interpreter's call instead of that call.
pub const ROOT: u64 = 1 << 62;

/// Why a failure happened, by its number in the program.
#[derive(Clone, Debug)]
pub enum Message {
    Fixed(String),
    /// `int2char` of a value that is not a character's code.
    Int2char,
    /// An index out of a sequence's bounds (the index and the length).
    OutOfBounds,
    /// `create` of a negative length.
    NegativeCreate,
    /// `map2` of sequences of different lengths.
    Map2Lengths,
}

pub struct Tables {
    pub failures: Vec<(Message, Span)>,
    /// Call sites by number (0 is no site): the callee's name as the
    /// interpreter shows it, and the call's span.
    pub sites: Vec<(SmolStr, Span)>,
    pub records: Vec<RecordShape>,
    pub cons: Vec<ConShape>,
    pub builtins: Vec<BuiltinCall>,
    /// The top-level values native code reads, and their kinds.
    pub globals: Vec<(pmx_ast::NameId, Kind)>,
    /// Applications of function values, by number.
    pub applies: Vec<ApplyCall>,
    /// The function values native code makes, by number.
    pub closures: Vec<ClosureShape>,
    pub utests: Vec<UtestCall>,
    /// The function values of the native functions that native code makes
    /// values of (made once the code exists: `native.rs`).
    pub functions: rustc_hash::FxHashMap<pmx_lower::FnId, Value>,
    /// Those functions' entries, by the address of their closure code:
    /// native code applies such a value by calling the entry, not
    /// through the interpreter.
    pub direct: rustc_hash::FxHashMap<usize, Direct>,
}

/// A native function's entry, as `apply` calls it.
pub struct Direct {
    pub entry: crate::gen::EntryFn,
    pub params: Vec<Kind>,
    pub name: SmolStr,
}

/// An application of a function value (`Expr::Apply`, or a keyword's
/// function value): the kinds of the arguments and of the result, and
/// where.
pub struct ApplyCall {
    pub args: Vec<Kind>,
    pub result: Kind,
    pub span: Span,
}

/// A utest: the kinds of its two sides, how a failure names its `using`
/// function, and where.
pub struct UtestCall {
    pub sides: [Kind; 2],
    pub using_name: Option<SmolStr>,
    pub span: Span,
}

/// A function value made by native code: what it applies, and the kinds
/// of the arguments it is made with.
pub struct ClosureShape {
    pub of: Callable,
    pub bound: Vec<Kind>,
}

pub enum Callable {
    Builtin(pmx_ast::Builtin),
    /// A native function (`Tables::functions` has its value).
    Function(pmx_lower::FnId),
}

/// A call that the interpreter's runtime makes for native code
/// (`call_builtin`): what it calls, the kinds of its arguments and
/// result, and where.
pub struct BuiltinCall {
    pub callee: RuntimeCallee,
    pub args: Vec<Kind>,
    /// Bit `i`: argument `i` is an owned word native code gives away.
    pub given: u64,
    pub result: Kind,
    pub span: Span,
}

/// What the runtime calls for native code.
pub enum RuntimeCallee {
    Builtin(pmx_ast::Builtin),
    /// An `accelerate`: the engine of the binding with this identity
    /// (`pmx_cpu::accelerate::run_binding`), and the binding's name.
    Accelerate(pmx_ast::NameId, SmolStr),
}

impl Tables {
    pub fn new() -> Tables {
        Tables {
            failures: Vec::new(),
            sites: vec![(SmolStr::new(""), Span::BUILTIN)],
            records: Vec::new(),
            cons: Vec::new(),
            builtins: Vec::new(),
            globals: Vec::new(),
            applies: Vec::new(),
            closures: Vec::new(),
            utests: Vec::new(),
            functions: Default::default(),
            direct: Default::default(),
        }
    }

    pub fn failure(&mut self, message: Message, span: Span) -> u64 {
        self.failures.push((message, span));
        self.failures.len() as u64 - 1
    }

    pub fn site(&mut self, callee: SmolStr, span: Span) -> u64 {
        self.sites.push((callee, span));
        self.sites.len() as u64 - 1
    }
}

/// The context of one call into native code. Generated code reads
/// `failed` and `stack_limit` at fixed offsets.
#[repr(C)]
pub struct Ctx {
    pub failed: u64,
    pub stack_limit: u64,
    pub error: Option<Box<RuntimeError>>,
    pub tables: *const Tables,
    /// The interpreter's machine that called native code: built-ins run
    /// on it.
    pub machine: *mut pmx_cpu::Machine,
}

pub const FAILED_OFFSET: i32 = 0;
pub const STACK_LIMIT_OFFSET: i32 = 8;

impl Ctx {
    pub fn new(stack_limit: usize, tables: &Tables, machine: *mut pmx_cpu::Machine) -> Ctx {
        Ctx { failed: 0, stack_limit: stack_limit as u64, error: None, tables, machine }
    }

    fn tables(&self) -> &Tables {
        // Safety: the tables outlive every call (the compiled program
        // owns both them and the code).
        unsafe { &*self.tables }
    }

    fn set(&mut self, e: impl Into<Box<RuntimeError>>) {
        self.error = Some(e.into());
        self.failed = 1;
    }
}

impl Message {
    /// The interpreter's text, with the `Int`s the failure shows (`a`,
    /// and `b` for an index's length or the second sequence's).
    fn text(self, a: i64, b: i64) -> String {
        match self {
            Message::Fixed(t) => t,
            Message::Int2char => format!("int2char: {a} is not the code of a character"),
            Message::OutOfBounds => format!("Out of bounds access in sequence: index {a} but the length is {b}"),
            Message::NegativeCreate => format!("Create with a negative length: {a}"),
            Message::Map2Lengths => format!("map2 on sequences of different lengths: {a} and {b}"),
        }
    }
}

/// Failure `id` of the program happened; `a` and `b` are what its
/// message shows (unused ones are 0).
pub extern "C" fn fail(ctx: *mut Ctx, id: u64, a: i64, b: i64) {
    // Safety: generated code passes the context it was given.
    let ctx = unsafe { &mut *ctx };
    let (message, span) = ctx.tables().failures[id as usize].clone();
    ctx.set(RuntimeError::new(message.text(a, b), span));
}

// Values that native code borrows from its caller (a sequence or record
// it only reads) are pointers to the interpreter's `Value`s, which live as
// long as the call: every such value derives from an entry's argument,
// and the interpreter's sequences and records never change. A scalar in a
// `Value` is read by native code itself (the tag is a `u64`, the payload
// at offset 8: `#[repr(u64)]`).

/// Safety (all of these): `v` is a live word (`word.rs`) of the type the
/// lowered IR says (a sequence, a record), an index is in bounds (the
/// generated code checked it).
fn seq<'a>(v: u64) -> &'a Seq {
    unsafe { word::seq(v) }
}

/// Where a sequence's elements are, so that generated code reads them in
/// place: `out` gets the address of element 0, the length, and the
/// distance between elements in bytes. A sequence of scalars may hold
/// them unboxed or as `Value`s (built from values of any kind): the
/// stride tells which (`VALUE_STRIDE`), and a scalar `Value`'s payload is
/// at offset 8.
pub extern "C" fn seq_view(v: u64, out: *mut u64) {
    fn parts<T: Clone>(view: &pmx_cpu::value::View<T>) -> [u64; 3] {
        let s = view.as_slice();
        [s.as_ptr() as u64, s.len() as u64, std::mem::size_of::<T>() as u64]
    }
    let p = match seq(v) {
        Seq::Int(view) => parts(view),
        Seq::Float(view) => parts(view),
        Seq::Char(view) => parts(view),
        Seq::Bool(view) => parts(view),
        Seq::Boxed(view) => parts(view),
    };
    // Safety: generated code passes room for three words.
    unsafe { std::ptr::copy_nonoverlapping(p.as_ptr(), out, 3) };
}

/// Element `i` (in bounds) of a sequence that holds it unboxed, written
/// as a `Value` at `out` (uninitialised room for one: a scalar `Value`,
/// which owns nothing, so the caller never drops it).
pub extern "C" fn scalar_element(out: *mut Value, v: u64, i: i64) {
    let e = seq(v).get(i as usize);
    debug_assert!(matches!(e, Value::Int(_) | Value::Float(_) | Value::Char(_) | Value::Bool(_)));
    // Safety: generated code passes a slot of its frame, the size and
    // alignment of a `Value`.
    unsafe { std::ptr::write(out, e) };
}

/// The stride of a sequence of `Value`s: two words, where every unboxed
/// element takes at most one.
pub const VALUE_STRIDE: i64 = std::mem::size_of::<Value>() as i64;

/// A call at `site` found the stack too deep (the interpreter's message,
/// at the call).
pub extern "C" fn overflow(ctx: *mut Ctx, site: u64) {
    let ctx = unsafe { &mut *ctx };
    let span = ctx.tables().sites[(site & !ROOT) as usize].1;
    ctx.set(RuntimeError::new("stack overflow: the recursion is too deep".into(), span));
}

/// A frame entered at `site` is left because of a failure: the trace
/// shows the call, as the interpreter's does.
pub extern "C" fn record(ctx: *mut Ctx, site: u64) {
    let ctx = unsafe { &mut *ctx };
    let index = (site & !ROOT) as usize;
    if index == 0 {
        return;
    }
    let (name, span) = ctx.tables().sites[index].clone();
    let e = ctx.error.as_mut().expect("a failure was recorded");
    if site & ROOT != 0 {
        e.tail_call = Some((name, span));
    } else {
        e.add_call(&name, span);
    }
}

/// `roundfi`'s rounding: half away from zero, as the interpreter's.
pub extern "C" fn round(x: f64) -> f64 {
    x.round()
}

pub extern "C" fn exp(x: f64) -> f64 {
    x.exp()
}
pub extern "C" fn log(x: f64) -> f64 {
    x.ln()
}
pub extern "C" fn sin(x: f64) -> f64 {
    x.sin()
}
pub extern "C" fn cos(x: f64) -> f64 {
    x.cos()
}
pub extern "C" fn tan(x: f64) -> f64 {
    x.tan()
}
pub extern "C" fn atan(x: f64) -> f64 {
    x.atan()
}
pub extern "C" fn sqrt(x: f64) -> f64 {
    x.sqrt()
}
pub extern "C" fn atan2(y: f64, x: f64) -> f64 {
    y.atan2(x)
}
pub extern "C" fn pow(x: f64, y: f64) -> f64 {
    x.powf(y)
}

// Values that native code makes are owned words (`word.rs`), dropped
// (`word::drop_word`) at the end of the block that made them unless one
// is the block's result. A borrowed value that must outlive its owner
// (returned, or carried around a loop) is copied (`word::dup`: a count,
// not the data).

/// How a word stands for a `Value` of one type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Int,
    Float,
    Bool,
    Char,
    Unit,
    /// A sequence, record, variant value, tensor or function value: a
    /// word of `word.rs`.
    Boxed,
}

impl Kind {
    /// A scalar as a word of this kind (`()` is 0); `None` for a boxed
    /// kind, whose word each caller makes as its ownership says.
    pub fn scalar_word(self, v: &Value) -> Option<u64> {
        Some(match (self, v) {
            (Kind::Int, Value::Int(i)) => *i as u64,
            (Kind::Float, Value::Float(f)) => f.to_bits(),
            (Kind::Bool, Value::Bool(b)) => *b as u64,
            (Kind::Char, Value::Char(c)) => *c as u64,
            (Kind::Unit, _) => 0,
            _ => return None,
        })
    }

    /// `v` as a word of this kind: a scalar, or a boxed value's borrowed
    /// word (`v` must outlive the word's use).
    pub fn borrowed_word(self, v: &Value) -> u64 {
        self.scalar_word(v).unwrap_or_else(|| word::borrowed(v))
    }

    /// The value a word of this kind stands for (a boxed one is cloned).
    pub fn value(self, w: u64) -> Value {
        match self {
            Kind::Int => Value::Int(w as i64),
            Kind::Float => Value::Float(f64::from_bits(w)),
            Kind::Bool => Value::Bool(w as u8 != 0),
            Kind::Char => Value::Char(char::from_u32(w as u32).unwrap_or('\u{FFFD}')),
            Kind::Unit => Value::unit(),
            Kind::Boxed => unsafe { word::borrow(w) }.clone(),
        }
    }
}

/// A record's labels (sorted) and its fields' kinds.
pub struct RecordShape {
    pub labels: std::sync::Arc<[SmolStr]>,
    pub kinds: Vec<Kind>,
}

/// A constructor: its identity (what values carry as their tag), name,
/// and its payload's kind.
pub struct ConShape {
    pub id: pmx_ast::NameId,
    pub name: SmolStr,
    pub kind: Kind,
}

/// The values the words at `words` stand for, one per kind (boxed ones
/// cloned).
fn values<'a>(kinds: &'a [Kind], words: *const u64) -> impl Iterator<Item = Value> + 'a {
    // Safety: generated code passes a word per kind.
    kinds.iter().enumerate().map(move |(i, k)| k.value(unsafe { *words.add(i) }))
}

/// The value of a word of kind `kind`, taken over where `moved` (an owned
/// word that native code gives away), else cloned.
fn given(kind: Kind, w: u64, moved: bool) -> Value {
    match kind {
        // Safety: generated code moves only owned words, once.
        Kind::Boxed if moved => unsafe { word::take(w) },
        k => k.value(w),
    }
}

/// Record `shape` of the words at `words`; bit `i` of `moved`: field `i`
/// is given (`given`).
pub extern "C" fn make_record(ctx: *mut Ctx, shape: u64, words: *const u64, moved: u64) -> u64 {
    let ctx = unsafe { &*ctx };
    let s = &ctx.tables().records[shape as usize];
    // Safety: generated code passes a word per field.
    let fields: Vec<Value> =
        s.kinds.iter().enumerate().map(|(i, k)| given(*k, unsafe { *words.add(i) }, moved >> i & 1 != 0)).collect();
    word::owned(Value::Record(std::sync::Arc::new(pmx_cpu::value::Record {
        labels: s.labels.clone(),
        values: fields.into_boxed_slice(),
    })))
}

/// A sequence of the `n` words at `words`, of kind `kind` (`Kind` as a
/// number: its index in `KINDS`).
pub extern "C" fn make_seq(kind: u64, words: *const u64, n: i64) -> u64 {
    let k = KINDS[kind as usize];
    let items: Vec<Value> = (0..n as usize).map(|i| k.value(unsafe { *words.add(i) })).collect();
    word::owned(Value::seq(Seq::from_values(items)))
}

pub const KINDS: [Kind; 6] = [Kind::Int, Kind::Float, Kind::Bool, Kind::Char, Kind::Unit, Kind::Boxed];

/// Constructor `con` applied to a payload word (given where `moved` is 1).
pub extern "C" fn make_con(ctx: *mut Ctx, con: u64, payload: u64, moved: u64) -> u64 {
    let ctx = unsafe { &*ctx };
    let c = &ctx.tables().cons[con as usize];
    word::owned(Value::Con(std::sync::Arc::new(pmx_cpu::value::ConValue {
        tag: c.id,
        name: c.name.clone(),
        arg: given(c.kind, payload, moved != 0),
    })))
}

/// `cons`, `snoc` and `concat` (`op`: 0, 1, 2) of a sequence and an
/// element of kind `kind` (its index in `KINDS`; borrowed, cloned) or of
/// two sequences, as the interpreter's built-ins compute them, without
/// going through its dispatch: these build strings and lists in loops.
/// (The built-ins' debug-mode row checks apply only inside Futhark-class
/// code, never in host code.) Memory the system refuses is failure `id`'s.
pub extern "C" fn seq_grow(ctx: *mut Ctx, id: u64, op: u64, kind: u64, a: u64, b: u64) -> u64 {
    let ctx = unsafe { &mut *ctx };
    let k = KINDS[kind as usize];
    guarded(ctx, id, 0, || {
        let at = if op & 3 == 0 { b } else { a };
        let mut s = if op & GIVEN != 0 {
            // Safety: generated code gives the sequence operand's word
            // (owned, used no more), which this takes over.
            match unsafe { word::take(at) } {
                Value::Seq(s) => s,
                v => std::sync::Arc::new(v.as_seq().clone()),
            }
        } else {
            std::sync::Arc::new(seq(at).clone())
        };
        // In place where nobody else holds it, else on a copy of its view
        // (the persistent operation: `Seq::snoc` is `snoc_mut` on a copy).
        let grown = std::sync::Arc::make_mut(&mut s);
        match op & 3 {
            0 => grown.cons_mut(k.value(a)),
            1 => grown.snoc_mut(k.value(b)),
            _ => grown.concat_mut(seq(b)),
        }
        word::owned(Value::Seq(s))
    })
}

/// `seq_grow`'s op bit: the sequence operand (`cons`'s second, else the
/// first) is given, so that where nobody else holds it, it grows in place
/// (`Seq::cons_mut` ...): building a string in a loop then makes no new
/// sequence per character.
pub const GIVEN: u64 = 4;

// Reuse in place (`reuse.rs`): a node whose variant value and record
// nobody else holds is rebuilt in place.

/// Whether variant value `t` and its record `r` are unique (one count,
/// no weak ones), so that changing them changes nothing anyone else sees.
pub extern "C" fn unique(t: u64, r: u64) -> u8 {
    // Safety: generated code passes live words of a variant value and of
    // its record; the `Arc`s remade here are never dropped.
    unsafe {
        let mut t = std::mem::ManuallyDrop::new(word::arc_con(t));
        let mut r = std::mem::ManuallyDrop::new(word::arc_record(r));
        (std::sync::Arc::get_mut(&mut t).is_some() && std::sync::Arc::get_mut(&mut r).is_some()) as u8
    }
}

/// Field `index` of unique record `r` taken out (an owned word), a
/// scalar (which owns nothing) left in its place until the node is
/// rebuilt.
pub extern "C" fn take_field(r: u64, index: i64) -> u64 {
    // Safety: generated code calls this only where `unique` held, and
    // nothing reads the field before `put_fields` fills it again.
    unsafe {
        let mut r = std::mem::ManuallyDrop::new(word::arc_record(r));
        let rec = std::sync::Arc::get_mut(&mut r).expect("a unique record");
        word::owned(std::mem::replace(&mut rec.values[index as usize], Value::Int(0)))
    }
}

/// The `n` fields of unique record `r` that `spec` names (each a field's
/// index, and its kind's index in `KINDS` shifted by 32) given the words
/// at `words` (bit `i` of `moved`: word `i` is given). All new values are
/// made before any old one is dropped: a new one may be part of an old.
pub extern "C" fn put_fields(r: u64, n: i64, spec: *const u64, words: *const u64, moved: u64) {
    // Safety: as in `take_field`; generated code passes `n` words each.
    unsafe {
        let n = n as usize;
        let spec = std::slice::from_raw_parts(spec, n);
        let words = std::slice::from_raw_parts(words, n);
        let field = |i: usize| (spec[i] & 0xffff_ffff) as usize;
        let mut r = std::mem::ManuallyDrop::new(word::arc_record(r));
        let rec = std::sync::Arc::get_mut(&mut r).expect("a unique record");
        if n == 1 {
            let v = given(KINDS[(spec[0] >> 32) as usize], words[0], moved & 1 != 0);
            drop(std::mem::replace(&mut rec.values[field(0)], v));
            return;
        }
        let new: smallvec::SmallVec<[Value; 4]> =
            (0..n).map(|i| given(KINDS[(spec[i] >> 32) as usize], words[i], moved >> i & 1 != 0)).collect();
        let old: smallvec::SmallVec<[Value; 4]> =
            new.into_iter().enumerate().map(|(i, v)| std::mem::replace(&mut rec.values[field(i)], v)).collect();
        drop(old);
    }
}

/// Built-in call `id` on the words at `words`: its result as a word (a
/// value of a boxed kind in a box of its own), or a failure recorded.
pub extern "C" fn call_builtin(ctx: *mut Ctx, id: u64, words: *const u64) -> u64 {
    let ctx = unsafe { &mut *ctx };
    // Safety: the tables outlive the call (see `Ctx::tables`).
    let tables: &Tables = unsafe { &*ctx.tables };
    let call = &tables.builtins[id as usize];
    // Safety: generated code passes a word per argument.
    let args: pmx_cpu::Args = call
        .args
        .iter()
        .enumerate()
        .map(|(i, k)| given(*k, unsafe { *words.add(i) }, call.given >> i & 1 != 0))
        .collect();
    // Safety: the machine that called native code waits for it, and
    // touches nothing meanwhile.
    let m = unsafe { &mut *ctx.machine };
    let (r, what) = match &call.callee {
        RuntimeCallee::Builtin(b) => (pmx_cpu::call_builtin(m, *b, args, call.span), b.name()),
        RuntimeCallee::Accelerate(id, name) => {
            (pmx_cpu::accelerate::run_binding(m, *id, args, call.span), name.as_str())
        }
    };
    result_word(ctx, r, call.result, &format_args!("`{what}`"), call.span)
}

/// The result of a call into the interpreter's runtime as a word of kind
/// `kind` (a boxed value in a box of its own), or its failure recorded
/// (`what`: the callee, should a result not be of its kind; written only
/// then, as this is on every runtime call's path).
fn result_word(ctx: &mut Ctx, r: pmx_cpu::Res<Value>, kind: Kind, what: &dyn std::fmt::Display, span: Span) -> u64 {
    match r {
        Ok(v) => match kind.scalar_word(&v) {
            Some(w) => w,
            None if kind == Kind::Boxed => word::owned(v),
            None => {
                let message = format!("{}{what} gave a value of another type", pmx_cpu::INTERNAL_PREFIX);
                ctx.set(RuntimeError::from_engine(message, span));
                0
            }
        },
        Err(e) => {
            ctx.set(e);
            0
        }
    }
}

/// Application `id` of the function value at `f` to the words at
/// `words`: its result as a word, or a failure recorded. The interpreter
/// applies it (a closure of the interpreter's, a built-in, or a native
/// function's value, which calls native code again).
///
/// `tail`: the site of the frame making the application when it is the
/// frame's last act (`NOT_TAIL` otherwise). The frame the interpreter
/// entered then stands for this one in the trace, as after the
/// interpreter's tail calls: the frame leaves without recording itself
/// (`failed` is `QUIET`), and where it replaced the frame the interpreter
/// called, the callee is shown at that call instead.
pub extern "C" fn apply(ctx: *mut Ctx, id: u64, f: u64, words: *const u64, tail: u64) -> u64 {
    let ctx = unsafe { &mut *ctx };
    // Safety: the tables outlive the call (see `Ctx::tables`).
    let tables: &Tables = unsafe { &*ctx.tables };
    let call = &tables.applies[id as usize];
    let f = unsafe { word::borrow(f) };
    if let Some(w) = direct(ctx, tables, &f, words, call.args.len(), call.span) {
        return finish_apply(ctx, tables, w, tail);
    }
    let args: pmx_cpu::Args = values(&call.args, words).collect();
    let f = (*f).clone();
    // Safety: as in `call_builtin`.
    let m = unsafe { &mut *ctx.machine };
    let r = m.apply(f, args, call.span);
    let w = result_word(ctx, r, call.result, &"a function value", call.span);
    finish_apply(ctx, tables, w, tail)
}

/// A native function's value (or one applied to some arguments) given
/// the rest of its arguments: its entry called with the words, as the
/// interpreter would enter it (a failure's trace shows the function,
/// called at `span`); `None` for any other function value.
fn direct(ctx: &mut Ctx, tables: &Tables, f: &Value, words: *const u64, n: usize, span: Span) -> Option<u64> {
    let (code, bound): (&pmx_cpu::value::Closure, &[Value]) = match f {
        Value::Closure(c) => (c, &[]),
        Value::Partial(p) => match &p.func {
            Value::Closure(c) => (c, &p.args[..]),
            _ => return None,
        },
        _ => return None,
    };
    let d = tables.direct.get(&(code.code as *const pmx_cpu::code::LamCode as usize))?;
    if bound.len() + n != d.params.len() {
        return None;
    }
    let mut all: smallvec::SmallVec<[u64; 8]> = smallvec::SmallVec::with_capacity(d.params.len());
    for (v, k) in bound.iter().zip(&d.params) {
        // A value the partial application holds, borrowed for the call.
        all.push(k.borrowed_word(v));
    }
    // Safety: the caller passes `n` words.
    all.extend_from_slice(unsafe { std::slice::from_raw_parts(words, n) });
    let mut out = 0u64;
    // Safety: the entry takes one word per parameter; the code lives as
    // long as the tables.
    unsafe { (d.entry)(ctx, all.as_ptr(), &mut out) };
    if ctx.failed != 0 {
        if let Some(e) = ctx.error.as_mut() {
            e.add_call(&d.name, span);
        }
        ctx.failed = 1;
    }
    Some(out)
}

/// `apply`'s result word, after a failure shown as `tail` says.
fn finish_apply(ctx: &mut Ctx, tables: &Tables, w: u64, tail: u64) -> u64 {
    if ctx.failed == 0 {
        return w;
    }
    if tail != NOT_TAIL {
        if let Some(e) = ctx.error.as_mut() {
            // The failure's trace so far is what happened inside the
            // application: its last frame is the one it entered, if any
            // (a built-in enters none: the failure is this frame's).
            if let Some(mut entered) = e.trace.pop() {
                let index = (tail & !(ROOT | STUB)) as usize;
                if tail & STUB != 0 {
                    // A stub stands for the interpreter's function: the
                    // call of the stub is the call of that function.
                    entered.1 = tables.sites[index].1;
                }
                if index == 0 || tail & ROOT != 0 {
                    e.tail_call = Some(entered);
                } else {
                    e.trace.push(entered);
                }
                ctx.failed = QUIET;
            }
        }
    }
    w
}

/// A bit of `apply`'s `tail`: the frame is a stub's (`Function::stub`).
pub const STUB: u64 = 1 << 61;

/// `apply`'s `tail` when the application is not a frame's last act.
pub const NOT_TAIL: u64 = u64::MAX;

/// `failed` after a failure whose frame leaves without recording itself.
pub const QUIET: u64 = 2;

/// Function value `id` of the tables made with the words at `words`: a
/// value native code owns.
pub extern "C" fn closure(ctx: *mut Ctx, id: u64, words: *const u64) -> u64 {
    let ctx = unsafe { &*ctx };
    let shape = &ctx.tables().closures[id as usize];
    let f = match shape.of {
        Callable::Builtin(b) => Value::Builtin(b),
        Callable::Function(f) => ctx.tables().functions[&f].clone(),
    };
    if shape.bound.is_empty() {
        return word::owned(f);
    }
    let args = values(&shape.bound, words).collect();
    word::owned(Value::Partial(std::sync::Arc::new(pmx_cpu::value::Partial { func: f, args })))
}

/// Utest `id` of the tables on its two sides' words, with its `using`
/// and `else` function values (null when it has none), as the
/// interpreter records it; a failure (of a function it applies) is
/// recorded in the context.
pub extern "C" fn utest(ctx: *mut Ctx, id: u64, a: u64, b: u64, using: u64, on_fail: u64) {
    let ctx = unsafe { &mut *ctx };
    // Safety: the tables outlive the call (see `Ctx::tables`).
    let tables: &Tables = unsafe { &*ctx.tables };
    let call = &tables.utests[id as usize];
    let (a, b) = (call.sides[0].value(a), call.sides[1].value(b));
    let value = |w: u64| (w != 0).then(|| (*unsafe { word::borrow(w) }).clone());
    let eq = value(using).map(|f| (f, call.using_name.as_deref().unwrap_or("<function>")));
    // Safety: as in `call_builtin`.
    let m = unsafe { &mut *ctx.machine };
    if let Err(e) = pmx_cpu::utest(m, a, b, eq, value(on_fail), call.span) {
        ctx.set(e);
    }
}

/// Runs `f`, turning unwinding (memory the system refuses) into failure
/// `id`'s place with the interpreter's message: nothing unwinds into
/// machine code.
fn guarded<T>(ctx: &mut Ctx, id: u64, none: T, f: impl FnOnce() -> T) -> T {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(v) => v,
        Err(payload) => {
            let span = ctx.tables().failures[id as usize].1;
            ctx.set(pmx_cpu::error_of_panic(payload, span));
            none
        }
    }
}

/// A sequence being built by `create` or `map`: room for `n` elements,
/// asked for at once as the interpreter asks (null after a failure).
pub extern "C" fn builder(ctx: *mut Ctx, id: u64, n: i64) -> *mut pmx_cpu::value::SeqBuilder {
    let ctx = unsafe { &mut *ctx };
    // The interpreter's builder: unboxed as the first element decides,
    // its memory asked for as the interpreter asks.
    guarded(ctx, id, std::ptr::null_mut(), || Box::into_raw(Box::new(Seq::builder(n.max(0) as usize))))
}

/// Appends a word of kind `kind` (its index in `KINDS`); a boxed one is a
/// value native code owns, moved in.
/// (The first element makes the builder ask for all its memory: a
/// refusal is failure `id`'s.)
pub extern "C" fn builder_push(ctx: *mut Ctx, id: u64, b: *mut pmx_cpu::value::SeqBuilder, kind: u64, w: u64) {
    let ctx = unsafe { &mut *ctx };
    let b = unsafe { &mut *b };
    let v = match KINDS[kind as usize] {
        Kind::Boxed => unsafe { word::take(w) },
        k => k.value(w),
    };
    guarded(ctx, id, (), || b.push(v));
}

/// The sequence built, as a list where `like` (a sequence, or null) is
/// one, as the interpreter's `map` keeps its argument's representation.
pub extern "C" fn builder_finish(ctx: *mut Ctx, id: u64, b: *mut pmx_cpu::value::SeqBuilder, like: u64) -> u64 {
    let ctx = unsafe { &mut *ctx };
    let items = *unsafe { Box::from_raw(b) };
    let list = like != 0 && seq(like).is_list();
    guarded(ctx, id, 0, || word::owned(Value::seq(items.finish().with_list(list))))
}

// A sequence of scalars that `create` or `map` builds is written by
// generated code in place: the memory is asked for once the first
// element is computed (as the interpreter's builder asks), the elements
// stored unboxed, and the vector made a sequence at the end, as the
// builder makes its own.

/// Room for `n` scalars of kind `kind` (its index in `KINDS`: `Int`,
/// `Float`, `Bool` or `Char`): where the first goes, or null after a
/// failure (memory the system refuses, failure `id`'s place).
pub extern "C" fn scalars(ctx: *mut Ctx, id: u64, kind: u64, n: i64) -> *mut u8 {
    fn room<T>(n: usize) -> *mut u8 {
        let mut v = std::mem::ManuallyDrop::new(pmx_cpu::alloc_vec::<T>(n));
        v.as_mut_ptr() as *mut u8
    }
    let ctx = unsafe { &mut *ctx };
    let n = n.max(1) as usize;
    guarded(ctx, id, std::ptr::null_mut(), || match KINDS[kind as usize] {
        Kind::Int => room::<i64>(n),
        Kind::Float => room::<f64>(n),
        Kind::Bool => room::<bool>(n),
        Kind::Char => room::<char>(n),
        k => unreachable!("scalars of kind {k:?}"),
    })
}

/// The sequence of the `n` scalars written at `p` (from `scalars` with
/// the same `n`; nothing is asked for when `n` is 0), a list where `like`
/// (a sequence, or null) is one.
pub extern "C" fn scalars_finish(kind: u64, p: *mut u8, n: i64, like: u64) -> u64 {
    fn view<T: Clone>(p: *mut u8, n: usize) -> pmx_cpu::value::View<T> {
        // Safety: `scalars` asked for room for exactly `n.max(1)` of
        // them, and generated code wrote all `n`.
        pmx_cpu::value::View::from_vec(unsafe { Vec::from_raw_parts(p as *mut T, n, n.max(1)) })
    }
    let n = n as usize;
    let items = if n == 0 {
        Seq::builder(0).finish()
    } else {
        match KINDS[kind as usize] {
            Kind::Int => Seq::Int(view(p, n)),
            Kind::Float => Seq::Float(view(p, n)),
            Kind::Bool => Seq::Bool(view(p, n)),
            Kind::Char => Seq::Char(view(p, n)),
            k => unreachable!("scalars of kind {k:?}"),
        }
    };
    let list = like != 0 && seq(like).is_list();
    word::owned(Value::seq(items.with_list(list)))
}

/// Where a tensor's elements are, so that generated code reads and writes
/// them in place: `out` gets the address of its first `Int` or `Float`
/// element (0 for a tensor of other elements: the runtime's accesses
/// serve those), its rank and where its shape is (`usize`s).
pub extern "C" fn tensor_view(t: u64, out: *mut u64) {
    use pmx_cpu::tensor::TensorData;
    let t = tensor(t);
    let base = match &*t.data {
        TensorData::Int(d) => d[t.offset..].as_ptr() as u64,
        TensorData::Float(d) => d[t.offset..].as_ptr() as u64,
        TensorData::Boxed(_) => 0,
    };
    let p = [base, t.shape.len() as u64, t.shape.as_ptr() as u64];
    // Safety: generated code passes room for three words.
    unsafe { std::ptr::copy_nonoverlapping(p.as_ptr(), out, 3) };
}

/// The indices at `words` (`n` of them).
fn indices<'a>(words: *const u64, n: i64) -> &'a [i64] {
    unsafe { std::slice::from_raw_parts(words as *const i64, n as usize) }
}

fn tensor<'a>(t: u64) -> &'a pmx_cpu::tensor::Tensor {
    unsafe { word::tensor(t) }
}

/// `tensorGetExn t [i, ..]` with the index read in place: the element as
/// a word of kind `kind` (its index in `KINDS`; a boxed one in a box of
/// its own); a bad index is failure `id`'s place with the runtime's
/// message.
pub extern "C" fn tensor_get(ctx: *mut Ctx, id: u64, t: u64, words: *const u64, n: i64, kind: u64) -> u64 {
    let ctx = unsafe { &mut *ctx };
    match tensor(t).get(indices(words, n)) {
        Ok(v) => KINDS[kind as usize].scalar_word(&v).unwrap_or_else(|| word::owned(v)),
        Err(message) => {
            let span = ctx.tables().failures[id as usize].1;
            ctx.set(RuntimeError::new(message, span));
            0
        }
    }
}

/// `tensorSetExn t [i, ..] v`, likewise.
pub extern "C" fn tensor_set(ctx: *mut Ctx, id: u64, t: u64, words: *const u64, n: i64, kind: u64, v: u64) {
    let ctx = unsafe { &mut *ctx };
    if let Err(message) = tensor(t).set(indices(words, n), KINDS[kind as usize].value(v)) {
        let span = ctx.tables().failures[id as usize].1;
        ctx.set(RuntimeError::new(message, span));
    }
}

// `tensorCreateCArrayInt` and `tensorCreateCArrayFloat` whose function is
// a native function: generated
// code calls it for each element, as the interpreter's built-in does
// (the shape checked first, then each element in row-major order).

/// The number of elements of a new tensor of shape `shape` (a sequence),
/// or its failure (failure `id`'s place, the interpreter's message).
pub extern "C" fn tensor_size(ctx: *mut Ctx, id: u64, shape: u64) -> i64 {
    let ctx = unsafe { &mut *ctx };
    let span = ctx.tables().failures[id as usize].1;
    // Safety: as in `call_builtin`.
    let m = unsafe { &*ctx.machine };
    let shape = unsafe { word::borrow(shape) };
    match pmx_cpu::tensor_shape(m, &shape, span) {
        Ok(dims) => dims.iter().product::<usize>() as i64,
        Err(e) => {
            ctx.set(e);
            0
        }
    }
}

/// The index of element `lin` of a tensor of shape `shape` (checked by
/// `tensor_size`): a sequence native code owns.
pub extern "C" fn tensor_index(shape: u64, lin: i64) -> u64 {
    word::owned(pmx_cpu::tensor_index_of(lin as usize, &dims(shape)))
}

/// A tensor shape's dimensions (checked by `tensor_size`), without asking
/// for memory below rank 5: `tensor_index` reads them for every element.
fn dims(shape: u64) -> smallvec::SmallVec<[usize; 4]> {
    let s = seq(shape);
    (0..s.len()).map(|k| s.get(k).as_int() as usize).collect()
}

/// The tensor of shape `shape` of the `n` scalars of kind `kind` (`Int`
/// or `Float`, their index in `KINDS`) written at `p` (from `scalars`).
pub extern "C" fn tensor_finish(kind: u64, p: *mut u8, n: i64, shape: u64) -> u64 {
    use pmx_cpu::tensor::{ElemKind, Tensor};
    let dims = dims(shape).to_vec();
    let n = n as usize;
    // Safety: `scalars` asked for room for `n.max(1)` of them, and
    // generated code wrote all `n`.
    let words: Vec<u64> = unsafe { Vec::from_raw_parts(p as *mut u64, n, n.max(1)) };
    let (elem, value): (ElemKind, fn(u64) -> Value) = match KINDS[kind as usize] {
        Kind::Int => (ElemKind::Int, |w| Value::Int(w as i64)),
        _ => (ElemKind::Float, |w| Value::Float(f64::from_bits(w))),
    };
    let t = Tensor::from_fn::<()>(elem, dims, |i| Ok(value(words[i]))).unwrap_or_else(|_| unreachable!("no failure"));
    word::owned(Value::Tensor(std::sync::Arc::new(t)))
}

/// Top-level value `id` of the tables: a scalar's word, or where the
/// interpreter keeps a boxed one (borrowed: globals live for the run).
pub extern "C" fn global(ctx: *mut Ctx, id: u64) -> u64 {
    let ctx = unsafe { &mut *ctx };
    let tables: &Tables = unsafe { &*ctx.tables };
    let (name, kind) = tables.globals[id as usize];
    let m = unsafe { &*ctx.machine };
    match m.global_by_name(name) {
        Ok(v) => kind.borrowed_word(v),
        Err(e) => {
            ctx.set(e);
            0
        }
    }
}
