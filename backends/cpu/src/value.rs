//! Run-time values.
//!
//! Values are cheap to clone (scalars, or a shared pointer). Sequences of
//! `Int`, `Float`, `Char` and `Bool` are stored unboxed and contiguously;
//! other sequences hold boxed values. Everything is `Send + Sync` so that
//! parallel keywords can run on rayon's threads: references are mutexes and
//! tensor elements are atomics.

// Re-exported: native engines build unboxed sequences from their buffers.
pub use crate::buffer::View;
use crate::code::LamCode;
use crate::error::alloc_collect;
use crate::tensor::Tensor;
use pmx_ast::{compare_labels, Builtin, NameId, SmolStr};
use std::sync::{Arc, Mutex};

// A 64-bit tag puts every payload at offset 8, so a value copies as two
// words; with a byte tag, `Bool` and `Char` payloads sit at odd offsets and
// copies stall on partially overlapping stores.
#[repr(u64)]
pub enum Value {
    Int(i64),
    Float(f64),
    Bool(bool),
    Char(char),
    Seq(Arc<Seq>),
    Record(Arc<Record>),
    Con(Arc<ConValue>),
    Closure(Arc<Closure>),
    /// A function applied to fewer arguments than it takes.
    Partial(Arc<Partial>),
    Builtin(Builtin),
    /// A function declared with `external`.
    External(Arc<ExternFn>),
    Tensor(Arc<Tensor>),
    Ref(Arc<Mutex<Value>>),
    Symbol(u64),
    /// A float a derivative is being taken of (`crate::ad`): only while
    /// that derivative runs.
    Dual(Arc<crate::ad::Dual>),
}

impl Clone for Value {
    /// Scalars first: they are most of what the evaluator copies.
    #[inline(always)]
    fn clone(&self) -> Self {
        match self {
            Value::Int(i) => Value::Int(*i),
            Value::Float(f) => Value::Float(*f),
            Value::Bool(b) => Value::Bool(*b),
            Value::Char(c) => Value::Char(*c),
            other => other.clone_shared(),
        }
    }
}

impl Value {
    #[inline(never)]
    fn clone_shared(&self) -> Value {
        match self {
            Value::Seq(x) => Value::Seq(x.clone()),
            Value::Record(x) => Value::Record(x.clone()),
            Value::Con(x) => Value::Con(x.clone()),
            Value::Closure(x) => Value::Closure(x.clone()),
            Value::Partial(x) => Value::Partial(x.clone()),
            Value::Builtin(b) => Value::Builtin(*b),
            Value::External(x) => Value::External(x.clone()),
            Value::Tensor(x) => Value::Tensor(x.clone()),
            Value::Ref(x) => Value::Ref(x.clone()),
            Value::Symbol(s) => Value::Symbol(*s),
            Value::Dual(d) => Value::Dual(d.clone()),
            Value::Int(_) | Value::Float(_) | Value::Bool(_) | Value::Char(_) => unreachable!("scalars are copied"),
        }
    }
}

thread_local! {
    /// `()`, one per thread: every `tensorSetExn` of a parallel loop
    /// returns it, and one shared count, bumped from every core, made the
    /// interpreter's parallel loops slower than a sequential one.
    static UNIT: Arc<Record> = Arc::new(Record { labels: Arc::from(Vec::new()), values: Box::new([]) });
}

impl Value {
    pub fn unit() -> Value {
        Value::Record(UNIT.with(Arc::clone))
    }

    pub fn seq(s: Seq) -> Value {
        Value::Seq(Arc::new(s))
    }

    pub fn string(s: &str) -> Value {
        Value::seq(Seq::Char(View::from_vec(s.chars().collect())))
    }

    pub fn tuple(items: Vec<Value>) -> Value {
        let labels: Vec<SmolStr> = (0..items.len()).map(|i| SmolStr::new(i.to_string())).collect();
        Value::Record(Arc::new(Record { labels: Arc::from(labels), values: items.into_boxed_slice() }))
    }

