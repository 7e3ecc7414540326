#!/usr/bin/env python3
"""Host code: each program of benches/host/ (NAME.mc, with NAME.ml, the
same computation in OCaml) run whole-process with `pmx run --host interp`,
`pmx run --host auto` (the native host tier) and as compiled by
`ocamlopt -O3` (plain `ocamlopt` when the compiler has no flambda). The
best of RUNS wall times each, the outputs checked equal, and the ratios
interp/native and native/OCaml (the native runs load the host code from
the cache after the first, as an unchanged program does); also the host
compile time that `--verbose` reports with an empty cache and how many
top-level functions were compiled.

Usage: python3 benches/host.py [RUNS]   (builds pmx in release mode first;
needs ocamlopt, Debian's ocaml-nox)
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PMX = os.path.join(ROOT, "target", "release", "pmx")
HERE = os.path.join(ROOT, "benches", "host")


def best(cmd, runs):
    times, out = [], None
    for _ in range(runs):
        started = time.perf_counter()
        r = subprocess.run(cmd, capture_output=True, text=True)
        times.append(time.perf_counter() - started)
        if r.returncode != 0:
            sys.exit(f"{' '.join(cmd)} failed: {r.stderr}")
        out = r.stdout
    return min(times), out


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    subprocess.run(["cargo", "build", "--release", "-q"], cwd=ROOT, check=True)
    ocamlopt = shutil.which("ocamlopt")
    tmp = tempfile.mkdtemp()
    names = sorted(f[:-3] for f in os.listdir(HERE) if f.endswith(".mc"))
    print(f"{'program':10} {'interp s':>9} {'native s':>9} {'ocaml s':>8} {'interp/native':>14} "
          f"{'native/ocaml':>13} {'compile ms':>11} {'compiled':>9}")
    for name in names:
        mc = os.path.join(HERE, name + ".mc")
        ti, oi = best([PMX, "run", "--host", "interp", mc], runs)
        tn, on = best([PMX, "run", "--host", "auto", mc], runs)
        if oi != on:
            sys.exit(f"{name}: outputs differ:\n{oi}\n{on}")
        # The compile itself: with an empty host code cache (the timed
        # runs above load the code from the cache after the first).
        fresh = dict(os.environ, PMX_CACHE_DIR=tempfile.mkdtemp(dir=tmp))
        verbose = subprocess.run([PMX, "run", "--verbose", mc], capture_output=True, text=True, env=fresh).stderr
        m = re.search(r"host code: (\d+) top-level functions compiled as native code in ([\d.]+) ms", verbose)
        compiled, compile_ms = (m.group(1), m.group(2)) if m else ("?", "?")
        to, ratio_o = None, ""
        ml = os.path.join(HERE, name + ".ml")
        if ocamlopt and os.path.exists(ml):
            exe = os.path.join(tmp, name)
            flags = ["-O3"] if "flambda" in subprocess.run([ocamlopt, "-config"], capture_output=True,
                                                            text=True).stdout.replace("flambda: false", "") else []
            # Compiled in the temporary folder: ocamlopt writes its .cmi,
            # .cmx and .o next to the source.
            src = shutil.copy(ml, tmp)
            subprocess.run([ocamlopt, *flags, src, "-o", exe], check=True, capture_output=True, cwd=tmp)
            to, oo = best([exe], runs)
            # pmx prints a whole float with a point (`3.`), OCaml without.
            if oo.strip().rstrip(".") != on.strip().rstrip("."):
                sys.exit(f"{name}: OCaml's output differs:\n{oo}\n{on}")
            ratio_o = f"{tn / to:.2f}"
        print(f"{name:10} {ti:9.3f} {tn:9.3f} {(f'{to:.3f}' if to else '-'):>8} {ti / tn:14.2f} {ratio_o:>13} "
              f"{compile_ms:>11} {compiled:>9}")


if __name__ == "__main__":
    main()
