
#if !defined(PMX_DEVICE_ONLY)
// One slot of an entry's arguments or result (see the generator's docs).
struct pmx_arg {
  int64_t i;
  double f;
  void *p;
  int64_t len;
  int64_t offset;
  int64_t rank;
  int64_t dims[PMX_MAX_RANK];
};
// What the engine gives the host code: memory for unpacked sequences and,
// for the GPU engine's host library, kernel launches and the wait for
// them (which returns their first failure, 0 for none).
struct pmx_runtime {
  void *ctx;
  void *(*alloc)(void *ctx, int64_t bytes);
  int64_t (*launch)(void *ctx, int64_t kernel, void **params, int64_t count, int64_t n);
  int64_t (*settle)(void *ctx);
};
// A sequence of host code that may point into a frame (a tensor's shape)
// copied into memory from the engine, like host code's sequence literals,
// where it may go to a kernel that runs after the frame is gone.
template <typename T> static pmx_seq<T> pmx_host_copy(pmx_seq<T> s, const pmx_runtime *rt) {
  pmx_seq<T> c = {(T *)rt->alloc(rt->ctx, s.len * (int64_t)sizeof(T)), s.len};
  if (s.len > 0) memcpy(c.data, s.data, s.len * sizeof(T));
  return c;
}
template <typename T> static pmx_tensor<T> pmx_unpack_tensor(const pmx_arg *a) {
  pmx_tensor<T> t;
  t.data = (T *)a->p;
  t.offset = a->offset;
  t.rank = a->rank;
  for (int64_t k = 0; k < PMX_MAX_RANK; k++) t.dims[k] = k < a->rank ? a->dims[k] : 1;
  return t;
}
// The failure of a kernel launched by a host function (which returns at
// once, as its callers do up to the entry).
static int64_t pmx_launch_failed = 0;
// Launches so far: each kernel is given its number, which its failures
// carry (see `pmx_fail_iteration`).
static int64_t pmx_launches = 0;
#if defined(__CUDACC__)
// The error of the CUDA runtime that made an entry return -1 (a launch
// refused, a kernel that faulted): for the caller, as text.
static cudaError_t pmx_cuda_status = cudaSuccess;
extern "C" const char *pmx_cuda_error() { return cudaGetErrorString(pmx_cuda_status); }
// An entry starts with no error of the runtime left from the caller's
// code, and fails at once (-1) if it cannot clear the kernels' flag.
#define PMX_RESET_FAILED(rt) do { int64_t z = 0; pmx_host_failed = 0; pmx_launch_failed = 0; pmx_pending = false; pmx_cuda_status = cudaSuccess; (void)cudaGetLastError(); cudaError_t e = cudaMemcpyToSymbol(pmx_failed, &z, sizeof z); if (e != cudaSuccess) { pmx_cuda_status = e; pmx_host_failed = -1; } } while (0)
// Waits for the kernels launched since the last wait (always, so that
// none still runs when the entry returns); their first failure becomes
// host code's unless host code failed before (`pmx_fail` waits first, so
// a later one cannot have been recorded). An error of the CUDA runtime (a
// launch refused, a kernel that faulted) is failure -1, with the error in
// `pmx_cuda_status`, unless the kernels' flag could still be read and
// holds a located failure.
static void pmx_settle() {
  int64_t h = 0;
  pmx_pending = false;
  cudaError_t e = cudaGetLastError();
  cudaError_t s = cudaDeviceSynchronize();
  if (e == cudaSuccess) e = s;
  cudaError_t r = cudaMemcpyFromSymbol(&h, pmx_failed, sizeof h);
  h = r == cudaSuccess ? PMX_LOC(h) : 0;
  if (e == cudaSuccess) e = r;
  if (e != cudaSuccess && h == 0) {
    h = -1;
    if (pmx_cuda_status == cudaSuccess) pmx_cuda_status = e;
  }
  if (pmx_host_failed == 0) pmx_host_failed = h;
}
#elif defined(PMX_HOST_LAUNCH)
// The runtime of the running call, for waits from inside host code.
static const pmx_runtime *pmx_rt = 0;
#define PMX_RESET_FAILED(rt) (pmx_failed = 0, pmx_launch_failed = 0, pmx_pending = false, pmx_rt = (rt))
// As under nvcc: the engine waits and returns the kernels' first failure.
static void pmx_settle() {
  pmx_pending = false;
  int64_t f = pmx_rt->settle(pmx_rt->ctx);
  if (f) pmx_fail(f);
}
#else
#define PMX_RESET_FAILED(rt) (pmx_failed = 0, pmx_launch_failed = 0)
#endif
// The first failure: of host code or of the kernels, whichever came first
// (host code that launches on a device waits for its kernels first).
#if defined(PMX_SETTLES)
static int64_t pmx_read_failed() { return pmx_sync_host(); }
#else
static int64_t pmx_read_failed() { return PMX_LOC(pmx_failed); }
#endif
#if !defined(PMX_GPU) && !defined(PMX_HOST_LAUNCH)
#if defined(_OPENMP)
#include <omp.h>
#endif
// A CPU launch: each OpenMP thread is one block of one thread of the grid.
static void pmx_cpu_thread() {
#if defined(_OPENMP)
  blockIdx.x = (unsigned)omp_get_thread_num();
  gridDim.x = (unsigned)omp_get_num_threads();
#else
  blockIdx.x = 0;
  gridDim.x = 1;
#endif
  threadIdx.x = 0;
  blockDim.x = 1;
}
// Block b of a grid as a device runs it, for `pmx_cpu_grid_K`.
static void pmx_grid_thread(int64_t b, int64_t blocks, int64_t threads) {
  blockIdx.x = (unsigned)b;
  gridDim.x = (unsigned)blocks;
  blockDim.x = (unsigned)threads;
}
// The kernels' failure, cleared: for a host library built with
// PMX_HOST_LAUNCH whose launches this build runs (`gpu::launch`).
extern "C" int64_t pmx_cpu_take_failed() {
  int64_t f = PMX_LOC(pmx_failed);
  pmx_failed = 0;
  return f;
}
#endif
#endif
