//! Memory that generated code reads and writes during one call: the root
//! buffers of alias reconstruction, copies of sequences, and what host
//! code asks for (`rt->alloc`). The CPU engine uses [`HostMemory`]; the
//! GPU engine uses CUDA managed memory (`gpu::memory`), which its host
//! code and its kernels both see.

/// Allocations that live as long as the value; contents are the caller's.
pub trait Memory {
    /// A buffer holding a copy of `bytes` (8-byte aligned; a large one on a cache line).
    fn copy_of(&mut self, bytes: &[u8]) -> Result<*mut u8, String>;
    /// A buffer of `bytes` zero bytes (8-byte aligned; a large one on a cache line).
    fn zeroed(&mut self, bytes: usize) -> Result<*mut u8, String>;
    /// Whether generated code may read the program's own memory, so that
    /// unboxed sequences are passed in place instead of copied.
    fn sees_host_memory(&self) -> bool;
    /// Copies `bytes` bytes of a buffer of this memory (`src`) out to the
    /// program's memory (`dst`).
    ///
    /// # Safety
    /// `src` is a buffer of this memory and `dst` memory of the program,
    /// both of at least `bytes` bytes, not overlapping.
    unsafe fn copy_out(&mut self, dst: *mut u8, src: *const u8, bytes: usize) -> Result<(), String> {
        // Safety: as the caller promises.
        unsafe { std::ptr::copy_nonoverlapping(src, dst, bytes) };
        Ok(())
    }
}

/// Ordinary memory of this process, in blocks of 8-byte words.
#[derive(Default)]
pub struct HostMemory {
    blocks: Vec<Vec<u64>>,
    /// Copy sequences as the GPU engine must (see [`HostMemory::separate`]).
    separate: bool,
}

impl HostMemory {
    /// Host memory that marshaling treats like a device's: sequences are
    /// copied into it, not passed in place (the GPU engine with kernels
    /// run on the CPU, `gpu::cpu_kernels`).
    pub fn separate() -> HostMemory {
        HostMemory { blocks: Vec::new(), separate: true }
    }

    /// A block of `words` words filled by `fill`, which appends them to the
    /// vector it is given (and must not grow it past them). Memory the
    /// system refuses is an error, not an abort.
    ///
    /// A large block starts on a cache line, at an offset within a 4 KiB
    /// page that differs from block to block (`STAGGER`): buffers that are
    /// all page-aligned put element `k` of every tensor at the same
    /// address modulo 4 KiB, and a loop that writes one and reads another
    /// at the same index then stalls on every access (the CPU takes the
    /// load for one that depends on the store until the full addresses
    /// are known), while vector loads that straddle cache lines cost more.
    fn block(&mut self, words: usize, fill: impl FnOnce(&mut Vec<u64>)) -> Result<*mut u8, String> {
        let large = words * 8 >= 4096;
        let slack = if large { (4096 + 64) / 8 } else { 0 };
        let mut b = POOL.with(|p| p.borrow_mut().pop()).unwrap_or_default();
        b.clear();
        b.try_reserve_exact((words + slack).max(1))
            .map_err(|_| format!("cannot allocate {} bytes for CUDA-class code", words * 8))?;
        // Large fresh memory faults in faster on huge pages (advice only;
        // a pooled block keeps its pages).
        pmx_native::pages::advise_huge(b.as_mut_ptr() as *mut u8, b.capacity() * 8);
        let start = if large {
            let base = b.as_ptr() as usize;
            let aligned = base.next_multiple_of(64);
            let stagger = (self.blocks.len() * STAGGER) % 4096;
            let target = (aligned & !4095) + stagger;
            let target = if target < aligned { target + 4096 } else { target };
            (target - base) / 8
        } else {
            0
        };
        b.resize(start, 0);
        fill(&mut b);
        debug_assert_eq!(b.len(), start + words);
        // Safety: `start <= b.len()`.
        let p = unsafe { b.as_mut_ptr().add(start) } as *mut u8;
        self.blocks.push(b);
        Ok(p)
    }
}

/// How far apart, modulo 4 KiB, the large blocks of one call start: five
/// cache lines, so that consecutive blocks also fall in different sets of
/// the cache.
const STAGGER: usize = 5 * 64;

