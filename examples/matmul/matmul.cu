/* Hand-written CUDA baseline of examples/matmul's naive CUDA-class
   version `c` (mmc.mc, mmcNaive): C = A B for n x n matrices of 64-bit
   floats, row-major, on the matrices of data.mc (the same formulas:
   A[i][j] = ((3i + 5j) mod 17 - 8) / 8, B[i][j] = ((7i + 2j) mod 13 - 6) / 16;
   every sum is exact, so any order of addition gives the same C).

     mm_naive   one thread per cell of C (blocks of 32 x 8 threads, a warp
                along a row of C), a sequential dot product of a row of A
                and a column of B: the computation and decomposition of `c`
     mm_tiled   for comparison: the textbook shared-memory version (16 x 16
                tiles of A and B staged in shared memory), what a CUDA
                programmer would write next

   Prints (`name value` lines) the median kernel time of REPS launches
   after a warm-up (CUDA events around each launch) and the checksum that
   main.mc prints (sum of C[i][j] * ((2i + j) mod 5)), as a 17-digit float:

     kernel_ms, checksum, corner (C[n-1][n-1]), tiled_ms, tiled_checksum

   Build and run (benches/gpu_cases.py does both):

     nvcc -O3 -arch=native examples/matmul/matmul.cu -o matmul
     ./matmul [N] [REPS]                               (N = 1024, REPS = 10) */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

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

__global__ void mm_naive(int64_t n, const double *__restrict__ a, const double *__restrict__ b,
                         double *__restrict__ c) {
  int64_t j = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  int64_t i = (int64_t)blockIdx.y * blockDim.y + threadIdx.y;
  if (i >= n || j >= n) return;
  double acc = 0.0;
  for (int64_t l = 0; l < n; l++) acc += a[i * n + l] * b[l * n + j];
  c[i * n + j] = acc;
}

#define TILE 16

__global__ void mm_tiled(int64_t n, const double *__restrict__ a, const double *__restrict__ b,
                         double *__restrict__ c) {
  __shared__ double ta[TILE][TILE];
  __shared__ double tb[TILE][TILE];
  int tx = threadIdx.x, ty = threadIdx.y;
  int64_t j = (int64_t)blockIdx.x * TILE + tx;
  int64_t i = (int64_t)blockIdx.y * TILE + ty;
  double acc = 0.0;
  for (int64_t l0 = 0; l0 < n; l0 += TILE) {
    ta[ty][tx] = (i < n && l0 + tx < n) ? a[i * n + l0 + tx] : 0.0;
    tb[ty][tx] = (l0 + ty < n && j < n) ? b[(l0 + ty) * n + j] : 0.0;
    __syncthreads();
    for (int k = 0; k < TILE; k++) acc += ta[ty][k] * tb[k][tx];
    __syncthreads();
  }
  if (i < n && j < n) c[i * n + j] = acc;
}

static float median(std::vector<float> xs) {
  std::sort(xs.begin(), xs.end());
  size_t m = xs.size();
  return m % 2 ? xs[m / 2] : (xs[m / 2 - 1] + xs[m / 2]) / 2;
}

// The checksum of main.mc (data.mc's mmChecksum), in its order.
static double checksum(const std::vector<double> &c, int64_t n) {
  double acc = 0.0;
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = 0; j < n; j++) acc += c[i * n + j] * (double)((2 * i + j) % 5);
  return acc;
}

template <typename Launch>
static float timed_median(int reps, Launch launch) {
  cudaEvent_t t0, t1;
  CHECK(cudaEventCreate(&t0));
  CHECK(cudaEventCreate(&t1));
  launch();  // warm-up
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  std::vector<float> ms;
  for (int r = 0; r < reps; r++) {
    CHECK(cudaEventRecord(t0));
    launch();
    CHECK(cudaEventRecord(t1));
    CHECK(cudaEventSynchronize(t1));
    CHECK(cudaGetLastError());
    float x;
    CHECK(cudaEventElapsedTime(&x, t0, t1));
    ms.push_back(x);
  }
  CHECK(cudaEventDestroy(t0));
  CHECK(cudaEventDestroy(t1));
  return median(ms);
}

int main(int argc, char **argv) {
  int64_t n = argc > 1 ? atoll(argv[1]) : 1024;
  int reps = argc > 2 ? atoi(argv[2]) : 10;
  if (n < 1 || reps < 1) {
    fprintf(stderr, "usage: matmul [N] [REPS]\n");
    return 2;
  }
  size_t bytes = (size_t)(n * n) * sizeof(double);
  std::vector<double> a(n * n), b(n * n), c(n * n);
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = 0; j < n; j++) {
      a[i * n + j] = (double)((3 * i + 5 * j) % 17 - 8) / 8.0;
      b[i * n + j] = (double)((7 * i + 2 * j) % 13 - 6) / 16.0;
    }
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  printf("device %s\n", prop.name);
  printf("n %lld\n", (long long)n);
  double *da, *db, *dc;
  CHECK(cudaMalloc(&da, bytes));
  CHECK(cudaMalloc(&db, bytes));
  CHECK(cudaMalloc(&dc, bytes));
  CHECK(cudaMemcpy(da, a.data(), bytes, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(db, b.data(), bytes, cudaMemcpyHostToDevice));

  dim3 nb(32, 8);
  dim3 ng((unsigned)((n + 31) / 32), (unsigned)((n + 7) / 8));
  CHECK(cudaMemset(dc, 0, bytes));
  float naive = timed_median(reps, [&] { mm_naive<<<ng, nb>>>(n, da, db, dc); });
  CHECK(cudaMemcpy(c.data(), dc, bytes, cudaMemcpyDeviceToHost));
  double sum = checksum(c, n);
  double corner = c[n * n - 1];

  dim3 tb(TILE, TILE);
  dim3 tg((unsigned)((n + TILE - 1) / TILE), (unsigned)((n + TILE - 1) / TILE));
  CHECK(cudaMemset(dc, 0, bytes));
  float tiled = timed_median(reps, [&] { mm_tiled<<<tg, tb>>>(n, da, db, dc); });
  CHECK(cudaMemcpy(c.data(), dc, bytes, cudaMemcpyDeviceToHost));
  double tiled_sum = checksum(c, n);

  printf("kernel_ms %.4f\n", naive);
  printf("checksum %.17g\n", sum);
  printf("corner %.17g\n", corner);
  printf("tiled_ms %.4f\n", tiled);
  printf("tiled_checksum %.17g\n", tiled_sum);
  return 0;
}
