//! The data-parallel keywords. Inside an `accelerate` expression and not in
//! debug mode, `map`, `map2`, `reduce` and `loop` split their index range
//! into chunks that run on rayon's threads, each with its own machine;
//! otherwise they run sequentially. Errors are reported from the first
//! failing chunk in index order, so they do not depend on scheduling.

use crate::error::Res;
use crate::eval::Machine;
use crate::tensor::Tensor;
use crate::value::{Closure, Partial, Seq, Value};
use pmx_ast::Span;
use rayon::prelude::*;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::sync::OnceLock;

/// The stack each parallel thread gets: that of the thread running the
/// program (set by [`crate::run`]), so that recursion inside `loop` goes
/// as deep as outside it (and as in debug mode, which runs sequentially).
static WORKER_STACK: AtomicUsize = AtomicUsize::new(256 << 20);

/// The smallest stack worth starting parallel threads with; below it the
/// keywords run sequentially on the program's own (larger) stack.
const MIN_WORKER_STACK: usize = 8 << 20;

/// Sets the parallel threads' stack to the current thread's, measured from
/// here; call it near the top of the thread that runs the program, before
/// the first parallel keyword.
pub(crate) fn use_this_stack_for_workers() {
    if let Some(left) = stacker::remaining_stack() {
        WORKER_STACK.store(left.max(MIN_WORKER_STACK), Ordering::Relaxed);
    }
}

/// Threads for parallel keywords. Each thread's stack is reserved, not
/// committed, but a memory limit (`ulimit -v`) can refuse the reservation:
/// then smaller stacks are tried, and without any pool the keywords run
/// sequentially. Recursion limits follow each thread's actual stack.
pub(crate) fn pool() -> Option<&'static rayon::ThreadPool> {
    static POOL: OnceLock<Option<rayon::ThreadPool>> = OnceLock::new();
    POOL.get_or_init(|| {
        let mut size = WORKER_STACK.load(Ordering::Relaxed);
        loop {
            let built =
                rayon::ThreadPoolBuilder::new().stack_size(size).thread_name(|i| format!("pmx-parallel-{i}")).build();
            match built {
                Ok(pool) => return Some(pool),
                Err(_) if size / 4 >= MIN_WORKER_STACK => size /= 4,
                Err(_) => return None,
            }
        }
    })
    .as_ref()
}

fn threads() -> usize {
    pool().map_or(1, |p| p.current_num_threads())
}

fn parallel(m: &Machine, n: usize) -> bool {
    m.accelerated && !m.checking && n >= 2 && threads() > 1
}

/// Index ranges, a few per thread.
fn chunks(n: usize) -> Vec<(usize, usize)> {
    let parts = (threads() * 4).min(n).max(1);
    let size = n.div_ceil(parts);
    (0..n).step_by(size).map(|s| (s, (s + size).min(n))).collect()
}

/// Runs `body` on each chunk (in parallel), collecting results in order.
/// Unwinding inside a chunk (memory refused, a bug) becomes that chunk's
/// error, located on the worker's own thread (`span`: the keyword's call,
/// when nothing more precise is known).
fn per_chunk<T: Send>(
    m: &Machine,
    n: usize,
    f: &Value,
    span: Span,
    body: impl Fn(&mut Machine, &Value, usize, usize) -> Res<T> + Sync,
) -> Res<Vec<T>> {
    let ranges = chunks(n);
    let (shared, accelerated) = (m.shared.clone(), m.accelerated);
    let pool = pool().expect("`parallel` checked that there is a pool");
    let results: Vec<Res<T>> = pool.install(|| {
        ranges
            .par_iter()
            .map(|&(lo, hi)| {
                let mut worker = Machine::new(shared.clone());
                worker.accelerated = accelerated;
                let f = private(f);
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| body(&mut worker, &f, lo, hi)))
                    .unwrap_or_else(|payload| Err(crate::error::from_panic(payload, span, shared.coerced())))
            })
            .collect()
    });
    results.into_iter().collect()
}