    /// Moves the value to `dst` as two machine words, without dropping
    /// what `dst` held.
    ///
    /// Why: a value just computed is in two registers; the compiler's own
    /// copy of a 16-byte enum stores them as two words to the stack and
    /// reloads them as one 16-byte word, and that load waits until both
    /// stores complete (store-to-load forwarding fails), about a dozen
    /// cycles on every such move. Word stores that the compiler may not
    /// merge (volatile) avoid it.
    ///
    /// # Safety
    /// `dst` must be valid for writes and aligned; its old value is
    /// overwritten, not dropped (it must own nothing, or be leaked on
    /// purpose).
    #[inline(always)]
    pub unsafe fn write_to(self, dst: *mut Value) {
        use std::mem::{ManuallyDrop, MaybeUninit};
        let v = ManuallyDrop::new(self);
        let src = &*v as *const Value as *const MaybeUninit<u64>;
        let dst = dst as *mut MaybeUninit<u64>;
        // Safety: `Value` is two 8-byte words (its tag is a `u64`), read as
        // `MaybeUninit` since a narrow payload leaves padding; the value
        // moves to `dst` whole and `v` is never dropped, so ownership moves
        // exactly once.
        unsafe {
            dst.write_volatile(src.read());
            dst.add(1).write_volatile(src.add(1).read());
        }
    }

    /// The `Int` in a value known to be one (type checking), consuming it
    /// without a call of the general destructor.
    #[inline(always)]
    pub fn into_int(self) -> i64 {
        let i = self.as_int();
        std::mem::forget(self);
        i
    }

    /// The `Float` in a value known to be one (see [`Value::into_int`]).
    #[inline(always)]
    pub fn into_float(self) -> f64 {
        let f = self.as_float();
        std::mem::forget(self);
        f
    }

    /// Moves a value out of `src` as two words (see [`Value::write_to`]).
    ///
    /// # Safety
    /// `src` must hold a valid value that is afterwards neither used nor
    /// dropped (ownership moves to the result).
    #[inline(always)]
    pub unsafe fn take_words(src: *const Value) -> Value {
        use std::mem::MaybeUninit;
        let src = src as *const MaybeUninit<u64>;
        // Safety: as in `write_to`; the caller gives up the original.
        unsafe {
            let words = [src.read_volatile(), src.add(1).read_volatile()];
            std::mem::transmute::<[MaybeUninit<u64>; 2], Value>(words)
        }
    }

    /// Whether the value owns nothing (dropping it does nothing).
    #[inline(always)]
    pub fn is_scalar(&self) -> bool {
        matches!(
            self,
            Value::Int(_) | Value::Float(_) | Value::Bool(_) | Value::Char(_) | Value::Builtin(_) | Value::Symbol(_)
        )
    }

    pub fn as_int(&self) -> i64 {
        match self {
            Value::Int(i) => *i,
            _ => crate::error::type_confusion("an Int"),
        }
    }

    pub fn as_float(&self) -> f64 {
        match self {
            Value::Float(f) => *f,
            _ => crate::error::type_confusion("a Float"),
        }
    }

    pub fn as_bool(&self) -> bool {
        match self {
            Value::Bool(b) => *b,
            _ => crate::error::type_confusion("a Bool"),
        }
    }

    pub fn as_char(&self) -> char {
        match self {
            Value::Char(c) => *c,
            _ => crate::error::type_confusion("a Char"),
        }
    }

    pub fn as_seq(&self) -> &Seq {
        match self {
            Value::Seq(s) => s,
            _ => crate::error::type_confusion("a sequence"),
        }
    }

    pub fn as_tensor(&self) -> &Arc<Tensor> {
        match self {
            Value::Tensor(t) => t,
            _ => crate::error::type_confusion("a tensor"),
        }
    }

    /// The text of a `[Char]` value.
    pub fn as_string(&self) -> String {
        self.as_seq().to_string_lossy()
    }
}

/// A record; labels sorted as [`compare_labels`] orders them. Tuples are
/// records labelled `0`, `1`, ...; `()` has no field.
pub struct Record {
    pub labels: Arc<[SmolStr]>,
    pub values: Box<[Value]>,
}

impl Record {
    /// Builds a record from fields in any order.
    pub fn from_fields(mut fields: Vec<(SmolStr, Value)>) -> Record {
        fields.sort_by(|a, b| compare_labels(&a.0, &b.0));
        let (labels, values): (Vec<SmolStr>, Vec<Value>) = fields.into_iter().unzip();
        Record { labels: Arc::from(labels), values: values.into_boxed_slice() }
    }

