//! The CPU engine: the generated CUDA source compiled by the system C++
//! compiler with OpenMP (a kernel launch is a parallel loop over the
//! grid), cached, loaded with `libloading`, and called through the host
//! ABI with the same marshaling (separate buffers per root) that the GPU
//! uses, so alias reconstruction is exercised exactly as on a device.

use crate::gen::{EntryAbi, Generated};
use crate::marshal::{self, Arg};
use pmx_ast::Span;
use pmx_cpu::value::Value;
use pmx_cpu::{Args, Engine, Machine, Site};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The compiled library of one program's CUDA-class bindings.
pub struct Library {
    /// Never unloaded: the OpenMP runtime it started keeps threads whose
    /// code must stay mapped until the process exits.
    lib: std::mem::ManuallyDrop<libloading::Library>,
    pub failures: Vec<(Span, String)>,
    /// Whether it was found in the cache.
    pub cached: bool,
    pub compile_time: Duration,
}

/// Flags of the CPU build (part of the cache key).
const FLAGS: &[&str] = &["-x", "c++", "-std=c++17", "-O3", "-march=native", "-fopenmp", "-fno-math-errno"];

/// Compiles (or finds in the cache) and loads the generated source.
pub fn build(g: &Generated) -> Result<Library, String> {
    let cxx = pmx_native::cc::Compiler::find(pmx_native::cc::Language::Cxx).ok_or(
        "no C++ compiler found (set CXX, or install g++): CUDA-class accelerate code cannot be compiled for the CPU",
    )?;
    let root = pmx_native::cache::dir().ok_or("no cache folder (set PMX_CACHE_DIR)")?;
    let key =
        pmx_native::cache::key(&[b"cuda-cpu", g.source.as_bytes(), cxx.version.as_bytes(), FLAGS.join(" ").as_bytes()]);
    let started = Instant::now();
    let progress = std::cell::Cell::new(None);
    let (dir, found) = pmx_native::cache::entry(&root, &key, |dir| {
        progress.set(Some(pmx_native::progress::Progress::start("compiling CUDA-class accelerate code for the CPU")));
        let src = dir.join("pmx.cu");
        std::fs::write(&src, &g.source).map_err(|e| format!("cannot write {}: {e}", src.display()))?;
        cxx.shared_library(&[&src], &dir.join("libpmx.so"), FLAGS).map_err(|e| {
            format!("internal error: the generated CUDA code does not compile (kept at {}):\n{e}", src.display())
        })
    })?;
    if let Some(p) = progress.take() {
        p.finish();
    }
    let path = dir.join("libpmx.so");
    // Safety: the library is pmx's own generated code, whose initialisers
    // do nothing but set up statics.
    let lib = unsafe { libloading::Library::new(&path) }.map_err(|e| format!("cannot load {}: {e}", path.display()))?;
    Ok(Library {
        lib: std::mem::ManuallyDrop::new(lib),
        failures: g.failures.clone(),
        cached: found == pmx_native::cache::Found::Cached,
        compile_time: started.elapsed(),
    })
}

type EntryFn = unsafe extern "C" fn(*const Arg, *mut Arg, *const Runtime) -> i64;

/// Mirrors the generated `struct pmx_runtime`.
#[repr(C)]
struct Runtime {
    ctx: *mut std::ffi::c_void,
    alloc: extern "C" fn(*mut std::ffi::c_void, i64) -> *mut std::ffi::c_void,
    launch: extern "C" fn(*mut std::ffi::c_void, i64, *mut *mut std::ffi::c_void, i64, i64) -> i64,
}

/// Memory the host code asks for during one call, freed after it.
extern "C" fn arena_alloc(ctx: *mut std::ffi::c_void, bytes: i64) -> *mut std::ffi::c_void {
    // Safety: `ctx` is the `Vec<Vec<u64>>` of the running call.
    let arena = unsafe { &mut *(ctx as *mut Vec<Vec<u64>>) };
    let mut block = vec![0u64; (bytes.max(0) as usize).div_ceil(8).max(1)];
    let p = block.as_mut_ptr() as *mut std::ffi::c_void;
    arena.push(block);
    p
}

/// The CPU build launches kernels itself; this is never called.
extern "C" fn no_launch(_: *mut std::ffi::c_void, _: i64, _: *mut *mut std::ffi::c_void, _: i64, _: i64) -> i64 {
    -1
}

/// One binding's engine.
pub struct CpuEngine {
    pub library: Arc<Library>,
    pub entry: EntryAbi,
    pub profile: Option<(Arc<pmx_native::profile::Profile>, usize)>,
}

impl Engine for CpuEngine {
    fn name(&self) -> &str {
        "cuda-cpu"
    }

    fn call(&self, m: &mut Machine, site: &Site, args: Args) -> pmx_cpu::Res<Value> {
        let span = site.boundary.span;
        let started = Instant::now();
        let values: Vec<Value> = if site.boundary.dummy { Vec::new() } else { args.into_iter().collect() };
        let written: Vec<bool> = site.boundary.params.iter().map(|p| p.written).collect();
        let marshaled = marshal::marshal(&values, &self.entry.params, &written).map_err(|e| m.fail(e, span))?;
        let mut result = vec![Arg::default(); crate::gen::leaves(&self.entry.result).max(1)];
        let mut arena: Vec<Vec<u64>> = Vec::new();
        let rt = Runtime { ctx: &mut arena as *mut _ as *mut std::ffi::c_void, alloc: arena_alloc, launch: no_launch };
        // Safety: the symbol is an entry of the generated library with the
        // ABI `EntryFn`; the argument and result slots match its types.
        let code = unsafe {
            let f: libloading::Symbol<EntryFn> = self
                .library
                .lib
                .get(self.entry.symbol.as_bytes())
                .map_err(|e| m.fail(format!("internal error: entry {} missing: {e}", self.entry.symbol), span))?;
            f(marshaled.args.as_ptr(), result.as_mut_ptr(), &rt)
        };
        if code != 0 {
            let (at, what) = self
                .library
                .failures
                .get(code as usize - 1)
                .cloned()
                .unwrap_or((span, format!("internal error: unknown failure {code} in generated code")));
            return Err(m.fail(format!("{what} (in CUDA-class accelerated code)"), at));
        }
        let bytes_out = marshaled.copy_back();
        let mut k = 0;
        let value = marshal::unmarshal(&self.entry.result, &result, &mut k).map_err(|e| m.fail(e, span))?;
        if let Some((profile, index)) = &self.profile {
            let elapsed = started.elapsed();
            profile.update(*index, |e| {
                e.calls += 1;
                e.inside += elapsed;
                e.bytes_in += marshaled.bytes_in;
                e.bytes_out += bytes_out;
            });
        }
        Ok(value)
    }
}
