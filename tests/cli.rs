//! The `pmx check` command as users and tools see it: exit codes, human
//! and JSON output, unreadable files, includes and the standard library
//! folders.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};

/// A fresh folder of files for one test, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("pmx-cli-{}-{name}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("cannot create a temporary folder");
        // Canonical, so that paths printed by pmx compare equal.
        TempDir(dir.canonicalize().expect("temporary folder"))
    }

    fn path(&self) -> &Path {
        &self.0
    }

    fn write(&self, name: &str, contents: &str) -> PathBuf {
        let path = self.0.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("cannot create a folder");
        }
        std::fs::write(&path, contents).expect("cannot write a temporary file");
        path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `pmx` with the given arguments, run in `dir`, without colours and
/// without standard library folders from the environment.
fn pmx(dir: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pmx"));
    cmd.current_dir(dir)
        .args(args)
        .env_remove("PMX_STDLIB")
        .env_remove("MCORE_STDLIB")
        .env_remove("MCORE_LIBS")
        .env("NO_COLOR", "1");
    cmd
}

fn run(cmd: &mut Command) -> (Option<i32>, String, String) {
    let Output { status, stdout, stderr } = cmd.output().expect("cannot run pmx");
    let (stdout, stderr) =
        (String::from_utf8_lossy(&stdout).into_owned(), String::from_utf8_lossy(&stderr).into_owned());
    assert!(!stderr.contains("panicked") && !stdout.contains("panicked"), "pmx panicked:\n{stderr}");
    (status.code(), stdout, stderr)
}

fn check(dir: &Path, file: &str) -> (Option<i32>, String, String) {
    run(&mut pmx(dir, &["check", file, "--color", "never"]))
}

fn check_json(dir: &Path, file: &str) -> (Option<i32>, Vec<Value>) {
    let (code, stdout, stderr) = run(&mut pmx(dir, &["check", file, "--format", "json"]));
    let value: Value =
        serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("not JSON ({e}):\n{stdout}\nstderr:\n{stderr}"));
    let Value::Array(items) = value else { panic!("not a JSON array:\n{stdout}") };
    (code, items)
}

const VALID: &str = "\
let double = lam x. addi x x
let twice = lam f. lam x. f (f x)
mexpr
utest twice double 1 with 4 in
()
";

// `y` is used: an error in a definition nothing uses is only a warning.
const ILL_TYPED: &str = "\
let x = 1
let y = addi x 'c'
mexpr
y
";

#[test]
fn a_valid_file_checks_silently() {
    let dir = TempDir::new("valid");
    dir.write("ok.mc", VALID);
    let (code, stdout, stderr) = check(dir.path(), "ok.mc");
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stdout, "");
    assert_eq!(stderr, "");
}

#[test]
fn a_type_error_is_reported_with_its_position() {
    let dir = TempDir::new("invalid");
    dir.write("bad.mc", ILL_TYPED);
    let (code, stdout, stderr) = check(dir.path(), "bad.mc");
    assert_eq!(code, Some(1), "{stderr}");
    assert_eq!(stdout, "");
    assert!(stderr.contains("error[E0301]"), "{stderr}");
    // `'c'` is on line 2, column 16.
    assert!(stderr.contains("bad.mc:2:16"), "{stderr}");
    assert!(stderr.contains("error: 1 error found"), "{stderr}");
    // No colour codes when asked for none.
    assert!(!stderr.contains('\u{1b}'), "{stderr}");
}

#[test]
fn json_output_is_an_array_of_diagnostics() {
    let dir = TempDir::new("json");
    dir.write("bad.mc", ILL_TYPED);
    let (code, items) = check_json(dir.path(), "bad.mc");
    assert_eq!(code, Some(1));
    assert_eq!(items.len(), 1, "{items:?}");
    let d = &items[0];
    assert_eq!(d["severity"], "error");
    assert_eq!(d["code"], "E0301");
    assert!(d["message"].as_str().is_some_and(|m| m.contains("Char")), "{d}");
    assert_eq!(d["file"], "bad.mc");
    assert_eq!(d["start"]["line"], 2);
    assert_eq!(d["start"]["column"], 16);
    assert_eq!(d["end"]["line"], 2);
    assert_eq!(d["end"]["column"], 19);
    assert_eq!(d["start"]["offset"], 25);
    assert_eq!(d["end"]["offset"], 28);
    let labels = d["labels"].as_array().expect("labels");
    assert!(!labels.is_empty());
    let primary = labels.iter().find(|l| l["primary"] == true).expect("a primary label");
    assert_eq!(primary["start"], d["start"]);
    assert_eq!(primary["end"], d["end"]);
    assert_eq!(primary["file"], "bad.mc");
    assert!(primary["message"].is_string());
    assert!(d["notes"].is_array());

    // A valid file: an empty array, exit code 0.
    dir.write("ok.mc", VALID);
    let (code, items) = check_json(dir.path(), "ok.mc");
    assert_eq!(code, Some(0));
    assert!(items.is_empty());
}

