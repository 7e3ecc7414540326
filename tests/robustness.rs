//! Robustness of the front end: whatever the input (random bytes, invalid
//! UTF-8, mutated valid programs, very deep nesting, odd files), checking
//! it never panics, never crashes and returns in bounded time.
//!
//! In-memory inputs go through the driver (`Database::set_file_text`),
//! files through the `pmx` binary, which is also how a stack overflow (an
//! abort, not a panic) is caught without taking the test process down.
//! Each test is a trial, the property tests too (proptest's functions
//! called by the harness), and `valid::NAME` one per valid program.

#[path = "support/harness.rs"]
mod harness;

use harness::{per_fixture, stem, trial};
use pmx_driver::{program_diagnostics, with_stack, Database, Db};
use proptest::prelude::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

fn main() {
    let mut trials = vec![
        trial("arbitrary_bytes_never_panic", arbitrary_bytes_never_panic),
        trial("token_soup_never_panics", token_soup_never_panics),
        trial("arbitrary_files_never_crash_the_binary", arbitrary_files_never_crash_the_binary),
        trial("mutated_programs_never_panic", mutated_programs_never_panic),
        trial("mutated_programs_run_without_internal_errors", mutated_programs_run_without_internal_errors),
        trial("invalid_utf8_is_reported_not_lowered", invalid_utf8_is_reported_not_lowered),
        trial("deep_parentheses", deep_parentheses),
        trial("deep_sequences", deep_sequences),
        trial("long_let_chain", long_let_chain),
        trial("deep_lambdas", deep_lambdas),
        trial("deep_else_if", deep_else_if),
        trial("long_application_spine", long_application_spine),
        trial("deep_patterns", deep_patterns),
        trial("deep_records_and_types", deep_records_and_types),
        trial("wide_programs", wide_programs),
        trial("too_deep_is_reported", too_deep_is_reported),
        trial("odd_files", odd_files),
        trial("a_file_that_includes_itself_or_a_folder", a_file_that_includes_itself_or_a_folder),
    ];
    let valid: Vec<PathBuf> = valid_programs().into_iter().map(|(p, _)| p).collect();
    // `pass/NAME` or `types/NAME`: the two folders may share a name.
    let name = |p: &PathBuf| {
        format!("{}/{}", p.parent().and_then(Path::file_name).unwrap_or_default().to_string_lossy(), stem(p))
    };
    trials.extend(per_fixture("valid", valid, name, |p| stays_valid_unmutated(&p)));
    harness::run(trials)
}

/// How long one small input may take before it counts as a hang. Far above
/// what any of them needs (milliseconds), so that a slow, loaded CI
/// machine running a debug build does not make the tests flaky.
const HANG_LIMIT: Duration = Duration::from_secs(30);

/// Runs `f` on the compiler's big stack, failing the test if it panics or
/// does not finish within [`HANG_LIMIT`] (the stuck thread is abandoned).
fn bounded<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    let start = Instant::now();
    std::thread::Builder::new()
        .name("robustness-watchdog".into())
        .spawn(move || {
            // A panic drops `tx`, which the receiver sees as a disconnect.
            let _ = tx.send(with_stack(f));
        })
        .expect("cannot start a thread");
    match rx.recv_timeout(HANG_LIMIT) {
        Ok(v) => v,
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("{what}: no result after {:?} (hang?)", start.elapsed()),
        Err(mpsc::RecvTimeoutError::Disconnected) => panic!("{what}: the front end panicked"),
    }
}

