//! The server's input, made safe. The protocol library stops reading for
//! good at the first message it cannot decode (a bad header, a body that is
//! not JSON-RPC), which would end the server. So stdin is read here, on a
//! thread: well-formed messages pass through unchanged; a malformed one is
//! replaced by a `pmx/invalidRequest` request with the same id (answered
//! with an error) or, without a usable id, a `pmx/invalidMessage`
//! notification (logged to the client).

use serde_json::{json, Value};
use std::io::{BufRead, Read};
use tokio::io::{AsyncWriteExt, DuplexStream};
use tower_lsp_server::jsonrpc::{Request, Response};

/// The largest message accepted (a file of hundreds of megabytes).
const MAX_BODY: usize = 512 << 20;
const MAX_HEADER_LINE: u64 = 64 << 10;

pub const INVALID_REQUEST: &str = "pmx/invalidRequest";
pub const INVALID_MESSAGE: &str = "pmx/invalidMessage";
/// What a request whose method starts with `$/` becomes: the protocol
/// library drops such messages, but the protocol wants a request (one
/// with an id) answered, with MethodNotFound when it is not implemented.
pub const UNKNOWN_REQUEST: &str = "pmx/unknownRequest";

/// The requests the protocol library knows (they need an id).
const REQUESTS: &[&str] = &[
    "initialize",
    "shutdown",
    "textDocument/willSaveWaitUntil",
    "textDocument/declaration",
    "textDocument/definition",
    "textDocument/typeDefinition",
    "textDocument/implementation",
    "textDocument/references",
    "textDocument/prepareCallHierarchy",
    "callHierarchy/incomingCalls",
    "callHierarchy/outgoingCalls",
    "textDocument/prepareTypeHierarchy",
    "typeHierarchy/supertypes",
    "typeHierarchy/subtypes",
    "textDocument/documentHighlight",
    "textDocument/documentLink",
    "documentLink/resolve",
    "textDocument/hover",
    "textDocument/codeLens",
    "codeLens/resolve",
    "textDocument/foldingRange",
    "textDocument/selectionRange",
    "textDocument/documentSymbol",
    "textDocument/semanticTokens/full",
    "textDocument/semanticTokens/full/delta",
    "textDocument/semanticTokens/range",
    "textDocument/inlineValue",
    "textDocument/inlayHint",
    "inlayHint/resolve",
    "textDocument/moniker",
    "textDocument/completion",
    "completionItem/resolve",
    "textDocument/diagnostic",
    "workspace/diagnostic",
    "textDocument/signatureHelp",
    "textDocument/codeAction",
    "codeAction/resolve",
    "textDocument/documentColor",
    "textDocument/colorPresentation",
    "textDocument/formatting",
    "textDocument/rangeFormatting",
    "textDocument/onTypeFormatting",
    "textDocument/rename",
    "textDocument/prepareRename",
    "textDocument/linkedEditingRange",
    "workspace/symbol",
    "workspaceSymbol/resolve",
    "workspace/willCreateFiles",
    "workspace/willRenameFiles",
    "workspace/willDeleteFiles",
    "workspace/executeCommand",
];

enum Frame {
    Body(Vec<u8>),
    Bad(String),
}

/// The next frame; None at the end of the input.
fn read_frame(r: &mut impl BufRead) -> Option<Frame> {
    let mut length: Option<Result<usize, String>> = None;
    let mut seen_header = false;
    loop {
        let mut line = Vec::new();
        let n = r.by_ref().take(MAX_HEADER_LINE).read_until(b'\n', &mut line).ok()?;
        if n == 0 {
            return None;
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches(['\r', '\n']);
        if text.is_empty() {
            if seen_header {
                break;
            }
            continue;
        }
        seen_header = true;
        if let Some((name, value)) = text.split_once(':') {
            if name.trim().eq_ignore_ascii_case("content-length") {
                length = Some(value.trim().parse::<usize>().map_err(|e| format!("bad Content-Length: {e}")));
            }
        }
    }
    let len = match length {
        None => return Some(Frame::Bad("a message without a Content-Length header".into())),
        Some(Err(e)) => return Some(Frame::Bad(e)),
        Some(Ok(n)) if n > MAX_BODY => return Some(Frame::Bad(format!("a message of {n} bytes is too large"))),
        Some(Ok(n)) => n,
    };
    let mut body = vec![0; len];
    r.read_exact(&mut body).ok()?;
    Some(Frame::Body(body))
}

fn framed(body: &[u8]) -> Vec<u8> {
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body);
    out
}

