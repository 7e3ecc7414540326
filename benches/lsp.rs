//! Language-server latency through JSON-RPC: starts `pmx lsp` (the
//! release binary), opens a generated program of about 5,000 lines, then
//! measures (1) from sending a one-character `didChange` to receiving the
//! `publishDiagnostics` of that version, and (2) from sending a request
//! (hover, definition, completion, semantic tokens) to its response. For
//! comparison, the same edit straight on the driver's queries (no protocol,
//! no threads) is timed too: that part of the latency is the compiler's.
//! Run with `cargo bench --bench lsp`.

#[path = "../tests/lsp_client.rs"]
mod lsp_client;
#[path = "common/units.rs"]
mod units;

use lsp_client::{file_uri, pos_of, Client};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// A program of `lines` lines in `parts` files: each part includes the one
/// before it; the last file holds the `mexpr` section.
fn program(lines: usize, parts: usize, accelerate: bool) -> Vec<(String, String)> {
    let mut files = Vec::new();
    let mut i = 0;
    for p in 0..parts {
        let mut src = if p == 0 { String::new() } else { format!("include \"part{}.mc\"\n", p - 1) };
        while src.lines().count() < lines / parts {
            src.push_str(&units::unit(i, accelerate));
            i += 1;
        }
        if p + 1 == parts {
            src.push_str("mexpr\nf1 1 [2, 3]\n");
        }
        files.push((format!("part{p}.mc"), src));
    }
    files
}

fn stats(name: &str, mut times: Vec<Duration>) {
    times.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let n = times.len();
    println!(
        "  {name:<44} median {:>7.2} ms  p90 {:>7.2} ms  min {:>7.2} ms  max {:>7.2} ms  (n = {n})",
        ms(times[n / 2]),
        ms(times[n * 9 / 10]),
        ms(times[0]),
        ms(times[n - 1])
    );
}

/// Where the one-character edit goes: after `addi x K` in the `let y` line
/// of a unit (`addi x K` -> `addi x K0` -> `addi x K`).
fn edit_point(text: &str) -> (u32, u32) {
    let lines: Vec<&str> = text.lines().filter(|l| l.starts_with("  let y = addi x ")).collect();
    let line = lines[lines.len() / 2];
    let (l, c) = pos_of(text, line, 0);
    (l, c + line.trim_end_matches(" in").len() as u32)
}

/// The same edits on the driver's queries, on the large stack.
fn driver_floor(dir: &Path, files: &[(String, String)], edited: usize) {
    let paths: Vec<PathBuf> = files.iter().map(|(n, _)| dir.join(n)).collect();
    let texts: Vec<String> = files.iter().map(|(_, t)| t.clone()).collect();
    pmx_driver::with_stack(move || {
        let mut db = pmx_driver::Database::default();
        // As in the language server: edited files are reparsed incrementally.
        db.enable_incremental_parsing();
        for (p, t) in paths.iter().zip(&texts) {
            db.set_file_text(p, t.clone());
        }
        let root = db.set_file_text(paths.last().unwrap(), texts.last().unwrap().clone());
        let d = pmx_driver::program_diagnostics(&db, root);
        assert!(d.is_empty(), "{:?}", d.first());
        let text = &texts[edited];
        let (l, c) = edit_point(text);
        let at = text.lines().take(l as usize).map(|x| x.len() + 1).sum::<usize>() + c as usize;
        let mut changed = text.clone();
        changed.insert(at, '0');
        let (mut front, mut all) = (Vec::new(), Vec::new());
        for i in 0..20 {
            let t = if i % 2 == 0 { changed.clone() } else { text.clone() };
            let start = Instant::now();
            db.set_file_text(&paths[edited], t);
            pmx_driver::front_end_diagnostics(&db, root);
            front.push(start.elapsed());
            pmx_driver::program_diagnostics(&db, root);
            all.push(start.elapsed());
        }
        stats("driver alone: edit -> front-end diagnostics", front);
        stats("driver alone: edit -> all diagnostics", all);
    });
}

/// `n` one-character edits at `at`, inserting a `0` and removing it in
/// turn, each timed to its diagnostics (which must be empty).
fn timed_edits(c: &mut Client, uri: &str, version: &mut i64, (line, col): (u32, u32), n: usize) -> Vec<Duration> {
    let mut edits = Vec::new();
    for i in 0..n {
        *version += 1;
        let start = Instant::now();
        if i % 2 == 0 {
            c.change_range(uri, *version, (line, col), (line, col), "0");
        } else {
            c.change_range(uri, *version, (line, col), (line, col + 1), "");
        }
        let diags = c.diagnostics(uri, *version);
        edits.push(start.elapsed());
        assert!(diags.is_empty(), "{diags:?}");
    }
    edits
}