/// Checks `text` as the file at `path` (kept in memory; its includes are
/// read from disk) and returns the number of diagnostics. Also checks that
/// every span of every diagnostic is a range of whole characters of its
/// file, and renders the diagnostics as `pmx check` would (both ways).
fn check_text_at(path: &Path, text: String) -> usize {
    let path = path.to_path_buf();
    let shown: String = text.chars().take(200).collect();
    bounded(&format!("checking {shown:?}"), move || {
        let mut db = Database::default();
        let f = db.set_file_text(&path, text);
        let diagnostics = program_diagnostics(&db, f);
        for d in diagnostics {
            for label in std::iter::once(&d.primary).chain(&d.secondary) {
                let span = label.span;
                if span.is_builtin() {
                    continue;
                }
                let file = db.file(span.file).expect("a diagnostic names a known file");
                let text = file.text(&db);
                assert!(
                    span.start <= span.end
                        && text.is_char_boundary(span.start as usize)
                        && text.is_char_boundary(span.end as usize),
                    "{} {:?}: the span {}..{} is not a range of characters of a file of {} bytes",
                    d.code,
                    d.message,
                    span.start,
                    span.end,
                    text.len()
                );
            }
        }
        let _ = pmx::render::human_to_string(&db, diagnostics);
        let _ = pmx::render::json_value(&db, diagnostics);
        diagnostics.len()
    })
}

fn check_text(text: String) -> usize {
    check_text_at(Path::new("/virtual/x.mc"), text)
}

// ---------------------------------------------------------------------
// Temporary files and the binary.

/// A fresh, empty folder for one test, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("pmx-robustness-{}-{name}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("cannot create a temporary folder");
        TempDir(dir)
    }

    fn write(&self, name: &str, contents: impl AsRef<[u8]>) -> PathBuf {
        let path = self.0.join(name);
        std::fs::write(&path, contents).expect("cannot write a temporary file");
        path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `pmx check FILE` (plain output, no colours, no standard library from
/// the environment).
fn pmx_check(file: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pmx"))
        .arg("check")
        .arg(file)
        .args(["--color", "never"])
        .env_remove("PMX_STDLIB")
        .env_remove("MCORE_STDLIB")
        .output()
        .expect("cannot run pmx")
}

/// Asserts that `pmx check` ended normally (exit code 0 or 1, not killed by
/// a signal such as the abort of a stack overflow) and did not panic.
fn assert_clean_exit(what: &str, out: &Output) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let tail: String = stderr.chars().rev().take(2000).collect::<Vec<_>>().into_iter().rev().collect();
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{what}: pmx check ended with {:?}\nstderr (end): {tail}",
        out.status
    );
    for bad in ["panicked", "overflowed its stack", "RUST_BACKTRACE", "internal error"] {
        assert!(
            !stderr.contains(bad) && !stdout.contains(bad),
            "{what}: output mentions `{bad}`\nstderr (end): {tail}"
        );
    }
}

// ---------------------------------------------------------------------
// Arbitrary input.

/// Tokens of MExpr (and some that are not), for inputs that get past the
/// first few characters of the parser more often than random bytes do.
const TOKENS: &[&str] = &[
    "let",
    "in",
    "lam",
    ".",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ",",
    ";",
    "=",
    "->",
    "match",
    "with",
    "then",
    "else",
    "if",
    "|",
    "&",
    "!",
    "++",
    "\"x\"",
    "'c'",
    "1",
    "1.5",
    "--",
    "/-",
    "-/",
    "recursive",
    "end",
    "type",
    "con",
    "utest",
    "external",
    "mexpr",
    "include",
    "switch",
    "case",
    "all",
    ":",
    "_",
    "x",
    "f",
    "K",
    "Int",
    "#var\"a\"",
    "'\\n'",
    "\"\\q\"",
    "-1",
    "1e5",
    "99999999999999999999",
    "using",
    "never",
    "true",
    "false",
    "lang",
    "use",
    "Tensor",
    "\n",
    " ",
    "\t",
    "\u{0}",
    "é",
    "\u{feff}",
];

fn token_soup() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            4 => prop::sample::select(TOKENS).prop_map(|t| t.to_string()),
            1 => any::<char>().prop_map(|c| c.to_string()),
        ],
        0..150,
    )
    .prop_map(|tokens| tokens.join(" "))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

    /// Arbitrary bytes, as the text of an in-memory file (invalid UTF-8
    /// converted lossily, as an editor would).
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..600)) {
        check_text(String::from_utf8_lossy(&bytes).into_owned());
    }

    /// Arbitrary sequences of tokens.
    fn token_soup_never_panics(text in token_soup()) {
        check_text(text);
    }
}

