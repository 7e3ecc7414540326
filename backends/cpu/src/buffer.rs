//! Shared, growable storage for sequence views.
//!
//! A [`View`] is a window `start..end` on a [`Buffer`] whose initialised
//! slots are `lo..hi`. Slots are written once and never changed while
//! shared, so views are persistent. Appending to a view that ends where the
//! buffer's initialised part ends claims the next slot with a
//! compare-and-swap and writes it in place (the technique of Go's `append`):
//! no other view can see that slot, so no copy is needed even when the
//! buffer is shared. Prepending works the same way at the front. Building a
//! sequence with repeated `snoc`, `cons` or `concat` is therefore amortised
//! O(1) per element. A view that does not end at the buffer's end is copied
//! into a new buffer with room to grow.

use std::cell::UnsafeCell;
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

pub struct Buffer<T> {
    slots: Box<[UnsafeCell<MaybeUninit<T>>]>,
    /// First initialised slot; only ever decreases.
    lo: AtomicUsize,
    /// One past the last initialised slot; only ever increases.
    hi: AtomicUsize,
}

// Safety: slots are written once, before any view that contains them
// exists (a view is published only after its slots are written), and are
// mutated afterwards only through exclusive access (`Arc::get_mut`).
unsafe impl<T: Send + Sync> Sync for Buffer<T> {}
unsafe impl<T: Send> Send for Buffer<T> {}

impl<T> Drop for Buffer<T> {
    fn drop(&mut self) {
        let (lo, hi) = (*self.lo.get_mut(), *self.hi.get_mut());
        for slot in &mut self.slots[lo..hi] {
            // Safety: slots lo..hi are initialised.
            unsafe { slot.get_mut().assume_init_drop() };
        }
    }
}

impl<T> Buffer<T> {
    /// A buffer of `front + items.len() + back` slots with the items in the
    /// middle.
    fn with_room(front: usize, items: impl ExactSizeIterator<Item = T>, back: usize) -> Buffer<T> {
        let n = items.len();
        // Sizes come from the program (`concat` of huge sequences): memory
        // the system refuses is a run-time error, not an abort.
        let cap = front.saturating_add(n).saturating_add(back);
        let mut slots: Vec<UnsafeCell<MaybeUninit<T>>> = crate::error::alloc_vec(cap);
        // Safety: uninitialised slots need no initialisation; leaving them
        // untouched also leaves fresh memory pages unfaulted until used.
        unsafe { slots.set_len(cap) };
        let mut hi = front;
        for item in items.take(n) {
            slots[hi] = UnsafeCell::new(MaybeUninit::new(item));
            hi += 1;
        }
        Buffer { slots: slots.into_boxed_slice(), lo: AtomicUsize::new(front), hi: AtomicUsize::new(hi) }
    }
}

/// A persistent sequence: a window on a shared buffer.
pub struct View<T> {
    buf: Arc<Buffer<T>>,
    start: usize,
    end: usize,
    /// Whether the program sees this sequence as a list rather than a rope
    /// (`isList`): only a tag, the storage is the same. Results of
    /// operations on a list are lists.
    list: bool,
}

impl<T> Clone for View<T> {
    fn clone(&self) -> Self {
        View { buf: self.buf.clone(), start: self.start, end: self.end, list: self.list }
    }
}

impl<T: Clone> View<T> {
    pub fn empty() -> View<T> {
        View::from_iter_room(std::iter::empty(), 0)
    }

    /// A view of all of `items`, in the vector's own memory (no copy: for
    /// a large sequence, copying also means touching fresh pages, which
    /// the kernel must zero first).
    pub fn from_vec(items: Vec<T>) -> View<T> {
        let n = items.len();
        let items: Box<[T]> = items.into_boxed_slice();
        // Safety: `UnsafeCell<MaybeUninit<T>>` has the layout of `T` (both
        // wrappers are `repr(transparent)`), so the allocation of a `[T]`
        // of length `n` is one of such cells; all `n` are initialised,
        // which `lo..hi = 0..n` records.
        let slots = unsafe { Box::from_raw(Box::into_raw(items) as *mut [UnsafeCell<MaybeUninit<T>>]) };
        let buf = Buffer { slots, lo: AtomicUsize::new(0), hi: AtomicUsize::new(n) };
        View { buf: Arc::new(buf), start: 0, end: n, list: false }
    }

