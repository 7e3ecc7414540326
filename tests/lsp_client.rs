//! A small Language Server Protocol client for tests and the benchmark:
//! starts `pmx lsp`, frames JSON-RPC messages with `Content-Length` over
//! pipes, and reads with timeouts so that a hang fails instead of blocking.
//! Included with `#[path]` by `tests/lsp*.rs` and `benches/lsp.rs`.
#![allow(dead_code)]

use serde_json::{json, Value};
use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

pub const TIMEOUT: Duration = Duration::from_secs(30);

pub struct Client {
    child: Child,
    stdin: Option<ChildStdin>,
    incoming: Receiver<Value>,
    /// Notifications (and server requests) read while waiting for
    /// something else.
    pending: VecDeque<Value>,
    next_id: i64,
}

/// Reads one framed message; None at the end of the stream.
fn read_message(r: &mut impl BufRead) -> Option<Value> {
    let mut len = None;
    loop {
        let mut line = String::new();
        if r.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(v) = line.strip_prefix("Content-Length:") {
            len = v.trim().parse::<usize>().ok();
        }
    }
    let mut buf = vec![0; len?];
    std::io::Read::read_exact(r, &mut buf).ok()?;
    serde_json::from_slice(&buf).ok()
}

pub fn file_uri(path: &Path) -> String {
    let path = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    let mut s = String::from("file://");
    for b in path.to_string_lossy().bytes() {
        match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'/' | b'-' | b'_' | b'.' | b'~' => s.push(b as char),
            _ => s.push_str(&format!("%{b:02X}")),
        }
    }
    s
}

