//! Marshaling for the generated host ABI (see `gen/mod.rs`): parameter
//! values become `pmx_arg` slots, depth first; tensors become views into
//! per-root buffers made by alias reconstruction (`alias.rs`), so views
//! that alias in the program alias in the buffers; after the call the
//! roots of parameters the binding may write are copied back. A root that
//! nothing may write is read in place where generated code sees this
//! process's memory (the CPU engine). Buffers come
//! from the engine's [`Memory`] (host memory for the CPU engine, managed
//! memory for the GPU engine).

use crate::alias::{self, Span as ViewSpan};
use crate::memory::Memory;
use pmx_cpu::tensor::{Tensor, TensorData};
use pmx_cpu::value::ConValue;
use pmx_cpu::value::{Seq, Value};
use pmx_lower::{Type, VariantDef};
use std::sync::Arc;

/// Slot layout shared with the generated `struct pmx_arg`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct Arg {
    pub i: i64,
    pub f: f64,
    pub p: *mut u8,
    pub len: i64,
    pub offset: i64,
    pub rank: i64,
    pub dims: [i64; MAX_RANK],
}

pub const MAX_RANK: usize = 8;

impl Default for Arg {
    fn default() -> Arg {
        Arg { i: 0, f: 0.0, p: std::ptr::null_mut(), len: 0, offset: 0, rank: 0, dims: [1; MAX_RANK] }
    }
}

/// One root: a buffer with a copy of a range of one storage.
struct Root {
    tensor: Arc<Tensor>,
    start: usize,
    /// `words` words in the engine's memory.
    buffer: *mut u64,
    words: usize,
    /// Copied back after the call.
    write_back: bool,
}

/// What one call needs alive while it runs (with the memory it was
/// marshaled into), and what it copies back.
pub struct Marshaled {
    pub args: Vec<Arg>,
    roots: Vec<Root>,
    /// Slot arrays of sequences with structured elements.
    nested: Vec<Vec<Arg>>,
    pub bytes_in: u64,
}

/// A tensor met while flattening: which slot it fills, and whether its
/// parameter may be written.
struct Pending {
    slot: SlotRef,
    tensor: Arc<Tensor>,
    written: bool,
}

#[derive(Clone, Copy)]
enum SlotRef {
    Top(usize),
    Nested(usize, usize),
}

/// Flattens the parameters (`written[k]`: the binding may write parameter
/// `k`) into buffers of `memory`; `variants` is the program's table of
/// variant types. A tensor of rank above [`MAX_RANK`] or of boxed
/// elements is an error.
pub fn marshal(
    values: &[Value],
    types: &[Type],
    written: &[bool],
    variants: &[VariantDef],
    memory: &mut dyn Memory,
) -> Result<Marshaled, String> {
    let m = Marshaled { args: Vec::new(), roots: Vec::new(), nested: Vec::new(), bytes_in: 0 };
    let mut f = Flatten { m, memory, variants, pending: Vec::new() };
    for (k, (v, t)) in values.iter().zip(types).enumerate() {
        let w = written.get(k).copied().unwrap_or(true);
        f.value(None, v, t, w)?;
    }
    let Flatten { mut m, memory, pending, .. } = f;
    // Alias reconstruction over every tensor of the call.
    let spans: Vec<ViewSpan> = pending.iter().map(|p| alias::span_of(&p.tensor)).collect();
    let merged = alias::merge(&spans);
    let mut root_written = vec![false; merged.roots.len()];
    for (p, (root, _)) in pending.iter().zip(&merged.views) {
        root_written[*root] |= p.written;
    }
    for (r, &write_back) in merged.roots.iter().zip(&root_written) {
        let owner = pending
            .iter()
            .zip(&spans)
            .find(|(_, s)| s.storage == r.storage && s.start >= r.start && s.end <= r.end)
            .map(|(p, _)| p.tensor.clone())
            .expect("every root has a view");
        let w = words(&owner.data).ok_or("only tensors of Int or Float can cross into CUDA code")?;
        let range = &w[r.start..r.end];
        // A root that the binding never writes is read where it is when
        // generated code sees this process's memory (the CPU engine): a
        // copy could only be the same bytes. Its views still point into
        // it at the offsets alias reconstruction gave them; the engines
        // with a memory of their own copy every root.
        let buffer = if !write_back && memory.sees_host_memory() {
            range.as_ptr() as *mut u64
        } else {
            // Safety: any `u64` slice is readable as bytes.
            let bytes = unsafe { std::slice::from_raw_parts(range.as_ptr() as *const u8, range.len() * 8) };
            m.bytes_in += bytes.len() as u64;
            memory.copy_of(bytes)? as *mut u64
        };
        let words = range.len();
        m.roots.push(Root { tensor: owner.clone(), start: r.start, buffer, words, write_back });
    }
    for (p, (root, offset)) in pending.iter().zip(&merged.views) {
        let base = m.roots[*root].buffer as *mut u8;
        let slot = m.slot(p.slot);
        slot.p = base;
        slot.offset = *offset as i64;
    }
    Ok(m)
}

