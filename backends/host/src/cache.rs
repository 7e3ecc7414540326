//! The host code cache: a program's compiled image (`image.rs`) and the
//! tier's report, kept in the cache of compiled code (`pmx_native::cache`,
//! which `pmx cache clean` empties) under a key of everything that decides
//! them. An unchanged program compiles nothing the second time.
//!
//! The key: the program as the caller identifies it (its files' paths and
//! texts in the order the front end numbered them, so that names and
//! spans in the tables are the ones the run has, and which utests run),
//! this build of pmx (the executable's size and time: the tables and the
//! runtime helpers' protocol are its own), and the target with its
//! settings. An entry that cannot be read is compiled again and
//! replaced, never trusted.

use crate::image::{get_seq, put_seq, Bad, Image, Reader, Store, Writer};
use pmx_ast::{SmolStr, Span};
use std::path::PathBuf;

/// The file of an entry.
const FILE: &str = "host.image";
/// The format's version (part of the key).
const FORMAT: &[u8] = b"pmx host image 1";

/// What a compile gives and the cache keeps.
pub struct Stored {
    /// The roots compiled, and where.
    pub compiled: Vec<(SmolStr, Span)>,
    pub left: Vec<(SmolStr, String, Span)>,
    pub image: Option<Image>,
}

impl Store for Stored {
    fn put(&self, w: &mut Writer) -> Result<(), Bad> {
        put_seq(&self.compiled, w)?;
        put_seq(&self.left, w)?;
        self.image.put(w)
    }
    fn get(r: &mut Reader) -> Result<Self, Bad> {
        Ok(Stored { compiled: get_seq(r)?, left: get_seq(r)?, image: Option::get(r)? })
    }
}

/// Where a program's entry is.
pub struct Place {
    root: PathBuf,
    key: String,
}

impl Place {
    /// The entry of the program `identity` identifies; `None` where there
    /// is no cache folder or this executable cannot be identified (then
    /// nothing is cached).
    pub fn of(identity: &[&[u8]]) -> Option<Place> {
        let root = pmx_native::cache::dir()?;
        let build = pmx_native::cache::this_build()?;
        let target = crate::gen::target_identity();
        let mut parts: Vec<&[u8]> = vec![FORMAT, build.as_bytes(), target.as_bytes()];
        parts.extend_from_slice(identity);
        Some(Place { root, key: format!("host-{}", pmx_native::cache::key(&parts)) })
    }

    /// The stored compile, if there is a whole one.
    pub fn read(&self) -> Option<Stored> {
        let dir = self.root.join(&self.key);
        if !dir.join(".complete").exists() {
            return None;
        }
        let bytes = std::fs::read(dir.join(FILE)).ok();
        let stored = bytes.and_then(|b| {
            let mut r = Reader::new(&b);
            Stored::get(&mut r).and_then(|s| r.done().map(|()| s)).ok()
        });
        if stored.is_none() {
            // Damaged: removed, so that this run's compile replaces it.
            let _ = std::fs::remove_dir_all(&dir);
        }
        stored
    }

    /// Stores a compile; what went wrong, if anything (the run goes on
    /// without the cache).
    pub fn write(&self, stored: &Stored) -> Result<(), String> {
        let mut w = Writer(Vec::new());
        stored.put(&mut w).map_err(|Bad(why)| format!("the compiled code cannot be stored: {why}"))?;
        pmx_native::cache::entry::<String>(&self.root, &self.key, |dir| {
            std::fs::write(dir.join(FILE), &w.0).map_err(|e| format!("cannot write in {}: {e}", dir.display()))
        })
        .map(|_| ())
    }
}