    /// A view of one item, with room for `front` more before it and
    /// `back` after it: the first `cons` or `snoc` of a sequence built
    /// by more of them (`int2string`'s digits) then grows in place.
    pub fn single(item: T, front: usize, back: usize) -> View<T> {
        let buf = Buffer::with_room(front, std::iter::once(item), back);
        View { buf: Arc::new(buf), start: front, end: front + 1, list: false }
    }

    fn from_iter_room(items: impl ExactSizeIterator<Item = T>, room: usize) -> View<T> {
        let n = items.len();
        let buf = Buffer::with_room(room, items, room);
        View { buf: Arc::new(buf), start: room, end: room + n, list: false }
    }

    /// Whether the sequence is tagged as a list (`createList`).
    pub fn is_list(&self) -> bool {
        self.list
    }

    /// The same view, tagged as a list or as a rope.
    pub fn with_list(mut self, list: bool) -> View<T> {
        self.list = list;
        self
    }

    pub fn len(&self) -> usize {
        self.end - self.start
    }

    pub fn is_empty(&self) -> bool {
        self.start == self.end
    }

    pub fn as_slice(&self) -> &[T] {
        let slots = &self.buf.slots[self.start..self.end];
        // Safety: the slots of a view are initialised and not mutated while
        // shared; UnsafeCell<MaybeUninit<T>> has the layout of T.
        unsafe { std::slice::from_raw_parts(slots.as_ptr() as *const T, slots.len()) }
    }

    pub fn get(&self, i: usize) -> Option<&T> {
        self.as_slice().get(i)
    }

    /// The window `from..to` of this view (indices relative to it).
    pub fn slice(&self, from: usize, to: usize) -> View<T> {
        debug_assert!(from <= to && to <= self.len());
        View { buf: self.buf.clone(), start: self.start + from, end: self.start + to, list: self.list }
    }

    /// A fresh buffer holding `self ++ extra`, with room to grow at both ends.
    fn copy_with(&self, front: &[T], back: &[T]) -> View<T> {
        let n = front.len().saturating_add(self.len()).saturating_add(back.len());
        // Room to grow on the side that grew (doubling: amortised O(1)).
        let (room_front, room_back) = if front.is_empty() { (4, n.max(4)) } else { (n.max(4), 4) };
        let items = front.iter().chain(self.as_slice()).chain(back).cloned();
        let buf = Buffer::with_room(room_front, ExactLen(items, n), room_back);
        View { buf: Arc::new(buf), start: room_front, end: room_front + n, list: self.list }
    }

    /// Claims `n` slots after the end of this view, if it ends where the
    /// buffer's initialised part ends and there is room.
    fn claim_back(&self, n: usize) -> bool {
        self.end + n <= self.buf.slots.len()
            && self.buf.hi.compare_exchange(self.end, self.end + n, Ordering::AcqRel, Ordering::Acquire).is_ok()
    }

    fn claim_front(&self, n: usize) -> bool {
        self.start >= n
            && self.buf.lo.compare_exchange(self.start, self.start - n, Ordering::AcqRel, Ordering::Acquire).is_ok()
    }

    /// Writes claimed, uninitialised slots.
    fn write(&self, at: usize, items: &[T]) {
        for (k, item) in items.iter().enumerate() {
            // Safety: the slots were claimed by this thread and no view
            // contains them yet.
            unsafe { (*self.buf.slots[at + k].get()).write(item.clone()) };
        }
    }

    /// `self ++ items` (`append_mut` on a copy of this view).
    pub fn append(&self, items: &[T]) -> View<T> {
        let mut v = self.clone();
        v.append_mut(items);
        v
    }

    /// `items ++ self` (`prepend_mut` on a copy of this view).
    pub fn prepend(&self, items: &[T]) -> View<T> {
        let mut v = self.clone();
        v.prepend_mut(items);
        v
    }

    /// `self ++ items`, changing this view: where the buffer has room
    /// after it (this view ends where its initialised part ends), the
    /// view only grows into it; else it becomes a copy with room to grow.
    pub fn append_mut(&mut self, items: &[T]) {
        if items.is_empty() {
            return;
        }
        if self.claim_back(items.len()) {
            self.write(self.end, items);
            self.end += items.len();
            return;
        }
        *self = self.copy_with(&[], items);
    }

