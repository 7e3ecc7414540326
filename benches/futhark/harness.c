// Times one Futhark entry through Futhark's C API, as pmx calls it:
// inputs made with futhark_new_*, the entry and a sync, the result read
// with futhark_values_* into fresh memory. Compiled by benches/native.py
// against a library of either the hand-written program (benches/futhark/
// NAME.fut) or pmx's generated one, with -DPOLY, -DSUMSQ or -DMATVEC,
// -DENTRY=futhark_entry_<name>, and -DVM_FIRST when the generated entry
// takes the vector before the matrix. Prints milliseconds, best of ROUNDS:
// "new E entry E values E memcpy E" (memcpy: the same bytes in and out
// copied with memcpy into fresh memory, the floor for marshaling).
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "prog.h"

#define ROUNDS 5

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static double best(double a, double b) { return a < b ? a : b; }

static void fail(struct futhark_context *ctx) {
  char *e = futhark_context_get_error(ctx);
  fprintf(stderr, "futhark: %s\n", e ? e : "failure");
  exit(1);
}

int main(void) {
  struct futhark_context_config *cfg = futhark_context_config_new();
  struct futhark_context *ctx = futhark_context_new(cfg);
#if defined(MATVEC)
  const int64_t n = 2000;
  int64_t in_len = n * n + n, out_len = n;
  double *m = malloc(n * n * sizeof(double)), *v = malloc(n * sizeof(double));
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = 0; j < n; j++) m[i * n + j] = (double)((i + j) % 7);
  for (int64_t j = 0; j < n; j++) v[j] = (double)(j % 5);
#else
  const int64_t n = 10000000;
  int64_t in_len = n, out_len = 1;
  double *xs = malloc(n * sizeof(double));
  for (int64_t i = 0; i < n; i++) {
#if defined(POLY)
    xs[i] = (double)i / (double)n;
    out_len = n;
#else
    xs[i] = (double)(i % 1000) / 1000.0;
#endif
  }
#endif
  double t_new = 1e30, t_entry = 1e30, t_values = 1e30, t_copy = 1e30, check = 0;
  for (int r = 0; r < ROUNDS; r++) {
    double t0 = now_ms();
#if defined(MATVEC)
    struct futhark_f64_2d *a = futhark_new_f64_2d(ctx, m, n, n);
    struct futhark_f64_1d *b = futhark_new_f64_1d(ctx, v, n);
    if (!a || !b) fail(ctx);
#else
    struct futhark_f64_1d *a = futhark_new_f64_1d(ctx, xs, n);
    if (!a) fail(ctx);
#endif
    if (futhark_context_sync(ctx)) fail(ctx);
    double t1 = now_ms();
#ifdef CHANNEL
    /* pmx's entry returns its channel (the checks' outcome) after the result. */
    int64_t channel;
#define OUTS(x) x, &channel
#else
#define OUTS(x) x
#endif
#if defined(MATVEC)
    struct futhark_f64_1d *out;
#ifdef VM_FIRST
    if (ENTRY(ctx, OUTS(&out), b, a)) fail(ctx);
#else
    if (ENTRY(ctx, OUTS(&out), a, b)) fail(ctx);
#endif
#elif defined(POLY)
    struct futhark_f64_1d *out;
    if (ENTRY(ctx, OUTS(&out), a)) fail(ctx);
#else
    double s;
    if (ENTRY(ctx, OUTS(&s), a)) fail(ctx);
#endif
    if (futhark_context_sync(ctx)) fail(ctx);
    double t2 = now_ms();
#if defined(SUMSQ)
    check = s;
#else
    double *res = malloc(out_len * sizeof(double));
    if (futhark_values_f64_1d(ctx, out, res) || futhark_context_sync(ctx)) fail(ctx);
    check = res[out_len - 1];
    free(res);
    futhark_free_f64_1d(ctx, out);
#endif
    double t3 = now_ms();
    futhark_free_f64_1d(ctx, (void *)a);
#if defined(MATVEC)
    futhark_free_f64_1d(ctx, b);
#endif
    // The floor: the same bytes in and out with memcpy, into fresh memory.
    double t4 = now_ms();
    double *copy_in = malloc(in_len * sizeof(double)), *copy_out = malloc(out_len * sizeof(double));
#if defined(MATVEC)
    memcpy(copy_in, m, n * n * sizeof(double));
    memcpy(copy_in + n * n, v, n * sizeof(double));
#else
    memcpy(copy_in, xs, n * sizeof(double));
#endif
    memcpy(copy_out, copy_in, out_len * sizeof(double));
    double t5 = now_ms();
    check += copy_out[0] * 0;
    free(copy_in);
    free(copy_out);
    t_new = best(t_new, t1 - t0);
    t_entry = best(t_entry, t2 - t1);
    t_values = best(t_values, t3 - t2);
    t_copy = best(t_copy, t5 - t4);
  }
  printf("new %.3f entry %.3f values %.3f memcpy %.3f result %.17g\n", t_new, t_entry, t_values, t_copy, check);
  futhark_context_free(ctx);
  futhark_context_config_free(cfg);
  return 0;
}
