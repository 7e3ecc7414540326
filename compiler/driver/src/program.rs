//! A program's files as Miking reads them: merged into one program, in
//! include order (depth first, each file once), so that a file sees every
//! name defined before it in that order, including names that only its
//! includer or a sibling included.
//!
//! Each file is checked once on its own ([`check_file`]: it sees what its
//! own includes give it), which is what an editor needs for a file open
//! alone and what most files of a program need anyway. A program then
//! walks its files in order with the names defined so far, and checks a
//! file again, with those names, only where one of the names it looks up
//! outside itself ([`pmx_names::Outside`]) means something else there (a
//! name its includes do not define, or one that a file between them and
//! it redefines), or where it uses a name of a file that was checked
//! again (whose types may differ). The usual program checks no file
//! twice.

use crate::db::{Db, SourceFile};
use crate::freed::FreedApart;
use crate::queries::{check_file, check_with, program_files, CheckedFile, DbImports};
use pmx_ast::Module;
use pmx_names::Exports;
use rustc_hash::FxHashMap;

/// The files of a program that were checked again in its merged order.
#[derive(Default)]
pub struct ProgramChecks {
    again: FxHashMap<SourceFile, CheckedFile>,
}

impl ProgramChecks {
    /// The check of `file` in this program, where it differs from the
    /// file's check on its own.
    pub fn in_context(&self, file: SourceFile) -> Option<&CheckedFile> {
        self.again.get(&file)
    }
}

/// The program of `root` checked in Miking's merged order (see the
/// module's docs): the files that needed a check of their own in it.
#[salsa::tracked(returns(deref), no_eq)]
pub fn program_checks(db: &dyn Db, root: SourceFile) -> FreedApart<ProgramChecks> {
    let mut again: FxHashMap<SourceFile, CheckedFile> = FxHashMap::default();
    // The names defined before the file at hand, later ones shadowing.
    let mut seen = Exports::default();
    for &file in program_files(db, root) {
        let alone = check_file(db, file);
        let differs = !seen.agrees_with(&alone.outside)
            || alone
                .outside
                .iter()
                .any(|o| o.found.is_some_and(|id| db.file(id.file).is_some_and(|f| again.contains_key(&f))));
        if differs {
            let checked = check_with(db, file, seen.clone(), &DbImports { db, again: Some(&again) });
            again.insert(file, checked);
        }
        // A file binds the same names whichever names it sees.
        seen.extend_from(&alone.own_names);
    }
    FreedApart::new(ProgramChecks { again })
}

/// The check of `file` in the program of `root`.
pub fn checked_in(db: &dyn Db, root: SourceFile, file: SourceFile) -> &CheckedFile {
    match program_checks(db, root).again.get(&file) {
        Some(c) => c,
        None => check_file(db, file),
    }
}

/// The resolved, typed modules of a program, in load order.
pub fn program_modules(db: &dyn Db, root: SourceFile) -> Vec<&Module> {
    program_files(db, root).iter().map(|f| &checked_in(db, root, *f).module).collect()
}
