#!/usr/bin/env python3
"""Start latency: small programs (the first lines of a user's program, with
and without the standard library) run whole-process with
`pmx run --host interp` and `pmx run --host auto`, alternating, RUNS times
each: with the host code cache warm (the common case: an unchanged
program), and with it cold (a fresh cache folder per run: the first run of
a program). Prints mean / median / min wall time in ms.

Usage: python3 benches/start.py [RUNS]   (builds pmx in release mode first)
"""
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PMX = os.path.join(ROOT, "target", "release", "pmx")

PROGRAMS = {
    "3 lines, no include": "let f = lam x. addi x 1\nmexpr\ndprint (f 41)\n",
    "6 lines, string.mc": (
        'include "string.mc"\n'
        'let greet = lam n. concat "hello " (int2string n)\n'
        "mexpr\n"
        "let s = greet 42 in\n"
        'print (concat s "\\n");\n'
        'utest strJoin "," ["a","b"] with "a,b" in ()\n'
    ),
}


def wall(cmd, env):
    started = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed: {r.stderr}")
    return (time.perf_counter() - started) * 1e3


def summary(xs):
    return f"{statistics.mean(xs):6.1f} / {statistics.median(xs):6.1f} / {min(xs):6.1f}"


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    subprocess.run(["cargo", "build", "--release", "-q"], cwd=ROOT, check=True)
    print(f"{'program':24} {'mode':26} mean / median / min ms")
    with tempfile.TemporaryDirectory() as tmp:
        for name, text in PROGRAMS.items():
            path = os.path.join(tmp, "p.mc")
            with open(path, "w") as f:
                f.write(text)
            warm = dict(os.environ, PMX_CACHE_DIR=os.path.join(tmp, "warm"))
            wall([PMX, "run", path], warm)
            times = {"interp": [], "native, cache warm": [], "native, cache cold": []}
            for i in range(runs):
                times["interp"].append(wall([PMX, "run", "--host", "interp", path], warm))
                times["native, cache warm"].append(wall([PMX, "run", "--host", "auto", path], warm))
                cold = dict(os.environ, PMX_CACHE_DIR=os.path.join(tmp, f"cold{i}"))
                times["native, cache cold"].append(wall([PMX, "run", "--host", "auto", path], cold))
            for mode, xs in times.items():
                print(f"{name:24} {mode:26} {summary(xs)}")


if __name__ == "__main__":
    main()
