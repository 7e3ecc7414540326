//! The native host tier against the interpreter: every program under
//! `tests/host`, `tests/run` and `tests/fuzz`, and every example's utests, run with
//! `--host interp` and with `--host auto` (machine code where the tier
//! compiles it) give the same exit code, output and errors. Accelerated
//! code runs in the interpreter in both, so that only host code differs.
//! The tier must compile something across them, or the comparison would
//! prove nothing. And what the tier compiles of each program under
//! `tests/host` (`pmx emit --stage host-ir`), snapshotted beside it.

#[path = "support/process.rs"]
mod process;
use std::path::{Path, PathBuf};

fn mc_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| d.map(|e| e.expect("dir entry").path()).filter(|p| p.extension().is_some_and(|x| x == "mc")).collect())
        .unwrap_or_default();
    files.sort();
    files
}

fn programs() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut all = mc_files(&root.join("tests/host"));
    all.extend(mc_files(&root.join("tests/run")));
    all.extend(mc_files(&root.join("tests/fuzz")));
    let mut examples: Vec<PathBuf> = std::fs::read_dir(root.join("examples"))
        .expect("examples")
        .map(|e| e.expect("dir entry").path().join("main.mc"))
        .filter(|p| p.exists())
        .collect();
    examples.sort();
    all.extend(examples);
    all
}

/// How many calls a trace leaves out depends on frame sizes, which
/// differ between the tiers (native frames are smaller).
fn comparable(stderr: &str) -> String {
    let mut out = String::new();
    for line in stderr.lines() {
        if line.starts_with("host code:") || line.starts_with("pmx: host code:") {
            continue;
        }
        let line = match line.find("... and ") {
            Some(i) if line.ends_with("more calls") => format!("{}... and N more calls", &line[..i]),
            _ => line.to_string(),
        };
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// The number of top-level functions the tier compiled, from `--verbose`.
fn compiled(stderr: &str) -> usize {
    stderr
        .lines()
        .find_map(|l| l.strip_prefix("host code: ")?.split(' ').next()?.parse().ok())
        .expect("--verbose says what the host tier did")
}

#[test]
fn native_host_code_runs_as_the_interpreter() {
    let programs = programs();
    assert!(programs.len() > 50, "programs found: {}", programs.len());
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..std::thread::available_parallelism().map_or(2, |n| n.get()) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(file) = programs.get(i) else { break };
                let base = ["test", "--color=never", "--target", "interp", "--verbose"];
                // Parallel keywords in the interpreter on one thread: a
                // loop that prints prints in order in both runs.
                let one = [("RAYON_NUM_THREADS", "1")];
                let interp = process::pmx_with_env(&[&base[..], &["--host", "interp"]].concat(), file, &one);
                let native = process::pmx_with_env(&[&base[..], &["--host", "auto"]].concat(), file, &one);
                results.lock().unwrap().push((file.clone(), interp, native));
            });
        }
    });
    let mut differences = Vec::new();
    let mut total = 0;
    for (file, interp, native) in results.into_inner().unwrap() {
        total += compiled(&native.2);
        let (a, b) = ((interp.0, &interp.1, comparable(&interp.2)), (native.0, &native.1, comparable(&native.2)));
        if a != b {
            differences.push(format!(
                "{}:\n--- interp: exit {}\n{}{}\n--- native: exit {}\n{}{}",
                file.display(),
                a.0,
                a.1,
                a.2,
                b.0,
                b.1,
                b.2
            ));
        }
    }
    assert!(differences.is_empty(), "{} programs differ:\n{}", differences.len(), differences.join("\n"));
    eprintln!("{} programs, {total} top-level functions compiled to native code", programs.len());
    assert!(total > 0, "the native host tier compiled nothing in {} programs", programs.len());
}

#[test]
fn lowered_host_code_is_as_expected() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let files = mc_files(&root.join("tests/host"));
    assert!(!files.is_empty());
    for f in files {
        let (code, out, err) = process::pmx(&["emit", "--stage", "host-ir"], &f);
        assert_eq!(code, 0, "{}: {err}", f.display());
        let source = std::fs::read_to_string(&f).expect("fixture readable");
        let name = f.file_stem().expect("name").to_string_lossy().to_string();
        let mut settings = insta::Settings::clone_current();
        settings.set_snapshot_path("host/snapshots");
        settings.set_prepend_module_to_snapshot(false);
        settings.set_omit_expression(true);
        let shown = format!("{source}\n========================================\n{out}");
        settings.bind(|| insta::assert_snapshot!(name, shown));
    }
}