fn bench(label: &str, parts: usize, accelerate: bool, edited: usize, requests: bool) {
    let files = program(5_000, parts, accelerate);
    let dir = std::env::temp_dir().join(format!("pmx-lsp-bench-{}-{label}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (name, text) in &files {
        std::fs::write(dir.join(name), text).unwrap();
    }
    let lines: usize = files.iter().map(|(_, t)| t.lines().count()).sum();
    let accs: usize = files.iter().map(|(_, t)| t.matches("accelerate (").count()).sum();
    println!("{label}: {lines} lines in {parts} file(s), {accs} accelerate expressions; edits in {}", files[edited].0);
    driver_floor(&dir, &files, edited);

    let mut c = Client::start();
    let main_uri = file_uri(&dir.join(&files[parts - 1].0));
    let uri = file_uri(&dir.join(&files[edited].0));
    let text = files[edited].1.clone();
    let start = Instant::now();
    c.open(&main_uri, &files[parts - 1].1, 1);
    let diags = c.diagnostics(&main_uri, 1);
    assert!(diags.is_empty(), "the generated program has errors: {:?}", diags.first());
    stats("open -> first diagnostics (cold)", vec![start.elapsed()]);
    if uri != main_uri {
        c.open(&uri, &text, 1);
        c.diagnostics(&uri, 1);
    }

    let (line, col) = edit_point(&text);
    let mut version = 1;
    let edits = timed_edits(&mut c, &uri, &mut version, (line, col), 40);
    stats("one-character edit -> diagnostics", edits);

    // The same with a pause before each edit (as when typing at a human
    // pace): the server has freed what the last edit replaced meanwhile.
    let mut paused = Vec::new();
    for i in 0..20 {
        std::thread::sleep(Duration::from_millis(100));
        version += 1;
        let start = Instant::now();
        if i % 2 == 0 {
            c.change_range(&uri, version, (line, col), (line, col), "0");
        } else {
            c.change_range(&uri, version, (line, col), (line, col + 1), "");
        }
        c.diagnostics(&uri, version);
        paused.push(start.elapsed());
    }
    stats("one-character edit after a pause -> diagnostics", paused);

    let mut broken = Vec::new();
    for i in 0..20 {
        version += 1;
        let start = Instant::now();
        if i % 2 == 0 {
            c.change_range(&uri, version, (line, col - 1), (line, col - 1), ".");
        } else {
            c.change_range(&uri, version, (line, col - 1), (line, col), "");
        }
        let diags = c.diagnostics(&uri, version);
        broken.push(start.elapsed());
        assert_eq!(diags.is_empty(), i % 2 == 1, "{diags:?}");
    }
    stats("edit adding/removing a type error -> diagnostics", broken);

    // Typing: ten characters 20 ms apart (faster than a check), then the
    // time from the last one to its diagnostics. Stale checks are cancelled.
    let mut typing = Vec::new();
    let mut published = 0;
    for _ in 0..5 {
        let first = version + 1;
        for k in 0..10u32 {
            version += 1;
            c.change_range(&uri, version, (line, col + k), (line, col + k), "1");
            std::thread::sleep(Duration::from_millis(20));
        }
        let start = Instant::now() - Duration::from_millis(20);
        c.diagnostics(&uri, version);
        typing.push(start.elapsed());
        version += 1;
        c.change_range(&uri, version, (line, col), (line, col + 10), "");
        c.diagnostics(&uri, version);
        c.drain();
        published += c
            .pending()
            .iter()
            .filter(|m| {
                m["method"] == "textDocument/publishDiagnostics"
                    && m["params"]["version"].as_i64().is_some_and(|v| v >= first && v < version - 1)
            })
            .count();
        c.clear_pending();
    }
    stats("typing 10 chars, 20 ms apart: last -> diagnostics", typing);
    println!(
        "  (of 45 intermediate versions, {published} were published; the others' checks were cancelled or merged)"
    );

    if requests {
        let mut hovers = Vec::new();
        // Uses of the `f` functions: `(f12 v [v, 1], ...)`.
        let uses: Vec<usize> = text
            .match_indices(" v [v, 1]")
            .map(|(i, _)| i)
            .filter(|&i| text[..i].rfind('(').is_some_and(|p| text[p + 1..].starts_with('f')))
            .collect();
        // The position inside the name at the `k`th of `n` evenly spread uses.
        let use_position = |k: usize, n: usize| {
            let at = uses[k * uses.len() / n];
            let name_start = text[..at].rfind('(').unwrap() + 1;
            let (l, ch) = pos_of(&text, &text[name_start..at + 2], 0);
            (l, ch + 1)
        };
        for k in 0..100 {
            let (l, ch) = use_position(k, 100);
            let start = Instant::now();
            let r = c.request("textDocument/hover", Client::at(&uri, l, ch));
            hovers.push(start.elapsed());
            let h = r["result"]["contents"]["value"].as_str().unwrap_or_default();
            assert!(h.contains("Int -> [Int] -> Int") || h.contains("all"), "{r}");
        }
        stats("hover", hovers);

        let mut defs = Vec::new();
        for k in 0..50 {
            let (l, ch) = use_position(k, 50);
            let start = Instant::now();
            let r = c.request("textDocument/definition", Client::at(&uri, l, ch));
            defs.push(start.elapsed());
            assert!(r["result"][0]["range"].is_object(), "{r}");
        }
        stats("go to definition", defs);

        let mut completions = Vec::new();
        for k in 0..20 {
            let (l, _) = pos_of(&text, "  let r = {a = y", k * 10);
            let start = Instant::now();
            let r = c.request("textDocument/completion", Client::at(&uri, l, 2));
            completions.push(start.elapsed());
            assert!(r["result"].as_array().unwrap().len() > 100, "{r}");
        }
        stats("completion", completions);

        let (mut full, mut range) = (Vec::new(), Vec::new());
        for k in 0..10 {
            let start = Instant::now();
            let r =
                c.request("textDocument/semanticTokens/full", serde_json::json!({ "textDocument": { "uri": uri } }));
            full.push(start.elapsed());
            assert!(r["result"]["data"].is_array());
            let first = (k * 400) as u32;
            let start = Instant::now();
            let r = c.request(
                "textDocument/semanticTokens/range",
                serde_json::json!({ "textDocument": { "uri": uri }, "range": {
                    "start": { "line": first, "character": 0 }, "end": { "line": first + 60, "character": 0 } } }),
            );
            range.push(start.elapsed());
            assert!(r["result"]["data"].is_array());
        }
        stats("semantic tokens, whole file", full);
        stats("semantic tokens, 60 lines", range);
    }

    assert!(c.shutdown().success());
    let _ = std::fs::remove_dir_all(&dir);
    println!();
}

/// An MLang program of `n` fragments composed into one language, the
/// shape `benches/mlang.py` times under `pmx check` (each fragment adds
/// two constructors to one `syn` and a case for each to two `sem`s).
fn mlang_program(n: usize) -> String {
    let mut s = String::from("lang Base\n  syn Expr =\n  sem eval : Expr -> Int\n  sem eval =\n  sem size : Expr -> Int\n  sem size =\nend\n");
    for i in 0..n {
        s.push_str(&format!(
            "lang F{i} = Base\n  syn Expr =\n  | C{i} (Int, Expr)\n  | L{i} Int\n  sem eval =\n  | C{i} (k, e) -> addi (muli k {}) (eval e)\n  | L{i} k -> addi k {i}\n  sem size =\n  | C{i} (_, e) -> addi 1 (size e)\n  | L{i} _ -> 1\nend\n",
            i + 1
        ));
    }
    let all: Vec<String> = (0..n).map(|i| format!("F{i}")).collect();
    s.push_str(&format!("lang All = {} end\nmexpr\nuse All in\ndprint (eval (C1 (2, L0 3)))\n", all.join(" + ")));
    s
}

/// One-character edits in a case of an MLang file (issue 27's target:
/// under 50 ms from the edit to its diagnostics).
fn mlang_bench(n: usize) {
    let text = mlang_program(n);
    let dir = std::env::temp_dir().join(format!("pmx-lsp-bench-{}-mlang", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("mlang.mc");
    std::fs::write(&path, &text).unwrap();
    println!("MLang: {} lines, {n} fragments composed (each sem {} cases)", text.lines().count(), 2 * n);
    let mut c = Client::start();
    let uri = file_uri(&path);
    let start = Instant::now();
    c.open(&uri, &text, 1);
    let diags = c.diagnostics(&uri, 1);
    assert!(diags.is_empty(), "the generated program has errors: {:?}", diags.first());
    stats("open -> first diagnostics (cold)", vec![start.elapsed()]);
    let case = format!("  | L{} k -> addi k {}", n / 2, n / 2);
    let (line, col) = pos_of(&text, &case, 0);
    let col = col + case.len() as u32;
    let mut version = 1;
    let edits = timed_edits(&mut c, &uri, &mut version, (line, col), 40);
    stats("one-character edit in a case -> diagnostics", edits);
    assert!(c.shutdown().success());
    let _ = std::fs::remove_dir_all(&dir);
    println!();
}

fn main() {
    if std::env::args().any(|a| a == "mlang") {
        mlang_bench(300);
        return;
    }
    bench("one file", 1, true, 0, true);
    bench("one file, no accelerate", 1, false, 0, false);
    bench("ten files, edit in the main file", 10, true, 9, false);
    bench("ten files, edit in the first file", 10, true, 0, false);
}