    pub fn get(&self, label: &str) -> Option<&Value> {
        self.labels.iter().position(|l| l == label).map(|i| &self.values[i])
    }
}

/// A value built with a constructor of a variant type.
pub struct ConValue {
    pub tag: NameId,
    pub name: SmolStr,
    pub arg: Value,
}

/// A function value: compiled code and the values it captured.
///
/// The code is borrowed, not reference-counted: it belongs to the running
/// program, which outlives every value of the run, and a shared count
/// bumped by every closure creation on every thread would serialise
/// parallel code.
pub struct Closure {
    pub code: &'static LamCode,
    pub env: Box<[Value]>,
}

/// An external function: its name and, when pmx implements it, the code.
pub struct ExternFn {
    pub name: SmolStr,
    pub arity: usize,
    pub run: Option<crate::builtins::ExternCode>,
}

pub struct Partial {
    pub func: Value,
    pub args: Vec<Value>,
}

/// Builds a sequence one element at a time, straight into its unboxed
/// form (the first element decides it, as in [`Seq::from_values`]): no
/// vector of two-word values is filled and converted first.
pub struct SeqBuilder {
    items: Built,
    capacity: usize,
}

enum Built {
    Empty,
    Int(Vec<i64>),
    Float(Vec<f64>),
    Char(Vec<char>),
    Bool(Vec<bool>),
    Boxed(Vec<Value>),
}

impl SeqBuilder {
    #[inline]
    pub fn push(&mut self, v: Value) {
        match &mut self.items {
            Built::Int(xs) => xs.push(v.as_int()),
            Built::Float(xs) => match v {
                Value::Float(x) => xs.push(x),
                other => self.rebox(other),
            },
            Built::Char(xs) => xs.push(v.as_char()),
            Built::Bool(xs) => xs.push(v.as_bool()),
            Built::Boxed(xs) => xs.push(v),
            Built::Empty => self.first(v),
        }
    }

    /// A dual among floats (`crate::ad`): the sequence so far becomes
    /// boxed.
    #[cold]
    fn rebox(&mut self, v: Value) {
        let Built::Float(xs) = std::mem::replace(&mut self.items, Built::Empty) else {
            unreachable!("only float sequences meet duals")
        };
        let mut boxed: Vec<Value> = xs.into_iter().map(Value::Float).collect();
        boxed.push(v);
        self.items = Built::Boxed(boxed);
    }

    fn first(&mut self, v: Value) {
        fn one<T>(n: usize, x: T) -> Vec<T> {
            let mut xs = crate::error::alloc_vec(n.max(1));
            xs.push(x);
            xs
        }
        let n = self.capacity;
        self.items = match v {
            Value::Int(x) => Built::Int(one(n, x)),
            Value::Float(x) => Built::Float(one(n, x)),
            Value::Char(x) => Built::Char(one(n, x)),
            Value::Bool(x) => Built::Bool(one(n, x)),
            other => Built::Boxed(one(n, other)),
        };
    }

    pub fn finish(self) -> Seq {
        match self.items {
            Built::Empty => Seq::Boxed(View::from_vec(Vec::new())),
            Built::Int(xs) => Seq::Int(View::from_vec(xs)),
            Built::Float(xs) => Seq::Float(View::from_vec(xs)),
            Built::Char(xs) => Seq::Char(View::from_vec(xs)),
            Built::Bool(xs) => Seq::Bool(View::from_vec(xs)),
            Built::Boxed(xs) => Seq::Boxed(View::from_vec(xs)),
        }
    }
}

/// A sequence, by element representation.
#[derive(Clone)]
pub enum Seq {
    Int(View<i64>),
    Float(View<f64>),
    Char(View<char>),
    Bool(View<bool>),
    Boxed(View<Value>),
}

/// Applies an expression to the view of any representation.
macro_rules! with_view {
    ($seq:expr, $v:ident => $e:expr) => {
        match $seq {
            Seq::Int($v) => $e,
            Seq::Float($v) => $e,
            Seq::Char($v) => $e,
            Seq::Bool($v) => $e,
            Seq::Boxed($v) => $e,
        }
    };
}

