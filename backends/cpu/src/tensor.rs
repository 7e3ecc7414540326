//! Tensors: mutable, row-major, contiguous storage shared by views.
//!
//! `tensorSubExn`, `tensorSliceExn` and `tensorReshapeExn` return views on
//! the same storage, so a write through one is seen through all. Elements
//! of `Int` and `Float` tensors are relaxed atomics: iterations of a
//! parallel `loop` may write one tensor at the same time, which is defined
//! behaviour (the program's promise is that the result does not depend on
//! the order). Each view exposes its storage's address range, rank, shape
//! and offset, which alias reconstruction for the GPU needs.

use crate::value::Value;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};

pub enum TensorData {
    Int(Box<[AtomicI64]>),
    Float(Box<[AtomicU64]>),
    /// Tensors of other element types (`tensorCreateDense`).
    Boxed(Box<[Mutex<Value>]>),
}

impl TensorData {
    fn len(&self) -> usize {
        match self {
            TensorData::Int(d) => d.len(),
            TensorData::Float(d) => d.len(),
            TensorData::Boxed(d) => d.len(),
        }
    }

    fn elem_size(&self) -> usize {
        match self {
            TensorData::Int(_) | TensorData::Float(_) => 8,
            TensorData::Boxed(_) => std::mem::size_of::<Mutex<Value>>(),
        }
    }

    fn base_address(&self) -> usize {
        match self {
            TensorData::Int(d) => d.as_ptr() as usize,
            TensorData::Float(d) => d.as_ptr() as usize,
            TensorData::Boxed(d) => d.as_ptr() as usize,
        }
    }

    /// Every element of the storage, for `--check-order`.
    pub fn snapshot(&self) -> Vec<Value> {
        (0..self.len()).map(|i| self.get(i)).collect()
    }

    /// Writes back a snapshot.
    pub fn restore(&self, values: &[Value]) {
        for (i, v) in values.iter().enumerate() {
            self.set(i, v.clone());
        }
    }

    #[inline(always)]
    pub fn get(&self, i: usize) -> Value {
        match self {
            TensorData::Int(d) => Value::Int(d[i].load(Relaxed)),
            TensorData::Float(d) => Value::Float(f64::from_bits(d[i].load(Relaxed))),
            TensorData::Boxed(d) => Self::get_boxed(&d[i]),
        }
    }

    #[inline(never)]
    fn get_boxed(cell: &Mutex<Value>) -> Value {
        cell.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    #[inline(always)]
    pub fn set(&self, i: usize, v: Value) {
        match (self, v) {
            (TensorData::Int(d), Value::Int(x)) => d[i].store(x, Relaxed),
            (TensorData::Float(d), Value::Float(x)) => d[i].store(x.to_bits(), Relaxed),
            (TensorData::Boxed(d), x) => Self::set_boxed(&d[i], x),
            _ => crate::error::type_confusion("the element type"),
        }
    }

    #[inline(never)]
    fn set_boxed(cell: &Mutex<Value>, v: Value) {
        *cell.lock().unwrap_or_else(|e| e.into_inner()) = v;
    }
}

/// The number of elements of a tensor of this shape, or a message when
/// the product of its dimensions does not fit in a machine word (it would
/// otherwise wrap around to a small number).
pub fn shape_size(shape: &[usize]) -> Result<usize, String> {
    shape.iter().try_fold(1usize, |n, &d| n.checked_mul(d)).ok_or_else(|| {
        let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
        format!("the tensor shape [{}] has more elements than a machine can address", dims.join(", "))
    })
}

/// The element representation a new tensor gets.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum ElemKind {
    Int,
    Float,
    Boxed,
}

/// A view: `shape` elements starting at `offset` of shared storage.
pub struct Tensor {
    pub data: Arc<TensorData>,
    pub offset: usize,
    pub shape: Vec<usize>,
}

