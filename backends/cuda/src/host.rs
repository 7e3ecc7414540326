//! What both engines share: the generated source compiled as host code by
//! the system C++ compiler into a cached shared library, and one call of
//! an entry through the host ABI (marshal, call, check the failure code,
//! copy back, unmarshal, profile).
//!
//! The CPU engine builds the whole unit for the CPU (kernels launched as
//! OpenMP loops); the GPU engine builds it with `-DPMX_HOST_LAUNCH`, so
//! that its kernel launches call back into Rust ([`Launcher`]), which runs
//! the NVRTC-compiled kernels. The runtime handed to the entry
//! ([`Runtime`], the generated `struct pmx_runtime`) carries the call's
//! [`Memory`] and launcher.

use crate::gen::{EntryAbi, Generated};
use crate::marshal::{self, Arg};
use crate::memory::{Carver, Memory};
use pmx_ast::Span;
use pmx_cpu::value::Value;
use pmx_cpu::{Args, CallStats, Machine, RuntimeError, Site};
use std::ffi::c_void;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A compiled host library of one program's CUDA-class bindings.
pub struct Library {
    /// Never unloaded: the OpenMP runtime it started keeps threads whose
    /// code must stay mapped until the process exits.
    lib: std::mem::ManuallyDrop<libloading::Library>,
    pub failures: Vec<(Span, String)>,
    /// Whether it was found in the cache.
    pub cached: bool,
    pub compile_time: Duration,
}

/// Flags of every host build (part of the cache key).
pub const FLAGS: &[&str] =
    &["-x", "c++", "-std=c++17", "-O3", "-march=native", "-fopenmp", "-fno-math-errno", "-fwrapv", "-DPMX_WRAPV"];

/// Flags for GCC only. A loop that reads and writes several tensors is
/// vectorised only in a version guarded by run-time checks that their
/// accesses do not overlap, one check per pair; GCC gives up past 10 pairs
/// (a loop updating four rows of one tensor from four rows of another has
/// more), and generated code cannot tell it that views do not alias.
pub const GCC_FLAGS: &[&str] = &["--param=vect-max-version-for-alias-checks=64"];