/// Maps a view to a view of the same representation.
macro_rules! map_view {
    ($seq:expr, $v:ident => $e:expr) => {
        match $seq {
            Seq::Int($v) => Seq::Int($e),
            Seq::Float($v) => Seq::Float($e),
            Seq::Char($v) => Seq::Char($e),
            Seq::Bool($v) => Seq::Bool($e),
            Seq::Boxed($v) => Seq::Boxed($e),
        }
    };
}

impl Seq {
    pub fn empty() -> Seq {
        Seq::Boxed(View::empty())
    }

    /// A sequence of values, unboxed when the elements are scalars.
    /// A sequence built element by element (see [`SeqBuilder`]).
    pub fn builder(capacity: usize) -> SeqBuilder {
        SeqBuilder { items: Built::Empty, capacity }
    }

    /// A sequence of one value, with room to grow at the front (a first
    /// `cons`) or at the back (a first `snoc`), so that more of the same
    /// fill it in place.
    fn single(value: Value, front: bool) -> Seq {
        const ROOM: usize = 7;
        let (f, b) = if front { (ROOM, 0) } else { (0, ROOM) };
        match value {
            Value::Int(x) => Seq::Int(View::single(x, f, b)),
            Value::Float(x) => Seq::Float(View::single(x, f, b)),
            Value::Char(x) => Seq::Char(View::single(x, f, b)),
            Value::Bool(x) => Seq::Bool(View::single(x, f, b)),
            v => Seq::Boxed(View::single(v, f, b)),
        }
    }

    pub fn from_values(values: Vec<Value>) -> Seq {
        match values.first() {
            Some(Value::Int(_)) => Seq::Int(View::from_vec(alloc_collect(values.iter().map(Value::as_int)))),
            Some(Value::Float(_)) => {
                let mut xs = crate::error::alloc_vec(values.len());
                for v in &values {
                    match v {
                        Value::Float(x) => xs.push(*x),
                        // Floats mixed with duals (`crate::ad`) stay boxed.
                        _ => return Seq::Boxed(View::from_vec(values)),
                    }
                }
                Seq::Float(View::from_vec(xs))
            }
            Some(Value::Char(_)) => Seq::Char(View::from_vec(alloc_collect(values.iter().map(Value::as_char)))),
            Some(Value::Bool(_)) => Seq::Bool(View::from_vec(alloc_collect(values.iter().map(Value::as_bool)))),
            _ => Seq::Boxed(View::from_vec(values)),
        }
    }

    pub fn len(&self) -> usize {
        with_view!(self, v => v.len())
    }

    /// Whether the program sees the sequence as a list (`isList`); see
    /// [`View::is_list`].
    pub fn is_list(&self) -> bool {
        with_view!(self, v => v.is_list())
    }

