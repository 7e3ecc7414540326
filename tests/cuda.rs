//! Generated CUDA is judged by real compilers: for every test program
//! with CUDA-class accelerate code, `pmx emit --stage cuda` must give a
//! translation unit that NVRTC compiles to PTX (the GPU path's kernels),
//! that the system C++ compiler compiles with OpenMP (the CPU path, and
//! with `-DPMX_HOST_LAUNCH` the GPU path's host code), and that
//! `nvcc -c` compiles as it is. Without NVRTC (`pip install
//! nvidia-cuda-nvrtc-cu12`) or nvcc (`pip install nvidia-cuda-nvcc
//! nvidia-cuda-runtime`) those tests say they were skipped.
//! Snapshots of the generated source sit in `tests/cuda/snapshots/`. One
//! trial per program and check (`snapshots::NAME`, `cpu_compile::NAME`,
//! `nvrtc::NAME`, `cpu::NAME`, `gpu_engine::NAME`, `nvcc::NAME`, and
//! `on_a_gpu::NAME`, ignored: it needs a GPU); those without their tool
//! are ignored after saying why.

#[path = "support/fixtures.rs"]
mod fixtures;
#[path = "support/harness.rs"]
mod harness;
#[path = "support/process.rs"]
mod process;

use fixtures::name;
use harness::{needing, per_fixture, root, stem, trial};
use libtest_mimic::{Arguments, Completion, Trial};
use process::{pmx, pmx_with_env};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Programs matched and differed on a GPU, for the summary line that
/// `benches/gpu_check.sh` reads.
static GPU_MATCHED: AtomicUsize = AtomicUsize::new(0);
static GPU_DIFFERED: AtomicUsize = AtomicUsize::new(0);

fn main() {
    let programs = programs();
    assert!(!programs.is_empty(), "the CUDA-class fixtures are found");
    let class = cuda_class(&programs);
    assert!(!class.is_empty(), "programs with only CUDA-class bindings are found");
    let pname = |p: &PathBuf| name(p);
    let mut trials = per_fixture("snapshots", programs.clone(), pname, |p| generated_cuda_snapshot(&p));
    trials.extend(per_fixture("cpu_compile", programs.clone(), pname, |p| compiles_for_the_cpu(&p)));
    let nvrtc = pmx_cuda::nvrtc::load().map(|_| ()).map_err(|why| why.to_string());
    let mut with_nvrtc = per_fixture("nvrtc", programs.clone(), pname, |p| compiles_with_nvrtc(&p));
    with_nvrtc.push(trial("nvrtc_architecture_for_a_device", nvrtc_architecture_for_a_device));
    trials.extend(needing(&nvrtc, with_nvrtc));
    // Every CUDA-class test program runs with `--target cpu` (generated
    // CUDA compiled for the CPU, with alias reconstruction into per-root
    // buffers) as in debug mode; a failure inside generated code is
    // located like the interpreter's.
    trials.extend(per_fixture("cpu", class.clone(), pname, |p| same_as_debug(&p, &["--target", "cpu"], &[])));
    // The GPU engine's whole path but the device: the host library built
    // with `-DPMX_HOST_LAUNCH`, every launch a callback into Rust (here
    // running the kernel's CPU launcher), sequences copied as for a
    // device, launches queued and run when host code waits for them, as on
    // a device (see `gpu::cpu_kernels`). Every CUDA-class program runs so
    // as in debug mode.
    trials.extend(per_fixture("gpu_engine", class.clone(), pname, |p| {
        same_as_debug(&p, &["--target", "gpu"], &[("PMX_GPU_KERNELS", "cpu")])
    }));
    trials.extend(launches_waited_for_one_by_one_or_without_tiles());
    // The interpreter outside debug mode runs a loop whose accumulations
    // may collide on one thread (its read and write are two steps): the
    // histogram's counts are exact there too.
    trials.push(trial("interp_accumulations", || {
        same_as_debug(&root().join("tests/run/cuda_accumulate.mc"), &["--target", "interp"], &[])
    }));
    let first = class[0].clone();
    trials.push(Trial::ignorable_test("target_gpu_without_a_device_is_a_clear_error", move || {
        Ok(target_gpu_without_a_device_is_a_clear_error(&first))
    }));
    let unsupported = harness::mc_files("tests/cuda/unsupported");
    assert!(!unsupported.is_empty());
    trials.extend(per_fixture("unsupported", unsupported, stem, |p| unsupported_cuda_is_a_located_error(&p)));
    let nvcc = nvcc().map(|_| ());
    let mut with_nvcc = per_fixture("nvcc", programs, pname, |p| compiles_with_nvcc(&p));
    with_nvcc.push(trial(
        "a_unit_linked_by_nvcc_runs_or_reports_the_cuda_error",
        a_unit_linked_by_nvcc_runs_or_reports_the_cuda_error,
    ));
    trials.extend(needing(&nvcc, with_nvcc));
    // On a machine with a GPU (`cargo test --release --test cuda --
    // --ignored --nocapture on_a_gpu`, with NVRTC from `pip install
    // nvidia-cuda-nvrtc-cu12`): every CUDA-class program with `--target
    // gpu` as in debug mode. Prints `gpu: N programs matched, M differed`.
    let gpu = per_fixture("on_a_gpu", class, pname, |p| {
        if let Err(why) = pmx_cuda::gpu::device::usable() {
            panic!("no usable GPU: {why}");
        }
        let difference = difference_from_debug(&p, &["--target", "gpu"], &[]);
        let counter = if difference.is_none() { &GPU_MATCHED } else { &GPU_DIFFERED };
        counter.fetch_add(1, Ordering::Relaxed);
        assert!(difference.is_none(), "{}: {}", p.display(), difference.unwrap_or_default());
    });
    trials.extend(harness::on_a_gpu(gpu));
    let conclusion = libtest_mimic::run(&Arguments::from_args(), trials);
    let (matched, differed) = (GPU_MATCHED.load(Ordering::Relaxed), GPU_DIFFERED.load(Ordering::Relaxed));
    if matched + differed > 0 {
        println!("gpu: {matched} programs matched, {differed} differed");
    }
    conclusion.exit()
}

