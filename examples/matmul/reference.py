#!/usr/bin/env python3
"""The reference for examples/matmul: C = A B on the same matrices as
main.mc (data.mc's formulas), with NumPy's `dot` (a tuned BLAS: OpenBLAS
in NumPy's wheels) and, where it is installed, PyTorch's `matmul` on the
CPU; 64-bit floats, all cores. Prints the checksum main.mc prints and, for
benches/cases.py, each one's best time of 7:

    reference * NumPy dot: 31.2 ms

    python3 examples/matmul/reference.py [N]      (N = 1024 by default)
"""
import sys
import time

import numpy as np


def matrices(n):
    i = np.arange(n)[:, None]
    j = np.arange(n)[None, :]
    a = (((3 * i + 5 * j) % 17) - 8) / 8.0
    b = (((7 * i + 2 * j) % 13) - 6) / 16.0
    return a, b


def checksum(c):
    n = c.shape[0]
    i = np.arange(n)[:, None]
    j = np.arange(n)[None, :]
    return float((c * ((2 * i + j) % 5)).sum())


def best(f, runs=7):
    f()  # warm up (threads, pages)
    t = float("inf")
    for _ in range(runs):
        s = time.perf_counter()
        f()
        t = min(t, time.perf_counter() - s)
    return t * 1e3


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1024
    a, b = matrices(n)
    c = a.dot(b)
    print(f"NumPy: checksum {checksum(c)}, C[n-1][n-1] = {c[n - 1, n - 1]}")
    print(f"reference * NumPy dot: {best(lambda: a.dot(b)):.3f} ms")
    try:
        import torch
    except ImportError:
        print("note: PyTorch is not installed: no PyTorch reference")
        return
    ta, tb = torch.from_numpy(a), torch.from_numpy(b)
    tc = torch.matmul(ta, tb)
    print(f"PyTorch: checksum {checksum(tc.numpy())}")
    print(f"reference * PyTorch matmul: {best(lambda: torch.matmul(ta, tb)):.3f} ms")


if __name__ == "__main__":
    main()