impl Memory for HostMemory {
    fn copy_of(&mut self, bytes: &[u8]) -> Result<*mut u8, String> {
        let words = bytes.len().div_ceil(8);
        self.block(words, |b| {
            let start = b.len();
            if !bytes.len().is_multiple_of(8) {
                // The last word's padding is zero.
                b.resize(start + words, 0);
            }
            // Safety: the block's capacity holds `words * 8 >= bytes.len()`
            // bytes from `start` (reserved by `block`), now written before
            // the length covers them; every bit pattern is a `u64`.
            unsafe {
                copy(b.as_mut_ptr().add(start) as *mut u8, bytes.as_ptr(), bytes.len());
                b.set_len(start + words);
            }
        })
    }

    fn zeroed(&mut self, bytes: usize) -> Result<*mut u8, String> {
        let words = bytes.div_ceil(8);
        self.block(words, |b| b.resize(b.len() + words, 0))
    }

    fn sees_host_memory(&self) -> bool {
        !self.separate
    }

    unsafe fn copy_out(&mut self, dst: *mut u8, src: *const u8, bytes: usize) -> Result<(), String> {
        // Safety: as the caller promises.
        unsafe { copy(dst, src, bytes) };
        Ok(())
    }
}

/// What host code asks for (`rt->alloc`: its sequence literals, copied
/// shapes, unpacked sequences), small requests carved one after another
/// from larger zeroed blocks of the call's memory. A literal built in a
/// host loop otherwise costs an allocation per iteration, which on a GPU
/// is a `cuMemAllocManaged` (microseconds, and at least a page) each.
#[derive(Default)]
pub struct Carver {
    /// The free part of the current block, as addresses.
    at: usize,
    end: usize,
    /// The size of the next block: doubled each time, so that a call
    /// that asks for much takes few blocks and one that asks for little
    /// takes a small one.
    next_block: usize,
}

/// The largest request carved; larger ones are blocks of their own.
const CARVED_UP_TO: usize = 2048;
/// The first and the largest block carved.
const FIRST_BLOCK: usize = 16 << 10;
const LARGEST_BLOCK: usize = 4 << 20;
/// What each carved buffer is aligned to (any scalar or struct of
/// generated code needs at most 8).
const CARVED_ALIGN: usize = 16;

impl Carver {
    /// A buffer of `bytes` zero bytes from `memory`, aligned to 16 bytes.
    pub fn zeroed(&mut self, memory: &mut dyn Memory, bytes: usize) -> Result<*mut u8, String> {
        if bytes > CARVED_UP_TO {
            return memory.zeroed(bytes);
        }
        // An empty request still gets a buffer of its own.
        let size = bytes.max(1).next_multiple_of(CARVED_ALIGN);
        if self.end - self.at < size {
            let block = self.next_block.max(FIRST_BLOCK);
            let p = memory.zeroed(block)? as usize;
            self.next_block = (block * 2).min(LARGEST_BLOCK);
            self.at = p.next_multiple_of(CARVED_ALIGN);
            self.end = p + block;
        }
        let p = self.at;
        self.at += size;
        Ok(p as *mut u8)
    }
}

/// Copies from this size up are split between rayon's threads: a copy into
/// fresh memory is bound by the page faults of its destination, which
/// every core takes in parallel (80 MB on the 2-core machine of
/// BENCHMARKS.md: 54 ms on one thread, 34 ms on two).
const PARALLEL_FROM: usize = 8 << 20;

/// `memcpy`, on several threads for a large block.
///
/// # Safety
/// `src` and `dst` are valid for `bytes` bytes and do not overlap.
pub unsafe fn copy(dst: *mut u8, src: *const u8, bytes: usize) {
    if bytes < PARALLEL_FROM || rayon::current_num_threads() < 2 {
        // Safety: as the caller promises.
        unsafe { std::ptr::copy_nonoverlapping(src, dst, bytes) };
        return;
    }
    // Pieces of whole huge pages, several per thread so that a slow core
    // does not hold the others up.
    const PIECE: usize = 2 << 20;
    let (dst, src) = (dst as usize, src as usize);
    use rayon::prelude::*;
    (0..bytes.div_ceil(PIECE)).into_par_iter().for_each(|k| {
        let at = k * PIECE;
        let n = PIECE.min(bytes - at);
        // Safety: `at + n <= bytes`; the pieces are disjoint.
        unsafe { std::ptr::copy_nonoverlapping((src + at) as *const u8, (dst + at) as *mut u8, n) };
    });
}

