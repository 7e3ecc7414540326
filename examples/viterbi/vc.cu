/* Hand-written CUDA baseline of examples/viterbi/vc.mc: the same Viterbi
   decoding of the same model and signals, with the same data layout
   (64-bit floats and integers, row-major: preds and logTrans [S][NP],
   logEmit [S][L], logInit [S], obs [N][T], scores v [N][2][S],
   backpointers bp [N][T][S], paths [N][T]) and the same kernels as pmx
   generates for vcRun:

     vit_first   one thread per (sequence, state): the scores of signal 0
     vit_step    one launch per signal t = 1 .. T-1, one thread per
                 (sequence, state): the best predecessor (the first of
                 equal scores) and the new score
     vit_back    one thread per sequence: the best last state, then the
                 backpointers back to t = 0

   It reads the model and signals that pmx's example writes
   (`pmx run examples/viterbi/main.mc N SIGNALS none FILE`, format in
   examples/viterbi/README.md), decodes them REPS times after a warm-up
   and prints (`name value` lines):

     kernel_ms         median over the runs of the whole decode (1 + (T-1) + 1
                       launches one after another on one stream), CUDA events
                       around it
     kernel_ms_synced  median of the sum of each launch's own event time, the
                       host waiting after each launch: how pmx's `--profile`
                       measures its `kernels` column
     fused_ms          median of another decomposition, for comparison: one
                       block per sequence, one thread per state, all signals in
                       one launch (scores in shared memory, __syncthreads()
                       between signals), thread 0 backtracking
     checksum          the paths' checksum as main.mc prints it (each state
                       times 1 + its position mod 101, summed)
     fused_checksum    the same for the fused kernel

   Build and run (benches/gpu_cases.py does both):

     nvcc -O3 -arch=native examples/viterbi/vc.cu -o vc
     ./vc FILE [REPS]                                   (REPS = 5) */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <vector>

#define CHECK(x)                                                                 \
  do {                                                                           \
    cudaError_t e_ = (x);                                                        \
    if (e_ != cudaSuccess) {                                                     \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x,                 \
              cudaGetErrorString(e_));                                           \
      exit(1);                                                                   \
    }                                                                            \
  } while (0)

// The most states the fused kernel takes (one thread each).
#define FUSED_MAX_STATES 1024

__global__ void vit_first(int64_t N, int64_t S, int64_t L, int64_t T, const double *__restrict__ logInit,
                          const double *__restrict__ logEmit, const int64_t *__restrict__ obs,
                          double *__restrict__ v) {
  int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= N * S) return;
  int64_t i = idx / S, s = idx % S;
  int64_t o = obs[i * T];
  v[i * 2 * S + s] = logInit[s] + logEmit[s * L + o];
}

__global__ void vit_step(int64_t t, int64_t N, int64_t S, int64_t NP, int64_t L, int64_t T,
                         const int64_t *__restrict__ preds, const double *__restrict__ logTrans,
                         const double *__restrict__ logEmit, const int64_t *__restrict__ obs,
                         double *__restrict__ v, int64_t *__restrict__ bp) {
  int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= N * S) return;
  int64_t i = idx / S, s = idx % S;
  const double *prev = v + (i * 2 + (t - 1) % 2) * S;
  double best = -1e300;
  int64_t arg = 0;
  for (int64_t j = 0; j < NP; j++) {
    int64_t p = preds[s * NP + j];
    double x = prev[p] + logTrans[s * NP + j];
    if (x > best) {
      best = x;
      arg = p;
    }
  }
  v[(i * 2 + t % 2) * S + s] = best + logEmit[s * L + obs[i * T + t]];
  bp[(i * T + t) * S + s] = arg;
}

// Sequence i's path: the best final state in `score` (the first of equal
// ones), then back through the back pointers.
__device__ void vit_backtrack(int64_t i, int64_t S, int64_t T, const double *score, const int64_t *__restrict__ bp,
                              int64_t *__restrict__ path) {
  int64_t last = T - 1;
  int64_t b = 0;
  double bv = score[0];
  for (int64_t s = 1; s < S; s++)
    if (score[s] > bv) {
      bv = score[s];
      b = s;
    }
  path[i * T + last] = b;
  for (int64_t t = last; t > 0; t--) {
    b = bp[(i * T + t) * S + b];
    path[i * T + t - 1] = b;
  }
}

