//! How native code holds a value of a boxed type in one machine word.
//!
//! A sequence, record, variant value or tensor is an `Arc` inside the
//! interpreter's `Value`; native code holds the `Arc`'s own pointer, with
//! what it points to in the low three bits (an `Arc`'s data is aligned to
//! at least 8: its counts come first). So making one, passing it on and
//! reading its parts goes through no box of its own, and a variant
//! value's constructor or a record's field is read by generated code in
//! place (`gen.rs`, from the offsets below). Any other value (a function
//! value, a reference, a symbol, an abstract type's value) is a pointer
//! to a `Value` (tag 0).
//!
//! A word is *owned* (it holds one count of its `Arc`, or it is a
//! `Box<Value>` of its own: `owned`, `take`, `dup`, `drop_word`) or
//! *borrowed* (it holds nothing, and lives no longer than the value it
//! was read from: `borrowed`, `borrow`). Which one a word is, generated
//! code knows (`gen.rs`'s scopes); the word itself does not say.
//!
//! Which tag a word has depends only on the value, never on the path
//! that made it: every word comes from `owned`, `borrowed`, or generated
//! code's reads of a `Value` of a type whose tag is static (`tag_of`
//! there), so the inline reads may rely on it.

use pmx_cpu::tensor::Tensor;
use pmx_cpu::value::{ConValue, Record, Seq, Value};
use std::mem::ManuallyDrop;
use std::sync::Arc;

pub const TAG_BITS: u64 = 7;
pub const SEQ: u64 = 1;
pub const RECORD: u64 = 2;
pub const CON: u64 = 3;
pub const TENSOR: u64 = 4;

/// Where a variant value's constructor identity (`NameId`, 8 bytes) and
/// its payload (`Value`) are, from the `Arc`'s pointer.
pub const CON_TAG_OFFSET: i32 = std::mem::offset_of!(ConValue, tag) as i32;
pub const CON_ARG_OFFSET: i32 = std::mem::offset_of!(ConValue, arg) as i32;

/// How far an `Arc`'s data is from where the `Arc` itself points (its
/// counts come first): a `Value` holds the latter, a word the former.
/// Measured once on an `Arc` of each kind, rather than assumed.
pub fn arc_data_offset() -> i64 {
    fn of<T>(a: Arc<T>) -> i64 {
        // Safety: an `Arc` of a sized type is one pointer (its allocator
        // is zero-sized).
        let inner: usize = unsafe { std::mem::transmute_copy::<Arc<T>, usize>(&a) };
        Arc::as_ptr(&a) as usize as i64 - inner as i64
    }
    static OFFSET: std::sync::OnceLock<i64> = std::sync::OnceLock::new();
    *OFFSET.get_or_init(|| {
        let Value::Record(unit) = Value::unit() else { unreachable!("unit is a record") };
        let offsets = [
            of(Arc::new(Seq::empty())),
            of(unit),
            of(Arc::new(ConValue { tag: pmx_ast::NameId::MAIN, name: "".into(), arg: Value::Int(0) })),
            of(Arc::new(
                Tensor::from_fn(pmx_cpu::tensor::ElemKind::Int, vec![0], |_| Ok::<_, ()>(Value::Int(0)))
                    .expect("empty"),
            )),
        ];
        assert!(offsets.iter().all(|o| *o == offsets[0] && o % 8 == 0), "Arcs whose data sit apart: {offsets:?}");
        offsets[0]
    })
}

/// Where an `Arc`'s strong and weak counts are, from its data (as
/// [`arc_data_offset`] measures it): found by looking at an `Arc` whose
/// counts are known, once with one strong count and once with two, so
/// that generated code tests uniqueness in place (`gen.rs`'s
/// `site_unique`). `None` where the counts are not where they were
/// looked for: the runtime's `unique` then answers.
pub fn arc_counts_offsets() -> Option<(i32, i32)> {
    static OFFSETS: std::sync::OnceLock<Option<(i32, i32)>> = std::sync::OnceLock::new();
    *OFFSETS.get_or_init(|| {
        let data = arc_data_offset();
        let a = Arc::new(ConValue { tag: pmx_ast::NameId::MAIN, name: "".into(), arg: Value::Int(0) });
        let inner = Arc::as_ptr(&a) as usize - data as usize;
        // Safety: the `Arc`'s allocation starts `data` bytes before its
        // data, with its counts (two words, initialised) in it.
        let counts = || unsafe { (*(inner as *const usize), *((inner + 8) as *const usize)) };
        let one = counts();
        let b = a.clone();
        let two = counts();
        drop(b);
        (data >= 16 && one == (1, 1) && two == (2, 1)).then_some((-data as i32, -data as i32 + 8))
    })
}

