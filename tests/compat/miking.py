#!/usr/bin/env python3
"""Runs Miking's own plain-MExpr standard library and test programs on pmx.

Miking's sources are not part of pmx: point --miking at a checkout of
https://github.com/miking-lang/miking (default /tmp/miking). For every `.mc`
file under its `stdlib/` and `test/` the script decides whether it is plain
MExpr (no `lang`, `syn`, `sem` or `use`, in the file or in anything it
includes), then runs `pmx check` and `pmx test` on each plain file with
MCORE_STDLIB=<miking>/stdlib and prints a table:

    file | mi | check | utests passed | failed | seconds | first error

then a summary per folder. A file whose only check errors are E0307 (an
external binding a foreign library: SUNDIALS, Ipopt, Lwt, OCaml) or
Python's intrinsics, or whose utests run a tool this machine lacks
(`dune`), is counted as `foreign`, which issue 13 allows. Accelerated code
runs in the interpreter unless `--target` says otherwise. The `mi` column says what Miking's own test set-up
(`test-files.mk`) expects of the file: `ok` (it runs with its utests),
`no-tc` (Miking excludes it from type checking), `no-run` (excluded from
interpreting/testing), `special` (needs extra dependencies), `-` (not in
Miking's test set); `fails` marks files that fail under Miking's `mi` as
well, for the reason given in MIKING_FAILS below (read from the files).
Programs of the benchmark folders get the iteration count `10` as their
argument, as Miking's benchmark runner gives one.

With `--mlang`, the files that use MLang are run instead of the plain ones
(`--mlang --only /test/mlang/`: Miking's MLang tests).

With `--std pmx`, includes go to pmx's own `std/` instead of Miking's
`stdlib/` (run it with `--only /test/`): Miking's test programs against
pmx's standard library. (`tests/compat/miking_std.py` runs the utests of
Miking's library files against `std/`.)

With `--fallbacks`, each program runs with `--verbose`, and a tally says
which functions the native host tier left to the interpreter, and why.

Usage: python3 tests/compat/miking.py [--miking DIR] [--pmx PATH] [--std miking|pmx] [--fallbacks]
           [--target T] [--timeout S] [-j N] [--only SUBSTRING] [--markdown]
Exit code: 0 when every plain file that `mi` runs passes, 1 otherwise.
"""
import argparse
import concurrent.futures
import glob
import json
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MLANG_WORDS = {"lang", "syn", "sem", "use"}
TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def strip(text):
    """The text with comments, strings, chars and escaped names removed."""
    out = []
    i, n, depth = 0, len(text), 0
    while i < n:
        c = text[i]
        if depth:
            if text.startswith("/-", i):
                depth, i = depth + 1, i + 2
            elif text.startswith("-/", i):
                depth, i = depth - 1, i + 2
            else:
                i += 1
        elif text.startswith("/-", i):
            depth, i = 1, i + 2
        elif text.startswith("--", i):
            while i < n and text[i] != "\n":
                i += 1
        elif c == '"' or (c == "#" and re.match(r'#[a-z]+"', text[i:i + 10])):
            i = text.index('"', i) + 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
            i += 1
            out.append(" S ")
        elif c == "'" and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            j = i + 1
            j += 2 if j < n and text[j] == "\\" else 1
            if j < n and text[j] == "'":
                i = j + 1
                out.append(" C ")
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


INCLUDE = re.compile(r'^\s*include\s+"([^"]+)"', re.M)


def includes(path, stdlib):
    text = open(path, encoding="utf-8", errors="replace").read()
    found = []
    for rel in INCLUDE.findall(text):
        for base in (os.path.dirname(path), stdlib):
            p = os.path.normpath(os.path.join(base, rel))
            if os.path.isfile(p):
                found.append(p)
                break
    return text, found


def mlang_files(files, stdlib):
    """The files that use MLang themselves or include a file that does."""
    direct, edges, todo, seen = {}, {}, list(files), set()
    while todo:
        f = todo.pop()
        if f in seen:
            continue
        seen.add(f)
        text, inc = includes(f, stdlib)
        direct[f] = bool(MLANG_WORDS & set(TOKEN.findall(strip(text))))
        edges[f] = inc
        todo.extend(inc)
    memo = {}

    def uses(f, stack=()):
        if f not in memo:
            memo[f] = direct[f] or any(uses(g, stack + (f,)) for g in edges[f] if g not in stack)
        return memo[f]

    return {f for f in files if uses(f)}


