//! Random edits to a real program through `pmx lsp`: the server stays up,
//! and after each burst of edits its diagnostics are exactly those of
//! `pmx check` on the same text.

#[path = "lsp_client.rs"]
mod lsp_client;

use lsp_client::{file_uri, Client};
use serde_json::{json, Value};
use std::path::Path;
use std::process::Command;

/// xorshift64*: deterministic, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

const PIECES: &[&str] = &[
    "a",
    "x",
    "1",
    "2.",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ".",
    ",",
    ";",
    ":",
    "=",
    "->",
    " ",
    "\n",
    "\"",
    "'",
    "é",
    "𝄞",
    "let ",
    " in ",
    "lam x. ",
    "accelerate ",
    "map ",
    "if ",
    " then ",
    " else ",
    "mexpr\n",
    "--",
    "/-",
    "-/",
    "addi ",
    "Int",
    "con ",
    "type ",
    "match ",
    " with ",
    "utest ",
    "include \"",
    "_",
    "#",
];

/// (line, UTF-16 column) of a byte offset, computed independently of the
/// server.
fn position(text: &str, offset: usize) -> (u32, u32) {
    let before = &text[..offset];
    let line = before.matches('\n').count() as u32;
    let start = before.rfind('\n').map(|i| i + 1).unwrap_or(0);
    (line, before[start..].chars().map(char::len_utf16).sum::<usize>() as u32)
}

fn range(text: &str, start: usize, end: usize) -> Value {
    let (a, b) = (position(text, start), position(text, end));
    json!({ "start": { "line": a.0, "character": a.1 }, "end": { "line": b.0, "character": b.1 } })
}

