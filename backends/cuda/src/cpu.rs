//! The CPU engine: the generated CUDA source compiled by the system C++
//! compiler with OpenMP (a kernel launch is a parallel loop over the
//! grid), cached, loaded with `libloading`, and called through the host
//! ABI (`host.rs`) with the same marshaling (separate buffers per root)
//! that the GPU uses, so alias reconstruction is exercised exactly as on a
//! device.

use crate::gen::Generated;
use crate::host::{self, Entry, Library};
use crate::memory::HostMemory;
use pmx_cpu::value::Value;
use pmx_cpu::{Args, CallStats, Engine, Machine, Site};

/// Compiles (or finds in the cache) and loads the generated source.
pub fn build(g: &Generated) -> Result<Library, String> {
    host::build(g, &[], "CUDA-class accelerate code for the CPU")
}

/// One binding's engine.
pub struct CpuEngine(pub Entry);

impl Engine for CpuEngine {
    fn name(&self) -> &str {
        "cuda-cpu"
    }

    fn call(&self, m: &mut Machine, site: &Site, args: Args, stats: &mut CallStats) -> pmx_cpu::Res<Value> {
        let call = host::Call { memory: &mut HostMemory::default(), launcher: None, engine: "cuda-cpu" };
        self.0.call(m, site, args, call, stats)
    }
}
