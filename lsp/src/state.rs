//! The thread that owns the database.
//!
//! Every notification and request becomes a [`Command`] on one channel, so
//! edits apply in the order they arrived. Edits set salsa inputs on the
//! owned database; work (diagnostics, requests) runs on worker threads,
//! each with a snapshot (a clone of the database). Setting an input cancels
//! the queries running on snapshots: they unwind with `salsa::Cancelled`,
//! and their results are dropped. A worker checks for cancellation again
//! just before it hands its result over while it still holds its snapshot,
//! so a stale result can never arrive after the result of a later edit.

use crate::convert::{apply_change, diagnostic, uri_to_path, Doc, Docs, Texts};
use crate::ide::Snapshot;
use pmx_driver::{program_diagnostics, Database, Db};
use salsa::Database as _;
use std::collections::{BTreeMap, HashMap};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, Sender};
use std::sync::Arc;
use tokio::sync::mpsc::UnboundedSender;
use tower_lsp_server::ls_types as lsp;
use tower_lsp_server::ls_types::Uri;

/// A request's work, run on a worker thread with a snapshot.
pub type Job = Box<dyn FnOnce(&Snapshot) + Send>;

pub enum Command {
    Open {
        uri: Uri,
        text: String,
        version: i32,
    },
    Change {
        uri: Uri,
        version: i32,
        changes: Vec<lsp::TextDocumentContentChangeEvent>,
    },
    Close {
        uri: Uri,
    },
    /// Files changed on disk (watched by the client).
    Watched(Vec<lsp::FileEvent>),
    Request(Job),
    /// A check finished: a moment to free what the last edit replaced.
    Collect,
    /// The server is stopping.
    Stop,
}

/// What the server sends to the client, in order.
pub enum Outgoing {
    /// The diagnostics of every file of every open program (files without
    /// any are absent, except open documents), with document versions.
    Diagnostics(Vec<(Uri, Vec<lsp::Diagnostic>, Option<i32>)>),
    Log(lsp::MessageType, String),
}

/// Why a job gave no result.
pub enum Failure {
    /// An edit made its snapshot stale.
    Cancelled,
    /// A bug: the panic's message.
    Panic(String),
}

/// Runs `f`, turning a panic into a [`Failure`].
pub fn guard<R>(f: impl FnOnce() -> R) -> Result<R, Failure> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|payload| {
        if payload.is::<salsa::Cancelled>() {
            Failure::Cancelled
        } else if let Some(s) = payload.downcast_ref::<&str>() {
            Failure::Panic(s.to_string())
        } else if let Some(s) = payload.downcast_ref::<String>() {
            Failure::Panic(s.clone())
        } else {
            Failure::Panic("unknown panic".to_string())
        }
    })
}

/// Whether to print timings to stderr (`PMX_LSP_TRACE=1`).
pub fn trace() -> bool {
    static TRACE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *TRACE.get_or_init(|| std::env::var_os("PMX_LSP_TRACE").is_some())
}

/// Starts a thread with the compiler's stack (deep programs recurse deeply).
fn spawn(name: &str, f: impl FnOnce() + Send + 'static) -> bool {
    std::thread::Builder::new().name(name.to_string()).stack_size(pmx_driver::stack_size()).spawn(f).is_ok()
}

/// Starts the state thread; it runs until [`Command::Stop`] (`to_self` is
/// a sender for the workers it starts).
pub fn start(commands: Receiver<Command>, to_self: Sender<Command>, out: UnboundedSender<Outgoing>) {
    let log = out.clone();
    let started = spawn("pmx-lsp-state", move || {
        let db = Database::default();
        db.enable_incremental_parsing();
        let mut state = State {
            db,
            docs: Arc::new(Docs::default()),
            texts: HashMap::new(),
            out,
            to_self,
            workers: Arc::new(AtomicUsize::new(0)),
            checker: None,
        };
        state.run(commands);
        // The database (every tree in it) is dropped on this large stack.
        drop(state);
    });
    if !started {
        let _ = log.send(Outgoing::Log(lsp::MessageType::ERROR, "cannot start the pmx state thread".into()));
    }
}

struct State {
    db: Database,
    docs: Arc<Docs>,
    /// The text of each open document, as edited.
    texts: HashMap<Uri, String>,
    out: UnboundedSender<Outgoing>,
    /// For workers to report back.
    to_self: Sender<Command>,
    /// Snapshots held by workers (running or waiting).
    workers: Arc<AtomicUsize>,
    /// Where checks go (the checker thread, started on the first edit).
    checker: Option<Sender<Snapshot>>,
}

/// Counts a running worker until it finishes (or unwinds).
struct Running(Option<Arc<AtomicUsize>>);

