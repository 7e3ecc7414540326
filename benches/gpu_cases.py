#!/usr/bin/env python3
"""The case studies' CUDA-class code on a GPU against hand-written CUDA
(issue 15: "Viterbi and matrix multiplication kernels within 1.5x of
hand-written CUDA"). Needs a CUDA device, NVIDIA's driver, nvcc and NVRTC.

- viterbi: `examples/viterbi/main.mc SEQUENCES SIGNALS vc` (the imperative
  version, one kernel launch per signal) against examples/viterbi/vc.cu,
  the same kernels written by hand, decoding the model and signals that
  main.mc writes (`main.mc SEQUENCES SIGNALS none FILE`, --target interp).
- matmul: `examples/matmul/main.mc N c` (one thread per cell of C) against
  examples/matmul/matmul.cu, the same kernel by hand on the same matrices.

pmx runs with `--target gpu --profile` (where that fails, for instance
because the program's Futhark-class bindings need `futhark`, with
`--target auto`; the called binding must run on the `cuda-gpu` engine),
once to compile into a fresh cache, then RUNS times; its figure is the
best of the profile's `kernels` column (the device's time by CUDA
events: pmx queues its launches, so they run back to back as the
hand-written ones do, and times each run of them from the start of its
first kernel to the end of its last, as the hand-written programs time
their loops of launches; for Viterbi it is also timed with
PMX_CUDA_SYNC=1, a wait after each launch and events around each,
against the hand-written program timed so). The hand-written
programs are built with nvcc (`-O3 -arch=native`) and print the median
of their own event timings. The checksums that pmx prints must equal the
hand-written programs' (the script fails otherwise).

    python3 benches/gpu_cases.py [--viterbi SEQUENCES SIGNALS] [--matmul N] [--runs RUNS]
    PMX=/path/to/pmx PMX_NVCC=/path/to/nvcc python3 benches/gpu_cases.py

pmx is $PMX, else target/release/pmx of this checkout (this script never
builds it); PMX_STDLIB is set to this checkout's std/ unless set. nvcc is
$PMX_NVCC, else `nvcc` on PATH, else Python's nvidia-cuda-nvcc package.
Defaults: viterbi 100 sequences of 6,000 signals (the paper's size),
matmul 1024 x 1024, RUNS 3.

`--emulate` checks all of this on a machine without a GPU (times mean
nothing; default sizes 4 x 100 and 64): the hand-written programs run on
the CPU through benches/cuda/emulate.py, pmx with PMX_GPU_KERNELS=cpu.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TIMEOUT = 600
TARGET = 1.5


def note(msg):
    print(msg, file=sys.stderr, flush=True)


def find_nvcc():
    if os.environ.get("PMX_NVCC"):
        return os.environ["PMX_NVCC"]
    if shutil.which("nvcc"):
        return shutil.which("nvcc")
    try:
        import nvidia  # noqa: F401  (Python's nvidia-cuda-nvcc package)
        for base in nvidia.__path__:
            for cu in ["cu13", "cu12", "cuda_nvcc"]:
                path = os.path.join(base, cu, "bin", "nvcc")
                if os.path.exists(path):
                    return path
    except ImportError:
        pass
    sys.exit("gpu_cases: nvcc not found: set PMX_NVCC, put nvcc on PATH, or pip install nvidia-cuda-nvcc")


def build(cu, exe, emulate):
    """Compiles a hand-written .cu program into `exe`."""
    if emulate:
        sys.dont_write_bytecode = True
        sys.path.insert(0, os.path.join(ROOT, "benches", "cuda"))
        import emulate as em
        em.build(cu, exe)
        return "g++ (CPU emulation)"
    nvcc = find_nvcc()
    last = None
    for arch in ["-arch=native", "-arch=sm_90"]:
        r = subprocess.run([nvcc, "-O3", arch, cu, "-o", exe], capture_output=True, text=True)
        if r.returncode == 0:
            return f"{nvcc} -O3 {arch}"
        last = r.stderr.strip()
        note(f"gpu_cases: nvcc {arch} failed on {cu}:\n{last}")
    sys.exit(f"gpu_cases: cannot build {cu}")


def run_hand(cmd):
    """`name value` lines of a hand-written program, as a dict of strings."""
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT)
    if r.returncode != 0:
        sys.exit(f"gpu_cases: {' '.join(cmd)} failed (exit {r.returncode}):\n{r.stdout}{r.stderr}")
    out = {}
    for line in r.stdout.splitlines():
        parts = line.split(None, 1)
        if len(parts) == 2:
            out[parts[0]] = parts[1].strip()
    return out


def parse_profile(stderr):
    """(kernels ms, ms inside, engines) summed over the bindings that were
    called, from `pmx run --profile`'s table; None without a table."""
    header = None
    kernels = inside = 0.0
    engines = set()
    timed = True
    for line in stderr.splitlines():
        cols = re.split(r"\s{2,}", line.strip())
        if cols and cols[0] == "binding":
            header = cols
            continue
        if header is None or len(cols) != len(header):
            continue
        row = dict(zip(header, cols))
        if not row.get("calls", "").isdigit() or int(row["calls"]) == 0:
            continue
        engines.add(row["engine"])
        inside += float(row["time inside"].split()[0])
        k = row.get("kernels", "-")
        if k.endswith(" ms"):
            kernels += float(k.split()[0])
        else:
            timed = False
    if header is None:
        return None
    return (kernels if timed else None), inside, engines