__global__ void vit_back(int64_t N, int64_t S, int64_t T, const double *__restrict__ v,
                         const int64_t *__restrict__ bp, int64_t *__restrict__ path) {
  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= N) return;
  vit_backtrack(i, S, T, v + (i * 2 + (T - 1) % 2) * S, bp, path);
}

// Block i decodes sequence i; thread s is state s (blockDim.x >= S).
__global__ void vit_fused(int64_t N, int64_t S, int64_t NP, int64_t L, int64_t T, const int64_t *__restrict__ preds,
                          const double *__restrict__ logTrans, const double *__restrict__ logEmit,
                          const double *__restrict__ logInit, const int64_t *__restrict__ obs,
                          double *__restrict__ v, int64_t *__restrict__ bp, int64_t *__restrict__ path) {
  __shared__ double sv[2][FUSED_MAX_STATES];
  int64_t i = blockIdx.x;
  int64_t s = threadIdx.x;
  bool active = s < S;
  const int64_t *o = obs + i * T;
  if (active) sv[0][s] = logInit[s] + logEmit[s * L + o[0]];
  __syncthreads();
  for (int64_t t = 1; t < T; t++) {
    if (active) {
      const double *prev = sv[(t - 1) % 2];
      double best = -1e300;
      int64_t arg = 0;
      for (int64_t j = 0; j < NP; j++) {
        int64_t p = preds[s * NP + j];
        double x = prev[p] + logTrans[s * NP + j];
        if (x > best) {
          best = x;
          arg = p;
        }
      }
      sv[t % 2][s] = best + logEmit[s * L + o[t]];
      bp[(i * T + t) * S + s] = arg;
    }
    __syncthreads();
  }
  // The scores end in v as vcRun leaves them (both slots once T >= 2).
  if (active) {
    v[(i * 2 + (T - 1) % 2) * S + s] = sv[(T - 1) % 2][s];
    if (T >= 2) v[(i * 2 + T % 2) * S + s] = sv[T % 2][s];
  }
  if (s == 0) vit_backtrack(i, S, T, sv[(T - 1) % 2], bp, path);
}

// ---- Input -------------------------------------------------------------

struct Input {
  int64_t S, NP, L, N, T;
  std::vector<int64_t> preds, obs;
  std::vector<double> logTrans, logEmit, logInit;
};

static char *text;
static char *cursor;

static void fail(const char *what) {
  long at = (long)(cursor - text);
  fprintf(stderr, "vc: bad input at byte %ld: expected %s\n", at, what);
  exit(1);
}
static void expect_word(const char *w) {
  while (*cursor == ' ' || *cursor == '\n' || *cursor == '\t' || *cursor == '\r') cursor++;
  size_t n = strlen(w);
  char next = cursor[n];
  if (strncmp(cursor, w, n) != 0 || (next != ' ' && next != '\n' && next != '\r' && next != 0)) fail(w);
  cursor += n;
}
static int64_t read_int() {
  char *end;
  long long x = strtoll(cursor, &end, 10);
  if (end == cursor) fail("an integer");
  cursor = end;
  return (int64_t)x;
}
// A C99 hexadecimal float ([-]0xMp[+-]E), exact.
static double read_float() {
  char *end;
  double x = strtod(cursor, &end);
  if (end == cursor) fail("a hexadecimal float");
  cursor = end;
  return x;
}

