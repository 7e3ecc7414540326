//! The externals pmx implements (`pmx_ast::externals::SUPPORTED` lists
//! their names for the front end), with the semantics of Miking's OCaml
//! bindings: `ext/math-ext.mc`, `ext/file-ext.mc`, `ext/array-ext.mc`,
//! `ext/matrix-ext.mc`, `ext/dist-ext.mc` (Owl's distributions; samples
//! come from the generator `randSetSeed` seeds, so `setSeed` makes a run
//! repeatable), the clocks of `ext/rtppl-ext.mc`, and `multicore/` on
//! operating-system threads.
//!
//! Opaque values are represented with existing values: an atomic reference
//! is a reference; an array is a rank-1 tensor; channels, threads, mutexes
//! and condition variables are integers that name an entry of a table of
//! this module (the program's types keep them apart).

use super::system::next_random;
use crate::error::Res;
use crate::eval::Machine;
use crate::tensor::{ElemKind, Tensor};
use crate::value::{Seq, Value};
use pmx_ast::Span;
use std::io::{BufRead, Read, Write};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

/// The code of an external: its arguments (exactly its arity).
pub type ExternCode = fn(&mut Machine, &[Value], Span) -> Res<Value>;

/// The arity and code of an external function pmx implements.
pub fn function(name: &str) -> Option<(usize, ExternCode)> {
    Some(match name {
        "externalExp" => (1, |_, a, _| Ok(Value::Float(a[0].as_float().exp()))),
        "externalLog" => (1, |_, a, _| Ok(Value::Float(a[0].as_float().ln()))),
        "externalAtan" => (1, |_, a, _| Ok(Value::Float(a[0].as_float().atan()))),
        "externalSin" => (1, |_, a, _| Ok(Value::Float(a[0].as_float().sin()))),
        "externalCos" => (1, |_, a, _| Ok(Value::Float(a[0].as_float().cos()))),
        "externalTan" => (1, |_, a, _| Ok(Value::Float(a[0].as_float().tan()))),
        "externalSqrt" => (1, |_, a, _| Ok(Value::Float(a[0].as_float().sqrt()))),
        "externalAtan2" => (2, |_, a, _| Ok(Value::Float(a[0].as_float().atan2(a[1].as_float())))),
        "externalPow" => (2, |_, a, _| Ok(Value::Float(a[0].as_float().powf(a[1].as_float())))),
        "externalLogGamma" => (1, |_, a, _| Ok(Value::Float(log_gamma(a[0].as_float())))),
        "externalLogCombination" => (2, |_, a, _| Ok(Value::Float(log_choose(a[0].as_int(), a[1].as_int())))),
        // ext/file-ext.mc
        "fileExists" => (1, |_, a, _| Ok(Value::Bool(std::path::Path::new(&a[0].as_string()).exists()))),
        "deleteFile" => (1, |_, a, _| {
            let _ = std::fs::remove_file(a[0].as_string());
            Ok(Value::unit())
        }),
        "fileSize" => (1, |_, a, _| Ok(Value::Int(std::fs::metadata(a[0].as_string()).map_or(0, |m| m.len() as i64)))),
        "writeOpen" => (1, |_, a, _| {
            Ok(match std::fs::File::create(a[0].as_string()) {
                Ok(f) => opened(Channel::Write(std::io::BufWriter::new(f))),
                Err(_) => Value::tuple(vec![Value::Int(-1), Value::Bool(false)]),
            })
        }),
        "readOpen" => (1, |_, a, _| {
            Ok(match std::fs::File::open(a[0].as_string()) {
                Ok(f) => opened(Channel::Read(std::io::BufReader::new(f))),
                Err(_) => Value::tuple(vec![Value::Int(-1), Value::Bool(false)]),
            })
        }),
        "writeString" => (2, |m, a, span| {
            let text = a[1].as_string();
            with_channel(m, &a[0], span, |c| match c {
                Channel::Stdout => {
                    crate::io::out(&text);
                    Ok(())
                }
                Channel::Stderr => {
                    crate::io::err(&text);
                    Ok(())
                }
                Channel::Write(w) => w.write_all(text.as_bytes()).map_err(|e| e.to_string()),
                _ => Err("writeString: not a write channel".into()),
            })?;
            Ok(Value::unit())
        }),
        "writeFlush" => (1, |m, a, span| {
            with_channel(m, &a[0], span, |c| match c {
                Channel::Stdout | Channel::Stderr => {
                    crate::io::flush();
                    Ok(())
                }
                Channel::Write(w) => w.flush().map_err(|e| e.to_string()),
                _ => Err("writeFlush: not a write channel".into()),
            })?;
            Ok(Value::unit())
        }),
        "writeClose" | "readClose" => (1, |m, a, span| {
            let Some(c) = CHANNELS
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .get_mut(a[0].as_int() as usize)
                .and_then(Option::take)
            else {
                return Err(m.fail("the channel is closed", span));
            };
            if let Channel::Write(mut w) = c {
                let _ = w.flush();
            }
            Ok(Value::unit())
        }),
        "readLine" => (1, |m, a, span| {
            crate::io::flush();
            let mut line = Vec::new();
            let n = with_channel(m, &a[0], span, |c| match c {
                Channel::Stdin => std::io::stdin().lock().read_until(b'\n', &mut line).map_err(|e| e.to_string()),
                Channel::Read(r) => r.read_until(b'\n', &mut line).map_err(|e| e.to_string()),
                _ => Err("readLine: not a read channel".into()),
            })?;
            if line.last() == Some(&b'\n') {
                line.pop();
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
            }
            Ok(Value::tuple(vec![Value::string(&String::from_utf8_lossy(&line)), Value::Bool(n == 0)]))
        }),
        // Up to `n` bytes, each the character of its code (0-255), and
        // whether the end of the file came first (Miking's `readBytes`).
        "readBytes" => (2, |m, a, span| {
            crate::io::flush();
            let n = a[1].as_int().max(0) as u64;
            let mut bytes = Vec::new();
            with_channel(m, &a[0], span, |c| match c {
                Channel::Stdin => std::io::stdin().lock().take(n).read_to_end(&mut bytes).map_err(|e| e.to_string()),
                Channel::Read(r) => r.take(n).read_to_end(&mut bytes).map_err(|e| e.to_string()),
                _ => Err("readBytes: not a read channel".into()),
            })?;
            let eof = (bytes.len() as u64) < n;
            let text: Vec<char> = bytes.iter().map(|&b| char::from(b)).collect();
            Ok(Value::tuple(vec![Value::seq(Seq::Char(crate::value::View::from_vec(text))), Value::Bool(eof)]))
        }),
        "readString" => (1, |m, a, span| {
            crate::io::flush();
            let mut text = Vec::new();
            with_channel(m, &a[0], span, |c| match c {
                Channel::Stdin => std::io::stdin().lock().read_to_end(&mut text).map_err(|e| e.to_string()),
                Channel::Read(r) => r.read_to_end(&mut text).map_err(|e| e.to_string()),
                _ => Err("readString: not a read channel".into()),
            })?;
            Ok(Value::string(&String::from_utf8_lossy(&text)))
        }),
        // ext/array-ext.mc: mutable arrays of floats, zero-initialised.
        "arrayCreateFloat" | "cArray1CreateFloat" => (1, |m, a, span| {
            let n = a[0].as_int();
            if n < 0 {
                return Err(m.fail(format!("cannot create an array of negative length {n}"), span));
            }
            let t = Tensor::from_fn::<()>(ElemKind::Float, vec![n as usize], |_| Ok(Value::Float(0.0)));
            Ok(Value::Tensor(Arc::new(t.unwrap_or_else(|()| unreachable!("no element fails")))))
        }),
        "arrayLength" | "cArray1Dim" => (1, |_, a, _| Ok(Value::Int(a[0].as_tensor().size() as i64))),
        "arrayGet" | "cArray1Get" => {
            (2, |m, a, span| a[0].as_tensor().linear_get(a[1].as_int()).map_err(|e| m.fail(e, span)))
        }
        "arraySet" | "cArray1Set" => (3, |m, a, span| {
            a[0].as_tensor().linear_set(a[1].as_int(), a[2].clone()).map_err(|e| m.fail(e, span))?;
            Ok(Value::unit())
        }),
        // ext/matrix-ext.mc: rank-2 tensors of floats.
        "externalMatrixExponential" => (1, |m, a, span| {
            let (r, c, x) = matrix(m, &a[0], span)?;
            if r != c {
                return Err(m.fail(format!("the matrix exponential needs a square matrix, not {r}x{c}"), span));
            }
            Ok(to_tensor(r, c, matrix_exp(r, &x)))
        }),
        "externalMatrixTranspose" => (1, |m, a, span| {
            let (r, c, x) = matrix(m, &a[0], span)?;
            Ok(to_tensor(c, r, (0..c * r).map(|k| x[(k % r) * c + k / r]).collect()))
        }),
        "externalMatrixMulFloat" => (2, |m, a, span| {
            let (r, c, x) = matrix(m, &a[1], span)?;
            let k = a[0].as_float();
            Ok(to_tensor(r, c, x.iter().map(|v| k * v).collect()))
        }),
        "externalMatrixMul" => (2, |m, a, span| {
            let (r1, c1, x) = matrix(m, &a[0], span)?;
            let (r2, c2, y) = matrix(m, &a[1], span)?;
            if c1 != r2 {
                return Err(m.fail(format!("cannot multiply a {r1}x{c1} matrix by a {r2}x{c2} matrix"), span));
            }
            Ok(to_tensor(r1, c2, mat_mul(r1, c1, c2, &x, &y)))
        }),
        "externalMatrixElemMul" => (2, |m, a, span| elementwise(m, a, span, |p, q| p * q)),
        "externalMatrixElemAdd" => (2, |m, a, span| elementwise(m, a, span, |p, q| p + q)),
        // ext/dist-ext.mc
        "externalGammaLogPdf" => {
            (3, |_, a, _| Ok(Value::Float(gamma_log_pdf(a[0].as_float(), a[1].as_float(), a[2].as_float()))))
        }
        "externalGammaSample" => (2, |_, a, _| Ok(Value::Float(gamma_sample(a[0].as_float()) * a[1].as_float()))),
        "externalBinomialLogPmf" => (3, |_, a, _| {
            let (k, p, n) = (a[0].as_int(), a[1].as_float(), a[2].as_int());
            Ok(Value::Float(binomial_log_pmf(k, p, n)))
        }),
        "externalBinomialSample" => (2, |_, a, _| {
            let (p, n) = (a[0].as_float(), a[1].as_int());
            Ok(Value::Int((0..n.max(0)).filter(|_| uniform() < p).count() as i64))
        }),
        "externalBetaLogPdf" => (3, |_, a, _| {
            let (x, al, be) = (a[0].as_float(), a[1].as_float(), a[2].as_float());
            Ok(Value::Float(
                xlogy(al - 1.0, x) + xlogy(be - 1.0, 1.0 - x) - (log_gamma(al) + log_gamma(be) - log_gamma(al + be)),
            ))
        }),
        "externalBetaSample" => (2, |_, a, _| {
            let x = gamma_sample(a[0].as_float());
            let y = gamma_sample(a[1].as_float());
            Ok(Value::Float(x / (x + y)))
        }),
        "externalGaussianLogPdf" => (3, |_, a, _| {
            let (x, mu, sigma) = (a[0].as_float(), a[1].as_float(), a[2].as_float());
            let z = (x - mu) / sigma;
            Ok(Value::Float(-0.5 * z * z - sigma.ln() - 0.5 * (2.0 * std::f64::consts::PI).ln()))
        }),
        "externalGaussianSample" => (2, |_, a, _| Ok(Value::Float(a[0].as_float() + a[1].as_float() * normal()))),
        "externalMultinomialLogPmf" => (2, |_, a, _| {
            let ns: Vec<i64> = a[0].as_seq().to_values().iter().map(Value::as_int).collect();
            let ps: Vec<f64> = a[1].as_seq().to_values().iter().map(Value::as_float).collect();
            let n: i64 = ns.iter().sum();
            let mut lp = log_gamma(n as f64 + 1.0);
            for (k, p) in ns.iter().zip(&ps) {
                lp += xlogy(*k as f64, *p) - log_gamma(*k as f64 + 1.0);
            }
            Ok(Value::Float(lp))
        }),
        "externalMultinomialSample" => (2, |_, a, _| {
            let n = a[0].as_int();
            let ps: Vec<f64> = a[1].as_seq().to_values().iter().map(Value::as_float).collect();
            let mut counts = vec![0i64; ps.len()];
            for _ in 0..n.max(0) {
                counts[categorical(&ps)] += 1;
            }
            Ok(Value::seq(Seq::from_values(counts.into_iter().map(Value::Int).collect())))
        }),
        "externalCategoricalSample" => (1, |_, a, _| {
            let ps: Vec<f64> = a[0].as_seq().to_values().iter().map(Value::as_float).collect();
            Ok(Value::Int(categorical(&ps) as i64))
        }),
        "externalDirichletLogPdf" => (2, |_, a, _| {
            let xs: Vec<f64> = a[0].as_seq().to_values().iter().map(Value::as_float).collect();
            let alpha: Vec<f64> = a[1].as_seq().to_values().iter().map(Value::as_float).collect();
            let sum: f64 = alpha.iter().sum();
            let mut lp = log_gamma(sum);
            for (x, al) in xs.iter().zip(&alpha) {
                lp += xlogy(al - 1.0, *x) - log_gamma(*al);
            }
            Ok(Value::Float(lp))
        }),
        "externalDirichletSample" => (1, |_, a, _| {
            let gs: Vec<f64> = a[0].as_seq().to_values().iter().map(|al| gamma_sample(al.as_float())).collect();
            let sum: f64 = gs.iter().sum();
            Ok(Value::seq(Seq::from_values(gs.into_iter().map(|g| Value::Float(g / sum)).collect())))
        }),
        "externalUniformContinuousSample" => {
            (2, |_, a, _| Ok(Value::Float(a[0].as_float() + (a[1].as_float() - a[0].as_float()) * uniform())))
        }
        "externalUniformDiscreteSample" => (2, |m, a, span| {
            let (lo, hi) = (a[0].as_int(), a[1].as_int());
            if hi < lo {
                return Err(m.fail(format!("the range [{lo}, {hi}] is empty"), span));
            }
            let width = (hi as i128 - lo as i128 + 1) as u128;
            Ok(Value::Int((lo as i128 + (next_random() as u128 % width) as i128) as i64))
        }),
        "externalExponentialSample" => (1, |_, a, _| Ok(Value::Float(-(1.0 - uniform()).ln() / a[0].as_float()))),
        "externalLomaxLogPdf" => (3, |_, a, _| {
            let (x, shape, scale) = (a[0].as_float(), a[1].as_float(), a[2].as_float());
            Ok(Value::Float(shape.ln() - scale.ln() - (shape + 1.0) * (1.0 + x / scale).ln()))
        }),
        "externalLomaxSample" => (2, |_, a, _| {
            let (shape, scale) = (a[0].as_float(), a[1].as_float());
            Ok(Value::Float(scale * ((1.0 - uniform()).powf(-1.0 / shape) - 1.0)))
        }),
        "externalSetSeed" => (1, |_, a, _| {
            super::system::set_seed(a[0].as_int());
            Ok(Value::unit())
        }),
        // ext/rtppl-ext.mc: a time is (seconds, nanoseconds).
        "getMonotonicTime" => (1, |_, _, _| Ok(timespec(START.elapsed()))),
        "getWallClockTime" => (1, |_, _, _| {
            Ok(timespec(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default()))
        }),
        "getProcessCpuTime" => (1, |_, _, _| Ok(timespec(cpu_time()))),
        "clockNanosleep" => (1, |_, a, _| {
            // Sleeps until the given monotonic time, as rtppl's absolute
            // `clock_nanosleep`.
            let Value::Record(r) = &a[0] else { return Ok(Value::unit()) };
            let (s, ns) = (r.values[0].as_int(), r.values[1].as_int());
            let target = std::time::Duration::new(s.max(0) as u64, ns.clamp(0, 999_999_999) as u32);
            if let Some(left) = target.checked_sub(START.elapsed()) {
                std::thread::sleep(left);
            }
            Ok(Value::unit())
        }),
        // multicore/atomic.mc: an atomic reference is a reference whose
        // operations hold its lock.
        "externalAtomicMake" => (1, |_, a, _| Ok(Value::Ref(Arc::new(Mutex::new(a[0].clone()))))),
        "externalAtomicGet" => (1, |_, a, _| Ok(lock_ref(&a[0]).clone())),
        "externalAtomicExchange" => (2, |_, a, _| Ok(std::mem::replace(&mut *lock_ref(&a[0]), a[1].clone()))),
        "externalAtomicCAS" => (3, |_, a, _| {
            let mut cell = lock_ref(&a[0]);
            if physically_equal(&cell, &a[1]) {
                *cell = a[2].clone();
                Ok(Value::Bool(true))
            } else {
                Ok(Value::Bool(false))
            }
        }),
        "externalAtomicFetchAndAdd" => (2, |_, a, _| {
            let mut cell = lock_ref(&a[0]);
            let old = cell.as_int();
            *cell = Value::Int(old.wrapping_add(a[1].as_int()));
            Ok(Value::Int(old))
        }),
        // multicore/thread.mc
        "externalThreadSpawn" => (1, |m, a, span| thread_spawn(m, a[0].clone(), span)),
        "externalThreadJoin" => (1, |m, a, span| {
            let id = a[0].as_int();
            let handle = THREADS.lock().unwrap_or_else(|e| e.into_inner()).get_mut(id as usize).and_then(Option::take);
            let Some(handle) = handle else {
                return Err(m.fail(format!("thread {id} was joined already"), span));
            };
            match handle.join() {
                Ok(result) => result,
                Err(_) => Err(m.fail(format!("thread {id} stopped with an internal error"), span)),
            }
        }),
        "externalThreadGetID" => (1, |_, a, _| Ok(a[0].clone())),
        "externalThreadSelf" => (1, |_, _, _| Ok(Value::Int(THREAD_ID.with(|t| *t.borrow())))),
        "externalThreadCPURelax" => (1, |_, _, _| {
            std::thread::yield_now();
            Ok(Value::unit())
        }),
        // multicore/mutex.mc and cond.mc
        "externalMutexCreate" => (1, |_, _, _| Ok(Value::Int(new_entry(&MUTEXES, Arc::new(Lock::default()))))),
        "externalMutexLock" => (1, |m, a, span| {
            entry(m, &MUTEXES, &a[0], span)?.lock();
            Ok(Value::unit())
        }),
        "externalMutexTryLock" => (1, |m, a, span| Ok(Value::Bool(entry(m, &MUTEXES, &a[0], span)?.try_lock()))),
        "externalMutexRelease" => (1, |m, a, span| {
            entry(m, &MUTEXES, &a[0], span)?.release();
            Ok(Value::unit())
        }),
        "externalCondCreate" => (1, |_, _, _| Ok(Value::Int(new_entry(&CONDS, Arc::new(Cond::default()))))),
        "externalCondWait" => (2, |m, a, span| {
            let cond = entry(m, &CONDS, &a[0], span)?;
            let mutex = entry(m, &MUTEXES, &a[1], span)?;
            cond.wait(&mutex);
            Ok(Value::unit())
        }),
        "externalCondSignal" => (1, |m, a, span| {
            entry(m, &CONDS, &a[0], span)?.signal(false);
            Ok(Value::unit())
        }),
        "externalCondBroadcast" => (1, |m, a, span| {
            entry(m, &CONDS, &a[0], span)?.signal(true);
            Ok(Value::unit())
        }),
        _ => return None,
    })
}

