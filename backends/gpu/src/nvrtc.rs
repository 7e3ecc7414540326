//! NVRTC, loaded at run time. No CUDA toolkit is needed to build pmx:
//! NVRTC 12 or 13 (`libnvrtc.so.12`, `libnvrtc.so.13`) is looked for where
//! the dynamic loader finds it, then at `$PMX_NVRTC`, then in a CUDA
//! toolkit (`$CUDA_HOME`, `$CUDA_PATH`, `/usr/local/cuda`), then in
//! Python's NVIDIA packages (`pip install nvidia-cuda-nvrtc-cu12`, or the
//! CUDA 13 `nvidia-cuda-nvrtc`, give it without a GPU). cudarc panics when
//! it cannot load the library, so [`load`] checks first.

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
    use std::path::PathBuf;
    // `PMX_NVRTC` is tried (and named in the error) even when it does not
    // exist; the other places only when the file is there.
    let mut candidates: Vec<PathBuf> =
        std::env::var_os("PMX_NVRTC").filter(|p| !p.is_empty()).map(PathBuf::from).into_iter().collect();
    let mut found: Vec<PathBuf> = Vec::new();
    for dir in crate::toolkit::toolkit_dirs() {
        found.extend(["libnvrtc.so.13", "libnvrtc.so.12"].map(|n| dir.join("lib64").join(n)));
    }
    if let Some(dir) = crate::toolkit::python_nvidia_dir() {
        found.push(dir.join("cu13").join("lib").join("libnvrtc.so.13"));
        found.push(dir.join("cuda_nvrtc").join("lib").join("libnvrtc.so.12"));
    }
    candidates.extend(found.into_iter().filter(|p| p.exists()));
    let mut tried = Vec::new();
    for path in candidates {
        tried.push(path.display().to_string());
        // Safety: loading NVRTC runs its initialisers, which have no
        // preconditions. It is loaded globally so that cudarc's own
        // lookup by name (its soname) finds it, and never unloaded.
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
        "NVRTC (libnvrtc.so.12 or .13) not found (looked on the loader's path, in CUDA toolkits and in Python's \
         nvidia packages{}{}); install it with `pip install nvidia-cuda-nvrtc-cu12` or set PMX_NVRTC",
        if tried.is_empty() { "" } else { ", and at " },
        tried.join(", ")
    ))
}

/// Loads NVRTC (as [`load`]) with its symbols visible to libraries
/// loaded after it: generated code that calls NVRTC itself (Futhark's
/// CUDA backend) resolves its calls to the NVRTC pmx found.
pub fn load_globally() -> Result<(), String> {
    load()?;
    // The library cudarc opened by name is made global by opening it
    // again with RTLD_GLOBAL (RTLD_NOLOAD: only if it is the one loaded);
    // one found by path was opened globally already.
    for name in cudarc::get_lib_name_candidates("nvrtc") {
        if crate::toolkit::promote(&name) {
            break;
        }
    }
    Ok(())
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
