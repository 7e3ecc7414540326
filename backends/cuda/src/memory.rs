//! Memory that generated code reads and writes during one call: the root
//! buffers of alias reconstruction, copies of sequences, and what host
//! code asks for (`rt->alloc`). The CPU engine uses [`HostMemory`]; the
//! GPU engine uses CUDA managed memory (`gpu::memory`), which its host
//! code and its kernels both see.

/// Allocations that live as long as the value; contents are the caller's.
pub trait Memory {
    /// A buffer holding a copy of `bytes` (8-byte aligned).
    fn copy_of(&mut self, bytes: &[u8]) -> Result<*mut u8, String>;
    /// A buffer of `bytes` zero bytes (8-byte aligned).
    fn zeroed(&mut self, bytes: usize) -> Result<*mut u8, String>;
    /// Whether generated code may read the program's own memory, so that
    /// unboxed sequences are passed in place instead of copied.
    fn sees_host_memory(&self) -> bool;
    /// Copies `bytes` bytes of a buffer of this memory (`src`) out to the
    /// program's memory (`dst`).
    fn copy_out(&mut self, dst: *mut u8, src: *const u8, bytes: usize) -> Result<(), String> {
        // Safety: the caller gives a buffer of this memory and a
        // destination of at least `bytes` bytes that do not overlap.
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

    /// A block of `words` words filled by `fill` (which must not grow it
    /// past them). Memory the system refuses is an error, not an abort.
    fn block(&mut self, words: usize, fill: impl FnOnce(&mut Vec<u64>)) -> Result<*mut u8, String> {
        let mut b = POOL.with(|p| p.borrow_mut().pop()).unwrap_or_default();
        b.clear();
        b.try_reserve_exact(words.max(1))
            .map_err(|_| format!("cannot allocate {} bytes for CUDA-class code", words * 8))?;
        fill(&mut b);
        let p = b.as_mut_ptr() as *mut u8;
        self.blocks.push(b);
        Ok(p)
    }
}

impl Memory for HostMemory {
    fn copy_of(&mut self, bytes: &[u8]) -> Result<*mut u8, String> {
        let words = bytes.len().div_ceil(8);
        self.block(words, |b| {
            if bytes.len().is_multiple_of(8) && (bytes.as_ptr() as usize).is_multiple_of(8) {
                // Safety: the length and alignment were just checked;
                // every bit pattern is a `u64`.
                b.extend_from_slice(unsafe { std::slice::from_raw_parts(bytes.as_ptr() as *const u64, words) });
            } else {
                b.resize(words, 0);
                // Safety: the block holds `words * 8 >= bytes.len()` bytes.
                unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), b.as_mut_ptr() as *mut u8, bytes.len()) };
            }
        })
    }

    fn zeroed(&mut self, bytes: usize) -> Result<*mut u8, String> {
        self.block(bytes.div_ceil(8), |b| b.resize(bytes.div_ceil(8), 0))
    }

    fn sees_host_memory(&self) -> bool {
        !self.separate
    }
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
