//! Kernels run on the CPU for the GPU engine's host library: each launch
//! the host code makes through `rt->launch` runs the kernel's CPU launcher
//! (`pmx_cpu_launch_K`) in the CPU build of the same generated unit, and
//! the failure flag is taken from that build. With it, the whole GPU path
//! but the device itself (host library built with `-DPMX_HOST_LAUNCH`,
//! launch callbacks, marshaling that copies sequences, the flag read after
//! every launch) runs on a machine without a GPU: `PMX_GPU_KERNELS=cpu`.

use crate::host::{Launched, Launcher, Library};
use std::ffi::c_void;
use std::sync::Arc;

type LaunchFn = unsafe extern "C" fn(*mut *mut c_void, i64) -> i64;
type TakeFailedFn = unsafe extern "C" fn() -> i64;

pub struct CpuKernels {
    /// Kept loaded for the function pointers below.
    _library: Arc<Library>,
    launchers: Vec<(LaunchFn, usize)>,
    take_failed: Option<TakeFailedFn>,
}

impl CpuKernels {
    /// The launchers of `g`'s kernels in `library`, its CPU build.
    pub fn new(library: Arc<Library>, g: &crate::gen::Generated) -> Result<CpuKernels, String> {
        let mut launchers = Vec::new();
        for (k, kernel) in g.kernels.iter().enumerate() {
            // Safety: the CPU build defines `pmx_cpu_launch_K` with this
            // type for every kernel.
            let f: LaunchFn = unsafe { library.symbol(&format!("pmx_cpu_launch_{k}")) }?;
            launchers.push((f, kernel.params.len()));
        }
        // Safety: defined with this type by the CPU build's host prelude
        // whenever it has kernels.
        let take_failed =
            if g.kernels.is_empty() { None } else { Some(unsafe { library.symbol("pmx_cpu_take_failed") }?) };
        Ok(CpuKernels { _library: library, launchers, take_failed })
    }
}

impl Launcher for CpuKernels {
    fn launch(&self, kernel: usize, params: &mut [*mut c_void], n: i64) -> Result<Launched, String> {
        let &(f, count) =
            self.launchers.get(kernel).ok_or_else(|| format!("internal error: no kernel {kernel} in the CPU build"))?;
        if params.len() != count {
            return Err(format!("internal error: kernel {kernel} takes {count} arguments, given {}", params.len()));
        }
        let take = self.take_failed.ok_or("internal error: the CPU build has no failure flag")?;
        // Safety: `params` holds the addresses of the kernel's arguments,
        // of the types the launcher reads; the launcher waits for its
        // threads before it returns.
        unsafe {
            f(params.as_mut_ptr(), n);
            Ok(Launched { failed: take(), kernel_time: None })
        }
    }
}
