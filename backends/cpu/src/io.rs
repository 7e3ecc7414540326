//! Program output: a buffered standard output shared by all threads, and
//! the reports of failing utests. Output is flushed before anything is
//! written to standard error and before the program reads input or exits.

use pmx_ast::Span;
use std::io::{BufWriter, Stdout, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{LazyLock, Mutex};

static STDOUT: LazyLock<Mutex<BufWriter<Stdout>>> =
    LazyLock::new(|| Mutex::new(BufWriter::with_capacity(1 << 16, std::io::stdout())));

/// Where failing utests are reported: set by the embedder, which knows how
/// to turn a span into a file and line.
pub type Locator = Box<dyn Fn(Span) -> String + Send + Sync>;

static LOCATOR: LazyLock<Mutex<Option<Locator>>> = LazyLock::new(|| Mutex::new(None));

pub fn set_locator(locator: Locator) {
    *LOCATOR.lock().unwrap_or_else(|e| e.into_inner()) = Some(locator);
}

pub fn locate(span: Span) -> String {
    match &*LOCATOR.lock().unwrap_or_else(|e| e.into_inner()) {
        Some(f) => f(span),
        None => format!("bytes {}..{}", span.start, span.end),
    }
}

/// Whether the last thing written to standard output was a utest's dot.
static AFTER_DOT: AtomicBool = AtomicBool::new(false);

pub fn out(text: &str) {
    let mut w = STDOUT.lock().unwrap_or_else(|e| e.into_inner());
    // The program's own output starts on a line of its own, not after the
    // dots of the utests that ran before it (`.501500`).
    if AFTER_DOT.swap(false, Ordering::Relaxed) && !text.is_empty() && !text.starts_with('\n') {
        let _ = w.write_all(b"\n");
    }
    let _ = w.write_all(text.as_bytes());
}

/// The dot of a passing utest.
pub fn dot() {
    let mut w = STDOUT.lock().unwrap_or_else(|e| e.into_inner());
    let _ = w.write_all(b".");
    AFTER_DOT.store(true, Ordering::Relaxed);
}

pub fn flush() {
    let _ = STDOUT.lock().unwrap_or_else(|e| e.into_inner()).flush();
}

pub fn err(text: &str) {
    flush();
    let _ = std::io::stderr().write_all(text.as_bytes());
}

pub fn utest_failure(span: Span, detail: &str) {
    out(&format!("\n ** Unit test FAILED: {} **\n{detail}\n", locate(span)));
}
