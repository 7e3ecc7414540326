//! Query results that hold a file's whole tree (its parse, its desugared
//! and its checked module), freed on a thread of their own.
//!
//! Salsa drops a replaced result when the next edit starts a revision, or
//! when the language server collects them after a check; either way on the
//! thread that applies edits. Freeing the trees of a 3,000-line file took
//! 9 ms there, which the next edit waited for (`cargo bench --bench lsp --
//! mlang`, BENCHMARKS.md); handed to this thread, it costs the edit a
//! message.

use std::mem::ManuallyDrop;
use std::ops::Deref;
use std::sync::mpsc::{channel, Sender};
use std::sync::OnceLock;

/// A value whose drop frees it on the freeing thread.
pub struct FreedApart<T: Send + 'static>(ManuallyDrop<T>);

impl<T: Send + 'static> FreedApart<T> {
    pub fn new(value: T) -> Self {
        FreedApart(ManuallyDrop::new(value))
    }
}

impl<T: Send + 'static> Deref for FreedApart<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T: Send + 'static> Drop for FreedApart<T> {
    fn drop(&mut self) {
        // SAFETY: the value is taken once, here, and `self` is not used
        // again.
        let value = unsafe { ManuallyDrop::take(&mut self.0) };
        free_apart(Box::new(value));
    }
}

type Garbage = Box<dyn Send>;

/// Sends `g` to the freeing thread, started on first use with the
/// compiler's stack (a deep tree is freed by recursion, as it was built);
/// where no thread can start, `g` is freed here.
fn free_apart(g: Garbage) {
    static FREER: OnceLock<Option<Sender<Garbage>>> = OnceLock::new();
    let freer = FREER.get_or_init(|| {
        let (tx, rx) = channel::<Garbage>();
        let started = std::thread::Builder::new()
            .name("pmx-free".into())
            .stack_size(crate::stack_size())
            .spawn(move || rx.into_iter().for_each(drop));
        started.ok().map(|_| tx)
    });
    if let Some(tx) = freer {
        // The thread never stops while the process runs; if it did, the
        // value comes back and is freed here.
        if let Err(back) = tx.send(g) {
            drop(back.0);
        }
    }
}
