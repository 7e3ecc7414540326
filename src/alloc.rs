//! The allocator set-up: mimalloc for tree-sitter's C library as for the
//! Rust side, and mimalloc's purge delay.
//!
//! tree-sitter allocates a node per token and reduction through `malloc`;
//! with glibc's allocator its frees (`malloc_consolidate`) were about 5% of
//! the front end's time. mimalloc is already linked as the global
//! allocator (see `main.rs`), so its C entry points are available here.

use std::ffi::c_void;
use std::sync::Once;

unsafe extern "C" {
    fn mi_malloc(size: usize) -> *mut c_void;
    fn mi_calloc(count: usize, size: usize) -> *mut c_void;
    fn mi_realloc(ptr: *mut c_void, size: usize) -> *mut c_void;
    fn mi_free(ptr: *mut c_void);
    fn mi_option_set(option: i32, value: std::ffi::c_long);
}

/// `mi_option_purge_delay` in mimalloc's `mi_option_e` (the same index in
/// its versions 2 and 3).
const MI_OPTION_PURGE_DELAY: i32 = 15;

/// How long freed memory stays with the process before mimalloc returns it
/// to the system, in milliseconds (its default is 10). The language server
/// frees a file's old syntax trees and ASTs at each edit and allocates new
/// ones right after; with the default, that memory went back to the system
/// in between and came back as freshly zeroed (huge) pages, which was about
/// a fifth of an edit's time on a 5,000-line file.
const PURGE_DELAY_MS: std::ffi::c_long = 1000;

// tree-sitter requires that allocation never returns null; glibc's
// default in tree-sitter aborts too, so out of memory ends the same way.
fn non_null(ptr: *mut c_void) -> *mut c_void {
    if ptr.is_null() {
        std::process::abort();
    }
    ptr
}

unsafe extern "C" fn ts_malloc(size: usize) -> *mut c_void {
    non_null(unsafe { mi_malloc(size) })
}

unsafe extern "C" fn ts_calloc(count: usize, size: usize) -> *mut c_void {
    non_null(unsafe { mi_calloc(count, size) })
}

unsafe extern "C" fn ts_realloc(ptr: *mut c_void, size: usize) -> *mut c_void {
    non_null(unsafe { mi_realloc(ptr, size) })
}

unsafe extern "C" fn ts_free(ptr: *mut c_void) {
    unsafe { mi_free(ptr) }
}

static INSTALL: Once = Once::new();

/// Installs mimalloc as tree-sitter's allocator and sets its purge delay.
/// Call it first thing in `main`, before any parser or tree exists: memory
/// allocated by one allocator must never be freed by the other.
pub fn install() {
    INSTALL.call_once(|| {
        // SAFETY: setting an option is a plain store; the index is checked
        // against mimalloc's header above.
        unsafe { mi_option_set(MI_OPTION_PURGE_DELAY, PURGE_DELAY_MS) };
        let allocator =
            tree_sitter::Allocator { malloc: ts_malloc, calloc: ts_calloc, realloc: ts_realloc, free: ts_free };
        // SAFETY: the four functions are one allocator family, return
        // malloc-aligned memory, and `install` runs once, before any
        // tree-sitter object is created (it is the first call in `main`).
        unsafe { tree_sitter::set_allocator(Some(allocator)) };
    });
}