    /// The same sequence, tagged as a list or as a rope.
    pub fn with_list(self, list: bool) -> Seq {
        map_view!(self, v => v.with_list(list))
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Element `i` (which must be in range).
    pub fn get(&self, i: usize) -> Value {
        match self {
            Seq::Int(v) => Value::Int(v.as_slice()[i]),
            Seq::Float(v) => Value::Float(v.as_slice()[i]),
            Seq::Char(v) => Value::Char(v.as_slice()[i]),
            Seq::Bool(v) => Value::Bool(v.as_slice()[i]),
            Seq::Boxed(v) => v.as_slice()[i].clone(),
        }
    }

    pub fn to_values(&self) -> Vec<Value> {
        alloc_collect((0..self.len()).map(|i| self.get(i)))
    }

    pub fn to_string_lossy(&self) -> String {
        match self {
            Seq::Char(v) => v.as_slice().iter().collect(),
            other => {
                other.to_values().iter().filter_map(|c| if let Value::Char(c) = c { Some(*c) } else { None }).collect()
            }
        }
    }

    /// Elements `from..to`, sharing storage.
    pub fn slice(&self, from: usize, to: usize) -> Seq {
        map_view!(self, v => v.slice(from, to))
    }

    /// Whether the representation can hold `value` without boxing.
    fn accepts(&self, value: &Value) -> bool {
        matches!(
            (self, value),
            (Seq::Int(_), Value::Int(_))
                | (Seq::Float(_), Value::Float(_))
                | (Seq::Char(_), Value::Char(_))
                | (Seq::Bool(_), Value::Bool(_))
        ) || matches!((self, value), (Seq::Boxed(_), v) if !is_scalar(v))
    }

    /// `self ++ [value]`.
    pub fn snoc(&self, value: Value) -> Seq {
        let mut s = self.clone();
        s.snoc_mut(value);
        s
    }

    /// `[value] ++ self`.
    pub fn cons(&self, value: Value) -> Seq {
        let mut s = self.clone();
        s.cons_mut(value);
        s
    }

    /// `self ++ [value]`, changing this sequence: where its buffer has
    /// room after it, the view only grows (`View::append_mut`), so a
    /// sequence nobody else holds (native code's unique values) grows
    /// without a new sequence; the persistent `snoc` is this on a copy of
    /// the view.
    pub fn snoc_mut(&mut self, value: Value) {
        self.grow_mut(value, false)
    }

    /// `[value] ++ self`, changing this sequence (see [`Seq::snoc_mut`]).
    pub fn cons_mut(&mut self, value: Value) {
        self.grow_mut(value, true)
    }

    /// `value` added at the front or at the back. A first element gets
    /// room on the side that grew (`single`); one of another
    /// representation than the rest makes the sequence boxed.
    fn grow_mut(&mut self, value: Value, front: bool) {
        let list = self.is_list();
        if self.is_empty() {
            *self = Seq::single(value, front).with_list(list);
            return;
        }
        if !self.accepts(&value) {
            let mut all = self.to_values();
            if front {
                all.insert(0, value);
            } else {
                all.push(value);
            }
            *self = Seq::from_values(all).with_list(list);
            return;
        }
        fn put<T: Clone>(v: &mut View<T>, x: T, front: bool) {
            if front {
                v.prepend_mut(&[x])
            } else {
                v.append_mut(&[x])
            }
        }
        match (self, value) {
            (Seq::Int(v), Value::Int(x)) => put(v, x, front),
            (Seq::Float(v), Value::Float(x)) => put(v, x, front),
            (Seq::Char(v), Value::Char(x)) => put(v, x, front),
            (Seq::Bool(v), Value::Bool(x)) => put(v, x, front),
            (Seq::Boxed(v), x) => put(v, x, front),
            _ => unreachable!("checked by accepts"),
        }
    }

    /// `self ++ other`, changing this sequence (see [`Seq::snoc_mut`]).
    pub fn concat_mut(&mut self, other: &Seq) {
        // A longer `other` may grow at its front instead (`concat`).
        if self.is_empty() || other.len() > self.len() || other.is_list() != self.is_list() {
            *self = self.concat(other);
            return;
        }
        match (self, other) {
            (Seq::Int(a), Seq::Int(b)) => a.append_mut(b.as_slice()),
            (Seq::Float(a), Seq::Float(b)) => a.append_mut(b.as_slice()),
            (Seq::Char(a), Seq::Char(b)) => a.append_mut(b.as_slice()),
            (Seq::Bool(a), Seq::Bool(b)) => a.append_mut(b.as_slice()),
            (Seq::Boxed(a), Seq::Boxed(b)) => a.append_mut(b.as_slice()),
            (a, b) => *a = a.concat(b),
        }
    }

    /// `self ++ other`: a list when either is one, as in Miking.
    pub fn concat(&self, other: &Seq) -> Seq {
        self.concat_rep(other).with_list(self.is_list() || other.is_list())
    }

    fn concat_rep(&self, other: &Seq) -> Seq {
        if other.is_empty() {
            return self.clone();
        }
        if self.is_empty() {
            return other.clone();
        }
        match (self, other) {
            (Seq::Int(a), Seq::Int(b)) => Seq::Int(a.concat(b)),
            (Seq::Float(a), Seq::Float(b)) => Seq::Float(a.concat(b)),
            (Seq::Char(a), Seq::Char(b)) => Seq::Char(a.concat(b)),
            (Seq::Bool(a), Seq::Bool(b)) => Seq::Bool(a.concat(b)),
            (Seq::Boxed(a), Seq::Boxed(b)) => Seq::Boxed(a.concat(b)),
            (a, b) => {
                let mut all = a.to_values();
                all.extend(b.to_values());
                Seq::from_values(all)
            }
        }
    }

    /// The sequence with element `i` replaced (in place when unshared).
    pub fn set(self, i: usize, value: Value) -> Seq {
        let list = self.is_list();
        self.set_rep(i, value).with_list(list)
    }

    fn set_rep(self, i: usize, value: Value) -> Seq {
        if !self.accepts(&value) {
            let mut all = self.to_values();
            all[i] = value;
            return Seq::from_values(all);
        }
        match (self, value) {
            (Seq::Int(v), Value::Int(x)) => Seq::Int(v.set(i, x)),
            (Seq::Float(v), Value::Float(x)) => Seq::Float(v.set(i, x)),
            (Seq::Char(v), Value::Char(x)) => Seq::Char(v.set(i, x)),
            (Seq::Bool(v), Value::Bool(x)) => Seq::Bool(v.set(i, x)),
            (Seq::Boxed(v), x) => Seq::Boxed(v.set(i, x)),
            _ => unreachable!("checked by accepts"),
        }
    }

    pub fn reverse(&self) -> Seq {
        map_view!(self, v => { let mut items = alloc_collect(v.as_slice().iter().cloned()); items.reverse(); View::from_vec(items).with_list(v.is_list()) })
    }

    /// The integers of an `[Int]` (tensor shapes and indices).
    pub fn ints(&self) -> Vec<i64> {
        match self {
            Seq::Int(v) => v.as_slice().to_vec(),
            other => other.to_values().iter().map(Value::as_int).collect(),
        }
    }
}

fn is_scalar(v: &Value) -> bool {
    matches!(v, Value::Int(_) | Value::Float(_) | Value::Char(_) | Value::Bool(_))
}

#[cfg(test)]
mod layout {
    #[test]
    fn values_are_two_words() {
        assert_eq!(std::mem::size_of::<super::Value>(), 16);
        assert_eq!(std::mem::size_of::<crate::error::Res<super::Value>>(), 16);
    }
}

#[cfg(test)]
mod grow_in_place {
    use super::{Seq, Value};