/// The function a chunk applies, with reference counts of its own: every
/// call clones the closure (and a partial application's arguments, often
/// tensors), and when all threads count on the same `Arc`s, its cache line
/// moves between cores on every call (the interpreter's parallel `loop`
/// ran three times slower on two cores than on one). The closure's code,
/// its environment's values and the tensors' storage stay shared; only the
/// counted handles are new (one level down).
fn private(f: &Value) -> Value {
    fn handle(v: &Value) -> Value {
        match v {
            Value::Tensor(t) => {
                Value::Tensor(Arc::new(Tensor { data: t.data.clone(), offset: t.offset, shape: t.shape.clone() }))
            }
            Value::Closure(c) => {
                Value::Closure(Arc::new(Closure { code: c.code, env: c.env.iter().map(Value::clone).collect() }))
            }
            other => other.clone(),
        }
    }
    match f {
        Value::Closure(_) => handle(f),
        Value::Partial(p) => {
            Value::Partial(Arc::new(Partial { func: handle(&p.func), args: p.args.iter().map(handle).collect() }))
        }
        other => other.clone(),
    }
}

pub fn map(m: &mut Machine, f: &Value, s: &Seq, span: Span) -> Res<Seq> {
    let n = s.len();
    if !parallel(m, n) {
        let mut out = Seq::builder(n);
        for i in 0..n {
            out.push(m.call1(f, s.get(i), span)?);
        }
        return Ok(out.finish());
    }
    let parts = per_chunk(m, n, f, span, |w, f, lo, hi| {
        (lo..hi).map(|i| w.call1(f, s.get(i), span)).collect::<Res<Vec<Value>>>()
    })?;
    let mut out = Seq::builder(n);
    for v in parts.into_iter().flatten() {
        out.push(v);
    }
    Ok(out.finish())
}

pub fn map2(m: &mut Machine, f: &Value, a: &Seq, b: &Seq, span: Span) -> Res<Vec<Value>> {
    let n = a.len();
    if !parallel(m, n) {
        let mut out = crate::error::alloc_vec(n);
        for i in 0..n {
            out.push(m.call2(f, a.get(i), b.get(i), span)?);
        }
        return Ok(out);
    }
    let parts = per_chunk(m, n, f, span, |w, f, lo, hi| {
        (lo..hi).map(|i| w.call2(f, a.get(i), b.get(i), span)).collect::<Res<Vec<Value>>>()
    })?;
    Ok(parts.into_iter().flatten().collect())
}

/// `reduce f ne s`: each chunk is folded from the neutral element, then the
/// chunk results are combined left to right (a tree of depth two).
pub(crate) fn checking_order(m: &Machine) -> bool {
    m.accelerated && m.shared.options.debug && m.shared.options.check_order
}

pub fn reduce(m: &mut Machine, f: &Value, ne: &Value, s: &Seq, span: Span) -> Res<Value> {
    if checking_order(m) {
        return super::order::check_reduce(m, f, ne, s, span);
    }
    let n = s.len();
    let fold = |w: &mut Machine, f: &Value, lo: usize, hi: usize| -> Res<Value> {
        let mut acc = ne.clone();
        for i in lo..hi {
            acc = w.call2(f, acc, s.get(i), span)?;
        }
        Ok(acc)
    };
    if !parallel(m, n) {
        return fold(m, f, 0, n);
    }
    let parts = per_chunk(m, n, f, span, fold)?;
    let mut acc = ne.clone();
    for p in parts {
        acc = m.call2(f, acc, p, span)?;
    }
    Ok(acc)
}

pub fn par_loop(m: &mut Machine, n: i64, f: &Value, span: Span) -> Res<()> {
    let n = n.max(0) as usize;
    if checking_order(m) && n > 1 {
        return super::order::check_loop(m, n, f, span);
    }
    let body = |w: &mut Machine, f: &Value, lo: usize, hi: usize| -> Res<()> {
        for i in lo..hi {
            w.call1(f, Value::Int(i as i64), span)?;
        }
        Ok(())
    };
    // A loop whose iterations may update one cell (an accumulation) runs
    // on one thread: the interpreter's read and write of the cell are two
    // steps (`crate::Accumulations`).
    if !parallel(m, n) || m.shared.options.accumulations.loops.contains(&span) {
        return body(m, f, 0, n);
    }
    per_chunk(m, n, f, span, body).map(|_| ())
}
