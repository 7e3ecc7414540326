//! Kernels run on the CPU for the GPU engine's host library: each launch
//! the host code makes through `rt->launch` runs the kernel's grid
//! launcher (`pmx_cpu_grid_K`) in the CPU build of the same generated
//! unit, with the grid a device gets (its blocks spread over the cores,
//! the threads of a block one after another, so that a kernel's indices
//! are computed as on a device), and the failure flag is taken from that
//! build. With it, the whole GPU path
//! but the device itself (host library built with `-DPMX_HOST_LAUNCH`,
//! launch callbacks, marshaling that copies sequences, the waits and the
//! failure flag) runs on a machine without a GPU: `PMX_GPU_KERNELS=cpu`.
//!
//! Like a device, it does not run a kernel when it is launched: it copies
//! the arguments (their sizes are `pmx_cpu_sizes_K` of the CPU build) and
//! runs the queued launches, in order, when host code waits for them. Host
//! code that touched tensor data without waiting would see it before the
//! kernels' writes, and the tests would catch it. `PMX_CUDA_SYNC=1` runs
//! each launch at once instead, as the device engine then does.

use crate::gen::{blocks_for, THREADS_PER_BLOCK};
use crate::host::{Launched, Launcher, Library};
use std::ffi::c_void;
use std::sync::{Arc, Mutex};

type GridFn = unsafe extern "C" fn(*mut *mut c_void, i64, i64, i64) -> i64;
type TakeFailedFn = unsafe extern "C" fn() -> i64;

struct Kernel {
    launch: GridFn,
    /// The size in bytes of each argument, `n` last.
    sizes: Vec<usize>,
}

/// A launch waiting for host code to wait for it: the kernel and a copy
/// of each argument (16-byte aligned words, as the C types need).
struct Queued {
    kernel: usize,
    args: Vec<Vec<u128>>,
    n: i64,
}

pub struct CpuKernels {
    /// Kept loaded for the function pointers below.
    _library: Arc<Library>,
    kernels: Vec<Kernel>,
    take_failed: Option<TakeFailedFn>,
    queue: Mutex<Vec<Queued>>,
    sync: bool,
}

impl CpuKernels {
    /// The launchers of `g`'s kernels in `library`, its CPU build.
    pub fn new(library: Arc<Library>, g: &crate::gen::Generated) -> Result<CpuKernels, String> {
        let mut kernels = Vec::new();
        for (k, kernel) in g.kernels.iter().enumerate() {
            // Safety: the CPU build defines `pmx_cpu_grid_K` with this
            // type for every kernel.
            let launch: GridFn = unsafe { library.symbol(&format!("pmx_cpu_grid_{k}")) }?;
            // Safety: and `pmx_cpu_sizes_K`, an array of one int64_t per
            // argument; the symbol's address is the array's.
            let sizes: *const i64 = unsafe { library.symbol(&format!("pmx_cpu_sizes_{k}")) }?;
            // Safety: as above, `params.len()` elements.
            let sizes = unsafe { std::slice::from_raw_parts(sizes, kernel.params.len()) };
            let sizes = sizes.iter().map(|&s| usize::try_from(s).unwrap_or(0)).collect();
            kernels.push(Kernel { launch, sizes });
        }
        // Safety: defined with this type by the CPU build's host prelude
        // whenever it has kernels.
        let take_failed =
            if g.kernels.is_empty() { None } else { Some(unsafe { library.symbol("pmx_cpu_take_failed") }?) };
        let sync = crate::host::sync_each_launch();
        Ok(CpuKernels { _library: library, kernels, take_failed, queue: Mutex::new(Vec::new()), sync })
    }

    /// Runs kernel `kernel` with the arguments at `params`; its failure.
    fn run(&self, kernel: usize, params: &mut [*mut c_void], n: i64) -> Result<i64, String> {
        let take = self.take_failed.ok_or("internal error: the CPU build has no failure flag")?;
        if n <= 0 {
            return Ok(0);
        }
        let (blocks, tpb) = (blocks_for(n) as i64, THREADS_PER_BLOCK as i64);
        // Safety: `params` holds the addresses of the kernel's arguments,
        // of the types the launcher reads; the launcher waits for its
        // threads before it returns.
        unsafe {
            (self.kernels[kernel].launch)(params.as_mut_ptr(), n, blocks, tpb);
            Ok(take())
        }
    }
}

impl Launcher for CpuKernels {
    fn launch(&self, kernel: usize, params: &mut [*mut c_void], n: i64, _timed: bool) -> Result<Launched, String> {
        let k =
            self.kernels.get(kernel).ok_or_else(|| format!("internal error: no kernel {kernel} in the CPU build"))?;
        if params.len() != k.sizes.len() {
            return Err(format!(
                "internal error: kernel {kernel} takes {} arguments, given {}",
                k.sizes.len(),
                params.len()
            ));
        }
        if self.sync {
            return Ok(Launched { failed: self.run(kernel, params, n)?, kernel_time: None });
        }
        let args = params
            .iter()
            .zip(&k.sizes)
            .map(|(&p, &size)| {
                let mut words = vec![0u128; size.div_ceil(16).max(1)];
                // Safety: `p` is the address of an argument of `size`
                // bytes (the CPU build's own sizeof), live during the call.
                unsafe { std::ptr::copy_nonoverlapping(p as *const u8, words.as_mut_ptr() as *mut u8, size) };
                words
            })
            .collect();
        self.queue.lock().map_err(|_| "internal error: a poisoned launch queue")?.push(Queued { kernel, args, n });
        Ok(Launched { failed: 0, kernel_time: None })
    }

    fn settle(&self) -> Result<Launched, String> {
        let queued = std::mem::take(&mut *self.queue.lock().map_err(|_| "internal error: a poisoned launch queue")?);
        let mut failed = 0;
        for mut q in queued {
            let mut params: Vec<*mut c_void> = q.args.iter_mut().map(|w| w.as_mut_ptr() as *mut c_void).collect();
            // A device keeps the first failure of all the kernels it ran.
            let f = self.run(q.kernel, &mut params, q.n)?;
            if failed == 0 {
                failed = f;
            }
        }
        Ok(Launched { failed, kernel_time: None })
    }
}