/// Where a record's pointer to its fields is, from the `Arc`'s pointer:
/// found once by looking for it in a record (a boxed slice's layout is
/// not promised), so generated code reads a field in place.
pub fn record_fields_offset() -> i32 {
    static OFFSET: std::sync::OnceLock<i32> = std::sync::OnceLock::new();
    *OFFSET.get_or_init(|| {
        let r = Record {
            labels: Arc::from(vec!["a".into(), "b".into()]),
            values: Box::new([Value::Int(1), Value::Int(2)]),
        };
        let fields = r.values.as_ptr() as usize;
        let words = std::mem::size_of::<Record>() / 8;
        // Safety: a `Record` is `words` words long, all initialised
        // (pointers and lengths).
        let at = (0..words)
            .find(|i| unsafe { *(&r as *const Record as *const usize).add(*i) } == fields)
            .expect("a record holds where its fields are");
        (at * 8) as i32
    })
}

/// A constructor identity as the 8 bytes a variant value holds it in,
/// for generated code to compare with.
pub fn con_tag_bits(id: pmx_ast::NameId) -> i64 {
    // Safety: a `NameId` is two `u32`s (the transmute checks the size),
    // and every bit pattern is a `u64`.
    unsafe { std::mem::transmute::<pmx_ast::NameId, i64>(id) }
}

/// The word of a value that `v` keeps alive (holding nothing).
pub fn borrowed(v: &Value) -> u64 {
    match v {
        Value::Seq(a) => Arc::as_ptr(a) as u64 | SEQ,
        Value::Record(a) => Arc::as_ptr(a) as u64 | RECORD,
        Value::Con(a) => Arc::as_ptr(a) as u64 | CON,
        Value::Tensor(a) => Arc::as_ptr(a) as u64 | TENSOR,
        other => other as *const Value as u64,
    }
}

/// The word of a value native code owns from now on.
pub fn owned(v: Value) -> u64 {
    match v {
        Value::Seq(a) => Arc::into_raw(a) as u64 | SEQ,
        Value::Record(a) => Arc::into_raw(a) as u64 | RECORD,
        Value::Con(a) => Arc::into_raw(a) as u64 | CON,
        Value::Tensor(a) => Arc::into_raw(a) as u64 | TENSOR,
        other => Box::into_raw(Box::new(other)) as u64,
    }
}

/// The value of an owned word, which the caller takes over.
///
/// # Safety
/// `w` is an owned word (from `owned` or `dup`), used no more.
pub unsafe fn take(w: u64) -> Value {
    let p = w & !TAG_BITS;
    // Safety: an owned word holds one count of the `Arc` its tag names,
    // or is a box of its own.
    unsafe {
        match w & TAG_BITS {
            SEQ => Value::Seq(Arc::from_raw(p as *const Seq)),
            RECORD => Value::Record(Arc::from_raw(p as *const Record)),
            CON => Value::Con(Arc::from_raw(p as *const ConValue)),
            TENSOR => Value::Tensor(Arc::from_raw(p as *const Tensor)),
            _ => *Box::from_raw(p as *mut Value),
        }
    }
}

/// A word's value, borrowed: valid while the word is.
pub enum Borrowed<'a> {
    At(&'a Value),
    /// A `Value` remade around the word's `Arc`, never dropped (it holds
    /// no count of its own).
    Made(ManuallyDrop<Value>),
}

impl std::ops::Deref for Borrowed<'_> {
    type Target = Value;
    fn deref(&self) -> &Value {
        match self {
            Borrowed::At(v) => v,
            Borrowed::Made(v) => v,
        }
    }
}

/// # Safety
/// `w` is a live word (owned or borrowed) of a boxed value.
pub unsafe fn borrow<'a>(w: u64) -> Borrowed<'a> {
    let p = w & !TAG_BITS;
    // Safety: the `Arc` outlives the borrow and the made `Value` is never
    // dropped, so no count changes.
    unsafe {
        let made = |v: Value| Borrowed::Made(ManuallyDrop::new(v));
        match w & TAG_BITS {
            SEQ => made(Value::Seq(Arc::from_raw(p as *const Seq))),
            RECORD => made(Value::Record(Arc::from_raw(p as *const Record))),
            CON => made(Value::Con(Arc::from_raw(p as *const ConValue))),
            TENSOR => made(Value::Tensor(Arc::from_raw(p as *const Tensor))),
            _ => Borrowed::At(&*(p as *const Value)),
        }
    }
}