impl Running {
    /// Whether it was the last one running.
    fn finish(mut self) -> bool {
        self.0.take().is_some_and(|n| n.fetch_sub(1, Ordering::SeqCst) == 1)
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(n) = self.0.take() {
            n.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

impl State {
    fn run(&mut self, commands: Receiver<Command>) {
        while let Ok(first) = commands.recv() {
            match first {
                Command::Collect => {
                    self.collect();
                    continue;
                }
                Command::Stop => return,
                _ => {}
            }
            // Apply every edit already queued before starting work, so a
            // burst of keystrokes is checked once.
            let mut edited = false;
            let mut next = Some(first);
            while let Some(cmd) = next {
                match cmd {
                    Command::Request(job) => {
                        if edited {
                            self.check();
                            edited = false;
                        }
                        self.request(job);
                    }
                    Command::Collect => {}
                    Command::Stop => return,
                    cmd => {
                        let start = std::time::Instant::now();
                        edited = true;
                        if let Err(Failure::Panic(msg)) = guard(|| self.apply(cmd)) {
                            self.log(lsp::MessageType::ERROR, format!("internal error applying an edit: {msg}"));
                        }
                        if trace() {
                            eprintln!("pmx-lsp: edit applied in {:.1} ms", start.elapsed().as_secs_f64() * 1e3);
                        }
                    }
                }
                next = commands.try_recv().ok();
            }
            if edited {
                self.check();
            }
        }
    }

    fn log(&self, typ: lsp::MessageType, msg: String) {
        let _ = self.out.send(Outgoing::Log(typ, msg));
    }

    fn snapshot(&self) -> Snapshot {
        Snapshot { db: self.db.clone(), docs: self.docs.clone() }
    }

    fn set_text(&mut self, path: &std::path::Path, text: String) {
        self.db.set_file_text(path, text);
    }

    fn apply(&mut self, cmd: Command) {
        match cmd {
            Command::Open { uri, text, version } => {
                let path = uri_to_path(&uri);
                self.set_text(&path, text.clone());
                self.texts.insert(uri.clone(), text);
                let docs = Arc::make_mut(&mut self.docs);
                docs.by_path.insert(path.clone(), uri.clone());
                docs.by_uri.insert(uri, Doc { path, version });
            }
            Command::Change { uri, version, changes } => {
                let Some(text) = self.texts.get_mut(&uri) else {
                    self.log(
                        lsp::MessageType::WARNING,
                        format!("change to a document that is not open: {}", uri.as_str()),
                    );
                    return;
                };
                for c in &changes {
                    apply_change(text, c);
                }
                let text = text.clone();
                let docs = Arc::make_mut(&mut self.docs);
                let Some(doc) = docs.by_uri.get_mut(&uri) else { return };
                doc.version = version;
                let path = doc.path.clone();
                self.set_text(&path, text);
            }
            Command::Close { uri } => {
                self.texts.remove(&uri);
                let docs = Arc::make_mut(&mut self.docs);
                let Some(doc) = docs.by_uri.remove(&uri) else { return };
                docs.by_path.remove(&doc.path);
                // Files that include it see it as it is on disk again.
                if let Ok(text) = std::fs::read_to_string(&doc.path) {
                    self.set_text(&doc.path, text);
                }
            }
            Command::Watched(events) => {
                let known: Vec<PathBuf> = self.db.files().iter().map(|f| f.path(&self.db).clone()).collect();
                let mut appeared = false;
                for e in events {
                    if self.texts.contains_key(&e.uri) {
                        continue; // the editor's text wins
                    }
                    let path = uri_to_path(&e.uri);
                    if !known.contains(&path) {
                        // A new file: an include that was not found may
                        // name it.
                        appeared |= e.typ != lsp::FileChangeType::DELETED;
                        continue;
                    }
                    let text = std::fs::read_to_string(&path).unwrap_or_default();
                    self.set_text(&path, text);
                }
                if appeared {
                    self.db.files_appeared();
                }
            }
            Command::Request(_) | Command::Collect | Command::Stop => {}
        }
    }

    /// Drops the query results that the last edit replaced. Salsa drops
    /// them when the next revision starts, that is, in the next edit's
    /// `set_file_text`, where they would delay the next diagnostics; done
    /// now, when no worker holds a snapshot (it would wait for them, and
    /// cancel them), that is free. The large ones (a file's trees) are
    /// freed on their own thread (`pmx_driver`'s `FreedApart`), so that an
    /// edit arriving meanwhile waits for little (9 ms to 0.1 ms for a
    /// 3,000-line MLang file).
    fn collect(&mut self) {
        if self.workers.load(Ordering::SeqCst) == 0 {
            let start = std::time::Instant::now();
            self.db.trigger_lru_eviction();
            if trace() {
                eprintln!("pmx-lsp: freed replaced results in {:.1} ms", start.elapsed().as_secs_f64() * 1e3);
            }
        }
    }

    /// Starts a worker with a snapshot. The last worker to finish (after
    /// dropping its snapshot) asks for [`Command::Collect`].
    fn worker(&self, name: &str, f: impl FnOnce(Snapshot) + Send + 'static) {
        let snap = self.snapshot();
        self.workers.fetch_add(1, Ordering::SeqCst);
        let running = Running(Some(self.workers.clone()));
        let to_self = self.to_self.clone();
        if !spawn(name, move || {
            f(snap);
            if running.finish() {
                let _ = to_self.send(Command::Collect);
            }
        }) {
            self.log(lsp::MessageType::ERROR, "cannot start a worker thread".into());
        }
    }

    /// Starts computing the diagnostics of every open program, on the
    /// checker thread. It is one long-lived thread (checks follow each
    /// other, as each edit cancels the one before): its allocator stays
    /// warm, which makes a check of a large file about 10% faster than on
    /// a fresh thread.
    fn check(&mut self) {
        self.workers.fetch_add(1, Ordering::SeqCst);
        let snap = self.snapshot();
        let snap = match &self.checker {
            Some(tx) => match tx.send(snap) {
                Ok(()) => return,
                Err(e) => e.0,
            },
            None => snap,
        };
        // Not started yet, or gone (it never should be): start it.
        let (tx, rx) = std::sync::mpsc::channel::<Snapshot>();
        let (out, workers, to_self) = (self.out.clone(), self.workers.clone(), self.to_self.clone());
        if spawn("pmx-lsp-check", move || checker(rx, out, workers, to_self)) {
            let _ = tx.send(snap);
            self.checker = Some(tx);
        } else {
            self.workers.fetch_sub(1, Ordering::SeqCst);
            self.log(lsp::MessageType::ERROR, "cannot start the checker thread".into());
        }
    }

    fn request(&self, job: Job) {
        self.worker("pmx-lsp-request", move |snap| job(&snap));
    }
}

/// The checker thread: computes the diagnostics of each snapshot it
/// receives (only the newest of those waiting: the others are stale).
fn checker(
    rx: Receiver<Snapshot>,
    out: UnboundedSender<Outgoing>,
    workers: Arc<AtomicUsize>,
    to_self: Sender<Command>,
) {
    let done = |n: usize| {
        // The last snapshot dropped: time to free what edits replaced.
        if workers.fetch_sub(n, Ordering::SeqCst) == n {
            let _ = to_self.send(Command::Collect);
        }
    };
    while let Ok(mut snap) = rx.recv() {
        while let Ok(newer) = rx.try_recv() {
            drop(std::mem::replace(&mut snap, newer));
            done(1);
        }
        let start = std::time::Instant::now();
        let result = guard(|| diagnostics(&snap));
        if trace() {
            eprintln!("pmx-lsp: diagnostics computed in {:.1} ms", start.elapsed().as_secs_f64() * 1e3);
        }
        match result {
            Ok(set) => {
                // Still current? Then hand over while holding the snapshot:
                // the next edit waits until it is dropped, so a stale result
                // never follows a newer one.
                if guard(|| snap.db.unwind_if_revision_cancelled()).is_ok() {
                    let _ = out.send(Outgoing::Diagnostics(set));
                }
            }
            Err(Failure::Cancelled) => {}
            Err(Failure::Panic(msg)) => {
                let _ = out.send(Outgoing::Log(lsp::MessageType::ERROR, format!("internal error: {msg}")));
            }
        }
        drop(snap);
        done(1);
    }
}

/// The diagnostics of every file of every open program, as `pmx check`
/// reports them for each program, grouped by file.
pub fn diagnostics(s: &Snapshot) -> Vec<(Uri, Vec<lsp::Diagnostic>, Option<i32>)> {
    let db = &s.db;
    let mut by_file: BTreeMap<u32, Vec<pmx_diagnostics::Diagnostic>> = BTreeMap::new();
    // An open document is always published (with its version), even
    // without diagnostics, whether it is a program's main file or one that
    // an open program includes.
    for path in s.docs.by_uri.values().map(|d| &d.path) {
        if let Ok(file) = db.load(path) {
            by_file.entry(file.id(db).0).or_default();
        }
    }
    let roots = s.roots();
    for root in &roots {
        for d in program_diagnostics(db, *root) {
            let file = if d.primary.span.is_builtin() { root.id(db) } else { d.primary.span.file };
            by_file.entry(file.0).or_default().push(d.clone());
        }
    }
    let mut texts = Texts::new(db);
    let mut out = Vec::new();
    for (id, mut diags) in by_file {
        let Some(file) = db.file(pmx_diagnostics::FileId(id)) else { continue };
        let path = file.path(db);
        let version = s.docs.by_path.get(path).and_then(|u| s.docs.by_uri.get(u)).map(|d| d.version);
        if diags.is_empty() && version.is_none() {
            continue;
        }
        let Some(uri) = s.docs.uri_of_path(path) else { continue };
        pmx_diagnostics::sort_and_dedup(&mut diags);
        let converted = diags.iter().map(|d| diagnostic(&mut texts, &s.docs, file, d)).collect();
        out.push((uri, converted, version));
    }
    out
}