proptest! {
    // Each case starts the binary: fewer cases.
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    /// Arbitrary bytes in a file, read by `pmx check`: text that is not
    /// UTF-8 is reported as unreadable, anything else is checked.
    fn arbitrary_files_never_crash_the_binary(bytes in prop::collection::vec(any::<u8>(), 0..400)) {
        let dir = TempDir::new("bytes");
        let file = dir.write("x.mc", &bytes);
        let out = pmx_check(&file);
        assert_clean_exit("random file", &out);
        if std::str::from_utf8(&bytes).is_err() {
            let stderr = String::from_utf8_lossy(&out.stderr);
            prop_assert_eq!(out.status.code(), Some(1));
            prop_assert!(stderr.contains("error[E0103]") && stderr.contains("not valid UTF-8"), "{}", stderr);
        }
    }
}

fn invalid_utf8_is_reported_not_lowered() {
    let dir = TempDir::new("utf8");
    // A lone continuation byte, a truncated sequence, an overlong encoding
    // and a surrogate, each inside otherwise valid code.
    for (i, bytes) in [
        &b"let x = 1\x80\nmexpr x"[..],
        b"let s = \"\xe2\x82\"",
        b"mexpr \xc0\xaf",
        b"let \xed\xa0\x80 = 1",
        b"\xff\xfe",
    ]
    .iter()
    .enumerate()
    {
        let file = dir.write(&format!("bad{i}.mc"), bytes);
        let out = pmx_check(&file);
        assert_clean_exit("invalid UTF-8", &out);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(stderr.contains("error[E0103]") && stderr.contains("not valid UTF-8"), "{stderr}");
        // Through the driver: the file is not loaded at all.
        let path = file.clone();
        let loaded = with_stack(move || Database::default().load(&path).is_ok());
        assert!(!loaded);
    }
    // An include of a file that is not UTF-8 is an error at the include.
    dir.write("bad.mc", b"let x = \xff");
    let main = dir.write("main.mc", "include \"bad.mc\"\nmexpr 1\n");
    let out = pmx_check(&main);
    assert_clean_exit("include of invalid UTF-8", &out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("error[E0103]") && stderr.contains("main.mc:1:1"), "{stderr}");
}

// ---------------------------------------------------------------------
// Mutations of valid programs.

/// The valid programs of the check tests (read now, as others add them),
/// with their paths so that their includes resolve.
fn valid_programs() -> Vec<(PathBuf, Vec<u8>)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/check");
    let mut programs = Vec::new();
    for dir in ["pass", "types"] {
        let Ok(entries) = std::fs::read_dir(root.join(dir)) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.extension().is_some_and(|x| x == "mc") {
                if let Ok(bytes) = std::fs::read(&path) {
                    programs.push((path, bytes));
                }
            }
        }
    }
    programs.sort();
    assert!(!programs.is_empty(), "no valid programs under {}", root.display());
    programs
}

#[derive(Clone, Debug)]
enum Mutation {
    /// Deletes `len` bytes at `at`.
    Delete { at: u32, len: usize },
    /// Inserts a copy of `len` bytes at `at` right after them.
    Duplicate { at: u32, len: usize },
    /// Inserts a token, with or without spaces around it.
    Insert { at: u32, token: &'static str, spaced: bool },
    /// Swaps two ranges of `len` bytes.
    Swap { a: u32, b: u32, len: usize },
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<u32>(), 0usize..60).prop_map(|(at, len)| Mutation::Delete { at, len }),
        (any::<u32>(), 0usize..60).prop_map(|(at, len)| Mutation::Duplicate { at, len }),
        (any::<u32>(), prop::sample::select(TOKENS), any::<bool>()).prop_map(|(at, token, spaced)| Mutation::Insert {
            at,
            token,
            spaced
        }),
        (any::<u32>(), any::<u32>(), 1usize..40).prop_map(|(a, b, len)| Mutation::Swap { a, b, len }),
    ]
}

