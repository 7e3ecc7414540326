//! Limits of size and resources, as users meet them: memory the system
//! refuses, a memory limit on the process, recursion inside parallel
//! code, deeply nested or very long programs, and internal errors. Each
//! test pins the exact behaviour (exit code, located message, size of the
//! output); how the time grows is measured by `cargo bench --bench
//! frontend` (ratios), not here.

use pmx_driver::{with_stack, Database, Db};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A fresh folder for one test, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("pmx-limits-{}-{name}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("cannot create a temporary folder");
        TempDir(dir)
    }

    fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.0.join(name);
        std::fs::write(&path, text).expect("cannot write a temporary file");
        path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs `pmx ARGS` in `dir` under a shell that first runs `limit` (a
/// `ulimit` command, or nothing); returns exit code, stdout and stderr.
fn pmx_limited(dir: &TempDir, limit: &str, args: &[&str]) -> (i32, String, String) {
    let script = format!("{limit} exec \"$0\" \"$@\"");
    let out = Command::new("sh")
        .arg("-c")
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_pmx"))
        .args(args)
        .arg("--color=never")
        .current_dir(&dir.0)
        // Limits of the interpreter (futhark does not start under ulimit).
        .env("PMX_TARGET", "interp")
        .env_remove("PMX_STDLIB")
        .env_remove("MCORE_STDLIB")
        .output()
        .expect("pmx runs");
    let (stdout, stderr) =
        (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned());
    for bad in ["panicked", "internal error", "RUST_BACKTRACE"] {
        assert!(!stderr.contains(bad), "`{bad}` in the output of pmx {args:?}:\n{stderr}");
    }
    (out.status.code().unwrap_or(-1), stdout, stderr)
}

fn pmx(dir: &TempDir, args: &[&str]) -> (i32, String, String) {
    pmx_limited(dir, "", args)
}

/// About 2 GB of address space: less than the 1 GiB compiler stack, the
/// parallel threads' stacks and the allocator's reservations need.
const ULIMIT: &str = "ulimit -v 2000000 &&";

#[test]
fn a_memory_limit_gives_smaller_stacks_and_located_errors() {
    let dir = TempDir::new("ulimit");
    dir.write(
        "double.mc",
        "recursive let double = lam s. lam n.\n  if eqi n 0 then s else double (concat s s) (subi n 1)\nend\n\
         mexpr\nlength (double (create 1000 (lam i. i)) 60)\n",
    );
    // Checking works (the compiler's stack is smaller).
    let (code, _, stderr) = pmx_limited(&dir, ULIMIT, &["check", "double.mc"]);
    assert_eq!(code, 0, "{stderr}");
    // The sequence outgrows the limit at a `concat`: a located error.
    let (code, _, stderr) = pmx_limited(&dir, ULIMIT, &["run", "double.mc"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.starts_with("error: out of memory: the program asked for "), "{stderr}");
    assert!(stderr.contains("double.mc:2:34") && stderr.contains("in `double`"), "{stderr}");
    // Too deep a program for the smaller stack is reported, not a crash.
    dir.write("deep.mc", &format!("mexpr\n{}1{}\n", "(".repeat(100_000), ")".repeat(100_000)));
    let (code, _, stderr) = pmx_limited(&dir, ULIMIT, &["check", "deep.mc"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("error[E0005]") && stderr.contains("levels deep"), "{stderr}");
}

#[test]
fn recursion_inside_a_parallel_loop_goes_as_deep_as_outside() {
    let dir = TempDir::new("deep-loop");
    // A million frames: more than the parallel threads' old 256 MiB held.
    dir.write(
        "deep.mc",
        "include \"string.mc\"\n\
         recursive let sumTo = lam n. if eqi n 0 then 0 else addi n (sumTo (subi n 1)) end\nmexpr\n\
         let t = tensorCreateCArrayInt [4] (lam i. 0) in\n\
         accelerate (loop 4 (lam i. tensorSetExn t [i] (sumTo 1000000)));\n\
         print (int2string (tensorGetExn t [3]))\n",
    );
    let (code, stdout, stderr) = pmx(&dir, &["run", "deep.mc"]);
    assert_eq!((code, stdout.as_str()), (0, "500000500000"), "{stderr}");
}

/// A program with `accelerate` nested `n` deep.
fn nested_accelerate(n: usize) -> String {
    format!("mexpr\n{}1{}\n", "accelerate (".repeat(n), ")".repeat(n))
}

#[test]
fn deeply_nested_accelerate_is_one_error_with_a_count() {
    let dir = TempDir::new("nested-acc");
    dir.write("acc.mc", &nested_accelerate(5000));
    let (code, _, stderr) = pmx(&dir, &["check", "acc.mc"]);
    assert_eq!(code, 1, "{stderr}");
    assert_eq!(stderr.matches("error[E0401]").count(), 1, "{stderr}");
    assert!(stderr.contains("4999 accelerate expressions are nested in this one in all"), "{stderr}");
    assert!(stderr.ends_with("error: 2 errors found\n"), "{stderr}");
    // The 60 KB line is shown cut down, once per label line.
    assert!(stderr.len() < 3000, "{} bytes:\n{stderr}", stderr.len());
}

#[test]
fn a_long_chain_of_lets_runs() {
    let dir = TempDir::new("lets");
    dir.write("lets.mc", &format!("mexpr\n{}addi x 1\n", "let x = 1 in\n".repeat(80_000)));
    let out = Command::new(env!("CARGO_BIN_EXE_pmx")).arg("run").arg(dir.0.join("lets.mc")).output().expect("runs");
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn nesting_past_the_limit_is_one_error() {
    let dir = TempDir::new("brackets");
    dir.write("b.mc", &format!("mexpr\n{}1{}\n", "[".repeat(260_000), "]".repeat(260_000)));
    let (code, _, stderr) = pmx(&dir, &["check", "b.mc"]);
    assert_eq!(code, 1, "{stderr}");
    assert_eq!(stderr.matches("error[").count(), 1, "{stderr}");
    assert!(stderr.contains("nested more than 250000 levels deep") && stderr.len() < 2000, "{stderr}");
}

#[test]
fn errors_on_a_long_line_are_cut_counted_and_capped() {
    let dir = TempDir::new("long-line");
    let items: Vec<&str> = (0..20_000).map(|i| if i % 2 == 0 { "1" } else { "2.5" }).collect();
    dir.write("list.mc", &format!("mexpr\n[{}]\n", items.join(", ")));
    let (code, _, stderr) = pmx(&dir, &["check", "list.mc"]);
    assert_eq!(code, 1, "{stderr}");
    assert_eq!(stderr.matches("error[E0301]").count(), 3, "{stderr}");
    assert!(stderr.contains("9997 more errors like this one, the next at list.mc:2:29"), "{stderr}");
    assert!(stderr.ends_with("error: 10000 errors found\n"), "{stderr}");
    assert!(stderr.len() < 2000, "{} bytes", stderr.len());
    // Sixty different errors: fifty shown, then a note; `--error-limit`.
    let lines: String = (0..60).map(|i| format!("let v{i} = addi 1 u{i}\n")).collect();
    dir.write("many.mc", &lines);
    let (_, _, stderr) = pmx(&dir, &["check", "many.mc"]);
    assert_eq!(stderr.matches("error[E0201]").count(), 50, "{stderr}");
    assert!(stderr.contains("note: 10 more diagnostics not shown (the limit is 50;"), "{stderr}");
    let (_, _, stderr) = pmx(&dir, &["check", "many.mc", "--error-limit", "0"]);
    assert_eq!(stderr.matches("error[E0201]").count(), 60, "{stderr}");
    let (_, _, stderr) = pmx(&dir, &["check", "many.mc", "--error-limit", "5"]);
    assert_eq!(stderr.matches("error[E0201]").count(), 5, "{stderr}");
}

/// The run of a program that type checking would reject, straight through
/// the evaluator: the value of the wrong type is a bug of pmx (no
/// `unsafeCoerce` ran), reported as an internal error where it happened.
#[test]
fn a_panic_in_the_evaluator_is_a_located_internal_error() {
    let dir = TempDir::new("internal");
    let path = dir.write("bad.mc", "let f = lam s. addi 1 s\nmexpr\nf \"x\"\n");
    let (kind, exit, at) = with_stack(move || {
        let db = Database::default();
        let root = db.load(&path).expect("readable");
        let modules: Vec<&pmx_ast::Module> = pmx_driver::program_modules(&db, root);
        let outcome = pmx_cpu::run(&modules, None, pmx_cpu::Options::default());
        let e = outcome.error.expect("an error");
        let text = root.text(&db).clone();
        (e.kind, outcome.exit_code, text[e.span.range()].to_string())
    });
    assert_eq!((kind, exit, at.as_str()), (pmx_cpu::ErrorKind::Internal, pmx_cpu::INTERNAL_ERROR_EXIT, "f \"x\""));
}

#[test]
fn the_standard_library_is_left_out_of_emit_unless_asked() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let axpy = root.join("examples/axpy.mc");
    let emit = |all: bool| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_pmx"));
        cmd.args(["emit", "--stage", "lifted"]).arg(&axpy).current_dir(root);
        if all {
            cmd.arg("--all");
        }
        String::from_utf8(cmd.output().expect("runs").stdout).expect("UTF-8")
    };
    let (mine, all) = (emit(false), emit(true));
    assert!(mine.starts_with("-- ") && mine.contains("declarations of the standard library are not shown"), "{mine}");
    assert!(mine.contains("let axpy =") && !mine.contains("let printLn"), "{mine}");
    assert!(mine.lines().count() < 100 && all.lines().count() > 1000);
    assert!(all.contains("let printLn") && all.contains("let axpy ="));
}
