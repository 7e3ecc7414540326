//! The kernels of a program on the device: the generated unit compiled by
//! NVRTC to PTX for the device's architecture (cached like host code),
//! loaded as a module, one function per kernel, and the address of the
//! kernels' failure flag (`pmx_failed`). Launches go to the default
//! stream. Where the host may touch managed memory while kernels run
//! (concurrent managed access), a launch is only queued: `settle` waits
//! for the queue and reads the flag once, when host code is about to
//! touch tensor data (see the prelude's `pmx_sync_host`). Elsewhere, or
//! with `PMX_CUDA_SYNC=1`, each launch is waited for and the flag read
//! after it.

use super::device::{describe, Device};
use crate::gen::{blocks_for, Generated, THREADS_PER_BLOCK};
use crate::host::{Launched, Launcher};
use cudarc::driver::{result, sys};
use std::ffi::{c_void, CString};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The events of timed launches: around the run of launches queued since
/// the last wait, and those free for reuse.
#[derive(Default)]
struct Timed {
    /// Recorded before the first launch of the run; the wait records the
    /// second after the last. The run's time is then measured as a
    /// hand-written program's loop of launches is (`examples/viterbi/vc.cu`'s
    /// `kernel_ms`): from the start of its first kernel to the end of its
    /// last, gaps in which the device waited for the host included.
    run: Option<Events>,
    free: Vec<Events>,
}

/// The most free pairs of events a module keeps (more are destroyed).
const KEPT_EVENTS: usize = 64;

pub struct Module {
    device: &'static Device,
    functions: Vec<(sys::CUfunction, usize)>,
    failed: sys::CUdeviceptr,
    /// Whether launches are queued (see the module's docs).
    queue: bool,
    /// Whether a launch was queued since the last wait.
    outstanding: AtomicBool,
    /// The events of timed launches.
    timed: Mutex<Timed>,
    pub arch: &'static str,
    pub cached: bool,
    pub compile_time: Duration,
}

// Safety: the handles belong to the device's primary context, which any
// thread may make current; the driver API is thread-safe.
unsafe impl Send for Module {}
unsafe impl Sync for Module {}

