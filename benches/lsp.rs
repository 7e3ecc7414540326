//! Language-server latency through JSON-RPC: starts `pmx lsp`, opens a
//! generated program of about 5,000 lines, then measures (1) from sending a
//! one-character `didChange` to receiving the `publishDiagnostics` of that
//! version, and (2) from sending a hover request to its response. Run with
//! `cargo bench --bench lsp`.

#[path = "../tests/lsp_client.rs"]
mod lsp_client;

use lsp_client::{file_uri, pos_of, Client};
use std::time::{Duration, Instant};

/// About ten lines of typical MExpr (as in `benches/frontend.rs`).
fn unit(i: usize) -> String {
    let prev = if i == 0 { "lam x. lam s. x".to_string() } else { format!("f{}", i - 1) };
    let mut u = format!(
        "let f{i} = lam x : Int. lam s : [Int].
  let y = addi x {i} in
  let r = {{a = y, b = [x, y]}} in
  match s with [h] ++ t then
    addi h (muli r.a (length r.b))
  else
    foldl (lam acc. lam e. addi acc e) y s
let g{i} = lam v. ({prev} v [v, 1], map (lam z. (z, v)) [1, 2])
let pair{i} = lam a. lam b. if lti a b then (a, b) else (b, a)
utest f{i} 1 [] with {}
",
        i + 1
    );
    // An accelerate expression per ~100 lines, of both backends.
    if i % 10 == 0 {
        if i % 20 == 0 {
            u.push_str(&format!("let acc{i} = lam s : [Int]. accelerate (reduce addi 0 (map (lam x. f{i} x s) s))\n"));
        } else {
            u.push_str(&format!(
                "let accLoop{i} = lam t : Tensor[Int]. lam n : Int.\n  accelerate (loop n (lam j. tensorSetExn t [j] (addi j {i})))\n"
            ));
        }
    }
    u
}

fn program(lines: usize, accelerate: bool) -> String {
    let mut src = String::new();
    let mut i = 0;
    while src.lines().count() < lines {
        let mut u = unit(i);
        if !accelerate {
            u = u.lines().filter(|l| !l.contains("acc")).map(|l| format!("{l}\n")).collect();
        }
        src.push_str(&u);
        i += 1;
    }
    src.push_str("mexpr\nf0 1 [2, 3]\n");
    src
}

fn stats(name: &str, mut times: Vec<Duration>) {
    times.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let n = times.len();
    println!(
        "{name:<40} median {:>7.2} ms   p90 {:>7.2} ms   min {:>7.2} ms   max {:>7.2} ms   (n = {n})",
        ms(times[n / 2]),
        ms(times[n * 9 / 10]),
        ms(times[0]),
        ms(times[n - 1])
    );
}

