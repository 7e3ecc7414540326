#!/usr/bin/env python3
"""Accelerate code on the CPU: each program in benches/cuda/ (CUDA class:
generated CUDA compiled by the C++ compiler with OpenMP) and
benches/futhark/ (Futhark class: `futhark multicore`) under
`pmx run --target cpu` against `--target interp`, by the time inside the accelerate
bindings that `--profile` reports (compile time excluded and reported
apart: the cache is emptied first, so the first run compiles). Also
`--unchecked` against checked, and matmul against the hand-written C loop
nest of benches/cuda/matmul.c compiled with the same compiler and flags.

For the Futhark programs also: the generated Futhark against a hand-written
program of the same computation (benches/futhark/NAME.fut), both run through
the same C API by benches/futhark/harness.c (entry time; and
futhark_new/futhark_values of the inputs and result against a plain memcpy
of the same bytes into fresh memory); pmx's marshaling (time inside the
binding less the generated entry's time); and the overhead of a cached run
(`pmx run --target cpu` of a tiny program whose library is in the cache,
against `--target interp`).

Usage: python3 benches/native.py [cuda|futhark]   (builds pmx in release
mode first; needs `futhark` on PATH for the Futhark programs)
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
    # `python3 benches/native.py futhark` (or `cuda`): one class only.
    only = sys.argv[1:]
    programs = [p for p in programs if not only or p[0] in only]
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
    if only and "cuda" not in only:
        futhark_reference()
        cached_overhead()
        shutil.rmtree(CACHE, ignore_errors=True)
        return
    cc = shutil.which(os.environ.get("CC", "cc"))
    exe = os.path.join(CACHE, "matmul-c")
    subprocess.run([cc, *FLAGS, os.path.join(ROOT, "benches", "cuda", "matmul.c"), "-o", exe], check=True)
    c_ms = min(float(subprocess.run([exe], capture_output=True, text=True).stdout.split()[0]) for _ in range(3))
    cpu = min(profile(["--target", "cpu"], os.path.join("benches", "cuda", "matmul.mc"))[0] for _ in range(3))
    print(f"matmul: generated {cpu:.1f} ms, hand-written C {c_ms:.1f} ms, ratio {cpu / c_ms:.2f}")
    if not only or "futhark" in only:
        futhark_reference()
        cached_overhead()
    shutil.rmtree(CACHE, ignore_errors=True)


def harness(name, fut, entry, vm_first=False):
    """The harness's figures for `fut` (a .fut file), entry `entry`."""
    os.makedirs(CACHE, exist_ok=True)
    work = tempfile.mkdtemp(prefix=f"pmx-bench-{name}-", dir=CACHE)
    shutil.copy(fut, os.path.join(work, "prog.fut"))
    subprocess.run(["futhark", "multicore", "--library", "-o", "prog", "prog.fut"], cwd=work, check=True)
    defines = [f"-D{name.upper()}", f"-DENTRY=futhark_entry_{entry}"] + (["-DVM_FIRST"] if vm_first else [])
    harness_c = os.path.join(ROOT, "benches", "futhark", "harness.c")
    exe = os.path.join(work, "harness")
    cc = shutil.which(os.environ.get("CC", "cc"))
    with open(os.path.join(work, "prog.h")) as f:
        header = f.read()
    # The harness calls an entry of one result or, before Futhark 0.26, a
    # result and the channel (`CHANNEL`); from 0.26 several results are
    # one opaque tuple, which it does not take.
    sig = re.search(rf"int futhark_entry_{entry}\(struct futhark_context \*ctx, ([^;]*)\);", header).group(1)
    if "opaque" in sig.split(",")[0]:
        return None
    if "*out1" in sig:
        defines.append("-DCHANNEL")
    subprocess.run([cc, "-O3", "-march=native", "-std=c99", "-pthread", *defines, "-I", work, harness_c,
                    os.path.join(work, "prog.c"), "-o", exe, "-lm"], check=True)
    out = subprocess.run([exe], capture_output=True, text=True, check=True).stdout.split()
    return {out[i]: float(out[i + 1]) for i in range(0, len(out) - 1, 2)}


def futhark_reference():
    print("\nFuthark: generated against hand-written, through the same C API (ms, best of 5 in one context)")
    print(f"{'program':<10} {'hand entry':>10} {'pmx entry':>10} {'ratio':>6} {'new+values':>11} {'memcpy':>8} "
          f"{'pmx inside':>11} {'pmx marshal':>12} {'marshal/memcpy':>15}")
    for name in ["poly", "sumsq", "matvec"]:
        mc = os.path.join("benches", "futhark", f"{name}.mc")
        gen = subprocess.run([PMX, "emit", "--stage", "futhark", mc], capture_output=True, text=True, cwd=ROOT,
                             check=True).stdout
        m = re.search(r"^entry (\w+)(.*)$", gen, re.M)
        entry, params = m.group(1), m.group(2)
        # The generated entry takes the boundary's parameters in its order.
        vm_first = name == "matvec" and params.find("[]f64") < params.find("[][]f64")
        os.makedirs(CACHE, exist_ok=True)
        generated = os.path.join(CACHE, f"{name}-generated.fut")
        with open(generated, "w") as f:
            f.write(gen)
        hand = harness(name, os.path.join(ROOT, "benches", "futhark", f"{name}.fut"), "main")
        mine = harness(name, generated, entry, vm_first)
        if mine is None:
            print(f"{name:<10} (the generated entry returns a tuple with this Futhark: not run by the harness)")
            continue
        if abs(hand["result"] - mine["result"]) > 1e-6 * max(1.0, abs(hand["result"])):
            sys.exit(f"{name}: hand-written {hand['result']} and generated {mine['result']} differ")
        inside = min(profile(["--target", "cpu"], mc)[0] for _ in range(3))
        marshal = inside - mine["entry"]
        io = hand["new"] + hand["values"]
        print(f"{name:<10} {hand['entry']:>10.1f} {mine['entry']:>10.1f} {mine['entry'] / hand['entry']:>5.2f}x "
              f"{io:>11.1f} {hand['memcpy']:>8.1f} {inside:>11.1f} {marshal:>12.1f} {marshal / hand['memcpy']:>14.2f}x")


def cached_overhead():
    """Wall time of a cached `--target cpu` run of a tiny program against
    `--target interp` (best of 5): finding the library, loading it, making
    the Futhark context."""
    import time
    os.makedirs(CACHE, exist_ok=True)
    tiny = os.path.join(CACHE, "tiny.mc")
    with open(tiny, "w") as f:
        f.write("mexpr\nlet r = accelerate (map (lam x. addi x 1) [1, 2, 3]) in\ndprint r\n")
    def wall(target):
        best = float("inf")
        for _ in range(5):
            t = time.perf_counter()
            subprocess.run([PMX, "run", "--target", target, tiny], capture_output=True, check=True, env=ENV)
            best = min(best, time.perf_counter() - t)
        return best * 1e3
    subprocess.run([PMX, "run", "--target", "cpu", tiny], capture_output=True, check=True, env=ENV)  # compiles
    cpu, interp = wall("cpu"), wall("interp")
    print(f"\ncached run of a tiny Futhark-class program: cpu {cpu:.1f} ms, interp {interp:.1f} ms, "
          f"overhead {cpu - interp:.1f} ms")


if __name__ == "__main__":
    main()
