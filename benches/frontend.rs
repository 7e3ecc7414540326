//! Front-end throughput: generates programs of 10k, 20k and 40k lines and
//! measures parse + name resolution + type inference through the driver's
//! queries (a fresh database each run, so nothing is cached). Prints lines
//! per second; run with `cargo bench --bench frontend`.

use pmx_driver::{program_diagnostics, with_stack, Database};
use std::path::Path;
use std::time::Instant;

#[path = "common/units.rs"]
mod units;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// A program of at least `lines` lines of generated units.
fn program_with(lines: usize, accelerate: bool) -> String {
    let mut src = String::new();
    let mut i = 0;
    let mut count = 0;
    while count < lines {
        let u = units::unit(i, accelerate);
        count += u.lines().count();
        src.push_str(&u);
        i += 1;
    }
    src.push_str("mexpr\nf0 1 [2, 3]\n");
    src
}

fn program(lines: usize) -> String {
    program_with(lines, false)
}

fn main() {
    pmx::alloc::install();
    if std::env::args().any(|a| a == "growth") {
        // `cargo bench --bench frontend -- growth`: only the growth table.
        growth();
        return;
    }
    front_end(false);
    front_end(true);
    with_accelerate();
    growth();
}

/// Seconds for `pmx check` of `src` (front end and accelerate passes), or
/// with `run`, for running it too; the best of three.
fn time_of(src: &str, run: bool) -> f64 {
    let mut best = f64::MAX;
    for _ in 0..3 {
        let src = src.to_string();
        let secs = with_stack(move || {
            let mut db = Database::new(Vec::new());
            let file = db.set_file_text(Path::new("/bench/growth.mc"), src);
            let start = Instant::now();
            let diags = program_diagnostics(&db, file);
            if run {
                assert!(diags.is_empty(), "{:?}", diags.first());
                let modules: Vec<&pmx_ast::Module> = pmx_driver::program_modules(&db, file);
                let outcome = pmx_cpu::run(&modules, None, pmx_cpu::Options::default());
                assert_eq!(outcome.exit_code, 0);
            }
            start.elapsed().as_secs_f64()
        });
        best = best.min(secs);
    }
    best
}

/// Programs that grow in one direction, each at a small size and ten times
/// that: the ratio of the times is about 10 when the time grows linearly
/// (100 would be quadratic).
fn growth() {
    println!();
    println!("growth: time at n and at 10n (a ratio near 10 is linear)");
    println!("{:<44} {:>8} {:>10} {:>10} {:>7}", "program", "n", "ms at n", "ms at 10n", "ratio");
    type Case = (&'static str, usize, bool, fn(usize) -> String);
    let cases: [Case; 4] = [
        ("check: `accelerate (` nested n deep", 2_000, false, |n| {
            format!("mexpr\n{}1{}\n", "accelerate (".repeat(n), ")".repeat(n))
        }),
        ("run: n `let x = 1 in` in a chain", 8_000, true, |n| format!("mexpr\n{}x\n", "let x = 1 in\n".repeat(n))),
        ("check: `lam x. [[..x..]]`, n deep", 20_000, false, |n| {
            format!("mexpr\nlam x. {}x{}\n", "[".repeat(n), "]".repeat(n))
        }),
        ("check: `[[..1..]]`, n deep (10n past the limit)", 26_000, false, |n| {
            format!("mexpr\n{}1{}\n", "[".repeat(n), "]".repeat(n))
        }),
    ];
    for (what, n, run, make) in cases {
        let small = time_of(&make(n), run);
        let large = time_of(&make(10 * n), run);
        println!("{:<44} {:>8} {:>10.1} {:>10.1} {:>7.1}", what, n, small * 1e3, large * 1e3, large / small);
    }
}

/// `pmx check` on programs with an accelerate expression per 100 lines:
/// the front end and every accelerate pass (lifting, extraction,
/// classification, well-formedness).
fn with_accelerate() {
    println!();
    println!(
        "check with accelerate passes (one accelerate per ~100 lines); large files are parsed in parts on every core"
    );
    println!("{:>8} {:>12} {:>10} {:>14}", "lines", "accelerates", "best ms", "lines/s");
    for lines in [10_000, 20_000, 40_000] {
        let src = program_with(lines, true);
        let n = src.lines().count();
        let accs = src.matches("accelerate (").count();
        let mut best = f64::MAX;
        for _ in 0..3 {
            let src = src.clone();
            let secs = with_stack(move || {
                let mut db = Database::new(Vec::new());
                let file = db.set_file_text(Path::new("/bench/accelerated.mc"), src);
                let start = Instant::now();
                let diags = program_diagnostics(&db, file);
                let secs = start.elapsed().as_secs_f64();
                assert!(diags.is_empty(), "generated program has errors: {:?}", diags.first());
                secs
            });
            best = best.min(secs);
        }
        println!("{:>8} {:>12} {:>10.1} {:>14.0}", n, accs, best * 1e3, n as f64 / best);
    }
}

/// With `whole`, each file is parsed whole on one thread, keeping its tree
/// (as the language server does); otherwise large files are parsed in parts
/// on every core (as `pmx check` does).
fn front_end(whole: bool) {
    println!();
    if whole {
        println!("front end (parse + names + types); files parsed whole on one thread, as in the language server");
    } else {
        println!("front end (parse + names + types); large files parsed in parts on every core, as in `pmx check`");
    }
    println!("{:>8} {:>10} {:>12} {:>14}", "lines", "bytes", "best ms", "lines/s");
    for lines in [10_000, 20_000, 40_000] {
        let src = program(lines);
        let n = src.lines().count();
        let mut best = f64::MAX;
        for _ in 0..5 {
            let src = src.clone();
            let secs = with_stack(move || {
                let mut db = Database::new(Vec::new());
                if whole {
                    db.enable_incremental_parsing();
                }
                let file = db.set_file_text(Path::new("/bench/program.mc"), src);
                if std::env::var_os("PMX_BENCH_PHASES").is_some() {
                    let t0 = Instant::now();
                    let tree = pmx_syntax::parse_tree(file.text(&db));
                    let tp = t0.elapsed().as_secs_f64();
                    drop(tree);
                    eprintln!("tree-sitter alone {:.1} ms", tp * 1e3);
                    let start = Instant::now();
                    pmx_driver::parse_file(&db, file);
                    let t1 = start.elapsed().as_secs_f64();
                    pmx_driver::check_file(&db, file);
                    let t2 = start.elapsed().as_secs_f64();
                    eprintln!("parse {:.1} ms, names and types {:.1} ms", t1 * 1e3, (t2 - t1) * 1e3);
                    return t2;
                }
                let start = Instant::now();
                let diags = program_diagnostics(&db, file);
                let secs = start.elapsed().as_secs_f64();
                assert!(diags.is_empty(), "generated program has errors: {:?}", diags.first());
                secs
            });
            best = best.min(secs);
        }
        println!("{:>8} {:>10} {:>12.1} {:>14.0}", n, src.len(), best * 1e3, n as f64 / best);
    }
}
