//! CUDA managed memory for one call: each root of alias reconstruction,
//! each copied sequence and each block host code asks for is one
//! allocation that the host library and the kernels both address. Host
//! code waits for the kernels launched before it reads or writes tensor
//! data (`module.rs`, the prelude's `pmx_sync_host`), and then sees their
//! writes; the engine waits for them all before it copies back.
//!
//! Where the device can move managed memory ahead of use (concurrent
//! managed access and `cuMemPrefetchAsync_v2`), the copies of marshaling
//! are made by the copy engine: the block is placed on the device first,
//! then filled with `cuMemcpyHtoD`, and written roots come back with
//! `cuMemcpyDtoH`. Filling it from the host instead faults every page in
//! on the host and again on the device (measured on an H200: 2.6 GB/s,
//! against 9 GB/s for `cudaMemcpy` from pageable memory).

use super::device::{describe, Device};
use crate::memory::Memory;
use cudarc::driver::{result, sys};

pub struct ManagedMemory {
    device: &'static Device,
    blocks: Vec<sys::CUdeviceptr>,
}

impl ManagedMemory {
    pub fn new(device: &'static Device) -> ManagedMemory {
        ManagedMemory { device, blocks: Vec::new() }
    }

    fn alloc(&mut self, bytes: usize) -> Result<sys::CUdeviceptr, String> {
        // Safety: the device's context is current (the engine binds it
        // before marshaling); the memory is released on drop.
        let p = unsafe { result::malloc_managed(bytes.max(8), sys::CUmemAttach_flags::CU_MEM_ATTACH_GLOBAL) }
            .map_err(|e| format!("cannot allocate {bytes} bytes of managed memory: {}", describe(e)))?;
        self.blocks.push(p);
        Ok(p)
    }

    /// Places `bytes` bytes at `p` on the device (ordered before later
    /// work on the default stream).
    fn place_on_device(&self, p: sys::CUdeviceptr, bytes: usize) -> Result<(), String> {
        let location =
            sys::CUmemLocation { type_: sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE, id: self.device.device };
        // Safety: `p` is a managed allocation of at least `bytes` bytes;
        // the symbol was checked when the device was opened.
        unsafe { sys::cuMemPrefetchAsync_v2(p, bytes, location, 0, std::ptr::null_mut()) }
            .result()
            .map_err(|e| format!("moving managed memory to the device: {}", describe(e)))
    }
}

impl Memory for ManagedMemory {
    fn copy_of(&mut self, bytes: &[u8]) -> Result<*mut u8, String> {
        let p = self.alloc(bytes.len())?;
        if self.device.prefetch && !bytes.is_empty() {
            self.place_on_device(p, bytes.len())?;
            // Safety: `p` holds at least `bytes.len()` bytes; the copy is
            // synchronous for pageable host memory.
            unsafe { result::memcpy_htod_sync(p, bytes) }
                .map_err(|e| format!("copying {} bytes to the device: {}", bytes.len(), describe(e)))?;
        } else {
            // Safety: managed memory is addressable by the host; `p` holds
            // at least `bytes.len()` bytes and no kernel runs during
            // marshaling.
            unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), p as usize as *mut u8, bytes.len()) };
        }
        Ok(p as usize as *mut u8)
    }

    fn zeroed(&mut self, bytes: usize) -> Result<*mut u8, String> {
        // Host code asked for it and writes it first: it stays where the
        // host touches it.
        let p = self.alloc(bytes)? as usize as *mut u8;
        // Safety: as in `copy_of`.
        unsafe { std::ptr::write_bytes(p, 0, bytes) };
        Ok(p)
    }

    fn sees_host_memory(&self) -> bool {
        false
    }

    unsafe fn copy_out(&mut self, dst: *mut u8, src: *const u8, bytes: usize) -> Result<(), String> {
        if !self.device.prefetch || bytes == 0 {
            // Safety: `src` is a block of this memory, `dst` the program's,
            // both of at least `bytes` bytes; every kernel has finished.
            unsafe { std::ptr::copy_nonoverlapping(src, dst, bytes) };
            return Ok(());
        }
        // Safety: as above.
        let out = unsafe { std::slice::from_raw_parts_mut(dst, bytes) };
        // Safety: `src` is a managed block of at least `bytes` bytes.
        unsafe { result::memcpy_dtoh_sync(out, src as usize as sys::CUdeviceptr) }
            .map_err(|e| format!("copying {bytes} bytes from the device: {}", describe(e)))
    }
}

impl Drop for ManagedMemory {
    fn drop(&mut self) {
        for p in self.blocks.drain(..) {
            // Safety: `p` came from `cuMemAllocManaged` and every kernel
            // that used it has finished (the call waited for them). A failure
            // to free leaves the memory to the process's end.
            let _ = unsafe { result::memory_free(p) };
        }
    }
}
