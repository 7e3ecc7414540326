/* The hand-written baseline of benches/cuda/matmul.mc: the same loop nest
   (one parallel loop over the cells of C, a sequential dot product),
   compiled with the flags pmx uses for generated CUDA on the CPU. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(void) {
  const int64_t n = 512;
  double *a = malloc(n * n * sizeof *a), *b = malloc(n * n * sizeof *b), *c = malloc(n * n * sizeof *c);
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = 0; j < n; j++) {
      a[i * n + j] = (double)((i + j) % 7);
      b[i * n + j] = (double)((i * j) % 5);
    }
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
#pragma omp parallel for
  for (int64_t k = 0; k < n * n; k++) {
    int64_t i = k / n, j = k % n;
    double acc = 0.0;
    for (int64_t l = 0; l < n; l++) acc += a[i * n + l] * b[l * n + j];
    c[i * n + j] = acc;
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  printf("%.3f ms %f\n", (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6, c[n * n - 1]);
  return 0;
}
