// Copyright 2026 The RingKernel Authors.
//
// parse_shim.h: what NVRTC provides built in, declared for the clang
// front-end.
//
// NVRTC compiles handler fragments with CUDA's keywords, built-in variables,
// vector types and device functions already in scope, and with no include
// path at all. The front-end parses the same fragments as plain C++17 for the
// nvptx64 target (so that layouts are the device's), where none of that
// exists. This header declares it — declarations only, nothing here is ever
// compiled into device code — so that a fragment NVRTC accepts parses cleanly
// and a name NVRTC lacks is reported as undeclared.
//
// It is included by `ringkernel/actor.cuh` only when `RK_PARSE_ONLY` is
// defined, before anything else, and must never be seen by NVRTC or the host
// compiler.
//
// What it covers:
//   * the CUDA keywords (`__device__`, `__global__`, `__shared__`, ...),
//     which expand to nothing (or to an annotation the front-end looks for:
//     a `__global__` function in a fragment is an error, since the runtime
//     owns the only kernel);
//   * `threadIdx`, `blockIdx`, `blockDim`, `gridDim`, `warpSize`;
//   * the vector types (`char1` ... `double4`, `dim3`) and `make_*`;
//   * the fixed-width integer types of LP64 Linux, in the global namespace;
//   * barriers, fences and warp functions; bit, conversion and type-punning
//     intrinsics; `clock`, `__ldg` and the cache-hinted loads and stores;
//   * the atomics, with their `_block` and `_system` variants;
//   * `printf`, `assert`, `malloc`, `free`, `memcpy`, `memset`, `min`, `max`;
//   * the CUDA math API for float and double, and its fast intrinsics.
#ifndef RINGKERNEL_DEVICE_PARSE_SHIM_H_
#define RINGKERNEL_DEVICE_PARSE_SHIM_H_

#if !defined(RK_PARSE_ONLY)
#error "parse_shim.h is for the RingKernel front-end only (RK_PARSE_ONLY)"
#endif

// ---------------------------------------------------------------------------
// Keywords. Fragments compile with NVRTC's -default-device, so every function
// is a device function whether or not it says so.
#define __host__
#define __device__
#define __global__ __attribute__((annotate("rk::global")))
#define __shared__
#define __constant__
#define __managed__
#define __grid_constant__
#define __device_builtin__
#define __builtin_align__(n) __attribute__((aligned(n)))
#define __align__(n) __attribute__((aligned(n)))
#define __forceinline__ __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __inline__ inline
#define __restrict__ __restrict
#define __launch_bounds__(...)
#define __maxnreg__(n)
#define __cluster_dims__(...)

// ---------------------------------------------------------------------------
// Fixed-width types and limits: shared with NVRTC mode.
#include "ringkernel/device/fixed_width.h"

// ---------------------------------------------------------------------------
// What NVRTC builds into namespace std (its -builtin-move-forward and
// -builtin-initializer-list, on by default): std::move, std::forward and
// std::initializer_list, usable without any header.
namespace std {
template <class T>
struct remove_reference {
  typedef T type;
};
template <class T>
struct remove_reference<T&> {
  typedef T type;
};
template <class T>
struct remove_reference<T&&> {
  typedef T type;
};
template <class T>
constexpr typename remove_reference<T>::type&& move(T&& t) noexcept {
  return static_cast<typename remove_reference<T>::type&&>(t);
}
template <class T>
constexpr T&& forward(typename remove_reference<T>::type& t) noexcept {
  return static_cast<T&&>(t);
}
template <class T>
constexpr T&& forward(typename remove_reference<T>::type&& t) noexcept {
  return static_cast<T&&>(t);
}
// The layout clang expects of std::initializer_list: a pointer and a size.
template <class E>
class initializer_list {
 public:
  constexpr initializer_list() noexcept : begin_(nullptr), size_(0) {}
  constexpr unsigned long size() const noexcept { return size_; }
  constexpr const E* begin() const noexcept { return begin_; }
  constexpr const E* end() const noexcept { return begin_ + size_; }

 private:
  constexpr initializer_list(const E* b, unsigned long n) : begin_(b), size_(n) {}
  const E* begin_;
  unsigned long size_;
};
}  // namespace std

