#!/usr/bin/env bash
# The GPU checks, on a machine with a CUDA GPU and NVIDIA's driver but no
# Rust toolchain: every CUDA-class (and, with Futhark, Futhark-class) test
# program with `--target gpu` against debug mode, the GPU benchmarks and
# the examples. It runs binaries built on another machine:
#
#   cargo build --release
#   cargo test --release --test cuda --test futhark --test examples --no-run
#   benches/gpu_check.sh --pack      # copies the binaries, stripped, to .dev/
#
# then, on the GPU machine, in a copy of the repository holding .dev/:
#
#   benches/gpu_check.sh [OUT]       # logs and a summary in OUT (default /tmp/gpu-check)
#
# GPU time is scarce, so the steps run most important first (CUDA
# results on the device, kernel timings, where whole runs go, then the
# rest against debug mode) and share a
# budget (GPU_CHECK_BUDGET seconds, default 300): each gets at most what
# is left, and a step with under 20 s left is skipped (said in the summary).
#
# The test binaries were built with the repository at /work/main (their
# paths are compiled in), so the copy is linked there when it lies elsewhere.
# NVRTC 12 or 13 is found as pmx finds it (CUDA toolkit, Python's nvidia
# packages, PMX_NVRTC); futhark is taken from .dev/futhark when present.
set -u
cd "$(dirname "$0")/.."
ROOT=$(pwd)

if [ "${1:-}" = "--pack" ]; then
  mkdir -p .dev
  cp target/release/pmx .dev/pmx
  # The futhark found here, compressed, for the GPU machine's Futhark tests.
  # The file itself, not a link to it (futhark is often a link on PATH),
  # with the shared libraries it needs beside glibc's in lib/, found through
  # its run path (patchelf), so that the compilers it runs keep the GPU
  # machine's own libraries: that machine may lack libcmark-gfm, say.
  if f=$(command -v "${PMX_FUTHARK:-futhark}"); then
    f=$(readlink -f "$f")
    fdir=$(mktemp -d)
    mkdir -p "$fdir/lib"
    cp "$f" "$fdir/futhark"
    ldd "$f" | awk '/=> \// {print $3}' | grep -vE '/(libc|libm|libdl|librt|libpthread|ld-linux[^/]*)\.so' |
      while read -r lib; do cp -L "$lib" "$fdir/lib/"; done
    if command -v patchelf >/dev/null; then
      patchelf --set-rpath '$ORIGIN/lib' "$fdir/futhark"
    else
      echo "note: no patchelf: futhark packed without its libraries" >&2
      rm -r "$fdir/lib"
    fi
    tar -cJf .dev/futhark.tar.xz -C "$fdir" .
    rm -r "$fdir"
  fi
  for t in cuda futhark examples; do
    bin=$(ls -t target/release/deps/$t-* 2>/dev/null | grep -v '\.d$' | head -1)
    [ -n "$bin" ] && cp "$bin" ".dev/test-$t"
  done
  strip .dev/pmx .dev/test-* 2>/dev/null
  ls -la .dev
  exit 0
fi

OUT=${1:-/tmp/gpu-check}
mkdir -p "$OUT"
SUMMARY="$OUT/summary.txt"
: >"$SUMMARY"
say() { echo "$*" | tee -a "$SUMMARY"; }
BUDGET=${GPU_CHECK_BUDGET:-300}
# Seconds left for a step, at most $1; 0 when it should be skipped.
left() {
  local rest=$((BUDGET - SECONDS))
  if [ "$rest" -lt 20 ]; then echo 0; elif [ "$rest" -lt "$1" ]; then echo "$rest"; else echo "$1"; fi
}

if [ "$ROOT" != /work/main ]; then
  mkdir -p /work
  [ -e /work/main ] || ln -s "$ROOT" /work/main
fi
mkdir -p target/release
cp .dev/pmx target/release/pmx
export PMX="$ROOT/target/release/pmx"
export PMX_CACHE_DIR="${PMX_CACHE_DIR:-/tmp/pmx-gpu-cache}"
if [ -f .dev/futhark.tar.xz ] && [ ! -x .dev/futhark ]; then
  tar -xJf .dev/futhark.tar.xz -C .dev
fi
if [ -x .dev/futhark ]; then
  export PMX_FUTHARK="$ROOT/.dev/futhark"