#[test]
fn json_columns_count_characters() {
    let dir = TempDir::new("json-columns");
    // `é` is two bytes: the column of `'c'` is one less than its byte offset
    // in the line (plus one).
    dir.write("bad.mc", "let x = 1\nlet s = \"é\" let y = addi 1 'c'\n");
    let (_, items) = check_json(dir.path(), "bad.mc");
    assert_eq!(items.len(), 1, "{items:?}");
    let d = &items[0];
    assert_eq!(d["code"], "E0301");
    assert_eq!(d["start"]["line"], 2);
    assert_eq!(d["start"]["column"], 28);
    assert_eq!(d["start"]["offset"], 10 + 28);
}

#[test]
fn a_missing_file_is_a_clear_error() {
    let dir = TempDir::new("missing");
    let (code, stdout, stderr) = check(dir.path(), "nowhere.mc");
    assert_eq!(code, Some(1), "{stderr}");
    assert_eq!(stdout, "");
    assert!(stderr.contains("error[E0103]") && stderr.contains("nowhere.mc"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    // Also with JSON output requested: the message goes to stderr.
    let (code, stdout, stderr) = run(&mut pmx(dir.path(), &["check", "nowhere.mc", "--format", "json"]));
    assert_eq!(code, Some(1));
    assert_eq!(stdout, "");
    assert!(stderr.contains("error[E0103]"), "{stderr}");
    // A folder is not a file.
    std::fs::create_dir(dir.path().join("folder.mc")).expect("cannot create a folder");
    let (code, _, stderr) = check(dir.path(), "folder.mc");
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("error[E0103]"), "{stderr}");
}

#[test]
fn bad_arguments_are_usage_errors() {
    let dir = TempDir::new("usage");
    let (code, _, stderr) = run(&mut pmx(dir.path(), &["check"]));
    assert_eq!(code, Some(2), "{stderr}");
    let (code, _, stderr) = run(&mut pmx(dir.path(), &["check", "x.mc", "--format", "xml"]));
    assert_eq!(code, Some(2), "{stderr}");
    let (code, _, stderr) = run(&mut pmx(dir.path(), &["frobnicate"]));
    assert_eq!(code, Some(2), "{stderr}");
}

#[test]
fn includes_resolve_relative_to_the_including_file() {
    let dir = TempDir::new("includes");
    dir.write("lib/util.mc", "let inc = lam x. addi x 1\n");
    dir.write("lib/more.mc", "include \"util.mc\"\nlet inc2 = lam x. inc (inc x)\n");
    dir.write("main.mc", "include \"lib/more.mc\"\nmexpr\nutest inc2 1 with 3 in ()\n");
    let (code, _, stderr) = check(dir.path(), "main.mc");
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stderr, "");
    // From another working directory.
    let (code, _, stderr) = run(pmx(Path::new("/"), &["check"]).arg(dir.path().join("main.mc")));
    assert_eq!(code, Some(0), "{stderr}");
}

#[test]
fn a_missing_include_is_reported_at_the_include() {
    let dir = TempDir::new("missing-include");
    dir.write("main.mc", "let a = 1\ninclude \"nowhere.mc\"\nmexpr a\n");
    let (code, _, stderr) = check(dir.path(), "main.mc");
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("error[E0101]"), "{stderr}");
    assert!(stderr.contains("main.mc:2:1"), "{stderr}");
    assert!(stderr.contains("nowhere.mc"), "{stderr}");
    let (_, items) = check_json(dir.path(), "main.mc");
    let d = items.iter().find(|d| d["code"] == "E0101").expect("E0101");
    assert_eq!((d["start"]["line"].clone(), d["start"]["column"].clone()), (2.into(), 1.into()));
}

