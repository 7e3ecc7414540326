//! Following `include`s: relative to the including file, then in the
//! standard library folders; each file loaded once; cycles cut and
//! reported.

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
        let mut candidates = vec![dir.join(&inc.path)];
        candidates.extend(db.stdlib_dirs().iter().map(|d| d.join(&inc.path)));
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
            diagnostics.push(
                Diagnostic::error(Code::IncludeNotFound, inc.span, format!("cannot find the file `{}`", inc.path))
                    .with_label("included here")
                    .with_note("looked in the folder of this file, then in the standard library folders")
                    .with_note("set PMX_STDLIB to the folder of the standard library if it is elsewhere"),
            );
        }
        targets.push(IncludeTarget { include: inc.clone(), target });
    }
    Includes { targets, diagnostics }
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