/// The same edits straight on the driver's queries (no protocol, no
/// threads): the part of the latency that is the compiler's.
fn driver_floor(text: &str) {
    let text = text.to_string();
    pmx_driver::with_stack(move || {
        let mut db = pmx_driver::Database::default();
        let path = std::path::Path::new("/bench/floor.mc");
        let file = db.set_file_text(path, text.clone());
        assert!(pmx_driver::program_diagnostics(&db, file).is_empty());
        let at = text.find("addi x 250 in").unwrap() + "addi x 250".len();
        let mut edited = text.clone();
        edited.insert(at, '0');
        let (mut all, mut parse, mut names, mut types, mut front) = (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for i in 0..20 {
            let t = if i % 2 == 0 { edited.clone() } else { text.clone() };
            let start = Instant::now();
            db.set_file_text(path, t);
            pmx_driver::parse_file(&db, file);
            parse.push(start.elapsed());
            pmx_driver::resolve_file(&db, file);
            names.push(start.elapsed());
            pmx_driver::check_file(&db, file);
            types.push(start.elapsed());
            pmx_driver::front_end_diagnostics(&db, file);
            front.push(start.elapsed());
            pmx_driver::program_diagnostics(&db, file);
            all.push(start.elapsed());
        }
        stats("driver alone: set text + parse", parse);
        stats("driver alone: + names", names);
        stats("driver alone: + types", types);
        stats("driver alone: + front-end diagnostics", front);
        stats("driver alone: + accelerate passes", all);
    });
}

fn bench(label: &str, accelerate: bool) {
    let text = program(5_000, accelerate);
    let dir = std::env::temp_dir().join(format!("pmx-lsp-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{label}.mc"));
    std::fs::write(&path, &text).unwrap();
    let uri = file_uri(&path);
    println!(
        "{label}: {} lines, {} bytes, {} accelerate expressions",
        text.lines().count(),
        text.len(),
        text.matches("accelerate (").count()
    );

    driver_floor(&text);

    let mut c = Client::start();
    let start = Instant::now();
    c.open(&uri, &text, 1);
    let diags = c.diagnostics(&uri, 1);
    assert!(diags.is_empty(), "the generated program has errors: {:?}", diags.first());
    stats("open -> first diagnostics (cold)", vec![start.elapsed()]);

    // One character typed and deleted again in the middle of the file
    // (`addi x 2500` -> `addi x 25000` -> `addi x 2500`), each edit
    // waited for.
    let (line, col) = pos_of(&text, "addi x 250 in", 0);
    let col = col + "addi x 250".len() as u32;
    let mut edits = Vec::new();
    let mut version = 1;
    for i in 0..60 {
        version += 1;
        let start = Instant::now();
        if i % 2 == 0 {
            c.change_range(&uri, version, (line, col), (line, col), "0");
        } else {
            c.change_range(&uri, version, (line, col), (line, col + 1), "");
        }
        let diags = c.diagnostics(&uri, version);
        edits.push(start.elapsed());
        assert!(diags.is_empty(), "{diags:?}");
    }
    stats("one-character edit -> diagnostics", edits);

    // An edit that breaks the program and one that repairs it.
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
        assert_eq!(diags.is_empty(), i % 2 == 1);
    }
    stats("edit adding/removing a type error", broken);

    // Hover on identifiers all over the file.
    let mut hovers = Vec::new();
    for k in 0..100 {
        let i = k * 4;
        let (l, ch) = pos_of(&text, &format!("(f{} v", i + 1), 0);
        let start = Instant::now();
        let r = c.request("textDocument/hover", Client::at(&uri, l, ch + 1));
        hovers.push(start.elapsed());
        assert!(r["result"]["contents"]["value"].as_str().unwrap().contains("Int -> [Int] -> Int"), "{r}");
    }
    stats("hover", hovers);

    let mut defs = Vec::new();
    for k in 0..50 {
        let (l, ch) = pos_of(&text, &format!("(f{} v", k * 4), 0);
        let start = Instant::now();
        let r = c.request("textDocument/definition", Client::at(&uri, l, ch + 1));
        defs.push(start.elapsed());
        assert!(r["result"][0]["range"].is_object(), "{r}");
    }
    stats("go to definition", defs);

    let mut completions = Vec::new();
    for k in 0..20 {
        let (l, ch) = pos_of(&text, &format!("let y = addi x {}", k * 20 + 1), 0);
        let start = Instant::now();
        let r = c.request("textDocument/completion", Client::at(&uri, l + 1, 2));
        completions.push(start.elapsed());
        assert!(r["result"].as_array().unwrap().len() > 100, "{ch} {r}");
    }
    stats("completion", completions);

    let mut tokens = Vec::new();
    for _ in 0..10 {
        let start = Instant::now();
        let r = c.request("textDocument/semanticTokens/full", serde_json::json!({ "textDocument": { "uri": uri } }));
        tokens.push(start.elapsed());
        assert!(r["result"]["data"].is_array());
    }
    stats("semantic tokens (whole file)", tokens);

    assert!(c.shutdown().success());
    let _ = std::fs::remove_dir_all(&dir);
    println!();
}

fn main() {
    bench("with-accelerate", true);
    bench("front-end-only", false);
}