fn apply(text: &mut Vec<u8>, m: &Mutation) {
    let pos = |at: u32, len: usize| at as usize % (len + 1);
    match *m {
        Mutation::Delete { at, len } => {
            let start = pos(at, text.len());
            let end = (start + len).min(text.len());
            text.drain(start..end);
        }
        Mutation::Duplicate { at, len } => {
            let start = pos(at, text.len());
            let end = (start + len).min(text.len());
            let copy = text[start..end].to_vec();
            text.splice(end..end, copy);
        }
        Mutation::Insert { at, token, spaced } => {
            let at = pos(at, text.len());
            let token = if spaced { format!(" {token} ") } else { token.to_string() };
            text.splice(at..at, token.into_bytes());
        }
        Mutation::Swap { a, b, len } => {
            if text.len() < 2 * len {
                return;
            }
            let (mut x, mut y) = (pos(a, text.len() - len), pos(b, text.len() - len));
            if x > y {
                std::mem::swap(&mut x, &mut y);
            }
            if x + len > y {
                return; // overlapping
            }
            let first = text[x..x + len].to_vec();
            let second = text[y..y + len].to_vec();
            text.splice(y..y + len, first);
            text.splice(x..x + len, second);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 600, ..ProptestConfig::default() })]

    /// Valid programs, a little broken: deleted, duplicated and swapped
    /// ranges, inserted tokens. Byte ranges can split characters; the text
    /// is converted lossily.
    fn mutated_programs_never_panic(
        pick in any::<prop::sample::Index>(),
        mutations in prop::collection::vec(mutation(), 1..5),
    ) {
        let programs = valid_programs();
        let (path, original) = &programs[pick.index(programs.len())];
        let mut text = original.clone();
        for m in &mutations {
            apply(&mut text, m);
        }
        check_text_at(path, String::from_utf8_lossy(&text).into_owned());
    }
}

// ---------------------------------------------------------------------
// Running mutated programs: whatever a mutation makes of a program that
// runs, `pmx run` ends with its result, a diagnostic or a run-time error,
// never an internal error (a bug in pmx, exit code 101) or a crash.

/// The programs of the run tests and the examples (read now).
fn runnable_programs() -> Vec<(PathBuf, Vec<u8>)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut programs = Vec::new();
    for dir in ["tests/run", "tests/run/debug", "examples"] {
        let Ok(entries) = std::fs::read_dir(root.join(dir)) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.extension().is_some_and(|x| x == "mc") {
                if let Ok(bytes) = std::fs::read(&path) {
                    programs.push((path, bytes));
                }
            }
        }
    }
    programs.sort();
    assert!(!programs.is_empty(), "no runnable programs");
    programs
}

/// How long one run of a mutated program may take: a mutation can make a
/// loop endless, which is the program's business, so the run is stopped.
const RUN_LIMIT: Duration = Duration::from_secs(10);

/// `pmx run FILE` with a memory limit (a mutation can make a huge
/// sequence) and [`RUN_LIMIT`]; its exit code (`None`: stopped or killed
/// by a signal) and the end of its standard error.
fn pmx_run_bounded(dir: &TempDir, file: &Path) -> (Option<i32>, bool, String) {
    let err_path = dir.0.join("stderr.txt");
    let err = std::fs::File::create(&err_path).expect("cannot create a temporary file");
    let mut child = Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 4000000 && exec \"$0\" run --color never \"$1\"")
        .arg(env!("CARGO_BIN_EXE_pmx"))
        .arg(file)
        // The interpreter is what this fuzzes (native code would compile
        // each mutated program, and futhark does not start under ulimit).
        .env("PMX_TARGET", "interp")
        .env_remove("PMX_STDLIB")
        .env_remove("MCORE_STDLIB")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(err)
        .spawn()
        .expect("cannot run pmx");
    let start = Instant::now();
    let (status, stopped) = loop {
        if let Some(status) = child.try_wait().expect("cannot wait for pmx") {
            break (Some(status), false);
        }
        if start.elapsed() > RUN_LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            break (None, true);
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let stderr = std::fs::read(&err_path).unwrap_or_default();
    let tail = String::from_utf8_lossy(&stderr[stderr.len().saturating_sub(4000)..]).into_owned();
    (status.and_then(|s| s.code()), stopped, tail)
}

