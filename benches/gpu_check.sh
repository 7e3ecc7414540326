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
  f=$(command -v "${PMX_FUTHARK:-futhark}") && tar -cJf .dev/futhark.tar.xz -C "$(dirname "$f")" "$(basename "$f")"
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

say "== device"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | tee -a "$SUMMARY"
say "nvcc: ${NVCC:-none}"
"$PMX" run --target gpu --verbose examples/axpy.mc >"$OUT/axpy.out" 2>&1
say "axpy --target gpu: exit $? ($(head -c 300 "$OUT/axpy.out" | tr '\n' ' '))"

run_test() { # binary, filter, log
  say "== $1 $2"
  timeout 300 ".dev/test-$1" --ignored --nocapture "$2" >"$OUT/$3.log" 2>&1
  say "exit $?: $(grep -E '^(gpu|futhark-gpu|examples-gpu):|test result' "$OUT/$3.log" | tr '\n' ' ')"
}
run_test cuda on_a_gpu cuda-gpu
[ -x .dev/test-futhark ] && [ -n "${PMX_FUTHARK:-}" ] && run_test futhark on_a_gpu futhark-gpu


say "== benches/gpu.py"
timeout 300 python3 benches/gpu.py >"$OUT/bench-gpu.log" 2>&1
say "exit $?"
tail -12 "$OUT/bench-gpu.log" | tee -a "$SUMMARY"

say "== examples: pmx test --target gpu against --debug (default sizes)"
for main in examples/*/main.mc; do
  d=$(timeout 300 "$PMX" test --debug --color=never "$main" 2>"$OUT/ex-debug.err")
  g=$(timeout 300 "$PMX" test --target gpu --color=never "$main" 2>"$OUT/ex-gpu.err")
  code=$?
  if [ "$d" = "$g" ] && [ $code = 0 ]; then say "$main: same output"; else
    say "$main: DIFFERS (exit $code): $(tail -c 400 "$OUT/ex-gpu.err" | tr '\n' ' ')"
  fi
done
