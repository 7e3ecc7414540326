//! The parse cache: a batch run (a database that does not keep parses,
//! the CLI's) reads each file's parse from disk instead of parsing it when
//! the same text was parsed before by the same build of pmx, like
//! compiled interface files. For a small program most of the front end's
//! time goes to parsing the standard library it includes.
//!
//! An entry is one file, named by a hash of this build's identity and the
//! file's exact text, holding `pmx_syntax::stored`'s encoding; it is
//! written to a file of its own and renamed into place, so that runs at
//! the same time never see half an entry. A cache that cannot be read or
//! written is skipped, never an error; an entry that does not decode is
//! parsed again and replaced. What is read is exactly what parsing gives.

use pmx_diagnostics::FileId;
use pmx_syntax::Parsed;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Where parses are kept, for one build of pmx.
#[derive(Clone, Debug)]
pub struct ParseCache {
    folder: PathBuf,
    build: String,
}

impl ParseCache {
    /// Entries in `folder` (created when the first is written), for the
    /// build `build` names (anything that changes when pmx's tree types
    /// may have: the executable's path, size and time).
    pub fn new(folder: PathBuf, build: String) -> ParseCache {
        ParseCache { folder, build }
    }

    /// The parse of `text`, the text of file `file`: stored, or parsed now
    /// (and stored).
    pub fn parse(&self, text: &str, file: FileId) -> Parsed {
        let entry = self.entry(text);
        if let Some(parsed) = std::fs::read(&entry).ok().and_then(|b| pmx_syntax::stored::decode(&b, file)) {
            return parsed;
        }
        let parsed = pmx_syntax::parse(text, file);
        if let Some(bytes) = pmx_syntax::stored::encode(&parsed, file) {
            let _ = self.store(&entry, &bytes);
        }
        parsed
    }

    fn entry(&self, text: &str) -> PathBuf {
        let mut h = Sha256::new();
        for part in [self.build.as_bytes(), text.as_bytes()] {
            h.update((part.len() as u64).to_le_bytes());
            h.update(part);
        }
        let key: String = h.finalize().iter().take(16).map(|b| format!("{b:02x}")).collect();
        self.folder.join(key)
    }

    /// Writes an entry beside its place, then moves it there (replacing
    /// a damaged one).
    fn store(&self, entry: &Path, bytes: &[u8]) -> std::io::Result<()> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        std::fs::create_dir_all(&self.folder)?;
        let name = entry.file_name().unwrap_or_default().to_string_lossy();
        let tmp = self.folder.join(format!(".{name}.{}.{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed)));
        let written = std::fs::write(&tmp, bytes).and_then(|()| std::fs::rename(&tmp, entry));
        if written.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        written
    }
}
