#!/usr/bin/env python3
"""MLang's cost in the front end: a generated MLang program of N language
fragments (each adds a constructor to one `syn` and a case to two `sem`s,
one calling the other; one language composes them all) against the same
program written as MExpr by hand (one variant type, two recursive
functions of N cases each), `pmx check` on each, best of RUNS wall times
(whole process); both run too, and must print the same.

Usage: python3 benches/mlang.py [N] [RUNS]   (builds pmx in release mode
first)
"""
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PMX = os.path.join(ROOT, "target", "release", "pmx")


def mlang(n):
    out = ["lang Base\n  syn Expr =\n  sem eval : Expr -> Int\n  sem eval =\n  sem size : Expr -> Int\n  sem size =\nend\n"]
    for i in range(n):
        out.append(
            f"lang F{i} = Base\n  syn Expr =\n  | C{i} (Int, Expr)\n  | L{i} Int\n"
            f"  sem eval =\n  | C{i} (k, e) -> addi (muli k {i + 1}) (eval e)\n  | L{i} k -> addi k {i}\n"
            f"  sem size =\n  | C{i} (_, e) -> addi 1 (size e)\n  | L{i} _ -> 1\nend\n"
        )
    out.append("lang All = " + " + ".join(f"F{i}" for i in range(n)) + " end\n")
    out.append(main(n, "use All in\n"))
    return "".join(out)


def mexpr(n):
    out = ["type Expr\n"]
    for i in range(n):
        out.append(f"con C{i} : (Int, Expr) -> Expr\ncon L{i} : Int -> Expr\n")
    out.append("recursive\n  let eval = lam e.\n    match e with ")
    eval_cases = []
    size_cases = []
    for i in range(n):
        eval_cases.append(f"C{i} (k, e) then addi (muli k {i + 1}) (eval e)\n    else match e with L{i} k then addi k {i}")
        size_cases.append(f"C{i} (_, e) then addi 1 (size e)\n    else match e with L{i} _ then 1")
    out.append("\n    else match e with ".join(eval_cases) + "\n    else never\n")
    out.append("  let size = lam e.\n    match e with ")
    out.append("\n    else match e with ".join(size_cases) + "\n    else never\nend\n")
    out.append(main(n, ""))
    return "".join(out)


def main(n, use):
    # A value built from every constructor, evaluated and measured.
    build = "L0 1"
    for i in range(n):
        build = f"C{i} ({i}, {build})"
    return f"mexpr\n{use}let e = {build} in\ndprint (eval e, size e)\n"


def best(cmd, runs):
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        r = subprocess.run(cmd, capture_output=True, text=True)
        times.append(time.perf_counter() - t)
        if r.returncode != 0:
            sys.exit(f"{' '.join(cmd)} failed:\n{r.stderr[:2000]}")
    return min(times) * 1e3, r.stdout


def run():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    subprocess.run(["cargo", "build", "--release", "-q"], cwd=ROOT, check=True)
    with tempfile.TemporaryDirectory() as tmp:
        files = {}
        for name, text in [("mlang", mlang(n)), ("mexpr", mexpr(n))]:
            files[name] = os.path.join(tmp, f"{name}.mc")
            with open(files[name], "w") as f:
                f.write(text)
        outs = {k: best([PMX, "run", "--host", "interp", p], 1)[1] for k, p in files.items()}
        if outs["mlang"] != outs["mexpr"]:
            sys.exit(f"outputs differ: {outs}")
        check = {k: best([PMX, "check", p], runs)[0] for k, p in files.items()}
        lines = {k: open(p).read().count("\n") for k, p in files.items()}
        print(f"{n} fragments: MLang {lines['mlang']} lines, MExpr {lines['mexpr']} lines; output {outs['mlang'].strip()}")
        print(f"pmx check, best of {runs}: MLang {check['mlang']:.1f} ms, MExpr {check['mexpr']:.1f} ms, "
              f"ratio {check['mlang'] / check['mexpr']:.2f}")


if __name__ == "__main__":
    run()
