/* A CPU stand-in for the parts of CUDA that the hand-written baselines
   use (examples/viterbi/vc.cu, examples/matmul/matmul.cu), so that their
   kernels and host code can be checked on a machine without a GPU:
   benches/cuda/emulate.py compiles a .cu file with g++ against this
   header as <cuda_runtime.h>, its launches `k<<<grid, block>>>(args)`
   rewritten as `emu_launch(k, grid, block, args)`.

   Blocks run one after another; the threads of a block run as OS threads
   meeting at a barrier in __syncthreads(), and __shared__ variables are
   static (one copy, which the block running now owns). Device memory is
   host memory; events read a steady clock. Times mean nothing here: this
   checks results only. */
#pragma once
#include <barrier>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#define __global__
#define __device__
#define __host__
#define __shared__ static
#define __forceinline__ inline
#define __restrict__ __restrict

struct dim3 {
  unsigned x, y, z;
  dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};
static thread_local dim3 threadIdx, blockIdx;
static dim3 blockDim, gridDim;
static std::barrier<> *emu_barrier = nullptr;

static inline void __syncthreads() { emu_barrier->arrive_and_wait(); }

typedef int cudaError_t;
enum { cudaSuccess = 0 };
enum cudaMemcpyKind { cudaMemcpyHostToDevice, cudaMemcpyDeviceToHost, cudaMemcpyDeviceToDevice, cudaMemcpyHostToHost };
static inline const char *cudaGetErrorString(cudaError_t) { return "emulation error"; }
static inline cudaError_t cudaGetLastError() { return cudaSuccess; }
static inline cudaError_t cudaDeviceSynchronize() { return cudaSuccess; }
template <typename T> static cudaError_t cudaMalloc(T **p, size_t bytes) {
  *p = (T *)calloc(bytes ? bytes : 1, 1);
  return *p ? cudaSuccess : 2;
}
static inline cudaError_t cudaFree(void *p) {
  free(p);
  return cudaSuccess;
}
static inline cudaError_t cudaMemcpy(void *dst, const void *src, size_t bytes, cudaMemcpyKind) {
  memcpy(dst, src, bytes);
  return cudaSuccess;
}
static inline cudaError_t cudaMemset(void *p, int v, size_t bytes) {
  memset(p, v, bytes);
  return cudaSuccess;
}
struct cudaDeviceProp {
  char name[256];
};
static inline cudaError_t cudaGetDeviceProperties(cudaDeviceProp *p, int) {
  snprintf(p->name, sizeof p->name, "CPU emulation (benches/cuda/emulate.h)");
  return cudaSuccess;
}
struct emu_event {
  std::chrono::steady_clock::time_point t;
};
typedef emu_event *cudaEvent_t;
static inline cudaError_t cudaEventCreate(cudaEvent_t *e) {
  *e = new emu_event();
  return cudaSuccess;
}
static inline cudaError_t cudaEventDestroy(cudaEvent_t e) {
  delete e;
  return cudaSuccess;
}
static inline cudaError_t cudaEventRecord(cudaEvent_t e, int = 0) {
  e->t = std::chrono::steady_clock::now();
  return cudaSuccess;
}
static inline cudaError_t cudaEventSynchronize(cudaEvent_t) { return cudaSuccess; }
static inline cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t a, cudaEvent_t b) {
  *ms = std::chrono::duration<float, std::milli>(b->t - a->t).count();
  return cudaSuccess;
}

template <typename K, typename... A> static void emu_launch(K kernel, dim3 grid, dim3 block, A... args) {
  gridDim = grid;
  blockDim = block;
  unsigned n = block.x * block.y * block.z;
  if (n == 0 || n > 1024) {
    fprintf(stderr, "emulate.h: %u threads per block\n", n);
    exit(1);
  }
  for (unsigned bz = 0; bz < grid.z; bz++)
    for (unsigned by = 0; by < grid.y; by++)
      for (unsigned bx = 0; bx < grid.x; bx++) {
        std::barrier<> bar((std::ptrdiff_t)n);
        emu_barrier = &bar;
        std::vector<std::thread> threads;
        threads.reserve(n);
        for (unsigned tz = 0; tz < block.z; tz++)
          for (unsigned ty = 0; ty < block.y; ty++)
            for (unsigned tx = 0; tx < block.x; tx++)
              threads.emplace_back([=, &bar] {
                threadIdx = dim3(tx, ty, tz);
                blockIdx = dim3(bx, by, bz);
                kernel(args...);
                // A thread that has finished no longer holds the others
                // up at a barrier (as on the device since Volta).
                bar.arrive_and_drop();
              });
        for (auto &t : threads) t.join();
        emu_barrier = nullptr;
      }
}
