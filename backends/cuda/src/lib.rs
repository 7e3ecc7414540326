//! The CUDA backend. What is here so far: alias reconstruction for
//! marshaling (`alias.rs`): the tensors a call passes, wherever they sit in
//! its parameters, merged into the roots that must be allocated once on the
//! device so that views which alias on the CPU alias there too.
//!
//! Code generation from the lowered IR, the GPU engine (cudarc: NVRTC and
//! the driver API) and the CPU engine (the same source through the system
//! C++ compiler) are not written yet.

pub mod alias;
pub mod cpu;
pub mod gen;
pub mod marshal;
pub mod nvrtc;