#[test]
fn an_include_cycle_is_reported_at_the_include() {
    let dir = TempDir::new("cycle");
    dir.write("a.mc", "include \"b.mc\"\nlet fromA = 1\n");
    dir.write("b.mc", "let fromB = 2\ninclude \"c.mc\"\n");
    dir.write("c.mc", "\n\ninclude \"a.mc\"\nlet fromC = 3\n");
    let (code, _, stderr) = check(dir.path(), "a.mc");
    assert_eq!(code, Some(1), "{stderr}");
    // Reported once, at the main file's include that enters the cycle.
    assert_eq!(stderr.matches("error[E0102]").count(), 1, "{stderr}");
    assert!(stderr.contains("a.mc:1:1"), "{stderr}");
    assert!(stderr.contains("a.mc -> b.mc -> c.mc -> a.mc"), "{stderr}");
    // A cycle below the main file: reported in the file whose include
    // closes it, at that include.
    dir.write("main.mc", "let x = 1\ninclude \"c.mc\"\nmexpr x\n");
    let (code, _, stderr) = check(dir.path(), "main.mc");
    assert_eq!(code, Some(1), "{stderr}");
    assert_eq!(stderr.matches("error[E0102]").count(), 1, "{stderr}");
    assert!(stderr.contains("c.mc:3:1") && stderr.contains("c.mc -> a.mc -> b.mc -> c.mc"), "{stderr}");
    let (_, items) = check_json(dir.path(), "main.mc");
    let d = items.iter().find(|d| d["code"] == "E0102").expect("E0102");
    assert_eq!(d["file"], "c.mc");
    assert_eq!(d["start"]["line"], 3);
    assert_eq!(d["start"]["column"], 1);
    // A file that includes itself.
    dir.write("self.mc", "include \"self.mc\"\nmexpr 1\n");
    let (code, _, stderr) = check(dir.path(), "self.mc");
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("error[E0102]") && stderr.contains("self.mc:1:1"), "{stderr}");
}

#[test]
fn standard_library_includes_resolve_through_pmx_stdlib() {
    let dir = TempDir::new("pmx-stdlib");
    let std_dir = TempDir::new("pmx-stdlib-folder");
    std_dir.write("mylib.mc", "let fromStd = 42\n");
    dir.write("main.mc", "include \"mylib.mc\"\nmexpr\nutest fromStd with 42 in ()\n");
    let (code, _, stderr) = check(dir.path(), "main.mc");
    assert_eq!(code, Some(1), "without PMX_STDLIB the include is not found: {stderr}");
    assert!(stderr.contains("error[E0101]"), "{stderr}");
    let (code, _, stderr) = run(pmx(dir.path(), &["check", "main.mc"]).env("PMX_STDLIB", std_dir.path()));
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stderr, "");
    // Several folders, as a path list: the first that has the file wins.
    let other = TempDir::new("pmx-stdlib-other");
    let paths = std::env::join_paths([other.path(), std_dir.path()]).expect("path list");
    let (code, _, stderr) = run(pmx(dir.path(), &["check", "main.mc"]).env("PMX_STDLIB", &paths));
    assert_eq!(code, Some(0), "{stderr}");
}

#[test]
fn standard_library_includes_resolve_through_mcore_stdlib() {
    let dir = TempDir::new("mcore-stdlib");
    let std_dir = TempDir::new("mcore-stdlib-folder");
    std_dir.write("sub/mylib.mc", "let fromMcore = 7\n");
    dir.write("main.mc", "include \"sub/mylib.mc\"\nmexpr\nutest fromMcore with 7 in ()\n");
    let (code, _, stderr) = run(pmx(dir.path(), &["check", "main.mc"]).env("MCORE_STDLIB", std_dir.path()));
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stderr, "");
    // PMX_STDLIB comes first.
    let pmx_dir = TempDir::new("mcore-stdlib-pmx");
    pmx_dir.write("sub/mylib.mc", "let fromMcore = 'x'\n");
    let (code, _, stderr) = run(pmx(dir.path(), &["check", "main.mc"])
        .env("MCORE_STDLIB", std_dir.path())
        .env("PMX_STDLIB", pmx_dir.path()));
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("error[E0301]"), "{stderr}");
}

