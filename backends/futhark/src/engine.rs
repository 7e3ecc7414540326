//! The engine: the generated program compiled by `futhark multicore
//! --library` (the CPU) or `futhark cuda --library` (a GPU; see
//! `backend.rs`) and the system C compiler into a shared library (cached
//! by everything that decides it), loaded with `libloading`, and called
//! through Futhark's C API in one context per run.
//!
//! Futhark's entry functions take one argument per leaf, so their C
//! signatures differ per entry, and `futhark_new_<t>_<n>d` takes one
//! argument per dimension. Rust cannot call a signature it learns at run
//! time, so a small C file generated from the manifest (`pmx_glue.c`)
//! gives each entry and each array type one fixed signature: an entry
//! takes arrays of pointers to its inputs and outputs, array
//! construction takes a pointer to the dimensions. Everything else
//! (configuration, context, sync, errors) is called directly.

use crate::abi::{Leaf, Scalar};
use crate::backend::Backend;
use crate::gen::{EntryAbi, Generated, FILE};
use crate::manifest::{Manifest, Type as ManifestType};
use crate::marshal::{self, Buf, Input, Output};
use pmx_cpu::value::Value;
use pmx_cpu::{Args, CallStats, Engine, Machine, RuntimeError, Site};
use rustc_hash::FxHashMap;
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::fmt::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Where Futhark's releases are (the message for a missing compiler).
pub const RELEASES: &str = "https://github.com/diku-dk/futhark/releases";
pub const INSTALL: &str = "install Futhark from its releases (https://github.com/diku-dk/futhark/releases)";

/// The Futhark compiler.
#[derive(Clone, Debug)]
pub struct Futhark {
    pub program: PathBuf,
    /// The first line of `futhark --version` (part of cache keys).
    pub version: String,
    /// What this version does that the code and glue depend on.
    pub capabilities: crate::versions::Capabilities,
}

/// Why no usable `futhark` was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FindError {
    /// No `futhark` runs (`PMX_FUTHARK`, `PATH`): the message says what was
    /// tried.
    Missing(String),
    /// A `futhark` runs, of a version pmx does not take: `why` names the
    /// version and the supported range; `message` adds where it was found.
    Unsupported { why: String, message: String },
}

impl std::fmt::Display for FindError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FindError::Missing(m) | FindError::Unsupported { message: m, .. } => f.write_str(m),
        }
    }
}

/// `$PMX_FUTHARK`, else `futhark` on `PATH`; the error says what to
/// install.
pub fn find() -> Result<Futhark, FindError> {
    match std::env::var_os("PMX_FUTHARK").filter(|p| !p.is_empty()) {
        Some(p) => find_at(Path::new(&p), "PMX_FUTHARK"),
        None => find_at(Path::new("futhark"), "PATH"),
    }
}

/// The `futhark` at `program` (`from`: where its name came from, for the
/// messages), if it runs and pmx supports its version.
pub fn find_at(program: &Path, from: &str) -> Result<Futhark, FindError> {
    let program = program.to_path_buf();
    let out = Command::new(&program).arg("--version").output();
    match out {
        Ok(o) if o.status.success() => {
            let version = String::from_utf8_lossy(&o.stdout).lines().next().unwrap_or("").trim().to_string();
            match crate::versions::parse(&version) {
                Ok(v) => Ok(Futhark { program, version, capabilities: crate::versions::Capabilities::of(v) }),
                Err(why) => {
                    let message = format!("{why} (`{}`, from {from}); {INSTALL}", program.display());
                    Err(FindError::Unsupported { why, message })
                }
            }
        }
        Ok(o) => Err(FindError::Missing(format!(
            "futhark not found (PATH or PMX_FUTHARK): `{} --version` (from {from}) failed: {}; {INSTALL}",
            program.display(),
            String::from_utf8_lossy(&o.stderr).trim()
        ))),
        Err(e) => Err(FindError::Missing(format!(
            "futhark not found (PATH or PMX_FUTHARK): cannot run `{}` (from {from}): {e}; {INSTALL}",
            program.display()
        ))),
    }
}

/// Libraries linked after the C (part of the cache key); CUDA's are
/// loaded by pmx instead (`backend.rs`).
const LIBS: &[&str] = &["-lm"];

type ConfigNew = unsafe extern "C" fn() -> *mut c_void;
type ConfigString = unsafe extern "C" fn(*mut c_void, *const c_char);
type ContextNew = unsafe extern "C" fn(*mut c_void) -> *mut c_void;
type Free = unsafe extern "C" fn(*mut c_void);
type Sync = unsafe extern "C" fn(*mut c_void) -> c_int;
type GetError = unsafe extern "C" fn(*mut c_void) -> *mut c_char;
type Call = unsafe extern "C" fn(*mut c_void, *const *mut c_void, *const *const c_void) -> c_int;
type ArrayNew = unsafe extern "C" fn(*mut c_void, *const u8, *const i64) -> *mut c_void;
type ArrayValues = unsafe extern "C" fn(*mut c_void, *mut c_void, *mut u8) -> c_int;
type ArrayShape = unsafe extern "C" fn(*mut c_void, *mut c_void) -> *const i64;
type ArrayFree = unsafe extern "C" fn(*mut c_void, *mut c_void) -> c_int;

