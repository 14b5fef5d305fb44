// Copyright 2026 The RingKernel Authors.
//
// config.h: the macros and fixed-width types that every header shared between
// the host compiler (g++), NVRTC and the clang front-end relies on.
//
// The protocol core (`include/ringkernel/device/`) is one source compiled
// three ways:
//   * by g++ for the host runtime and for the CPU tests, where host threads
//     play the part of GPU producers and consumers;
//   * by NVRTC, as part of the one translation unit that holds the user's
//     handlers and the persistent kernel;
//   * by libclang, only to parse handler fragments (`RK_PARSE_ONLY`).
//
// Nothing here may include a standard header when compiled by NVRTC: the
// device headers are embedded in the binary and must compile with no CUDA or
// C++ include path at all.
#ifndef RINGKERNEL_DEVICE_CONFIG_H_
#define RINGKERNEL_DEVICE_CONFIG_H_

#if defined(__CUDACC_RTC__) || defined(RK_PARSE_ONLY)
#define RK_NO_STD_HEADERS 1
#endif

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define RK_HOST_DEVICE __host__ __device__
#define RK_DEVICE __device__
#define RK_FORCEINLINE __forceinline__
#elif defined(RK_PARSE_ONLY)
#define RK_HOST_DEVICE
#define RK_DEVICE
#define RK_FORCEINLINE inline
#else
#define RK_HOST_DEVICE
#define RK_DEVICE
#define RK_FORCEINLINE inline __attribute__((always_inline))
#endif

// True in code that runs on the GPU (NVRTC's device pass), false on the host
// and while the clang front-end parses fragments.
#if defined(__CUDA_ARCH__) && !defined(RK_PARSE_ONLY)
#define RK_ON_DEVICE 1
#else
#define RK_ON_DEVICE 0
#endif

// Unrolls the loop that follows where the compiler knows the pragma (the
// device pass), so that arrays indexed by its counter stay in registers.
#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define RK_UNROLL _Pragma("unroll")
#else
#define RK_UNROLL
#endif

#if !defined(RK_NO_STD_HEADERS)
#include <cstddef>
#include <cstdint>
#endif

// Layout assertions on field offsets. NVRTC has no compile-time offsetof, so
// there the check is left to the host compiler, which compiles the same
// declarations (sizes and alignments are asserted in every compiler).
#if defined(__CUDACC_RTC__)
#define RK_ASSERT_OFFSET(type, field, value) static_assert(true, "")
#else
#define RK_ASSERT_OFFSET(type, field, value) \
  static_assert(__builtin_offsetof(type, field) == (value), #type "::" #field " is at " #value)
#endif

namespace rk {

using u8 = unsigned char;
using u16 = unsigned short;
using u32 = unsigned int;
using u64 = unsigned long long;
using i32 = int;
using i64 = long long;

static_assert(sizeof(u8) == 1, "u8");
static_assert(sizeof(u16) == 2, "u16");
static_assert(sizeof(u32) == 4, "u32");
static_assert(sizeof(u64) == 8, "u64");
static_assert(sizeof(i64) == 8, "i64");
static_assert(sizeof(void*) == 8, "RingKernel needs a 64-bit address space");

// One cache line of the GPU's L2 and the unit of PCIe coherence we design
// around: every index with a single writer lives alone on one of these.
inline constexpr u32 kLineBytes = 128;

// Rounds `v` up to a multiple of `a` (a power of two).
RK_HOST_DEVICE constexpr u64 AlignUp(u64 v, u64 a) { return (v + a - 1) & ~(a - 1); }

RK_HOST_DEVICE constexpr bool IsPowerOfTwo(u64 v) { return v != 0 && (v & (v - 1)) == 0; }

RK_HOST_DEVICE constexpr u32 Log2(u64 v) {
  u32 r = 0;
  while (v > 1) {
    v >>= 1;
    ++r;
  }
  return r;
}

}  // namespace rk

#endif  // RINGKERNEL_DEVICE_CONFIG_H_
