#!/usr/bin/env python3
"""The case studies in examples/: each example with a bench.json, in each
mode, against its references; a table per example in BENCHMARKS.md and a
bar chart per example (examples/NAME/bench.png, log scale).

    python3 benches/cases.py [--pmx PATH] [--only NAME,...] [--modes MODE,...]
                             [--repeat N] [--timeout S] [--no-write]

pmx is `--pmx`, else `$PMX`, else target/release/pmx of this checkout, else
`pmx` on PATH; this script never builds it, so it runs where there is no
cargo: copy the binary and this checkout there (the binary looks for the
standard library where it was built; the script sets PMX_STDLIB to this
checkout's std/ unless it is set). It needs python3;
matplotlib for the charts (skipped with a note without it); each
reference needs what its script imports (NumPy, PyTorch: a reference
whose package is missing says so and is left out).

Modes (a bench.json lists those it runs): `debug` (`pmx run --debug`),
`interp` (`--target interp`), `cpu` (`--target cpu`), `cpu-unchecked`
(`--target cpu --unchecked`), and `gpu`: where a tiny CUDA-class program
runs with `--target gpu` (tried once at the start), the example runs with
`--target auto`, which puts both classes on the GPU (a Futhark-class
program that Futhark's `cuda` backend refuses runs on the CPU, with a
note); the engines used are noted.

Times are the time inside the accelerate bindings that `pmx run
--profile` reports (marshaling included, compilation excluded), best of
`--repeat` runs (debug and interp: one run); the references run before
and after them, the better time kept; the compile time of the
first run with an empty cache is reported apart. Each mode's output must
match the first mode's (the debug run's where it runs; numbers within a
relative 1e-6); a mismatch is marked in the table.

bench.json:

    {"program": "main.mc",               the example's program
     "args": ["1000"],                   its arguments, or per variant:
     "variants": [{"name": "f", "args": ["1024", "f"]}, ...],
     "modes": ["debug", "interp", "cpu", "cpu-unchecked", "gpu"],
     "references": [["python3", "reference.py", "1024"]]}

A reference is a command run in the example's folder that prints lines
`reference VARIANT LABEL: MS ms` (VARIANT `*` for every variant), its own
best time of the same computation on the same data.
"""
import argparse
import datetime
import json
import math
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(ROOT, "examples")
BENCHMARKS = os.path.join(ROOT, "BENCHMARKS.md")
BEGIN = "<!-- cases:begin -->"
END = "<!-- cases:end -->"
MODES = ["debug", "interp", "cpu", "cpu-unchecked", "gpu"]
FLAGS = {
    "debug": ["--debug"],
    "interp": ["--target", "interp"],
    "cpu": ["--target", "cpu"],
    "cpu-unchecked": ["--target", "cpu", "--unchecked"],
    "gpu": ["--target", "auto"],
}
HEADS = {
    "debug": "`--debug`",
    "interp": "interp",
    "cpu": "cpu",
    "cpu-unchecked": "cpu `--unchecked`",
    "gpu": "gpu",
}
# Modes that run once (the interpreter is slow; its noise is small next
# to the ratios that matter).
ONCE = {"debug", "interp"}
TINY_CUDA = "mexpr\nlet t = tensorCreateCArrayFloat [4] (lam. 1.0) in\naccelerate (loop 4 (lam i. tensorSetExn t [i] 2.0));\nprint (float2string (tensorGetExn t [3]))\n"


def find_pmx(arg):
    for p in [arg, os.environ.get("PMX"), os.path.join(ROOT, "target", "release", "pmx")]:
        if p and os.path.isfile(p) and os.access(p, os.X_OK):
            return os.path.abspath(p)
    p = shutil.which("pmx")
    if p:
        return p
    sys.exit("pmx not found: pass --pmx PATH or set PMX (build it with `cargo build --release`)")


