//! Which file of the standard library defines a name, for the hint on an
//! unbound variable: a new user who writes `printLn` without
//! `include "common.mc"` is better told about the include than offered a
//! similarly spelled name that is in scope.

use pmx_ast::{FileId, Item};
use pmx_diagnostics::{Code, Diagnostic};
use rustc_hash::FxHashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

/// For each set of standard library folders, the top-level names its files
/// define and the file (as an include path) that defines each; built the
/// first time an unbound variable needs it.
type Index = FxHashMap<String, String>;

fn index(dirs: &[PathBuf]) -> std::sync::Arc<Index> {
    static INDEXES: OnceLock<Mutex<FxHashMap<Vec<PathBuf>, std::sync::Arc<Index>>>> = OnceLock::new();
    let indexes = INDEXES.get_or_init(Default::default);
    if let Some(found) = indexes.lock().unwrap_or_else(|e| e.into_inner()).get(dirs) {
        return found.clone();
    }
    let mut names = Index::default();
    for dir in dirs {
        let mut files = Vec::new();
        collect(dir, Path::new(""), &mut files);
        files.sort();
        for (path, include) in files {
            let Ok(text) = std::fs::read_to_string(&path) else { continue };
            let parsed = pmx_syntax::parse(&text, FileId(0));
            for item in &parsed.module.items {
                let defined: Vec<&str> = match item {
                    Item::Let(b) => vec![b.name.text.as_str()],
                    Item::RecLets(bs, _) => bs.iter().map(|b| b.name.text.as_str()).collect(),
                    Item::External(d) => vec![d.name.text.as_str()],
                    _ => Vec::new(),
                };
                for name in defined {
                    // The first folder searched, and the first file in it, wins,
                    // as include resolution would.
                    names.entry(name.to_string()).or_insert_with(|| include.clone());
                }
            }
        }
    }
    let names = std::sync::Arc::new(names);
    indexes.lock().unwrap_or_else(|e| e.into_inner()).insert(dirs.to_vec(), names.clone());
    names
}

/// The `.mc` files under `dir` (one level of subfolders, as `ext/`), each
/// with the path an include would name it by.
fn collect(dir: &Path, prefix: &Path, out: &mut Vec<(PathBuf, String)>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = prefix.join(entry.file_name());
        if path.is_dir() && prefix.as_os_str().is_empty() {
            collect(&path, &name, out);
        } else if path.extension().is_some_and(|x| x == "mc") {
            out.push((path, name.to_string_lossy().replace('\\', "/")));
        }
    }
}

/// Adds to each "unbound variable" error whose name a standard library file
/// defines the include that provides it, in place of a similar-name hint.
pub fn add_include_hints(dirs: &[PathBuf], diagnostics: &mut [Diagnostic]) {
    let mut index_once = None;
    for d in diagnostics.iter_mut().filter(|d| d.code == Code::UnboundVariable) {
        let Some(name) = d.message.strip_prefix("unbound variable `").and_then(|m| m.strip_suffix('`')) else {
            continue;
        };
        if d.notes.iter().any(|n| n.contains("is being defined here")) {
            continue;
        }
        let index = index_once.get_or_insert_with(|| index(dirs));
        if let Some(file) = index.get(name) {
            d.notes.retain(|n| !n.contains("with a similar name exists"));
            d.notes.push(format!("`{name}` is defined in the standard library: add `include \"{file}\"` at the top"));
        }
    }
}