extern "C" {
    /// `futhark_context_get_error`'s string is the caller's to free.
    fn free(p: *mut c_void);
}

#[derive(Clone, Copy)]
struct ArrayOps {
    new: ArrayNew,
    /// An array of the caller's buffer, not copied.
    wrap: Option<ArrayNew>,
    values: ArrayValues,
    shape: ArrayShape,
    free: ArrayFree,
}

/// The Futhark context of the run (made at the first call).
struct Context {
    cfg: *mut c_void,
    ctx: *mut c_void,
}

// Safety: the context is used under the library's mutex only, one call at
// a time, as Futhark's C API asks.
unsafe impl Send for Context {}

/// The compiled library of one program's Futhark-class bindings.
pub struct Library {
    /// Dropped after the context is freed (see `Drop`).
    lib: std::mem::ManuallyDrop<libloading::Library>,
    context: Mutex<Option<Context>>,
    config_new: ConfigNew,
    context_new: ContextNew,
    context_free: Free,
    config_free: Free,
    sync: Sync,
    get_error: GetError,
    /// `cuda`: the NVRTC options (the device's architecture) and the file
    /// where Futhark keeps the kernels NVRTC compiled, set on the
    /// configuration; Futhark keeps the pointers, so they live here.
    cuda_config: Option<CudaConfig>,
    calls: FxHashMap<String, Call>,
    arrays: FxHashMap<(Scalar, usize), ArrayOps>,
    pub generated: Generated,
    pub backend: Backend,
    /// Where the generated program and its C are kept.
    pub dir: PathBuf,
    pub cached: bool,
    pub compile_time: Duration,
    /// The Futhark gives several results in one opaque tuple (0.26.1 and
    /// newer), whose fields the glue projects.
    tuple_results: bool,
}

/// What a `cuda` context is configured with.
struct CudaConfig {
    add_nvrtc_option: ConfigString,
    set_cache_file: ConfigString,
    arch: CString,
    cache_file: CString,
}

/// What Futhark says first when one of its own passes fails (followed by
/// `.` or, for an exception of the compiler's, ` (unhandled IO
/// exception).`).
const FUTHARK_BUG: &str = "Internal compiler error";

/// Why a Futhark-class program was not built.
#[derive(Debug)]
pub enum BuildError {
    /// Futhark failed on the generated program with an internal compiler
    /// error of its own: a bug of that Futhark version, not pmx's and not
    /// the program's. The message says which version and where the
    /// program is kept.
    FutharkBug(String),
    /// Anything else: what is missing, or what failed (starting
    /// `internal error: ` where it is pmx's bug).
    Other(String),
}

impl std::fmt::Display for BuildError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BuildError::FutharkBug(m) | BuildError::Other(m) => f.write_str(m),
        }
    }
}

impl From<String> for BuildError {
    fn from(m: String) -> BuildError {
        BuildError::Other(m)
    }
}

impl From<&str> for BuildError {
    fn from(m: &str) -> BuildError {
        BuildError::from(m.to_string())
    }
}

/// Compiles (or finds in the cache) and loads the generated program for
/// `backend`; `Err` says what is missing (a C compiler; for `cuda` a
/// usable device, NVRTC, CUDA's headers) or what failed.
pub fn build(g: &Generated, futhark: &Futhark, backend: Backend) -> Result<Library, BuildError> {
    let where_ = if backend == Backend::Cuda { "a GPU" } else { "the CPU" };
    let cc = pmx_native::cc::Compiler::find(pmx_native::cc::Language::C).ok_or_else(|| {
        format!("no C compiler found (set CC, or install gcc): Futhark-class accelerate code cannot be compiled for {where_}")
    })?;
    let includes = backend.include_dirs()?;
    let root = pmx_native::cache::dir().ok_or("no cache folder (set PMX_CACHE_DIR)")?;
    let key = pmx_native::cache::key(&[
        b"futhark",
        // The C is patched (`alloc_check`): libraries built before were not.
        b"alloc-check",
        g.source.as_bytes(),
        futhark.version.as_bytes(),
        backend.command().as_bytes(),
        cc.version.as_bytes(),
        backend.key_flags(&includes).as_bytes(),
        LIBS.join(" ").as_bytes(),
    ]);
    let started = Instant::now();
    let progress = std::cell::Cell::new(None);
    let (dir, found) = pmx_native::cache::entry(&root, &key, |dir| {
        progress.set(Some(pmx_native::progress::Progress::start(&format!(
            "compiling Futhark-class accelerate code with futhark {}",
            backend.command()
        ))));
        compile(g, futhark, &cc, backend, &includes, dir)
    })?;
    if let Some(p) = progress.take() {
        p.finish();
    }
    let compile_time = started.elapsed();
    // The driver and NVRTC, loaded before the library that calls them.
    let arch = match backend {
        Backend::Cuda => Some(pmx_gpu::nvrtc::arch_for(pmx_gpu::toolkit::load_globally()?.capability)?),
        Backend::Multicore => None,
    };
    let how = (backend, futhark.capabilities.single_output);
    let mut library = load(g, &dir, how, arch, found == pmx_native::cache::Found::Cached, compile_time)?;
    library.make_context().map_err(|e| format!("internal error: {e} (generated program kept at {})", dir.display()))?;
    library.compile_time = started.elapsed();
    Ok(library)
}