impl Tensor {
    /// A tensor of the given shape whose elements are produced in row-major
    /// order by `f`.
    pub fn from_fn<E>(
        kind: ElemKind,
        shape: Vec<usize>,
        mut f: impl FnMut(usize) -> Result<Value, E>,
    ) -> Result<Tensor, E> {
        let n = shape_size(&shape).unwrap_or_else(|_| crate::error::out_of_memory(usize::MAX));
        let data = match kind {
            ElemKind::Int => {
                let mut v = crate::error::alloc_vec(n);
                for i in 0..n {
                    v.push(AtomicI64::new(f(i)?.as_int()));
                }
                TensorData::Int(v.into_boxed_slice())
            }
            ElemKind::Float => {
                let mut v = crate::error::alloc_vec(n);
                for i in 0..n {
                    v.push(AtomicU64::new(f(i)?.as_float().to_bits()));
                }
                TensorData::Float(v.into_boxed_slice())
            }
            ElemKind::Boxed => {
                let mut v = crate::error::alloc_vec(n);
                for i in 0..n {
                    v.push(Mutex::new(f(i)?));
                }
                TensorData::Boxed(v.into_boxed_slice())
            }
        };
        Ok(Tensor { data: Arc::new(data), offset: 0, shape })
    }

    pub fn rank(&self) -> usize {
        self.shape.len()
    }

    pub fn size(&self) -> usize {
        self.shape.iter().product()
    }

    pub fn kind(&self) -> ElemKind {
        match &*self.data {
            TensorData::Int(_) => ElemKind::Int,
            TensorData::Float(_) => ElemKind::Float,
            TensorData::Boxed(_) => ElemKind::Boxed,
        }
    }

    /// The byte range of this view's elements in memory.
    pub fn address_range(&self) -> (usize, usize) {
        let size = self.data.elem_size();
        let begin = self.data.base_address() + self.offset * size;
        (begin, begin + self.size() * size)
    }

    /// The byte range of the whole storage the view belongs to.
    pub fn storage_range(&self) -> (usize, usize) {
        let begin = self.data.base_address();
        (begin, begin + self.data.len() * self.data.elem_size())
    }

    /// The linear position of a full index, or a message saying what is
    /// wrong with it.
    #[inline(always)]
    pub fn linear_index(&self, index: &[i64]) -> Result<usize, String> {
        if index.len() != self.shape.len() {
            return Err(self.rank_error(index.len()));
        }
        let mut pos = 0usize;
        for (k, &i) in index.iter().enumerate() {
            let dim = self.shape[k];
            // A negative index is a huge unsigned one.
            if i as u64 >= dim as u64 {
                return Err(Tensor::index_error(k, i, dim));
            }
            pos = pos * dim + i as usize;
        }
        Ok(pos)
    }

    #[cold]
    fn rank_error(&self, given: usize) -> String {
        let given = if given == 1 { "1 index was".to_string() } else { format!("{given} indices were") };
        format!("Invalid indices used to access tensor: the tensor has rank {} but {given} given", self.rank())
    }

    #[cold]
    fn index_error(k: usize, i: i64, dim: usize) -> String {
        format!("Invalid indices used to access tensor: index {i} in dimension {k} is outside 0..{dim}")
    }

    #[inline(always)]
    pub fn get(&self, index: &[i64]) -> Result<Value, String> {
        let i = self.linear_index(index)?;
        Ok(self.data.get(self.offset + i))
    }

    #[inline(always)]
    pub fn set(&self, index: &[i64], v: Value) -> Result<(), String> {
        let i = self.linear_index(index)?;
        self.data.set(self.offset + i, v);
        Ok(())
    }

    pub fn linear_get(&self, i: i64) -> Result<Value, String> {
        self.check_linear(i)?;
        Ok(self.data.get(self.offset + i as usize))
    }

    pub fn linear_set(&self, i: i64, v: Value) -> Result<(), String> {
        self.check_linear(i)?;
        self.data.set(self.offset + i as usize, v);
        Ok(())
    }

