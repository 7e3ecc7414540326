//! CUDA managed memory for one call: each root of alias reconstruction,
//! each copied sequence and each block host code asks for is one
//! allocation that the host library and the kernels both address. The
//! host writes and reads it between launches; every launch is followed by
//! a synchronisation (`module.rs`), after which the host sees the
//! kernels' writes. Where the device allows it, the copies made while
//! marshaling are moved to the device in bulk before the first launch
//! and back after the call, rather than page by page on faults.

use super::device::{describe, Device};
use crate::memory::Memory;
use cudarc::driver::{result, sys};

pub struct ManagedMemory {
    device: &'static Device,
    blocks: Vec<sys::CUdeviceptr>,
    /// The blocks holding copies, and their sizes: what moves.
    copies: Vec<(sys::CUdeviceptr, usize)>,
}

/// Where managed memory is moved to.
#[derive(Clone, Copy)]
enum To {
    Host,
    Device,
}

impl ManagedMemory {
    pub fn new(device: &'static Device) -> ManagedMemory {
        ManagedMemory { device, blocks: Vec::new(), copies: Vec::new() }
    }

    /// Moves the copies to `to`, waiting for the moves.
    fn prefetch(&self, to: To) -> Result<(), String> {
        if !self.device.prefetch || self.copies.is_empty() {
            return Ok(());
        }
        let location = match to {
            To::Host => sys::CUmemLocation { type_: sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_HOST, id: 0 },
            To::Device => sys::CUmemLocation {
                type_: sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE,
                id: self.device.device,
            },
        };
        for &(p, bytes) in &self.copies {
            // Safety: `p` is a managed allocation of at least `bytes`
            // bytes; the symbol was checked when the device was opened.
            unsafe { sys::cuMemPrefetchAsync_v2(p, bytes, location, 0, std::ptr::null_mut()) }
                .result()
                .map_err(|e| format!("moving managed memory: {}", describe(e)))?;
        }
        result::ctx::synchronize().map_err(|e| format!("moving managed memory: {}", describe(e)))
    }

    fn alloc(&mut self, bytes: usize) -> Result<*mut u8, String> {
        // Safety: the device's context is current (the engine binds it
        // before marshaling); the memory is released on drop.
        let p = unsafe { result::malloc_managed(bytes.max(8), sys::CUmemAttach_flags::CU_MEM_ATTACH_GLOBAL) }
            .map_err(|e| format!("cannot allocate {bytes} bytes of managed memory: {}", describe(e)))?;
        self.blocks.push(p);
        Ok(p as usize as *mut u8)
    }
}

impl Memory for ManagedMemory {
    fn copy_of(&mut self, bytes: &[u8]) -> Result<*mut u8, String> {
        let p = self.alloc(bytes.len())?;
        // Safety: managed memory is addressable by the host; `p` holds at
        // least `bytes.len()` bytes and no kernel runs during marshaling.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), p, bytes.len()) };
        self.copies.push((p as usize as sys::CUdeviceptr, bytes.len()));
        Ok(p)
    }

    fn zeroed(&mut self, bytes: usize) -> Result<*mut u8, String> {
        let p = self.alloc(bytes)?;
        // Safety: as in `copy_of`.
        unsafe { std::ptr::write_bytes(p, 0, bytes) };
        Ok(p)
    }

    fn sees_host_memory(&self) -> bool {
        false
    }

    fn to_device(&mut self) -> Result<(), String> {
        self.prefetch(To::Device)
    }

    fn to_host(&mut self) {
        // Only a speed-up: on failure the host's reads fault the pages in.
        let _ = self.prefetch(To::Host);
    }
}

impl Drop for ManagedMemory {
    fn drop(&mut self) {
        for p in self.blocks.drain(..) {
            // Safety: `p` came from `cuMemAllocManaged` and every kernel
            // that used it has finished (launches synchronise). A failure
            // to free leaves the memory to the process's end.
            let _ = unsafe { result::memory_free(p) };
        }
    }
}
