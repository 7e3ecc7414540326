//! Where CUDA's pieces are on this machine, for code that pmx compiles
//! and loads itself: toolkits, NVIDIA's Python packages, the headers that
//! C code using the driver API and NVRTC needs (`cuda.h`, `nvrtc.h`), and
//! the driver's and NVRTC's symbols made visible to generated libraries.

use std::path::PathBuf;
use std::sync::OnceLock;

/// CUDA toolkits: `$CUDA_HOME`, `$CUDA_PATH`, `/usr/local/cuda`.
pub fn toolkit_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = ["CUDA_HOME", "CUDA_PATH"]
        .iter()
        .filter_map(|v| std::env::var_os(v).filter(|p| !p.is_empty()).map(PathBuf::from))
        .collect();
    dirs.push("/usr/local/cuda".into());
    dirs
}

/// `site-packages/nvidia` (NVIDIA's Python packages: `cuda_nvrtc/` and
/// `cuda_runtime/` hold CUDA 12's pieces, `cu13/` CUDA 13's), asked of
/// Python once.
pub fn python_nvidia_dir() -> Option<PathBuf> {
    static DIR: OnceLock<Option<PathBuf>> = OnceLock::new();
    DIR.get_or_init(|| {
        let out = std::process::Command::new("python3")
            .args(["-c", "import nvidia; print(list(nvidia.__path__)[0])"])
            .output()
            .ok()?;
        out.status.success().then(|| PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
    })
    .clone()
}

/// The include folders that hold `cuda.h` and `nvrtc.h` (one folder, or
/// two from Python's packages), or what was looked for.
pub fn include_dirs() -> Result<Vec<PathBuf>, String> {
    let has = |d: &PathBuf, h: &str| d.join(h).is_file();
    let mut places: Vec<PathBuf> = toolkit_dirs().into_iter().map(|d| d.join("include")).collect();
    let python = python_nvidia_dir();
    if let Some(n) = &python {
        places.push(n.join("cu13").join("include"));
    }
    if let Some(d) = places.iter().find(|d| has(d, "cuda.h") && has(d, "nvrtc.h")) {
        return Ok(vec![d.clone()]);
    }
    if let Some(n) = &python {
        let (rt, nvrtc) = (n.join("cuda_runtime").join("include"), n.join("cuda_nvrtc").join("include"));
        if has(&rt, "cuda.h") && has(&nvrtc, "nvrtc.h") {
            return Ok(vec![rt, nvrtc]);
        }
    }
    Err(format!(
        "CUDA's headers (cuda.h and nvrtc.h) not found (looked in {}{}); install a CUDA toolkit or set CUDA_HOME",
        places.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", "),
        if python.is_some() { " and Python's nvidia packages" } else { "" }
    ))
}

/// Makes an already loaded library's symbols global; whether `name` was
/// loaded.
pub fn promote(name: &str) -> bool {
    use libloading::os::unix::{Library, RTLD_GLOBAL, RTLD_NOW};
    const RTLD_NOLOAD: std::os::raw::c_int = 4;
    // Safety: with RTLD_NOLOAD nothing is loaded, so no initialiser runs;
    // the handle is kept (the library stays for the process's life).
    match unsafe { Library::open(Some(name), RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD) } {
        Ok(lib) => {
            std::mem::forget(lib);
            true
        }
        Err(_) => false,
    }
}

/// The device (as the GPU engine checks it), with the driver's and
/// NVRTC's symbols visible to libraries loaded after this, for generated
/// C that calls them directly (Futhark's CUDA backend); `Err` says what
/// is missing.
pub fn load_globally() -> Result<&'static crate::device::Device, String> {
    let device = crate::device::usable()?;
    let promoted = cudarc::get_lib_name_candidates("cuda").iter().any(|n| promote(n));
    if !promoted {
        return Err("the CUDA driver's library could not be made visible to generated code".into());
    }
    crate::nvrtc::load_globally()?;
    Ok(device)
}