// ---------------------------------------------------------------------------
// Vector types. Alignments follow CUDA's vector_types.h: two- and
// four-component types are aligned to their size (capped at 16 bytes), the
// one- and three-component types to their element.
#define RK_SHIM_VEC1(T, E) \
  struct T {               \
    E x;                   \
  };
#define RK_SHIM_VEC2(T, E, A) \
  struct __align__(A) T {     \
    E x, y;                   \
  };
#define RK_SHIM_VEC3(T, E) \
  struct T {               \
    E x, y, z;             \
  };
#define RK_SHIM_VEC4(T, E, A) \
  struct __align__(A) T {     \
    E x, y, z, w;             \
  };
#define RK_SHIM_VEC_ALL(P, E, A2, A4) \
  RK_SHIM_VEC1(P##1, E)               \
  RK_SHIM_VEC2(P##2, E, A2)           \
  RK_SHIM_VEC3(P##3, E)               \
  RK_SHIM_VEC4(P##4, E, A4)

RK_SHIM_VEC_ALL(char, signed char, 2, 4)
RK_SHIM_VEC_ALL(uchar, unsigned char, 2, 4)
RK_SHIM_VEC_ALL(short, short, 4, 8)
RK_SHIM_VEC_ALL(ushort, unsigned short, 4, 8)
RK_SHIM_VEC_ALL(int, int, 8, 16)
RK_SHIM_VEC_ALL(float, float, 8, 16)
RK_SHIM_VEC_ALL(long, long, 16, 16)
RK_SHIM_VEC_ALL(ulong, unsigned long, 16, 16)
RK_SHIM_VEC_ALL(longlong, long long, 16, 16)
RK_SHIM_VEC_ALL(ulonglong, unsigned long long, 16, 16)
RK_SHIM_VEC_ALL(double, double, 16, 16)
// CUDA 13 spells the 32-byte four-component types with their alignment.
RK_SHIM_VEC4(long4_16a, long, 16)
RK_SHIM_VEC4(long4_32a, long, 32)
RK_SHIM_VEC4(ulong4_16a, unsigned long, 16)
RK_SHIM_VEC4(ulong4_32a, unsigned long, 32)
RK_SHIM_VEC4(longlong4_16a, long long, 16)
RK_SHIM_VEC4(longlong4_32a, long long, 32)
RK_SHIM_VEC4(ulonglong4_16a, unsigned long long, 16)
RK_SHIM_VEC4(ulonglong4_32a, unsigned long long, 32)
RK_SHIM_VEC4(double4_16a, double, 16)
RK_SHIM_VEC4(double4_32a, double, 32)

// uint1..uint4 are spelled out: uint3 is the type of threadIdx and dim3
// converts to and from it.
RK_SHIM_VEC1(uint1, unsigned int)
RK_SHIM_VEC2(uint2, unsigned int, 8)
RK_SHIM_VEC3(uint3, unsigned int)
RK_SHIM_VEC4(uint4, unsigned int, 16)

struct dim3 {
  unsigned int x, y, z;
  constexpr dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1) : x(vx), y(vy), z(vz) {}
  constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
  constexpr operator uint3() const { return uint3{x, y, z}; }
};

#define RK_SHIM_MAKE1(T, E) T make_##T(E x);
#define RK_SHIM_MAKE2(T, E) T make_##T(E x, E y);
#define RK_SHIM_MAKE3(T, E) T make_##T(E x, E y, E z);
#define RK_SHIM_MAKE4(T, E) T make_##T(E x, E y, E z, E w);
#define RK_SHIM_MAKE_ALL(P, E) \
  RK_SHIM_MAKE1(P##1, E)       \
  RK_SHIM_MAKE2(P##2, E)       \
  RK_SHIM_MAKE3(P##3, E)       \
  RK_SHIM_MAKE4(P##4, E)

RK_SHIM_MAKE_ALL(char, signed char)
RK_SHIM_MAKE_ALL(uchar, unsigned char)
RK_SHIM_MAKE_ALL(short, short)
RK_SHIM_MAKE_ALL(ushort, unsigned short)
RK_SHIM_MAKE_ALL(int, int)
RK_SHIM_MAKE_ALL(uint, unsigned int)
RK_SHIM_MAKE_ALL(long, long)
RK_SHIM_MAKE_ALL(ulong, unsigned long)
RK_SHIM_MAKE_ALL(longlong, long long)
RK_SHIM_MAKE_ALL(ulonglong, unsigned long long)
RK_SHIM_MAKE_ALL(float, float)
RK_SHIM_MAKE_ALL(double, double)

// ---------------------------------------------------------------------------
// Built-in variables.
extern const uint3 threadIdx;
extern const uint3 blockIdx;
extern const dim3 blockDim;
extern const dim3 gridDim;
extern const int warpSize;

// ---------------------------------------------------------------------------
// Barriers, fences, timing, traps.
void __syncthreads();
int __syncthreads_count(int predicate);
int __syncthreads_and(int predicate);
int __syncthreads_or(int predicate);
void __syncwarp(unsigned int mask = 0xffffffffu);
void __threadfence();
void __threadfence_block();
void __threadfence_system();
void __nanosleep(unsigned int ns);
void __trap();
void __brkpt();
void __prof_trigger(int counter);
clock_t clock();
long long clock64();
unsigned int __isGlobal(const void* p);
unsigned int __isShared(const void* p);
unsigned int __isConstant(const void* p);
unsigned int __isLocal(const void* p);
size_t __cvta_generic_to_shared(const void* p);
size_t __cvta_generic_to_global(const void* p);
void* __cvta_shared_to_generic(size_t p);
void* __cvta_global_to_generic(size_t p);

// ---------------------------------------------------------------------------
// Warp functions.
unsigned int __activemask();
unsigned int __ballot_sync(unsigned int mask, int predicate);
int __any_sync(unsigned int mask, int predicate);
int __all_sync(unsigned int mask, int predicate);
int __uni_sync(unsigned int mask, int predicate);

#define RK_SHIM_SHFL(T)                                                             \
  T __shfl_sync(unsigned int mask, T var, int src_lane, int width = 32);            \
  T __shfl_up_sync(unsigned int mask, T var, unsigned int delta, int width = 32);   \
  T __shfl_down_sync(unsigned int mask, T var, unsigned int delta, int width = 32); \
  T __shfl_xor_sync(unsigned int mask, T var, int lane_mask, int width = 32);       \
  unsigned int __match_any_sync(unsigned int mask, T value);                        \
  unsigned int __match_all_sync(unsigned int mask, T value, int* pred);
RK_SHIM_SHFL(int)
RK_SHIM_SHFL(unsigned int)
RK_SHIM_SHFL(long)
RK_SHIM_SHFL(unsigned long)
RK_SHIM_SHFL(long long)
RK_SHIM_SHFL(unsigned long long)
RK_SHIM_SHFL(float)
RK_SHIM_SHFL(double)

unsigned int __reduce_add_sync(unsigned int mask, unsigned int value);
int __reduce_add_sync(unsigned int mask, int value);
unsigned int __reduce_min_sync(unsigned int mask, unsigned int value);
int __reduce_min_sync(unsigned int mask, int value);
unsigned int __reduce_max_sync(unsigned int mask, unsigned int value);
int __reduce_max_sync(unsigned int mask, int value);
unsigned int __reduce_and_sync(unsigned int mask, unsigned int value);
unsigned int __reduce_or_sync(unsigned int mask, unsigned int value);
unsigned int __reduce_xor_sync(unsigned int mask, unsigned int value);

// ---------------------------------------------------------------------------
// Integer and bit intrinsics.
int __popc(unsigned int x);
int __popcll(unsigned long long x);
int __clz(int x);
int __clzll(long long x);
int __ffs(int x);
int __ffsll(long long x);
unsigned int __brev(unsigned int x);
unsigned long long __brevll(unsigned long long x);
unsigned int __byte_perm(unsigned int x, unsigned int y, unsigned int s);
unsigned int __funnelshift_l(unsigned int lo, unsigned int hi, unsigned int shift);
unsigned int __funnelshift_lc(unsigned int lo, unsigned int hi, unsigned int shift);
unsigned int __funnelshift_r(unsigned int lo, unsigned int hi, unsigned int shift);
unsigned int __funnelshift_rc(unsigned int lo, unsigned int hi, unsigned int shift);
int __mulhi(int x, int y);
unsigned int __umulhi(unsigned int x, unsigned int y);
long long __mul64hi(long long x, long long y);
unsigned long long __umul64hi(unsigned long long x, unsigned long long y);
int __mul24(int x, int y);
unsigned int __umul24(unsigned int x, unsigned int y);
int __hadd(int x, int y);
int __rhadd(int x, int y);
unsigned int __uhadd(unsigned int x, unsigned int y);
unsigned int __urhadd(unsigned int x, unsigned int y);
unsigned int __sad(int x, int y, unsigned int z);
unsigned int __usad(unsigned int x, unsigned int y, unsigned int z);
int __dp4a(int srcA, int srcB, int c);
unsigned int __dp4a(unsigned int srcA, unsigned int srcB, unsigned int c);
int __dp2a_lo(int srcA, int srcB, int c);
unsigned int __dp2a_lo(unsigned int srcA, unsigned int srcB, unsigned int c);
int __dp2a_hi(int srcA, int srcB, int c);
unsigned int __dp2a_hi(unsigned int srcA, unsigned int srcB, unsigned int c);
int abs(int x);
long labs(long x);
long long llabs(long long x);
long abs(long x);
long long abs(long long x);

#define RK_SHIM_SIMD2(NAME)                             \
  unsigned int NAME##2(unsigned int a, unsigned int b); \
  unsigned int NAME##4(unsigned int a, unsigned int b);
RK_SHIM_SIMD2(__vadd)
RK_SHIM_SIMD2(__vaddss)
RK_SHIM_SIMD2(__vaddus)
RK_SHIM_SIMD2(__vsub)
RK_SHIM_SIMD2(__vsubss)
RK_SHIM_SIMD2(__vsubus)
RK_SHIM_SIMD2(__vabsdiffs)
RK_SHIM_SIMD2(__vabsdiffu)
RK_SHIM_SIMD2(__vavgs)
RK_SHIM_SIMD2(__vavgu)
RK_SHIM_SIMD2(__vhaddu)
RK_SHIM_SIMD2(__vmaxs)
RK_SHIM_SIMD2(__vmaxu)
RK_SHIM_SIMD2(__vmins)
RK_SHIM_SIMD2(__vminu)
RK_SHIM_SIMD2(__vsads)
RK_SHIM_SIMD2(__vsadu)
RK_SHIM_SIMD2(__vseteq)
RK_SHIM_SIMD2(__vsetne)
RK_SHIM_SIMD2(__vsetges)
RK_SHIM_SIMD2(__vsetgeu)
RK_SHIM_SIMD2(__vsetgts)
RK_SHIM_SIMD2(__vsetgtu)
RK_SHIM_SIMD2(__vsetles)
RK_SHIM_SIMD2(__vsetleu)
RK_SHIM_SIMD2(__vsetlts)
RK_SHIM_SIMD2(__vsetltu)
RK_SHIM_SIMD2(__vcmpeq)
RK_SHIM_SIMD2(__vcmpne)
RK_SHIM_SIMD2(__vcmpges)
RK_SHIM_SIMD2(__vcmpgeu)
RK_SHIM_SIMD2(__vcmpgts)
RK_SHIM_SIMD2(__vcmpgtu)
RK_SHIM_SIMD2(__vcmples)
RK_SHIM_SIMD2(__vcmpleu)
RK_SHIM_SIMD2(__vcmplts)
RK_SHIM_SIMD2(__vcmpltu)
unsigned int __vabs2(unsigned int a);
unsigned int __vabs4(unsigned int a);
unsigned int __vabsss2(unsigned int a);
unsigned int __vabsss4(unsigned int a);
unsigned int __vneg2(unsigned int a);
unsigned int __vneg4(unsigned int a);
unsigned int __vnegss2(unsigned int a);
unsigned int __vnegss4(unsigned int a);

// ---------------------------------------------------------------------------
// Type punning and conversions.
int __float_as_int(float x);
float __int_as_float(int x);
unsigned int __float_as_uint(float x);
float __uint_as_float(unsigned int x);
long long __double_as_longlong(double x);
double __longlong_as_double(long long x);
int __double2hiint(double x);
int __double2loint(double x);
double __hiloint2double(int hi, int lo);

#define RK_SHIM_CVT4(NAME, FROM, TO) \
  TO NAME##_rn(FROM x);              \
  TO NAME##_rz(FROM x);              \
  TO NAME##_ru(FROM x);              \
  TO NAME##_rd(FROM x);
RK_SHIM_CVT4(__float2int, float, int)
RK_SHIM_CVT4(__float2uint, float, unsigned int)
RK_SHIM_CVT4(__float2ll, float, long long)
RK_SHIM_CVT4(__float2ull, float, unsigned long long)
RK_SHIM_CVT4(__double2int, double, int)
RK_SHIM_CVT4(__double2uint, double, unsigned int)
RK_SHIM_CVT4(__double2ll, double, long long)
RK_SHIM_CVT4(__double2ull, double, unsigned long long)
RK_SHIM_CVT4(__double2float, double, float)
RK_SHIM_CVT4(__int2float, int, float)
RK_SHIM_CVT4(__uint2float, unsigned int, float)
RK_SHIM_CVT4(__ll2float, long long, float)
RK_SHIM_CVT4(__ull2float, unsigned long long, float)
RK_SHIM_CVT4(__ll2double, long long, double)
RK_SHIM_CVT4(__ull2double, unsigned long long, double)
double __int2double_rn(int x);
double __uint2double_rn(unsigned int x);

// ---------------------------------------------------------------------------
// Loads and stores with cache hints.
#define RK_SHIM_LDST(T)   \
  T __ldg(const T* p);    \
  T __ldcg(const T* p);   \
  T __ldca(const T* p);   \
  T __ldcs(const T* p);   \
  T __ldlu(const T* p);   \
  T __ldcv(const T* p);   \
  void __stwb(T* p, T v); \
  void __stcg(T* p, T v); \
  void __stcs(T* p, T v); \
  void __stwt(T* p, T v);
RK_SHIM_LDST(char)
RK_SHIM_LDST(signed char)
RK_SHIM_LDST(unsigned char)
RK_SHIM_LDST(short)
RK_SHIM_LDST(unsigned short)
RK_SHIM_LDST(int)
RK_SHIM_LDST(unsigned int)
RK_SHIM_LDST(long)
RK_SHIM_LDST(unsigned long)
RK_SHIM_LDST(long long)
RK_SHIM_LDST(unsigned long long)
RK_SHIM_LDST(float)
RK_SHIM_LDST(double)
RK_SHIM_LDST(char2)
RK_SHIM_LDST(char4)
RK_SHIM_LDST(uchar2)
RK_SHIM_LDST(uchar4)
RK_SHIM_LDST(short2)
RK_SHIM_LDST(short4)
RK_SHIM_LDST(ushort2)
RK_SHIM_LDST(ushort4)
RK_SHIM_LDST(int2)
RK_SHIM_LDST(int4)
RK_SHIM_LDST(uint2)
RK_SHIM_LDST(uint4)
RK_SHIM_LDST(longlong2)
RK_SHIM_LDST(ulonglong2)
RK_SHIM_LDST(float2)
RK_SHIM_LDST(float4)
RK_SHIM_LDST(double2)

// ---------------------------------------------------------------------------
// Atomics. Each comes in the device-scope form and the `_block` and
// `_system` variants.
#define RK_SHIM_ATOMIC_SCOPES(R, NAME, PARAMS) \
  R NAME PARAMS;                               \
  R NAME##_block PARAMS;                       \
  R NAME##_system PARAMS;

#define RK_SHIM_ATOMIC_RMW(NAME, T) RK_SHIM_ATOMIC_SCOPES(T, NAME, (T * address, T val))
RK_SHIM_ATOMIC_RMW(atomicAdd, int)
RK_SHIM_ATOMIC_RMW(atomicAdd, unsigned int)
RK_SHIM_ATOMIC_RMW(atomicAdd, unsigned long long)
RK_SHIM_ATOMIC_RMW(atomicAdd, float)
RK_SHIM_ATOMIC_RMW(atomicAdd, double)
RK_SHIM_ATOMIC_RMW(atomicAdd, float2)
RK_SHIM_ATOMIC_RMW(atomicAdd, float4)
RK_SHIM_ATOMIC_RMW(atomicSub, int)
RK_SHIM_ATOMIC_RMW(atomicSub, unsigned int)
RK_SHIM_ATOMIC_RMW(atomicExch, int)
RK_SHIM_ATOMIC_RMW(atomicExch, unsigned int)
RK_SHIM_ATOMIC_RMW(atomicExch, unsigned long long)
RK_SHIM_ATOMIC_RMW(atomicExch, float)
RK_SHIM_ATOMIC_RMW(atomicMin, int)
RK_SHIM_ATOMIC_RMW(atomicMin, unsigned int)
RK_SHIM_ATOMIC_RMW(atomicMin, long long)
RK_SHIM_ATOMIC_RMW(atomicMin, unsigned long long)
RK_SHIM_ATOMIC_RMW(atomicMax, int)
RK_SHIM_ATOMIC_RMW(atomicMax, unsigned int)
RK_SHIM_ATOMIC_RMW(atomicMax, long long)
RK_SHIM_ATOMIC_RMW(atomicMax, unsigned long long)
RK_SHIM_ATOMIC_RMW(atomicInc, unsigned int)
RK_SHIM_ATOMIC_RMW(atomicDec, unsigned int)
RK_SHIM_ATOMIC_RMW(atomicAnd, int)
RK_SHIM_ATOMIC_RMW(atomicAnd, unsigned int)
RK_SHIM_ATOMIC_RMW(atomicAnd, unsigned long long)
RK_SHIM_ATOMIC_RMW(atomicOr, int)
RK_SHIM_ATOMIC_RMW(atomicOr, unsigned int)
RK_SHIM_ATOMIC_RMW(atomicOr, unsigned long long)
RK_SHIM_ATOMIC_RMW(atomicXor, int)
RK_SHIM_ATOMIC_RMW(atomicXor, unsigned int)
RK_SHIM_ATOMIC_RMW(atomicXor, unsigned long long)

#define RK_SHIM_ATOMIC_CAS(T) RK_SHIM_ATOMIC_SCOPES(T, atomicCAS, (T * address, T compare, T val))
RK_SHIM_ATOMIC_CAS(int)
RK_SHIM_ATOMIC_CAS(unsigned int)
RK_SHIM_ATOMIC_CAS(unsigned long long)
RK_SHIM_ATOMIC_CAS(unsigned short)

// ---------------------------------------------------------------------------
// The C library subset NVRTC provides.
extern "C" {
int printf(const char* format, ...);
void* malloc(size_t size);
void free(void* p);
void* memcpy(void* dst, const void* src, size_t n);
void* memset(void* dst, int value, size_t n);
void __assertfail(const char* message, const char* file, unsigned int line, const char* function, size_t char_size);
void __assert_fail(const char* message, const char* file, unsigned int line, const char* function);
}
#define assert(e) ((e) ? (void)0 : __assertfail(#e, __FILE__, __LINE__, __func__, sizeof(char)))

// ---------------------------------------------------------------------------
// min and max, with the mixed signed/unsigned overloads CUDA adds.
#define RK_SHIM_MINMAX(A, B, R) \
  R min(A a, B b);              \
  R max(A a, B b);
RK_SHIM_MINMAX(int, int, int)
RK_SHIM_MINMAX(unsigned int, unsigned int, unsigned int)
RK_SHIM_MINMAX(int, unsigned int, unsigned int)
RK_SHIM_MINMAX(unsigned int, int, unsigned int)
RK_SHIM_MINMAX(long, long, long)
RK_SHIM_MINMAX(unsigned long, unsigned long, unsigned long)
RK_SHIM_MINMAX(long, unsigned long, unsigned long)
RK_SHIM_MINMAX(unsigned long, long, unsigned long)
RK_SHIM_MINMAX(long long, long long, long long)
RK_SHIM_MINMAX(unsigned long long, unsigned long long, unsigned long long)
RK_SHIM_MINMAX(long long, unsigned long long, unsigned long long)
RK_SHIM_MINMAX(unsigned long long, long long, unsigned long long)
RK_SHIM_MINMAX(float, float, float)
RK_SHIM_MINMAX(double, double, double)
RK_SHIM_MINMAX(float, double, double)
RK_SHIM_MINMAX(double, float, double)
unsigned int umin(unsigned int a, unsigned int b);
unsigned int umax(unsigned int a, unsigned int b);
long long llmin(long long a, long long b);
long long llmax(long long a, long long b);
unsigned long long ullmin(unsigned long long a, unsigned long long b);
unsigned long long ullmax(unsigned long long a, unsigned long long b);

// ---------------------------------------------------------------------------
// Math. Each function of one argument exists as `namef(float)`,
// `name(double)` and, as in CUDA's C++ overloads, `name(float)`.
#define RK_SHIM_MATH1(NAME) \
  float NAME##f(float x);   \
  double NAME(double x);    \
  float NAME(float x);
#define RK_SHIM_MATH2(NAME)        \
  float NAME##f(float x, float y); \
  double NAME(double x, double y); \
  float NAME(float x, float y);
#define RK_SHIM_MATH3(NAME)                  \
  float NAME##f(float x, float y, float z);  \
  double NAME(double x, double y, double z); \
  float NAME(float x, float y, float z);

RK_SHIM_MATH1(sqrt)
RK_SHIM_MATH1(rsqrt)
RK_SHIM_MATH1(cbrt)
RK_SHIM_MATH1(rcbrt)
RK_SHIM_MATH1(exp)
RK_SHIM_MATH1(exp2)
RK_SHIM_MATH1(exp10)
RK_SHIM_MATH1(expm1)
RK_SHIM_MATH1(log)
RK_SHIM_MATH1(log2)
RK_SHIM_MATH1(log10)
RK_SHIM_MATH1(log1p)
RK_SHIM_MATH1(logb)
RK_SHIM_MATH1(sin)
RK_SHIM_MATH1(cos)
RK_SHIM_MATH1(tan)
RK_SHIM_MATH1(sinpi)
RK_SHIM_MATH1(cospi)
RK_SHIM_MATH1(asin)
RK_SHIM_MATH1(acos)
RK_SHIM_MATH1(atan)
RK_SHIM_MATH1(sinh)
RK_SHIM_MATH1(cosh)
RK_SHIM_MATH1(tanh)
RK_SHIM_MATH1(asinh)
RK_SHIM_MATH1(acosh)
RK_SHIM_MATH1(atanh)
RK_SHIM_MATH1(fabs)
RK_SHIM_MATH1(floor)
RK_SHIM_MATH1(ceil)
RK_SHIM_MATH1(round)
RK_SHIM_MATH1(trunc)
RK_SHIM_MATH1(rint)
RK_SHIM_MATH1(nearbyint)
RK_SHIM_MATH1(erf)
RK_SHIM_MATH1(erfc)
RK_SHIM_MATH1(erfinv)
RK_SHIM_MATH1(erfcinv)
RK_SHIM_MATH1(erfcx)
RK_SHIM_MATH1(normcdf)
RK_SHIM_MATH1(normcdfinv)
RK_SHIM_MATH1(lgamma)
RK_SHIM_MATH1(tgamma)
RK_SHIM_MATH1(j0)
RK_SHIM_MATH1(j1)
RK_SHIM_MATH1(y0)
RK_SHIM_MATH1(y1)
RK_SHIM_MATH1(cyl_bessel_i0)
RK_SHIM_MATH1(cyl_bessel_i1)
RK_SHIM_MATH2(pow)
RK_SHIM_MATH2(atan2)
RK_SHIM_MATH2(fmin)
RK_SHIM_MATH2(fmax)
RK_SHIM_MATH2(fmod)
RK_SHIM_MATH2(remainder)
RK_SHIM_MATH2(hypot)
RK_SHIM_MATH2(rhypot)
RK_SHIM_MATH2(fdim)
RK_SHIM_MATH2(copysign)
RK_SHIM_MATH2(nextafter)
RK_SHIM_MATH3(fma)
RK_SHIM_MATH3(norm3d)
RK_SHIM_MATH3(rnorm3d)

float norm4df(float a, float b, float c, float d);
double norm4d(double a, double b, double c, double d);
float rnorm4df(float a, float b, float c, float d);
double rnorm4d(double a, double b, double c, double d);
float normf(int dim, const float* p);
double norm(int dim, const double* p);
float rnormf(int dim, const float* p);
double rnorm(int dim, const double* p);
void sincosf(float x, float* s, float* c);
void sincos(double x, double* s, double* c);
void sincospif(float x, float* s, float* c);
void sincospi(double x, double* s, double* c);
float frexpf(float x, int* e);
double frexp(double x, int* e);
float ldexpf(float x, int e);
double ldexp(double x, int e);
float scalbnf(float x, int n);
double scalbn(double x, int n);
float scalblnf(float x, long n);
double scalbln(double x, long n);
float modff(float x, float* i);
double modf(double x, double* i);
float remquof(float x, float y, int* q);
double remquo(double x, double y, int* q);
float nanf(const char* tag);
double nan(const char* tag);
int ilogbf(float x);
int ilogb(double x);
long lrintf(float x);
long lrint(double x);
long long llrintf(float x);
long long llrint(double x);
long lroundf(float x);
long lround(double x);
long long llroundf(float x);
long long llround(double x);
float jnf(int n, float x);
double jn(int n, double x);
float ynf(int n, float x);
double yn(int n, double x);
float fdividef(float x, float y);
float abs(float x);
double abs(double x);

bool isnan(float x);
bool isnan(double x);
bool isinf(float x);
bool isinf(double x);
bool isfinite(float x);
bool isfinite(double x);
bool signbit(float x);
bool signbit(double x);
int __isnanf(float x);
int __isnan(double x);
int __isinff(float x);
int __isinf(double x);
int __finitef(float x);
int __isfinited(double x);
int __signbitf(float x);
int __signbitd(double x);

#define INFINITY (__builtin_inff())
#define NAN (__builtin_nanf(""))
#define HUGE_VALF (__builtin_huge_valf())
#define HUGE_VAL (__builtin_huge_val())

// Fast (approximate) intrinsics and the explicitly rounded operations.
float __expf(float x);
float __exp10f(float x);
float __logf(float x);
float __log2f(float x);
float __log10f(float x);
float __sinf(float x);
float __cosf(float x);
float __tanf(float x);
void __sincosf(float x, float* s, float* c);
float __powf(float x, float y);
float __fdividef(float x, float y);
float __saturatef(float x);
float __frcp_rn(float x);
float __frcp_rz(float x);
float __frcp_ru(float x);
float __frcp_rd(float x);
float __fsqrt_rn(float x);
float __fsqrt_rz(float x);
float __fsqrt_ru(float x);
float __fsqrt_rd(float x);
float __frsqrt_rn(float x);
double __drcp_rn(double x);
double __drcp_rz(double x);
double __drcp_ru(double x);
double __drcp_rd(double x);
double __dsqrt_rn(double x);
double __dsqrt_rz(double x);
double __dsqrt_ru(double x);
double __dsqrt_rd(double x);

#define RK_SHIM_ROUNDED2(NAME, T) \
  T NAME##_rn(T x, T y);          \
  T NAME##_rz(T x, T y);          \
  T NAME##_ru(T x, T y);          \
  T NAME##_rd(T x, T y);
#define RK_SHIM_ROUNDED3(NAME, T) \
  T NAME##_rn(T x, T y, T z);     \
  T NAME##_rz(T x, T y, T z);     \
  T NAME##_ru(T x, T y, T z);     \
  T NAME##_rd(T x, T y, T z);
RK_SHIM_ROUNDED2(__fadd, float)
RK_SHIM_ROUNDED2(__fsub, float)
RK_SHIM_ROUNDED2(__fmul, float)
RK_SHIM_ROUNDED2(__fdiv, float)
RK_SHIM_ROUNDED3(__fmaf, float)
RK_SHIM_ROUNDED2(__dadd, double)
RK_SHIM_ROUNDED2(__dsub, double)
RK_SHIM_ROUNDED2(__dmul, double)
RK_SHIM_ROUNDED2(__ddiv, double)
RK_SHIM_ROUNDED3(__fma, double)
float __fmaf_ieee_rn(float x, float y, float z);

// The helper macros above are the shim's own: fragments never see them.
#undef RK_SHIM_VEC1
#undef RK_SHIM_VEC2
#undef RK_SHIM_VEC3
#undef RK_SHIM_VEC4
#undef RK_SHIM_VEC_ALL
#undef RK_SHIM_MAKE1
#undef RK_SHIM_MAKE2
#undef RK_SHIM_MAKE3
#undef RK_SHIM_MAKE4
#undef RK_SHIM_MAKE_ALL
#undef RK_SHIM_SHFL
#undef RK_SHIM_SIMD2
#undef RK_SHIM_CVT4
#undef RK_SHIM_LDST
#undef RK_SHIM_ATOMIC_SCOPES
#undef RK_SHIM_ATOMIC_RMW
#undef RK_SHIM_ATOMIC_CAS
#undef RK_SHIM_MINMAX
#undef RK_SHIM_MATH1
#undef RK_SHIM_MATH2
#undef RK_SHIM_MATH3
#undef RK_SHIM_ROUNDED2
#undef RK_SHIM_ROUNDED3

#endif  // RINGKERNEL_DEVICE_PARSE_SHIM_H_