fi
NVCC=$(command -v nvcc || ls /usr/local/cuda/bin/nvcc 2>/dev/null)
[ -n "$NVCC" ] && export PMX_NVCC="$NVCC"

# Steps named in GPU_CHECK_SKIP (cuda cases split futhark examples bench)
# are left out, for a second run that repeats only some.
skip() {
  case " ${GPU_CHECK_SKIP:-} " in *" $1 "*) say "== $1: skipped (GPU_CHECK_SKIP)"; return 0 ;; esac
  return 1
}

say "== device"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | tee -a "$SUMMARY"
say "nvcc: ${NVCC:-none}"
"$PMX" run --target gpu --verbose examples/axpy.mc >"$OUT/axpy.out" 2>&1
say "axpy --target gpu: exit $? ($(head -c 300 "$OUT/axpy.out" | tr '\n' ' '))"

run_test() { # binary, filter, log, seconds
  local t; t=$(left "$4")
  say "== $1 $2 ${SYNC:+(PMX_CUDA_SYNC=1) }(at ${SECONDS}s, up to ${t}s)"
  [ "$t" = 0 ] && { say "skipped: out of time"; return 1; }
  timeout "$t" env ${SYNC:+PMX_CUDA_SYNC=1} ".dev/test-$1" --ignored --nocapture "$2" >"$OUT/$3.log" 2>&1
  local code=$?
  say "exit $code: $(grep -E '^(gpu|futhark-gpu|examples-gpu):|test result' "$OUT/$3.log" | tr '\n' ' ')"
  return $code
}

# Launches are queued on a device with concurrent managed access; should
# that fail, the same test with a wait after each launch tells whether
# the queue is the cause.
skip cuda || run_test cuda on_a_gpu cuda-gpu 90 || SYNC=1 run_test cuda on_a_gpu cuda-gpu-sync 90

skip cases || {
t=$(left 150)
say "== benches/gpu_cases.py: the case studies' kernels against hand-written CUDA (at ${SECONDS}s, up to ${t}s)"
if [ "$t" != 0 ]; then
  timeout "$t" python3 benches/gpu_cases.py --runs 2 >"$OUT/gpu-cases.log" 2>&1
  say "exit $?"
  tail -25 "$OUT/gpu-cases.log" | tee -a "$SUMMARY"
else say "skipped: out of time"; fi
}

skip split || {
t=$(left 150)
say "== benches/split.py: where each example's whole run goes, --target gpu and cpu (at ${SECONDS}s, up to ${t}s)"
if [ "$t" != 0 ]; then
  timeout "$t" python3 benches/split.py --first --timeout 40 --args 'cnn=1 10000 100 0.05 297' --examples matmul,viterbi,ode,nn,kernels,cnn >"$OUT/split.log" 2>&1
  say "exit $?"
  cat "$OUT/split.log" >>"$SUMMARY"
else say "skipped: out of time"; fi
}

skip futhark || [ ! -x .dev/test-futhark ] || [ -z "${PMX_FUTHARK:-}" ] || run_test futhark on_a_gpu futhark-gpu 120


skip examples || {
say "== examples: pmx test --target gpu against --debug (default sizes; at ${SECONDS}s)"
for main in examples/*/main.mc; do
  t=$(left 60)
  [ "$t" = 0 ] && { say "$main: skipped: out of time"; continue; }
  d=$(timeout "$t" "$PMX" test --debug --color=never "$main" 2>"$OUT/ex-debug.err")
  t=$(left 60)
  g=$(timeout "$t" "$PMX" test --target gpu --color=never "$main" 2>"$OUT/ex-gpu.err")
  code=$?
  if [ "$d" = "$g" ] && [ $code = 0 ]; then say "$main: same output"; else
    say "$main: DIFFERS (exit $code): $(tail -c 400 "$OUT/ex-gpu.err" | tr '\n' ' ')"
  fi
done
}
skip bench || {
t=$(left 90)
say "== benches/gpu.py (at ${SECONDS}s, up to ${t}s)"
if [ "$t" != 0 ]; then
  timeout "$t" python3 benches/gpu.py >"$OUT/bench-gpu.log" 2>&1
  say "exit $?"
  tail -14 "$OUT/bench-gpu.log" | tee -a "$SUMMARY"
else say "skipped: out of time"; fi
}
say "== done at ${SECONDS}s"
