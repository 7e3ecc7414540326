//! Alias reconstruction: the tensors a call passes are views (an offset
//! and a shape) on shared storage. Views whose element ranges overlap or
//! touch on one storage are merged into one *root*: one device
//! allocation, copied in and out as a whole, with every view passed as its
//! root plus an offset. Views that alias on the CPU then alias on the
//! device, and a root is never larger than the union of its views.
//!
//! Views of different storages are never merged, even when the
//! allocations happen to be adjacent in memory: a root is copied with one
//! memcpy of its storage, which must stay inside one allocation.

use pmx_ast::{Ty, TyKind};
use pmx_cpu::tensor::Tensor;
use pmx_cpu::value::{Seq, Value};
use std::sync::Arc;

/// One view as the merge sees it: its storage and its element range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    /// Identifies the storage (its address).
    pub storage: usize,
    /// The first element and one past the last, in elements of the storage.
    pub start: usize,
    pub end: usize,
}

/// A merged range of one storage.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Root {
    pub storage: usize,
    pub start: usize,
    pub end: usize,
}

/// The roots, and for each view (in input order) its root and its offset
/// in elements from the root's start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Roots {
    pub roots: Vec<Root>,
    pub views: Vec<(usize, usize)>,
}

/// Merges views into roots: sorted by storage and start, a view joins the
/// current root when it starts at or before the root's end.
pub fn merge(views: &[Span]) -> Roots {
    let mut order: Vec<usize> = (0..views.len()).collect();
    order.sort_by_key(|&i| (views[i].storage, views[i].start, views[i].end));
    let mut roots: Vec<Root> = Vec::new();
    let mut of_view = vec![(0usize, 0usize); views.len()];
    let mut root_of_sorted = Vec::with_capacity(views.len());
    for &i in &order {
        let v = views[i];
        match roots.last_mut() {
            Some(r) if r.storage == v.storage && v.start <= r.end => r.end = r.end.max(v.end),
            _ => roots.push(Root { storage: v.storage, start: v.start, end: v.end }),
        }
        root_of_sorted.push((i, roots.len() - 1));
    }
    for (i, r) in root_of_sorted {
        of_view[i] = (r, views[i].start - roots[r].start);
    }
    Roots { roots, views: of_view }
}

/// The span of a tensor view.
pub fn span_of(t: &Tensor) -> Span {
    let storage = t.storage_range().0;
    Span { storage, start: t.offset, end: t.offset + t.size() }
}

/// Every tensor in a value of type `ty`, in a fixed order (depth first:
/// record fields in label order, sequence elements in order).
pub fn tensors(v: &Value, ty: &Ty, out: &mut Vec<Arc<Tensor>>) {
    match (v, ty.kind()) {
        (Value::Tensor(t), _) => out.push(t.clone()),
        (Value::Record(r), TyKind::Record(fields)) => {
            for (label, fty) in fields.iter() {
                if let Some(f) = r.get(label) {
                    tensors(f, fty, out);
                }
            }
        }
        (Value::Seq(s), TyKind::Seq(elem)) if has_tensor(elem) => {
            if let Seq::Boxed(_) = &**s {
                for e in s.to_values() {
                    tensors(&e, elem, out);
                }
            }
        }
        _ => {}
    }
}

/// Whether a type has a tensor in it.
pub fn has_tensor(t: &Ty) -> bool {
    match t.kind() {
        TyKind::Tensor(_) => true,
        TyKind::Seq(e) => has_tensor(e),
        TyKind::Record(fields) => fields.iter().any(|(_, f)| has_tensor(f)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(storage: usize, start: usize, end: usize) -> Span {
        Span { storage, start, end }
    }

    #[test]
    fn four_views_on_one_storage() {
        // Two overlapping sub-tensors, a slice touching the second, and a
        // view far away.
        let r = merge(&[s(1, 0, 4), s(1, 2, 6), s(1, 6, 8), s(1, 20, 24)]);
        assert_eq!(r.roots, vec![Root { storage: 1, start: 0, end: 8 }, Root { storage: 1, start: 20, end: 24 }]);
        assert_eq!(r.views, vec![(0, 0), (0, 2), (0, 6), (1, 0)]);
    }

    #[test]
    fn storages_are_never_merged() {
        let r = merge(&[s(2, 0, 4), s(1, 0, 4)]);
        assert_eq!(r.roots.len(), 2);
        assert_eq!(r.views, vec![(1, 0), (0, 0)]);
    }
}
