// pmx CUDA prelude: the same translation unit compiles three ways.
//  - nvcc (__CUDACC__): kernels, device functions and host entries that
//    launch with <<<...>>>.
//  - NVRTC (__CUDACC_RTC__): device code and kernels only.
//  - a C++ compiler without CUDA: everything is host code; a launch is an
//    OpenMP-parallel loop over the grid (each thread one block of one
//    thread), which the grid-stride loops of the kernels cover.
#if defined(__CUDACC_RTC__)
typedef long long int64_t;
typedef unsigned long long uint64_t;
typedef unsigned int uint32_t;
#define PMX_DEVICE_ONLY 1
#else
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <math.h>
#endif
#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define PMX_GPU 1
#define PMX_FN __device__ __host__ static inline
#define PMX_INLINE __device__ __host__ static __forceinline__
#define PMX_GLOBAL extern "C" __global__
#define PMX_FAIL_VAR __device__ int64_t pmx_failed = 0; __device__ int64_t pmx_failed_launch = 0;
#else
#define __device__
#define __host__
#define PMX_FN static inline
#define PMX_INLINE static inline __attribute__((always_inline))
#define PMX_GLOBAL static
#define PMX_FAIL_VAR static int64_t pmx_failed = 0; static int64_t pmx_failed_launch = 0;
struct pmx_dim3 { unsigned x, y, z; };
static thread_local pmx_dim3 threadIdx = {0, 0, 0}, blockIdx = {0, 0, 0}, blockDim = {1, 1, 1}, gridDim = {1, 1, 1};
#endif
#ifndef PMX_MAX_RANK
#define PMX_MAX_RANK 8
#endif

// Integer arithmetic wraps around, as MExpr's does. The CPU engine
// compiles with -fwrapv and defines PMX_WRAPV: signed arithmetic then wraps
// and the loop optimiser still sees an index such as i0 + i as affine in
// i (through casts to unsigned it does not, and loops over such indices
// are not vectorised). Elsewhere the operations go through unsigned
// arithmetic, where wrapping is defined.
#if defined(PMX_WRAPV)
#define PMX_ADDI(a, b) ((a) + (b))
#define PMX_SUBI(a, b) ((a) - (b))
#define PMX_MULI(a, b) ((a) * (b))
#define PMX_NEGI(a) (-(a))
#else
#define PMX_ADDI(a, b) ((int64_t)((uint64_t)(a) + (uint64_t)(b)))
#define PMX_SUBI(a, b) ((int64_t)((uint64_t)(a) - (uint64_t)(b)))
#define PMX_MULI(a, b) ((int64_t)((uint64_t)(a) * (uint64_t)(b)))
#define PMX_NEGI(a) ((int64_t)(0ULL - (uint64_t)(a)))
#endif

PMX_FAIL_VAR
// A failure is a location id (below 2^24). In a kernel, the failure that
// debug mode reports is the one of the lowest iteration (iterations run
// in order there), whatever thread fails first: the flag holds the key
// (iteration + 1) << 24 | location, replaced by a failure of a lower
// iteration only, and only within one launch (launches run in order, so
// one that failed before was the first). `pmx_failed_launch` says which
// launch the key is of. Outside kernels the flag holds a plain location.
// Every reader of the flag takes the location with PMX_LOC.
#define PMX_LOC(f) ((f) > 0 ? (int64_t)((uint64_t)(f) & 0xFFFFFFULL) : (f))
#if defined(__CUDACC__) && !defined(__CUDACC_RTC__)
// Under nvcc, host code records its failures here (the flag above lives on
// the device, where only device code may touch it).
static int64_t pmx_host_failed = 0;
#endif

