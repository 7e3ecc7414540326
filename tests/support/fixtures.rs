//! The test programs that use `accelerate`, for the code-generation tests
//! (included with `#[path]` by `tests/cuda.rs` and `tests/futhark.rs`,
//! next to `process.rs`).

use std::path::{Path, PathBuf};

/// Every `.mc` file under the fixture folders whose text mentions
/// `accelerate` and passes `keep`, sorted.
pub fn accelerate_programs(keep: impl Fn(&Path, &str) -> bool) -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut out = Vec::new();
    for dir in ["accelerate", "run", "run/debug", "run/check_order", "futhark"] {
        let Ok(entries) = std::fs::read_dir(root.join(dir)) else { continue };
        for e in entries.flatten() {
            let p = e.path();
            if p.extension().is_none_or(|x| x != "mc") {
                continue;
            }
            let text = std::fs::read_to_string(&p).unwrap_or_default();
            if text.contains("accelerate") && keep(&p, &text) {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// `pmx explain` of each program (run in parallel, as the harness needs
/// them before any trial starts), in the programs' order.
#[allow(dead_code)]
pub fn explained(programs: Vec<PathBuf>) -> Vec<(PathBuf, String)> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let out = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..std::thread::available_parallelism().map_or(2, |n| n.get()) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(p) = programs.get(i) else { break };
                let (_, explained, _) = super::process::pmx(&["explain", "--color=never"], p);
                out.lock().unwrap().push((i, explained));
            });
        }
    });
    let mut out = out.into_inner().unwrap();
    out.sort_by_key(|(i, _)| *i);
    programs.into_iter().zip(out).map(|(p, (_, e))| (p, e)).collect()
}

/// A fixture's snapshot name: its path under `tests/`, `/` as `_`.
pub fn name(p: &Path) -> String {
    let rel = p.strip_prefix(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests")).expect("under tests");
    rel.with_extension("").to_string_lossy().replace('/', "_")
}
