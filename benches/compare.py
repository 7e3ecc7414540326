#!/usr/bin/env python3
"""Times the benchmark programs under `pmx run` against their CPython twins
(best of several runs, wall-clock), and a compute-bound accelerated `map`
under `pmx run` against `pmx run --debug`. Prints the ratios.

Usage: python3 benches/compare.py [--runs N]   (builds pmx in release mode first)
"""
import argparse
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROGRAMS = os.path.join(ROOT, "benches", "programs")
PMX = os.path.join(ROOT, "target", "release", "pmx")


def best(cmd, runs):
    times = []
    out = None
    for _ in range(runs):
        start = time.perf_counter()
        result = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
        times.append(time.perf_counter() - start)
        if result.returncode != 0:
            sys.exit(f"{' '.join(cmd)} failed:\n{result.stdout}\n{result.stderr}")
        out = result.stdout.strip()
    return min(times), out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=ROOT, check=True)
    print(f"{'program':<10} {'pmx s':>8} {'python s':>9} {'speed-up':>9}")
    for name in ["fib", "loops", "seqfold", "stencil"]:
        t_pmx, out_pmx = best([PMX, "run", os.path.join(PROGRAMS, name + ".mc")], args.runs)
        t_py, out_py = best([sys.executable, os.path.join(PROGRAMS, name + ".py")], args.runs)
        same = "" if out_pmx.split() == out_py.split() else "  (outputs differ: %r vs %r)" % (out_pmx, out_py)
        print(f"{name:<10} {t_pmx:8.3f} {t_py:9.3f} {t_py / t_pmx:8.2f}x{same}")
    prog = os.path.join(PROGRAMS, "parmap.mc")
    t_par, out_par = best([PMX, "run", prog], args.runs)
    t_seq, out_seq = best([PMX, "run", "--debug", prog], args.runs)
    assert out_par == out_seq, (out_par, out_seq)
    print(f"accelerated map: parallel {t_par:.3f} s, debug (sequential) {t_seq:.3f} s, "
          f"speed-up {t_seq / t_par:.2f}x on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