class Pmx:
    def __init__(self, emulate):
        self.pmx = os.environ.get("PMX") or os.path.join(ROOT, "target", "release", "pmx")
        if not os.path.exists(self.pmx):
            sys.exit(f"gpu_cases: no pmx at {self.pmx} (set PMX, or cargo build --release)")
        self.cache = tempfile.mkdtemp(prefix="pmx-gpu-cases-cache-")
        self.env = dict(os.environ, PMX_CACHE_DIR=self.cache)
        self.env.setdefault("PMX_STDLIB", os.path.join(ROOT, "std"))
        if emulate:
            self.env["PMX_GPU_KERNELS"] = "cpu"

    def run(self, flags, program, args, env=None):
        cmd = [self.pmx, "run", "--color=never", *flags, program, *args]
        env = dict(self.env, **(env or {}))
        return subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=env, timeout=TIMEOUT)

    def measure(self, program, args, runs, env=None):
        """Best kernels ms, best ms inside, stdout, target: a compiling run,
        then `runs` timed ones, with `env` added to the environment."""
        target = "gpu"
        r = self.run(["--target", "gpu", "--profile"], program, args, env)
        if r.returncode != 0:
            why = (r.stderr.strip().splitlines() or ["?"])[-1]
            note(f"gpu_cases: --target gpu failed on {program} ({why}); using --target auto")
            target = "auto"
            r = self.run(["--target", "auto", "--profile"], program, args, env)
            if r.returncode != 0:
                sys.exit(f"gpu_cases: pmx run --target auto {program} {' '.join(args)} failed:\n{r.stderr}")
        best_k = best_inside = None
        stdout = None
        for _ in range(runs):
            r = self.run(["--target", target, "--profile"], program, args, env)
            if r.returncode != 0:
                sys.exit(f"gpu_cases: pmx run --target {target} {program} {' '.join(args)} failed:\n{r.stderr}")
            p = parse_profile(r.stderr)
            if p is None:
                sys.exit(f"gpu_cases: no profile table from pmx run on {program}:\n{r.stderr}")
            kernels, inside, engines = p
            if engines != {"cuda-gpu"}:
                sys.exit(f"gpu_cases: {program} ran on {', '.join(sorted(engines)) or 'no engine'}, not cuda-gpu:"
                         f"\n{r.stderr}")
            if kernels is None:
                sys.exit(f"gpu_cases: no kernel time in the profile of {program}:\n{r.stderr}")
            best_k = kernels if best_k is None else min(best_k, kernels)
            best_inside = inside if best_inside is None else min(best_inside, inside)
            if stdout is not None and r.stdout != stdout:
                sys.exit(f"gpu_cases: {program} printed differently between runs:\n{stdout}\n{r.stdout}")
            stdout = r.stdout
        return best_k, best_inside, stdout, target

    def measure_also(self, program, args, runs, env, stdout):
        """Best kernels ms and best ms inside with `env` added, which must
        print `stdout` as the run without it did."""
        kernels, inside, again, _ = self.measure(program, args, runs, env)
        if again != stdout:
            setting = " ".join(f"{k}={v}" for k, v in env.items())
            sys.exit(f"gpu_cases: {program} printed differently with {setting}:\n{stdout}\n{again}")
        return kernels, inside


