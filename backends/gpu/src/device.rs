//! The CUDA device pmx runs on (device 0), opened once per process
//! through the driver API, and whether one is usable at all.
//!
//! cudarc panics when `libcuda` is missing or lacks a function it is asked
//! for, so [`open`] checks that the library is there and has every
//! function pmx calls before calling any; every failure is a message.

use cudarc::driver::{result, sys};
use std::sync::OnceLock;

/// Device 0 and its primary context.
pub struct Device {
    pub device: sys::CUdevice,
    pub context: sys::CUcontext,
    pub name: String,
    /// Compute capability, major * 10 + minor.
    pub capability: i32,
    /// The driver's CUDA version, major * 1000 + minor * 10.
    pub driver_version: i32,
    /// Whether managed memory can be moved ahead of use
    /// (`cuMemPrefetchAsync_v2` present, concurrent managed access).
    pub prefetch: bool,
    /// Whether the host may touch managed memory while kernels run
    /// (concurrent managed access): launches can then be queued.
    pub concurrent: bool,
    /// Whether kernels are timed with events (`cuEventElapsedTime_v2`,
    /// drivers of CUDA 12.8 and newer); else launches are timed by the
    /// host's clock.
    pub events: bool,
}

// Safety: a CUDA context may be made current on any thread; the handle is
// only used through the driver API, which is thread-safe.
unsafe impl Send for Device {}
unsafe impl Sync for Device {}

/// The driver functions pmx calls (checked before the first call).
const SYMBOLS: &[&str] = &[
    "cuInit",
    "cuDriverGetVersion",
    "cuDeviceGetCount",
    "cuDeviceGet",
    "cuDeviceGetName",
    "cuDeviceGetAttribute",
    "cuDevicePrimaryCtxRetain",
    "cuCtxSetCurrent",
    "cuCtxSynchronize",
    "cuModuleLoadData",
    "cuModuleGetFunction",
    "cuModuleGetGlobal_v2",
    "cuLaunchKernel",
    "cuMemAllocManaged",
    "cuMemFree_v2",
    "cuMemcpyDtoH_v2",
    "cuMemcpyHtoD_v2",
    "cuGetErrorName",
    "cuGetErrorString",
];

/// The device, or why there is none to use (driver absent, no device, a
/// driver error); NVRTC is checked by [`usable`].
pub fn open() -> Result<&'static Device, String> {
    static DEVICE: OnceLock<Result<Device, String>> = OnceLock::new();
    DEVICE.get_or_init(find).as_ref().map_err(Clone::clone)
}

/// The device and NVRTC, or what is missing to run CUDA-class code on a GPU.
pub fn usable() -> Result<&'static Device, String> {
    let device = open()?;
    crate::nvrtc::load()?;
    Ok(device)
}

fn find() -> Result<Device, String> {
    // Safety: `is_culib_present` only tries to open the library.
    if !unsafe { sys::is_culib_present() } {
        return Err("no CUDA driver (libcuda.so was not found; a GPU and NVIDIA's driver are needed)".into());
    }
    // Safety: the library is present (just checked).
    let lib = unsafe { sys::culib() };
    for name in SYMBOLS {
        // Safety: the symbol is only looked up, not called.
        if unsafe { lib.get::<*const ()>(name.as_bytes()) }.is_err() {
            return Err(format!("the CUDA driver found lacks {name} (too old a driver)"));
        }
    }
    result::init().map_err(|e| format!("the CUDA driver does not start: {}", describe(e)))?;
    let mut driver_version = 0;
    // Safety: the driver is initialised; the pointer is to a local.
    unsafe { sys::cuDriverGetVersion(&mut driver_version) }
        .result()
        .map_err(|e| format!("cuDriverGetVersion: {}", describe(e)))?;
    let count = result::device::get_count().map_err(|e| format!("cuDeviceGetCount: {}", describe(e)))?;
    if count < 1 {
        return Err("no CUDA device (the driver reports none)".into());
    }
    let dev = result::device::get(0).map_err(|e| format!("cuDeviceGet: {}", describe(e)))?;
    let name = result::device::get_name(dev).map_err(|e| format!("cuDeviceGetName: {}", describe(e)))?;
    let attr = |a| {
        // Safety: `dev` is a device handle of the initialised driver.
        unsafe { result::device::get_attribute(dev, a) }.map_err(|e| format!("cuDeviceGetAttribute: {}", describe(e)))
    };
    let major = attr(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?;
    let minor = attr(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?;
    if attr(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY)? == 0 {
        return Err(format!("the CUDA device {name} has no managed memory, which pmx's GPU engine needs"));
    }
    let concurrent = attr(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS)? != 0;
    // Safety: the symbol is only looked up, not called.
    let prefetch = concurrent && unsafe { lib.get::<*const ()>(b"cuMemPrefetchAsync_v2") }.is_ok();
    // Safety: the symbols are only looked up, not called.
    let events = ["cuEventCreate", "cuEventRecord", "cuEventSynchronize", "cuEventElapsedTime_v2", "cuEventDestroy_v2"]
        .iter()
        .all(|s| unsafe { lib.get::<*const ()>(s.as_bytes()) }.is_ok());
    // Safety: as above; the primary context lives as long as the process
    // (it is never released).
    let context = unsafe { result::primary_ctx::retain(dev) }
        .map_err(|e| format!("cuDevicePrimaryCtxRetain: {}", describe(e)))?;
    Ok(Device {
        device: dev,
        context,
        name,
        capability: major * 10 + minor,
        driver_version,
        prefetch,
        concurrent,
        events,
    })
}

impl Device {
    /// Makes the device's context current on this thread (calls of
    /// accelerated code may come from any thread).
    pub fn bind(&self) -> Result<(), String> {
        // Safety: the context is the retained primary context.
        unsafe { result::ctx::set_current(self.context) }.map_err(|e| format!("cuCtxSetCurrent: {}", describe(e)))
    }
}

/// A driver error as its name and the driver's description.
pub fn describe(e: result::DriverError) -> String {
    let name = e.error_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|_| format!("{:?}", e.0));
    match e.error_string() {
        Ok(s) => format!("{name} ({})", s.to_string_lossy()),
        Err(_) => name,
    }
}