/// The `Arc` of a variant value's word, remade without a count of its
/// own: the caller must not drop it (`ManuallyDrop`).
///
/// # Safety
/// `w` is a live word of a variant value.
pub unsafe fn arc_con(w: u64) -> Arc<ConValue> {
    debug_assert_eq!(w & TAG_BITS, CON);
    // Safety: the word is the `Arc`'s data pointer with its tag.
    unsafe { Arc::from_raw((w & !TAG_BITS) as *const ConValue) }
}

/// The `Arc` of a record's word (see [`arc_con`]).
///
/// # Safety
/// `w` is a live word of a record.
pub unsafe fn arc_record(w: u64) -> Arc<Record> {
    debug_assert_eq!(w & TAG_BITS, RECORD);
    // Safety: as in `arc_con`.
    unsafe { Arc::from_raw((w & !TAG_BITS) as *const Record) }
}

/// The sequence a word of a sequence stands for.
///
/// # Safety
/// `w` is a live word of a sequence.
pub unsafe fn seq<'a>(w: u64) -> &'a Seq {
    let p = w & !TAG_BITS;
    // Safety: a sequence's word points at the `Arc`'s `Seq`, or at a
    // `Value` holding one.
    unsafe {
        match w & TAG_BITS {
            SEQ => &*(p as *const Seq),
            _ => (*(p as *const Value)).as_seq(),
        }
    }
}

/// The tensor a word of a tensor stands for (see [`seq`]).
///
/// # Safety
/// `w` is a live word of a tensor.
pub unsafe fn tensor<'a>(w: u64) -> &'a Tensor {
    let p = w & !TAG_BITS;
    // Safety: as in `seq`.
    unsafe {
        match w & TAG_BITS {
            TENSOR => &*(p as *const Tensor),
            _ => match &*(p as *const Value) {
                Value::Tensor(t) => t,
                _ => pmx_cpu::type_confusion("a tensor"),
            },
        }
    }
}

/// An owned copy of a word (a count, not the data).
pub extern "C" fn dup(w: u64) -> u64 {
    let p = w & !TAG_BITS;
    // Safety: generated code passes live words; a tagged one's `Arc` gets
    // one more count, which the copy holds.
    unsafe {
        match w & TAG_BITS {
            SEQ => Arc::increment_strong_count(p as *const Seq),
            RECORD => Arc::increment_strong_count(p as *const Record),
            CON => Arc::increment_strong_count(p as *const ConValue),
            TENSOR => Arc::increment_strong_count(p as *const Tensor),
            _ => return owned((*(p as *const Value)).clone()),
        }
    }
    w
}

/// Drops an owned word.
pub extern "C" fn drop_word(w: u64) {
    // Safety: generated code drops each owned word once.
    drop(unsafe { take(w) });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words_of(v: &Value) -> Vec<u64> {
        let w = owned(v.clone());
        let d = dup(w);
        let b = borrowed(v);
        assert_eq!(unsafe { borrow(b) }.as_seq().len(), 3);
        drop_word(d);
        vec![w, b]
    }

    /// Generated code tests uniqueness in place only where the counts
    /// are found; on this platform they must be (else every reuse site
    /// calls the runtime).
    #[test]
    fn an_arcs_counts_are_found() {
        let (strong, weak) = arc_counts_offsets().expect("the counts before an Arc's data");
        assert_eq!(weak - strong, 8);
    }

    #[test]
    fn a_sequence_keeps_its_counts_through_words() {
        let v = Value::seq(Seq::from_values(vec![Value::Int(1), Value::Int(2), Value::Int(3)]));
        let Value::Seq(a) = &v else { unreachable!() };
        let before = Arc::strong_count(a);
        let ws = words_of(&v);
        assert_eq!(ws[0] & TAG_BITS, SEQ);
        assert_eq!(ws[0], ws[1], "owned and borrowed words of one sequence are one pointer");
        assert_eq!(Arc::strong_count(a), before + 1, "the owned word holds one count");
        let back = unsafe { take(ws[0]) };
        assert_eq!(Arc::strong_count(a), before + 1);
        drop(back);
        assert_eq!(Arc::strong_count(a), before);
    }

    #[test]
    fn other_values_are_boxes() {
        let v = Value::Symbol(7);
        let w = owned(v.clone());
        assert_eq!(w & TAG_BITS, 0);
        let d = dup(w);
        assert_ne!(d, w, "a box is copied");
        assert!(matches!(unsafe { take(d) }, Value::Symbol(7)));
        assert!(matches!(&*unsafe { borrow(w) }, Value::Symbol(7)));
        drop_word(w);
    }
}