def same_float(pmx_text, value):
    """pmx's float2string (OCaml's %.12g, `1.` for integers) of `value`."""
    return float(pmx_text) == float("%.12g" % value)


def viterbi(pmx, work, n, signals, runs, reps, emulate):
    folder = os.path.join(ROOT, "examples", "viterbi")
    exe = os.path.join(work, "vc")
    how = build(os.path.join(folder, "vc.cu"), exe, emulate)
    data = os.path.join(work, "viterbi.txt")
    program = os.path.join("examples", "viterbi", "main.mc")
    r = pmx.run(["--target", "interp"], program, [str(n), str(signals), "none", data])
    if r.returncode != 0:
        sys.exit(f"gpu_cases: writing the Viterbi data failed:\n{r.stderr}")
    note(f"gpu_cases: viterbi: {r.stdout.strip()}; pmx ...")
    kernels, inside, stdout, target = pmx.measure(program, [str(n), str(signals), "vc"], runs)
    m = re.search(r"^vc: checksum (-?\d+),", stdout, re.M)
    if not m:
        sys.exit(f"gpu_cases: no checksum in pmx's output:\n{stdout}")
    # pmx queues its launches; with PMX_CUDA_SYNC=1 it waits for each, as
    # the hand-written program's `kernel_ms_synced` does.
    note("gpu_cases: viterbi: pmx, each launch waited for ...")
    k_synced, inside_synced = pmx.measure_also(program, [str(n), str(signals), "vc"], runs, {"PMX_CUDA_SYNC": "1"},
                                               stdout)
    # Viterbi's kernels divide their index by the number of states, so
    # they run in tiles of rows too; the same without them:
    note("gpu_cases: viterbi: pmx without tiles ...")
    k_flat, _ = pmx.measure_also(program, [str(n), str(signals), "vc"], runs, {"PMX_CUDA_TILES": "0"}, stdout)
    note("gpu_cases: viterbi: hand-written ...")
    hand = run_hand([exe, data, str(reps)])
    ok = m.group(1) == hand["checksum"] == hand["fused_checksum"]
    sizes = f"{n} x {signals // n}"
    synced = float(hand["kernel_ms_synced"])
    extra = [f"viterbi: pmx time inside the binding {inside:.1f} ms (--target {target}; {inside_synced:.1f} ms with "
             f"PMX_CUDA_SYNC=1); each launch timed and waited for: pmx {k_synced:.3f} ms, hand-written "
             f"{synced:.3f} ms (ratio {k_synced / synced:.2f}); pmx without tiles of rows (PMX_CUDA_TILES=0): "
             f"{k_flat:.3f} ms; hand-written as one fused kernel (a block per "
             f"sequence): {float(hand['fused_ms']):.3f} ms",
             f"viterbi: checksums: pmx {m.group(1)}, hand-written {hand['checksum']}, fused "
             f"{hand['fused_checksum']}; device {hand.get('device', '?')}; built with {how}"]
    return ("viterbi vc", sizes, kernels, float(hand["kernel_ms"]), ok, extra)


