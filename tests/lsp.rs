//! `pmx lsp` end to end: the real process, JSON-RPC over pipes.

#[path = "lsp_client.rs"]
mod lsp_client;

use lsp_client::{file_uri, pos_of, range_of, Client};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// A fresh folder for one test's files.
fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("pmx-lsp-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    file_uri(&path)
}

const UTIL: &str = "-- Helpers.\nlet double = lam x : Int. muli x 2\n";

/// A type error on a line with non-ASCII characters (`é` is one UTF-16
/// unit, `𝄞` two) and, behind it, a Futhark well-formedness error.
const MAIN: &str = "include \"util.mc\"
recursive let sumTo = lam n. if eqi n 0 then 0 else addi n (sumTo (subi n 1)) end
mexpr
let s = \"héllo 𝄞\" in let z = addi 1 2. in
let y = double 3 in
accelerate (map sumTo [1, 2, y])
";

fn hover_text(c: &mut Client, uri: &str, text: &str, needle: &str) -> String {
    let (l, ch) = pos_of(text, needle, 0);
    let r = c.request("textDocument/hover", Client::at(uri, l, ch));
    r["result"]["contents"]["value"].as_str().unwrap_or_else(|| panic!("no hover on `{needle}`: {r}")).to_string()
}

fn codes(diags: &[Value]) -> Vec<&str> {
    diags.iter().map(|d| d["code"].as_str().unwrap()).collect()
}

#[test]
fn diagnostics_edits_hover_definition_and_shutdown() {
    let dir = temp_dir("main");
    let util = write(&dir, "util.mc", UTIL);
    let main = write(&dir, "main.mc", MAIN);
    let mut c = Client::start();
    c.open(&main, MAIN, 1);

    // The type error, at UTF-16 columns 37..39 of line 3. As with `pmx
    // check`, the accelerate passes wait until the front end finds no error.
    let diags = c.diagnostics(&main, 1);
    assert_eq!(codes(&diags), ["E0301"], "{diags:?}");
    let d = &diags[0];
    assert_eq!(d["range"], json!({ "start": { "line": 3, "character": 37 }, "end": { "line": 3, "character": 39 } }));
    assert_eq!(d["range"], range_of(MAIN, "2.", 0));
    assert_eq!(d["severity"], 1);
    assert_eq!(d["source"], "pmx");
    assert!(d["message"].as_str().unwrap().starts_with("expected `Int`, found `Float`"), "{d}");

    // Fix it (an incremental edit in UTF-16 columns): now the
    // well-formedness error of the Futhark backend shows.
    c.change_range(&main, 2, (3, 37), (3, 39), "2");
    let fixed = MAIN.replace("2. in", "2 in");
    let diags = c.diagnostics(&main, 2);
    assert_eq!(codes(&diags), ["E0414"], "{diags:?}");
    assert_eq!(diags[0]["range"], range_of(&fixed, "sumTo", 0));
    let msg = diags[0]["message"].as_str().unwrap();
    assert!(msg.starts_with("Futhark backend: recursive functions are not supported"), "{msg}");
    assert!(msg.contains("note: write the recursion with"), "{msg}");

    // Hover: types of identifiers and expressions.
    assert!(hover_text(&mut c, &main, &fixed, "y]").contains("y : Int"));
    let h = hover_text(&mut c, &main, &fixed, "double 3");
    assert!(h.contains("double : Int -> Int"), "{h}");
    assert!(h.contains("util.mc:2:5"), "{h}");
    assert!(hover_text(&mut c, &main, &fixed, "sumTo [").contains("sumTo : Int -> Int"));
    assert!(hover_text(&mut c, &main, &fixed, "[1, 2").contains("[Int]"));
    // On `accelerate`: what `pmx explain` says.
    let h = hover_text(&mut c, &main, &fixed, "accelerate");
    assert!(h.contains("backend: Futhark"), "{h}");
    assert!(h.contains("`map` at main.mc:6:13"), "{h}");
    assert!(h.contains("y : Int  (passed by value)"), "{h}");
    assert!(h.contains("functions extracted with it: sumTo"), "{h}");

    // Go to definition: into the included file, and on the include.
    let (l, ch) = pos_of(&fixed, "double 3", 0);
    let r = c.request("textDocument/definition", Client::at(&main, l, ch + 2));
    assert_eq!(r["result"], json!([{ "uri": util, "range": range_of(UTIL, "double", 0) }]), "{r}");
    let r = c.request("textDocument/definition", Client::at(&main, 0, 12));
    assert_eq!(r["result"][0]["uri"], util.as_str(), "{r}");
    // Into the standard library.
    let std_text = "include \"seq.mc\"\nmexpr\nlast [1, 2]\n";
    let std_user = write(&dir, "std_user.mc", std_text);
    c.open(&std_user, std_text, 1);
    let (l, ch) = pos_of(std_text, "last", 0);
    let r = c.request("textDocument/definition", Client::at(&std_user, l, ch));
    let target = r["result"][0]["uri"].as_str().unwrap_or_default();
    assert!(target.ends_with("/std/seq.mc"), "{r}");

    // Fix the last error: an empty set.
    let good = fixed.replace("(map sumTo", "(map double");
    c.change_full(&main, &good, 3);
    assert_eq!(c.diagnostics(&main, 3), Vec::<Value>::new());

    assert!(c.shutdown().success());
}

