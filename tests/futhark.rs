//! Generated Futhark is judged by the real compiler: for every test
//! program with Futhark-class accelerate code, `pmx emit --stage futhark`
//! is a snapshot (`tests/futhark/snapshots/`), passes `futhark check`, and
//! the program run with `--target cpu` (Futhark's multicore backend
//! through its C API) behaves as in debug mode. Without `futhark`
//! (`PMX_FUTHARK`, then `PATH`) the tests that need it say they were
//! skipped (their trials ignored). One trial per program and check:
//! `snapshots::NAME`, `futhark_check::NAME`, `cpu::NAME`, and
//! `on_a_gpu::NAME` (ignored: it needs a GPU).

#[path = "support/fixtures.rs"]
mod fixtures;
#[path = "support/harness.rs"]
mod harness;
#[path = "support/process.rs"]
mod process;

use fixtures::name;
use harness::{needing, per_fixture, trial};
use libtest_mimic::Arguments;
use process::pmx;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Utests passed and programs compared on a GPU, for the summary line that
/// `benches/gpu_check.sh` reads.
static GPU_UTESTS: AtomicUsize = AtomicUsize::new(0);
static GPU_RAN: AtomicUsize = AtomicUsize::new(0);

fn main() {
    let programs = programs();
    assert!(programs.len() >= 20, "the Futhark-class fixtures are found");
    let pname = |p: &PathBuf| name(p);
    let mut trials = per_fixture("snapshots", programs.clone(), pname, |p| generated_futhark_snapshot(&p));
    // The checks that need Futhark, once per compiler tested.
    for (label, found) in compilers() {
        let at = |group: &str| if label.is_empty() { group.to_string() } else { format!("{group}@{label}") };
        let futhark = found.as_ref().map(|f| f.program.clone()).map_err(Clone::clone);
        let mut with_futhark = Vec::new();
        let f = futhark.clone().ok();
        with_futhark.extend(per_fixture(&at("futhark_check"), programs.clone(), pname, move |p| {
            passes_futhark_check(&p, f.as_deref())
        }));
        let f = futhark.clone().ok();
        with_futhark.extend(per_fixture(&at("cpu"), programs.clone(), pname, move |p| {
            runs_as_in_debug_mode(&p, "cpu", f.as_deref());
        }));
        let f = futhark.clone().ok();
        with_futhark
            .push(trial(at("failures_in_futhark_code_are_located"), move || check_failures("cpu", f.as_deref())));
        if let Ok(found) = &found {
            let found = found.clone();
            with_futhark.push(trial(at("inputs_cross_without_a_copy_where_futhark_wraps_them"), move || {
                inputs_cross_without_a_copy_where_futhark_wraps_them(&found)
            }));
        }
        trials.extend(needing(&futhark.map(|_| ()), with_futhark));
    }
    trials.push(trial(
        "missing_futhark_is_an_error_for_an_explicit_target",
        missing_futhark_is_an_error_for_an_explicit_target,
    ));
    trials.push(trial(
        "auto_without_futhark_runs_in_the_interpreter_with_one_note",
        auto_without_futhark_runs_in_the_interpreter_with_one_note,
    ));
    trials.push(trial(
        "a_futhark_of_an_unsupported_version_is_a_clear_error",
        a_futhark_of_an_unsupported_version_is_a_clear_error,
    ));
    trials.push(trial(
        "a_failure_of_futhark_itself_runs_the_bindings_in_the_interpreter",
        a_failure_of_futhark_itself_runs_the_bindings_in_the_interpreter,
    ));
    trials.push(trial(
        "unchecked_futhark_code_drops_the_checks_and_runs_the_same",
        unchecked_futhark_code_drops_the_checks_and_runs_the_same,
    ));
    // On a machine with a GPU (`cargo test --release --test futhark --
    // --ignored --nocapture on_a_gpu`, or `benches/gpu_check.sh`): every
    // Futhark-class program with `--target gpu` (Futhark's `cuda`
    // backend) as in debug mode, and the failures located as on the CPU.
    let mut gpu = per_fixture("on_a_gpu", programs, pname, |p| {
        gpu_usable();
        GPU_UTESTS.fetch_add(runs_as_in_debug_mode(&p, "gpu", None), Ordering::Relaxed);
        GPU_RAN.fetch_add(1, Ordering::Relaxed);
    });
    gpu.push(trial("on_a_gpu::failures_are_located", || {
        gpu_usable();
        check_failures("gpu", None);
    }));
    trials.extend(harness::on_a_gpu(gpu));
    let conclusion = libtest_mimic::run(&Arguments::from_args(), trials);
    let ran = GPU_RAN.load(Ordering::Relaxed);
    if ran > 0 {
        let utests = GPU_UTESTS.load(Ordering::Relaxed);
        println!("futhark-gpu: {ran} programs ran with --target gpu as in --debug ({utests} utests passed)");
    }
    conclusion.exit()
}