class Runner:
    def __init__(self, pmx, timeout):
        self.pmx = pmx
        self.timeout = timeout
        self.cache = tempfile.mkdtemp(prefix="pmx-cases-cache-")
        self.env = dict(os.environ, PMX_CACHE_DIR=self.cache)
        self.env.setdefault("PMX_STDLIB", os.path.join(ROOT, "std"))

    def clear_cache(self):
        shutil.rmtree(self.cache, ignore_errors=True)
        os.makedirs(self.cache, exist_ok=True)

    def run(self, flags, program, args, cwd):
        """(ms inside the bindings, compile ms, engines, stdout), or an error string."""
        cmd = [self.pmx, "run", "--profile", "--color=never", *flags, program, *args]
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, env=self.env, timeout=self.timeout)
        except subprocess.TimeoutExpired:
            return f"timed out after {self.timeout} s"
        if r.returncode != 0:
            last = [l for l in r.stderr.strip().splitlines() if l.strip()]
            return f"exit {r.returncode}: {last[0] if last else ''}"
        inside, compiles, engines = 0.0, {}, set()
        table = False
        for line in r.stderr.splitlines():
            cols = re.split(r"\s{2,}", line.strip())
            if cols and cols[0] == "binding":
                table = True
                continue
            if not table or len(cols) < 7:
                continue
            engine, calls, time, compile_ = cols[1], cols[2], cols[3], cols[6]
            if calls.isdigit() and int(calls) > 0:
                inside += float(time.split()[0])
                engines.add(engine)
            if compile_.endswith(" ms"):
                # One library per engine for all of its bindings.
                compiles[engine] = float(compile_.split()[0])
        if not table:
            return "no profile table in the output"
        return inside, sum(compiles.values()), sorted(engines), r.stdout

    def gpu_usable(self):
        d = tempfile.mkdtemp(prefix="pmx-cases-gpu-")
        p = os.path.join(d, "tiny.mc")
        with open(p, "w") as f:
            f.write(TINY_CUDA)
        r = subprocess.run([self.pmx, "run", "--target", "gpu", p], capture_output=True, text=True, env=self.env)
        shutil.rmtree(d, ignore_errors=True)
        if r.returncode == 0 and r.stdout.strip() == "2.":
            return True, ""
        why = (r.stderr.strip().splitlines() or ["?"])[0]
        return False, re.sub(r"; accelerate\d+ at .*$", "", why.removeprefix("error: "))


def same_output(a, b):
    """Equal outputs, numbers within a relative 1e-6 (a parallel reduce
    adds floats in another order; a math library may differ in the last
    bits)."""
    ta, tb = re.split(r"(\s+|,)", a.strip()), re.split(r"(\s+|,)", b.strip())
    if len(ta) != len(tb):
        return False
    for x, y in zip(ta, tb):
        if x == y:
            continue
        try:
            fx, fy = float(x), float(y)
        except ValueError:
            return False
        if not (abs(fx - fy) <= 1e-6 * max(1.0, abs(fx), abs(fy))):
            return False
    return True


def references(bench, folder, timeout):
    """{variant: [(label, ms)]}, and notes."""
    out, notes = {}, []
    for cmd in bench.get("references", []):
        cmd = [sys.executable if c == "python3" else c for c in cmd]
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, cwd=folder, timeout=timeout)
        except subprocess.TimeoutExpired:
            notes.append(f"`{' '.join(cmd[1:])}` timed out")
            continue
        for line in r.stdout.splitlines():
            m = re.match(r"^reference (\S+) (.+): ([0-9.eE+-]+) ms$", line.strip())
            if m:
                out.setdefault(m.group(1), []).append((m.group(2), float(m.group(3))))
            elif line.startswith("note: "):
                notes.append(line[6:])
        if r.returncode != 0:
            notes.append(f"`{os.path.basename(cmd[1]) if len(cmd) > 1 else cmd[0]}` failed: "
                         + ((r.stderr.strip().splitlines() or ['?'])[-1]))
    return out, notes


