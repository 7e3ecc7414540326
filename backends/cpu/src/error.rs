//! Run-time errors: a message, where, and the calls that led there; and
//! how failures that unwind instead of returning (allocation failure, a
//! value of the wrong type after `unsafeCoerce`, a bug in pmx) become such
//! errors.
//!
//! Why unwinding: sequences and tensors are built deep inside operations
//! that cannot fail on well-typed input (`concat`, `snoc`, a tensor copy);
//! threading a `Result` through all of them for the rare allocation that
//! the system refuses would cost every operation. Instead an allocation
//! of user data asks for its memory fallibly ([`alloc_vec`]) and, when
//! refused, unwinds with an [`OutOfMemory`] payload (`resume_unwind`: no
//! panic message). The evaluator catches unwinding at the built-in call
//! that was running ([`catching`]), or at the top of a run, and turns it
//! into a [`RuntimeError`] at the source location being evaluated.

use pmx_ast::{SmolStr, Span};
use std::any::Any;
use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

/// The number of calls shown in a trace.
pub const TRACE_LIMIT: usize = 12;

/// How the engines' messages that report a bug in pmx begin.
pub const INTERNAL_PREFIX: &str = "internal error: ";

/// What kind of failure an error reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// An error of the program (division by zero, `error`, out of memory).
    Program,
    /// A bug in pmx: the message says what failed inside pmx; the span is
    /// the source location that was being evaluated.
    Internal,
}

#[derive(Clone, Debug)]
pub struct RuntimeError {
    pub message: String,
    pub span: Span,
    /// Functions being called, most recent first: name and call site.
    pub trace: Vec<(SmolStr, Span)>,
    /// Calls left out of the trace.
    pub omitted: usize,
    /// `exit n` unwinds as an error that is not one.
    pub exit: Option<i32>,
    pub kind: ErrorKind,
    /// Native host code's frames are their own: a function that made tail
    /// calls before failing reports the last callee and its site here, and
    /// the interpreter's frame that called it shows them in the trace
    /// instead of its own call (as its own tail calls do).
    pub tail_call: Option<(SmolStr, Span)>,
}

pub type Fail = Box<RuntimeError>;
pub type Res<T> = Result<T, Fail>;

impl RuntimeError {
    pub fn new(message: String, span: Span) -> RuntimeError {
        RuntimeError {
            message,
            span,
            trace: Vec::new(),
            omitted: 0,
            exit: None,
            kind: ErrorKind::Program,
            tail_call: None,
        }
    }

    /// An engine's error at `span`: a message that starts with
    /// [`INTERNAL_PREFIX`] (the engines' convention for a bug in pmx, such
    /// as generated code that does not build) is of kind
    /// [`ErrorKind::Internal`], without the prefix, which rendering adds.
    pub fn from_engine(message: String, span: Span) -> Fail {
        match message.strip_prefix(INTERNAL_PREFIX) {
            Some(rest) => {
                Box::new(RuntimeError { kind: ErrorKind::Internal, ..RuntimeError::new(rest.to_string(), span) })
            }
            None => Box::new(RuntimeError::new(message, span)),
        }
    }

    /// Records a call the error unwinds through (innermost first): the
    /// function's name and its call site.
    #[cold]
    pub fn add_call(&mut self, name: &SmolStr, site: Span) {
        let (name, site) = self.tail_call.take().unwrap_or_else(|| (name.clone(), site));
        if self.trace.len() < TRACE_LIMIT {
            self.trace.push((name, site));
        } else {
            self.omitted += 1;
        }
    }
}

/// The payload an allocation of user data unwinds with when the system
/// refuses it.
#[derive(Debug)]
pub struct OutOfMemory {
    /// The size asked for, in bytes (saturated: a size that does not even
    /// fit in a machine word is `usize::MAX`).
    pub bytes: usize,
}