/// Futhark to C, the glue from the manifest, C to `libpmx.so`, in `dir`.
fn compile(
    g: &Generated,
    futhark: &Futhark,
    cc: &pmx_native::cc::Compiler,
    backend: Backend,
    includes: &[PathBuf],
    dir: &Path,
) -> Result<(), BuildError> {
    let src = dir.join(FILE);
    std::fs::write(&src, &g.source).map_err(|e| format!("cannot write {}: {e}", src.display()))?;
    let (header, text) = backend.header();
    let h = dir.join(header);
    std::fs::write(&h, text.as_ref()).map_err(|e| format!("cannot write {}: {e}", h.display()))?;
    // A rejected program comes back with Futhark's message and the file
    // kept; the manifest is read by `manifest.rs` (both formats).
    let out = Command::new(&futhark.program)
        .args([backend.command(), "--library", "-o", "pmx", FILE])
        .current_dir(dir)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", futhark.program.display()))?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = out.status.signal() {
            // Killed: Futhark 0.22.7 can take all the memory there is on
            // some programs that 0.25.8 compiles at once (FUTHARK_BUGS.md),
            // and the system's out-of-memory killer stops it.
            return Err(BuildError::FutharkBug(format!(
                "{} ({}) was killed by signal {signal} while compiling the generated program (9: \
                 likely for taking all the memory there is; the program is kept at {})",
                futhark.version,
                backend.command(),
                src.display()
            )));
        }
    }
    if !out.status.success() && stderr.contains("Known compiler limitation") {
        // Not pmx's bug: Futhark says its backend cannot compile this
        // program (0.22's GPU backends refuse, for one, arrays that grow
        // in a loop inside a parallel `map`).
        let why = stderr.lines().map(str::trim).filter(|l| !l.is_empty()).skip(2).collect::<Vec<_>>().join(" ");
        return Err(BuildError::Other(format!(
            "futhark {} cannot compile this program, a limitation of Futhark's {0} backend: {why} (the generated \
             program is kept at {})",
            backend.command(),
            src.display()
        )));
    }
    if !out.status.success() && stderr.contains(FUTHARK_BUG) {
        // Not pmx's bug either: the program passed Futhark's type checker
        // and a later pass of Futhark's failed on it. Some versions have
        // such bugs that newer ones do not (FUTHARK_BUGS.md, "Not worked
        // around"); the caller runs the bindings elsewhere.
        let lines = stderr.lines().map(str::trim).skip_while(|l| !l.starts_with(FUTHARK_BUG)).skip(1);
        let what = lines.filter(|l| !l.is_empty() && !l.starts_with("http")).take(6).collect::<Vec<_>>().join(" ");
        return Err(BuildError::FutharkBug(format!(
            "{} ({}) failed on the generated program with an internal compiler error of its \
             own ({what}; the program is kept at {})",
            futhark.version,
            backend.command(),
            src.display()
        )));
    }
    if !out.status.success() {
        return Err(BuildError::Other(format!(
            "internal error: futhark rejects the generated program (kept at {}); please report it:\n{}",
            src.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    let manifest = std::fs::read_to_string(dir.join("pmx.json"))
        .map_err(|e| e.to_string())
        .and_then(|text| Manifest::parse(&text))
        .map_err(|e| format!("internal error: cannot read Futhark's manifest in {}: {e}", dir.display()))?;
    check_manifest(g, &manifest)
        .map_err(|e| format!("internal error: {e} (generated program kept at {})", src.display()))?;
    let c = dir.join("pmx.c");
    let c_text = std::fs::read_to_string(&c).map_err(|e| format!("cannot read {}: {e}", c.display()))?;
    std::fs::write(&c, crate::alloc_check::patch(&c_text)).map_err(|e| format!("cannot write {}: {e}", c.display()))?;
    let glue = dir.join("pmx_glue.c");
    let wrap = futhark.capabilities.raw_arrays_wrap && backend == Backend::Multicore;
    let mut glue_text = glue_source(&manifest, wrap)?;
    if backend == Backend::Cuda {
        glue_text.push_str(crate::backend::CUDA_COMPAT);
    }
    std::fs::write(&glue, glue_text).map_err(|e| format!("cannot write {}: {e}", glue.display()))?;
    let flags = backend.flags(dir, includes);
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    cc.shared_library_linking(&[&dir.join("pmx.c"), &glue], &dir.join("libpmx.so"), &flags, LIBS).map_err(|e| {
        BuildError::Other(format!(
            "internal error: the C that Futhark generated does not compile (kept in {}):\n{e}",
            dir.display()
        ))
    })
}

/// The entries of the manifest are those the generator wrote, leaf for
/// leaf.
fn check_manifest(g: &Generated, m: &Manifest) -> Result<(), String> {
    for e in &g.entries {
        let Some(me) = m.entries.get(&e.name) else {
            return Err(format!("Futhark's manifest has no entry `{}`", e.name));
        };
        let mut inputs: Vec<String> = e.inputs.iter().map(Leaf::futhark_type).collect();
        if e.dummy_input {
            inputs.push("i64".into());
        }
        let mut outputs: Vec<String> = e.outputs.iter().map(Leaf::futhark_type).collect();
        if e.dummy_output {
            outputs.push("bool".into());
        }
        if e.counts {
            outputs.push("i64".into());
        }
        let got_in = &me.inputs;
        let got_out = m.results(me);
        if *got_in != inputs || got_out != outputs {
            return Err(format!(
                "entry `{}` takes {got_in:?} and returns {got_out:?} in Futhark's manifest, not {inputs:?} and \
                 {outputs:?}",
                e.name
            ));
        }
    }
    Ok(())
}

fn c_scalar(name: &str) -> Option<&'static str> {
    Some(match name {
        "i64" => "int64_t",
        "f64" => "double",
        "bool" => "bool",
        "i32" => "int32_t",
        _ => return None,
    })
}

fn array_suffix(elem: &str, rank: i32) -> String {
    format!("{elem}_{rank}d")
}

/// The glue: one fixed signature per entry and per array type, from the
/// manifest's C names. `wrap`: the Futhark wraps a caller's buffer in an
/// array without copying it (`Capabilities::raw_arrays_wrap`, on the CPU):
/// each array type gets `pmx_wrap_*` too, unless an entry consumes an
/// input (it could write into the caller's buffer).
pub(crate) fn glue_source(m: &Manifest, wrap: bool) -> Result<String, String> {
    let wrap = wrap && !m.entries.values().any(|e| e.consumes.iter().any(|c| *c));
    let mut s = String::from(
        "// Generated by pmx from Futhark's manifest: fixed signatures for entries and arrays.\n#include <stdint.h>\n#include <stdbool.h>\n#include <stddef.h>\n#include \"pmx.h\"\n\n",
    );
    let ctype = |t: &str| -> Result<String, String> {
        if let Some(c) = c_scalar(t) {
            return Ok(c.to_string());
        }
        match m.types.get(t) {
            Some(ManifestType::Array(a)) => Ok(a.ctype.clone()),
            _ => Err(format!("internal error: Futhark's manifest has a type pmx does not pass: {t}")),
        }
    };
    for (name, t) in &m.types {
        let ManifestType::Array(a) = t else { continue };
        let elem = a.elemtype.as_str();
        let Some(ce) = c_scalar(elem) else { continue };
        let suffix = array_suffix(elem, a.rank);
        let dims: Vec<String> = (0..a.rank).map(|k| format!("dims[{k}]")).collect();
        let _ = writeln!(s, "// {name}");
        let _ = writeln!(
            s,
            "void *pmx_new_{suffix}(struct futhark_context *ctx, const void *data, const int64_t *dims) {{\n  return {}(ctx, (const {ce} *)data, {});\n}}",
            a.ops.new,
            dims.join(", ")
        );
        if let Some(raw) = a.ops.new_raw.as_ref().filter(|_| wrap) {
            // The array is the caller's buffer, which outlives it and
            // which Futhark neither writes (no entry consumes) nor frees.
            let _ = writeln!(
                s,
                "void *pmx_wrap_{suffix}(struct futhark_context *ctx, const void *data, const int64_t *dims) {{\n  return {raw}(ctx, (unsigned char *)data, {});\n}}",
                dims.join(", ")
            );
        }
        let _ = writeln!(
            s,
            "int pmx_values_{suffix}(struct futhark_context *ctx, void *arr, void *data) {{\n  return {}(ctx, arr, ({ce} *)data);\n}}",
            a.ops.values
        );
        let _ = writeln!(
            s,
            "const int64_t *pmx_shape_{suffix}(struct futhark_context *ctx, void *arr) {{\n  return {}(ctx, arr);\n}}",
            a.ops.shape
        );
        let _ = writeln!(
            s,
            "int pmx_free_{suffix}(struct futhark_context *ctx, void *arr) {{\n  return {}(ctx, arr);\n}}\n",
            a.ops.free
        );
    }
    for (name, e) in &m.entries {
        let mut args = vec!["ctx".to_string()];
        let inputs: Vec<String> = e
            .inputs
            .iter()
            .enumerate()
            .map(|(k, t)| Ok(format!("*({} const *)in[{k}]", ctype(t)?)))
            .collect::<Result<_, String>>()?;
        let _ =
            writeln!(s, "int pmx_call_{name}(struct futhark_context *ctx, void *const *out, const void *const *in) {{");
        let _ = writeln!(s, "  (void)out; (void)in;");
        if let Some((tuple, record)) = m.tuple_output(e) {
            // Futhark 0.26.1 and newer: the results in one opaque tuple,
            // projected into the slots (each projection its own value,
            // freed by its reader), then freed.
            args.push("&r".to_string());
            args.extend(inputs);
            let _ = writeln!(s, "  {} r = NULL;", tuple.ctype);
            let _ = writeln!(s, "  int err = {}({});", e.cfun, args.join(", "));
            let _ = writeln!(s, "  if (err != 0) return err;");
            for (k, f) in record.fields.iter().enumerate() {
                let _ = writeln!(s, "  if (err == 0) err = {}(ctx, ({} *)out[{k}], r);", f.project, ctype(&f.ty)?);
            }
            let _ = writeln!(s, "  int freed = {}(ctx, r);", tuple.ops.free);
            let _ = writeln!(s, "  return err != 0 ? err : freed;\n}}\n");
            continue;
        }
        for (k, t) in m.results(e).iter().enumerate() {
            args.push(format!("({} *)out[{k}]", ctype(t)?));
        }
        args.extend(inputs);
        let _ = writeln!(s, "  return {}({});\n}}\n", e.cfun, args.join(", "));
    }
    Ok(s)
}

fn symbol<T: Copy>(lib: &libloading::Library, name: &str) -> Result<T, String> {
    // Safety: every symbol looked up is a function of the generated
    // library whose C signature is the type it is read as (the glue and
    // Futhark's documented API).
    unsafe { lib.get::<T>(name.as_bytes()).map(|s| *s).map_err(|e| format!("internal error: {name} missing: {e}")) }
}

fn load(
    g: &Generated,
    dir: &Path,
    (backend, tuple_results): (Backend, bool),
    arch: Option<&str>,
    cached: bool,
    compile_time: Duration,
) -> Result<Library, String> {
    let path = dir.join("libpmx.so");
    // Safety: the library is pmx's own generated code, whose initialisers
    // do nothing but set up statics.
    let lib = unsafe { libloading::Library::new(&path) }.map_err(|e| format!("cannot load {}: {e}", path.display()))?;
    let mut calls = FxHashMap::default();
    let mut arrays = FxHashMap::default();
    for e in &g.entries {
        calls.insert(e.name.clone(), symbol::<Call>(&lib, &format!("pmx_call_{}", e.name))?);
        for leaf in e.inputs.iter().chain(&e.outputs).filter(|l| l.rank > 0) {
            let key = (leaf.scalar, leaf.rank);
            if arrays.contains_key(&key) {
                continue;
            }
            let suffix = array_suffix(leaf.scalar.futhark(), leaf.rank as i32);
            let ops = ArrayOps {
                new: symbol(&lib, &format!("pmx_new_{suffix}"))?,
                // Only where the glue has it (`glue_source`'s `wrap`).
                wrap: symbol(&lib, &format!("pmx_wrap_{suffix}")).ok(),
                values: symbol(&lib, &format!("pmx_values_{suffix}"))?,
                shape: symbol(&lib, &format!("pmx_shape_{suffix}"))?,
                free: symbol(&lib, &format!("pmx_free_{suffix}"))?,
            };
            arrays.insert(key, ops);
        }
    }
    let cuda_config = match arch {
        Some(arch) => {
            let cache_file = dir.join(format!("kernels-{arch}.cache"));
            Some(CudaConfig {
                add_nvrtc_option: symbol(&lib, "futhark_context_config_add_nvrtc_option")?,
                set_cache_file: symbol(&lib, "futhark_context_config_set_cache_file")?,
                arch: CString::new(format!("-arch={arch}")).expect("no NUL"),
                cache_file: CString::new(cache_file.display().to_string())
                    .map_err(|_| format!("the cache folder {} holds a NUL byte", dir.display()))?,
            })
        }
        None => None,
    };
    Ok(Library {
        cuda_config,
        backend,
        config_new: symbol(&lib, "futhark_context_config_new")?,
        context_new: symbol(&lib, "futhark_context_new")?,
        context_free: symbol(&lib, "futhark_context_free")?,
        config_free: symbol(&lib, "futhark_context_config_free")?,
        sync: symbol(&lib, "futhark_context_sync")?,
        get_error: symbol(&lib, "futhark_context_get_error")?,
        lib: std::mem::ManuallyDrop::new(lib),
        context: Mutex::new(None),
        calls,
        arrays,
        generated: g.clone(),
        dir: dir.to_path_buf(),
        cached,
        compile_time,
        tuple_results,
    })
}

/// A failure inside generated code: Futhark's message and, when it names
/// a line of the generated program, that line.
#[derive(Debug)]
pub struct Failure {
    pub message: String,
    pub line: Option<usize>,
}

impl Failure {
    fn from_futhark(text: &str) -> Failure {
        let first = text.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("failure");
        let message = first.strip_prefix("Error: ").unwrap_or(first).to_string();
        let needle = format!("{FILE}:");
        let line = text.find(&needle).and_then(|at| {
            let digits: String = text[at + needle.len()..].chars().take_while(char::is_ascii_digit).collect();
            digits.parse().ok()
        });
        Failure { message, line }
    }
}

impl Library {
    /// The context's last error (freed after reading).
    unsafe fn error(&self, ctx: *mut c_void) -> String {
        // Safety: `ctx` is this library's live context; the string is
        // Futhark's to give and the caller's to free.
        unsafe {
            let p = (self.get_error)(ctx);
            if p.is_null() {
                return "failure without a message".into();
            }
            let s = CStr::from_ptr(p).to_string_lossy().into_owned();
            free(p as *mut c_void);
            s
        }
    }

    /// Makes the run's context (once): called when the library is built,
    /// so that making it (for `cuda`, compiling the kernels with NVRTC or
    /// loading them from the cache) counts as compile time, not as time
    /// inside the first call.
    pub fn make_context(&self) -> Result<(), String> {
        let mut guard = self.context.lock().unwrap_or_else(|e| e.into_inner());
        self.context_in(&mut guard).map(|_| ())
    }

    /// The context in `guard`, made if there is none yet.
    fn context_in(&self, guard: &mut Option<Context>) -> Result<*mut c_void, String> {
        if let Some(c) = guard.as_ref() {
            return Ok(c.ctx);
        }
        // Safety: Futhark's documented construction of a context.
        let (cfg, ctx) = unsafe {
            let cfg = (self.config_new)();
            if let (Some(c), false) = (&self.cuda_config, cfg.is_null()) {
                // The device's own architecture (Futhark 0.22 knows
                // none newer than 8.7, and warns), and a file for the
                // kernels NVRTC compiles, so a later run loads them.
                (c.add_nvrtc_option)(cfg, c.arch.as_ptr());
                (c.set_cache_file)(cfg, c.cache_file.as_ptr());
            }
            (cfg, if cfg.is_null() { std::ptr::null_mut() } else { (self.context_new)(cfg) })
        };
        if ctx.is_null() {
            return Err("cannot create a Futhark context".into());
        }
        // A context whose creation failed says so in its error.
        // Safety: `ctx` was just made.
        let err = unsafe {
            let p = (self.get_error)(ctx);
            if p.is_null() {
                None
            } else {
                let s = CStr::from_ptr(p).to_string_lossy().into_owned();
                free(p as *mut c_void);
                Some(s)
            }
        };
        if let Some(e) = err {
            // Safety: both were made above and are not used again.
            unsafe {
                (self.context_free)(ctx);
                (self.config_free)(cfg);
            }
            return Err(format!("the Futhark context failed: {e}"));
        }
        *guard = Some(Context { cfg, ctx });
        Ok(ctx)
    }

    /// The glue's function that wraps a buffer as an array of `leaf`'s
    /// type without copying it (`pmx_wrap_*`), if `entry`'s inputs are
    /// wrapped. They are not where the results come back in an opaque
    /// tuple: Futhark 0.27.1's projection of a field counts a reference
    /// to its memory without testing that the memory is counted, which a
    /// wrapped buffer's is not, so a result that is an input, unchanged,
    /// crashes the projection (`FUTHARK_BUGS.md`).
    fn wrapper(&self, entry: &EntryAbi, leaf: &Leaf) -> Option<ArrayNew> {
        let results = entry.outputs.len() + entry.dummy_output as usize + entry.counts as usize;
        if self.tuple_results && results > 1 {
            return None;
        }
        self.arrays.get(&(leaf.scalar, leaf.rank)).and_then(|o| o.wrap)
    }

    /// The bytes of `inputs` copied to call `entry`: an array that Futhark
    /// wraps costs only the copy that flattened it, if any.
    pub fn bytes_copied(&self, entry: &EntryAbi, inputs: &[Input]) -> u64 {
        entry
            .inputs
            .iter()
            .zip(inputs)
            .map(|(l, i)| match i {
                Input::Array { owned: None, .. } if self.wrapper(entry, l).is_some() => 0,
                _ => i.bytes(l.scalar),
            })
            .sum()
    }

    /// Runs an entry on its inputs; the leaves of its result, and how
    /// many utests ran (0 unless the entry counts them).
    pub fn run(&self, entry: &EntryAbi, inputs: &[Input]) -> Result<(Vec<Value>, i64), Failure> {
        let internal = |m: String| Failure { message: format!("internal error: {m}"), line: None };
        let call = *self.calls.get(&entry.name).ok_or_else(|| internal(format!("no entry {}", entry.name)))?;
        let mut guard = self.context.lock().unwrap_or_else(|e| e.into_inner());
        let ctx = self.context_in(&mut guard).map_err(internal)?;
        // Safety: the slots outlive the call; array handles are made and
        // freed with this context, each once.
        unsafe { self.run_in(ctx, call, entry, inputs) }
    }

    unsafe fn run_in(
        &self,
        ctx: *mut c_void,
        call: Call,
        entry: &EntryAbi,
        inputs: &[Input],
    ) -> Result<(Vec<Value>, i64), Failure> {
        let ops = |l: &Leaf| {
            self.arrays.get(&(l.scalar, l.rank)).copied().ok_or_else(|| Failure {
                message: format!("internal error: no array type {}", l.futhark_type()),
                line: None,
            })
        };
        // One word per input: a scalar, or an array's handle.
        let mut words: Vec<u64> = vec![0; inputs.len()];
        let mut made: Vec<(ArrayOps, *mut c_void)> = Vec::new();
        let free_all = |made: &[(ArrayOps, *mut c_void)]| {
            for (o, a) in made {
                // Safety: each handle was made by this context, freed once.
                unsafe { (o.free)(ctx, *a) };
            }
        };
        for (k, (leaf, input)) in entry.inputs.iter().zip(inputs).enumerate() {
            match input {
                Input::Scalar(w) => words[k] = *w,
                Input::Array { data, dims, .. } => {
                    let o = match ops(leaf) {
                        Ok(o) => o,
                        Err(e) => {
                            free_all(&made);
                            return Err(e);
                        }
                    };
                    // Safety: `data` holds `dims`' product of elements,
                    // and outlives the array (freed below, before `inputs`
                    // can go) where it is wrapped, not copied.
                    let new = self.wrapper(entry, leaf).unwrap_or(o.new);
                    let a = unsafe { new(ctx, *data, dims.as_ptr()) };
                    if a.is_null() {
                        free_all(&made);
                        // Safety: `ctx` is live.
                        return Err(Failure::from_futhark(&unsafe { self.error(ctx) }));
                    }
                    made.push((o, a));
                    words[k] = a as u64;
                }
            }
        }
        if entry.dummy_input {
            words.push(0);
        }
        let ins: Vec<*const c_void> = words.iter().map(|w| w as *const u64 as *const c_void).collect();
        let n_out = entry.outputs.len() + entry.dummy_output as usize + entry.counts as usize;
        let mut outs: Vec<u64> = vec![0; n_out];
        let out_ptrs: Vec<*mut c_void> = outs.iter_mut().map(|w| w as *mut u64 as *mut c_void).collect();
        // Safety: the glue reads `ins` and writes `outs` as the manifest's
        // types, which `check_manifest` matched with the leaves.
        let code = unsafe { call(ctx, out_ptrs.as_ptr(), ins.as_ptr()) };
        let code = if code == 0 { unsafe { (self.sync)(ctx) } } else { code };
        free_all(&made);
        let out_arrays: Vec<(usize, ArrayOps)> = entry
            .outputs
            .iter()
            .enumerate()
            .filter(|(_, l)| l.rank > 0)
            .filter_map(|(k, l)| ops(l).ok().map(|o| (k, o)))
            .collect();
        let free_outs = |outs: &[u64]| {
            for (k, o) in &out_arrays {
                if outs[*k] != 0 {
                    // Safety: a handle the entry returned, freed once.
                    unsafe { (o.free)(ctx, outs[*k] as *mut c_void) };
                }
            }
        };
        if code != 0 {
            // Safety: `ctx` is live.
            let text = unsafe { self.error(ctx) };
            free_outs(&outs);
            return Err(Failure::from_futhark(&text));
        }
        let utests = if entry.counts { outs[entry.outputs.len()] as i64 } else { 0 };
        let mut values = Vec::with_capacity(entry.outputs.len());
        let mut pending: Vec<(usize, Output)> = Vec::new();
        for (k, leaf) in entry.outputs.iter().enumerate() {
            if leaf.rank == 0 {
                values
                    .push(marshal::scalar_value(leaf.scalar, outs[k]).map_err(|m| Failure { message: m, line: None }));
                continue;
            }
            let o = ops(leaf)?;
            let a = outs[k] as *mut c_void;
            // Safety: a live array of rank `leaf.rank`.
            let dims: Vec<i64> = unsafe { std::slice::from_raw_parts((o.shape)(ctx, a), leaf.rank) }.to_vec();
            let n = dims.iter().map(|d| (*d).max(0) as usize).product::<usize>();
            let mut buf = Buf::with_capacity(leaf.scalar, n);
            let ptr = buf.ptr_mut();
            // Safety: the buffer has room for the array's elements.
            let code = unsafe { (o.values)(ctx, a, ptr) };
            if code != 0 {
                let text = unsafe { self.error(ctx) };
                free_outs(&outs);
                return Err(Failure::from_futhark(&text));
            }
            pending.push((k, Output { buf, dims }));
            values.push(Ok(Value::unit()));
        }
        // `futhark_values_*` may finish asynchronously: the elements are
        // there after a sync.
        let code = unsafe { (self.sync)(ctx) };
        free_outs(&outs);
        if code != 0 {
            return Err(Failure::from_futhark(&unsafe { self.error(ctx) }));
        }
        for (k, mut o) in pending {
            // Safety: `futhark_values_*` and the sync wrote all `n`
            // elements (a `bool` as 0 or 1).
            let n = o.dims.iter().map(|d| (*d).max(0) as usize).product::<usize>();
            unsafe {
                match &mut o.buf {
                    Buf::I64(v) => v.set_len(n),
                    Buf::F64(v) => v.set_len(n),
                    Buf::Bool(v) => v.set_len(n),
                    Buf::I32(v) => v.set_len(n),
                }
            }
            values[k] = marshal::array_value(o).map_err(|m| Failure { message: m, line: None });
        }
        Ok((values.into_iter().collect::<Result<_, _>>()?, utests))
    }
}

impl Drop for Library {
    fn drop(&mut self) {
        if let Some(c) = self.context.get_mut().unwrap_or_else(|e| e.into_inner()).take() {
            // Safety: the context and configuration were made by this
            // library and are freed once; freeing the context stops its
            // worker threads, so the code can be unmapped after.
            unsafe {
                (self.context_free)(c.ctx);
                (self.config_free)(c.cfg);
            }
        }
        // Safety: nothing of the library is used after this.
        unsafe { std::mem::ManuallyDrop::drop(&mut self.lib) };
    }
}

/// One binding's engine.
pub struct FutharkEngine {
    pub library: Arc<Library>,
    pub entry: EntryAbi,
}

impl Engine for FutharkEngine {
    fn name(&self) -> &str {
        self.library.backend.engine_name()
    }

    fn call(&self, m: &mut Machine, site: &Site, args: Args, stats: &mut CallStats) -> pmx_cpu::Res<Value> {
        let span = site.boundary.span;
        let values: Vec<Value> = args.into_iter().collect();
        let inputs = marshal::inputs(&values, &self.entry.params, &self.entry.inputs)
            .map_err(|e| RuntimeError::from_engine(e, span))?;
        let bytes_in = self.library.bytes_copied(&self.entry, &inputs);
        let generated = &self.library.generated;
        // A failure: where Futhark stopped (a line of the generated
        // program), or the first failed check of the channel.
        let failed = |at: Option<pmx_ast::Span>, what: String| {
            let at = at.filter(|s| !s.is_builtin()).unwrap_or(span);
            // Located at the failing construct; the accelerate that ran it
            // is named too when that is elsewhere.
            let inside = if at == span {
                "in Futhark-class accelerated code".to_string()
            } else {
                format!("in Futhark-class accelerated code, run by the accelerate at {}", pmx_cpu::io::locate(span))
            };
            RuntimeError::from_engine(format!("{what} ({inside})"), at)
        };
        let (leaves, channel) = match self.library.run(&self.entry, &inputs) {
            Ok(v) => v,
            Err(f) => {
                // Futhark stopped at a check of its own (a row read from
                // an empty array is one that pmx's guards leave): debug
                // mode may have failed earlier, at one of pmx's checks.
                drop(inputs);
                if let Some(first) = pmx_cpu::accelerate::diagnose(m, site, values.into()) {
                    return Err(first);
                }
                let line = f.line.and_then(|l| generated.locate(l));
                return Err(failed(line.map(|l| l.span), line.and_then(|l| l.what.clone()).unwrap_or(f.message)));
            }
        };
        if channel < 0 {
            let (at, what) = generated
                .failure(channel)
                .cloned()
                .unwrap_or((span, format!("internal error: unknown failure {channel} of Futhark code")));
            return Err(failed(Some(at), what));
        }
        m.utests_passed(channel as usize);
        drop(inputs);
        stats.bytes_in = bytes_in;
        stats.bytes_out = leaves.iter().map(value_bytes).sum();
        marshal::assemble(&self.entry.result, &mut leaves.into_iter()).map_err(|e| RuntimeError::from_engine(e, span))
    }
}

/// Bytes of a result leaf as it came back.
fn value_bytes(v: &Value) -> u64 {
    use pmx_cpu::value::Seq;
    match v {
        Value::Seq(s) => match &**s {
            Seq::Int(x) => x.len() as u64 * 8,
            Seq::Float(x) => x.len() as u64 * 8,
            Seq::Char(x) => x.len() as u64 * 4,
            Seq::Bool(x) => x.len() as u64,
            Seq::Boxed(_) => (0..s.len()).map(|i| value_bytes(&s.get(i))).sum(),
        },
        _ => 8,
    }
}