    fn ints(s: &Seq) -> Vec<i64> {
        s.to_values().iter().map(|v| v.as_int()).collect()
    }

    fn seqs() -> Vec<Seq> {
        let mut out = vec![Seq::empty(), Seq::from_values(vec![Value::Int(1), Value::Int(2)])];
        // One that shares its buffer with another view, which must not see
        // the growth.
        out.push(out[1].snoc(Value::Int(3)));
        out.push(Seq::from_values(vec![Value::Int(4)]).with_list(true));
        out
    }

    /// Growing in place gives the elements expected and the list tag of
    /// the persistent operations (`concat`'s too: a list when either is
    /// one), and leaves every other view of the buffer as it was.
    #[test]
    fn growing_in_place_is_the_persistent_operation() {
        for s in seqs() {
            for other in seqs() {
                let before = (ints(&s), ints(&other));
                let mut a = s.clone();
                a.snoc_mut(Value::Int(9));
                let mut b = s.clone();
                b.cons_mut(Value::Int(9));
                let mut c = s.clone();
                c.concat_mut(&other);
                let snocced: Vec<i64> = before.0.iter().copied().chain([9]).collect();
                let consed: Vec<i64> = [9].into_iter().chain(before.0.iter().copied()).collect();
                let joined: Vec<i64> = before.0.iter().chain(&before.1).copied().collect();
                for (mutated, want, list) in [
                    (a, snocced, s.is_list()),
                    (b, consed, s.is_list()),
                    (c, joined.clone(), s.is_list() || other.is_list()),
                ] {
                    assert_eq!(ints(&mutated), want);
                    assert_eq!(mutated.is_list(), list);
                }
                assert_eq!(ints(&s.concat(&other)), joined);
                assert_eq!((ints(&s), ints(&other)), before);
            }
        }
    }

    /// A string built a character at a time in place.
    #[test]
    fn a_sequence_built_in_place() {
        let mut s = Seq::empty();
        for i in 0..100 {
            s.snoc_mut(Value::Int(i));
            s.cons_mut(Value::Int(-i));
        }
        let want: Vec<i64> = (0..100).rev().map(|i| -i).chain(0..100).collect();
        assert_eq!(ints(&s), want);
    }
}