/// Test programs whose accelerate code includes CUDA-class bindings
/// (they use `loop`).
fn programs() -> Vec<PathBuf> {
    fixtures::accelerate_programs(|_, text| text.contains("loop"))
}

/// Those of `programs` without Futhark-class bindings, which run with
/// `--target gpu` as a whole.
fn cuda_class(programs: &[PathBuf]) -> Vec<PathBuf> {
    let explained = fixtures::explained(programs.to_vec());
    explained.into_iter().filter(|(_, e)| !e.contains("backend: Futhark")).map(|(p, _)| p).collect()
}

fn generated(p: &Path) -> String {
    let (code, out, err) = pmx(&["emit", "--stage", "cuda", "--color=never"], p);
    assert_eq!(code, 0, "{}: {err}", p.display());
    out
}

/// The generated CUDA past its prelude, snapshotted.
fn generated_cuda_snapshot(p: &Path) {
    let source = generated(p);
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("cuda/snapshots");
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    // The prelude is the same in every file.
    let body = source.split_once("// Records and variants.").map(|(_, b)| b).unwrap_or(&source).to_string();
    settings.bind(|| insta::assert_snapshot!(name(p), body));
}

/// The generated CUDA compiles for the CPU, and as the GPU engine's host
/// library.
fn compiles_for_the_cpu(p: &Path) {
    let dir = std::env::temp_dir().join(format!("pmx-cuda-cpu-{}-{}", std::process::id(), name(p)));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let cxx = pmx_native::cc::Compiler::find(pmx_native::cc::Language::Cxx).expect("a C++ compiler");
    let src = dir.join(format!("{}.cu", name(p)));
    std::fs::write(&src, generated(p)).expect("writable");
    let lib = dir.join(format!("lib{}.so", name(p)));
    // The CPU build, and the GPU engine's host library.
    for extra in [None, Some("-DPMX_HOST_LAUNCH")] {
        let mut flags = vec!["-x", "c++", "-std=c++17", "-O1", "-fopenmp", "-Werror=return-type"];
        flags.extend(extra);
        if let Err(e) = cxx.shared_library(&[&src], &lib, &flags) {
            panic!("{}: the generated CUDA does not compile for the CPU {extra:?}:\n{e}", p.display());
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// NVRTC compiles the generated CUDA for the GPU engine's choice for an
/// sm_80 device (A100), and for the oldest architecture CUDA 12 supports
/// without a warning.
fn compiles_with_nvrtc(p: &Path) {
    let sm80 = pmx_cuda::nvrtc::arch_for(80).expect("NVRTC 12 knows sm_80");
    assert_eq!(sm80, "compute_80");
    let source = generated(p);
    for arch in [pmx_cuda::nvrtc::DEFAULT_ARCH, sm80] {
        if let Err(log) = pmx_cuda::nvrtc::compile(&source, arch) {
            panic!("{}: NVRTC rejects the generated CUDA for {arch}:\n{log}", p.display());
        }
    }
}

/// A device newer than NVRTC gets the newest architecture NVRTC knows (the
/// driver compiles that PTX for it); one older than any it knows is an
/// error, not a panic.
fn nvrtc_architecture_for_a_device() {
    let newest = pmx_cuda::nvrtc::arch_for(10_000).expect("some architecture");
    let number = |a: &str| a.trim_start_matches("compute_").parse::<i32>().expect("compute_NN");
    assert!(number(newest) >= 90, "{newest}");
    assert_eq!(pmx_cuda::nvrtc::arch_for(number(newest)), Ok(newest));
    assert!(pmx_cuda::nvrtc::arch_for(10).is_err());
}

/// A CUDA-class program (without Futhark-class bindings) run with `args`
/// and `env` is the same as in debug mode: the same output, utest counts
/// and exit code, and a failure at the same place. Programs that debug
/// mode rejects for a broken assumption of GPU code (a rank too large,
/// say) are compared with the interpreter instead.
fn same_as_debug(p: &Path, args: &[&str], env: &[(&str, &str)]) {
    let difference = difference_from_debug(p, args, env);
    assert!(difference.is_none(), "{}: {}", p.display(), difference.unwrap_or_default());
}

/// How `pmx test ARGS` of program `p` with `env` differs from debug mode
/// (the interpreter where debug mode rejects it), if it does.
fn difference_from_debug(p: &Path, args: &[&str], env: &[(&str, &str)]) -> Option<String> {
    let mut debug = pmx(&["test", "--debug", "--color=never"], p);
    if debug.0 != 0 && debug.2.contains("passed to accelerate") {
        debug = pmx(&["test", "--target", "interp", "--color=never"], p);
    }
    let all: Vec<&str> = ["test", "--color=never"].iter().chain(args).copied().collect();
    let run = pmx_with_env(&all, p, env);
    let at = |s: &str| s.lines().find(|l| l.contains("┌─")).map(str::to_string);
    if debug.0 != run.0 {
        Some(format!("exit codes differ ({} in debug mode, {} here)\n{}\n---\n{}", debug.0, run.0, debug.2, run.2))
    } else if debug.1 != run.1 {
        Some(format!("outputs differ\n{}\n---\n{}\n{}", debug.1, run.1, run.2))
    } else if debug.0 != 0 && at(&debug.2) != at(&run.2) {
        Some(format!("failures differ\n{}\n---\n{}", debug.2, run.2))
    } else {
        None
    }
}

/// The same engine with each launch run and waited for at once
/// (`PMX_CUDA_SYNC=1`, as on a device without concurrent managed access)
/// on the programs whose host code works between launches or fails
/// around them, and without tiles of rows (`PMX_CUDA_TILES=0`) on the one
/// with tiles: the same output and the same first failure.
fn launches_waited_for_one_by_one_or_without_tiles() -> Vec<Trial> {
    let cases = [
        ("cuda_host_between_launches", ("PMX_CUDA_SYNC", "1")),
        ("cuda_failure_after_launch", ("PMX_CUDA_SYNC", "1")),
        ("cuda_failure_before_launch", ("PMX_CUDA_SYNC", "1")),
        ("cuda_tiled_launch", ("PMX_CUDA_TILES", "0")),
    ];
    per_fixture(
        "launches",
        cases,
        |(name, _)| name.to_string(),
        |(name, setting)| {
            let p = root().join("tests/run").join(format!("{name}.mc"));
            let difference = difference_from_debug(&p, &["--target", "gpu"], &[("PMX_GPU_KERNELS", "cpu"), setting]);
            assert!(difference.is_none(), "{name} with {setting:?}: {}", difference.unwrap_or_default());
        },
    )
}

/// Without a usable device, `--target gpu` is an error that says what is
/// missing, with exit code 1 (cudarc would panic if asked blindly).
fn target_gpu_without_a_device_is_a_clear_error(p: &Path) -> Completion {
    if pmx_cuda::gpu::device::open().is_ok() {
        return Completion::ignored_with("this machine has a CUDA device");
    }
    let (code, _, err) = pmx(&["run", "--target", "gpu", "--color=never"], p);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("--target gpu: ") && err.contains("use --target cpu"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    Completion::Completed
}

/// What the generator cannot do yet is a located error of `--target cpu`
/// and of `pmx emit --stage cuda`, never generated code that runs wrongly.
fn unsupported_cuda_is_a_located_error(p: &Path) {
    for args in [&["run", "--target", "cpu", "--color=never"][..], &["emit", "--stage", "cuda", "--color=never"]] {
        let (code, out, err) = pmx(args, p);
        assert_eq!(code, 1, "{} {args:?}: {out}{err}", p.display());
        let file = p.file_name().unwrap().to_string_lossy().into_owned();
        assert!(err.contains(&file) && err.contains("CUDA"), "{} {args:?}: {err}", p.display());
        assert!(!err.contains("panicked"), "{err}");
    }
}

/// `nvcc`: `PMX_NVCC`, else the one Python's `nvidia-cuda-nvcc` package
/// carries (called by its real path, which its include lookup needs).
fn nvcc() -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os("PMX_NVCC").filter(|p| !p.is_empty()) {
        return Ok(PathBuf::from(p));
    }
    let out = std::process::Command::new("python3")
        .args(["-c", "import nvidia, os; print([p for p in nvidia.__path__][0])"])
        .output()
        .map_err(|e| format!("cannot run python3: {e}"))?;
    let dir = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    let nvcc = dir.join("cu13").join("bin").join("nvcc");
    if out.status.success() && nvcc.exists() {
        Ok(nvcc)
    } else {
        Err("nvcc not found (install it with `pip install nvidia-cuda-nvcc nvidia-cuda-runtime`, or set PMX_NVCC)"
            .into())
    }
}

/// What `pmx emit --stage cuda` prints is one translation unit that
/// `nvcc -c` compiles as it is (kernels launched with `<<<...>>>`).
fn compiles_with_nvcc(p: &Path) {
    let nvcc = nvcc().expect("nvcc");
    let dir = std::env::temp_dir().join(format!("pmx-cuda-nvcc-{}-{}", std::process::id(), name(p)));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let src = dir.join(format!("{}.cu", name(p)));
    std::fs::write(&src, generated(p)).expect("writable");
    let out = std::process::Command::new(&nvcc)
        .args(["-c", "-std=c++17"])
        .arg(&src)
        .arg("-o")
        .arg(dir.join(format!("{}.o", name(p))))
        .output()
        .expect("nvcc runs");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        out.status.success(),
        "{}: nvcc rejects the generated CUDA:\n{}",
        p.display(),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The unit that `pmx emit --stage cuda` prints, linked by nvcc into a
/// program of the user's, reports an error of the CUDA runtime instead of
/// ignoring it: its entry returns -1 and `pmx_cuda_error()` says what
/// failed. Where the runtime sees a device, the kernels must run and the
/// result must be right; where it sees none (this machine, without a
/// driver), the entry must fail (it fails at its start, clearing the
/// kernels' flag: errors of launches and kernels themselves need a GPU).
fn a_unit_linked_by_nvcc_runs_or_reports_the_cuda_error() {
    let nvcc = nvcc().expect("nvcc");
    let lib = nvcc.parent().and_then(Path::parent).expect("nvcc's folder").join("lib");
    let Some(cudart) = ["libcudart.so.13", "libcudart.so.12", "libcudart.so"].iter().find(|f| lib.join(f).exists())
    else {
        eprintln!("skipped: no libcudart next to nvcc (pip install nvidia-cuda-runtime)");
        return;
    };
    let dir = std::env::temp_dir().join(format!("pmx-cuda-linked-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let program = dir.join("steps.mc");
    std::fs::write(
        &program,
        "let step = lam t : Tensor[Int]. lam i : Int.\n  let s = [i, addi i 1, addi i 2] in\n  loop 4 (lam j. tensorSetExn t [j] (addi (tensorGetExn t [j]) (get s (modi j 3))))\nmexpr\nlet t = tensorCreateCArrayInt [4] (lam. 0) in\naccelerate (seqLoop 100 (lam i. step t i))\n",
    )
    .expect("writable");
    std::fs::write(dir.join("steps.cu"), generated(&program)).expect("writable");
    // The caller gives the entry a tensor of 4 Ints (managed memory where
    // the runtime has it) and memory for host code's literal.
    let main = r#"#include "steps.cu"
#include <stdlib.h>
static void *alloc(void *, int64_t bytes) {
  void *p = 0;
  if (cudaMallocManaged(&p, bytes > 0 ? bytes : 1) != cudaSuccess) p = calloc(1, bytes > 0 ? bytes : 1);
  return p;
}
int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess) devices = 0;
  printf("devices %d\n", devices);
  int64_t *data = (int64_t *)alloc(0, 4 * sizeof(int64_t));
  pmx_arg a[1] = {};
  a[0].p = data; a[0].rank = 1; a[0].dims[0] = 4;
  pmx_arg r[1] = {};
  pmx_runtime rt = {0, alloc, 0, 0};
  int64_t code = pmx_entry_0(a, r, &rt);
  if (code == 0) printf("ok %lld %lld %lld %lld\n", (long long)data[0], (long long)data[1], (long long)data[2], (long long)data[3]);
  else printf("failed %lld: %s\n", (long long)code, pmx_cuda_error());
  return 0;
}
"#;
    std::fs::write(dir.join("main.cu"), main).expect("writable");
    let exe = dir.join("main");
    let out = std::process::Command::new(&nvcc)
        .args(["-std=c++17", "-o"])
        .arg(&exe)
        .arg(dir.join("main.cu"))
        .arg(format!("-L{}", lib.display()))
        .arg(format!("-l:{cudart}"))
        .output()
        .expect("nvcc runs");
    assert!(out.status.success(), "nvcc cannot link the generated unit:\n{}", String::from_utf8_lossy(&out.stderr));
    let run = std::process::Command::new(&exe).env("LD_LIBRARY_PATH", &lib).output().expect("the program runs");
    let out = String::from_utf8_lossy(&run.stdout).to_string();
    let (devices, said) = out.trim().split_once('\n').unwrap_or(("", out.trim()));
    let on_a_gpu = devices != "devices 0";
    let _ = std::fs::remove_dir_all(&dir);
    assert!(run.status.success(), "the program crashed: {said}\n{}", String::from_utf8_lossy(&run.stderr));
    // Debug mode gives each cell the sum over i < 100 of one of i, i + 1,
    // i + 2: 4950, 5050, 5150, then 4950 again.
    if on_a_gpu {
        assert_eq!(said, "ok 4950 5050 5150 4950", "{devices}");
    } else {
        let message = said.strip_prefix("failed -1: ").unwrap_or_else(|| panic!("not an error of the runtime: {said}"));
        assert!(!message.is_empty() && message != "no error", "{said}");
        eprintln!("no GPU here: the entry reported `{message}`");
    }
}
