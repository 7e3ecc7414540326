//! The test programs that use `accelerate`, for the code-generation tests
//! (included with `#[path]` by `tests/cuda.rs` and `tests/futhark.rs`).

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

/// A fixture's snapshot name: its path under `tests/`, `/` as `_`.
pub fn name(p: &Path) -> String {
    let rel = p.strip_prefix(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests")).expect("under tests");
    rel.with_extension("").to_string_lossy().replace('/', "_")
}