    /// `items ++ self`, changing this view (see [`View::append_mut`]).
    pub fn prepend_mut(&mut self, items: &[T]) {
        if items.is_empty() {
            return;
        }
        if self.claim_front(items.len()) {
            self.write(self.start - items.len(), items);
            self.start -= items.len();
            return;
        }
        *self = self.copy_with(items, &[]);
    }

    /// `self ++ other`, extending whichever side can grow in place. The
    /// result is a list when either side is one (as in Miking).
    pub fn concat(&self, other: &View<T>) -> View<T> {
        let list = self.list || other.list;
        if other.is_empty() {
            return self.clone().with_list(list);
        }
        if self.is_empty() {
            return other.clone().with_list(list);
        }
        if other.len() <= self.len() || !other.claim_front(self.len()) {
            return self.append(other.as_slice()).with_list(list);
        }
        other.write(other.start - self.len(), self.as_slice());
        View { buf: other.buf.clone(), start: other.start - self.len(), end: other.end, list }
    }

    /// The view with element `i` replaced: in place when nothing else
    /// shares the buffer, otherwise a copy.
    pub fn set(mut self, i: usize, value: T) -> View<T> {
        let at = self.start + i;
        if let Some(buf) = Arc::get_mut(&mut self.buf) {
            // Safety: exclusive access; the slot is initialised.
            unsafe { *buf.slots[at].get_mut().assume_init_mut() = value };
            return self;
        }
        let mut items = crate::error::alloc_collect(self.as_slice().iter().cloned());
        items[i] = value;
        View::from_vec(items).with_list(self.list)
    }
}

/// An iterator with a known length (chains of slices lose it).
struct ExactLen<I>(I, usize);

impl<I: Iterator> Iterator for ExactLen<I> {
    type Item = I::Item;
    fn next(&mut self) -> Option<I::Item> {
        let item = self.0.next()?;
        self.1 -= 1;
        Some(item)
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.1, Some(self.1))
    }
}

impl<I: Iterator> ExactSizeIterator for ExactLen<I> {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn appends_share_the_buffer_and_stay_persistent() {
        let a = View::from_vec(vec![1, 2, 3]);
        let b = a.append(&[4]);
        let c = b.append(&[5]);
        // `b` is not at the end any more: this append copies.
        let d = b.append(&[9]);
        assert_eq!(a.as_slice(), &[1, 2, 3]);
        assert_eq!(b.as_slice(), &[1, 2, 3, 4]);
        assert_eq!(c.as_slice(), &[1, 2, 3, 4, 5]);
        assert_eq!(d.as_slice(), &[1, 2, 3, 4, 9]);
        assert!(Arc::ptr_eq(&b.buf, &c.buf));
    }

    #[test]
    fn prepend_concat_slice_set() {
        let a = View::from_vec(vec![String::from("b")]);
        let b = a.prepend(&["a".to_string()]);
        let c = b.concat(&View::from_vec(vec!["c".to_string(), "d".to_string()]));
        assert_eq!(c.as_slice(), &["a", "b", "c", "d"]);
        let s = c.slice(1, 3);
        assert_eq!(s.as_slice(), &["b", "c"]);
        let t = s.clone().set(0, "x".into());
        assert_eq!(t.as_slice(), &["x", "c"]);
        assert_eq!(s.as_slice(), &["b", "c"]);
        let u = View::from_vec(vec![1, 2]).set(1, 7);
        assert_eq!(u.as_slice(), &[1, 7]);
    }

    #[test]
    fn the_list_tag_follows_the_operations() {
        let list = View::from_vec(vec![1, 2]).with_list(true);
        let rope = View::from_vec(vec![3]);
        assert!(list.append(&[3]).is_list() && list.prepend(&[0]).is_list());
        assert!(list.slice(1, 2).is_list() && list.clone().set(0, 5).is_list());
        assert!(list.concat(&rope).is_list() && rope.concat(&list).is_list());
        assert!(rope.concat(&View::empty().with_list(true)).is_list());
        assert!(!rope.concat(&rope).is_list() && !rope.append(&[1]).is_list());
    }

    #[test]
    fn many_appends_are_linear() {
        let mut v = View::empty();
        for i in 0..100_000 {
            v = v.append(&[i]);
        }
        assert_eq!(v.len(), 100_000);
        assert_eq!(v.as_slice()[99_999], 99_999);
        let mut w = View::empty();
        for i in 0..100_000 {
            w = w.prepend(&[i]);
        }
        assert_eq!(w.as_slice()[0], 99_999);
    }
}
