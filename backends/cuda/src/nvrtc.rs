//! NVRTC, loaded at run time. No CUDA toolkit is needed to build pmx:
//! `libnvrtc.so.12` is looked for where the dynamic loader finds it, then
//! at `$PMX_NVRTC`, then in Python's `nvidia-cuda-nvrtc-cu12` package
//! (`pip install nvidia-cuda-nvrtc-cu12` gives it without a GPU). cudarc
//! panics when it cannot load the library, so [`load`] checks first.

use std::sync::OnceLock;

/// The architecture generated code is compiled for when no device says
/// otherwise (CUDA 12's oldest non-deprecated one is fine for a check).
pub const DEFAULT_ARCH: &str = "compute_75";

/// Loads NVRTC once; `Err` says where it was looked for.
pub fn load() -> Result<(), String> {
    static LOADED: OnceLock<Result<(), String>> = OnceLock::new();
    LOADED.get_or_init(find_and_load).clone()
}

/// The NVRTC functions pmx calls; cudarc panics on a missing one, so
/// their presence is checked once, up front.
const SYMBOLS: &[&str] = &[
    "nvrtcVersion",
    "nvrtcGetNumSupportedArchs",
    "nvrtcGetSupportedArchs",
    "nvrtcCreateProgram",
    "nvrtcCompileProgram",
    "nvrtcGetPTXSize",
    "nvrtcGetPTX",
    "nvrtcGetProgramLogSize",
    "nvrtcGetProgramLog",
    "nvrtcDestroyProgram",
];

fn find_and_load() -> Result<(), String> {
    find_library()?;
    // Safety: the library is present (just checked); looking a symbol up
    // has no other precondition.
    let lib = unsafe { cudarc::nvrtc::sys::culib() };
    for name in SYMBOLS {
        // Safety: as above; the symbol is only looked up, not called.
        if unsafe { lib.get::<*const ()>(name.as_bytes()) }.is_err() {
            return Err(format!("the NVRTC library found lacks {name} (too old); install nvidia-cuda-nvrtc-cu12"));
        }
    }
    Ok(())
}

fn find_library() -> Result<(), String> {
    // Safety: `is_culib_present` only tries to open the library.
    if unsafe { cudarc::nvrtc::sys::is_culib_present() } {
        return Ok(());
    }
    let mut tried = Vec::new();
    let mut candidates = Vec::new();
    if let Some(p) = std::env::var_os("PMX_NVRTC").filter(|p| !p.is_empty()) {
        candidates.push(std::path::PathBuf::from(p));
    }
    if let Some(dir) = python_package_dir() {
        candidates.push(dir.join("lib").join("libnvrtc.so.12"));
    }
    for path in candidates {
        tried.push(path.display().to_string());
        // Safety: loading NVRTC runs its initialisers, which have no
        // preconditions. It is loaded globally so that cudarc's own
        // lookup by name finds it, and never unloaded.
        let lib = unsafe {
            libloading::os::unix::Library::open(
                Some(&path),
                libloading::os::unix::RTLD_NOW | libloading::os::unix::RTLD_GLOBAL,
            )
        };
        if let Ok(lib) = lib {
            std::mem::forget(lib);
            // Safety: as above.
            if unsafe { cudarc::nvrtc::sys::is_culib_present() } {
                return Ok(());
            }
        }
    }
    Err(format!(
        "NVRTC (libnvrtc.so.12) not found (looked on the loader's path{}{}); install it with `pip install nvidia-cuda-nvrtc-cu12` or set PMX_NVRTC",
        if tried.is_empty() { "" } else { " and at " },
        tried.join(", ")
    ))
}

/// `site-packages/nvidia/cuda_nvrtc`, asked of Python.
fn python_package_dir() -> Option<std::path::PathBuf> {
    let out = std::process::Command::new("python3")
        .args(["-c", "import nvidia.cuda_nvrtc as m, os; print(list(m.__path__)[0])"])
        .output()
        .ok()?;
    out.status.success().then(|| std::path::PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
}

/// Compiles a translation unit to PTX for `arch`; the error is NVRTC's log.
pub fn compile(source: &str, arch: &'static str) -> Result<String, String> {
    load()?;
    let opts = cudarc::nvrtc::CompileOptions {
        arch: Some(arch),
        options: vec!["-std=c++17".into()],
        name: Some("pmx.cu".into()),
        ..Default::default()
    };
    match cudarc::nvrtc::compile_ptx_with_opts(source, opts) {
        Ok(ptx) => Ok(ptx.to_src()),
        Err(cudarc::nvrtc::CompileError::CompileError { log, .. }) => Err(log.to_string_lossy().into_owned()),
        Err(e) => Err(format!("NVRTC failed: {e:?}")),
    }
}

/// NVRTC's version (major, minor), for cache keys and messages.
pub fn version() -> Result<(i32, i32), String> {
    load()?;
    let (mut major, mut minor) = (0, 0);
    // Safety: NVRTC is loaded and has the symbol (checked by `load`).
    let r = unsafe { cudarc::nvrtc::sys::nvrtcVersion(&mut major, &mut minor) };
    if r != cudarc::nvrtc::sys::nvrtcResult::NVRTC_SUCCESS {
        return Err(format!("nvrtcVersion failed: {r:?}"));
    }
    Ok((major, minor))
}

/// The virtual architecture to compile for a device of compute
/// capability `cc` (major * 10 + minor): the device's own when NVRTC
/// supports it, else the newest older one NVRTC knows (the driver
/// compiles that PTX for the device), as `compute_XY`.
pub fn arch_for(cc: i32) -> Result<&'static str, String> {
    load()?;
    let mut count = 0;
    // Safety: NVRTC is loaded and has these symbols (checked by `load`);
    // the buffer has the length NVRTC reports.
    let archs = unsafe {
        let mut archs = Vec::new();
        if cudarc::nvrtc::sys::nvrtcGetNumSupportedArchs(&mut count) == cudarc::nvrtc::sys::nvrtcResult::NVRTC_SUCCESS {
            archs.resize(count.max(0) as usize, 0);
            if cudarc::nvrtc::sys::nvrtcGetSupportedArchs(archs.as_mut_ptr())
                != cudarc::nvrtc::sys::nvrtcResult::NVRTC_SUCCESS
            {
                archs.clear();
            }
        }
        archs
    };
    let chosen = archs.iter().copied().filter(|&a| a <= cc).max().ok_or_else(|| {
        format!("NVRTC supports none of the architectures up to compute capability {}.{}", cc / 10, cc % 10)
    })?;
    // The names are few (one per architecture a process meets), so they
    // are kept for the process's life, as NVRTC's options want them.
    static NAMES: std::sync::Mutex<Vec<(i32, &'static str)>> = std::sync::Mutex::new(Vec::new());
    let mut names = NAMES.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, n)) = names.iter().find(|(a, _)| *a == chosen) {
        return Ok(n);
    }
    let name: &'static str = Box::leak(format!("compute_{chosen}").into_boxed_str());
    names.push((chosen, name));
    Ok(name)
}