fn char_boundary(text: &str, mut i: usize) -> usize {
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// What `pmx check` reports for `name` in `dir`, as the server should
/// publish it: (code, range, message with label and notes, related).
fn check(dir: &Path, name: &str, text: &str) -> Vec<Value> {
    let out = Command::new(env!("CARGO_BIN_EXE_pmx"))
        .args(["check", "--format", "json", name])
        .current_dir(dir)
        .output()
        .expect("pmx check");
    let all: Value = serde_json::from_slice(&out.stdout).expect("JSON diagnostics");
    let mut expected = Vec::new();
    for d in all.as_array().unwrap() {
        assert_eq!(d["file"], name, "a diagnostic in another file: {d}");
        let offset = |p: &Value| p["offset"].as_u64().unwrap() as usize;
        let mut message = d["message"].as_str().unwrap().to_string();
        let mut related = Vec::new();
        for l in d["labels"].as_array().unwrap() {
            let m = l["message"].as_str().unwrap();
            if l["primary"] == true {
                if !m.is_empty() {
                    message.push('\n');
                    message.push_str(m);
                }
            } else {
                let m = if m.is_empty() { "related" } else { m };
                related.push(json!([range(text, offset(&l["start"]), offset(&l["end"])), m]));
            }
        }
        for n in d["notes"].as_array().unwrap() {
            message.push_str("\nnote: ");
            message.push_str(n.as_str().unwrap());
        }
        expected.push(json!([d["code"], range(text, offset(&d["start"]), offset(&d["end"])), message, related]));
    }
    expected.sort_by_key(|v| v.to_string());
    expected
}

fn published(diags: &[Value]) -> Vec<Value> {
    let mut out: Vec<Value> = diags
        .iter()
        .map(|d| {
            let related: Vec<Value> = d["relatedInformation"]
                .as_array()
                .map(|r| r.iter().map(|i| json!([i["location"]["range"], i["message"]])).collect())
                .unwrap_or_default();
            json!([d["code"], d["range"], d["message"], related])
        })
        .collect();
    out.sort_by_key(|v| v.to_string());
    out
}

#[test]
fn random_edits_keep_diagnostics_equal_to_pmx_check() {
    let seed = std::env::var("PMX_LSP_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0x5eed_1234_u64);
    let mut rng = Rng(seed);
    let original = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/axpy.mc")).unwrap();
    let dir = std::env::temp_dir().join(format!("pmx-lsp-random-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let name = "random.mc";
    let path = dir.join(name);
    std::fs::write(&path, &original).unwrap();
    let uri = file_uri(&path);

    let mut c = Client::start();
    let mut text = original.clone();
    let mut version = 1;
    c.open(&uri, &text, version);
    let bursts = 50;
    let per_burst = 4;
    for burst in 0..bursts {
        if burst % 12 == 11 {
            // Back to the real program now and then, so that later edits
            // meet well-typed code (and accelerate diagnostics) again.
            text = original.clone();
            version += 1;
            c.change_full(&uri, &text, version);
        }
        for _ in 0..per_burst {
            let (start, end, insert) = if rng.below(10) < 6 || text.is_empty() {
                let at = char_boundary(&text, rng.below(text.len() + 1));
                (at, at, PIECES[rng.below(PIECES.len())].to_string())
            } else {
                let a = char_boundary(&text, rng.below(text.len()));
                let b = char_boundary(&text, (a + 1 + rng.below(6)).min(text.len()));
                (a, b, String::new())
            };
            version += 1;
            let r = range(&text, start, end);
            c.notify(
                "textDocument/didChange",
                json!({ "textDocument": { "uri": uri, "version": version }, "contentChanges": [{ "range": r, "text": insert }] }),
            );
            text.replace_range(start..end, &insert);
        }
        let got = published(&c.diagnostics(&uri, version));
        std::fs::write(&path, &text).unwrap();
        let want = check(&dir, name, &text);
        assert_eq!(got, want, "seed {seed}, burst {burst}, text:\n{text}");
        // Requests keep working on whatever the text has become.
        let (l, ch) = position(&text, char_boundary(&text, rng.below(text.len() + 1)));
        for m in ["textDocument/hover", "textDocument/definition", "textDocument/completion"] {
            let r = c.request(m, Client::at(&uri, l, ch));
            assert!(r.get("error").is_none(), "seed {seed}: {m} failed: {r}");
        }
        // Semantic tokens from the incrementally reparsed tree equal those
        // of a fresh parse (a full-text change drops the kept tree).
        let tokens =
            |c: &mut Client| c.request("textDocument/semanticTokens/full", json!({ "textDocument": { "uri": uri } }));
        let incremental = tokens(&mut c);
        version += 1;
        c.change_full(&uri, &text, version);
        let fresh = tokens(&mut c);
        assert_eq!(incremental["result"], fresh["result"], "seed {seed}, burst {burst}");
        assert!(c.alive(), "seed {seed}: the server stopped");
    }
    assert!(c.shutdown().success());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn interleaved_edits_and_requests_all_get_answers() {
    let mut rng = Rng(0xfeed_beef);
    // The example with 1,000 more lines, so that checks take long enough to
    // be overtaken by edits.
    let axpy = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/axpy.mc")).unwrap();
    let extra: String =
        (0..1000).map(|i| format!("let h{i} = lam x : Int. addi (muli x {i}) (length [x, {i}])\n")).collect();
    let text0 = axpy.replacen("mexpr\n", &format!("{extra}mexpr\n"), 1);
    let dir = std::env::temp_dir().join(format!("pmx-lsp-interleaved-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("axpy.mc");
    std::fs::write(&path, &text0).unwrap();
    let uri = file_uri(&path);
    let mut c = Client::start();
    let mut text = text0.clone();
    c.open(&uri, &text, 1);
    let mut ids = Vec::new();
    let mut version = 1;
    for i in 0..150 {
        let at = char_boundary(&text, rng.below(text.len() + 1));
        let piece = PIECES[rng.below(PIECES.len())];
        version += 1;
        let r = range(&text, at, at);
        c.notify(
            "textDocument/didChange",
            json!({ "textDocument": { "uri": uri, "version": version }, "contentChanges": [{ "range": r, "text": piece }] }),
        );
        text.insert_str(at, piece);
        let (l, ch) = position(&text, char_boundary(&text, rng.below(text.len() + 1)));
        let method = ["textDocument/hover", "textDocument/completion", "textDocument/semanticTokens/full"][i % 3];
        let params = if i % 3 == 2 { json!({ "textDocument": { "uri": uri } }) } else { Client::at(&uri, l, ch) };
        ids.push(c.request_async(method, params));
    }
    let got = published(&c.diagnostics(&uri, version));
    let mut modified = 0;
    for id in ids {
        let r = c.response(id);
        // An answer, or "content modified" when an edit overtook it.
        assert!(r.get("result").is_some() || r["error"]["code"] == -32801, "{r}");
        modified += usize::from(r.get("error").is_some());
    }
    eprintln!("{modified} of 150 requests were overtaken by edits");
    std::fs::write(&path, &text).unwrap();
    assert_eq!(got, check(&dir, "axpy.mc", &text));
    assert!(c.shutdown().success());
    let _ = std::fs::remove_dir_all(&dir);
}
