#!/usr/bin/env bash
# Time inside the bindings of the examples' Futhark- and CUDA-class code
# (`pmx run --target cpu --profile`, the bindings' times summed) with two
# pmx binaries, runs alternating, median and best of RUNS (default 7), so
# that a change to generated code can be measured against the tree before
# it on the same machine at the same time:
#
#   benches/before_after.sh OLD_PMX NEW_PMX [RUNS]
#
# (build the older tree with `git worktree add /tmp/old COMMIT` and `cargo
# build --release` there). Each program runs once first, to compile.
set -u
old=${1:?usage: benches/before_after.sh OLD_PMX NEW_PMX [RUNS]}
new=${2:?usage: benches/before_after.sh OLD_PMX NEW_PMX [RUNS]}
runs=${3:-7}
cd "$(dirname "$0")/../examples"
inside() { "$1" run --target cpu --profile "${@:2}" 2>&1 >/dev/null | awk '/^accelerate/ && $4 > 0.001 {s += $4} END {print s}'; }
for v in "viterbi/main.mc 10 20000 vf" "matmul/main.mc 512 f" "matmul/main.mc 512 g" "viterbi/main.mc 10 20000 vc" "matmul/main.mc 512 c"; do
  # shellcheck disable=SC2086
  { "$old" run --target cpu $v; "$new" run --target cpu $v; } >/dev/null 2>&1
  o=""; n=""
  for _ in $(seq "$runs"); do
    # shellcheck disable=SC2086
    o="$o $(inside "$old" $v)"; n="$n $(inside "$new" $v)"
  done
  python3 - "$v" "$o" "$n" <<'PY'
import statistics as st, sys
v, o, n = sys.argv[1], [float(x) for x in sys.argv[2].split()], [float(x) for x in sys.argv[3].split()]
print(f"{v}: before best {min(o):.2f} median {st.median(o):.2f} ms | now best {min(n):.2f} median {st.median(n):.2f} ms"
      f" | now / before {st.median(n) / st.median(o):.2f}")
PY
done
