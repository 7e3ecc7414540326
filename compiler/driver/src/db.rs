//! The database: salsa storage plus the table of loaded files.

use crate::parse_cache::ParseCache;
use pmx_diagnostics::FileId;
use pmx_syntax::PreviousParse;
use rustc_hash::FxHashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// One source file: its path and its text. The language server replaces
/// the text of open files as they are edited.
#[salsa::input(debug)]
pub struct SourceFile {
    #[returns(ref)]
    pub path: PathBuf,
    #[returns(ref)]
    pub text: String,
    #[returns(copy)]
    pub id: FileId,
}

/// How often files have appeared on disk since the database was made. A
/// file's includes read the disk, which salsa does not see: an include
/// that was not found depends on this input, so that a file created later
/// is found when its creation is reported ([`Database::files_appeared`]).
#[salsa::input]
pub struct Disk {
    pub generation: u64,
}

#[salsa::db]
pub trait Db: salsa::Database {
    /// The disk's generation (see [`Disk`]).
    fn disk(&self) -> Disk;
    /// The file at `path` (canonicalised), read from disk the first time.
    fn load(&self, path: &Path) -> Result<SourceFile, String>;
    /// The file with the given identity.
    fn file(&self, id: FileId) -> Option<SourceFile>;
    /// The folders searched for includes not found next to the includer.
    fn stdlib_dirs(&self) -> &[PathBuf];
    /// The folders of named libraries, for includes of the form
    /// `"name::path"` (Miking's `MCORE_LIBS`), in the order given.
    fn libraries(&self) -> &[(String, PathBuf)];
    /// The kept parse of an earlier version of a file, if parses are kept.
    fn previous_parse(&self, file: FileId) -> Option<PreviousParse>;
    /// Whether parses are kept for incremental parsing.
    fn keeps_parses(&self) -> bool;
    /// Keeps a file's parse for its next version, if parses are kept.
    fn keep_parse(&self, file: FileId, parse: PreviousParse);
    /// Where parses are read from and stored where parses are not kept
    /// (the CLI's runs), if anywhere.
    fn parse_cache(&self) -> Option<&ParseCache>;
}

#[derive(Default)]
struct FileTable {
    by_path: FxHashMap<PathBuf, SourceFile>,
    by_id: Vec<SourceFile>,
}

#[salsa::db]
#[derive(Clone)]
pub struct Database {
    storage: salsa::Storage<Self>,
    files: Arc<Mutex<FileTable>>,
    stdlib: Arc<Vec<PathBuf>>,
    libraries: Arc<Vec<(String, PathBuf)>>,
    /// When enabled, the queries that ran (for tests of incrementality).
    log: Arc<Mutex<Option<Vec<String>>>>,
    /// When enabled, the last parse of each file, so that the next version
    /// of an edited file is parsed incrementally. Off by default: a batch
    /// run parses each file once, and the trees would only take memory.
    parses: Arc<Mutex<Option<FxHashMap<FileId, PreviousParse>>>>,
    /// Off by default (tests, the language server): the CLI sets it.
    parse_cache: Option<Arc<ParseCache>>,
    disk: Option<Disk>,
}

impl Default for Database {
    fn default() -> Self {
        Database::new(default_stdlib_dirs()).with_libraries(default_libraries())
    }
}

impl Database {
    pub fn new(stdlib: Vec<PathBuf>) -> Database {
        let log: Arc<Mutex<Option<Vec<String>>>> = Arc::default();
        let sink = log.clone();
        let storage = salsa::Storage::new(Some(Box::new(move |event: salsa::Event| {
            if let salsa::EventKind::WillExecute { database_key } = event.kind {
                if let Some(entries) = sink.lock().expect("log poisoned").as_mut() {
                    entries.push(format!("{database_key:?}"));
                }
            }
        })));
        let mut db = Database {
            storage,
            files: Arc::default(),
            stdlib: Arc::new(stdlib),
            libraries: Arc::default(),
            log,
            parses: Arc::default(),
            parse_cache: None,
            disk: None,
        };
        db.disk = Some(Disk::new(&db, 0));
        db
    }

    /// The same database with these named libraries (see [`Db::libraries`]).
    pub fn with_libraries(mut self, libraries: Vec<(String, PathBuf)>) -> Database {
        self.libraries = Arc::new(libraries);
        self
    }

    /// The same database reading and storing parses in `cache` (see
    /// [`Db::parse_cache`]).
    pub fn with_parse_cache(mut self, cache: ParseCache) -> Database {
        self.parse_cache = Some(Arc::new(cache));
        self
    }

    /// Files may have appeared on disk (an editor reported a new file):
    /// includes that were not found are looked for again.
    pub fn files_appeared(&mut self) {
        use salsa::Setter;
        let disk = self.disk();
        let next = disk.generation(self) + 1;
        disk.set_generation(self).to(next);
    }

    /// Keeps each file's syntax tree, so that editing a file reparses only
    /// around the change (for the language server).
    pub fn enable_incremental_parsing(&self) {
        self.parses.lock().expect("parse cache poisoned").get_or_insert_with(FxHashMap::default);
    }

    /// Starts recording which queries execute.
    pub fn enable_log(&self) {
        self.log.lock().expect("log poisoned").get_or_insert_with(Vec::new);
    }