proptest! {
    // Each case starts the binary and may run for a while: few cases.
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    fn mutated_programs_run_without_internal_errors(
        pick in any::<prop::sample::Index>(),
        mutations in prop::collection::vec(mutation(), 1..4),
    ) {
        let programs = runnable_programs();
        let (path, original) = &programs[pick.index(programs.len())];
        let mut text = original.clone();
        for m in &mutations {
            apply(&mut text, m);
        }
        let dir = TempDir::new("run");
        let file = dir.write("mutated.mc", &text);
        let (code, stopped, stderr) = pmx_run_bounded(&dir, &file);
        let what = format!("{} mutated by {mutations:?}", path.display());
        prop_assert!(stopped || code.is_some(), "{what}: killed by a signal\n{stderr}");
        prop_assert!(code != Some(101), "{what}: exit code 101\n{stderr}");
        for bad in ["internal error", "panicked", "overflowed its stack", "RUST_BACKTRACE"] {
            prop_assert!(!stderr.contains(bad), "{what}: `{bad}` in the output\n{stderr}");
        }
    }
}

/// A program the mutation test starts from checks cleanly (the same way,
/// in memory); otherwise it would test nothing new.
fn stays_valid_unmutated(path: &Path) {
    let bytes = std::fs::read(path).expect("readable");
    let text = String::from_utf8(bytes).expect("fixtures are UTF-8");
    assert_eq!(check_text_at(path, text), 0, "{} has diagnostics", path.display());
}

// ---------------------------------------------------------------------
// Deep nesting, through the binary (a stack overflow aborts the process).

/// Checks a generated program with `pmx check`; returns its stderr.
fn check_deep(name: &str, text: String, expect_ok: bool) -> String {
    let dir = TempDir::new(name);
    let file = dir.write(&format!("{name}.mc"), text);
    let start = Instant::now();
    let out = pmx_check(&file);
    assert_clean_exit(name, &out);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    if expect_ok {
        assert_eq!(out.status.code(), Some(0), "{name}: {}", &stderr[..stderr.len().min(2000)]);
        assert!(stderr.is_empty() && out.stdout.is_empty(), "{name}: unexpected output");
    }
    // Generous: in a debug build these take a second or two.
    assert!(start.elapsed() < Duration::from_secs(120), "{name} took {:?}", start.elapsed());
    stderr
}

const DEEP: usize = 100_000;

fn deep_parentheses() {
    check_deep("parens", format!("let x = {}1{}\n", "(".repeat(DEEP), ")".repeat(DEEP)), true);
}

fn deep_sequences() {
    check_deep("brackets", format!("let x = {}1{}\n", "[".repeat(DEEP), "]".repeat(DEEP)), true);
}

fn long_let_chain() {
    check_deep("lets", format!("mexpr\n{}a\n", "let a = 1 in\n".repeat(DEEP)), true);
}

fn deep_lambdas() {
    check_deep("lams", format!("let f = {}x\n", "lam x. ".repeat(DEEP)), true);
}

fn deep_else_if() {
    check_deep("ifs", format!("let x = {}1\n", "if true then 1 else ".repeat(DEEP)), true);
}

fn long_application_spine() {
    // `f 1 1 1 ...`: applications nest to the left.
    check_deep("app", format!("let f = never\nlet x = f{}\n", " 1".repeat(DEEP)), true);
}

fn deep_patterns() {
    let seq = format!("let f = lam x. match x with {}a{} then 1 else 2\n", "[".repeat(DEEP), "]".repeat(DEEP));
    check_deep("seq_pattern", seq, true);
    let con = format!(
        "type T\ncon K : T -> T\nlet f = lam x. match x with {}a{} then 1 else 2\n",
        "K (".repeat(DEEP),
        ")".repeat(DEEP)
    );
    check_deep("con_pattern", con, true);
}

fn deep_records_and_types() {
    check_deep("records", format!("let x = {}1{}\n", "{a = ".repeat(DEEP), "}".repeat(DEEP)), true);
    check_deep("arrow_type", format!("let x : {}Int = never\n", "Int -> ".repeat(DEEP)), true);
}

