//! The data-parallel keywords. Inside an `accelerate` expression and not in
//! debug mode, `map`, `map2`, `reduce` and `loop` split their index range
//! into chunks that run on rayon's threads, each with its own machine;
//! otherwise they run sequentially. Errors are reported from the first
//! failing chunk in index order, so they do not depend on scheduling.

use crate::error::Res;
use crate::eval::Machine;
use crate::value::{Seq, Value};
use pmx_ast::Span;
use rayon::prelude::*;
use std::sync::OnceLock;

/// Threads for parallel keywords, with stacks as large as deep user
/// recursion inside them may need.
pub(crate) fn pool() -> &'static rayon::ThreadPool {
    static POOL: OnceLock<rayon::ThreadPool> = OnceLock::new();
    POOL.get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .stack_size(256 << 20)
            .thread_name(|i| format!("pmx-parallel-{i}"))
            .build()
            .expect("cannot start the parallel thread pool")
    })
}

fn parallel(m: &Machine, n: usize) -> bool {
    m.accelerated && !m.shared.options.debug && n >= 2 && pool().current_num_threads() > 1
}

/// Index ranges, a few per thread.
fn chunks(n: usize) -> Vec<(usize, usize)> {
    let parts = (pool().current_num_threads() * 4).min(n).max(1);
    let size = n.div_ceil(parts);
    (0..n).step_by(size).map(|s| (s, (s + size).min(n))).collect()
}

/// Runs `body` on each chunk (in parallel), collecting results in order.
fn per_chunk<T: Send>(
    m: &Machine,
    n: usize,
    body: impl Fn(&mut Machine, usize, usize) -> Res<T> + Sync,
) -> Res<Vec<T>> {
    let ranges = chunks(n);
    let (shared, accelerated) = (m.shared.clone(), m.accelerated);
    let results: Vec<Res<T>> = pool().install(|| {
        ranges
            .par_iter()
            .map(|&(lo, hi)| {
                let mut worker = Machine::new(shared.clone());
                worker.accelerated = accelerated;
                body(&mut worker, lo, hi)
            })
            .collect()
    });
    results.into_iter().collect()
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
    let parts = per_chunk(m, n, |w, lo, hi| (lo..hi).map(|i| w.call1(f, s.get(i), span)).collect::<Res<Vec<Value>>>())?;
    let mut out = Seq::builder(n);
    for v in parts.into_iter().flatten() {
        out.push(v);
    }
    Ok(out.finish())
}

pub fn map2(m: &mut Machine, f: &Value, a: &Seq, b: &Seq, span: Span) -> Res<Vec<Value>> {
    let n = a.len();
    if !parallel(m, n) {
        let mut out = Vec::with_capacity(n);
        for i in 0..n {
            out.push(m.call2(f, a.get(i), b.get(i), span)?);
        }
        return Ok(out);
    }
    let parts = per_chunk(m, n, |w, lo, hi| {
        (lo..hi).map(|i| w.call2(f, a.get(i), b.get(i), span)).collect::<Res<Vec<Value>>>()
    })?;
    Ok(parts.into_iter().flatten().collect())
}

/// `reduce f ne s`: each chunk is folded from the neutral element, then the
/// chunk results are combined left to right (a tree of depth two).
fn checking_order(m: &Machine) -> bool {
    m.accelerated && m.shared.options.debug && m.shared.options.check_order
}

pub fn reduce(m: &mut Machine, f: &Value, ne: &Value, s: &Seq, span: Span) -> Res<Value> {
    if checking_order(m) {
        return super::order::check_reduce(m, f, ne, s, span);
    }
    let n = s.len();
    let fold = |w: &mut Machine, lo: usize, hi: usize| -> Res<Value> {
        let mut acc = ne.clone();
        for i in lo..hi {
            acc = w.call2(f, acc, s.get(i), span)?;
        }
        Ok(acc)
    };
    if !parallel(m, n) {
        return fold(m, 0, n);
    }
    let parts = per_chunk(m, n, fold)?;
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
    let body = |w: &mut Machine, lo: usize, hi: usize| -> Res<()> {
        for i in lo..hi {
            w.call1(f, Value::Int(i as i64), span)?;
        }
        Ok(())
    };
    if !parallel(m, n) {
        return body(m, 0, n);
    }
    per_chunk(m, n, body).map(|_| ())
}
