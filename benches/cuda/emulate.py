#!/usr/bin/env python3
"""Runs a hand-written CUDA baseline on the CPU, to check its results on a
machine without a GPU (times mean nothing):

    python3 benches/cuda/emulate.py FILE.cu [ARGS...]

Compiles FILE.cu with g++ (C++20) against benches/cuda/emulate.h as
<cuda_runtime.h>, each launch `k<<<grid, block>>>(args)` rewritten as
`emu_launch(k, grid, block, args)`, and runs it with ARGS; its output is
the program's. Use small sizes: every block's threads are OS threads.
"""
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
LAUNCH = re.compile(r"([A-Za-z_][A-Za-z_0-9]*)\s*<<<(.*?)>>>\s*\(\s*(\)?)", re.S)


def rewrite(source):
    def launch(m):
        # A kernel without arguments: `k<<<g, b>>>()`.
        return f"emu_launch({m.group(1)}, {m.group(2)})" if m.group(3) else f"emu_launch({m.group(1)}, {m.group(2)}, "
    return LAUNCH.sub(launch, source)


def build(cu, out):
    with open(cu) as f:
        source = rewrite(f.read())
    d = tempfile.mkdtemp(prefix="pmx-emulate-")
    with open(os.path.join(d, "cuda_runtime.h"), "w") as f:
        f.write(f'#include "{os.path.join(HERE, "emulate.h")}"\n')
    src = os.path.join(d, os.path.basename(cu) + ".cpp")
    with open(src, "w") as f:
        f.write(f'#line 1 "{os.path.abspath(cu)}"\n' + source)
    subprocess.run(["g++", "-std=c++20", "-O1", "-g", "-Wall", "-Wno-unused-function", "-pthread",
                    "-I", d, src, "-o", out], check=True)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    exe = os.path.join(tempfile.mkdtemp(prefix="pmx-emulate-"), "a.out")
    build(sys.argv[1], exe)
    sys.exit(subprocess.run([exe, *sys.argv[2:]]).returncode)


if __name__ == "__main__":
    main()