impl Client {
    /// Starts `pmx lsp` and initialises it.
    pub fn start() -> Client {
        let mut child = Command::new(env!("CARGO_BIN_EXE_pmx"))
            .arg("lsp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(if std::env::var_os("PMX_LSP_TRACE").is_some() { Stdio::inherit() } else { Stdio::null() })
            .spawn()
            .expect("cannot start pmx lsp");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            while let Some(msg) = read_message(&mut r) {
                if tx.send(msg).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        let mut c = Client { child, stdin, incoming: rx, pending: VecDeque::new(), next_id: 1 };
        let init = c.request(
            "initialize",
            json!({ "processId": null, "rootUri": null, "capabilities": {
                "textDocument": { "hover": { "contentFormat": ["markdown", "plaintext"] } },
                "general": { "positionEncodings": ["utf-16"] }
            }}),
        );
        assert!(init["result"]["capabilities"]["hoverProvider"].as_bool().unwrap_or(false), "{init}");
        c.notify("initialized", json!({}));
        c
    }

    pub fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin closed");
        stdin.write_all(bytes).expect("server closed its input");
        stdin.flush().expect("flush");
    }

    pub fn send(&mut self, msg: &Value) {
        let body = serde_json::to_vec(msg).unwrap();
        let mut framed = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
        framed.extend(body);
        self.send_raw(&framed);
    }

    pub fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({ "jsonrpc": "2.0", "method": method, "params": params }));
    }

    /// Sends a request without waiting; returns its id.
    pub fn request_async(&mut self, method: &str, params: Value) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        id
    }

    /// The next message from the server, answering its requests.
    fn recv(&mut self, deadline: Instant) -> Value {
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.incoming.recv_timeout(left) {
                Ok(msg) => {
                    if msg.get("method").is_some() && msg.get("id").is_some() {
                        let id = msg["id"].clone();
                        self.send(&json!({ "jsonrpc": "2.0", "id": id, "result": null }));
                        continue;
                    }
                    return msg;
                }
                Err(RecvTimeoutError::Timeout) => panic!("no message from the server in time"),
                Err(RecvTimeoutError::Disconnected) => panic!("the server closed its output"),
            }
        }
    }

    /// Waits for the response to request `id`.
    pub fn response(&mut self, id: i64) -> Value {
        if let Some(i) = self.pending.iter().position(|m| m.get("id") == Some(&json!(id)) && m.get("method").is_none())
        {
            return self.pending.remove(i).unwrap();
        }
        let deadline = Instant::now() + TIMEOUT;
        loop {
            let msg = self.recv(deadline);
            if msg.get("id") == Some(&json!(id)) && msg.get("method").is_none() {
                return msg;
            }
            self.pending.push_back(msg);
        }
    }

    /// Sends a request and waits for its response (the whole message).
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.request_async(method, params);
        self.response(id)
    }

    /// A notification matching `pred`, from those already read or next.
    pub fn wait_notification(&mut self, method: &str, pred: impl Fn(&Value) -> bool) -> Value {
        if let Some(i) = self.pending.iter().position(|m| m["method"] == method && pred(&m["params"])) {
            return self.pending.remove(i).unwrap()["params"].clone();
        }
        let deadline = Instant::now() + TIMEOUT;
        loop {
            let msg = self.recv(deadline);
            if msg["method"] == method && pred(&msg["params"]) {
                return msg["params"].clone();
            }
            self.pending.push_back(msg);
        }
    }

    /// The diagnostics published for a document at a version.
    pub fn diagnostics(&mut self, uri: &str, version: i64) -> Vec<Value> {
        let p = self.wait_notification("textDocument/publishDiagnostics", |p| {
            p["uri"] == uri && p["version"] == json!(version)
        });
        p["diagnostics"].as_array().cloned().unwrap_or_default()
    }

    /// The latest diagnostics published for a URI so far (after waiting for
    /// the given document version), dropping older ones.
    pub fn latest_diagnostics(&mut self, uri: &str) -> Option<Vec<Value>> {
        let mut latest = None;
        self.pending.retain(|m| {
            if m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri {
                latest = Some(m["params"]["diagnostics"].as_array().cloned().unwrap_or_default());
                false
            } else {
                true
            }
        });
        latest
    }

    /// Drops every message read so far that nobody waited for.
    pub fn drain(&mut self) {
        while let Ok(m) = self.incoming.try_recv() {
            self.pending.push_back(m);
        }
    }

    pub fn clear_pending(&mut self) {
        self.pending.clear();
    }

    pub fn pending(&self) -> &VecDeque<Value> {
        &self.pending
    }

    pub fn open(&mut self, uri: &str, text: &str, version: i64) {
        self.notify(
            "textDocument/didOpen",
            json!({ "textDocument": { "uri": uri, "languageId": "mexpr", "version": version, "text": text } }),
        );
    }

    pub fn change_full(&mut self, uri: &str, text: &str, version: i64) {
        self.notify(
            "textDocument/didChange",
            json!({ "textDocument": { "uri": uri, "version": version }, "contentChanges": [{ "text": text }] }),
        );
    }

    /// Replaces the range from (line, character) to (line, character),
    /// UTF-16 columns.
    pub fn change_range(&mut self, uri: &str, version: i64, start: (u32, u32), end: (u32, u32), text: &str) {
        self.notify(
            "textDocument/didChange",
            json!({ "textDocument": { "uri": uri, "version": version }, "contentChanges": [{
                "range": { "start": { "line": start.0, "character": start.1 }, "end": { "line": end.0, "character": end.1 } },
                "text": text
            }] }),
        );
    }

    pub fn at(uri: &str, line: u32, character: u32) -> Value {
        json!({ "textDocument": { "uri": uri }, "position": { "line": line, "character": character } })
    }

    /// `shutdown` then `exit`; the exit status of the server.
    pub fn shutdown(mut self) -> ExitStatus {
        let r = self.request("shutdown", Value::Null);
        assert!(r.get("error").is_none(), "{r}");
        self.notify("exit", Value::Null);
        self.stdin = None;
        let deadline = Instant::now() + TIMEOUT;
        loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                return status;
            }
            assert!(Instant::now() < deadline, "the server did not exit");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Whether the server process is still running.
    pub fn alive(&mut self) -> bool {
        self.child.try_wait().map(|s| s.is_none()).unwrap_or(false)
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// A position (line, UTF-16 column) of the `n`-th occurrence of `needle`.
pub fn pos_of(text: &str, needle: &str, n: usize) -> (u32, u32) {
    let offset = text.match_indices(needle).nth(n).unwrap_or_else(|| panic!("`{needle}` not found")).0;
    let before = &text[..offset];
    let line = before.matches('\n').count() as u32;
    let line_start = before.rfind('\n').map(|i| i + 1).unwrap_or(0);
    let col = text[line_start..offset].chars().map(char::len_utf16).sum::<usize>() as u32;
    (line, col)
}

pub fn range_of(text: &str, needle: &str, n: usize) -> Value {
    let (l, c) = pos_of(text, needle, n);
    let len = needle.chars().map(char::len_utf16).sum::<usize>() as u32;
    assert!(!needle.contains('\n'));
    json!({ "start": { "line": l, "character": c }, "end": { "line": l, "character": c + len } })
}
