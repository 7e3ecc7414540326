#!/usr/bin/env python3
"""Runs the utests of Miking's standard library against pmx's own `std/`.

pmx's `std/` is written for this project with Miking's names and
semantics. This checks the semantics with Miking's own utests: for every
file of `std/` that Miking's `stdlib/` also has (same path), it takes the
top-level utests and the `mexpr` section of Miking's file, puts them after
an include of pmx's file (and of those of Miking's includes that `std/`
has) in a temporary file, and runs `pmx test` on it with `PMX_STDLIB`
pointing at `std/`. Nothing of Miking's is kept or committed.

A utest that refers to a helper that only Miking's file defines (or to
MLang) does not check; it is left out, and so is the `mexpr` section when
anything in it does not check. The table gives, per file: Miking's utests
kept and left out, pmx's passes and failures, and for each failure the
line in Miking's file.

Usage: python3 tests/compat/miking_std.py [--miking DIR] [--pmx PATH] [--only SUBSTRING]
Exit code: 0 when no kept utest fails, 1 otherwise.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
STD = os.path.join(ROOT, "std")
TOP = re.compile(r"^(let|recursive|utest|type|con|external|mexpr|include|lang|syn|sem|use)\b")


def blank_comments(text):
    """The text with comments replaced by spaces (lines kept), strings kept."""
    out, i, n, depth = [], 0, len(text), 0
    while i < n:
        c = text[i]
        if depth:
            if text.startswith("/-", i):
                depth += 1
                out.append("  ")
                i += 2
            elif text.startswith("-/", i):
                depth -= 1
                out.append("  ")
                i += 2
            else:
                out.append("\n" if c == "\n" else " ")
                i += 1
        elif text.startswith("/-", i):
            depth = 1
            out.append("  ")
            i += 2
        elif text.startswith("--", i):
            while i < n and text[i] != "\n":
                out.append(" ")
                i += 1
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif c == "'" and i + 2 < n and (text[i + 1] == "\\" or text[i + 2] == "'"):
            j = text.find("'", i + 2 if text[i + 1] != "\\" else i + 3)
            out.append(text[i:j + 1])
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def std_names():
    """Every name `std/` binds at top level (in any file)."""
    names = set()
    for d, _, fs in os.walk(STD):
        for f in fs:
            if f.endswith(".mc"):
                text = open(os.path.join(d, f), encoding="utf-8").read()
                names.update(re.findall(r"^(?:let|external)\s+(\w+)", text, re.M))
                names.update(re.findall(r"^  let\s+(\w+)", text, re.M))
    return names


def pieces(text, pmx_names):
    """Miking's file as (includes, blocks, mexpr section). The blocks are its
    top-level utests and the top-level definitions the utests may use: those
    whose names are private (`_x`) or not defined by pmx's `std/` (a
    definition of a name pmx defines would test Miking's code, not pmx's).
    A name Miking's file defines twice is taken from its second definition
    on. Blocks and the section are (first line number, lines)."""
    lines = blank_comments(text).split("\n")
    includes = re.findall(r'^include\s+"([^"]+)"', "\n".join(lines), re.M)
    blocks, main, cur, defined = [], None, None, set()
    helper = lambda n: n.startswith("_") or n not in pmx_names
    for no, line in enumerate(lines, 1):
        if main is not None:
            main[1].append(line)
            continue
        if TOP.match(line):
            cur = None
            m = re.match(r"let\s+(\w+)", line)
            # A second definition of a name in Miking's file is what its
            # later utests test (these.mc defines theseHasHere twice).
            again = m is not None and m.group(1) in defined
            if m:
                defined.add(m.group(1))
            if line.startswith(("utest", "recursive")) or (m and (helper(m.group(1)) or again)):
                cur = (no, [line])
                blocks.append(cur)
            elif line.startswith("mexpr"):
                main = (no, [line[len("mexpr"):]])
        elif cur is not None:
            cur[1].append(line)
    # A recursive group is a helper when all its names are.
    keep = lambda b: not b[1][0].startswith("recursive") or all(
        helper(n) for n in re.findall(r"^\s+let\s+(\w+)", "\n".join(b[1]), re.M))
    return includes, [b for b in blocks if keep(b)], main


def generate(rel, includes, blocks, main, dropped_includes):
    """The test program and, per output line, (block index or 'main', Miking line)."""
    out, where = [], []
    for inc in [i for i in includes if i not in dropped_includes] + [rel]:
        out.append(f'include "{inc}"')
        where.append(("include", inc))
    for bi, (first, lines) in enumerate(blocks):
        for k, line in enumerate(lines):
            out.append(line)
            where.append((bi, first + k))
    if main is not None:
        out.append("mexpr")
        where.append(("main", main[0]))
        for k, line in enumerate(main[1]):
            out.append(line)
            where.append(("main", main[0] + k))
    return "\n".join(out) + "\n", where


def run_file(pmx, miking, rel, tmp, pmx_names, timeout):
    text = open(os.path.join(miking, "stdlib", rel), encoding="utf-8").read()
    includes, blocks, main = pieces(text, pmx_names)
    includes = [i for i in includes if os.path.isfile(os.path.join(STD, i)) and i != rel]
    env = dict(os.environ, PMX_STDLIB=STD, PMX_TARGET="interp")
    env.pop("MCORE_STDLIB", None)
    env.pop("MCORE_LIBS", None)
    path = os.path.join(tmp, "miking-utests-" + os.path.basename(rel))
    dropped, left_out, main_note = set(), {}, ""
    for _ in range(20):
        kept = [b for i, b in enumerate(blocks) if i not in dropped]
        src, where = generate(rel, includes, kept, main, set())
        index = [i for i in range(len(blocks)) if i not in dropped]
        open(path, "w").write(src)
        chk = subprocess.run([pmx, "check", "--format", "json", path], capture_output=True, text=True,
                             env=env, cwd=tmp)
        errs = [d for d in json.loads(chk.stdout or "[]") if d["severity"] == "error"]
        if not errs:
            break
        progress = False
        for d in errs:
            if os.path.basename(d["file"]) != os.path.basename(path):
                return {"file": rel, "error": f"{d['code']} {d['file']}:{d['start']['line']}: {d['message']}"}
            tag = where[d["start"]["line"] - 1][0]
            if tag == "main" and main is not None:
                main_note = f"mexpr section left out: {d['code']} {d['message'][:80]}"
                main, progress = None, True
            elif isinstance(tag, int) and index[tag] not in dropped:
                dropped.add(index[tag])
                left_out[index[tag]] = d["message"]
                progress = True
        if not progress:
            return {"file": rel, "error": f"{errs[0]['code']}: {errs[0]['message']}"}
    utests_in = lambda lines: sum(len(re.findall(r"(?<![\w#\"])utest\b", line)) for line in lines)
    kept_n = sum(utests_in(b[1]) for i, b in enumerate(blocks) if i not in dropped)
    kept_n += utests_in(main[1]) if main else 0
    try:
        t = subprocess.run([pmx, "test", "--color=never", path], capture_output=True, text=True, env=env, cwd=tmp,
                           timeout=timeout, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return {"file": rel, "error": f"pmx test timed out after {timeout} s"}
    m = re.search(r"(\d+) passed, (\d+) failed", t.stdout)
    fails = [where[int(n) - 1][1] for n in re.findall(r"Unit test FAILED: [^:]*:(\d+):", t.stdout)]
    row = {"file": rel, "kept": kept_n, "left_out": sum(utests_in(blocks[i][1]) for i in dropped),
           "passed": int(m.group(1)) if m else None, "failed": int(m.group(2)) if m else None,
           "fail_lines": fails, "note": main_note, "error": ""}
    if m is None or (t.returncode != 0 and not fails):
        row["error"] = (t.stderr.strip().splitlines() or ["no result"])[0][:160]
    reasons = sorted(set(re.sub(r"`[^`]*`", lambda x: x.group(0), r) for r in left_out.values()))
    row["why"] = "; ".join(reasons[:3])
    return row


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--miking", default="/tmp/miking")
    ap.add_argument("--pmx", default=os.path.join(ROOT, "target", "release", "pmx"))
    ap.add_argument("--only", default="")
    ap.add_argument("--timeout", type=int, default=120)
    a = ap.parse_args()
    rels = sorted(os.path.relpath(os.path.join(d, f), STD) for d, _, fs in os.walk(STD) for f in fs
                  if f.endswith(".mc"))
    rels = [r for r in rels if os.path.isfile(os.path.join(a.miking, "stdlib", r)) and a.only in r]
    names = std_names()
    bad = 0
    totals = [0, 0, 0, 0]
    with tempfile.TemporaryDirectory(prefix="pmx-miking-std-") as tmp:
        for rel in rels:
            r = run_file(a.pmx, a.miking, rel, tmp, names, a.timeout)
            if r.get("error") and "passed" not in r:
                print(f"{rel} | check fails | {r['error']}")
                bad += 1
                continue
            fl = ",".join(map(str, r["fail_lines"]))
            print(f"{rel} | kept {r['kept']} | left out {r['left_out']} | passed {r['passed']} | "
                  f"failed {r['failed']}{' at ' + fl if fl else ''} | {r['error'] or r['note']}"
                  f"{' | left out because: ' + r['why'] if r['why'] else ''}")
            totals[0] += r["kept"]
            totals[1] += r["left_out"]
            totals[2] += r["passed"] or 0
            totals[3] += r["failed"] or 0
            bad += 1 if (r["failed"] or r["error"]) else 0
    print(f"\n{len(rels)} files: Miking's utests kept {totals[0]} (left out {totals[1]}); "
          f"pmx: {totals[2]} passed, {totals[3]} failed")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