    /// The queries executed since the last call, as `name(Id(..))`.
    pub fn take_log(&self) -> Vec<String> {
        self.log.lock().expect("log poisoned").as_mut().map(std::mem::take).unwrap_or_default()
    }

    /// Adds a file whose text is given (not read from disk), or replaces
    /// the text of a file already known.
    pub fn set_file_text(&mut self, path: &Path, text: String) -> SourceFile {
        use salsa::Setter;
        let path = normalize(path);
        let existing = self.files.lock().expect("file table poisoned").by_path.get(&path).copied();
        match existing {
            Some(file) => {
                if file.text(self) != &text {
                    file.set_text(self).to(text);
                }
                file
            }
            None => self.insert(path, text),
        }
    }

    fn insert(&self, path: PathBuf, text: String) -> SourceFile {
        let mut table = self.files.lock().expect("file table poisoned");
        if let Some(f) = table.by_path.get(&path) {
            return *f;
        }
        let id = FileId(table.by_id.len() as u32);
        let file = SourceFile::new(self, path.clone(), text, id);
        table.by_path.insert(path, file);
        table.by_id.push(file);
        file
    }

    /// Every file loaded so far.
    pub fn files(&self) -> Vec<SourceFile> {
        self.files.lock().expect("file table poisoned").by_id.clone()
    }
}

#[salsa::db]
impl salsa::Database for Database {}

#[salsa::db]
impl Db for Database {
    fn disk(&self) -> Disk {
        self.disk.expect("the disk input is made with the database")
    }

    fn load(&self, path: &Path) -> Result<SourceFile, String> {
        let path = normalize(path);
        if let Some(f) = self.files.lock().expect("file table poisoned").by_path.get(&path) {
            return Ok(*f);
        }
        let bytes = std::fs::read(&path).map_err(|e| e.to_string())?;
        let text = String::from_utf8(bytes).map_err(|e| format!("the file is not valid UTF-8 ({e})"))?;
        Ok(self.insert(path, text))
    }

    fn file(&self, id: FileId) -> Option<SourceFile> {
        self.files.lock().expect("file table poisoned").by_id.get(id.0 as usize).copied()
    }

    fn stdlib_dirs(&self) -> &[PathBuf] {
        &self.stdlib
    }

    fn libraries(&self) -> &[(String, PathBuf)] {
        &self.libraries
    }

    fn previous_parse(&self, file: FileId) -> Option<PreviousParse> {
        self.parses.lock().expect("parse cache poisoned").as_ref()?.get(&file).cloned()
    }

    fn keeps_parses(&self) -> bool {
        self.parses.lock().expect("parse cache poisoned").is_some()
    }

    fn keep_parse(&self, file: FileId, parse: PreviousParse) {
        if let Some(parses) = self.parses.lock().expect("parse cache poisoned").as_mut() {
            parses.insert(file, parse);
        }
    }

    fn parse_cache(&self) -> Option<&ParseCache> {
        self.parse_cache.as_deref()
    }
}

/// An absolute path with `.` and `..` removed, symbolic links resolved
/// where the file exists, so that each file is loaded once.
pub fn normalize(path: &Path) -> PathBuf {
    if let Ok(p) = path.canonicalize() {
        return p;
    }
    let abs = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir().map(|d| d.join(path)).unwrap_or_else(|_| path.to_path_buf())
    };
    let mut out = PathBuf::new();
    for c in abs.components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// The standard library folders: `PMX_STDLIB`, then `MCORE_STDLIB` (for
/// Miking compatibility), then the `stdlib` entry of `MCORE_LIBS`, then the
/// `std/` folder of this source tree.
pub fn default_stdlib_dirs() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    for var in ["PMX_STDLIB", "MCORE_STDLIB"] {
        if let Some(v) = std::env::var_os(var) {
            dirs.extend(std::env::split_paths(&v).filter(|p| !p.as_os_str().is_empty()));
        }
    }
    dirs.extend(default_libraries().into_iter().filter(|(name, _)| name == "stdlib").map(|(_, dir)| dir));
    dirs.push(normalize(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../std")));
    dirs
}

/// The named libraries of Miking's `MCORE_LIBS`: `name=folder` pairs
/// separated by `:`. Pairs without a `=` are ignored (Miking warns).
pub fn default_libraries() -> Vec<(String, PathBuf)> {
    std::env::var("MCORE_LIBS").map(|v| parse_libraries(&v)).unwrap_or_default()
}

/// `name=folder:name=folder` as pairs, in order.
pub fn parse_libraries(spec: &str) -> Vec<(String, PathBuf)> {
    spec.split(':')
        .filter_map(|pair| pair.split_once('='))
        .filter(|(name, dir)| !name.is_empty() && !dir.is_empty())
        .map(|(name, dir)| (name.to_string(), PathBuf::from(dir)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::parse_libraries;
    use std::path::PathBuf;

    #[test]
    fn libraries_are_name_folder_pairs() {
        assert_eq!(
            parse_libraries("stdlib=/a/b:test=rel/t:bad:=x:y="),
            vec![("stdlib".to_string(), PathBuf::from("/a/b")), ("test".to_string(), PathBuf::from("rel/t"))]
        );
        assert!(parse_libraries("").is_empty());
    }
}
