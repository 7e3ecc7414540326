#!/usr/bin/env python3
"""Accumulation (issue 30): a histogram of N items (10^7 by default) into
64 bins, four ways, each from the same items:

  - `--target cpu`: a parallel `loop` whose body updates `hist[b]`, an
    accumulation that generated code makes atomic (the binding's time
    inside, from `--profile`, best of three runs);
  - `--target cpu`: the Futhark-class `foldl` over a sequence accumulator
    (below) inside `accelerate`, which Futhark runs as `reduce_by_index`
    (the binding's time inside, best of three runs);
  - the sequential `foldl` over a sequence accumulator
    (`foldl (lam h. lam x. set h x (addi (get h x) 1)) (create 64 (lam. 0)) xs`)
    in the interpreter (`--host interp`: the run's host-code time, less
    that of the same program without the fold);
  - NumPy's `bincount` (best of three).

A fourth line is the loop computing each bin itself (no input crossing
the boundary).

Every way's counts are checked against NumPy's. It takes a built `pmx`
(`--pmx`, default `target/release/pmx`), so it runs where there is no
cargo.

    python3 benches/accumulate.py [--pmx PATH] [--n 10000000]
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

BINS = 64

PRELUDE = """include "string.mc"
mexpr
let n = {n} in
let xs = create n (lam i. modi (addi (muli i i) (divi i 3)) {bins}) in
"""

PROGRAMS = {
    "loop": PRELUDE
    + """let hist = tensorCreateCArrayInt [{bins}] (lam. 0) in
accelerate (loop n (lam i. let b = get xs i in tensorSetExn hist [b] (addi (tensorGetExn hist [b]) 1)));
print (strJoin " " (create {bins} (lam b. int2string (tensorGetExn hist [b]))))
""",
    # The same bins computed in the loop: no input crosses the boundary,
    # so the time is the atomic updates' (and the arithmetic's).
    "computed": """include "string.mc"
mexpr
let n = {n} in
let hist = tensorCreateCArrayInt [{bins}] (lam. 0) in
accelerate (loop n (lam i. let b = modi (addi (muli i i) (divi i 3)) {bins} in
  tensorSetExn hist [b] (addi (tensorGetExn hist [b]) 1)));
print (strJoin " " (create {bins} (lam b. int2string (tensorGetExn hist [b]))))
""",
    "foldl": PRELUDE
    + """let h = foldl (lam h. lam x. set h x (addi (get h x) 1)) (create {bins} (lam. 0)) xs in
print (strJoin " " (map int2string h))
""",
    # The same fold, accelerated: Futhark's `reduce_by_index`.
    "hist": PRELUDE
    + """let h = accelerate (foldl (lam h. lam x. set h x (addi (get h x) 1)) (create {bins} (lam. 0)) xs) in
print (strJoin " " (map int2string h))
""",
    "items": PRELUDE
    + """print (int2string (length xs))
""",
}


def run(pmx, path, args):
    p = subprocess.run([pmx, "run", "--profile", *args, path], capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"{path}: exit {p.returncode}\n{p.stderr}")
    return p.stdout, p.stderr


def ms(pattern, text):
    m = re.search(pattern, text)
    if not m:
        sys.exit(f"no match for {pattern!r} in:\n{text}")
    return float(m.group(1))


def native(pmx, path, want, what):
    """The binding's best time inside of three runs with `--target cpu`,
    after one that compiles and caches the generated code; the counts
    checked against NumPy's each time."""
    run(pmx, path, ["--target", "cpu"])
    best = float("inf")
    for _ in range(3):
        out, err = run(pmx, path, ["--target", "cpu"])
        if out.strip() != want:
            sys.exit(f"{what} counts differ from NumPy's:\n{out}\n{want}")
        best = min(best, ms(r"accelerate1\s+\S+\s+\d+\s+([\d.]+) ms", err))
    return best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pmx", default="target/release/pmx")
    ap.add_argument("--n", type=int, default=10_000_000)
    a = ap.parse_args()
    import numpy as np

    xs = np.arange(a.n, dtype=np.int64)
    xs = (xs * xs + xs // 3) % BINS
    best = float("inf")
    for _ in range(3):
        t = time.perf_counter()
        want = np.bincount(xs, minlength=BINS)
        best = min(best, time.perf_counter() - t)
    numpy_ms = best * 1e3
    want = " ".join(str(c) for c in want)
    with tempfile.TemporaryDirectory() as d:
        paths = {}
        for name, text in PROGRAMS.items():
            paths[name] = os.path.join(d, f"{name}.mc")
            with open(paths[name], "w") as f:
                f.write(text.format(n=a.n, bins=BINS))
        loop_ms = native(a.pmx, paths["loop"], want, "--target cpu")
        computed_ms = native(a.pmx, paths["computed"], want, "--target cpu (bins computed)")
        hist_ms = native(a.pmx, paths["hist"], want, "--target cpu reduce_by_index")
        out, err = run(a.pmx, paths["foldl"], ["--host", "interp"])
        if out.strip() != want:
            sys.exit(f"the interpreter's foldl counts differ from NumPy's:\n{out}\n{want}")
        fold_host = ms(r"host code ([\d.]+) ms", err)
        _, err = run(a.pmx, paths["items"], ["--host", "interp"])
        items_host = ms(r"host code ([\d.]+) ms", err)
    fold_ms = fold_host - items_host
    print(f"histogram of {a.n} items into {BINS} bins, {os.cpu_count()} cores")
    print(f"  --target cpu loop over the items:   {loop_ms:10.1f} ms")
    print(f"  --target cpu loop, bins computed:   {computed_ms:10.1f} ms  (no input)")
    print(f"  --target cpu foldl (reduce_by_index):{hist_ms:9.1f} ms  ({hist_ms / loop_ms:.1f}x the loop)")
    print(f"  foldl in the interpreter:           {fold_ms:10.1f} ms  ({fold_ms / loop_ms:.1f}x the loop, "
          f"{fold_ms / hist_ms:.1f}x reduce_by_index)")
    print(f"  NumPy bincount:                     {numpy_ms:10.1f} ms  (the loop takes {loop_ms / numpy_ms:.1f}x, "
          f"reduce_by_index {hist_ms / numpy_ms:.1f}x)")


if __name__ == "__main__":
    main()