/// The storage's words `start..end` as plain integers. Atomics have the
/// layout of their integers; nothing else runs in this program while an
/// accelerate call marshals (the call is not inside parallel code), so a
/// plain copy sees what relaxed loads would.
fn words(data: &TensorData) -> Option<&[u64]> {
    match data {
        // Safety: `AtomicI64`/`AtomicU64` have the size and alignment of
        // `i64`/`u64`, and no other thread writes during the call.
        TensorData::Int(d) => Some(unsafe { std::slice::from_raw_parts(d.as_ptr() as *const u64, d.len()) }),
        TensorData::Float(d) => Some(unsafe { std::slice::from_raw_parts(d.as_ptr() as *const u64, d.len()) }),
        TensorData::Boxed(_) => None,
    }
}

impl Marshaled {
    fn slot(&mut self, s: SlotRef) -> &mut Arg {
        match s {
            SlotRef::Top(i) => &mut self.args[i],
            SlotRef::Nested(a, i) => &mut self.nested[a][i],
        }
    }
}

/// The parameters being flattened into slots, and the tensors met.
struct Flatten<'a> {
    m: Marshaled,
    memory: &'a mut dyn Memory,
    variants: &'a [VariantDef],
    pending: Vec<Pending>,
}

impl Flatten<'_> {
    fn push(&mut self, nested: Option<usize>, a: Arg) -> SlotRef {
        match nested {
            None => {
                self.m.args.push(a);
                SlotRef::Top(self.m.args.len() - 1)
            }
            Some(k) => {
                self.m.nested[k].push(a);
                SlotRef::Nested(k, self.m.nested[k].len() - 1)
            }
        }
    }

    /// A new nested slot array filled by `fill`, and its address (null
    /// when it is empty). The address is taken once the array is full:
    /// it does not move after that, even when later arrays are added.
    fn nested(&mut self, fill: impl FnOnce(&mut Self, usize) -> Result<(), String>) -> Result<*mut u8, String> {
        let k = self.m.nested.len();
        self.m.nested.push(Vec::new());
        fill(self, k)?;
        let slots = &mut self.m.nested[k];
        Ok(if slots.is_empty() { std::ptr::null_mut() } else { slots.as_mut_ptr() as *mut u8 })
    }

    fn value(&mut self, nested: Option<usize>, v: &Value, t: &Type, written: bool) -> Result<(), String> {
        match (t, v) {
            (Type::Unit, _) => {}
            (Type::Int, Value::Int(i)) => {
                self.push(nested, Arg { i: *i, ..Arg::default() });
            }
            (Type::Float, Value::Float(f)) => {
                self.push(nested, Arg { f: *f, ..Arg::default() });
            }
            (Type::Bool, Value::Bool(b)) => {
                self.push(nested, Arg { i: *b as i64, ..Arg::default() });
            }
            (Type::Char, Value::Char(c)) => {
                self.push(nested, Arg { i: *c as i64, ..Arg::default() });
            }
            (Type::Tensor(_), Value::Tensor(tensor)) => {
                if tensor.rank() > MAX_RANK {
                    return Err(format!(
                        "a tensor of rank {} crossed into CUDA code (at most {MAX_RANK})",
                        tensor.rank()
                    ));
                }
                let mut a = Arg { rank: tensor.rank() as i64, ..Arg::default() };
                for (k, d) in tensor.shape.iter().enumerate() {
                    a.dims[k] = *d as i64;
                }
                let slot = self.push(nested, a);
                self.pending.push(Pending { slot, tensor: tensor.clone(), written });
            }
            (Type::Record(fields), Value::Record(r)) => {
                for (label, ft) in fields {
                    let f = r.get(label).ok_or_else(|| format!("a record without field `{label}` crossed"))?;
                    self.value(nested, f, ft, written)?;
                }
            }
            (Type::Seq(elem), Value::Seq(s)) => {
                let len = s.len() as i64;
                // Unboxed sequences are passed as they are where generated
                // code sees this process's memory (it never writes a
                // sequence), else copied; boxed ones as a nested slot
                // array, element after element.
                let p = match &**s {
                    Seq::Int(view) => unboxed(self.memory, view.as_slice())?,
                    Seq::Float(view) => unboxed(self.memory, view.as_slice())?,
                    Seq::Bool(view) => unboxed(self.memory, view.as_slice())?,
                    Seq::Char(view) => unboxed(self.memory, view.as_slice())?,
                    Seq::Boxed(_) => {
                        self.nested(|f, k| s.to_values().iter().try_for_each(|e| f.value(Some(k), e, elem, written)))?
                    }
                };
                self.push(nested, Arg { p, len, ..Arg::default() });
            }
            // The constructor's index, and its payload in a nested slot
            // array (what the generated unpacker of the type reads).
            (Type::Variant(id), Value::Con(c)) => {
                let def = self.variants.get(id.0 as usize).ok_or("internal error: unknown variant type")?;
                let tag = def
                    .constructors
                    .iter()
                    .position(|k| k.id == c.tag)
                    .ok_or_else(|| format!("a value built by `{}` crossed as a `{}`", c.name, def.name))?;
                let payload = &def.constructors[tag].payload;
                let p = self.nested(|f, k| f.value(Some(k), &c.arg, payload, written))?;
                self.push(nested, Arg { i: tag as i64, p, ..Arg::default() });
            }
            (t, _) => return Err(format!("a value of type {t} cannot cross into CUDA code yet")),
        }
        Ok(())
    }
}