/// What the server receives for one frame.
fn sanitize(frame: Frame) -> Vec<u8> {
    let error = match frame {
        Frame::Body(body) => {
            if let Ok(v) = serde_json::from_slice::<Value>(&body) {
                // A request method called as a notification: the library
                // asserts that requests have ids (a panic in debug builds).
                let method = v.get("method").and_then(Value::as_str).unwrap_or_default();
                if v.get("id").is_none() && (REQUESTS.contains(&method) || method == INVALID_REQUEST) {
                    let error = format!("the request `{method}` was sent as a notification (without an id)");
                    let msg = json!({ "jsonrpc": "2.0", "method": INVALID_MESSAGE, "params": { "error": error } });
                    return framed(msg.to_string().as_bytes());
                }
                if let (Some(id), true) = (v.get("id"), method.starts_with("$/")) {
                    let msg = json!({ "jsonrpc": "2.0", "id": id, "method": UNKNOWN_REQUEST, "params": { "method": method } });
                    return framed(msg.to_string().as_bytes());
                }
            }
            if serde_json::from_slice::<Request>(&body).is_ok() || serde_json::from_slice::<Response>(&body).is_ok() {
                return framed(&body);
            }
            // Keep the id of a request so that its sender gets an answer.
            let id = serde_json::from_slice::<Value>(&body)
                .ok()
                .and_then(|v| v.get("id").cloned())
                .filter(|id| id.is_number() || id.is_string());
            let error = format!("invalid JSON-RPC message: {}", String::from_utf8_lossy(&body[..body.len().min(200)]));
            if let Some(id) = id {
                let msg =
                    json!({ "jsonrpc": "2.0", "id": id, "method": INVALID_REQUEST, "params": { "error": error } });
                return framed(msg.to_string().as_bytes());
            }
            error
        }
        Frame::Bad(error) => error,
    };
    let msg = json!({ "jsonrpc": "2.0", "method": INVALID_MESSAGE, "params": { "error": error } });
    framed(msg.to_string().as_bytes())
}

/// The server's input: stdin, read on its own thread (a blocked read of a
/// thread does not keep the process from exiting), sanitised.
pub fn stdin() -> DuplexStream {
    let (server_side, mut ours) = tokio::io::duplex(1 << 16);
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Vec<u8>>();
    let reader = std::thread::Builder::new().name("pmx-lsp-stdin".into()).spawn(move || {
        let mut input = std::io::stdin().lock();
        while let Some(frame) = read_frame(&mut input) {
            if tx.send(sanitize(frame)).is_err() {
                break;
            }
        }
    });
    if reader.is_err() {
        eprintln!("error: cannot start the thread that reads stdin");
    }
    tokio::spawn(async move {
        while let Some(bytes) = rx.recv().await {
            if ours.write_all(&bytes).await.is_err() {
                break;
            }
        }
        // Dropping our side ends the server's input.
    });
    server_side
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(input: &str) -> Vec<String> {
        let mut r = std::io::Cursor::new(input.as_bytes().to_vec());
        let mut out = Vec::new();
        while let Some(f) = read_frame(&mut r) {
            out.push(String::from_utf8(sanitize(f)).unwrap());
        }
        out
    }

    #[test]
    fn good_messages_pass_and_bad_ones_are_replaced() {
        let ok = r#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#;
        let bad = r#"{"id":7,"method":"x","oops":1}"#;
        let hover = r#"{"jsonrpc":"2.0","method":"textDocument/hover","params":{}}"#;
        let input = format!(
            "Content-Length: {}\r\n\r\n{ok}garbage\r\n\r\nContent-Length: 5\r\n\r\n[1,2]Content-Length: {}\r\n\r\n{bad}\
             content-length:{}\n\n{hover}",
            ok.len(),
            bad.len(),
            hover.len()
        );
        let out = frames(&input);
        assert_eq!(out.len(), 5, "{out:?}");
        assert!(out[4].contains(INVALID_MESSAGE) && out[4].contains("without an id"), "{out:?}");
        assert_eq!(out[0], format!("Content-Length: {}\r\n\r\n{ok}", ok.len()));
        assert!(out[1].contains(INVALID_MESSAGE) && out[1].contains("without a Content-Length"));
        assert!(out[2].contains(INVALID_MESSAGE) && out[2].contains("[1,2]"));
        assert!(out[3].contains(INVALID_REQUEST) && out[3].contains("\"id\":7"));
    }

    #[test]
    fn dollar_requests_get_an_answer_and_dollar_notifications_pass() {
        let request = r#"{"jsonrpc":"2.0","id":3,"method":"$/somethingNew","params":{}}"#;
        let notification = r#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":1}}"#;
        let input = format!(
            "Content-Length: {}\r\n\r\n{request}Content-Length: {}\r\n\r\n{notification}",
            request.len(),
            notification.len()
        );
        let out = frames(&input);
        assert!(out[0].contains(UNKNOWN_REQUEST) && out[0].contains("\"id\":3") && out[0].contains("$/somethingNew"));
        assert!(out[1].ends_with(notification), "{out:?}");
    }

    #[test]
    fn a_truncated_or_huge_message_ends_or_is_refused() {
        assert!(frames("Content-Length: 10\r\n\r\n{}").is_empty());
        let out = frames("Content-Length: 99999999999999\r\n\r\n");
        assert!(out[0].contains("too large"), "{out:?}");
        let out = frames("Content-Length: x\r\n\r\n");
        assert!(out[0].contains("bad Content-Length"), "{out:?}");
    }
}
