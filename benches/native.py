#!/usr/bin/env python3
"""Accelerate code on the CPU: each program in benches/cuda/ (CUDA class:
generated CUDA compiled by the C++ compiler with OpenMP) and
benches/futhark/ (Futhark class: `futhark multicore`) under
`pmx run --target cpu` against `--target interp`, by the time inside the accelerate
bindings that `--profile` reports (compile time excluded and reported
apart: the cache is emptied first, so the first run compiles). Also
`--unchecked` against checked, and matmul against the hand-written C loop
nest of benches/cuda/matmul.c compiled with the same compiler and flags.

Usage: python3 benches/native.py   (builds pmx in release mode first;
needs `futhark` on PATH for the Futhark programs)
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PMX = os.path.join(ROOT, "target", "release", "pmx")
CACHE = tempfile.mkdtemp(prefix="pmx-bench-cache-")
ENV = dict(os.environ, PMX_CACHE_DIR=CACHE)
FLAGS = ["-O3", "-march=native", "-fopenmp", "-fno-math-errno"]


def profile(args, path):
    """(total ms inside accelerate bindings, total compile ms, stdout)."""
    r = subprocess.run([PMX, "run", "--profile", *args, path], capture_output=True, text=True, cwd=ROOT, env=ENV)
    if r.returncode != 0:
        sys.exit(f"pmx {' '.join(args)} {path} failed:\n{r.stderr}")
    inside = compile_ms = 0.0
    seen = set()
    for line in r.stderr.splitlines():
        cols = re.split(r"\s{2,}", line.strip())
        if len(cols) < 7 or cols[0] == "binding":
            continue
        inside += float(cols[3].split()[0])
        if cols[6].endswith("ms") and cols[6] not in seen:
            seen.add(cols[6])  # one library for all bindings of a program
            compile_ms += float(cols[6].split()[0])
    return inside, compile_ms, r.stdout.strip()


def same(a, b):
    """Equal outputs; a float sum may differ in its last digits (`reduce`
    brackets floating-point additions differently in parallel)."""
    try:
        x, y = float(a), float(b)
        return abs(x - y) <= 1e-9 * max(1.0, abs(x), abs(y))
    except ValueError:
        return a == b


def main():
    subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=ROOT, check=True)
    print(f"{'program':<10} {'interp ms':>10} {'cpu ms':>9} {'ratio':>7} {'unchecked ms':>13} {'compile ms':>11}")
    programs = [("cuda", n) for n in ["axpy", "matmul", "stencil"]]
    programs += [("futhark", n) for n in ["poly", "sumsq", "matvec"]]
    for folder, name in programs:
        path = os.path.join("benches", folder, f"{name}.mc")
        shutil.rmtree(CACHE, ignore_errors=True)
        _, compile_ms, out_cpu = profile(["--target", "cpu"], path)
        cpu = min(profile(["--target", "cpu"], path)[0] for _ in range(3))
        unchecked = min(profile(["--target", "cpu", "--unchecked"], path)[0] for _ in range(3)) if folder == "cuda" else float("nan")
        interp, _, out_interp = profile(["--target", "interp"], path)
        if not same(out_cpu, out_interp):
            sys.exit(f"{name}: outputs differ: cpu {out_cpu!r}, interp {out_interp!r}")
        print(f"{name:<10} {interp:>10.1f} {cpu:>9.1f} {interp / cpu:>6.1f}x {unchecked:>13.1f} {compile_ms:>11.0f}")
    cc = shutil.which(os.environ.get("CC", "cc"))
    exe = os.path.join(CACHE, "matmul-c")
    subprocess.run([cc, *FLAGS, os.path.join(ROOT, "benches", "cuda", "matmul.c"), "-o", exe], check=True)
    c_ms = min(float(subprocess.run([exe], capture_output=True, text=True).stdout.split()[0]) for _ in range(3))
    cpu = min(profile(["--target", "cpu"], os.path.join("benches", "cuda", "matmul.mc"))[0] for _ in range(3))
    print(f"matmul: generated {cpu:.1f} ms, hand-written C {c_ms:.1f} ms, ratio {cpu / c_ms:.2f}")
    shutil.rmtree(CACHE, ignore_errors=True)


if __name__ == "__main__":
    main()