#[test]
fn edits_in_an_included_file_update_the_includer() {
    let dir = temp_dir("include");
    let util = write(&dir, "util.mc", UTIL);
    let good = MAIN.replace("2. in", "2 in").replace("(map sumTo", "(map double");
    let main = write(&dir, "main.mc", &good);
    let mut c = Client::start();
    c.open(&main, &good, 1);
    assert_eq!(c.diagnostics(&main, 1), Vec::<Value>::new());
    c.open(&util, UTIL, 1);
    assert_eq!(c.diagnostics(&util, 1), Vec::<Value>::new());

    // `double` is renamed: its use in main.mc is unbound.
    let renamed = UTIL.replace("double", "twice");
    c.change_full(&util, &renamed, 2);
    assert_eq!(c.diagnostics(&util, 2), Vec::<Value>::new());
    let p = c.wait_notification("textDocument/publishDiagnostics", |p| {
        p["uri"] == main.as_str() && !p["diagnostics"].as_array().unwrap().is_empty()
    });
    let diags = p["diagnostics"].as_array().unwrap();
    assert_eq!(codes(diags), ["E0201", "E0201"], "{diags:?}");
    assert_eq!(diags[0]["range"], range_of(&good, "double", 0));
    assert_eq!(diags[1]["range"], range_of(&good, "double", 1));

    // Undo: main.mc's diagnostics are cleared.
    c.change_full(&util, UTIL, 3);
    c.diagnostics(&util, 3);
    c.wait_notification("textDocument/publishDiagnostics", |p| {
        p["uri"] == main.as_str() && p["diagnostics"].as_array().unwrap().is_empty()
    });
    assert!(c.shutdown().success());
}

/// A program's files are merged as Miking merges them: a file open beside
/// the program that includes it sees the names defined before it there
/// (hover too); open alone, it sees only its own includes'.
#[test]
fn an_included_file_sees_the_names_of_its_program() {
    let dir = temp_dir("merged");
    let helper_text = "let h = lam u : Int. addi u 100\n";
    let uses_text = "let g = lam z : Int. addi z (h 0)\n";
    let main_text = "include \"helper.mc\"\ninclude \"uses.mc\"\nmexpr\ng 5\n";
    write(&dir, "helper.mc", helper_text);
    let uses = write(&dir, "uses.mc", uses_text);
    let main = write(&dir, "main.mc", main_text);
    let mut c = Client::start();
    c.open(&uses, uses_text, 1);
    assert_eq!(codes(&c.diagnostics(&uses, 1)), ["E0201"]);
    c.open(&main, main_text, 1);
    c.wait_notification("textDocument/publishDiagnostics", |p| {
        p["uri"] == uses.as_str() && p["diagnostics"].as_array().unwrap().is_empty()
    });
    assert_eq!(c.diagnostics(&main, 1), Vec::<Value>::new());
    assert!(hover_text(&mut c, &uses, uses_text, "h 0").contains("h : Int -> Int"));
    assert!(c.shutdown().success());
}

#[test]
fn a_file_that_does_not_parse_still_has_hover_and_definitions() {
    let dir = temp_dir("syntax");
    let text =
        "let inc = lam x : Int. addi x 1\nlet broken = (1,\nlet two = inc 1\nmexpr\nlet z = [two, 'c' in\ninc two\n";
    let uri = write(&dir, "broken.mc", text);
    let mut c = Client::start();
    c.open(&uri, text, 1);
    let diags = c.diagnostics(&uri, 1);
    assert_eq!(codes(&diags), ["E0002", "E0301", "E0002"], "{diags:?}");
    assert!(hover_text(&mut c, &uri, text, "inc 1").contains("inc : Int -> Int"));
    assert!(hover_text(&mut c, &uri, text, "two\n").contains("two : Int"));
    let (l, ch) = pos_of(text, "inc two", 0);
    let r = c.request("textDocument/definition", Client::at(&uri, l, ch));
    assert_eq!(r["result"][0]["range"], range_of(text, "inc", 0), "{r}");
    let (l, ch) = pos_of(text, "two\n", 0);
    let r = c.request("textDocument/definition", Client::at(&uri, l, ch));
    assert_eq!(r["result"][0]["range"], range_of(text, "two", 0), "{r}");
    assert!(c.shutdown().success());
}

