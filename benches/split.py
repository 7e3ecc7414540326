#!/usr/bin/env python3
"""Where a whole run of each example goes: the front end, building the
accelerated code (generating and compiling it, or finding it in the
cache), host code (the interpreter, outside `accelerate`) and time inside
the bindings (kernels and copies), from the last line of
`pmx run --profile`, with the process's wall time beside it.

Each example runs at the sizes of its `bench.json` (each variant), per
target with a fresh cache: the first run is cold (compiled now), then
every variant runs warm (found in the cache).

Usage: python3 benches/split.py [--targets gpu,cpu] [--examples cnn,nn] [--first] [--timeout SECONDS]
    [--args 'NAME=ARG ARG ...'] [--host auto|interp]
(--host: where host code runs; the native host tier's compile time, part
of "build", is its own column)
(examples in the order given)
(takes the binary at $PMX, else target/release/pmx)
"""
import argparse
import glob
import json
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PMX = os.environ.get("PMX") or os.path.join(ROOT, "target", "release", "pmx")
PHASES = re.compile(r"whole run ([\d.]+) ms: front end ([\d.]+) ms, building accelerated code ([\d.]+) ms, "
                    r"host code ([\d.]+) ms, inside bindings ([\d.]+) ms(?: \(kernels ([\d.]+) ms\))?")


HOST = re.compile(r"host code: \d+ top-level functions (?:compiled|loaded) as native code in ([\d.]+) ms")
HOST_MODE = "auto"


def run(main, argv, target, cache, timeout):
    env = dict(os.environ, PMX_CACHE_DIR=cache)
    started = time.perf_counter()
    try:
        r = subprocess.run([PMX, "run", "--target", target, "--host", HOST_MODE, "--profile", main, *argv],
                           capture_output=True,
                           text=True, cwd=os.path.dirname(main), env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, f"over {timeout} s"
    wall = (time.perf_counter() - started) * 1e3
    m = PHASES.search(r.stderr)
    if r.returncode != 0 or not m:
        tail = r.stderr.strip().splitlines()[-3:]
        return None, f"exit {r.returncode}: {' / '.join(tail)}"
    h = HOST.search(r.stderr)
    host_compile = float(h.group(1)) if h else 0.0
    return (wall, *[float(x) if x else 0.0 for x in m.groups()[1:]], host_compile), None


def variants(main):
    """(label, arguments) of each size in the example's bench.json."""
    with open(os.path.join(os.path.dirname(main), "bench.json")) as f:
        b = json.load(f)
    if "variants" in b:
        return [(v["name"], v["args"]) for v in b["variants"]]
    return [("", b.get("args", []))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--targets", default="gpu,cpu")
    ap.add_argument("--examples", default="")
    ap.add_argument("--args", action="append", default=[], metavar="NAME=ARGS",
                    help="run example NAME with these arguments instead of its bench.json's")
    ap.add_argument("--first", action="store_true", help="only each example's first size")
    ap.add_argument("--timeout", type=float, default=120, help="seconds for one run")
    ap.add_argument("--host", default="auto", help="where host code runs: auto (native where it compiles) or interp")
    args = ap.parse_args()
    global HOST_MODE
    HOST_MODE = args.host
    mains = sorted(glob.glob(os.path.join(ROOT, "examples", "*", "main.mc")))
    if args.examples:
        by_name = {os.path.basename(os.path.dirname(m)): m for m in mains}
        mains = [by_name[n] for n in args.examples.split(",") if n in by_name]
    print(f"host code: --host {args.host}")
    print("| example | arguments | target | cache | wall ms | front end | build | of which host compile | host code "
          "| inside bindings | kernels | host share of running |")
    print("| --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for main in mains:
        for target in args.targets.split(","):
            name = os.path.basename(os.path.dirname(main))
            cache = tempfile.mkdtemp(prefix=f"pmx-split-{target}-")
            vs = variants(main)[:1] if args.first else variants(main)
            given = [a.split("=", 1)[1].split() for a in args.args if a.split("=", 1)[0] == name]
            vs = [("", given[0])] if given else vs
            for when, (_, argv) in [("cold", vs[0])] + [("warm", v) for v in vs]:
                row, err = run(main, argv, target, cache, args.timeout)
                if err:
                    print(f"| {name} | {' '.join(argv)} | {target} | {when} | failed: {err} ||||||||", flush=True)
                    break
                wall, front, build, host, inside, kernels, host_compile = row
                share = host / (host + inside) if host + inside > 0 else 0.0
                k = f"{kernels:.1f}" if kernels else "-"
                print(f"| {name} | {' '.join(argv)} | {target} | {when} | {wall:.0f} | {front:.0f} | {build:.0f} | "
                      f"{host_compile:.1f} | {host:.1f} | {inside:.1f} | {k} | {share:.0%} |", flush=True)


if __name__ == "__main__":
    sys.exit(main())