static Input read_input(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "vc: cannot open %s\n", path);
    exit(1);
  }
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  text = (char *)malloc(size + 1);
  if (fread(text, 1, size, f) != (size_t)size) {
    fprintf(stderr, "vc: cannot read %s\n", path);
    exit(1);
  }
  text[size] = 0;
  fclose(f);
  cursor = text;
  Input in;
  expect_word("pmx-viterbi");
  if (read_int() != 1) fail("format version 1");
  expect_word("states");
  in.S = read_int();
  expect_word("preds");
  in.NP = read_int();
  expect_word("levels");
  in.L = read_int();
  expect_word("sequences");
  in.N = read_int();
  expect_word("signals");
  in.T = read_int();
  if (in.S < 1 || in.NP < 1 || in.L < 1 || in.N < 1 || in.T < 1) fail("positive sizes");
  expect_word("preds");
  for (int64_t k = 0; k < in.S * in.NP; k++) {
    int64_t p = read_int();
    if (p < 0 || p >= in.S) fail("a state");
    in.preds.push_back(p);
  }
  expect_word("logTrans");
  for (int64_t k = 0; k < in.S * in.NP; k++) in.logTrans.push_back(read_float());
  expect_word("logEmit");
  for (int64_t k = 0; k < in.S * in.L; k++) in.logEmit.push_back(read_float());
  expect_word("logInit");
  for (int64_t k = 0; k < in.S; k++) in.logInit.push_back(read_float());
  expect_word("obs");
  for (int64_t k = 0; k < in.N * in.T; k++) {
    int64_t o = read_int();
    if (o < 0 || o >= in.L) fail("a signal level");
    in.obs.push_back(o);
  }
  expect_word("end");
  free(text);
  return in;
}

// ---- Decoding ----------------------------------------------------------

struct Device {
  int64_t *preds, *obs, *bp, *path;
  double *logTrans, *logEmit, *logInit, *v;
};