#[test]
fn symbols_references_completion_and_semantic_tokens() {
    let dir = temp_dir("ide");
    let util = write(&dir, "util.mc", UTIL);
    let good = MAIN.replace("2. in", "2 in").replace("(map sumTo", "(map double");
    let main = write(&dir, "main.mc", &good);
    let mut c = Client::start();
    c.open(&main, &good, 1);

    let r = c.request("textDocument/documentSymbol", json!({ "textDocument": { "uri": main } }));
    let names: Vec<&str> = r["result"].as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["sumTo", "mexpr"], "{r}");
    assert_eq!(r["result"][0]["detail"], "Int -> Int");
    assert_eq!(r["result"][0]["selectionRange"], range_of(&good, "sumTo", 0));
    let locals: Vec<&str> =
        r["result"][1]["children"].as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(locals, ["s", "z", "y"]);

    // References to `double`, across files, with its declaration.
    let (l, ch) = pos_of(&good, "double 3", 0);
    let mut params = Client::at(&main, l, ch);
    params["context"] = json!({ "includeDeclaration": true });
    let r = c.request("textDocument/references", params.clone());
    let mut found: Vec<(String, Value)> = r["result"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| (l["uri"].as_str().unwrap().to_string(), l["range"].clone()))
        .collect();
    found.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        found,
        [
            (main.clone(), range_of(&good, "double", 0)),
            (main.clone(), range_of(&good, "double", 1)),
            (util.clone(), range_of(UTIL, "double", 0)),
        ]
    );
    params["context"] = json!({ "includeDeclaration": false });
    let r = c.request("textDocument/references", params);
    assert_eq!(r["result"].as_array().unwrap().len(), 2, "{r}");

    // Completion at the start of the last line: locals, the program's
    // names, built-ins and keywords, with types.
    let (l, _) = pos_of(&good, "accelerate", 0);
    let r = c.request("textDocument/completion", Client::at(&main, l, 0));
    let items = r["result"].as_array().unwrap();
    let detail = |label: &str| -> Option<String> {
        items.iter().find(|i| i["label"] == label).map(|i| i["detail"].as_str().unwrap_or("").to_string())
    };
    assert_eq!(detail("y").as_deref(), Some("Int"));
    assert_eq!(detail("s").as_deref(), Some("String"));
    assert_eq!(detail("double").as_deref(), Some("Int -> Int"));
    assert_eq!(detail("sumTo").as_deref(), Some("Int -> Int"));
    assert_eq!(detail("addi").as_deref(), Some("Int -> Int -> Int"));
    assert_eq!(detail("map").as_deref(), Some("all a. all b. (a -> b) -> [a] -> [b]"));
    assert_eq!(detail("let").as_deref(), Some("keyword"));

    let r = c.request("textDocument/semanticTokens/full", json!({ "textDocument": { "uri": main } }));
    let data = r["result"]["data"].as_array().unwrap();
    assert!(!data.is_empty() && data.len().is_multiple_of(5), "{r}");
    // The first token is `include`, a keyword (type 1).
    assert_eq!(data[..5], [json!(0), json!(0), json!(7), json!(1), json!(0)]);
    assert!(c.shutdown().success());
}

#[test]
fn stale_work_is_dropped_and_results_arrive_in_order() {
    let dir = temp_dir("stale");
    let mut text = String::new();
    for i in 0..1500 {
        text.push_str(&format!("let f{i} = lam x : Int. addi x {i}\n"));
    }
    text.push_str("mexpr\nf0 1\n");
    let uri = write(&dir, "big.mc", &text);
    let mut c = Client::start();
    c.open(&uri, &text, 1);
    c.diagnostics(&uri, 1);
    // A burst of edits, each a new type error or its repair, not waited for.
    let (line, col) = pos_of(&text, "addi x 700", 0);
    let col = col + "addi x 700".len() as u32;
    let edits = 30;
    for v in 2..2 + edits {
        if v % 2 == 0 {
            c.change_range(&uri, v, (line, col), (line, col), ".");
        } else {
            c.change_range(&uri, v, (line, col), (line, col + 1), "");
        }
    }
    let last = 1 + edits;
    // The last version ends with a repair: no diagnostics.
    assert_eq!(c.diagnostics(&uri, last), Vec::<Value>::new());
    let r = c.request("textDocument/hover", Client::at(&uri, line, col - 1));
    assert!(r["result"]["contents"]["value"].as_str().unwrap().contains("Int"), "{r}");
    c.drain();
    let versions: Vec<i64> = c
        .pending()
        .iter()
        .filter(|m| m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri.as_str())
        .map(|m| m["params"]["version"].as_i64().unwrap_or(0))
        .collect();
    // Versions only go up (nothing stale arrives after a newer result; the
    // last one was taken out of the queue above), and most intermediate
    // versions were never published: their work was cancelled or merged.
    assert!(versions.windows(2).all(|w| w[0] < w[1]) && versions.iter().all(|&v| v < last), "{versions:?}");
    assert!(versions.len() < edits as usize / 2, "{versions:?}");
    assert!(c.shutdown().success());
}