thread_local! {
    /// Blocks of earlier calls, kept for the next: a program that calls
    /// accelerated code in a loop would otherwise map fresh memory (and
    /// fault in every page of it) on every call.
    static POOL: std::cell::RefCell<Vec<Vec<u64>>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// How many blocks the pool keeps.
const POOL_SIZE: usize = 8;

impl Drop for HostMemory {
    fn drop(&mut self) {
        POOL.with(|p| {
            let mut p = p.borrow_mut();
            for b in self.blocks.drain(..) {
                if p.len() < POOL_SIZE {
                    p.push(b);
                }
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_requests_are_carved_from_few_blocks_without_overlapping() {
        let mut m = HostMemory::default();
        let mut c = Carver::default();
        let mut got: Vec<(usize, usize)> = Vec::new();
        for k in 0..2000usize {
            let bytes = (k * 37) % 3000;
            let p = c.zeroed(&mut m, bytes).unwrap();
            assert_eq!(p as usize % CARVED_ALIGN, 0, "request {k} aligned");
            // Safety: the buffer holds `bytes` bytes.
            let b = unsafe { std::slice::from_raw_parts_mut(p, bytes) };
            assert!(b.iter().all(|&x| x == 0), "request {k} zeroed");
            b.fill(0xAB);
            got.push((p as usize, bytes.max(1)));
        }
        got.sort();
        for w in got.windows(2) {
            assert!(w[0].0 + w[0].1 <= w[1].0, "buffers overlap: {w:?}");
        }
        // 2000 requests of 1.5 KB on average: a handful of doubling blocks
        // plus the requests too large to carve, not one block each.
        let large = (0..2000usize).filter(|k| (k * 37) % 3000 > CARVED_UP_TO).count();
        assert!(m.blocks.len() < large + 12, "{} blocks for {large} large requests", m.blocks.len());
    }

    #[test]
    fn large_blocks_start_on_cache_lines_at_different_page_offsets() {
        let mut m = HostMemory::default();
        let data: Vec<u8> = (0..10_000u32).map(|i| (i % 251) as u8).collect();
        let mut offsets = Vec::new();
        for k in 0..4 {
            let p = if k % 2 == 0 { m.copy_of(&data).unwrap() } else { m.zeroed(data.len()).unwrap() };
            assert_eq!(p as usize % 64, 0, "block {k} on a cache line");
            offsets.push(p as usize % 4096);
            // Safety: the block holds `data.len()` bytes.
            let got = unsafe { std::slice::from_raw_parts(p, data.len()) };
            if k % 2 == 0 {
                assert_eq!(got, &data[..]);
            } else {
                assert!(got.iter().all(|&b| b == 0));
            }
        }
        offsets.sort();
        offsets.dedup();
        assert_eq!(offsets.len(), 4, "four different offsets within a page");
        // Small blocks are not padded, and an odd length is copied whole.
        let p = m.copy_of(&data[..13]).unwrap();
        // Safety: the block holds 13 bytes.
        assert_eq!(unsafe { std::slice::from_raw_parts(p, 13) }, &data[..13]);
    }

    #[test]
    fn large_copies_split_between_threads_copy_every_byte() {
        // Past PARALLEL_FROM, of a length that is no multiple of a piece
        // or of a word.
        let data: Vec<u8> = (0..(PARALLEL_FROM * 2 + 4099)).map(|i| (i % 253) as u8).collect();
        let mut m = HostMemory::default();
        let p = m.copy_of(&data).unwrap();
        // Safety: the block holds `data.len()` bytes.
        assert!(unsafe { std::slice::from_raw_parts(p, data.len()) } == &data[..]);
        let mut back = vec![0u8; data.len()];
        // Safety: both hold `data.len()` bytes, apart.
        unsafe { m.copy_out(back.as_mut_ptr(), p, data.len()).unwrap() };
        assert!(back == data);
    }
}