/// The value of a value-typed external pmx implements (`external stdin :
/// ReadChannel`): it is that value, not a function.
pub fn value(name: &str) -> Option<Value> {
    Some(match name {
        "stdin" => Value::Int(STDIN),
        "stdout" => Value::Int(STDOUT),
        "stderr" => Value::Int(STDERR),
        _ => return None,
    })
}

// ---------------------------------------------------------------- numbers

extern "C" {
    /// C's `lgamma` (ln |Γ(x)|), which Owl's `loggamma` also computes: it is
    /// exact where the result is (ln Γ(3) is ln 2 to the last bit), which a
    /// series approximation is not.
    #[link_name = "lgamma"]
    fn c_lgamma(x: f64) -> f64;
}

/// ln Γ(x).
pub fn log_gamma(x: f64) -> f64 {
    // Safety: `lgamma` is a pure function of one double (its sign output
    // goes to a global, `signgam`, which nothing here reads).
    unsafe { c_lgamma(x) }
}

/// ln (n choose k): from the exact coefficient while it fits in 128 bits
/// (so that `logCombination 4 2` is `log 6.`), else from ln Γ.
fn log_choose(n: i64, k: i64) -> f64 {
    if k < 0 || k > n {
        return f64::NEG_INFINITY;
    }
    let k = k.min(n - k);
    let mut c: u128 = 1;
    for i in 0..k {
        // c * (n - i) / (i + 1) stays an integer at every step.
        match c.checked_mul((n - i) as u128) {
            Some(p) => c = p / (i as u128 + 1),
            None => return log_gamma(n as f64 + 1.0) - log_gamma(k as f64 + 1.0) - log_gamma((n - k) as f64 + 1.0),
        }
    }
    (c as f64).ln()
}