fn frame(body: &str) -> Vec<u8> {
    format!("Content-Length: {}\r\n\r\n{}", body.len(), body).into_bytes()
}

#[test]
fn bad_input_never_stops_the_server() {
    let dir = temp_dir("robust");
    let uri = write(&dir, "r.mc", "mexpr\n1\n");
    let mut c = Client::start();
    // Not JSON; not a request; an unknown method; wrong parameters.
    c.send_raw(&frame("{ this is not json"));
    c.send_raw(&frame("[1, 2, 3]"));
    c.send_raw(b"garbage without a header\r\n\r\n");
    c.send_raw(&frame(r#"{"jsonrpc":"2.0","method":"textDocument/hover","params":{}}"#));
    c.send_raw(&frame(r#"{"id":999,"method":"textDocument/hover"}"#));
    let r = c.response(999);
    assert_eq!(r["error"]["code"], -32600, "{r}");
    let r = c.request("pmx/unknown", json!({}));
    assert!(r.get("error").is_some(), "{r}");
    // A `$/` request is answered (MethodNotFound); a `$/` notification is
    // ignored.
    c.notify("$/setTrace", json!({ "value": "off" }));
    let r = c.request("$/somethingNew", json!({}));
    assert_eq!(r["error"]["code"], -32601, "{r}");
    let r = c.request("textDocument/hover", json!({ "nonsense": true }));
    assert!(r.get("error").is_some(), "{r}");
    // Requests about documents nobody opened, positions out of range.
    let missing = file_uri(&dir.join("missing.mc"));
    let r = c.request("textDocument/hover", Client::at(&missing, 3, 4));
    assert_eq!(r["result"], Value::Null, "{r}");
    c.change_full(&missing, "x", 2);
    c.open(&uri, "mexpr\n1\n", 1);
    c.diagnostics(&uri, 1);
    for (l, ch) in [(0, 0), (1, 1), (1, 99), (99, 0), (u32::MAX, u32::MAX)] {
        for m in ["textDocument/hover", "textDocument/definition", "textDocument/completion"] {
            let r = c.request(m, Client::at(&uri, l, ch));
            assert!(r.get("error").is_none(), "{m} at {l}:{ch}: {r}");
        }
    }
    // Edits with ranges out of order, past the end, inside a surrogate pair.
    c.change_range(&uri, 2, (5, 0), (0, 3), "𝄞");
    c.change_range(&uri, 3, (0, 1), (0, 1), "é");
    c.change_range(&uri, 4, (9, 9), (10, 10), "\n(");
    c.diagnostics(&uri, 4);
    // A deeply nested program.
    let deep = format!("mexpr\n{}1{}\n", "[".repeat(20_000), "]".repeat(20_000));
    c.change_full(&uri, &deep, 5);
    c.diagnostics(&uri, 5);
    let r = c.request("textDocument/hover", Client::at(&uri, 1, 20_000));
    assert!(r["result"]["contents"]["value"].as_str().unwrap().contains("Int"), "{r}");
    c.notify("textDocument/didClose", json!({ "textDocument": { "uri": uri } }));
    c.notify("textDocument/didClose", json!({ "textDocument": { "uri": uri } }));
    assert!(c.alive());
    assert!(c.shutdown().success());
}

#[test]
fn exit_without_shutdown_is_an_error_exit() {
    let mut c = Client::start();
    c.notify("exit", Value::Null);
    let deadline = std::time::Instant::now() + lsp_client::TIMEOUT;
    while c.alive() {
        assert!(std::time::Instant::now() < deadline, "the server did not exit");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// An include of a file that does not exist yet is an error until the
/// file is created: the editor reports the new file, and the includer is
/// checked again.
#[test]
fn a_file_created_after_a_failed_include_is_found() {
    let dir = temp_dir("created");
    let text = "include \"later.mc\"\nmexpr\ntriple 2\n";
    let main = write(&dir, "main.mc", text);
    let mut c = Client::start();
    c.open(&main, text, 1);
    let diags = c.diagnostics(&main, 1);
    assert!(
        diags.iter().any(|d| d["message"].as_str().unwrap().contains("cannot find the file `later.mc`")),
        "{diags:?}"
    );

    let later = write(&dir, "later.mc", "let triple = lam x : Int. muli x 3\n");
    c.notify("workspace/didChangeWatchedFiles", json!({ "changes": [{ "uri": later, "type": 1 }] }));
    c.wait_notification("textDocument/publishDiagnostics", |p| {
        p["uri"] == main.as_str() && p["diagnostics"].as_array().unwrap().is_empty()
    });
    assert!(c.shutdown().success());
}

/// MLang: hover and go-to-definition on names inside a semantic
/// function's cases and under `use`, an error in a case at the case.
#[test]
fn mlang_names_have_hover_definitions_and_located_errors() {
    let dir = temp_dir("mlang");
    let text = "lang Arith\n  syn Expr =\n  | Num Int\n  sem eval =\n  | Num n -> addi n 1\nend\n\
                lang Twice = Arith\n  sem twice =\n  | e -> addi (eval e) (eval e)\nend\n\
                mexpr\nuse Twice in twice (Num 2)\n";
    let uri = write(&dir, "lang.mc", text);
    let mut c = Client::start();
    c.open(&uri, text, 1);
    assert!(c.diagnostics(&uri, 1).is_empty());
    assert!(hover_text(&mut c, &uri, text, "n 1").contains(": Int"));
    assert!(hover_text(&mut c, &uri, text, "eval e)").contains("Expr -> Int"));
    assert!(hover_text(&mut c, &uri, text, "twice (Num").contains("Expr -> Int"));
    let (l, ch) = pos_of(text, "eval e)", 0);
    let r = c.request("textDocument/definition", Client::at(&uri, l, ch));
    assert_eq!(r["result"][0]["range"], range_of(text, "eval", 0), "{r}");
    let broken = text.replace("addi n 1", "addi n true");
    c.change_full(&uri, &broken, 2);
    let diags = c.diagnostics(&uri, 2);
    assert_eq!(codes(&diags), ["E0301"], "{diags:?}");
    assert_eq!(diags[0]["range"], range_of(&broken, "true", 0), "{diags:?}");
    assert!(c.shutdown().success());
}

/// MLang: fragments that name a semantic function's parameter
/// differently; in each case the name means its own fragment's parameter,
/// for hover and go-to-definition too.
#[test]
fn mlang_parameters_named_per_fragment() {
    let dir = temp_dir("mlang-params");
    let text = "lang A\n  sem f (x : Int) =\n  | 0 -> x\nend\n\
                lang B = A\n  sem f (y : Int) =\n  | 1 -> addi y 1\nend\n\
                mexpr\nuse B in f 2 1\n";
    let uri = write(&dir, "params.mc", text);
    let mut c = Client::start();
    c.open(&uri, text, 1);
    assert!(c.diagnostics(&uri, 1).is_empty());
    assert!(hover_text(&mut c, &uri, text, "y 1").contains(": Int"));
    let (l, ch) = pos_of(text, "y 1", 0);
    let r = c.request("textDocument/definition", Client::at(&uri, l, ch));
    assert_eq!(r["result"][0]["range"], range_of(text, "y", 0), "{r}");
    assert!(c.shutdown().success());
}

#[test]
fn completion_offers_pattern_binders_with_their_types() {
    let dir = temp_dir("patterns");
    let text = "mexpr\nmatch (1, [2, 3]) with (a, [b] ++ rest) then\naddi a b\nelse 0\n";
    let main = write(&dir, "main.mc", text);
    let mut c = Client::start();
    c.open(&main, text, 1);
    let (l, _) = pos_of(text, "addi a b", 0);
    let r = c.request("textDocument/completion", Client::at(&main, l, 0));
    let items = r["result"].as_array().unwrap();
    let detail = |label: &str| -> Option<String> {
        items.iter().find(|i| i["label"] == label).map(|i| i["detail"].as_str().unwrap_or("").to_string())
    };
    assert_eq!(detail("a").as_deref(), Some("Int"), "{r}");
    assert_eq!(detail("b").as_deref(), Some("Int"), "{r}");
    assert_eq!(detail("rest").as_deref(), Some("[Int]"), "{r}");
    assert!(c.shutdown().success());
}