/// Compiles (or finds in the cache) the PTX of `g` and loads it.
pub fn load(g: &Generated, device: &'static Device) -> Result<Module, String> {
    let arch = crate::nvrtc::arch_for(device.capability)?;
    let (major, minor) = crate::nvrtc::version()?;
    let root = pmx_native::cache::dir().ok_or("no cache folder (set PMX_CACHE_DIR)")?;
    let nvrtc = format!("{major}.{minor}");
    let key = pmx_native::cache::key(&[b"cuda-ptx", g.source.as_bytes(), nvrtc.as_bytes(), arch.as_bytes()]);
    let started = Instant::now();
    let progress = std::cell::Cell::new(None);
    let (dir, found) = pmx_native::cache::entry(&root, &key, |dir| {
        progress.set(Some(pmx_native::progress::Progress::start("compiling CUDA-class accelerate code with NVRTC")));
        let ptx = crate::nvrtc::compile(&g.source, arch).map_err(|log| {
            let src = dir.join("pmx.cu");
            let _ = std::fs::write(&src, &g.source);
            format!("internal error: NVRTC rejects the generated CUDA (kept at {}):\n{log}", src.display())
        })?;
        let path = dir.join("pmx.ptx");
        std::fs::write(&path, ptx).map_err(|e| format!("cannot write {}: {e}", path.display()))
    })?;
    if let Some(p) = progress.take() {
        p.finish();
    }
    let path = dir.join("pmx.ptx");
    let ptx = std::fs::read(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let ptx = CString::new(ptx).map_err(|_| format!("{} holds a NUL byte", path.display()))?;
    device.bind()?;
    // Safety: the image is NUL-terminated PTX text; the context is current.
    let module = unsafe { result::module::load_data(ptx.as_ptr() as *const c_void) }.map_err(|e| {
        format!(
            "the CUDA driver (CUDA {}.{}) cannot load the PTX from NVRTC {nvrtc}: {} (a driver older than NVRTC \
             refuses its PTX; install an nvidia-cuda-nvrtc-cu12 no newer than the driver, or set PMX_NVRTC)",
            device.driver_version / 1000,
            device.driver_version % 1000 / 10,
            describe(e)
        )
    })?;
    let mut functions = Vec::new();
    for k in &g.kernels {
        let name = CString::new(k.symbol.clone()).map_err(|_| format!("bad kernel name {}", k.symbol))?;
        // Safety: `module` was just loaded and is never unloaded.
        let f = unsafe { result::module::get_function(module, name) }
            .map_err(|e| format!("internal error: kernel {} missing from the PTX: {}", k.symbol, describe(e)))?;
        functions.push((f, k.params.len()));
    }
    let failed = if g.kernels.is_empty() {
        0
    } else {
        // Safety: as above.
        unsafe { result::module::get_global(module, CString::new("pmx_failed").expect("no NUL")) }
            .map_err(|e| format!("internal error: pmx_failed missing from the PTX: {}", describe(e)))?
            .0
    };
    Ok(Module {
        device,
        functions,
        failed,
        queue: device.concurrent && !crate::host::sync_each_launch(),
        timed: Mutex::new(Timed::default()),
        outstanding: AtomicBool::new(false),
        arch,
        cached: found == pmx_native::cache::Found::Cached,
        compile_time: started.elapsed(),
    })
}

impl Launcher for Module {
    fn launch(&self, kernel: usize, params: &mut [*mut c_void], n: i64, timed: bool) -> Result<Launched, String> {
        let &(f, count) =
            self.functions.get(kernel).ok_or_else(|| format!("internal error: no kernel {kernel} in the module"))?;
        if params.len() != count {
            return Err(format!("internal error: kernel {kernel} takes {count} arguments, given {}", params.len()));
        }
        if n <= 0 {
            return Ok(Launched { failed: 0, kernel_time: None });
        }
        let blocks = blocks_for(n);
        self.device.bind()?;
        let timed = timed && self.device.events;
        // Events around this launch where it is waited for, else around
        // the run of queued launches that it opens (see `Timed`).
        let opens = timed && (!self.queue || self.lock()?.run.is_none());
        let events = if opens { self.events() } else { None };
        if let Some(e) = &events {
            e.record(0)?;
        }
        // Safety: `f` is a kernel of the loaded module whose parameters
        // are the C types the generated launch took the addresses of (the
        // driver copies them before it returns); every pointer inside them
        // is to managed memory of this call, which lives until the call
        // has waited for its kernels.
        unsafe { result::launch_kernel(f, (blocks, 1, 1), (THREADS_PER_BLOCK, 1, 1), 0, std::ptr::null_mut(), params) }
            .map_err(|e| format!("launching kernel {kernel}: {}", describe(e)))?;
        // From here the kernel may run: whatever fails below, the call's
        // last wait waits for it.
        self.outstanding.store(true, Ordering::Relaxed);
        if self.queue {
            // Timed when the queue is waited for (`settle`). The run opens
            // only once its first kernel is launched, so a run is never
            // left open without a kernel for the wait to close it after.
            let mut t = self.lock()?;
            if let Some(e) = events {
                t.run = Some(e);
            }
            let measured = timed && t.run.is_some();
            return Ok(Launched { failed: 0, kernel_time: measured.then_some(Duration::ZERO) });
        }
        if let Some(e) = &events {
            e.record(1)?;
        }
        self.wait(events, || format!("kernel {kernel}"))
    }

    fn settle(&self) -> Result<Launched, String> {
        if !self.outstanding.load(Ordering::Relaxed) {
            return Ok(Launched { failed: 0, kernel_time: Some(Duration::ZERO) });
        }
        let run = self.lock()?.run.take();
        self.device.bind()?;
        // A run whose end cannot be recorded is timed by the wait.
        let run = run.filter(|e| e.record(1).is_ok());
        self.wait(run, || "a kernel launched since the last wait".to_string())
    }
}

impl Module {
    /// Waits for the kernels launched so far: their first failure, and
    /// their time between the two records of `events` (the wait's own
    /// time stands for it without them). `what` names what is waited for
    /// in an error.
    fn wait(&self, events: Option<Events>, what: impl FnOnce() -> String) -> Result<Launched, String> {
        result::ctx::synchronize().map_err(|e| format!("{}: {}", what(), describe(e)))?;
        self.outstanding.store(false, Ordering::Relaxed);
        let kernel_time = events.and_then(|e| {
            let t = e.elapsed();
            self.recycle(e);
            t
        });
        Ok(Launched { failed: self.take_failed()?, kernel_time })
    }

    fn lock(&self) -> Result<std::sync::MutexGuard<'_, Timed>, String> {
        self.timed.lock().map_err(|_| "internal error: a poisoned event list".to_string())
    }

    /// A pair of events: a free one, or new (`None` if the driver gives
    /// none; the launch is then timed by the host's clock).
    fn events(&self) -> Option<Events> {
        self.lock().ok().and_then(|mut t| t.free.pop()).or_else(|| Events::new().ok())
    }

    /// Keeps `e` for a later launch, up to `KEPT_EVENTS` pairs.
    fn recycle(&self, e: Events) {
        if let Ok(mut t) = self.lock() {
            if t.free.len() < KEPT_EVENTS {
                t.free.push(e);
            }
        }
    }

    /// The kernels' first failure since the flag was last cleared (read
    /// after a wait), cleared for the next: its location id (the flag's
    /// low 24 bits; the prelude's `PMX_LOC`, above them the iteration).
    fn take_failed(&self) -> Result<i64, String> {
        let mut flag = [0i64];
        // Safety: `failed` is the address of the 8-byte `pmx_failed`.
        unsafe { result::memcpy_dtoh_sync(&mut flag, self.failed) }
            .map_err(|e| format!("reading the failure flag: {}", describe(e)))?;
        if flag[0] != 0 {
            // Safety: as above.
            unsafe { result::memcpy_htod_sync(self.failed, &[0i64]) }
                .map_err(|e| format!("clearing the failure flag: {}", describe(e)))?;
        }
        Ok(if flag[0] > 0 { flag[0] & 0xFF_FFFF } else { flag[0] })
    }
}