def matmul(pmx, work, n, runs, reps, emulate):
    folder = os.path.join(ROOT, "examples", "matmul")
    exe = os.path.join(work, "matmul")
    how = build(os.path.join(folder, "matmul.cu"), exe, emulate)
    program = os.path.join("examples", "matmul", "main.mc")
    note("gpu_cases: matmul: pmx ...")
    kernels, inside, stdout, target = pmx.measure(program, [str(n), "c"], runs)
    m = re.search(r"^c: checksum (\S+), C\[n-1\]\[n-1\] = (\S+)$", stdout, re.M)
    if not m:
        sys.exit(f"gpu_cases: no checksum in pmx's output:\n{stdout}")
    # The same kernel as a grid-stride loop over the cells, without tiles
    # of rows (what pmx did before them).
    note("gpu_cases: matmul: pmx without tiles ...")
    k_flat, _ = pmx.measure_also(program, [str(n), "c"], runs, {"PMX_CUDA_TILES": "0"}, stdout)
    note("gpu_cases: matmul: hand-written ...")
    hand = run_hand([exe, str(n), str(reps)])
    ok = (same_float(m.group(1), float(hand["checksum"])) and same_float(m.group(2), float(hand["corner"]))
          and float(hand["checksum"]) == float(hand["tiled_checksum"]))
    extra = [f"matmul: pmx time inside the binding {inside:.1f} ms (--target {target}); pmx kernel without tiles of "
             f"rows (PMX_CUDA_TILES=0): {k_flat:.3f} ms; hand-written with shared-memory tiles: "
             f"{float(hand['tiled_ms']):.3f} ms",
             f"matmul: checksums: pmx {m.group(1)}, hand-written {float(hand['checksum']):.12g}, tiled "
             f"{float(hand['tiled_checksum']):.12g}; device {hand.get('device', '?')}; built with {how}"]
    return ("matmul c", f"{n} x {n}", kernels, float(hand["kernel_ms"]), ok, extra)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--viterbi", nargs=2, type=int, metavar=("SEQUENCES", "SIGNALS"))
    ap.add_argument("--matmul", type=int, metavar="N")
    ap.add_argument("--runs", type=int, default=3, help="timed pmx runs per example (best kept)")
    ap.add_argument("--reps", type=int, default=None, help="timed runs inside each hand-written program (median; 5 for viterbi, 10 for matmul)")
    ap.add_argument("--only", default="viterbi,matmul", help="examples to run, comma-separated")
    ap.add_argument("--emulate", action="store_true", help="no GPU: check everything on the CPU")
    a = ap.parse_args()
    n, signals = a.viterbi or ((4, 400) if a.emulate else (100, 600000))
    size = a.matmul or (64 if a.emulate else 1024)
    # Timed runs inside the hand-written programs (the median printed).
    vreps = a.reps or (1 if a.emulate else 5)
    mreps = a.reps or (1 if a.emulate else 10)
    only = set(a.only.split(","))
    started = time.time()
    pmx = Pmx(a.emulate)
    work = tempfile.mkdtemp(prefix="pmx-gpu-cases-")
    rows = []
    try:
        if "viterbi" in only:
            rows.append(viterbi(pmx, work, n, signals, a.runs, vreps, a.emulate))
        if "matmul" in only:
            rows.append(matmul(pmx, work, size, a.runs, mreps, a.emulate))
    finally:
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(pmx.cache, ignore_errors=True)
    if a.emulate:
        print("CPU emulation (--emulate): the times below mean nothing; the checksums do.")
    print(f"| example | size | pmx kernels ms (best of {a.runs}) | hand-written ms (median) | ratio | "
          f"within {TARGET}x | checksums |")
    print("| --- | --- | ---: | ---: | ---: | --- | --- |")
    for name, sizes, pk, hk, ok, _ in rows:
        ratio = pk / hk if hk > 0 else float("inf")
        print(f"| {name} | {sizes} | {pk:.3f} | {hk:.3f} | {ratio:.2f} | {'yes' if ratio <= TARGET else 'no'} | "
              f"{'agree' if ok else 'DIFFER'} |")
    for row in rows:
        for line in row[5]:
            print(line)
    print(f"total {time.time() - started:.0f} s")
    if not all(row[4] for row in rows):
        sys.exit("gpu_cases: checksums differ")


if __name__ == "__main__":
    main()