/// The Futhark compilers to test against, each with its label: those
/// `PMX_FUTHARK_VERSIONS` lists (their paths, `:`-separated), labelled by
/// version, the trial groups named `GROUP@VERSION`; without it, the one
/// pmx finds (`PMX_FUTHARK`, `PATH`), unlabelled. One that does not run
/// or is not supported makes its trials skipped, saying why.
fn compilers() -> Vec<(String, Result<pmx_futhark::engine::Futhark, String>)> {
    let Some(list) = std::env::var_os("PMX_FUTHARK_VERSIONS").filter(|l| !l.is_empty()) else {
        return vec![(String::new(), pmx_futhark::engine::find().map_err(|e| e.to_string()))];
    };
    std::env::split_paths(&list)
        .map(|path| {
            let found = pmx_futhark::engine::find_at(&path, "PMX_FUTHARK_VERSIONS").map_err(|e| e.to_string());
            let label = match &found {
                Ok(f) => f.capabilities.version.to_string(),
                Err(_) => path.display().to_string(),
            };
            eprintln!(
                "futhark: {label}: {}",
                found
                    .as_ref()
                    .map_or_else(|e| format!("skipped ({e})"), |f| format!("tested ({})", f.program.display()))
            );
            (label, found)
        })
        .collect()
}

/// `pmx ARGS FILE` with the Futhark compiler `futhark` (else the one pmx
/// finds).
fn pmx_with(args: &[&str], p: &Path, futhark: Option<&Path>) -> (i32, String, String) {
    match futhark {
        Some(f) => process::pmx_with_env(args, p, &[("PMX_FUTHARK", f.to_str().expect("a UTF-8 path"))]),
        None => pmx(args, p),
    }
}

/// Test programs with Futhark-class accelerate bindings.
fn programs() -> Vec<PathBuf> {
    let all = fixtures::accelerate_programs(|_, _| true);
    fixtures::explained(all).into_iter().filter(|(_, e)| e.contains("backend: Futhark")).map(|(p, _)| p).collect()
}

/// Fails the trial unless Futhark and a usable GPU are there.
fn gpu_usable() {
    assert!(process::futhark().is_ok(), "no futhark");
    if let Err(why) = pmx_cuda::gpu::device::usable() {
        panic!("no usable GPU: {why}");
    }
}

fn generated(p: &Path) -> String {
    let (code, out, err) = pmx(&["emit", "--stage", "futhark", "--color=never"], p);
    assert_eq!(code, 0, "{}: {err}", p.display());
    out
}

/// The generated Futhark, snapshotted.
fn generated_futhark_snapshot(p: &Path) {
    let source = generated(p);
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("futhark/snapshots");
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    settings.bind(|| insta::assert_snapshot!(name(p), source));
}