/// Two events on the default stream, around a launch or a run of them:
/// the kernels' time as the device measures it.
struct Events([sys::CUevent; 2]);

impl Events {
    fn new() -> Result<Events, String> {
        let make = || {
            result::event::create(sys::CUevent_flags::CU_EVENT_DEFAULT)
                .map_err(|e| format!("cuEventCreate: {}", describe(e)))
        };
        let a = make()?;
        match make() {
            Ok(b) => Ok(Events([a, b])),
            Err(e) => {
                // Safety: `a` was just made and is not used again.
                let _ = unsafe { result::event::destroy(a) };
                Err(e)
            }
        }
    }

    fn record(&self, k: usize) -> Result<(), String> {
        // Safety: the event is live; the null stream is the default one.
        unsafe { result::event::record(self.0[k], std::ptr::null_mut()) }
            .map_err(|e| format!("cuEventRecord: {}", describe(e)))
    }

    /// The time between the two records (after the launch was waited for).
    fn elapsed(&self) -> Option<Duration> {
        // Safety: both events were recorded on the default stream and the
        // context was synchronised since.
        let ms = unsafe { result::event::elapsed(self.0[0], self.0[1]) }.ok()?;
        Some(Duration::from_secs_f64(f64::from(ms.max(0.0)) * 1e-3))
    }
}

impl Drop for Events {
    fn drop(&mut self) {
        for e in self.0 {
            // Safety: made by `new`, destroyed once.
            let _ = unsafe { result::event::destroy(e) };
        }
    }
}