// Host code that launches kernels on a device (the GPU engine's host
// library, or the unit under nvcc) does not wait for them: launches queue
// up, and host code waits (`pmx_settle`, with the host prelude) only
// before a statement that may read or write tensor data (the generator
// writes the waits, `gen::body`) and before it records a failure of its
// own. A loop of launches with nothing between them (Viterbi's, one per
// signal) then runs back to back instead of paying a wait and a read of
// the failure flag per launch. Kernels never write sequences, so reading
// those needs no wait. The wait returns the first failure recorded by
// then (0 for none), after which host code leaves, as after a launch.
#if defined(PMX_HOST_LAUNCH) || (defined(__CUDACC__) && !defined(__CUDACC_RTC__))
#define PMX_SETTLES 1
static bool pmx_pending = false;
static void pmx_settle();
#endif
PMX_FN int64_t pmx_sync_host() {
#if defined(PMX_SETTLES) && !defined(__CUDA_ARCH__)
  if (pmx_pending) pmx_settle();
#if defined(__CUDACC__)
  return pmx_host_failed;
#else
  return PMX_LOC(pmx_failed);
#endif
#else
  return 0;
#endif
}

#if defined(__CUDA_ARCH__)
// The iteration each thread of the block runs, and the launch.
__shared__ int64_t pmx_iterations[256];
__shared__ int64_t pmx_this_launch;
#define PMX_KERNEL_BEGIN(e) (pmx_this_launch = (e))
#define PMX_ITERATION(i) (pmx_iterations[threadIdx.x] = (i))
#define PMX_KERNEL_END() ((void)0)
#elif !defined(PMX_DEVICE_ONLY)
static thread_local int64_t pmx_iteration = -1, pmx_this_launch = 0;
#define PMX_KERNEL_BEGIN(e) (pmx_this_launch = (e))
#define PMX_ITERATION(i) (pmx_iteration = (i))
#define PMX_KERNEL_END() (pmx_iteration = -1)
#endif
#if !defined(__CUDACC__) || defined(__CUDA_ARCH__)
// Records the failure of iteration `it` of launch `launch`.
PMX_FN void pmx_fail_iteration(int64_t loc, int64_t it, int64_t launch) {
#if defined(__CUDA_ARCH__)
  volatile int64_t *flag = &pmx_failed;
  int64_t cur = *flag;
  __threadfence();
  if (cur != 0 && *(volatile int64_t *)&pmx_failed_launch != launch) return;
  pmx_failed_launch = launch;
  __threadfence();
#else
  int64_t cur = __atomic_load_n(&pmx_failed, __ATOMIC_ACQUIRE);
  if (cur != 0 && __atomic_load_n(&pmx_failed_launch, __ATOMIC_ACQUIRE) != launch) return;
  __atomic_store_n(&pmx_failed_launch, launch, __ATOMIC_RELEASE);
#endif
  uint64_t key = ((uint64_t)(it + 1) << 24) | (uint64_t)loc;
  for (;;) {
    // A failure of this iteration or a lower one stays.
    if (cur != 0 && ((uint64_t)cur >> 24) <= (key >> 24)) return;
#if defined(__CUDA_ARCH__)
    int64_t prev = (int64_t)atomicCAS((unsigned long long *)&pmx_failed, (unsigned long long)cur, (unsigned long long)key);
    if (prev == cur) return;
    cur = prev;
#else
    if (__atomic_compare_exchange_n(&pmx_failed, &cur, (int64_t)key, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) return;
#endif
  }
}
#endif

// Records a failure and lets the thread go on with a harmless value; the
// host reads the flag when it waits for kernels, and leaves before
// launching more after a failure. Host code first waits for the kernels
// it launched: a failure of theirs came first.
PMX_FN void pmx_fail(int64_t loc) {
#if defined(__CUDA_ARCH__)
  pmx_fail_iteration(loc, pmx_iterations[threadIdx.x], pmx_this_launch);
#elif defined(__CUDACC__)
  pmx_sync_host();
  if (pmx_host_failed == 0) pmx_host_failed = loc;
#else
  if (pmx_iteration >= 0) {
    pmx_fail_iteration(loc, pmx_iteration, pmx_this_launch);
    return;
  }
  pmx_sync_host();
  int64_t expected = 0;
  __atomic_compare_exchange_n(&pmx_failed, &expected, loc, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
#endif
}

PMX_INLINE int64_t pmx_divi(int64_t a, int64_t b, int64_t loc) {
  if (b == 0) { pmx_fail(loc); return 0; }
  if (b == -1) return (int64_t)(0ULL - (uint64_t)a);
  return a / b;
}
PMX_INLINE int64_t pmx_modi(int64_t a, int64_t b, int64_t loc) {
  if (b == 0) { pmx_fail(loc); return 0; }
  if (b == -1) return 0;
  return a % b;
}
// Float to Int saturates, as every engine does (README): NaN is 0, a value
// past either end of Int is that end (a plain cast is undefined there).
PMX_FN int64_t pmx_f2i(double y) {
  if (y != y) return 0;
  if (y >= 9223372036854775808.0) return 9223372036854775807LL;
  if (y < -9223372036854775808.0) return -9223372036854775807LL - 1;
  return (int64_t)y;
}
PMX_FN int64_t pmx_floorfi(double x) { return pmx_f2i(floor(x)); }
PMX_FN int64_t pmx_ceilfi(double x) { return pmx_f2i(ceil(x)); }
PMX_FN int64_t pmx_roundfi(double x) { return pmx_f2i(round(x)); }
PMX_FN int64_t pmx_slli(int64_t a, int64_t b) { return (b < 0 || b >= 64) ? 0 : (int64_t)((uint64_t)a << b); }
PMX_FN int64_t pmx_srli(int64_t a, int64_t b) { return (b < 0 || b >= 64) ? 0 : (int64_t)((uint64_t)a >> b); }
PMX_FN int64_t pmx_srai(int64_t a, int64_t b) { return (b < 0 || b >= 64) ? (a < 0 ? -1 : 0) : (a >> b); }

// Tensors: a view on the elements of a root allocation.
template <typename T> struct pmx_tensor {
  T *data;
  int64_t offset;
  int64_t rank;
  int64_t dims[PMX_MAX_RANK];
};
template <typename T> struct pmx_seq {
  T *data;
  int64_t len;
};
struct pmx_unit {};

template <typename T> PMX_FN int64_t pmx_tensor_size(const pmx_tensor<T> &t) {
  int64_t n = 1;
  for (int64_t k = 0; k < t.rank; k++) n *= t.dims[k];
  return n;
}
// The linear position of a full index in `*pos`; false after recording a
// failure. The checks of every dimension are gathered into one flag and
// one branch (an unsigned compare covers both ends), which the access
// below shares, so that a kernel pays a few integer operations per access
// rather than a branch per dimension.
template <typename T>
PMX_INLINE bool pmx_tensor_pos(const pmx_tensor<T> &t, const int64_t *ix, int64_t n, int64_t loc, bool checked,
                           int64_t *pos) {
  bool bad = checked && n != t.rank;
  int64_t m = n < PMX_MAX_RANK ? n : PMX_MAX_RANK;
  int64_t p = 0;
  for (int64_t k = 0; k < m; k++) {
    bad |= checked && (uint64_t)ix[k] >= (uint64_t)t.dims[k];
    p = p * t.dims[k] + ix[k];
  }
  if (bad) { pmx_fail(loc); return false; }
  *pos = t.offset + p;
  return true;
}
// Dimension k of a tensor (`get (tensorShape t) k` where hoist.rs tests
// it before a loop); 0 past its rank, the value that failing `get` gives
// the loop's body.
template <typename T> PMX_INLINE int64_t pmx_dim(const pmx_tensor<T> &t, int64_t k) {
  return k < t.rank && k < PMX_MAX_RANK ? t.dims[k] : 0;
}
// Kernels launched in tiles of rows. A kernel whose body divides its
// index by a row length w (`i = idx / w`, `j = idx % w`, as a matrix's
// cells are numbered) runs, where w is wide enough, as tiles of 32
// columns by blockDim.x / 32 rows: a warp still takes 32 neighbouring
// iterations of one row, and the warps of a block take the same columns
// of neighbouring rows, so that what they read along a column (a column
// of B in a matrix product) is read once into the block's cache instead
// of once per warp. Any w > 0 numbers every iteration exactly once, so
// a wrong guess costs speed, never results. The row length to launch
// with, 0 for a plain grid-stride launch:
PMX_FN int64_t pmx_tile_width(int64_t w, int64_t n) {
  return w >= 32 && w < n && n < ((int64_t)1 << 36) && (w % 32 == 0 || w >= 128) ? w : 0;
}
// The iteration of this thread in tile t of `across` tiles per row, or -1
// past the end of its row or of the loop (under pmx_tile_width's limits,
// n < 2^36 and w >= 32, tile numbers fit in 32 bits).
PMX_INLINE int64_t pmx_tile_index(int64_t t, int64_t across, int64_t w, int64_t n) {
  uint32_t q = (uint32_t)t / (uint32_t)across, r = (uint32_t)t % (uint32_t)across;
  int64_t row = (int64_t)q * (int64_t)(blockDim.x / 32) + (int64_t)(threadIdx.x / 32);
  int64_t col = (int64_t)r * 32 + (int64_t)(threadIdx.x % 32);
  int64_t i = row * w + col;
  return col < w && i < n ? i : -1;
}
// Whether base + step * i lies in [0, bound) for every i in [0, n), with
// 0 < n < 2^31 (the test before a loop whose checks are hoisted, see the
// generator's hoist.rs). With |step| < 2^31 and bound <= 2^62 the values
// never wrap and are monotonic in i, so the two ends decide.
PMX_INLINE bool pmx_affine_within(int64_t base, int64_t step, int64_t n, int64_t bound) {
  const int64_t lim = (int64_t)1 << 31;
  return bound <= ((int64_t)1 << 62) && (uint64_t)base < (uint64_t)bound && step > -lim && step < lim &&
         (uint64_t)(base + step * (n - 1)) < (uint64_t)bound;
}
// Tensor reads and writes are always inlined: the index sequence is then
// a local array the compiler keeps in registers, and a loop over them can
// be vectorised (unchecked: with checks, each access may fail).
template <typename T>
PMX_INLINE T pmx_tensor_get(const pmx_tensor<T> &t, pmx_seq<int64_t> ix, int64_t loc, bool checked) {
  int64_t p;
  if (!pmx_tensor_pos(t, ix.data, ix.len, loc, checked, &p)) return T();
  return t.data[p];
}
template <typename T>
PMX_INLINE pmx_unit pmx_tensor_set(const pmx_tensor<T> &t, pmx_seq<int64_t> ix, T v, int64_t loc, bool checked) {
  int64_t p;
  if (pmx_tensor_pos(t, ix.data, ix.len, loc, checked, &p)) t.data[p] = v;
  return pmx_unit();
}
// Accumulations (issue 30, `pmx_lower::accumulate`): a read-modify-write
// of a cell that several iterations of a parallel loop may make at once is
// one indivisible update. On a device: atomicAdd where it has one for the
// type (64-bit integers; doubles from compute capability 6.0), atomicMax
// and atomicMin for integers, else a compare-and-swap loop on the cell's
// bits. On the CPU (OpenMP threads, or a device's kernels run on the CPU)
// GCC's and Clang's __atomic builtins. Relaxed order suffices: nothing
// reads the cells until the loop has ended (a launch's end, or OpenMP's
// barrier, orders them).
PMX_INLINE int64_t pmx_atomic_cas(int64_t *p, int64_t expected, int64_t desired) {
#if defined(__CUDA_ARCH__)
  return (int64_t)atomicCAS((unsigned long long *)p, (unsigned long long)expected, (unsigned long long)desired);
#else
  __atomic_compare_exchange_n(p, &expected, desired, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
  return expected;
#endif
}
PMX_INLINE int64_t pmx_atomic_load(int64_t *p) {
#if defined(__CUDA_ARCH__)
  return *(volatile int64_t *)p;
#else
  return __atomic_load_n(p, __ATOMIC_RELAXED);
#endif
}
PMX_INLINE int64_t pmx_bits_of(double x) {
#if defined(__CUDA_ARCH__)
  return __double_as_longlong(x);
#else
  int64_t b;
  memcpy(&b, &x, sizeof b);
  return b;
#endif
}
PMX_INLINE double pmx_double_of(int64_t b) {
#if defined(__CUDA_ARCH__)
  return __longlong_as_double(b);
#else
  double x;
  memcpy(&x, &b, sizeof x);
  return x;
#endif
}
// The compare-and-swap loop: `NEW` computes the cell's new value from
// `old` (its current value, as T).
#define PMX_ATOMIC_LOOP(T, TO_BITS, FROM_BITS, NEW)                        \
  int64_t bits = pmx_atomic_load((int64_t *)p);                            \
  for (;;) {                                                               \
    T old = FROM_BITS(bits);                                               \
    int64_t prev = pmx_atomic_cas((int64_t *)p, bits, TO_BITS(NEW));       \
    if (prev == bits) return;                                              \
    bits = prev;                                                           \
  }
#define PMX_SAME_BITS(x) (x)
PMX_INLINE void pmx_atomic_addi(int64_t *p, int64_t v) {
#if defined(__CUDA_ARCH__)
  atomicAdd((unsigned long long *)p, (unsigned long long)v);
#else
  __atomic_fetch_add((uint64_t *)p, (uint64_t)v, __ATOMIC_RELAXED);
#endif
}
PMX_INLINE void pmx_atomic_muli(int64_t *p, int64_t v) { PMX_ATOMIC_LOOP(int64_t, PMX_SAME_BITS, PMX_SAME_BITS, PMX_MULI(old, v)) }
PMX_INLINE void pmx_atomic_maxi(int64_t *p, int64_t v) {
#if defined(__CUDA_ARCH__)
  atomicMax((long long *)p, (long long)v);
#else
  PMX_ATOMIC_LOOP(int64_t, PMX_SAME_BITS, PMX_SAME_BITS, (old > v ? old : v))
#endif
}
PMX_INLINE void pmx_atomic_mini(int64_t *p, int64_t v) {
#if defined(__CUDA_ARCH__)
  atomicMin((long long *)p, (long long)v);
#else
  PMX_ATOMIC_LOOP(int64_t, PMX_SAME_BITS, PMX_SAME_BITS, (old < v ? old : v))
#endif
}
PMX_INLINE void pmx_atomic_addf(double *p, double v) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 600
  atomicAdd(p, v);
#else
  PMX_ATOMIC_LOOP(double, pmx_bits_of, pmx_double_of, old + v)
#endif
}
PMX_INLINE void pmx_atomic_mulf(double *p, double v) { PMX_ATOMIC_LOOP(double, pmx_bits_of, pmx_double_of, old * v) }
// tensorSetExn t ix (op (tensorGetExn t ix) v), atomically.
#define PMX_TENSOR_ATOMIC(OP, T)                                                                      \
  PMX_INLINE pmx_unit pmx_tensor_atomic_##OP(const pmx_tensor<T> &t, pmx_seq<int64_t> ix, T v, int64_t loc, \
                                             bool checked) {                                          \
    int64_t p;                                                                                        \
    if (pmx_tensor_pos(t, ix.data, ix.len, loc, checked, &p)) pmx_atomic_##OP(t.data + p, v);         \
    return pmx_unit();                                                                                \
  }
PMX_TENSOR_ATOMIC(addi, int64_t)
PMX_TENSOR_ATOMIC(muli, int64_t)
PMX_TENSOR_ATOMIC(maxi, int64_t)
PMX_TENSOR_ATOMIC(mini, int64_t)
PMX_TENSOR_ATOMIC(addf, double)
PMX_TENSOR_ATOMIC(mulf, double)
template <typename T>
PMX_INLINE T pmx_tensor_linear_get(const pmx_tensor<T> &t, int64_t i, int64_t loc, bool checked) {
  if (checked && (i < 0 || i >= pmx_tensor_size(t))) { pmx_fail(loc); return T(); }
  return t.data[t.offset + i];
}
template <typename T>
PMX_INLINE pmx_unit pmx_tensor_linear_set(const pmx_tensor<T> &t, int64_t i, T v, int64_t loc, bool checked) {
  if (checked && (i < 0 || i >= pmx_tensor_size(t))) { pmx_fail(loc); return pmx_unit(); }
  t.data[t.offset + i] = v;
  return pmx_unit();
}
// tensorSubExn t ofs len: rows ofs .. ofs+len of the outer dimension.
// Slices and sub-tensors are always inlined, and their loops bounded by
// PMX_MAX_RANK: the C++ compiler then keeps the new view in registers. As
// a call returning a view through memory, a slice taken in a loop cost
// five times the arithmetic around it (the CNN's weight gradients).
template <typename T>
PMX_INLINE pmx_tensor<T> pmx_tensor_sub(const pmx_tensor<T> &t, int64_t ofs, int64_t len, int64_t loc, bool checked) {
  if (checked && (t.rank == 0 || ofs < 0 || len < 0 || ofs + len > t.dims[0])) { pmx_fail(loc); return t; }
  int64_t row = 1;
  for (int64_t k = 1; k < t.rank && k < PMX_MAX_RANK; k++) row *= t.dims[k];
  pmx_tensor<T> r = t;
  r.offset = t.offset + ofs * row;
  r.dims[0] = len;
  return r;
}
// tensorSliceExn t ix: the sub-tensor at a prefix index. Dimensions past
// the rank are those of `t` past its rank (1 from the marshaling).
template <typename T>
PMX_INLINE pmx_tensor<T> pmx_tensor_slice(const pmx_tensor<T> &t, pmx_seq<int64_t> ix, int64_t loc, bool checked) {
  if (checked && ix.len > t.rank) { pmx_fail(loc); return t; }
  int64_t pos = 0;
  for (int64_t k = 0; k < ix.len && k < PMX_MAX_RANK; k++) {
    if (checked && (uint64_t)ix.data[k] >= (uint64_t)t.dims[k]) { pmx_fail(loc); return t; }
    pos = pos * t.dims[k] + ix.data[k];
  }
  for (int64_t k = ix.len; k < t.rank && k < PMX_MAX_RANK; k++) pos *= t.dims[k];
  pmx_tensor<T> r;
  r.data = t.data;
  r.offset = t.offset + pos;
  r.rank = t.rank - ix.len;
  for (int64_t k = 0; k < PMX_MAX_RANK; k++) r.dims[k] = k + ix.len < PMX_MAX_RANK ? t.dims[k + ix.len] : 1;
  return r;
}
// A code point, or a recorded failure for a number that is none (outside
// 0..0x10FFFF or a surrogate), as the interpreter's `int2char`.
PMX_INLINE uint32_t pmx_int2char(int64_t c, int64_t loc, bool checked) {
  if (checked && ((uint64_t)c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))) { pmx_fail(loc); return 0; }
  return (uint32_t)c;
}
template <typename T> PMX_INLINE T pmx_seq_get(pmx_seq<T> s, int64_t i, int64_t loc, bool checked) {
  if (checked && (uint64_t)i >= (uint64_t)s.len) { pmx_fail(loc); return T(); }
  return s.data[i];
}