    fn check_linear(&self, i: i64) -> Result<(), String> {
        if i < 0 || i as usize >= self.size() {
            return Err(format!(
                "Out of bounds access in tensor: index {i} but the tensor has {} elements",
                self.size()
            ));
        }
        Ok(())
    }

    /// The elements of this view in row-major order.
    pub fn values(&self) -> Vec<Value> {
        crate::error::alloc_collect((0..self.size()).map(|i| self.data.get(self.offset + i)))
    }

    /// `tensorSubExn t ofs len`: rows `ofs..ofs+len` of dimension 0.
    pub fn sub(&self, ofs: i64, len: i64) -> Result<Tensor, String> {
        if self.rank() == 0 {
            return Err("Subtensor out of bounds: a tensor of rank 0 has no rows".into());
        }
        if ofs < 0 || len < 0 || ofs as usize + len as usize > self.shape[0] {
            return Err(format!(
                "Subtensor out of bounds: offset {ofs} and length {len} in dimension 0 of size {}",
                self.shape[0]
            ));
        }
        let (ofs, len) = (ofs as usize, len as usize);
        let row: usize = self.shape[1..].iter().product();
        let mut shape = self.shape.clone();
        shape[0] = len;
        Ok(Tensor { data: self.data.clone(), offset: self.offset + ofs * row, shape })
    }

    /// `tensorSliceExn t idx`: fixes the leading dimensions.
    pub fn slice(&self, index: &[i64]) -> Result<Tensor, String> {
        if index.len() > self.rank() {
            return Err(format!(
                "Invalid indices used to slice tensor: a tensor of rank {} sliced with {} indices",
                self.rank(),
                index.len()
            ));
        }
        let mut ofs = 0usize;
        for (k, &i) in index.iter().enumerate() {
            if i < 0 || i as usize >= self.shape[k] {
                return Err(format!(
                    "Invalid indices used to slice tensor: index {i} in dimension {k} is outside 0..{}",
                    self.shape[k]
                ));
            }
            ofs = ofs * self.shape[k] + i as usize;
        }
        let rest = self.shape[index.len()..].to_vec();
        let inner: usize = rest.iter().product();
        Ok(Tensor { data: self.data.clone(), offset: self.offset + ofs * inner, shape: rest })
    }

    pub fn reshape(&self, shape: Vec<usize>) -> Result<Tensor, String> {
        let n = shape_size(&shape)?;
        if n != self.size() {
            return Err(format!("Invalid reshape: a tensor of {} elements cannot have shape {:?}", self.size(), shape));
        }
        Ok(Tensor { data: self.data.clone(), offset: self.offset, shape })
    }

    /// A copy with its own storage.
    pub fn copy(&self) -> Tensor {
        let values = self.values();
        Tensor::from_fn::<()>(self.kind(), self.shape.clone(), |i| Ok(values[i].clone()))
            .unwrap_or_else(|_| unreachable!("copying cannot fail"))
    }

    /// A copy with dimensions `d1` and `d2` swapped.
    pub fn transpose(&self, d1: i64, d2: i64) -> Result<Tensor, String> {
        let r = self.rank() as i64;
        if d1 < 0 || d2 < 0 || d1 >= r || d2 >= r {
            return Err(format!("Invalid transpose of dimensions {d1} and {d2} of a tensor of rank {r}"));
        }
        let (d1, d2) = (d1 as usize, d2 as usize);
        let mut shape = self.shape.clone();
        shape.swap(d1, d2);
        let values = self.values();
        let src_shape = self.shape.clone();
        Tensor::from_fn::<String>(self.kind(), shape.clone(), |lin| {
            // The index in the result, then swapped back into the source.
            let mut idx = vec![0usize; shape.len()];
            let mut rem = lin;
            for k in (0..shape.len()).rev() {
                idx[k] = rem % shape[k];
                rem /= shape[k];
            }
            idx.swap(d1, d2);
            let src = idx.iter().zip(&src_shape).fold(0usize, |acc, (i, d)| acc * d + i);
            Ok(values[src].clone())
        })
    }
}
