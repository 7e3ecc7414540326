//! What both GPU backends (CUDA-class code through NVRTC and the driver,
//! Futhark-class code through `futhark cuda`) need from CUDA, in one place
//! so that neither backend depends on the other:
//!
//! - `toolkit.rs`: where CUDA toolkits, their headers and Python's NVIDIA
//!   packages are, and making the driver's and NVRTC's symbols visible
//!   to libraries loaded later (Futhark's generated code links neither);
//! - `nvrtc.rs`: NVRTC (12 or 13) loaded at run time, programs compiled
//!   to PTX, the architecture a device takes;
//! - `device.rs`: the device, checked (driver, a device, its compute
//!   capability, managed memory) before cudarc is trusted.
//!
//! Invariant: nothing here panics on a missing driver, device or NVRTC
//! (cudarc would, so every library and function is checked before the
//! first call); each lookup is made once per process.

pub mod device;
pub mod nvrtc;
pub mod toolkit;
