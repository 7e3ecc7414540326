//! The pmx language server (`pmx lsp`): the Language Server Protocol over
//! stdio, a thin layer over the driver's salsa queries.
//!
//! What it offers: diagnostics as `pmx check` reports them (syntax, names,
//! types, accelerate), published after every edit for every file of every
//! open program; hover (types; on `accelerate`, what `pmx explain` says);
//! go to definition (across includes, into `std/`); references; document
//! symbols; completion (names in scope, built-ins, keywords, with types);
//! semantic tokens from the tree-sitter grammar's `highlights.scm`.
//!
//! Structure: `transport` reads stdin and keeps malformed messages from
//! stopping the protocol library; `server` turns protocol messages into
//! commands for the state thread (`state`), which owns the one
//! [`pmx_driver::Database`]. Edits set salsa inputs (incremental text sync,
//! UTF-16 positions, `convert`); diagnostics (on a checker thread) and
//! requests (a thread each) run with database snapshots, which an edit
//! cancels. `ide` answers requests from the typed AST (`walk` finds what
//! is under the cursor); `tokens` runs the highlight query on the syntax
//! tree the driver keeps for each document (`pmx_driver::current_parse`).
//!
//! Invariants: no input or sequence of messages makes the server exit; a
//! panic in a handler is caught, logged to the client (`window/logMessage`)
//! and answered with an internal error. The compiler recurses as deep as a
//! program nests, so every thread that runs queries or drops the database
//! has the compiler's large stack.

mod convert;
pub mod explain;
mod ide;
mod server;
mod state;
mod tokens;
mod transport;
mod walk;

use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use tower_lsp_server::{LspService, Server};

/// Serves the protocol on stdin and stdout until the client sends `exit`
/// (or closes stdin). Exit code 0 when `shutdown` came first, else 1, as
/// the protocol asks.
pub fn run() -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the language server: {e}");
            return ExitCode::from(1);
        }
    };
    let shutdown = Arc::new(AtomicBool::new(false));
    let flag = shutdown.clone();
    runtime.block_on(async move {
        let (service, socket) = LspService::build(move |client| server::Backend::new(client, flag))
            .custom_method(transport::INVALID_REQUEST, server::Backend::invalid_request)
            .custom_method(transport::INVALID_MESSAGE, server::Backend::invalid_message)
            .custom_method(transport::UNKNOWN_REQUEST, server::Backend::unknown_request)
            .finish();
        Server::new(transport::stdin(), tokio::io::stdout(), socket)
            // Requests wait for worker threads, never for each other; a
            // high limit keeps a slow one from holding up later messages.
            .concurrency_level(64)
            .serve(service)
            .await;
    });
    runtime.shutdown_background();
    if shutdown.load(Ordering::SeqCst) {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
