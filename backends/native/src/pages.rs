//! Large buffers on huge pages. A buffer that marshaling fills once and
//! hands over (a result of tens of megabytes) is fresh memory, and on the
//! machines measured here the kernel's page faults, one per 4 KiB page,
//! cost more than the copy itself (80 MB: about 50 ms of faults against
//! about 17 ms with 2 MiB pages). Where the system lets a process ask for
//! transparent huge pages (`madvise` mode), the aligned inside of such a
//! buffer is marked before it is first written; elsewhere the call does
//! nothing.

/// Buffers smaller than this are left alone (at least one whole huge
/// page must fit inside).
pub const HUGE_FROM: usize = 4 << 20;

const HUGE_PAGE: usize = 2 << 20;

/// Asks for huge pages for the 2 MiB-aligned inside of `bytes` bytes at
/// `p`, which nothing has written yet. Only advice: nothing changes if the
/// system refuses.
pub fn advise_huge(p: *mut u8, bytes: usize) {
    if bytes < HUGE_FROM || p.is_null() {
        return;
    }
    let start = (p as usize).div_ceil(HUGE_PAGE) * HUGE_PAGE;
    let end = (p as usize + bytes) / HUGE_PAGE * HUGE_PAGE;
    if end > start {
        // Safety: the range lies inside the caller's allocation and is
        // page-aligned; MADV_HUGEPAGE changes no contents.
        unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE) };
    }
}

/// The C that gives the same advice for Futhark's own large allocations
/// (force-included before Futhark's C, `-include`): its `malloc` of a
/// large block asks for huge pages before Futhark writes it, with the
/// bounds of [`advise_huge`].
pub fn c_header() -> String {
    format!(
        "\
// pmx: large allocations of Futhark's C on huge pages (see pmx-native's pages.rs).
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
static inline void *pmx_malloc(size_t n) {{
  void *p = malloc(n);
  if (p != NULL && n >= (size_t){HUGE_FROM}) {{
    uintptr_t h = (uintptr_t){HUGE_PAGE};
    uintptr_t a = ((uintptr_t)p + h - 1) / h * h, e = ((uintptr_t)p + n) / h * h;
    if (e > a) madvise((void *)a, e - a, MADV_HUGEPAGE);
  }}
  return p;
}}
#define malloc(n) pmx_malloc(n)
"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn advice_keeps_contents_and_bounds() {
        let mut v: Vec<u64> = Vec::with_capacity(HUGE_FROM);
        advise_huge(v.as_mut_ptr() as *mut u8, HUGE_FROM * 8);
        v.resize(HUGE_FROM, 7);
        assert!(v.iter().all(|&x| x == 7));
        // Small or null buffers are left alone.
        advise_huge(std::ptr::null_mut(), HUGE_FROM);
        let mut small = [0u8; 16];
        advise_huge(small.as_mut_ptr(), small.len());
    }
}