/// The generated Futhark passes `futhark check`.
fn passes_futhark_check(p: &Path, futhark: Option<&Path>) {
    let futhark = match futhark {
        Some(f) => f.to_path_buf(),
        None => pmx_futhark::engine::find().expect("futhark").program,
    };
    let dir = std::env::temp_dir().join(format!("pmx-futhark-check-{}-{}-{}", std::process::id(), name(p), unique()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let src = dir.join(format!("{}.fut", name(p)));
    std::fs::write(&src, generated(p)).expect("writable");
    let out = std::process::Command::new(&futhark).arg("check").arg(&src).output().expect("futhark runs");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        out.status.success(),
        "{}: futhark check rejects the generated program:\n{}",
        p.display(),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A Futhark-class test program runs with `--target TARGET` and prints
/// what it prints in debug mode, with the same exit code and the same
/// utests (those inside Futhark code are counted by the generated code);
/// a failure is located where debug mode locates it, except a size
/// constraint found false inside generated code, which is located at the
/// utest (naming the `accelerate`) where debug mode, which checks it
/// before the call, locates it at the `accelerate`. Returns the utests
/// passed.
fn runs_as_in_debug_mode(p: &Path, target: &str, futhark: Option<&Path>) -> usize {
    let (_, ir, _) = pmx(&["emit", "--stage", "futhark-ir", "--color=never"], p);
    let sizes = ir.contains("sizeEq");
    let debug = pmx(&["test", "--debug", "--color=never"], p);
    let native = pmx_with(&["test", "--target", target, "--color=never"], p, futhark);
    assert_eq!(debug.0, native.0, "{}: exit codes differ\n{}\n---\n{}", p.display(), debug.2, native.2);
    assert_eq!(debug.1, native.1, "{}: outputs or utest counts differ\n{}", p.display(), native.2);
    if debug.0 != 0 {
        let at = |s: &str| s.lines().find(|l| l.contains("┌─")).map(str::to_string);
        assert!(at(&native.2).is_some(), "{}: the failure is located\n{}", p.display(), native.2);
        if !sizes {
            let (d, n) = (&debug.2, &native.2);
            assert_eq!(at(d), at(n), "{}: failures differ\n{d}\n---\n{n}", p.display());
        }
        assert!(!native.2.contains("internal error"), "{}: {}", p.display(), native.2);
    }
    passed(&native.1)
}

/// The number of passed utests in `pmx test`'s summary.
fn passed(out: &str) -> usize {
    out.lines().rev().find_map(|l| l.strip_suffix(" failed")?.split(' ').next()?.parse().ok()).unwrap_or(0)
}

/// Bad input at the boundary and failures inside generated code are
/// run-time errors at the MExpr location, exit code 1.
fn check_failures(target: &str, futhark: Option<&Path>) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/futhark");
    for (file, message, at) in [
        ("errors_irregular.mc", "Irregular sequence found", "errors_irregular.mc:6:12"),
        ("errors_index.mc", "Out of bounds access in sequence", "errors_index.mc:6:34"),
        ("errors_division.mc", "Division by zero", "errors_division.mc:6:34"),
        // Futhark's own size check stops these first: debug mode's failure,
        // found by running the binding again (`accelerate::diagnose`).
        ("errors_size.mc", "Size constraint violated", "the utest at tests/futhark/errors_size.mc:5:3"),
        ("errors_utest.mc", "Size constraint violated", "the utest at tests/futhark/errors_utest.mc:6:3"),
    ] {
        let (code, _, err) = pmx_with(&["run", "--target", target, "--color=never"], &dir.join(file), futhark);
        assert_eq!(code, 1, "{file}: {err}");
        assert!(err.contains(message) && err.contains(at), "{file} ({target}): {err}");
    }
    // A failure inside a function names the accelerate that ran it.
    let (_, _, err) =
        pmx_with(&["test", "--target", target, "--color=never"], &dir.join("errors_division.mc"), futhark);
    assert!(err.contains("run by the accelerate at tests/futhark/errors_division.mc:"), "{err}");
}

/// An explicit `--target cpu` without a Futhark compiler is an error that
/// says what to install.
fn missing_futhark_is_an_error_for_an_explicit_target() {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/accelerate/listing2.mc");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_pmx"))
        .args(["run", "--target", "cpu"])
        .arg(&p)
        .env("PMX_FUTHARK", "/nonexistent/futhark")
        .output()
        .expect("pmx runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("futhark not found (PATH or PMX_FUTHARK)") && err.contains("install Futhark"), "{err}");
}

/// `--target auto` (the default) without a Futhark compiler runs
/// Futhark-class code in the interpreter, saying so once with what to
/// install; the output is the same.
fn auto_without_futhark_runs_in_the_interpreter_with_one_note() {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/run/utest_in_accelerate.mc");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_pmx"))
        .args(["test", "--color=never"])
        .arg(&p)
        .env("PMX_FUTHARK", "/nonexistent/futhark")
        .env_remove("PMX_TARGET")
        .output()
        .expect("pmx runs");
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stdout.ends_with("4 passed, 0 failed\n"), "{stdout}");
    let note = "futhark not found (PATH or PMX_FUTHARK): Futhark-class accelerate runs in the interpreter; install \
                Futhark";
    assert_eq!(stderr.matches(note).count(), 1, "{stderr}");
}