/// `c * ln x`, taken as 0 when `c` is 0 (so that a density with exponent
/// 0 is finite at x = 0, as Owl's are).
fn xlogy(c: f64, x: f64) -> f64 {
    if c == 0.0 {
        0.0
    } else {
        c * x.ln()
    }
}

fn gamma_log_pdf(x: f64, shape: f64, scale: f64) -> f64 {
    xlogy(shape - 1.0, x) - x / scale - log_gamma(shape) - shape * scale.ln()
}

fn binomial_log_pmf(k: i64, p: f64, n: i64) -> f64 {
    if k < 0 || k > n {
        return f64::NEG_INFINITY;
    }
    let (kf, nf) = (k as f64, n as f64);
    // 0 * ln 0 is 0 here: p = 0 or 1 gives certain outcomes.
    log_choose(n, k) + xlogy(kf, p) + xlogy(nf - kf, 1.0 - p)
}

/// Uniform on [0, 1), from the program's generator.
fn uniform() -> f64 {
    (next_random() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// Standard normal (Box–Muller).
fn normal() -> f64 {
    let u1 = 1.0 - uniform();
    let u2 = uniform();
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

/// Gamma(shape, 1) (Marsaglia and Tsang; shapes below one boosted).
fn gamma_sample(shape: f64) -> f64 {
    if shape < 1.0 {
        let u = 1.0 - uniform();
        return gamma_sample(shape + 1.0) * u.powf(1.0 / shape);
    }
    let d = shape - 1.0 / 3.0;
    let c = 1.0 / (9.0 * d).sqrt();
    loop {
        let x = normal();
        let v = (1.0 + c * x).powi(3);
        if v <= 0.0 {
            continue;
        }
        let u = 1.0 - uniform();
        if u.ln() < 0.5 * x * x + d - d * v + d * v.ln() {
            return d * v;
        }
    }
}

/// An index drawn with the given (unnormalised) weights.
fn categorical(ps: &[f64]) -> usize {
    let total: f64 = ps.iter().sum();
    let mut u = uniform() * total;
    for (i, p) in ps.iter().enumerate() {
        if u < *p {
            return i;
        }
        u -= p;
    }
    ps.len().saturating_sub(1)
}

// ---------------------------------------------------------------- matrices

/// A rank-2 float tensor's rows, columns and elements in row-major order.
fn matrix(m: &Machine, v: &Value, span: Span) -> Res<(usize, usize, Vec<f64>)> {
    let t = v.as_tensor();
    if t.rank() != 2 {
        return Err(m.fail(format!("a matrix must be a rank-2 tensor, not rank {}", t.rank()), span));
    }
    Ok((t.shape[0], t.shape[1], t.values().iter().map(Value::as_float).collect()))
}

/// Two matrices of one shape combined element by element.
fn elementwise(m: &Machine, a: &[Value], span: Span, op: fn(f64, f64) -> f64) -> Res<Value> {
    let (r1, c1, x) = matrix(m, &a[0], span)?;
    let (r2, c2, y) = matrix(m, &a[1], span)?;
    if (r1, c1) != (r2, c2) {
        return Err(m.fail(format!("the matrices differ in shape: {r1}x{c1} and {r2}x{c2}"), span));
    }
    Ok(to_tensor(r1, c1, x.iter().zip(&y).map(|(p, q)| op(*p, *q)).collect()))
}

fn to_tensor(r: usize, c: usize, xs: Vec<f64>) -> Value {
    let t = Tensor::from_fn::<()>(ElemKind::Float, vec![r, c], |i| Ok(Value::Float(xs[i])));
    Value::Tensor(Arc::new(t.unwrap_or_else(|()| unreachable!("no element fails"))))
}

fn mat_mul(r: usize, k: usize, c: usize, x: &[f64], y: &[f64]) -> Vec<f64> {
    let mut out = vec![0.0; r * c];
    for i in 0..r {
        for l in 0..k {
            let a = x[i * k + l];
            for j in 0..c {
                out[i * c + j] += a * y[l * c + j];
            }
        }
    }
    out
}

/// e^X for an n×n matrix: scaled until its norm is below 1/2, a Taylor
/// series to full precision, then squared back.
fn matrix_exp(n: usize, x: &[f64]) -> Vec<f64> {
    let norm = (0..n).map(|i| (0..n).map(|j| x[i * n + j].abs()).sum::<f64>()).fold(0.0, f64::max);
    let mut squarings = 0;
    let mut scale = 1.0;
    while norm * scale > 0.5 {
        scale /= 2.0;
        squarings += 1;
    }
    let a: Vec<f64> = x.iter().map(|v| v * scale).collect();
    let identity = |i: usize| if i / n == i % n { 1.0 } else { 0.0 };
    let mut sum: Vec<f64> = (0..n * n).map(identity).collect();
    let mut term = sum.clone();
    for k in 1..30 {
        term = mat_mul(n, n, n, &term, &a).into_iter().map(|v| v / k as f64).collect();
        sum.iter_mut().zip(&term).for_each(|(s, t)| *s += t);
    }
    for _ in 0..squarings {
        sum = mat_mul(n, n, n, &sum, &sum);
    }
    sum
}

// ---------------------------------------------------------------- files

enum Channel {
    Stdin,
    Stdout,
    Stderr,
    Read(std::io::BufReader<std::fs::File>),
    Write(std::io::BufWriter<std::fs::File>),
}

const STDIN: i64 = 0;
const STDOUT: i64 = 1;
const STDERR: i64 = 2;

/// Open channels by number; a closed one is `None`.
static CHANNELS: Mutex<Vec<Option<Channel>>> = Mutex::new(Vec::new());

fn channels() -> MutexGuard<'static, Vec<Option<Channel>>> {
    let mut table = CHANNELS.lock().unwrap_or_else(|e| e.into_inner());
    if table.is_empty() {
        table.extend([Some(Channel::Stdin), Some(Channel::Stdout), Some(Channel::Stderr)]);
    }
    table
}

/// `(channel, true)` for a channel just opened.
fn opened(c: Channel) -> Value {
    let mut table = channels();
    table.push(Some(c));
    Value::tuple(vec![Value::Int(table.len() as i64 - 1), Value::Bool(true)])
}

fn with_channel<T>(
    m: &Machine,
    handle: &Value,
    span: Span,
    f: impl FnOnce(&mut Channel) -> Result<T, String>,
) -> Res<T> {
    let mut table = channels();
    match table.get_mut(handle.as_int() as usize).and_then(Option::as_mut) {
        Some(c) => f(c).map_err(|e| m.fail(e, span)),
        None => Err(m.fail("the channel is closed", span)),
    }
}

// ---------------------------------------------------------------- clocks

static START: std::sync::LazyLock<std::time::Instant> = std::sync::LazyLock::new(std::time::Instant::now);

fn timespec(d: std::time::Duration) -> Value {
    Value::tuple(vec![Value::Int(d.as_secs() as i64), Value::Int(d.subsec_nanos() as i64)])
}

/// The processor time of this process, from `/proc/self/stat` where there
/// is one (user and system ticks, at the usual 100 per second), else the
/// time since the start.
fn cpu_time() -> std::time::Duration {
    let ticks = std::fs::read_to_string("/proc/self/stat").ok().and_then(|s| {
        let rest = &s[s.rfind(')')? + 2..];
        let fields: Vec<&str> = rest.split_whitespace().collect();
        Some(fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?)
    });
    match ticks {
        Some(t) => std::time::Duration::from_millis(t * 10),
        None => START.elapsed(),
    }
}

// ---------------------------------------------------------------- threads

fn lock_ref(v: &Value) -> MutexGuard<'_, Value> {
    match v {
        Value::Ref(r) => r.lock().unwrap_or_else(|e| e.into_inner()),
        _ => unreachable!("atomic operations are typed to take an atomic reference"),
    }
}

/// OCaml's physical equality, which `atomicCAS` compares with: scalars by
/// value, everything else by identity.
fn physically_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => x == y,
        (Value::Float(x), Value::Float(y)) => x.to_bits() == y.to_bits(),
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Char(x), Value::Char(y)) => x == y,
        (Value::Symbol(x), Value::Symbol(y)) => x == y,
        (Value::Seq(x), Value::Seq(y)) => Arc::ptr_eq(x, y),
        (Value::Record(x), Value::Record(y)) => Arc::ptr_eq(x, y) || (x.values.is_empty() && y.values.is_empty()),
        (Value::Con(x), Value::Con(y)) => Arc::ptr_eq(x, y),
        (Value::Closure(x), Value::Closure(y)) => Arc::ptr_eq(x, y),
        (Value::Tensor(x), Value::Tensor(y)) => Arc::ptr_eq(x, y),
        (Value::Ref(x), Value::Ref(y)) => Arc::ptr_eq(x, y),
        _ => false,
    }
}

