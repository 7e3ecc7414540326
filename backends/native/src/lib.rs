//! What the native backends (Futhark, CUDA) share, one implementation
//! each: the choice of target (`target.rs`), the cache of compiled
//! libraries (`cache.rs`), the system C/C++ compiler (`cc.rs`), progress
//! shown while compiling (`progress.rs`), per-binding profiles
//! (`profile.rs`) and large buffers on huge pages (`pages.rs`).
//!
//! Invariants: nothing here panics on a missing tool or a failed
//! compilation; every failure is an `Err` with a sentence for the user.
//! The cache is written by building in a fresh folder and renaming it into
//! place, so concurrent pmx processes never see a half-written entry.

pub mod cache;
pub mod cc;
pub mod pages;
pub mod profile;
pub mod progress;
pub mod target;

pub use target::Target;
