#!/usr/bin/env python3
"""The reference for examples/kernels: each kernel on the same data as
main.mc (ktensor.mc's formulas), with NumPy's `einsum` (optimize=True,
which hands the contractions to BLAS) and, where it is installed,
PyTorch's `einsum` on the CPU; 64-bit floats, all cores. Prints the
checksums main.mc prints and, for benches/cases.py, each one's best time
of 5:

    reference bmm NumPy einsum: 12.3 ms

    python3 examples/kernels/reference.py KERNEL SIZES... [KERNEL SIZES...]
      (as main.mc: bmm NB N, mttkrp N R, interp NE N M, helmholtz NE N)
"""
import sys
import time

import numpy as np

SIZES = {"bmm": 2, "mttkrp": 2, "interp": 3, "helmholtz": 2}


def level(x, m, c, d):
    return ((x % m) - c) / d


def grid(*dims):
    return np.meshgrid(*[np.arange(d) for d in dims], indexing="ij")


def checksum(t):
    flat = t.reshape(-1)
    p = np.arange(flat.size)
    return float((flat * ((p % 7) - 3)).sum())


def show(x):
    return repr(x) if x != int(x) else f"{int(x)}."


def kernels(name, sizes):
    """The operands, and the kernel as a function of an einsum and them."""
    if name == "bmm":
        nb, n = sizes
        b, i, k = grid(nb, n, n)
        a = level(b + 3 * i + 5 * k, 11, 5, 8.0)
        b2 = level(2 * b + 7 * i + k, 13, 6, 16.0)
        return [a, b2], lambda ein, a, b2: ein("bik,bkj->bij", a, b2)
    if name == "mttkrp":
        n, r = sizes
        i, j, k = grid(n, n, n)
        x = level(i + 2 * j + 3 * k, 7, 3, 4.0)
        j2, r2 = grid(n, r)
        b = level(j2 + r2, 5, 2, 2.0)
        c = level(3 * j2 + r2, 3, 1, 1.0)
        return [x, b, c], lambda ein, x, b, c: ein("ijk,jr,kr->ir", x, b, c)
    if name == "interp":
        ne, n, m = sizes
        i, l = grid(m, n)
        a = level(i * l + i + 2 * l, 5, 2, 2.0)
        e, p, q, s = grid(ne, n, n, n)
        u = level(e + 2 * p + 3 * q + 5 * s, 9, 4, 4.0)
        return [a, u], lambda ein, a, u: ein("il,jp,kq,elpq->eijk", a, a, a, u)
    if name == "helmholtz":
        ne, n = sizes
        i, j = grid(n, n)
        s = level(i * j + i + 2 * j, 5, 2, 2.0)
        e, p, q, r = grid(ne, n, n, n)
        u = level(e + 2 * p + 3 * q + 5 * r, 9, 4, 4.0)
        d = (((e + p + q + r) % 4) + 1) / 2.0

        def run(ein, s, u, d):
            t = ein("al,bp,cq,eabc->elpq", s, s, s, u)
            return ein("il,jp,kq,elpq->eijk", s, s, s, t * d)
        return [s, u, d], run
    sys.exit(f"unknown kernel {name}")


def best(f, runs=5):
    f()
    t = float("inf")
    for _ in range(runs):
        s = time.perf_counter()
        f()
        t = min(t, time.perf_counter() - s)
    return t * 1e3


def main():
    args = sys.argv[1:]
    try:
        import torch
    except ImportError:
        torch = None
        print("note: PyTorch is not installed: no PyTorch reference")
    while args:
        name = args[0]
        k = SIZES.get(name)
        if k is None:
            sys.exit(f"unknown kernel {name} (kernels: {', '.join(SIZES)})")
        sizes = [int(x) for x in args[1:1 + k]]
        args = args[1 + k:]
        ops, run = kernels(name, sizes)

        def np_ein(spec, *xs):
            return np.einsum(spec, *xs, optimize=True)
        print(f"{name}: checksum {show(checksum(run(np_ein, *ops)))}")
        print(f"reference {name} NumPy einsum: {best(lambda: run(np_ein, *ops)):.3f} ms")
        if torch is not None:
            tops = [torch.from_numpy(o) for o in ops]
            tsum = checksum(run(torch.einsum, *tops).numpy())
            if tsum != checksum(run(np_ein, *ops)):
                print(f"note: {name}: PyTorch's checksum {show(tsum)} differs")
            print(f"reference {name} PyTorch einsum: {best(lambda: run(torch.einsum, *tops)):.3f} ms")


if __name__ == "__main__":
    main()