/// Miking's namespaced includes: `"name::path"` is `path` in the folder
/// that `MCORE_LIBS` (`name=folder:...`) gives for `name`; its `stdlib`
/// entry is also a standard library folder.
#[test]
fn namespaced_includes_resolve_through_mcore_libs() {
    let dir = TempDir::new("mcore-libs");
    let lib = TempDir::new("mcore-libs-lib");
    let std_dir = TempDir::new("mcore-libs-std");
    lib.write("sub/util.mc", "let fromLib = 5\n");
    std_dir.write("plain.mc", "let fromStd = 6\n");
    dir.write(
        "main.mc",
        "include \"mylib::sub/util.mc\"\ninclude \"plain.mc\"\nmexpr\nutest addi fromLib fromStd with 11 in ()\n",
    );
    let libs = format!("mylib={}:stdlib={}", lib.path().display(), std_dir.path().display());
    let (code, stdout, stderr) = run(pmx(dir.path(), &["test", "main.mc"]).env("MCORE_LIBS", &libs));
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains("1 passed, 0 failed"), "{stdout}");
    // Without MCORE_LIBS the library is unknown: a located error that says
    // what to set.
    let (code, _, stderr) = check(dir.path(), "main.mc");
    assert_eq!(code, Some(1));
    assert!(stderr.contains("error[E0101]: unknown library `mylib`"), "{stderr}");
    assert!(stderr.contains("main.mc:1:"), "{stderr}");
    assert!(stderr.contains("MCORE_LIBS"), "{stderr}");
}

#[test]
fn a_file_next_to_the_includer_comes_before_the_standard_library() {
    let dir = TempDir::new("local-first");
    let std_dir = TempDir::new("local-first-std");
    std_dir.write("lib.mc", "let v = 'c'\n");
    dir.write("lib.mc", "let v = 1\n");
    dir.write("main.mc", "include \"lib.mc\"\nmexpr addi v 1\n");
    let (code, _, stderr) = run(pmx(dir.path(), &["check", "main.mc"]).env("PMX_STDLIB", std_dir.path()));
    assert_eq!(code, Some(0), "{stderr}");
}

#[test]
fn errors_in_included_files_name_those_files() {
    let dir = TempDir::new("included-errors");
    dir.write("lib.mc", "\nlet broken = addi 1 'c'\n");
    dir.write("main.mc", "include \"lib.mc\"\nmexpr broken\n");
    let (code, _, stderr) = check(dir.path(), "main.mc");
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("error[E0301]") && stderr.contains("lib.mc:2:"), "{stderr}");
    let (_, items) = check_json(dir.path(), "main.mc");
    assert!(items.iter().any(|d| d["file"] == "lib.mc" && d["start"]["line"] == 2), "{items:?}");
}

#[test]
fn a_missing_in_is_reported_at_its_let_once() {
    let dir = TempDir::new("missing-in");
    dir.write("top.mc", "let f = lam x.\n  let y = addi x 1\n  addi y 2\n\nlet g = lam z. f z\nmexpr\ng 1\n");
    let (code, _, stderr) = check(dir.path(), "top.mc");
    assert_eq!(code, Some(1), "{stderr}");
    assert_eq!(stderr.matches("error[").count(), 1, "{stderr}");
    assert!(stderr.contains("error[E0001]: syntax error: this `let` has no `in`") && stderr.contains("top.mc:2:3"));
    dir.write("main.mc", "mexpr\nlet x = 1\nlet y = 2 in\nprint \"let\";\naddi x y\n");
    let (_, _, stderr) = check(dir.path(), "main.mc");
    assert_eq!(stderr.matches("error[").count(), 1, "{stderr}");
    assert!(stderr.contains("this `let` has no `in`") && stderr.contains("main.mc:2:1"), "{stderr}");
}

#[test]
fn an_unbound_name_of_the_standard_library_names_its_include() {
    let dir = TempDir::new("std-hint");
    dir.write("main.mc", "include \"seq.mc\"\nmexpr\nprintLn \"a\";\nlet r = sqrt 2.0 in\nstrJoin \",\" [\"a\"]\n");
    let (code, _, stderr) = check(dir.path(), "main.mc");
    assert_eq!(code, Some(1), "{stderr}");
    for (name, file) in [("printLn", "common.mc"), ("sqrt", "ext/math-ext.mc"), ("strJoin", "string.mc")] {
        let hint = format!("`{name}` is defined in the standard library: add `include \"{file}\"` at the top");
        assert!(stderr.contains(&hint), "{hint}\n{stderr}");
    }
    assert!(!stderr.contains("similar name"), "{stderr}");
}