# Files that do not pass under Miking's `mi` either, and why.
MIKING_FAILS = {
    "test/examples/utest/utest.mc": "its utests fail on purpose",
    "test/examples/test-prune-utests.mc": "the utests that boot keeps fail on purpose",
    "test/examples/utest/utest-with-onfail.mc": "ill-typed `else` function (boot-only test)",
    "test/examples/external/ext-not-applied-parse-error.mc": "an error on purpose",
    "test/examples/external/ext-not-fully-applied-parse-error.mc": "an error on purpose",
    "test/examples/external/multiple-ext-parse-error.mc": "an error on purpose",
    "test/examples/external/ext-parse.mc": "parses, does not compile (its comment)",
    "test/examples/external/ext-shadow-parse.mc": "parses, does not compile (its comment)",
    "test/meta/interpret-simple.mc": "unbound type `AssocSec` (boot-only test)",
    "test/meta/pe-interpret-simple.mc": "unbound type `AssocSec` (boot-only test)",
    "test/js/web/document.mc": "needs the JavaScript backend's web library",
}
EXTENSION_DIRS = ("test/meta/", "test/examples/tuning/", "test/examples/peval/")
# Programs that Miking's tests run need, found in the error output.
TOOLS = ("dune: not found", "ocamlfind: not found")
BENCHMARK_DIRS = ("test/microbenchmark/", "test/js/benchmarks/")


def miking_expectations(miking):
    """What Miking's test-files.mk says about each file, by relative path."""
    mk = open(os.path.join(miking, "test-files.mk")).read()
    listed = lambda var: set(re.findall(var + r"\s*\+?=\s*(\S+\.mc)", mk))
    expect = {}
    tested = glob.glob(os.path.join(miking, "stdlib/*.mc")) + glob.glob(os.path.join(miking, "stdlib/*/*.mc"))
    tested += glob.glob(os.path.join(miking, "test/mexpr/*.mc")) + glob.glob(os.path.join(miking, "test/mlang/*.mc"))
    tested += glob.glob(os.path.join(miking, "test/js/*.mc"))
    for f in tested:
        rel = os.path.relpath(f, miking)
        if rel.startswith(("stdlib/sundials/", "stdlib/ipopt/", "stdlib/jvm/", "stdlib/python/")):
            expect[rel] = "special"
        else:
            expect[rel] = "ok"
    for rel in listed("run_files_exclude"):
        expect[rel] = "no-run"
    for rel in listed("typecheck_files_exclude"):
        expect[rel] = "no-tc"
    for rel in glob.glob(os.path.join(miking, "test/accelerate/*.mc")) + glob.glob(os.path.join(miking, "test/py/*.mc")):
        expect[os.path.relpath(rel, miking)] = "special"
    for rel in MIKING_FAILS:
        expect[rel] = "fails"
    return expect


def expectation(expect, rel):
    if rel.startswith(EXTENSION_DIRS):
        return "ext"
    return expect.get(rel, "-")


def first_error(text):
    for line in text.splitlines():
        if line.startswith(("error", "internal error")) or "panicked" in line:
            return line.strip()
    return ""


