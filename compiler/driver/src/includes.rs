//! Following `include`s: relative to the including file, then in the
//! standard library folders, or, for `"name::path"`, in the folder of the
//! named library (Miking's namespaces: `stdlib` is the standard library,
//! other names come from `MCORE_LIBS`); each file loaded once; cycles cut
//! and reported.

use crate::db::{Db, SourceFile};
use crate::queries::parse_file;
use pmx_ast::Include;
use pmx_diagnostics::{Code, Diagnostic};
use rustc_hash::{FxHashMap, FxHashSet};
use std::collections::VecDeque;
use std::path::PathBuf;

/// Where one `include` of a file leads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IncludeTarget {
    pub include: Include,
    /// The file, when it was found and read.
    pub target: Option<SourceFile>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Includes {
    pub targets: Vec<IncludeTarget>,
    pub diagnostics: Vec<Diagnostic>,
}

/// The files that a file's `include`s name.
#[salsa::tracked(returns(ref))]
pub fn file_includes(db: &dyn Db, file: SourceFile) -> Includes {
    // Includes are looked for on disk again when files appear. Read on
    // every run, not only when one is missing: salsa dates a result by the
    // inputs its run read, and the run that finds a new file must be dated
    // by the disk's change, or what depends on it would not run again.
    db.disk().generation(db);
    let module = &parse_file(db, file).module;
    let dir = file.path(db).parent().map(PathBuf::from).unwrap_or_default();
    let mut targets = Vec::new();
    let mut diagnostics = Vec::new();
    for inc in &module.includes {
        let namespace = inc.path.rsplit_once("::").filter(|(ns, rest)| !ns.is_empty() && !rest.is_empty());
        let candidates = match namespace {
            Some((ns, rest)) => {
                let found = library_dirs(db, ns);
                if found.is_empty() {
                    diagnostics.push(unknown_library(inc, ns));
                    targets.push(IncludeTarget { include: inc.clone(), target: None });
                    continue;
                }
                found.iter().map(|d| d.join(rest)).collect()
            }
            None => {
                let mut candidates = vec![dir.join(&inc.path)];
                candidates.extend(db.stdlib_dirs().iter().map(|d| d.join(&inc.path)));
                candidates
            }
        };
        // A candidate is found when the database knows it (an open editor
        // buffer, a file loaded before) or it exists on disk.
        let mut target = None;
        let mut unreadable = false;
        for path in &candidates {
            match db.load(path) {
                Ok(f) => {
                    target = Some(f);
                    break;
                }
                Err(e) if path.is_file() => {
                    diagnostics.push(
                        Diagnostic::error(
                            Code::FileUnreadable,
                            inc.span,
                            format!("cannot read `{}`: {e}", path.display()),
                        )
                        .with_label("included here"),
                    );
                    unreadable = true;
                    break;
                }
                Err(_) => {}
            }
        }
        if target.is_none() && !unreadable {
            let d = Diagnostic::error(Code::IncludeNotFound, inc.span, format!("cannot find the file `{}`", inc.path))
                .with_label("included here");
            diagnostics.push(match namespace {
                Some(("stdlib", _)) if !db.libraries().iter().any(|(n, _)| n == "stdlib") => {
                    d.with_note("looked in the standard library folders")
                }
                Some((ns, _)) => d.with_note(format!("looked in the folder that MCORE_LIBS gives for `{ns}`")),
                None => d
                    .with_note("looked in the folder of this file, then in the standard library folders")
                    .with_note("set PMX_STDLIB to the folder of the standard library if it is elsewhere"),
            });
        }
        targets.push(IncludeTarget { include: inc.clone(), target });
    }
    Includes { targets, diagnostics }
}

/// The folders a namespace `ns` of an include `"ns::path"` names: those of
/// `MCORE_LIBS`, and for `stdlib` without such an entry the standard
/// library folders.
fn library_dirs(db: &dyn Db, ns: &str) -> Vec<PathBuf> {
    let named: Vec<PathBuf> = db.libraries().iter().filter(|(n, _)| n == ns).map(|(_, d)| d.clone()).collect();
    if named.is_empty() && ns == "stdlib" {
        return db.stdlib_dirs().to_vec();
    }
    named
}

fn unknown_library(inc: &Include, ns: &str) -> Diagnostic {
    Diagnostic::error(Code::IncludeNotFound, inc.span, format!("unknown library `{ns}` in `{}`", inc.path))
        .with_label("included here")
        .with_note(format!(
            "`{ns}::` names a library folder: set MCORE_LIBS to `{ns}=/path/to/folder` (pairs separated by `:`), as for Miking"
        ))
}

/// The includes of a file that do not close a cycle, with errors for those
/// that do. An include `f -> g` closes a cycle when `f` can be reached from
/// `g`; such an include is ignored, so later queries never recurse forever.
#[salsa::tracked(returns(ref))]
pub fn acyclic_includes(db: &dyn Db, file: SourceFile) -> (Vec<SourceFile>, Vec<Diagnostic>) {
    let mut ok = Vec::new();
    let mut diags = Vec::new();
    for t in &file_includes(db, file).targets {
        let Some(target) = t.target else { continue };
        match path_between(db, target, file) {
            Some(path) => {
                let mut names: Vec<String> = vec![display_name(db, file)];
                names.extend(path.iter().map(|f| display_name(db, *f)));
                diags.push(
                    Diagnostic::error(Code::IncludeCycle, t.include.span, "include cycle")
                        .with_label(format!("this include leads back here: {}", names.join(" -> ")))
                        .with_note("each file may be included only by files it does not include itself"),
                );
            }
            None => {
                if !ok.contains(&target) {
                    ok.push(target);
                }
            }
        }
    }
    (ok, diags)
}

fn display_name(db: &dyn Db, file: SourceFile) -> String {
    file.path(db).file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
}

/// A chain of includes from `from` to `to` (both ends included), if any.
fn path_between(db: &dyn Db, from: SourceFile, to: SourceFile) -> Option<Vec<SourceFile>> {
    let mut parent: FxHashMap<SourceFile, SourceFile> = FxHashMap::default();
    let mut seen = FxHashSet::default();
    let mut queue = VecDeque::from([from]);
    seen.insert(from);
    while let Some(f) = queue.pop_front() {
        if f == to {
            let mut path = vec![f];
            let mut cur = f;
            while let Some(p) = parent.get(&cur) {
                path.push(*p);
                cur = *p;
            }
            path.reverse();
            return Some(path);
        }
        for t in &file_includes(db, f).targets {
            if let Some(g) = t.target {
                if seen.insert(g) {
                    parent.insert(g, f);
                    queue.push_back(g);
                }
            }
        }
    }
    None
}