/// A fake `futhark` in a fresh folder of its own (named `name`): a shell
/// script whose text is `script`. Returns the folder and a runner of `pmx
/// test --target TARGET` on a program with Futhark-class code and a cache
/// of the folder's, with that futhark.
fn fake_futhark(name: &str, script: &str) -> (PathBuf, impl Fn(&str) -> std::process::Output) {
    let dir = std::env::temp_dir().join(format!("pmx-fake-futhark-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    let fake = dir.join("futhark");
    std::fs::write(&fake, format!("#!/bin/sh\n{script}")).expect("writable");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).expect("executable");
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/run/utest_in_accelerate.mc");
    let cache = dir.join("cache");
    let run = move |target: &str| {
        std::process::Command::new(env!("CARGO_BIN_EXE_pmx"))
            .args(["test", "--color=never", "--target", target])
            .arg(&p)
            .env("PMX_FUTHARK", &fake)
            .env("PMX_CACHE_DIR", &cache)
            .output()
            .expect("pmx runs")
    };
    (dir, run)
}

/// A futhark of a version pmx does not generate for is named, with the
/// supported range: an error of `--target cpu`, a note under `auto`
/// (which runs the bindings in the interpreter).
fn a_futhark_of_an_unsupported_version_is_a_clear_error() {
    let (dir, run) = fake_futhark("unsupported", "echo 'Futhark 0.29.0'\n");
    let cpu = run("cpu");
    let stderr = String::from_utf8_lossy(&cpu.stderr);
    assert_eq!(cpu.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("Futhark 0.29.0 is not supported: pmx supports Futhark 0.22 to 0.27"), "{stderr}");
    let auto = run("auto");
    let stderr = String::from_utf8_lossy(&auto.stderr);
    assert_eq!(auto.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("Futhark 0.29.0 is not supported") && stderr.contains("runs in the interpreter"),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// When Futhark fails on the generated program with an internal compiler
/// error of its own, or is killed (0.22.7 can take all the memory there is
/// on some programs): both bugs of that version (FUTHARK_BUGS.md), the
/// program still gives its results, from the interpreter, and says why.
fn a_failure_of_futhark_itself_runs_the_bindings_in_the_interpreter() {
    let ice = "echo 'Internal compiler error.  Please report this:' >&2\n\
               echo '  https://github.com/diku-dk/futhark/issues' >&2\n\
               echo 'Type error after pass '\\''simplify'\\'':' >&2\nexit 1\n";
    let killed = "kill -9 $$\n";
    for (name, body, said) in [
        ("ice", ice, "Futhark 0.22.7 (multicore) failed on the generated program with an internal compiler error"),
        ("killed", killed, "Futhark 0.22.7 (multicore) was killed by signal 9"),
    ] {
        let script = format!("if [ \"$1\" = --version ]; then echo 'Futhark 0.22.7'; exit 0; fi\n{body}");
        let (dir, run) = fake_futhark(name, &script);
        let debug = run("interp");
        for target in ["cpu", "auto"] {
            let out = run(target);
            let stderr = String::from_utf8_lossy(&out.stderr);
            if stderr.contains("no C compiler found") {
                eprintln!("skipped: no C compiler");
                break;
            }
            assert_eq!(out.status.code(), debug.status.code(), "{stderr}");
            assert_eq!(out.stdout, debug.stdout, "{stderr}");
            assert!(stderr.contains(said) && stderr.contains("run in the interpreter instead"), "{stderr}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// `--unchecked` marks every entry `#[unsafe]` (Futhark drops its run-time
/// checks there); a correct program runs the same.
fn unchecked_futhark_code_drops_the_checks_and_runs_the_same() {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/futhark/constructs.mc");
    let (code, out, err) = pmx(&["emit", "--stage", "futhark", "--unchecked", "--color=never"], &p);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.matches("#[unsafe]").count(), out.matches("\nentry ").count(), "{out}");
    if let Err(why) = process::futhark() {
        eprintln!("unchecked_futhark_code_drops_the_checks_and_runs_the_same: not run with --target cpu: {why}");
        return;
    }
    let checked = pmx(&["test", "--target", "cpu", "--color=never"], &p);
    let unchecked = pmx(&["test", "--target", "cpu", "--unchecked", "--color=never"], &p);
    assert_eq!(checked, unchecked);
}

/// A number no other call in this process gets (temporary folders of
/// trials that run at once).
fn unique() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// Where the Futhark wraps a caller's buffer (0.25.14 and newer, on the
/// CPU), an unboxed sequence crosses into an entry without a copy:
/// `--profile`'s bytes in are 0; with an older Futhark, every byte.
fn inputs_cross_without_a_copy_where_futhark_wraps_them(futhark: &pmx_futhark::engine::Futhark) {
    let dir = std::env::temp_dir().join(format!("pmx-zero-copy-{}-{}", std::process::id(), unique()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join("zero_copy.mc");
    std::fs::write(
        &file,
        "mexpr\nlet xs = create 1000 (lam i. i) in\nlet ys = create 1000 (lam i. int2float i) in\n\
         let s = accelerate (foldl addi 0 (map (lam x. muli x 2) xs)) in\n\
         let t = accelerate (map (lam y. mulf y 0.5) ys) in\ndprint (s, get t 9)\n",
    )
    .expect("writable");
    let (code, out, err) =
        pmx_with(&["run", "--target", "cpu", "--profile", "--color=never"], &file, Some(&futhark.program));
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!((code, out.as_str()), (0, "(999000, 4.5)"), "{err}");
    // A binding's row: name, engine, calls, time, `ms`, bytes in, ...
    let bytes_in: Vec<u64> = err
        .lines()
        .filter(|l| l.starts_with("accelerate"))
        .map(|l| l.split_whitespace().nth(5).and_then(|b| b.parse().ok()).expect("a profile row"))
        .collect();
    let expected = if futhark.capabilities.raw_arrays_wrap { 0 } else { 8000 };
    assert_eq!(bytes_in, [expected, expected], "Futhark {}:\n{err}", futhark.capabilities.version);
}