/// An unboxed sequence's elements as generated code reads them.
fn unboxed<T: Copy>(memory: &mut dyn Memory, elems: &[T]) -> Result<*mut u8, String> {
    if memory.sees_host_memory() {
        return Ok(elems.as_ptr() as *mut u8);
    }
    // Safety: the elements are plain values (integers, floats, booleans,
    // characters), readable as bytes.
    let bytes = unsafe { std::slice::from_raw_parts(elems.as_ptr() as *const u8, std::mem::size_of_val(elems)) };
    memory.copy_of(bytes)
}

impl Marshaled {
    /// Copies the written roots back into the program's tensors; returns
    /// the bytes copied.
    pub fn copy_back(&self, memory: &mut dyn Memory) -> Result<u64, String> {
        let mut bytes = 0;
        for r in self.roots.iter().filter(|r| r.write_back) {
            let dst = match &*r.tensor.data {
                // Safety: as in `words`; the range is the root's, inside
                // the storage.
                TensorData::Int(d) => unsafe { d.as_ptr().add(r.start) as *mut u8 },
                // Safety: as above.
                TensorData::Float(d) => unsafe { d.as_ptr().add(r.start) as *mut u8 },
                TensorData::Boxed(_) => continue,
            };
            // Safety: the root's buffer holds `words` words of this
            // memory; the destination is the root's range of the storage.
            unsafe { memory.copy_out(dst, r.buffer as *const u8, r.words * 8)? };
            bytes += (r.words * 8) as u64;
        }
        Ok(bytes)
    }
}

/// `len` elements at `p` (nothing when `len` is 0, whatever `p` is).
///
/// # Safety
/// When `len > 0`, `p` points to `len` initialised values of `T`.
unsafe fn elements<'a, T>(p: *const u8, len: usize) -> &'a [T] {
    if len == 0 {
        return &[];
    }
    // Safety: as the caller promises.
    unsafe { std::slice::from_raw_parts(p as *const T, len) }
}

