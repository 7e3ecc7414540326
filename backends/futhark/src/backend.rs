//! Which of Futhark's backends compiles the generated program: `multicore`
//! for the CPU, `cuda` for a GPU. What differs between them is said here:
//! the C build (flags, headers), what must be loaded before the library,
//! and how a context is configured.
//!
//! Futhark's `cuda` backend calls the CUDA driver API and NVRTC directly.
//! Its library is built without linking them: pmx finds and loads the
//! driver and NVRTC itself (`pmx_gpu::toolkit`), globally, before the
//! library, so a machine with a driver and NVRTC but no toolkit to link
//! against still runs it. Two things keep Futhark 0.22's C working with
//! CUDA 13's headers and without CUDA's runtime library, both in
//! [`CUDA_COMPAT`]: CUDA 13 made `cuCtxCreate` take creation parameters
//! (Futhark 0.22 calls the older form, which every driver still exports as
//! `cuCtxCreate_v2`), and Futhark's profiling calls four `cudaEvent*`
//! functions of the runtime library, given here through the driver's
//! events.

use std::path::{Path, PathBuf};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Backend {
    Multicore,
    Cuda,
}

/// Force-included before Futhark's C (`-include`): CUDA 13's `cuCtxCreate`
/// as the form Futhark 0.22 calls.
pub const CUDA_COMPAT_HEADER: &str = "\
// pmx: Futhark 0.22's C against CUDA 13's headers.
#include <cuda.h>
#if CUDA_VERSION >= 13000
#undef cuCtxCreate
CUresult CUDAAPI cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev);
#define cuCtxCreate cuCtxCreate_v2
#endif
";

/// Appended to the glue of a `cuda` build: the runtime library's event
/// functions that Futhark's profiling calls, through the driver.
pub const CUDA_COMPAT: &str = "\
// The cudaEvent functions Futhark's profiling calls, through the driver's
// events (the CUDA runtime library is not needed). The error codes of
// these calls are the same numbers in both APIs.
cudaError_t cudaEventCreate(cudaEvent_t *e) { return (cudaError_t)cuEventCreate(e, CU_EVENT_DEFAULT); }
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s) { return (cudaError_t)cuEventRecord(e, s); }
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t a, cudaEvent_t b) {
  return (cudaError_t)cuEventElapsedTime(ms, a, b);
}
cudaError_t cudaEventDestroy(cudaEvent_t e) { return (cudaError_t)cuEventDestroy(e); }
";

/// The file [`CUDA_COMPAT_HEADER`] is written to in the build folder.
pub const CUDA_COMPAT_FILE: &str = "pmx_cuda_compat.h";

/// The file `pmx_native::pages::c_header()` is written to for a
/// `multicore` build: Futhark's large arrays on huge pages.
pub const PAGES_FILE: &str = "pmx_pages.h";

impl Backend {
    /// Futhark's command for it (also part of cache keys).
    pub fn command(self) -> &'static str {
        match self {
            Backend::Multicore => "multicore",
            Backend::Cuda => "cuda",
        }
    }

    /// The engine's name in profiles and `--verbose`.
    pub fn engine_name(self) -> &'static str {
        match self {
            Backend::Multicore => "futhark-multicore",
            Backend::Cuda => "futhark-cuda",
        }
    }

    /// What the C build needs beyond the C compiler: the include folders
    /// of CUDA's headers for `cuda`; `Err` says what is missing.
    pub fn include_dirs(self) -> Result<Vec<PathBuf>, String> {
        match self {
            Backend::Multicore => Ok(Vec::new()),
            Backend::Cuda => pmx_gpu::toolkit::include_dirs(),
        }
    }

    /// The header force-included before Futhark's C and its text.
    pub fn header(self) -> (&'static str, std::borrow::Cow<'static, str>) {
        match self {
            Backend::Multicore => (PAGES_FILE, pmx_native::pages::c_header().into()),
            Backend::Cuda => (CUDA_COMPAT_FILE, CUDA_COMPAT_HEADER.into()),
        }
    }

    /// Flags of the C build in `dir` (part of the cache key, with the
    /// include folders). Futhark's C needs C99 and threads; the `multicore`
    /// build force-includes the huge-page advice for its large arrays, the `cuda`
    /// build force-includes the compatibility header, which must come
    /// before Futhark's own feature macros take effect, so it is GNU C.
    pub fn flags(self, dir: &Path, includes: &[PathBuf]) -> Vec<String> {
        let mut f: Vec<String> = ["-O3", "-march=native", "-pthread"].map(String::from).to_vec();
        match self {
            Backend::Multicore => {
                f.push("-std=c99".into());
                f.push("-include".into());
                f.push(dir.join(PAGES_FILE).display().to_string());
            }
            Backend::Cuda => {
                f.push("-std=gnu99".into());
                f.push("-include".into());
                f.push(dir.join(CUDA_COMPAT_FILE).display().to_string());
                f.extend(includes.iter().map(|d| format!("-I{}", d.display())));
            }
        }
        f
    }

    /// The flags that decide the build whatever its folder (cache keys).
    pub fn key_flags(self, includes: &[PathBuf]) -> String {
        self.flags(Path::new(""), includes).join(" ")
    }
}