/// Compiles (or finds in the cache) and loads the generated source with
/// `FLAGS` and `extra` flags; `what` names the build in the progress line.
pub fn build(g: &Generated, extra: &[&str], what: &str) -> Result<Library, String> {
    let cxx = pmx_native::cc::Compiler::find(pmx_native::cc::Language::Cxx)
        .ok_or(format!("no C++ compiler found (set CXX, or install g++): {what} cannot be compiled"))?;
    let root = pmx_native::cache::dir().ok_or("no cache folder (set PMX_CACHE_DIR)")?;
    let mut flags: Vec<&str> = FLAGS.iter().chain(extra).copied().collect();
    if !cxx.version.contains("clang") {
        flags.extend(GCC_FLAGS);
    }
    let key = pmx_native::cache::key(&[
        b"cuda-host",
        g.source.as_bytes(),
        cxx.version.as_bytes(),
        flags.join(" ").as_bytes(),
    ]);
    let started = Instant::now();
    let progress = std::cell::Cell::new(None);
    let (dir, found) = pmx_native::cache::entry(&root, &key, |dir| {
        progress.set(Some(pmx_native::progress::Progress::start(&format!("compiling {what}"))));
        let src = dir.join("pmx.cu");
        std::fs::write(&src, &g.source).map_err(|e| format!("cannot write {}: {e}", src.display()))?;
        cxx.shared_library(&[&src], &dir.join("libpmx.so"), &flags).map_err(|e| {
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
    // Prints of host code and of kernels run on the CPU go to the
    // interpreter's output (`print.h`).
    // Safety: `pmx_set_print` has this type in the generated source.
    if let Ok(set) = unsafe { lib.get::<extern "C" fn(extern "C" fn(*const u8, i64))>(b"pmx_set_print") } {
        set(print);
    }
    Ok(Library {
        lib: std::mem::ManuallyDrop::new(lib),
        failures: g.failures.clone(),
        cached: found == pmx_native::cache::Found::Cached,
        compile_time: started.elapsed(),
    })
}

/// What generated code prints: `n` bytes of UTF-8 at `bytes`; `n` = -1
/// flushes (`flushStdout`).
extern "C" fn print(bytes: *const u8, n: i64) {
    if n == -1 {
        pmx_cpu::io::flush();
        return;
    }
    if bytes.is_null() || n <= 0 {
        return;
    }
    // Safety: the generated code passes `n` bytes it owns for the call.
    let bytes = unsafe { std::slice::from_raw_parts(bytes, n as usize) };
    pmx_cpu::io::out(&String::from_utf8_lossy(bytes));
}

impl Library {
    /// A symbol of the library with the C type `T` (a function pointer).
    ///
    /// # Safety
    /// `T` must be the symbol's type in the generated source.
    pub unsafe fn symbol<T: Copy>(&self, name: &str) -> Result<T, String> {
        // Safety: as the caller promises.
        unsafe { self.lib.get::<T>(name.as_bytes()) }
            .map(|s| *s)
            .map_err(|e| format!("internal error: {name} missing from the generated library: {e}"))
    }
}

/// Runs kernels for host code built with `-DPMX_HOST_LAUNCH`.
///
/// A launcher either waits for each kernel in `launch` or queues it and
/// waits in `settle`, which the host code calls before it touches tensor
/// data or records a failure, and the engine calls after the entry
/// returns. Either way the failure returned is the first of the kernels
/// since the last wait (a location id, 0 for none), and the flag is left
/// clear; `Err` is an error of the device.
///
/// One call of a program's bindings runs at a time (accelerate sites are
/// called from the program's one thread): the queue and the failure flag
/// are the program's, as are the generated library's statics.
pub trait Launcher: Send + Sync {
    /// Runs kernel `kernel` over `n` elements with `params` (the address of
    /// each argument, as the kernel takes them; read before it returns),
    /// with the kernel's own time where the device measures it and
    /// `timed` asks for it (`--profile`: timing costs each launch).
    fn launch(&self, kernel: usize, params: &mut [*mut c_void], n: i64, timed: bool) -> Result<Launched, String>;

    /// Waits for the kernels queued since the last wait.
    fn settle(&self) -> Result<Launched, String>;
}

/// Whether launches are waited for one by one (`PMX_CUDA_SYNC=1`): for
/// timing kernels apart, and for comparison when a program misbehaves.
pub fn sync_each_launch() -> bool {
    std::env::var("PMX_CUDA_SYNC").is_ok_and(|v| v == "1")
}

/// Whether kernels may run in tiles of rows (`PMX_CUDA_TILES=0`: none
/// does, for comparison; see the prelude's `pmx_tile_width`).
fn tiles() -> bool {
    !std::env::var("PMX_CUDA_TILES").is_ok_and(|v| v == "0")
}

/// What a launch gives back.
pub struct Launched {
    /// The first failure's location id, 0 for none.
    pub failed: i64,
    /// The kernels' time as the device measured it (CUDA events), without
    /// the launch and the wait: a launch waited for, its kernel's; the
    /// wait for queued launches, from the start of their first kernel to
    /// the end of their last; `None` where only the wall clock is known.
    pub kernel_time: Option<Duration>,
}

/// Mirrors the generated `struct pmx_runtime`.
#[repr(C)]
struct Runtime {
    ctx: *mut c_void,
    alloc: extern "C" fn(*mut c_void, i64) -> *mut c_void,
    launch: extern "C" fn(*mut c_void, i64, *mut *mut c_void, i64, i64) -> i64,
    settle: extern "C" fn(*mut c_void) -> i64,
}

/// What the callbacks of one call reach through `ctx`.
struct CallCtx<'a> {
    memory: &'a mut dyn Memory,
    /// Host code's small requests, carved from blocks of `memory`.
    carver: Carver,
    launcher: Option<&'a dyn Launcher>,
    /// The first error of the engine (memory or device) during the call.
    error: Option<String>,
    /// Time in kernels: the device's measure where it has one, else the
    /// launch and the wait.
    kernels: Duration,
    /// Whether kernels are timed (the call is profiled).
    timed: bool,
    /// Whether kernels may run in tiles of rows ([`tiles`]).
    tiles: bool,
    /// A failure of queued kernels found when the engine failed: it came
    /// first, and is reported instead of the engine's error.
    failed: i64,
}

/// What an entry returns when the engine failed (see `CallCtx::error`);
/// location ids are positive.
const ENGINE_FAILED: i64 = -1;

extern "C" fn ctx_alloc(ctx: *mut c_void, bytes: i64) -> *mut c_void {
    // Safety: `ctx` is the `CallCtx` of the running call.
    let cx = unsafe { &mut *(ctx as *mut CallCtx) };
    match cx.carver.zeroed(&mut *cx.memory, bytes.max(0) as usize) {
        Ok(p) => p as *mut c_void,
        Err(e) => {
            cx.engine_error(e);
            // Host code writes what it asked for before it launches
            // again; ordinary memory (leaked: this only happens when the
            // call fails) keeps it from crashing until the launch refuses
            // and the call reports the error.
            let words = (bytes.max(0) as usize).div_ceil(8).max(1);
            Box::leak(vec![0u64; words].into_boxed_slice()).as_mut_ptr() as *mut c_void
        }
    }
}

extern "C" fn ctx_launch(ctx: *mut c_void, kernel: i64, params: *mut *mut c_void, count: i64, n: i64) -> i64 {
    // Safety: `ctx` is the `CallCtx` of the running call.
    let cx = unsafe { &mut *(ctx as *mut CallCtx) };
    if cx.error.is_some() {
        return ENGINE_FAILED;
    }
    let Some(launcher) = cx.launcher else {
        cx.error = Some("internal error: a kernel launch reached an engine without a launcher".into());
        return ENGINE_FAILED;
    };
    // Safety: the generated launch passes `count` argument addresses.
    let params = unsafe { std::slice::from_raw_parts_mut(params, count.max(0) as usize) };
    if let (false, Some(&w)) = (cx.tiles, params.last()) {
        // Safety: a kernel's last argument is its row length `w`, an
        // int64_t of the launching host code, which does not read it
        // again; 0 makes the launch a grid-stride loop.
        unsafe { *(w as *mut i64) = 0 };
    }
    let started = Instant::now();
    let launched = launcher.launch(kernel as usize, params, n, cx.timed);
    let wall = started.elapsed();
    match launched {
        Ok(l) => {
            cx.kernels += l.kernel_time.unwrap_or(wall);
            l.failed
        }
        Err(e) => {
            cx.engine_error(e);
            ENGINE_FAILED
        }
    }
}

extern "C" fn ctx_settle(ctx: *mut c_void) -> i64 {
    // Safety: `ctx` is the `CallCtx` of the running call.
    let cx = unsafe { &mut *(ctx as *mut CallCtx) };
    cx.settle()
}

impl CallCtx<'_> {
    /// Records an error of the engine (the first only), after waiting for
    /// the kernels queued before it: a failure of theirs came first.
    fn engine_error(&mut self, e: String) {
        if self.error.is_some() {
            return;
        }
        let f = self.settle();
        if f > 0 {
            self.failed = f;
        }
        // A wait that failed (a kernel before faulted) keeps its error.
        self.error.get_or_insert(e);
    }

    /// Waits for the launcher's queued kernels: their first failure, or
    /// `ENGINE_FAILED` after an error of the engine (kept in `error`).
    fn settle(&mut self) -> i64 {
        let Some(launcher) = self.launcher else { return 0 };
        let started = Instant::now();
        match launcher.settle() {
            Ok(l) => {
                self.kernels += l.kernel_time.unwrap_or(started.elapsed());
                l.failed
            }
            Err(e) => {
                self.error.get_or_insert(e);
                ENGINE_FAILED
            }
        }
    }
}

type EntryFn = unsafe extern "C" fn(*const Arg, *mut Arg, *const Runtime) -> i64;

/// Where one call's buffers come from and its kernels run.
pub struct Call<'a> {
    pub memory: &'a mut dyn Memory,
    pub launcher: Option<&'a dyn Launcher>,
    /// The engine, as errors name it.
    pub engine: &'a str,
}

/// One binding's entry in a library.
pub struct Entry {
    pub library: Arc<Library>,
    pub entry: EntryAbi,
}

impl Entry {
    /// Calls the entry on `args` with buffers from `memory` and kernel
    /// launches by `launcher` (timed into `stats`); `engine` names the
    /// engine in errors.
    pub fn call(
        &self,
        m: &mut Machine,
        site: &Site,
        args: Args,
        call: Call,
        stats: &mut CallStats,
    ) -> pmx_cpu::Res<Value> {
        let Call { memory, launcher, engine } = call;
        let span = site.boundary.span;
        let values: Vec<Value> = args.into_iter().collect();
        let written: Vec<bool> = site.boundary.params.iter().map(|p| p.written).collect();
        let marshaled = marshal::marshal(&values, &self.entry.params, &written, &self.entry.variants, memory)
            .map_err(|e| RuntimeError::from_engine(e, span))?;
        let mut result = vec![Arg::default(); crate::gen::leaves(&self.entry.result).max(1)];
        // Timing costs each launch a wait; the profile is always kept.
        let timed = true;
        let mut cx = CallCtx {
            memory,
            carver: Carver::default(),
            launcher,
            error: None,
            kernels: Duration::ZERO,
            timed,
            tiles: tiles(),
            failed: 0,
        };
        let rt = Runtime {
            ctx: &mut cx as *mut CallCtx as *mut c_void,
            alloc: ctx_alloc,
            launch: ctx_launch,
            settle: ctx_settle,
        };
        // Safety: the symbol is an entry of the generated library with the
        // ABI `EntryFn`; the argument and result slots match its types.
        let code = unsafe {
            let f: EntryFn = self.library.symbol(&self.entry.symbol).map_err(|e| RuntimeError::from_engine(e, span))?;
            f(marshaled.args.as_ptr(), result.as_mut_ptr(), &rt)
        };
        // The entry waited for its kernels unless it left early on a
        // failure; none may still run when its memory is copied or freed.
        let late = cx.settle();
        // The program's first failure, where one came before any error of
        // the engine (which is reported otherwise).
        let failure = [cx.failed, code, late].into_iter().find(|&f| f > 0);
        if let (None, Some(e)) = (failure, cx.error.take()) {
            return Err(m.fail(format!("{engine}: {e} (running {})", site.boundary.name), span));
        }
        let code = failure.unwrap_or(code);
        if code != 0 {
            let (at, what) = usize::try_from(code - 1)
                .ok()
                .and_then(|k| self.library.failures.get(k).cloned())
                .unwrap_or((span, format!("internal error: unknown failure {code} in generated code")));
            return Err(RuntimeError::from_engine(format!("{what} (in CUDA-class accelerated code)"), at));
        }
        let bytes_out = marshaled
            .copy_back(&mut *cx.memory)
            .map_err(|e| m.fail(format!("{engine}: {e} (running {})", site.boundary.name), span))?;
        let mut k = 0;
        let value = marshal::unmarshal(&self.entry.result, &result, &mut k, &self.entry.variants)
            .map_err(|e| RuntimeError::from_engine(e, span))?;
        *stats = CallStats { bytes_in: marshaled.bytes_in, bytes_out, kernels: cx.kernels };
        Ok(value)
    }
}