fn wide_programs() {
    // Many fields, elements and bindings in one construct: the checks for
    // repeated labels and names must not compare every pair.
    let n = 100_000;
    let fields: Vec<String> = (0..n).map(|i| format!("f{i} = {i}")).collect();
    check_deep("wide_record", format!("let x = {{{}}}\n", fields.join(", ")), true);
    check_deep("wide_tuple", format!("let x = ({})\n", vec!["1"; n].join(", ")), true);
    let binders: Vec<String> = (0..n).map(|i| format!("a{i}")).collect();
    let pattern = format!("let f = lam x. match x with ({}) then a0 else 0\n", binders.join(", "));
    check_deep("wide_pattern", pattern, true);
    let group: String = (0..n).map(|i| format!("let f{i} = lam x. x\n")).collect();
    check_deep("wide_recursive", format!("recursive\n{group}end\n"), true);
}

fn too_deep_is_reported() {
    // Over the syntax crate's limit (250,000 levels): a diagnostic, not a
    // crash.
    let n = 300_000;
    let stderr = check_deep("too_deep", format!("let x = {}1{}\n", "(".repeat(n), ")".repeat(n)), false);
    assert!(stderr.contains("error[E0005]") && stderr.contains("nested"), "{}", &stderr[..stderr.len().min(2000)]);
}

// ---------------------------------------------------------------------
// Odd files.

fn odd_files() {
    let long_line = "a".repeat(1 << 20);
    let cases: Vec<(&str, String)> = vec![
        ("unclosed block comment", "let x = 1\n/- never closed\nmexpr x".to_string()),
        ("only a comment opener", "/-".to_string()),
        ("nested unclosed comment", "/- /- -/".to_string()),
        ("a NUL byte", "let x = 1\u{0}\nmexpr x".to_string()),
        ("only NUL", "\u{0}".to_string()),
        ("a 1 MB line", long_line.clone()),
        ("a 1 MB identifier", format!("let x = {long_line}\n")),
        ("a 1 MB string", format!("let x = \"{long_line}\"\n")),
        ("empty", String::new()),
        ("only mexpr", "mexpr".to_string()),
        ("only whitespace", " \n\t\r\n ".to_string()),
        ("a byte order mark", "\u{feff}mexpr 1".to_string()),
        ("only a line comment", "-- just a comment".to_string()),
        ("an unterminated string", "let x = \"abc".to_string()),
        ("an unterminated char", "let x = 'a".to_string()),
        ("a bad escape in a char", "let x = '\\é'".to_string()),
        ("a bad escape in a string", "let x = \"\\é\"".to_string()),
        ("a bad escape in a name", "let #var\"\\é\" = 1".to_string()),
        ("CR line ends", "let x = 1\r\rmexpr\rx".to_string()),
        ("lone surrogate replacement", "let x = \u{fffd}".to_string()),
    ];
    for (what, text) in cases {
        let n = check_text(text.clone());
        if what == "empty" || what == "only whitespace" || what == "only a line comment" {
            assert_eq!(n, 0, "{what}");
        }
        // And through the binary, which also renders the diagnostics.
        let dir = TempDir::new("odd");
        let file = dir.write("odd.mc", &text);
        assert_clean_exit(what, &pmx_check(&file));
        let json = Command::new(env!("CARGO_BIN_EXE_pmx"))
            .arg("check")
            .arg(&file)
            .args(["--format", "json"])
            .output()
            .expect("cannot run pmx");
        assert_clean_exit(what, &json);
    }
}

fn a_file_that_includes_itself_or_a_folder() {
    let dir = TempDir::new("self");
    std::fs::create_dir(dir.0.join("folder.mc")).expect("cannot create a folder");
    let file = dir.write("me.mc", "include \"me.mc\"\ninclude \"folder.mc\"\ninclude \"\"\nmexpr 1\n");
    let out = pmx_check(&file);
    assert_clean_exit("self include", &out);
    assert_eq!(out.status.code(), Some(1));
}