/// The result value from its slots (`variants`: the program's table of
/// variant types).
pub fn unmarshal(t: &Type, slots: &[Arg], k: &mut usize, variants: &[VariantDef]) -> Result<Value, String> {
    let v = match t {
        Type::Unit => return Ok(Value::unit()),
        Type::Int => Value::Int(slots[*k].i),
        Type::Float => Value::Float(slots[*k].f),
        Type::Bool => Value::Bool(slots[*k].i != 0),
        Type::Char => Value::Char(char::from_u32(slots[*k].i as u32).unwrap_or('\u{fffd}')),
        Type::Record(fields) => {
            let mut out = Vec::new();
            for (label, ft) in fields {
                out.push((label.clone(), unmarshal(ft, slots, k, variants)?));
            }
            return Ok(Value::Record(Arc::new(pmx_cpu::value::Record::from_fields(out))));
        }
        Type::Seq(e) => {
            let (p, len) = (slots[*k].p, slots[*k].len.max(0) as usize);
            // Safety: the generated code packs a sequence of scalars as its
            // element pointer and length, into memory alive until the
            // engine's memory is dropped, after this.
            let values: Vec<Value> = unsafe {
                match &**e {
                    Type::Int => elements::<i64>(p, len).iter().map(|&x| Value::Int(x)).collect(),
                    Type::Float => elements::<f64>(p, len).iter().map(|&x| Value::Float(x)).collect(),
                    Type::Bool => elements::<bool>(p, len).iter().map(|&x| Value::Bool(x)).collect(),
                    Type::Char => elements::<u32>(p, len)
                        .iter()
                        .map(|&c| Value::Char(char::from_u32(c).unwrap_or('\u{fffd}')))
                        .collect(),
                    other => return Err(format!("a result of type [{other}] cannot come back from CUDA code yet")),
                }
            };
            Value::Seq(Arc::new(Seq::from_values(values)))
        }
        Type::Variant(id) => {
            let def = variants.get(id.0 as usize).ok_or("internal error: unknown variant type")?;
            let tag = slots[*k].i;
            let con = usize::try_from(tag)
                .ok()
                .and_then(|t| def.constructors.get(t))
                .ok_or_else(|| format!("internal error: tag {tag} of `{}` came back from CUDA code", def.name))?;
            // Safety: the generated code packs the payload into slots it
            // allocated from the engine's memory, alive until it is
            // dropped, after this (as many as the payload takes).
            let payload = unsafe { elements::<Arg>(slots[*k].p, crate::gen::leaves(&con.payload)) };
            let arg = unmarshal(&con.payload, payload, &mut 0, variants)?;
            Value::Con(Arc::new(ConValue { tag: con.id, name: con.name.clone(), arg }))
        }
        other => return Err(format!("a result of type {other} cannot come back from CUDA code yet")),
    };
    *k += 1;
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::HostMemory;
    use pmx_cpu::tensor::ElemKind;
    use pmx_lower::Type;

    fn floats(n: usize) -> Arc<Tensor> {
        let t = Tensor::from_fn(ElemKind::Float, vec![n], |i| Ok::<_, ()>(Value::Float(i as f64))).unwrap();
        Arc::new(t)
    }

    /// Two sub-tensors of one storage that touch (one root) and one tensor
    /// of its own, which the binding does not write.
    fn call(memory: &mut dyn Memory, a: &Arc<Tensor>, b: &Arc<Tensor>, c: &Arc<Tensor>) -> Marshaled {
        let t = Type::Tensor(Box::new(Type::Float));
        let values = [Value::Tensor(a.clone()), Value::Tensor(b.clone()), Value::Tensor(c.clone())];
        marshal(&values, &[t.clone(), t.clone(), t], &[false, true, false], &[], memory).unwrap()
    }

    #[test]
    fn read_only_roots_are_read_in_place_only_where_the_engine_sees_host_memory() {
        let s = floats(8);
        let a = Arc::new(s.sub(0, 4).unwrap());
        let b = Arc::new(s.sub(4, 4).unwrap());
        let c = floats(3);
        let storage = |t: &Tensor| t.storage_range().0 as *mut u8;
        let mut host = HostMemory::default();
        let m = call(&mut host, &a, &b, &c);
        // `a` and `b` share a root that `b` writes: copied, `b` at its offset.
        assert_ne!(m.args[0].p, storage(&s));
        assert_eq!((m.args[0].p, m.args[0].offset, m.args[1].offset), (m.args[1].p, 0, 4));
        // `c` is nobody's to write: its own storage.
        assert_eq!(m.args[2].p, storage(&c));
        assert_eq!(m.bytes_in, 8 * 8);
        let mut separate = HostMemory::separate();
        let m = call(&mut separate, &a, &b, &c);
        assert_ne!(m.args[2].p, storage(&c));
        assert_eq!(m.bytes_in, 11 * 8);
        // Safety: the root holds `c`'s three elements.
        let copied = unsafe { std::slice::from_raw_parts(m.args[2].p as *const f64, 3) };
        assert_eq!(copied, &[0.0, 1.0, 2.0]);
    }
}