type Joined = std::thread::JoinHandle<Res<Value>>;

/// Spawned threads not yet joined, by number; entry 0 is the main thread.
static THREADS: Mutex<Vec<Option<Joined>>> = Mutex::new(Vec::new());

thread_local! {
    static THREAD_ID: std::cell::RefCell<i64> = const { std::cell::RefCell::new(0) };
}

/// Runs `f ()` on a new thread of the operating system, with its own
/// machine over the same program.
fn thread_spawn(m: &mut Machine, f: Value, span: Span) -> Res<Value> {
    let shared = m.shared.clone();
    let mut table = THREADS.lock().unwrap_or_else(|e| e.into_inner());
    if table.is_empty() {
        table.push(None);
    }
    let id = table.len() as i64;
    let spawned = spawn_started(
        std::thread::Builder::new().stack_size(256 << 20),
        move || {
            THREAD_ID.with(|t| *t.borrow_mut() = id);
            Machine::new(shared)
        },
        move |mut machine| machine.apply(f, smallvec::smallvec![Value::unit()], span),
    );
    match spawned {
        Ok(handle) => {
            table.push(Some(handle));
            Ok(Value::Int(id))
        }
        Err(e) => Err(m.fail(format!("cannot start a thread: {e}"), span)),
    }
}

/// Runs `setup` and then `body` on a new thread, and returns once `setup`
/// has run there: threads start in the order they are spawned. (Miking's
/// own `multicore/cond.mc` test relies on that: its first thread must
/// reach `condWait` before its second signals. When `threadSpawn` returned
/// at once, the second thread often ran first on a loaded machine, and the
/// first then waited forever.)
fn spawn_started<S, T: Send + 'static>(
    builder: std::thread::Builder,
    setup: impl FnOnce() -> S + Send + 'static,
    body: impl FnOnce(S) -> T + Send + 'static,
) -> std::io::Result<std::thread::JoinHandle<T>> {
    let (started, running) = std::sync::mpsc::channel::<()>();
    let handle = builder.spawn(move || {
        let state = setup();
        let _ = started.send(());
        body(state)
    })?;
    // An error means that the thread ended (failed) before it could say so.
    let _ = running.recv();
    Ok(handle)
}