#[test]
fn a_let_that_calls_itself_is_told_about_recursive() {
    let dir = TempDir::new("recursive-hint");
    dir.write("top.mc", "let f = lam n. if eqi n 0 then 0 else f (subi n 1)\nmexpr\nf 3\n");
    let (code, _, stderr) = check(dir.path(), "top.mc");
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("unbound variable `f`") && stderr.contains("write `recursive let f = ... end`"),
        "{stderr}"
    );
    dir.write("inner.mc", "mexpr\nlet g = lam n. if eqi n 0 then 0 else g (subi n 1) in g 3\n");
    let (_, _, stderr) = check(dir.path(), "inner.mc");
    assert!(stderr.contains("write `recursive let g = ... in ...`"), "{stderr}");
}

/// A second run of an unchanged program finds its compiled code in the
/// cache (`--verbose` says so), and `pmx cache clean` empties the cache.
#[test]
fn compiled_code_is_cached_and_the_cache_can_be_cleaned() {
    let dir = TempDir::new("cache");
    let file = dir.write(
        "a.mc",
        "mexpr\nlet t = tensorCreateCArrayInt [4] (lam. 0) in\naccelerate (loop 4 (lam i. tensorSetExn t [i] i));\ndprint (tensorGetExn t [3])\n",
    );
    let cache = dir.path().join("cache");
    let run_cpu = || {
        run(pmx(dir.path(), &["run", "--target", "cpu", "--verbose", file.to_str().unwrap()])
            .env("PMX_CACHE_DIR", &cache))
    };
    let (code, out, err) = run_cpu();
    assert_eq!((code, out.as_str()), (Some(0), "3"), "{err}");
    assert!(err.contains("compiled in"), "{err}");
    let (_, _, err) = run_cpu();
    assert!(err.contains("found in the cache"), "{err}");
    let (code, out, _) = run(pmx(dir.path(), &["cache", "clean"]).env("PMX_CACHE_DIR", &cache));
    assert_eq!(code, Some(0));
    // The accelerate binding's library, the host code's image and the
    // parses.
    assert!(out.starts_with("removed 3 entries"), "{out}");
    assert_eq!(std::fs::read_dir(&cache).unwrap().count(), 0);
}

/// A program's host code compiles once: the second run loads it from the
/// cache with the same results, a damaged entry is compiled again (and
/// replaced), and a changed program is compiled anew.
#[test]
fn host_code_is_cached_and_a_damaged_entry_is_compiled_again() {
    let dir = TempDir::new("host-cache");
    let source = "include \"string.mc\"\nrecursive let f = lam n. if lti n 2 then n else addi (f (subi n 1)) (f (subi n 2)) end\nmexpr\nprint (concat (int2string (f 20)) \"\\n\");\nprint (strJoin \",\" [\"a\", \"b\"])\n";
    let file = dir.write("fib.mc", source);
    let cache = dir.path().join("cache");
    let go = || run(pmx(dir.path(), &["run", "--verbose", file.to_str().unwrap()]).env("PMX_CACHE_DIR", &cache));
    let host = |err: &str| err.lines().find(|l| l.starts_with("host code:")).unwrap_or_default().to_string();
    let (code, out, err) = go();
    assert_eq!((code, out.as_str()), (Some(0), "6765\na,b"), "{err}");
    assert!(host(&err).contains("(stored in the cache)") && !host(&err).contains(" 0 top-level"), "{err}");
    let (code, out, err) = go();
    assert_eq!((code, out.as_str()), (Some(0), "6765\na,b"), "{err}");
    assert!(host(&err).contains("(from the cache)"), "{err}");
    // Damage the entry: cut its file in half.
    let hosts = || std::fs::read_dir(&cache).unwrap().flatten().filter(|e| e.file_name() != "parse").count();
    let entries: Vec<_> = std::fs::read_dir(&cache).unwrap().flatten().map(|e| e.path()).collect();
    let entries: Vec<_> = entries.into_iter().filter(|p| !p.ends_with("parse")).collect();
    assert_eq!(entries.len(), 1, "{entries:?}");
    let image = entries[0].join("host.image");
    let bytes = std::fs::read(&image).unwrap();
    std::fs::write(&image, &bytes[..bytes.len() / 2]).unwrap();
    let (code, out, err) = go();
    assert_eq!((code, out.as_str()), (Some(0), "6765\na,b"), "{err}");
    assert!(host(&err).contains("(stored in the cache)"), "{err}");
    assert_eq!(std::fs::read(&image).unwrap(), bytes, "the entry is replaced by the same compile");
    // A changed program is another entry.
    dir.write("fib.mc", &source.replace("f 20", "f 21"));
    let (code, out, err) = go();
    assert_eq!((code, out.as_str()), (Some(0), "10946\na,b"), "{err}");
    assert!(host(&err).contains("(stored in the cache)"), "{err}");
    assert_eq!(hosts(), 2);
}