def run_one(pmx, miking, path, timeout, stdlib, target, fallbacks=False):
    # As Miking's make.sh sets them for its tests.
    libs = f"stdlib={stdlib}:test={os.path.join(miking, 'test')}"
    env = dict(os.environ, MCORE_STDLIB=stdlib, MCORE_LIBS=libs, PMX_TARGET=target)
    env.pop("PMX_STDLIB", None)
    cwd = os.path.dirname(path)
    row = {"file": os.path.relpath(path, miking)}
    chk = subprocess.run([pmx, "check", "--color=never", "--format", "json", path],
                         capture_output=True, text=True, env=env, cwd=cwd, timeout=timeout)
    try:
        diags = [d for d in json.loads(chk.stdout or "[]") if d.get("severity") == "error"]
    except ValueError:
        diags = []
    # Externals of foreign libraries (E0307) and Python's intrinsics.
    foreign = lambda d: d["code"] == "E0307" or (d["code"] == "E0004" and "Python" in d["message"])
    if chk.returncode == 0:
        row["check"] = "ok"
    else:
        row["check"] = "foreign" if diags and all(foreign(d) for d in diags) else "FAIL"
    if row["check"] == "FAIL":
        row["error"] = "; ".join(f"{d['code']} {d['file']}:{d['start']['line']}: {d['message']}" for d in diags[:2]) \
            or first_error(chk.stderr) or chk.stderr.strip()[-200:]
        row["passed"] = row["failed"] = None
        row["secs"] = 0.0
        return row
    if row["check"] == "foreign":
        row["error"] = "uses a foreign library: " + diags[0]["message"][:100]
        row["passed"] = row["failed"] = None
        row["secs"] = 0.0
        return row
    start = time.perf_counter()
    try:
        args = ["10"] if row["file"].startswith(BENCHMARK_DIRS) else []
        verbose = ["--verbose"] if fallbacks else []
        t = subprocess.run([pmx, "test", "--color=never", path] + verbose + args, capture_output=True, text=True,
                           env=env, cwd=cwd, timeout=timeout, stdin=subprocess.DEVNULL)
        out, err, rc = t.stdout, t.stderr, t.returncode
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        err, rc = f"timed out after {timeout} s", None
    row["secs"] = time.perf_counter() - start
    # What the native host tier left to the interpreter, and why.
    row["left"] = [l.split(" runs in the interpreter: ", 1) for l in err.splitlines()
                   if l.startswith("pmx: host code: `") and " runs in the interpreter: " in l]
    m = re.search(r"(\d+) passed, (\d+) failed", out)
    row["passed"], row["failed"] = (int(m.group(1)), int(m.group(2))) if m else (None, None)
    row["rc"] = rc
    needs = [tool for tool in TOOLS if tool in err or tool in out]
    if rc and needs:
        row["check"] = "foreign"
        row["error"] = f"runs `{needs[0].split(':')[0]}`, which this machine lacks"
        return row
    if rc is None:
        row["error"] = err
    elif m is None or rc != 0:
        row["error"] = first_error(err) or first_error(out) or f"exit code {rc}: {err.strip()[-200:]}"
    else:
        row["error"] = ""
    return row


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--miking", default="/tmp/miking")
    ap.add_argument("--pmx", default=os.path.join(ROOT, "target", "release", "pmx"))
    ap.add_argument("--timeout", type=int, default=300)
    ap.add_argument("-j", type=int, default=1)
    ap.add_argument("--only", default="")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--std", choices=["miking", "pmx"], default="miking")
    ap.add_argument("--target", default="interp")
    ap.add_argument("--mlang", action="store_true",
                    help="run the files that use MLang (or include a file that does) instead of the plain ones")
    ap.add_argument("--fallbacks", action="store_true",
                    help="run with --verbose and list what the native host tier leaves to the interpreter")
    a = ap.parse_args()
    miking = os.path.abspath(a.miking)
    stdlib = os.path.join(miking, "stdlib") if a.std == "miking" else os.path.join(ROOT, "std")
    files = sorted(glob.glob(os.path.join(miking, "stdlib", "**/*.mc"), recursive=True)
                   + glob.glob(os.path.join(miking, "test/**/*.mc"), recursive=True))
    mlang = mlang_files(files, stdlib)
    plain = [f for f in files if (f in mlang) == a.mlang and a.only in f]
    expect = miking_expectations(miking)
    with concurrent.futures.ThreadPoolExecutor(a.j) as pool:
        rows = list(pool.map(lambda f: run_one(a.pmx, miking, f, a.timeout, stdlib, a.target, a.fallbacks), plain))
    sep = " | "
    if a.markdown:
        print("| file | mi | check | passed | failed | s | error |\n|---|---|---|---:|---:|---:|---|")
    for r in rows:
        r["mi"] = expectation(expect, r["file"])
        error = r["error"][:150]
        if r["mi"] == "fails" and error:
            error += f" [mi too: {MIKING_FAILS[r['file']]}]"
        cells = [r["file"], r["mi"], r["check"],
                 "" if r["passed"] is None else str(r["passed"]),
                 "" if r["failed"] is None else str(r["failed"]),
                 f"{r['secs']:.1f}", error]
        print(("| " + sep.join(cells) + " |") if a.markdown else sep.join(cells))
    passed = lambda r: r["check"] == "ok" and r["error"] == "" and r["failed"] == 0
    # Not pmx's to pass: foreign libraries, Miking's extensions, files that
    # fail under `mi` too.
    excused = lambda r: r["check"] == "foreign" or r["mi"] in ("ext", "fails", "no-tc", "no-run")
    print()
    for part in ("stdlib/", "test/"):
        mine = [r for r in rows if r["file"].startswith(part)]
        total = sum(1 for f in files if os.path.relpath(f, miking).startswith(part))
        ml = sum(1 for f in mlang if os.path.relpath(f, miking).startswith(part))
        ok = [r for r in mine if passed(r)]
        fail = [r for r in mine if not passed(r)]
        print(f"{part}: {total} files, {ml} MLang, {len(mine)} plain: {len(ok)} pass, "
              f"{sum(1 for r in fail if excused(r))} fail also under mi or need what pmx leaves out "
              f"(foreign {sum(1 for r in fail if r['check'] == 'foreign')}, "
              f"extensions {sum(1 for r in fail if r['mi'] == 'ext')}), "
              f"{sum(1 for r in fail if not excused(r))} other failures")
    if a.fallbacks:
        # Per reason (its first words), how many passing programs leave a
        # function to the interpreter for it.
        reasons = {}
        for r in rows:
            if passed(r):
                for why in {re.sub(r"`[^`]*`", "`..`", w)[:90] for _, w in r.get("left", [])}:
                    reasons.setdefault(why, []).append(r["file"])
        left = [r for r in rows if passed(r) and r.get("left")]
        print(f"\nnative host tier: {len(left)} of {sum(1 for r in rows if passed(r))} passing programs "
              f"leave something to the interpreter")
        for why, fs in sorted(reasons.items(), key=lambda x: -len(x[1])):
            print(f"  {len(fs):3}  {why}  (e.g. {fs[0]})")
    sys.exit(1 if any(not passed(r) and not excused(r) for r in rows) else 0)


if __name__ == "__main__":
    main()