/// A mutex locked and released by separate calls (Miking's `mutexLock`
/// and `mutexRelease`), which a guard-based mutex cannot express.
#[derive(Default)]
struct Lock {
    locked: Mutex<bool>,
    freed: Condvar,
}

impl Lock {
    fn lock(&self) {
        let mut locked = self.locked.lock().unwrap_or_else(|e| e.into_inner());
        while *locked {
            locked = self.freed.wait(locked).unwrap_or_else(|e| e.into_inner());
        }
        *locked = true;
    }
    fn try_lock(&self) -> bool {
        let mut locked = self.locked.lock().unwrap_or_else(|e| e.into_inner());
        !std::mem::replace(&mut *locked, true)
    }
    fn release(&self) {
        *self.locked.lock().unwrap_or_else(|e| e.into_inner()) = false;
        self.freed.notify_one();
    }
}

/// A condition variable over [`Lock`]s: a waiter holds the condition's own
/// lock from before it releases the program's mutex until it sleeps, so a
/// signal sent in between is not lost.
#[derive(Default)]
struct Cond {
    signals: Mutex<u64>,
    changed: Condvar,
}

impl Cond {
    fn wait(&self, mutex: &Lock) {
        let mut signals = self.signals.lock().unwrap_or_else(|e| e.into_inner());
        let seen = *signals;
        mutex.release();
        while *signals == seen {
            signals = self.changed.wait(signals).unwrap_or_else(|e| e.into_inner());
        }
        drop(signals);
        mutex.lock();
    }
    fn signal(&self, all: bool) {
        *self.signals.lock().unwrap_or_else(|e| e.into_inner()) += 1;
        if all {
            self.changed.notify_all();
        } else {
            self.changed.notify_one();
        }
    }
}