/// The payload of a value of an unexpected type met by the evaluator. A
/// well-typed program never causes one unless it used `unsafeCoerce`.
#[derive(Debug)]
pub struct TypeConfusion(pub &'static str);

/// Gives up on a value of the wrong type; `expected` says what type
/// checking promised.
#[cold]
#[inline(never)]
#[track_caller]
pub fn type_confusion(expected: &'static str) -> ! {
    std::panic::panic_any(TypeConfusion(expected))
}

/// A vector with room for exactly `n` elements, or an unwinding
/// [`OutOfMemory`] when the system refuses the memory (or `n` elements
/// cannot be addressed at all). For user data only: the evaluator's own
/// small allocations abort as usual.
///
/// A request larger than the machine's memory is refused here even when
/// the system would grant it: with overcommit (Linux's default) the
/// reservation succeeds and the process is killed later, without a word,
/// as the memory is filled.
pub fn alloc_vec<T>(n: usize) -> Vec<T> {
    let bytes = n.saturating_mul(std::mem::size_of::<T>().max(1));
    let mut v = Vec::new();
    if bytes > memory_limit() || v.try_reserve_exact(n).is_err() {
        out_of_memory(bytes);
    }
    v
}

/// The most memory the process can hope to fill: the machine's memory and
/// swap, or its control group's limit when lower; unlimited where neither
/// is known.
fn memory_limit() -> usize {
    static LIMIT: OnceLock<usize> = OnceLock::new();
    *LIMIT.get_or_init(|| {
        let kib = |key: &str, text: &str| -> Option<usize> {
            let line = text.lines().find(|l| l.starts_with(key))?;
            line[key.len()..].trim().trim_end_matches("kB").trim().parse::<usize>().ok()
        };
        let machine = std::fs::read_to_string("/proc/meminfo").ok().and_then(|text| {
            let total = kib("MemTotal:", &text)?;
            Some(total.saturating_add(kib("SwapTotal:", &text).unwrap_or(0)).saturating_mul(1024))
        });
        // cgroup v2 writes `max` when there is no limit.
        let group = std::fs::read_to_string("/sys/fs/cgroup/memory.max").ok().and_then(|t| t.trim().parse().ok());
        machine.unwrap_or(usize::MAX).min(group.unwrap_or(usize::MAX))
    })
}

/// The items of an iterator of known length in a vector allocated as
/// [`alloc_vec`] does.
pub fn alloc_collect<T>(items: impl ExactSizeIterator<Item = T>) -> Vec<T> {
    let mut v = alloc_vec(items.len());
    v.extend(items);
    v
}

/// Unwinds with an [`OutOfMemory`] payload for `bytes`.
#[cold]
#[inline(never)]
pub fn out_of_memory(bytes: usize) -> ! {
    std::panic::resume_unwind(Box::new(OutOfMemory { bytes }))
}

/// A number of bytes for people: `512 bytes`, `74.5 GiB`.
fn human_bytes(bytes: usize) -> String {
    const UNITS: [&str; 7] = ["bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let mut size = bytes as f64;
    let mut unit = 0;
    while size >= 1024.0 && unit + 1 < UNITS.len() {
        size /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} bytes")
    } else {
        format!("{size:.1} {}", UNITS[unit])
    }
}

thread_local! {
    /// The innermost source location known to be under evaluation when a
    /// panic started unwinding on this thread (see [`Locate`]).
    static PANIC_SPAN: Cell<Option<Span>> = const { Cell::new(None) };
    /// The message and Rust location of the last panic on this thread, as
    /// the panic hook saw it (see [`record_panic`]).
    static PANIC_TEXT: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Runs of the evaluator in progress in this process: while there is one,
/// the embedder's panic hook should stay quiet, since the panic becomes a
/// located error (see [`evaluating`]).
static EVALUATING: AtomicUsize = AtomicUsize::new(0);

/// Whether an evaluation is running, so that a panic will be reported as a
/// located run-time error and the panic hook need not print it.
pub fn evaluating() -> bool {
    EVALUATING.load(Ordering::Relaxed) > 0
}

/// Marks an evaluation as running while alive.
pub(crate) struct Evaluating;

impl Evaluating {
    pub(crate) fn start() -> Evaluating {
        EVALUATING.fetch_add(1, Ordering::Relaxed);
        Evaluating
    }
}

impl Drop for Evaluating {
    fn drop(&mut self) {
        EVALUATING.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Remembers what a panic hook was told (message and Rust location), for
/// the internal error the panic will become. Embedders call it from their
/// panic hook.
pub fn record_panic(info: &std::panic::PanicHookInfo) {
    let message = payload_text(info.payload());
    let text = match info.location() {
        Some(l) => format!("{message} (at {}:{})", l.file(), l.line()),
        None => message,
    };
    PANIC_TEXT.with(|t| *t.borrow_mut() = Some(text));
}

/// The text of a panic payload.
pub fn payload_text(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else if let Some(TypeConfusion(what)) = payload.downcast_ref::<TypeConfusion>() {
        format!("a value of an unexpected type where {what} was expected")
    } else if let Some(OutOfMemory { bytes }) = payload.downcast_ref::<OutOfMemory>() {
        format!("out of memory ({bytes} bytes)")
    } else {
        "a panic with no message".to_string()
    }
}

/// Records, while a panic unwinds through it, the source location being
/// evaluated: the innermost one wins. Dropping it when not panicking costs
/// one load of the process's panic count.
pub(crate) struct Locate(pub Span);

impl Drop for Locate {
    #[inline(always)]
    fn drop(&mut self) {
        if std::thread::panicking() {
            note_span(self.0);
        }
    }
}

#[cold]
fn note_span(span: Span) {
    PANIC_SPAN.with(|s| {
        if s.get().is_none() && !span.is_builtin() {
            s.set(Some(span));
        }
    });
}

/// The run-time error an unwinding payload stands for (see the module's
/// documentation). `span`: where the catching code was; a location
/// recorded while unwinding is more precise and wins. `coerced`: whether
/// the program has run `unsafeCoerce`, which makes a value of the wrong
/// type the program's fault rather than pmx's.
#[cold]
pub(crate) fn from_panic(payload: Box<dyn Any + Send>, span: Span, coerced: bool) -> Fail {
    let recorded = PANIC_SPAN.with(|s| s.take());
    let text = PANIC_TEXT.with(|t| t.borrow_mut().take());
    let span = recorded.unwrap_or(span);
    if let Some(OutOfMemory { bytes }) = payload.downcast_ref::<OutOfMemory>() {
        let message = if *bytes == usize::MAX {
            "out of memory: the program asked for more memory than a machine can address".to_string()
        } else {
            format!(
                "out of memory: the program asked for {} at once, more than the system can give",
                human_bytes(*bytes)
            )
        };
        return Box::new(RuntimeError::new(message, span));
    }
    // Errors converted on another thread (a parallel chunk) travel as
    // errors, not as panics: see `parallel.rs`.
    if let Some(e) = payload.downcast_ref::<RuntimeError>() {
        return Box::new(e.clone());
    }
    if coerced && payload.downcast_ref::<TypeConfusion>().is_some() {
        return Box::new(RuntimeError::new(
            "the evaluator met a value of an unexpected type (this can follow a use of `unsafeCoerce`)".to_string(),
            span,
        ));
    }
    let what = text.unwrap_or_else(|| payload_text(&*payload));
    let mut e = RuntimeError::new(what, span);
    e.kind = ErrorKind::Internal;
    Box::new(e)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_well() {
        assert_eq!(human_bytes(512), "512 bytes");
        assert_eq!(human_bytes(80_000_000_000), "74.5 GiB");
    }

    #[test]
    fn a_refused_allocation_unwinds_with_its_size() {
        let payload = std::panic::catch_unwind(|| alloc_vec::<u64>(usize::MAX / 2)).expect_err("refused");
        let oom = payload.downcast_ref::<OutOfMemory>().expect("an OutOfMemory payload");
        assert_eq!(oom.bytes, usize::MAX);
        let e = from_panic(payload, Span::BUILTIN, false);
        assert_eq!(e.kind, ErrorKind::Program);
        assert!(e.message.starts_with("out of memory"), "{}", e.message);
    }

    #[test]
    fn an_engine_error_is_internal_by_its_prefix() {
        let e = RuntimeError::from_engine("internal error: x missing".into(), Span::BUILTIN);
        assert_eq!((e.kind, e.message.as_str()), (ErrorKind::Internal, "x missing"));
        let e = RuntimeError::from_engine("Division by zero".into(), Span::BUILTIN);
        assert_eq!((e.kind, e.message.as_str()), (ErrorKind::Program, "Division by zero"));
    }

    #[test]
    fn a_wrong_type_is_internal_unless_coerced() {
        let confused = || std::panic::catch_unwind(|| type_confusion("an Int")).expect_err("panics");
        assert_eq!(from_panic(confused(), Span::BUILTIN, false).kind, ErrorKind::Internal);
        let coerced = from_panic(confused(), Span::BUILTIN, true);
        assert_eq!(coerced.kind, ErrorKind::Program);
        assert!(coerced.message.contains("unsafeCoerce"));
    }
}
