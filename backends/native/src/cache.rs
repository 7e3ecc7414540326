//! The cache of compiled code: one folder per key under `$PMX_CACHE_DIR`,
//! else `$XDG_CACHE_HOME/pmx`, else `~/.cache/pmx`. A key is a hash of
//! everything that decides the result (generated source, compiler
//! versions, backend, flags). An entry is built in a fresh folder beside
//! the others and renamed into place: two processes building one key at
//! once both succeed, and the loser's copy is dropped.

use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// The cache's folder (not created).
pub fn dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("PMX_CACHE_DIR").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(d));
    }
    if let Some(d) = std::env::var_os("XDG_CACHE_HOME").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(d).join("pmx"));
    }
    std::env::var_os("HOME").filter(|d| !d.is_empty()).map(|h| PathBuf::from(h).join(".cache").join("pmx"))
}

/// This build of pmx as keys name it: the executable's path, size and
/// modification time (what pmx stores, and how, may change with any
/// build); `None` where it cannot be told (then nothing is cached).
pub fn this_build() -> Option<String> {
    let exe = std::env::current_exe().ok()?;
    let meta = std::fs::metadata(&exe).ok()?;
    let modified = meta.modified().ok()?.duration_since(std::time::UNIX_EPOCH).ok()?.as_nanos();
    Some(format!("{} {} {modified}", exe.display(), meta.len()))
}

/// The key of some parts (each length-prefixed, so that moving bytes from
/// one part to the next changes the key).
pub fn key(parts: &[&[u8]]) -> String {
    let mut h = Sha256::new();
    for p in parts {
        h.update((p.len() as u64).to_le_bytes());
        h.update(p);
    }
    h.finalize().iter().take(16).map(|b| format!("{b:02x}")).collect()
}

/// How an entry was had.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Found {
    Cached,
    Built,
}

/// The folder of entry `key` in `root`, building it with `build` (given an
/// empty folder to fill) when it is not there yet. The error is the
/// builder's own type (a message, or one that says more), which the
/// cache's own failures become.
pub fn entry<E: std::fmt::Display + From<String>>(
    root: &Path,
    key: &str,
    build: impl FnOnce(&Path) -> Result<(), E>,
) -> Result<(PathBuf, Found), E> {
    let done = root.join(key);
    if done.join(".complete").exists() {
        return Ok((done, Found::Cached));
    }
    std::fs::create_dir_all(root).map_err(|e| format!("cannot create the cache folder {}: {e}", root.display()))?;
    let tmp = root.join(format!(".{key}.{}.{}", std::process::id(), unique()));
    std::fs::create_dir_all(&tmp).map_err(|e| format!("cannot create {}: {e}", tmp.display()))?;
    if let Err(e) = build(&tmp) {
        // The half-built folder is kept for the user to look at when the
        // error names a file in it; otherwise it is removed.
        if !e.to_string().contains(&*tmp.to_string_lossy()) {
            let _ = std::fs::remove_dir_all(&tmp);
        }
        return Err(e);
    }
    std::fs::write(tmp.join(".complete"), b"").map_err(|e| format!("cannot write in {}: {e}", tmp.display()))?;
    match std::fs::rename(&tmp, &done) {
        Ok(()) => Ok((done, Found::Built)),
        // Another process finished first: use its entry.
        Err(_) if done.join(".complete").exists() => {
            let _ = std::fs::remove_dir_all(&tmp);
            Ok((done, Found::Built))
        }
        Err(_) => {
            // A stale, incomplete entry of the same key: replace it.
            let _ = std::fs::remove_dir_all(&done);
            std::fs::rename(&tmp, &done).map_err(|e| format!("cannot move {} into place: {e}", tmp.display()))?;
            Ok((done, Found::Built))
        }
    }
}

fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    (t as u64) ^ NEXT.fetch_add(1, Ordering::Relaxed).rotate_left(48)
}

/// Removes every entry; returns how many there were.
pub fn clean(root: &Path) -> Result<usize, String> {
    let Ok(entries) = std::fs::read_dir(root) else { return Ok(0) };
    let mut n = 0;
    for e in entries.flatten() {
        let p = e.path();
        let r = if p.is_dir() { std::fs::remove_dir_all(&p) } else { std::fs::remove_file(&p) };
        r.map_err(|err| format!("cannot remove {}: {err}", p.display()))?;
        n += 1;
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_separate_their_parts() {
        assert_ne!(key(&[b"ab", b"c"]), key(&[b"a", b"bc"]));
        assert_eq!(key(&[b"x"]), key(&[b"x"]));
    }

    #[test]
    fn an_entry_is_built_once_then_found() {
        let root = tempfile::tempdir().unwrap();
        let mut builds = 0;
        let (p, f) = entry(root.path(), "k", |d| {
            builds += 1;
            std::fs::write(d.join("out"), b"1").map_err(|e| e.to_string())
        })
        .unwrap();
        assert_eq!(f, Found::Built);
        assert_eq!(std::fs::read(p.join("out")).unwrap(), b"1");
        let (_, f) = entry::<String>(root.path(), "k", |_| panic!("built twice")).unwrap();
        assert_eq!((f, builds), (Found::Cached, 1));
        assert_eq!(clean(root.path()).unwrap(), 1);
        assert!(!p.exists());
    }

    #[test]
    fn concurrent_builds_of_one_key_both_succeed() {
        let root = tempfile::tempdir().unwrap();
        let path = root.path().to_path_buf();
        let threads: Vec<_> = (0..8)
            .map(|i| {
                let path = path.clone();
                std::thread::spawn(move || {
                    entry(&path, "same", |d| {
                        std::thread::sleep(std::time::Duration::from_millis(20));
                        std::fs::write(d.join("out"), format!("{i}")).map_err(|e| e.to_string())
                    })
                    .map(|(p, _)| std::fs::read_to_string(p.join("out")).unwrap())
                })
            })
            .collect();
        for t in threads {
            let out = t.join().unwrap().unwrap();
            assert!(out.parse::<u32>().is_ok(), "a whole entry, got {out:?}");
        }
        let left: Vec<_> = std::fs::read_dir(&path).unwrap().flatten().collect();
        assert_eq!(left.len(), 1, "no temporary folders left behind");
    }

    #[test]
    fn a_failed_build_leaves_nothing() {
        let root = tempfile::tempdir().unwrap();
        assert!(entry::<String>(root.path(), "bad", |_| Err("no".into())).is_err());
        assert_eq!(std::fs::read_dir(root.path()).unwrap().count(), 0);
    }
}
