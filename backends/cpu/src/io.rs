//! Program output: a buffered standard output shared by all threads, and
//! the reports of failing utests. Output is flushed before anything is
//! written to standard error and before the program reads input or exits.

use pmx_ast::Span;
use std::io::{BufWriter, Stdout, Write};
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

pub fn out(text: &str) {
    let mut w = STDOUT.lock().unwrap_or_else(|e| e.into_inner());
    let _ = w.write_all(text.as_bytes());
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