/// Parses are cached: a second run reads them and gives the same output
/// and diagnostics, and a damaged entry is parsed again and replaced.
#[test]
fn parses_are_cached_and_a_damaged_entry_is_parsed_again() {
    let dir = TempDir::new("parse-cache");
    let file = dir.write(
        "p.mc",
        "include \"string.mc\"\nlet unused = lam x. addi x\nmexpr\nprint (strJoin \",\" [\"a\", int2string 42]);\nutest 1 with 2 in ()\n",
    );
    let broken = dir.write("broken.mc", "include \"seq.mc\"\nlet x = (1 +\nmexpr\nx\n");
    let cache = dir.path().join("cache");
    let go = |args: &[&str]| run(pmx(dir.path(), args).env("PMX_CACHE_DIR", &cache));
    let runs = || (go(&["test", file.to_str().unwrap()]), go(&["check", broken.to_str().unwrap()]));
    let first = runs();
    assert_eq!(first.0 .0, Some(1), "{}", first.0 .2);
    assert!(first.0 .1.contains("a,42") && first.0 .1.contains("p.mc:5:1"), "{first:?}");
    assert!(first.1 .0 == Some(1) && first.1 .2.contains("error[E0"), "{first:?}");
    let entries = || {
        let mut e: Vec<_> = std::fs::read_dir(cache.join("parse")).unwrap().flatten().map(|e| e.path()).collect();
        e.sort();
        e
    };
    let stored: Vec<(PathBuf, Vec<u8>)> =
        entries().into_iter().map(|p| (p.clone(), std::fs::read(p).unwrap())).collect();
    // string.mc and the six files it includes, p.mc, broken.mc (seq.mc
    // once); nothing half-written left.
    assert_eq!(stored.len(), 9, "{:?}", entries());
    assert_eq!(runs(), first);
    // Damaged entries: cut, emptied, garbage.
    for (i, (path, bytes)) in stored.iter().enumerate() {
        let damaged = match i % 3 {
            0 => bytes[..bytes.len() / 2].to_vec(),
            1 => Vec::new(),
            _ => b"not a parse".to_vec(),
        };
        std::fs::write(path, damaged).unwrap();
    }
    assert_eq!(runs(), first);
    for (path, bytes) in &stored {
        assert_eq!(&std::fs::read(path).unwrap(), bytes, "{} is replaced", path.display());
    }
    assert_eq!(entries().len(), stored.len());
    // A cache folder that cannot be written: runs as before.
    std::fs::remove_dir_all(&cache).unwrap();
    std::fs::write(&cache, "a file, not a folder").unwrap();
    assert_eq!(runs(), first);
}

/// `pmx emit --stage futhark|cuda` of a program the accelerate passes
/// reject reports their error at its location, not a lowering failure.
#[test]
fn emit_generated_code_reports_accelerate_errors() {
    let dir = TempDir::new("emit-errors");
    dir.write(
        "closure.mc",
        // A function value made at run time (`let inc = addi 1` alone is
        // a known function, which accelerated code calls).
        "mexpr\nlet xs = [1, 2, 3] in\nlet inc = if true then addi 1 else addi 2 in\nlet ys = accelerate (map inc xs) in\n()\n",
    );
    for stage in ["futhark", "cuda"] {
        let (code, stdout, stderr) = run(&mut pmx(dir.path(), &["emit", "--stage", stage, "closure.mc"]));
        assert_eq!(code, Some(1), "{stage}: {stderr}");
        assert!(stdout.is_empty(), "{stage}: nothing is generated:\n{stdout}");
        assert!(stderr.contains("error[E0419]") && stderr.contains("closure.mc:4:26"), "{stage}:\n{stderr}");
        assert!(!stderr.contains("E0430"), "{stage}:\n{stderr}");
    }
}
