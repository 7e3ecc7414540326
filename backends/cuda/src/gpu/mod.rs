//! The GPU engine. The host part of each binding (the sequential code
//! around its kernel launches) is the generated unit compiled as host code
//! with `-DPMX_HOST_LAUNCH` into a cached shared library (`host.rs`, as for
//! the CPU engine); its launches call back into Rust, which runs the
//! kernels compiled by NVRTC for the device (`module.rs`) and reads the
//! failure flag after each. Tensor roots, copied sequences and memory that
//! host code asks for are CUDA managed memory (`memory.rs`), so host code
//! and kernels address the same data.
//!
//! `PMX_GPU_KERNELS=cpu` runs the same engine with its kernels launched
//! in the CPU build of the unit (`cpu_kernels.rs`) and host memory that is
//! marshaled like a device's: the whole path but the device, for machines
//! without a GPU (the test suite runs every CUDA-class program so).

mod cpu_kernels;
pub use pmx_gpu::device;
mod memory;
mod module;

use crate::gen::Generated;
use crate::host::{self, Entry, Launcher, Library};
use crate::memory::{HostMemory, Memory};
use pmx_cpu::value::Value;
use pmx_cpu::{Args, CallStats, Engine, Machine, Site};
use std::sync::Arc;
use std::time::Duration;

/// Whether this engine can run here: a usable device and NVRTC, or
/// kernels on the CPU; `Err` says what is missing.
pub fn usable() -> Result<(), String> {
    if kernels_on_cpu() {
        return Ok(());
    }
    device::usable().map(|_| ())
}

/// Whether kernels run on the CPU (`PMX_GPU_KERNELS=cpu`).
pub fn kernels_on_cpu() -> bool {
    std::env::var("PMX_GPU_KERNELS").is_ok_and(|v| v == "cpu")
}

/// A program's CUDA-class bindings ready to run: the host library and
/// what runs its kernels.
pub struct Program {
    pub host: Arc<Library>,
    kernels: Box<dyn Launcher>,
    device: Option<&'static device::Device>,
    /// How it runs, for `--verbose`.
    pub how: String,
    pub cached: bool,
    pub compile_time: Duration,
}

/// Builds (or finds in the cache) the host library and the kernels; `Err`
/// says what is missing (driver, device, NVRTC) or what failed.
pub fn build(g: &Generated) -> Result<Program, String> {
    if kernels_on_cpu() {
        let host = Arc::new(host::build(g, &["-DPMX_HOST_LAUNCH"], "the host code of CUDA-class accelerate code")?);
        let cpu = Arc::new(crate::cpu::build(g)?);
        let (cached, compile_time) = (host.cached && cpu.cached, host.compile_time + cpu.compile_time);
        let kernels = Box::new(cpu_kernels::CpuKernels::new(cpu, g)?);
        let how = "CUDA: host code with kernels launched on the CPU (PMX_GPU_KERNELS=cpu".to_string();
        return Ok(Program { host, kernels, device: None, how, cached, compile_time });
    }
    let device = device::usable()?;
    let host = Arc::new(host::build(g, &["-DPMX_HOST_LAUNCH"], "the host code of CUDA-class accelerate code")?);
    let module = module::load(g, device)?;
    let how = format!(
        "CUDA on {} (compute capability {}.{}, kernels for {}, copies {}",
        device.name,
        device.capability / 10,
        device.capability % 10,
        module.arch,
        if device.prefetch { "by the copy engine" } else { "by page faults" }
    );
    let (cached, compile_time) = (host.cached && module.cached, host.compile_time + module.compile_time);
    Ok(Program { host, kernels: Box::new(module), device: Some(device), how, cached, compile_time })
}

/// One binding's engine.
pub struct GpuEngine {
    pub entry: Entry,
    pub program: Arc<Program>,
}

impl Engine for GpuEngine {
    fn name(&self) -> &str {
        "cuda-gpu"
    }

    fn call(&self, m: &mut Machine, site: &Site, args: Args, stats: &mut CallStats) -> pmx_cpu::Res<Value> {
        let mut memory: Box<dyn Memory> = match self.program.device {
            Some(d) => {
                d.bind().map_err(|e| m.fail(format!("cuda-gpu: {e}"), site.boundary.span))?;
                Box::new(memory::ManagedMemory::new(d))
            }
            None => Box::new(HostMemory::separate()),
        };
        let call = host::Call { memory: &mut *memory, launcher: Some(&*self.program.kernels), engine: "cuda-gpu" };
        self.entry.call(m, site, args, call, stats)
    }
}
