#!/usr/bin/env python3
"""CUDA-class code on a GPU (needs a CUDA device and NVIDIA's driver).

- Kernel time of the 512x512 matrix multiplication: pmx's generated
  kernel (`pmx run --target gpu --profile benches/cuda/matmul.mc`, the
  `kernels` column: the launch and the wait for it) against the
  hand-written kernel of benches/cuda/matmul.cu (CUDA events around the
  launch), best of several runs each. Target: within 1.5x.
- Host-device copy throughput: pmx's bytes copied in and out for
  benches/cuda/axpy.mc (two 80 MB tensors in, one out) divided by the time
  inside the binding that is not kernel time (marshaling, moving managed
  memory, copying back), as a fraction of cudaMemcpy's bandwidth from
  pageable and from pinned host memory measured by matmul.cu.

Usage: python3 benches/gpu.py   (builds pmx in release mode, or takes the
binary at $PMX; finds nvcc at
$PMX_NVCC or in Python's nvidia-cuda-nvcc package, NVRTC as pmx does:
`pip install nvidia-cuda-nvcc nvidia-cuda-runtime nvidia-cuda-nvrtc
nvidia-cuda-nvrtc-cu12`)
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# A prebuilt binary (PMX=...) lets this run on a GPU machine without cargo.
PMX = os.environ.get("PMX") or os.path.join(ROOT, "target", "release", "pmx")
CACHE = tempfile.mkdtemp(prefix="pmx-gpu-bench-")
ENV = dict(os.environ, PMX_CACHE_DIR=CACHE)


def nvcc():
    if os.environ.get("PMX_NVCC"):
        return os.environ["PMX_NVCC"]
    r = subprocess.run([sys.executable, "-c", "import nvidia; print(list(nvidia.__path__)[0])"],
                       capture_output=True, text=True)
    path = os.path.join(r.stdout.strip(), "cu13", "bin", "nvcc")
    if r.returncode != 0 or not os.path.exists(path):
        sys.exit("nvcc not found: pip install nvidia-cuda-nvcc nvidia-cuda-runtime, or set PMX_NVCC")
    return path


def profile(path, target="gpu"):
    """(ms inside, ms in kernels, bytes in, bytes out, stdout) of one
    `pmx run --target TARGET --profile` (summed over the bindings)."""
    r = subprocess.run([PMX, "run", "--target", target, "--profile", path], capture_output=True, text=True,
                       cwd=ROOT, env=ENV)
    if r.returncode != 0:
        sys.exit(f"pmx run --target {target} {path} failed:\n{r.stderr}")
    inside = kernels = 0.0
    bytes_in = bytes_out = 0
    for line in r.stderr.splitlines():
        cols = re.split(r"\s{2,}", line.strip())
        if len(cols) < 8 or cols[0] == "binding":
            continue
        inside += float(cols[3].split()[0])
        bytes_in += int(cols[4])
        bytes_out += int(cols[5])
        if cols[7] != "-":
            kernels += float(cols[7].split()[0])
    return inside, kernels, bytes_in, bytes_out, r.stdout.strip()


def main():
    if not os.environ.get("PMX"):
        subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=ROOT, check=True)
    exe = os.path.join(CACHE, "matmul-cuda")
    subprocess.run([nvcc(), "-O3", "-arch=native", os.path.join(ROOT, "benches", "cuda", "matmul.cu"), "-o", exe],
                   check=True)
    r = subprocess.run([exe], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"matmul.cu failed:\n{r.stderr}")
    hand = dict((k, float(v)) for k, v in (line.split() for line in r.stdout.splitlines()))
    matmul = os.path.join("benches", "cuda", "matmul.mc")
    profile(matmul)  # compiles (host library, PTX) into the cache
    runs = [profile(matmul) for _ in range(5)]
    pmx_kernel = min(k for _, k, _, _, _ in runs)
    if abs(float(runs[0][4]) - hand["checksum"]) > 1e-9 * max(1.0, abs(hand["checksum"])):
        sys.exit(f"matmul: pmx printed {runs[0][4]}, the hand-written kernel {hand['checksum']}")
    print(f"matmul 512x512 kernel: pmx {pmx_kernel:.3f} ms (launch and wait), hand-written "
          f"{hand['kernel_ms']:.3f} ms (events), ratio {pmx_kernel / hand['kernel_ms']:.2f}")
    axpy = os.path.join("benches", "cuda", "axpy.mc")
    profile(axpy)
    best = min((profile(axpy) for _ in range(3)), key=lambda p: p[0] - p[1])
    inside, kernels, bytes_in, bytes_out, _ = best
    gbs = (bytes_in + bytes_out) / ((inside - kernels) * 1e-3) / 1e9
    pageable = (hand["h2d_pageable_gbs"] + hand["d2h_pageable_gbs"]) / 2
    pinned = (hand["h2d_pinned_gbs"] + hand["d2h_pinned_gbs"]) / 2
    print(f"axpy copies: {(bytes_in + bytes_out) / 1e6:.0f} MB in {inside - kernels:.1f} ms outside kernels = "
          f"{gbs:.2f} GB/s; cudaMemcpy pageable {pageable:.2f} GB/s ({gbs / pageable:.2f}), "
          f"pinned {pinned:.2f} GB/s ({gbs / pinned:.2f})")
    # Each benchmark program on this machine's GPU and on its CPU cores:
    # time inside the bindings, best of three after a compiling run.
    print("program | cpu ms | gpu ms | gpu kernels ms | cpu / gpu")
    for kind in ["cuda", "futhark"]:
        folder = os.path.join(ROOT, "benches", kind)
        for name in sorted(f for f in os.listdir(folder) if f.endswith(".mc")):
            path = os.path.join("benches", kind, name)
            times = {}
            for target in ["cpu", "gpu"]:
                profile(path, target)
                times[target] = min((profile(path, target) for _ in range(3)), key=lambda p: p[0])
            cpu, gpu = times["cpu"][0], times["gpu"][0]
            if times["cpu"][4] != times["gpu"][4]:
                # A float reduction's order differs between the engines.
                print(f"note: {path}: cpu printed {times['cpu'][4]}, gpu {times['gpu'][4]}")
            print(f"{kind}/{name} | {cpu:.1f} | {gpu:.1f} | {times['gpu'][1]:.2f} | {cpu / gpu:.1f}x")
    shutil.rmtree(CACHE, ignore_errors=True)


if __name__ == "__main__":
    main()