static MUTEXES: Mutex<Vec<Arc<Lock>>> = Mutex::new(Vec::new());
static CONDS: Mutex<Vec<Arc<Cond>>> = Mutex::new(Vec::new());

fn new_entry<T>(table: &Mutex<Vec<Arc<T>>>, x: Arc<T>) -> i64 {
    let mut t = table.lock().unwrap_or_else(|e| e.into_inner());
    t.push(x);
    t.len() as i64 - 1
}

/// The entry a handle names (taken out of the table's lock, which a
/// blocking operation must not hold).
fn entry<T>(m: &Machine, table: &Mutex<Vec<Arc<T>>>, handle: &Value, span: Span) -> Res<Arc<T>> {
    let t = table.lock().unwrap_or_else(|e| e.into_inner());
    match t.get(handle.as_int() as usize) {
        Some(x) => Ok(x.clone()),
        None => Err(m.fail("not a mutex or condition variable made by this program", span)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The front end's list and this module agree.
    #[test]
    fn every_supported_external_is_implemented() {
        for name in pmx_ast::externals::SUPPORTED {
            assert!(function(name).is_some() || value(name).is_some(), "{name} is listed but not implemented");
        }
    }

    /// A spawned thread has run its set-up when `spawn_started` returns,
    /// however long the set-up takes.
    #[test]
    fn spawned_threads_have_started_when_spawn_returns() {
        use std::sync::atomic::{AtomicBool, Ordering};
        let set_up = Arc::new(AtomicBool::new(false));
        let flag = set_up.clone();
        let handle = spawn_started(
            std::thread::Builder::new(),
            move || {
                std::thread::sleep(std::time::Duration::from_millis(50));
                flag.store(true, Ordering::SeqCst);
            },
            |()| 7,
        )
        .expect("a thread starts");
        assert!(set_up.load(Ordering::SeqCst));
        assert_eq!(handle.join().expect("the thread ends"), 7);
    }

    #[test]
    fn log_gamma_matches_known_values() {
        let close = |a: f64, b: f64| (a - b).abs() < 1e-12 * b.abs().max(1.0);
        assert!(close(log_gamma(1.0), 0.0));
        assert!(close(log_gamma(5.0), 24f64.ln()));
        assert!(close(log_gamma(0.5), std::f64::consts::PI.sqrt().ln()));
        assert!(close(log_gamma(100.0), 359.134_205_369_575_4));
        assert!(close(log_choose(10, 3), 120f64.ln()));
    }

    #[test]
    fn matrix_exponential_of_a_diagonal_and_a_rotation() {
        let e = matrix_exp(2, &[1.0, 0.0, 0.0, 2.0]);
        assert!((e[0] - 1f64.exp()).abs() < 1e-12 && (e[3] - 2f64.exp()).abs() < 1e-11 && e[1].abs() < 1e-15);
        let t = 0.7f64;
        let r = matrix_exp(2, &[0.0, -t, t, 0.0]);
        assert!((r[0] - t.cos()).abs() < 1e-12 && (r[2] - t.sin()).abs() < 1e-12);
    }
}
