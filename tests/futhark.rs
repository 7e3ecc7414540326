//! Generated Futhark is judged by the real compiler: for every test
//! program with Futhark-class accelerate code, `pmx emit --stage futhark`
//! is a snapshot (`tests/futhark/snapshots/`), passes `futhark check`, and
//! the program run with `--target cpu` (Futhark's multicore backend
//! through its C API) behaves as in debug mode. Without `futhark`
//! (`PMX_FUTHARK`, then `PATH`) the tests that need it say they were
//! skipped.

#[path = "support/fixtures.rs"]
mod fixtures;
#[path = "support/process.rs"]
mod process;

use fixtures::name;
use process::pmx;
use std::path::{Path, PathBuf};

/// Test programs with Futhark-class accelerate bindings.
fn programs() -> Vec<PathBuf> {
    fixtures::accelerate_programs(|p, _| {
        let (_, explained, _) = pmx(&["explain", "--color=never"], p);
        explained.contains("backend: Futhark")
    })
}

fn generated(p: &Path) -> String {
    let (code, out, err) = pmx(&["emit", "--stage", "futhark", "--color=never"], p);
    assert_eq!(code, 0, "{}: {err}", p.display());
    out
}

/// The Futhark compiler, or why the test is skipped.
fn futhark() -> Option<PathBuf> {
    match pmx_futhark::engine::find() {
        Ok(f) => Some(f.program),
        Err(why) => {
            eprintln!("skipped: {why}");
            None
        }
    }
}

#[test]
fn generated_futhark_snapshots() {
    let programs = programs();
    assert!(programs.len() >= 20, "the Futhark-class fixtures are found");
    for p in programs {
        let source = generated(&p);
        let mut settings = insta::Settings::clone_current();
        settings.set_snapshot_path("futhark/snapshots");
        settings.set_prepend_module_to_snapshot(false);
        settings.set_omit_expression(true);
        settings.bind(|| insta::assert_snapshot!(name(&p), source));
    }
}

#[test]
fn generated_futhark_passes_futhark_check() {
    let Some(futhark) = futhark() else { return };
    let dir = std::env::temp_dir().join(format!("pmx-futhark-check-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let mut checked = 0;
    for p in programs() {
        let src = dir.join(format!("{}.fut", name(&p)));
        std::fs::write(&src, generated(&p)).expect("writable");
        let out = std::process::Command::new(&futhark).arg("check").arg(&src).output().expect("futhark runs");
        assert!(
            out.status.success(),
            "{}: futhark check rejects the generated program:\n{}",
            p.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        checked += 1;
    }
    let _ = std::fs::remove_dir_all(&dir);
    eprintln!("{checked} generated Futhark programs passed futhark check");
}

/// Every Futhark-class test program runs with `--target cpu` and prints
/// what it prints in debug mode, with the same exit code and the same
/// utests (those inside Futhark code are counted by the generated code);
/// a failure is located where debug mode locates it, except a size
/// constraint found false inside generated code, which is located at the
/// utest (naming the `accelerate`) where debug mode, which checks it
/// before the call, locates it at the `accelerate`.
#[test]
fn futhark_class_programs_run_on_the_cpu_as_in_debug_mode() {
    if futhark().is_none() {
        return;
    }
    let (ran, utests) = compare_with_debug("cpu");
    eprintln!("{ran} Futhark-class programs ran with --target cpu as in --debug ({utests} utests passed)");
}

/// On a machine with a GPU (`cargo test --release --test futhark --
/// --ignored --nocapture on_a_gpu`, or `benches/gpu_check.sh`): every
/// Futhark-class program with `--target gpu` (Futhark's `cuda` backend)
/// as in debug mode, and the failures located as on the CPU.
#[test]
#[ignore = "needs a CUDA GPU"]
fn futhark_class_programs_run_on_a_gpu_as_in_debug_mode() {
    assert!(futhark().is_some(), "no futhark");
    if let Err(why) = pmx_cuda::gpu::device::usable() {
        panic!("no usable GPU: {why}");
    }
    let (ran, utests) = compare_with_debug("gpu");
    check_failures("gpu");
    println!("futhark-gpu: {ran} programs ran with --target gpu as in --debug ({utests} utests passed)");
}

/// Every Futhark-class program with `--target TARGET` against debug mode
/// (see above); how many ran, and the utests they passed.
fn compare_with_debug(target: &str) -> (usize, usize) {
    let mut ran = 0;
    let mut utests = 0;
    for p in programs() {
        let (_, ir, _) = pmx(&["emit", "--stage", "futhark-ir", "--color=never"], &p);
        let sizes = ir.contains("sizeEq");
        let debug = pmx(&["test", "--debug", "--color=never"], &p);
        let native = pmx(&["test", "--target", target, "--color=never"], &p);
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
        utests += passed(&native.1);
        ran += 1;
    }
    assert!(ran > 0);
    (ran, utests)
}

/// The number of passed utests in `pmx test`'s summary.
fn passed(out: &str) -> usize {
    out.lines().rev().find_map(|l| l.strip_suffix(" failed")?.split(' ').next()?.parse().ok()).unwrap_or(0)
}

/// Bad input at the boundary and failures inside generated code are
/// run-time errors at the MExpr location, exit code 1.
#[test]
fn failures_in_futhark_code_are_located() {
    if futhark().is_none() {
        return;
    }
    check_failures("cpu");
}

fn check_failures(target: &str) {
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
        let (code, _, err) = pmx(&["run", "--target", target, "--color=never"], &dir.join(file));
        assert_eq!(code, 1, "{file}: {err}");
        assert!(err.contains(message) && err.contains(at), "{file} ({target}): {err}");
    }
    // A failure inside a function names the accelerate that ran it.
    let (_, _, err) = pmx(&["test", "--target", target, "--color=never"], &dir.join("errors_division.mc"));
    assert!(err.contains("run by the accelerate at tests/futhark/errors_division.mc:"), "{err}");
}

/// An explicit `--target cpu` without a Futhark compiler is an error that
/// says what to install.
#[test]
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
#[test]
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
#[test]
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
#[test]
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
#[test]
fn unchecked_futhark_code_drops_the_checks_and_runs_the_same() {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/futhark/constructs.mc");
    let (code, out, err) = pmx(&["emit", "--stage", "futhark", "--unchecked", "--color=never"], &p);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.matches("#[unsafe]").count(), out.matches("\nentry ").count(), "{out}");
    if futhark().is_none() {
        return;
    }
    let checked = pmx(&["test", "--target", "cpu", "--color=never"], &p);
    let unchecked = pmx(&["test", "--target", "cpu", "--unchecked", "--color=never"], &p);
    assert_eq!(checked, unchecked);
}