def fmt_ms(v):
    if v is None:
        return ""
    if isinstance(v, str):
        return v
    if v >= 100:
        return f"{v:,.0f}"
    if v >= 10:
        return f"{v:.1f}"
    return f"{v:.2f}"


def bench_example(name, runner, modes_wanted, repeat, gpu, timeout):
    folder = os.path.join(EXAMPLES, name)
    with open(os.path.join(folder, "bench.json")) as f:
        bench = json.load(f)
    program = bench["program"]
    variants = bench.get("variants") or [{"name": name, "args": bench.get("args", [])}]
    modes = [m for m in bench.get("modes", ["debug", "interp", "cpu"]) if m in modes_wanted]
    if "gpu" in modes_wanted and "gpu" not in modes and gpu[0]:
        modes.append("gpu")  # every example runs on a GPU where there is one
    modes = [m for m in MODES if m in modes]
    if "gpu" in modes and not gpu[0]:
        modes.remove("gpu")
    # The references run before and after pmx's runs, the better time
    # kept: a BLAS with spinning threads suffers most from a moment's
    # load on the machine.
    refs, notes = references(bench, folder, timeout)
    results = {}  # (variant, mode) -> dict
    compile_ms = {}
    for v in variants:
        vname, args = v["name"], [str(a) for a in v.get("args", [])]
        base_out = None  # the first mode's output (debug's, where it runs)
        for mode in modes:
            flags = FLAGS[mode]
            if mode in ("cpu", "cpu-unchecked", "gpu"):
                runner.clear_cache()  # the first run compiles
            print(f"  {name} {vname} {mode} ...", file=sys.stderr, flush=True)
            first = runner.run(flags, program, args, folder)
            if isinstance(first, str):
                results[(vname, mode)] = {"error": first}
                notes.append(f"{vname}, {mode}: {first}")
                continue
            best, comp, engines, out = first
            if mode not in ONCE:
                if comp > 0:
                    compile_ms[(vname, mode)] = comp
                    best = float("inf")  # the compiling run's time is not counted
                for _ in range(repeat):
                    r = runner.run(flags, program, args, folder)
                    if isinstance(r, str):
                        best = None
                        notes.append(f"{vname}, {mode}: {r}")
                        break
                    best = min(best, r[0])
            if base_out is None:
                base_out, base_mode = out, mode
            matches = same_output(base_out, out)
            if not matches:
                notes.append(f"{vname}, {mode}: output differs from the {base_mode} run")
            results[(vname, mode)] = {"ms": best, "engines": engines, "matches": matches}
    again, _ = references(bench, folder, timeout)
    for v, pairs in again.items():
        for label, ms in pairs:
            old = dict(refs.get(v, []))
            old[label] = min(ms, old.get(label, ms))
            refs[v] = list(old.items())
    return {"name": name, "variants": [v["name"] for v in variants], "modes": modes, "results": results,
            "compile": compile_ms, "refs": refs, "notes": notes, "bench": bench}


def ref_labels(ex):
    labels = []
    for v in ["*"] + ex["variants"]:
        for label, _ in ex["refs"].get(v, []):
            if label not in labels:
                labels.append(label)
    return labels


def ref_ms(ex, variant, label):
    for v in [variant, "*"]:
        for lab, ms in ex["refs"].get(v, []):
            if lab == label:
                return ms
    return None


