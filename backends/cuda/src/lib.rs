//! The CUDA backend: CUDA-class accelerate bindings as generated CUDA C++,
//! run on a GPU or as native parallel code on the CPU.
//!
//! - `gen/`: the lowered IR to one translation unit that compiles under
//!   nvcc, NVRTC and a plain C++ compiler (`prelude.h`), with located
//!   failures recorded in a flag (`pmx_failed`) the host checks after
//!   every launch; `gen/hoist.rs`: which loops test their accesses once
//!   before they run instead of at every access.
//! - `alias.rs`: the tensor views of a call merged into roots;
//!   `marshal.rs`: parameters flattened into the host ABI's slots, tensors
//!   as views into per-root buffers of the engine's memory (`memory.rs`;
//!   a root nothing writes is read in place where the engine sees this
//!   process's memory).
//! - `host.rs`: what both engines share: the unit compiled as host code
//!   into a cached shared library, and one call of an entry (marshal,
//!   call, failure code to a located error, copy back, profile).
//! - `cpu.rs`: the CPU engine (kernels as OpenMP loops); `gpu/`: the GPU
//!   engine through cudarc (host library built with `-DPMX_HOST_LAUNCH`
//!   whose launches call back into Rust, kernels compiled by NVRTC and
//!   launched with the driver API, managed memory); NVRTC, the toolkits
//!   and the device check are `pmx-gpu`'s (re-exported as `nvrtc`,
//!   `toolkit` and `gpu::device`).
//!
//! Invariants: nothing here panics on a missing driver, device or NVRTC
//! (cudarc would, so every library and function is checked before the
//! first call; see `gpu/device.rs`, `nvrtc.rs`); a failure of generated
//! code is reported as its location id (positive) and an engine error as
//! a message, never as a crash of pmx; views that alias in the program
//! alias in the buffers generated code sees.

pub mod alias;
pub mod cpu;
pub mod gen;
pub mod gpu;
pub mod host;
pub mod marshal;
pub mod memory;
// Shared with the Futhark backend (`pmx-gpu`), under their old names.
pub use pmx_gpu::{nvrtc, toolkit};
