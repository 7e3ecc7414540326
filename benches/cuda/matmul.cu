/* The hand-written CUDA baseline of benches/cuda/matmul.mc on a GPU: the
   same computation (one thread per cell of C, a sequential dot product
   over the shared dimension, doubles, row-major), launched with the
   block size pmx uses. It also measures host-device copy bandwidth with
   cudaMemcpy (pinned and pageable host memory), the yardstick for pmx's
   copies. Run by benches/gpu.py; prints `name value` lines. */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(x)                                                                 \
  do {                                                                           \
    cudaError_t e = (x);                                                         \
    if (e != cudaSuccess) {                                                      \
      fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e));                    \
      exit(1);                                                                   \
    }                                                                            \
  } while (0)

__global__ void matmul(int64_t n, const double *a, const double *b, double *c) {
  int64_t k = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= n * n) return;
  int64_t i = k / n, j = k % n;
  double acc = 0.0;
  for (int64_t l = 0; l < n; l++) acc += a[i * n + l] * b[l * n + j];
  c[i * n + j] = acc;
}

/* Best of `reps` copies of `bytes` from `src` to `dst`, in GB/s. */
static double bandwidth(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind, int reps) {
  cudaEvent_t t0, t1;
  CHECK(cudaEventCreate(&t0));
  CHECK(cudaEventCreate(&t1));
  float best = 1e30f;
  for (int r = 0; r < reps; r++) {
    CHECK(cudaEventRecord(t0));
    CHECK(cudaMemcpy(dst, src, bytes, kind));
    CHECK(cudaEventRecord(t1));
    CHECK(cudaEventSynchronize(t1));
    float ms;
    CHECK(cudaEventElapsedTime(&ms, t0, t1));
    if (ms < best) best = ms;
  }
  return bytes / (best * 1e-3) / 1e9;
}

int main(void) {
  const int64_t n = 512;
  size_t bytes = n * n * sizeof(double);
  double *a = (double *)malloc(bytes), *b = (double *)malloc(bytes), *c = (double *)malloc(bytes);
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = 0; j < n; j++) {
      a[i * n + j] = (double)((i + j) % 7);
      b[i * n + j] = (double)((i * j) % 5);
    }
  double *da, *db, *dc;
  CHECK(cudaMalloc(&da, bytes));
  CHECK(cudaMalloc(&db, bytes));
  CHECK(cudaMalloc(&dc, bytes));
  CHECK(cudaMemcpy(da, a, bytes, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(db, b, bytes, cudaMemcpyHostToDevice));
  cudaEvent_t t0, t1;
  CHECK(cudaEventCreate(&t0));
  CHECK(cudaEventCreate(&t1));
  int tpb = 256;
  int blocks = (int)((n * n + tpb - 1) / tpb);
  float best = 1e30f;
  for (int r = 0; r < 10; r++) {
    CHECK(cudaEventRecord(t0));
    matmul<<<blocks, tpb>>>(n, da, db, dc);
    CHECK(cudaEventRecord(t1));
    CHECK(cudaEventSynchronize(t1));
    CHECK(cudaGetLastError());
    float ms;
    CHECK(cudaEventElapsedTime(&ms, t0, t1));
    if (ms < best) best = ms;
  }
  CHECK(cudaMemcpy(c, dc, bytes, cudaMemcpyDeviceToHost));
  printf("kernel_ms %.4f\n", best);
  printf("checksum %f\n", c[n * n - 1]);

  /* Copy bandwidth on 80 MB, the size of one tensor of benches/cuda/axpy.mc. */
  size_t big = 10000000 * sizeof(double);
  void *dev, *pinned, *pageable = malloc(big);
  CHECK(cudaMalloc(&dev, big));
  CHECK(cudaMallocHost(&pinned, big));
  for (size_t k = 0; k < big; k++) ((char *)pageable)[k] = (char)k;
  printf("h2d_pinned_gbs %.2f\n", bandwidth(dev, pinned, big, cudaMemcpyHostToDevice, 5));
  printf("d2h_pinned_gbs %.2f\n", bandwidth(pinned, dev, big, cudaMemcpyDeviceToHost, 5));
  printf("h2d_pageable_gbs %.2f\n", bandwidth(dev, pageable, big, cudaMemcpyHostToDevice, 5));
  printf("d2h_pageable_gbs %.2f\n", bandwidth(pageable, dev, big, cudaMemcpyDeviceToHost, 5));
  return 0;
}