def table(ex):
    modes = ex["modes"]
    labels = ref_labels(ex)
    head = ["version"] + [HEADS[m] + " ms" for m in modes] + [l + " ms" for l in labels]
    if "interp" in modes and "cpu" in modes:
        head.append("interp / cpu")
    fastest_cpu = [m for m in ("cpu", "cpu-unchecked") if m in modes]
    if labels and fastest_cpu:
        head.append(f"best cpu / {labels[0]}")
    if "gpu" in modes and labels:
        head.append(f"gpu / {labels[0]}")
    compile_modes = [m for m in ("cpu", "gpu") if m in modes]
    head += [f"{HEADS[m]} compile ms" for m in compile_modes]
    rows = []
    for v in ex["variants"]:
        row = [v if len(ex["variants"]) > 1 else ex["name"]]
        ms = {}
        for m in modes:
            r = ex["results"].get((v, m), {})
            if "error" in r:
                row.append("failed")
                continue
            ms[m] = r.get("ms")
            cell = fmt_ms(ms[m])
            if r and not r.get("matches", True):
                cell += " (differs)"
            if m == "gpu" and r.get("engines"):
                cell += " (" + ", ".join(r["engines"]) + ")"
            row.append(cell)
        for l in labels:
            row.append(fmt_ms(ref_ms(ex, v, l)))
        if "interp" in modes and "cpu" in modes:
            a, b = ms.get("interp"), ms.get("cpu")
            row.append(f"{a / b:.1f}x" if a and b else "")
        if labels and fastest_cpu:
            cpu = min((ms[m] for m in fastest_cpu if ms.get(m)), default=None)
            ref = ref_ms(ex, v, labels[0])
            row.append(f"{cpu / ref:.2f}" if cpu and ref else "")
        if "gpu" in modes and labels:
            g, ref = ms.get("gpu"), ref_ms(ex, v, labels[0])
            row.append(f"{g / ref:.2f}" if g and ref else "")
        row += [fmt_ms(ex["compile"].get((v, m))) for m in compile_modes]
        rows.append(row)
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join(" --- " if i == 0 else " ---: " for i in range(len(head))) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def chart(ex, machine):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib is not installed (`pip install matplotlib`): no chart"
    labels = ref_labels(ex)
    series = [(HEADS[m].replace("`", ""), m) for m in ex["modes"]] + [(l, "ref:" + l) for l in labels]
    variants = ex["variants"]
    fig, ax = plt.subplots(figsize=(max(6, 1.6 * len(variants) * max(1, len(series)) / 3), 4.2))
    width = 0.8 / max(1, len(series))
    for k, (label, key) in enumerate(series):
        xs, ys = [], []
        for i, v in enumerate(variants):
            if key.startswith("ref:"):
                y = ref_ms(ex, v, key[4:])
            else:
                y = ex["results"].get((v, key), {}).get("ms")
            if y:
                xs.append(i + (k - (len(series) - 1) / 2) * width)
                ys.append(y)
        bars = ax.bar(xs, ys, width, label=label, hatch="//" if key.startswith("ref:") else None)
        for x, y in zip(xs, ys):
            ax.text(x, y * 1.08, fmt_ms(y), ha="center", va="bottom", fontsize=6, rotation=90)
        del bars
    ax.set_yscale("log")
    ax.set_ylabel("ms inside accelerate (log scale)")
    ax.set_xticks(range(len(variants)))
    ax.set_xticklabels(variants if len(variants) > 1 else [ex["name"]])
    ax.set_title(f"{ex['name']}: {machine}", fontsize=9)
    ax.legend(fontsize=7, ncol=min(4, len(series)), loc="upper center", bbox_to_anchor=(0.5, -0.1))
    ymax = max([b.get_height() for b in ax.patches] + [1])
    ax.set_ylim(top=ymax * 8)
    fig.tight_layout()
    out = os.path.join(EXAMPLES, ex["name"], "bench.png")
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return None


def machine():
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    gpu = ""
    if shutil.which("nvidia-smi"):
        r = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True, text=True)
        if r.returncode == 0 and r.stdout.strip():
            gpu = ", " + r.stdout.strip().splitlines()[0]
    return f"{cpu}, {os.cpu_count()} cores{gpu}"


