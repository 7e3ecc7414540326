//! Parsing a program's files on every core before it is checked.
//!
//! The queries run on one thread, one file after another, and for a small
//! program most of the time goes to parsing the standard library files it
//! includes (`string.mc` and what it includes: about 70 KB). The include
//! graph is walked level by level instead: the files of a level are parsed
//! in parallel, each thread with its own handle on the database, and their
//! includes found in order on the calling thread (finding a file numbers
//! it), so the later, sequential check finds every parse done.
//! Only memoised results are computed early; nothing observable changes.

use crate::db::{Database, SourceFile};
use crate::includes::file_includes;
use crate::queries::parse_file;
use rustc_hash::FxHashSet;

/// Parses every file `root` includes, directly or not, on every core.
pub fn prefetch(db: &Database, root: SourceFile) {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    if threads < 2 {
        return;
    }
    let mut seen = FxHashSet::from_iter([root]);
    let mut level = vec![root];
    while !level.is_empty() {
        let groups = balance(db, &level, threads);
        std::thread::scope(|s| {
            let handles: Vec<_> = groups[1..]
                .iter()
                .map(|group| {
                    let db = db.clone();
                    std::thread::Builder::new()
                        .name("pmx-prefetch".into())
                        .stack_size(crate::stack_size())
                        .spawn_scoped(s, move || parse(&db, group))
                })
                .collect();
            parse(db, &groups[0]);
            // A thread that could not start or failed leaves its files to
            // the sequential check, which parses them (and reports any
            // problem) as usual.
            handles.into_iter().filter_map(|h| h.ok()).for_each(|h| drop(h.join()));
        });
        // The includes are found here, in the level's order, not on the
        // threads: finding a file numbers it, and the numbers (which name
        // and span identities carry) must not depend on which thread ran
        // first (the host code cache keys a program by them).
        level = level
            .iter()
            .flat_map(|f| file_includes(db, *f).targets.iter().filter_map(|t| t.target))
            .filter(|f| seen.insert(*f))
            .collect();
    }
}

/// The files of a level in at most `threads` groups of about equal text
/// size (largest first, each to the lightest group).
fn balance(db: &Database, level: &[SourceFile], threads: usize) -> Vec<Vec<SourceFile>> {
    let mut files: Vec<(usize, SourceFile)> = level.iter().map(|f| (f.text(db).len(), *f)).collect();
    files.sort_by_key(|f| std::cmp::Reverse(f.0));
    let mut groups: Vec<(usize, Vec<SourceFile>)> = vec![(0, Vec::new()); threads.min(files.len())];
    for (size, f) in files {
        let lightest = groups.iter_mut().min_by_key(|g| g.0).expect("at least one group");
        lightest.0 += size;
        lightest.1.push(f);
    }
    groups.into_iter().map(|g| g.1).collect()
}

/// Parses the files.
fn parse(db: &Database, files: &[SourceFile]) {
    for f in files {
        parse_file(db, *f);
    }
}