template <typename T> static T *upload(const std::vector<T> &h) {
  T *d;
  CHECK(cudaMalloc(&d, h.size() * sizeof(T)));
  CHECK(cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}

static const int TPB = 256;

static int blocks(int64_t n) { return (int)((n + TPB - 1) / TPB); }

// The decode as pmx runs it: first, the steps, back, one after another.
// With `each` (two events per launch, recorded around it), waits after
// every launch and returns the sum of the launches' times.
static float decode(const Input &in, const Device &d, cudaEvent_t *each) {
  int64_t m = in.N * in.S;
  float sum = 0;
  auto timed = [&](auto launch) {
    if (each) CHECK(cudaEventRecord(each[0]));
    launch();
    CHECK(cudaGetLastError());
    if (each) {
      CHECK(cudaEventRecord(each[1]));
      CHECK(cudaEventSynchronize(each[1]));
      float ms;
      CHECK(cudaEventElapsedTime(&ms, each[0], each[1]));
      sum += ms;
    }
  };
  timed([&] { vit_first<<<blocks(m), TPB>>>(in.N, in.S, in.L, in.T, d.logInit, d.logEmit, d.obs, d.v); });
  for (int64_t t = 1; t < in.T; t++)
    timed([&] {
      vit_step<<<blocks(m), TPB>>>(t, in.N, in.S, in.NP, in.L, in.T, d.preds, d.logTrans, d.logEmit, d.obs, d.v,
                                   d.bp);
    });
  timed([&] { vit_back<<<blocks(in.N), TPB>>>(in.N, in.S, in.T, d.v, d.bp, d.path); });
  return sum;
}

static void decode_fused(const Input &in, const Device &d) {
  int threads = (int)((in.S + 31) / 32 * 32);
  vit_fused<<<(unsigned)in.N, threads>>>(in.N, in.S, in.NP, in.L, in.T, d.preds, d.logTrans, d.logEmit, d.logInit,
                                         d.obs, d.v, d.bp, d.path);
  CHECK(cudaGetLastError());
}

static int64_t checksum(const Input &in, const Device &d) {
  std::vector<int64_t> path(in.N * in.T);
  CHECK(cudaMemcpy(path.data(), d.path, path.size() * sizeof(int64_t), cudaMemcpyDeviceToHost));
  int64_t sum = 0;
  for (int64_t i = 0; i < in.N; i++)
    for (int64_t t = 0; t < in.T; t++) {
      int64_t s = path[i * in.T + t];
      if (s < 0 || s >= in.S) {
        fprintf(stderr, "vc: path[%lld][%lld] = %lld is no state\n", (long long)i, (long long)t, (long long)s);
        exit(1);
      }
      sum += s * (1 + t % 101);
    }
  return sum;
}

static float median(std::vector<float> xs) {
  std::sort(xs.begin(), xs.end());
  size_t n = xs.size();
  return n % 2 ? xs[n / 2] : (xs[n / 2 - 1] + xs[n / 2]) / 2;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: vc FILE [REPS]   (FILE: pmx run examples/viterbi/main.mc N SIGNALS none FILE)\n");
    return 2;
  }
  int reps = argc > 2 ? atoi(argv[2]) : 5;
  if (reps < 1) reps = 1;
  Input in = read_input(argv[1]);
  if (in.S > FUSED_MAX_STATES) {
    fprintf(stderr, "vc: at most %d states\n", FUSED_MAX_STATES);
    return 1;
  }
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  printf("device %s\n", prop.name);
  printf("sequences %lld signals %lld states %lld\n", (long long)in.N, (long long)in.T, (long long)in.S);

  Device d;
  d.preds = upload(in.preds);
  d.obs = upload(in.obs);
  d.logTrans = upload(in.logTrans);
  d.logEmit = upload(in.logEmit);
  d.logInit = upload(in.logInit);
  CHECK(cudaMalloc(&d.v, in.N * 2 * in.S * sizeof(double)));
  CHECK(cudaMemset(d.v, 0, in.N * 2 * in.S * sizeof(double)));
  CHECK(cudaMalloc(&d.bp, in.N * in.T * in.S * sizeof(int64_t)));
  CHECK(cudaMalloc(&d.path, in.N * in.T * sizeof(int64_t)));

  cudaEvent_t ev[2];
  CHECK(cudaEventCreate(&ev[0]));
  CHECK(cudaEventCreate(&ev[1]));

  // Whole decode, launches back to back.
  decode(in, d, nullptr);  // warm-up: loads the module, touches the memory
  CHECK(cudaDeviceSynchronize());
  std::vector<float> whole;
  for (int r = 0; r < reps; r++) {
    CHECK(cudaEventRecord(ev[0]));
    decode(in, d, nullptr);
    CHECK(cudaEventRecord(ev[1]));
    CHECK(cudaEventSynchronize(ev[1]));
    float ms;
    CHECK(cudaEventElapsedTime(&ms, ev[0], ev[1]));
    whole.push_back(ms);
  }
  int64_t sum = checksum(in, d);

  // Each launch timed on its own, waiting after each (pmx's measure).
  std::vector<float> synced;
  for (int r = 0; r < reps; r++) synced.push_back(decode(in, d, ev));
  int64_t sum_synced = checksum(in, d);

  // The fused kernel.
  CHECK(cudaMemset(d.path, 0xff, in.N * in.T * sizeof(int64_t)));
  decode_fused(in, d);
  CHECK(cudaDeviceSynchronize());
  std::vector<float> fused;
  for (int r = 0; r < reps; r++) {
    CHECK(cudaEventRecord(ev[0]));
    decode_fused(in, d);
    CHECK(cudaEventRecord(ev[1]));
    CHECK(cudaEventSynchronize(ev[1]));
    float ms;
    CHECK(cudaEventElapsedTime(&ms, ev[0], ev[1]));
    fused.push_back(ms);
  }
  int64_t sum_fused = checksum(in, d);

  if (sum_synced != sum) {
    fprintf(stderr, "vc: the timed-per-launch decode gave checksum %lld, the first %lld\n", (long long)sum_synced,
            (long long)sum);
    return 1;
  }
  printf("kernel_ms %.4f\n", median(whole));
  printf("kernel_ms_synced %.4f\n", median(synced));
  printf("fused_ms %.4f\n", median(fused));
  printf("checksum %lld\n", (long long)sum);
  printf("fused_checksum %lld\n", (long long)sum_fused);
  return 0;
}