def section(examples, machine_text, gpu, old):
    """The marked section of BENCHMARKS.md: each example's block between
    its own markers, so that a run of some examples keeps the others'."""
    blocks = dict(re.findall(r"<!-- case:(\S+) -->\n(.*?)<!-- /case:\1 -->", old, re.S))
    today = datetime.date.today().isoformat()
    for ex in examples:
        load = "load average {:.1f} before, {:.1f} after".format(*ex["load"])
        text = [f"### {ex['name']}", "",
                f"Measured {today} on {machine_text} ({load}); "
                f"ms inside the accelerate bindings (compilation excluded), best of the runs. "
                f"GPU: {'used' if gpu[0] else 'none usable (' + gpu[1] + ')'}.", "", table(ex), ""]
        for n in ex["notes"]:
            text.append(f"- {n}")
        if ex["notes"]:
            text.append("")
        text.append(f"![{ex['name']}](examples/{ex['name']}/bench.png)")
        text.append("")
        blocks[ex["name"]] = "\n".join(text) + "\n"
    body = [BEGIN, "", "Written by `python3 benches/cases.py`; do not edit by hand.", ""]
    for name in sorted(blocks):
        body.append(f"<!-- case:{name} -->\n{blocks[name]}<!-- /case:{name} -->")
        body.append("")
    body.append(END)
    return "\n".join(body)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pmx", help="the pmx binary (else $PMX, target/release/pmx, PATH)")
    ap.add_argument("--only", help="comma-separated example names")
    ap.add_argument("--modes", default=",".join(MODES), help="comma-separated modes to run (of those each bench.json lists)")
    ap.add_argument("--repeat", type=int, default=3, help="runs of each compiled mode after the compiling one")
    ap.add_argument("--timeout", type=int, default=1800, help="seconds per run")
    ap.add_argument("--no-write", action="store_true", help="print the tables; leave BENCHMARKS.md and the charts")
    a = ap.parse_args()
    pmx = find_pmx(a.pmx)
    runner = Runner(pmx, a.timeout)
    modes_wanted = [m for m in a.modes.split(",") if m]
    for m in modes_wanted:
        if m not in MODES:
            sys.exit(f"unknown mode {m} (modes: {', '.join(MODES)})")
    gpu = runner.gpu_usable() if "gpu" in modes_wanted else (False, "not asked for")
    print(f"pmx: {pmx}; GPU: {'usable' if gpu[0] else 'not usable: ' + gpu[1]}", file=sys.stderr)
    names = sorted(n for n in os.listdir(EXAMPLES) if os.path.isfile(os.path.join(EXAMPLES, n, "bench.json")))
    if a.only:
        wanted = a.only.split(",")
        missing = [w for w in wanted if w not in names]
        if missing:
            sys.exit(f"no examples/{missing[0]}/bench.json")
        names = [n for n in names if n in wanted]
    machine_text = machine()
    done = []
    for n in names:
        before = os.getloadavg()[0]
        ex = bench_example(n, runner, modes_wanted, a.repeat, gpu, a.timeout)
        ex["load"] = (before, os.getloadavg()[0])
        done.append(ex)
        print(f"\n{n}\n{table(ex)}", flush=True)
        for note in ex["notes"]:
            print(f"- {note}")
        if not a.no_write:
            why = chart(ex, machine_text)
            if why:
                print(f"({why})", file=sys.stderr)
    shutil.rmtree(runner.cache, ignore_errors=True)
    if a.no_write:
        return
    with open(BENCHMARKS) as f:
        text = f.read()
    old = text[text.index(BEGIN):text.index(END) + len(END)] if BEGIN in text and END in text else ""
    new = section(done, machine_text, gpu, old)
    if old:
        text = text.replace(old, new)
    else:
        text = text.rstrip("\n") + "\n\n## Case studies (issue 15)\n\n" + new + "\n"
    with open(BENCHMARKS, "w") as f:
        f.write(text)
    print(f"\nwrote {os.path.relpath(BENCHMARKS)}", file=sys.stderr)


if __name__ == "__main__":
    main()
