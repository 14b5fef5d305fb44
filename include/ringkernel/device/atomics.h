// Copyright 2026 The RingKernel Authors.
//
// atomics.h: the memory operations the protocol core is written in.
//
// Each function names its ordering and, on the GPU, its scope:
//   * `Gpu` functions order accesses among GPU threads (device memory:
//     mailboxes, tables, counters);
//   * `Sys` functions order accesses between the GPU and the host (mapped
//     pinned memory: the host rings and the control blocks).
// On the host both compile to the same GCC `__atomic` builtins, which
// ThreadSanitizer understands; that is how the CPU tests drive the exact
// algorithms the GPU runs.
//
// Example:
//   rk::u64 seq = rk::LoadAcquireGpu(&slot->seq);
//   if (seq == pos + 1) { ...read the payload...; rk::StoreReleaseGpu(&head, pos + 1); }
#ifndef RINGKERNEL_DEVICE_ATOMICS_H_
#define RINGKERNEL_DEVICE_ATOMICS_H_

#include "ringkernel/device/config.h"

// ThreadSanitizer builds of the host code (the CPU tests).
#if !defined(RK_TSAN)
#if defined(__SANITIZE_THREAD__)
#define RK_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define RK_TSAN 1
#endif
#endif
#endif
#if !RK_ON_DEVICE && defined(__x86_64__) && defined(__SSE2__) && !defined(RK_TSAN) && !defined(RK_NO_STD_HEADERS)
#include <immintrin.h>
#endif

namespace rk {

#if RK_ON_DEVICE

RK_DEVICE RK_FORCEINLINE u64 LoadRelaxedGpu(const u64* p) {
  u64 v;
  asm volatile("ld.relaxed.gpu.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}
RK_DEVICE RK_FORCEINLINE u64 LoadAcquireGpu(const u64* p) {
  u64 v;
  asm volatile("ld.acquire.gpu.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}
RK_DEVICE RK_FORCEINLINE u32 LoadAcquireGpu32(const u32* p) {
  u32 v;
  asm volatile("ld.acquire.gpu.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
RK_DEVICE RK_FORCEINLINE u32 LoadRelaxedGpu32(const u32* p) {
  u32 v;
  asm volatile("ld.relaxed.gpu.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
RK_DEVICE RK_FORCEINLINE void StoreRelaxedGpu(u64* p, u64 v) {
  asm volatile("st.relaxed.gpu.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
RK_DEVICE RK_FORCEINLINE void StoreReleaseGpu(u64* p, u64 v) {
  asm volatile("st.release.gpu.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
RK_DEVICE RK_FORCEINLINE void StoreReleaseGpu32(u32* p, u32 v) {
  asm volatile("st.release.gpu.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
RK_DEVICE RK_FORCEINLINE void StoreRelaxedGpu32(u32* p, u32 v) {
  asm volatile("st.relaxed.gpu.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
RK_DEVICE RK_FORCEINLINE u64 FetchAddGpu(u64* p, u64 v) {
  u64 old;
  asm volatile("atom.relaxed.gpu.add.u64 %0, [%1], %2;" : "=l"(old) : "l"(p), "l"(v) : "memory");
  return old;
}
RK_DEVICE RK_FORCEINLINE u64 CompareExchangeGpu(u64* p, u64 expected, u64 desired) {
  u64 old;
  asm volatile("atom.relaxed.gpu.cas.b64 %0, [%1], %2, %3;"
               : "=l"(old)
               : "l"(p), "l"(expected), "l"(desired)
               : "memory");
  return old;
}
RK_DEVICE RK_FORCEINLINE u64 CompareExchangeAcqRelGpu(u64* p, u64 expected, u64 desired) {
  u64 old;
  asm volatile("atom.acq_rel.gpu.cas.b64 %0, [%1], %2, %3;"
               : "=l"(old)
               : "l"(p), "l"(expected), "l"(desired)
               : "memory");
  return old;
}
RK_DEVICE RK_FORCEINLINE void FenceGpu() { asm volatile("fence.acq_rel.gpu;" ::: "memory"); }
// After a relaxed load that saw a release store: makes it an acquire without
// waiting for this thread's own earlier stores, as fence.acq_rel would.
RK_DEVICE RK_FORCEINLINE void FenceAcquireGpu() { asm volatile("fence.acquire.gpu;" ::: "memory"); }

// Block scope, for counters in a worker block's shared memory that only its
// own threads touch (`p` must point into shared memory): shared-memory
// instructions, and an acquire that needs no invalidation of the L1, which
// a Gpu-scope acquire does.
RK_DEVICE RK_FORCEINLINE u32 SharedAddress(const void* p) { return static_cast<u32>(__cvta_generic_to_shared(p)); }
RK_DEVICE RK_FORCEINLINE u64 LoadRelaxedCta(const u64* p) {
  u64 v;
  asm volatile("ld.relaxed.cta.shared.u64 %0, [%1];" : "=l"(v) : "r"(SharedAddress(p)) : "memory");
  return v;
}
RK_DEVICE RK_FORCEINLINE u64 LoadAcquireCta(const u64* p) {
  u64 v;
  asm volatile("ld.acquire.cta.shared.u64 %0, [%1];" : "=l"(v) : "r"(SharedAddress(p)) : "memory");
  return v;
}
RK_DEVICE RK_FORCEINLINE u64 CompareExchangeCta(u64* p, u64 expected, u64 desired) {
  u64 old;
  asm volatile("atom.relaxed.cta.shared.cas.b64 %0, [%1], %2, %3;"
               : "=l"(old)
               : "r"(SharedAddress(p)), "l"(expected), "l"(desired)
               : "memory");
  return old;
}
RK_DEVICE RK_FORCEINLINE u64 CompareExchangeAcqRelCta(u64* p, u64 expected, u64 desired) {
  u64 old;
  asm volatile("atom.acq_rel.cta.shared.cas.b64 %0, [%1], %2, %3;"
               : "=l"(old)
               : "r"(SharedAddress(p)), "l"(expected), "l"(desired)
               : "memory");
  return old;
}

RK_DEVICE RK_FORCEINLINE u64 LoadRelaxedSys(const u64* p) {
  u64 v;
  asm volatile("ld.relaxed.sys.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}
RK_DEVICE RK_FORCEINLINE u64 LoadAcquireSys(const u64* p) {
  u64 v;
  asm volatile("ld.acquire.sys.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}
// Two independent 8-byte loads in one instruction; each element is read
// whole (single-copy atomic), the pair is not.
RK_DEVICE RK_FORCEINLINE void LoadRelaxedSysPair(const u64* p, u64* a, u64* b) {
  asm volatile("ld.relaxed.sys.v2.u64 {%0, %1}, [%2];" : "=l"(*a), "=l"(*b) : "l"(p) : "memory");
}
RK_DEVICE RK_FORCEINLINE void StoreRelaxedSys(u64* p, u64 v) {
  asm volatile("st.relaxed.sys.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
RK_DEVICE RK_FORCEINLINE void StoreRelaxedSysPair(u64* p, u64 a, u64 b) {
  asm volatile("st.relaxed.sys.v2.u64 [%0], {%1, %2};" ::"l"(p), "l"(a), "l"(b) : "memory");
}
RK_DEVICE RK_FORCEINLINE void StoreReleaseSys(u64* p, u64 v) {
  asm volatile("st.release.sys.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
RK_DEVICE RK_FORCEINLINE void FenceSys() { asm volatile("fence.acq_rel.sys;" ::: "memory"); }

#else  // Host (and the front-end's parse): GCC atomics, seen by ThreadSanitizer.

RK_FORCEINLINE u64 LoadRelaxedGpu(const u64* p) { return __atomic_load_n(p, __ATOMIC_RELAXED); }
RK_FORCEINLINE u64 LoadAcquireGpu(const u64* p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
RK_FORCEINLINE u32 LoadAcquireGpu32(const u32* p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
RK_FORCEINLINE u32 LoadRelaxedGpu32(const u32* p) { return __atomic_load_n(p, __ATOMIC_RELAXED); }
RK_FORCEINLINE void StoreRelaxedGpu(u64* p, u64 v) { __atomic_store_n(p, v, __ATOMIC_RELAXED); }
RK_FORCEINLINE void StoreReleaseGpu(u64* p, u64 v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
RK_FORCEINLINE void StoreReleaseGpu32(u32* p, u32 v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
RK_FORCEINLINE void StoreRelaxedGpu32(u32* p, u32 v) { __atomic_store_n(p, v, __ATOMIC_RELAXED); }
RK_FORCEINLINE u64 FetchAddGpu(u64* p, u64 v) { return __atomic_fetch_add(p, v, __ATOMIC_RELAXED); }
RK_FORCEINLINE u64 CompareExchangeGpu(u64* p, u64 expected, u64 desired) {
  __atomic_compare_exchange_n(p, &expected, desired, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
  return expected;  // the value found, as atom.cas returns it
}
RK_FORCEINLINE u64 CompareExchangeAcqRelGpu(u64* p, u64 expected, u64 desired) {
  __atomic_compare_exchange_n(p, &expected, desired, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
  return expected;
}
RK_FORCEINLINE void FenceGpu() { __atomic_thread_fence(__ATOMIC_ACQ_REL); }
RK_FORCEINLINE void FenceAcquireGpu() { __atomic_thread_fence(__ATOMIC_ACQUIRE); }

RK_FORCEINLINE u64 LoadRelaxedCta(const u64* p) { return __atomic_load_n(p, __ATOMIC_RELAXED); }
RK_FORCEINLINE u64 LoadAcquireCta(const u64* p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
RK_FORCEINLINE u64 CompareExchangeCta(u64* p, u64 expected, u64 desired) {
  __atomic_compare_exchange_n(p, &expected, desired, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
  return expected;
}
RK_FORCEINLINE u64 CompareExchangeAcqRelCta(u64* p, u64 expected, u64 desired) {
  __atomic_compare_exchange_n(p, &expected, desired, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
  return expected;
}

RK_FORCEINLINE u64 LoadRelaxedSys(const u64* p) { return __atomic_load_n(p, __ATOMIC_RELAXED); }
RK_FORCEINLINE u64 LoadAcquireSys(const u64* p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
RK_FORCEINLINE void LoadRelaxedSysPair(const u64* p, u64* a, u64* b) {
  *a = __atomic_load_n(p, __ATOMIC_RELAXED);
  *b = __atomic_load_n(p + 1, __ATOMIC_RELAXED);
}
RK_FORCEINLINE void StoreRelaxedSys(u64* p, u64 v) { __atomic_store_n(p, v, __ATOMIC_RELAXED); }
RK_FORCEINLINE void StoreRelaxedSysPair(u64* p, u64 a, u64 b) {
  __atomic_store_n(p, a, __ATOMIC_RELAXED);
  __atomic_store_n(p + 1, b, __ATOMIC_RELAXED);
}
RK_FORCEINLINE void StoreReleaseSys(u64* p, u64 v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
RK_FORCEINLINE void FenceSys() { __atomic_thread_fence(__ATOMIC_ACQ_REL); }

// Streamed stores (host only): how the one writer of a host → worker ring
// stores a record (ll_ring.h, LlStreamRecord). On x86 a non-temporal store
// of 16 bytes: it goes to memory through the core's write-combining buffers
// without reading the line for ownership first, so the GPU's polls — which
// read exactly the lines the next record goes to, and so take them from the
// CPU's caches — cost the writer nothing (a cached store waits for each such
// line to come back: bench/NOTES.md, session 15). Each aligned 8-byte word
// lands whole. Streamed stores are not ordered with later stores:
// FenceStreamed makes every earlier one visible before any later store of
// this thread. Under ThreadSanitizer (which follows atomics, not these
// instructions) and off x86, release stores stand in: each is ordered after
// every earlier store, so the fence has nothing left to do.
#if defined(__x86_64__) && defined(__SSE2__) && !defined(RK_TSAN) && !defined(RK_NO_STD_HEADERS)
inline constexpr bool kStreamedStores = true;
RK_FORCEINLINE void StoreStreamedPair(u64* p, u64 a, u64 b) {
  _mm_stream_si128(reinterpret_cast<__m128i*>(p),
                   _mm_set_epi64x(static_cast<long long>(b), static_cast<long long>(a)));
}
RK_FORCEINLINE void FenceStreamed() { _mm_sfence(); }
// Two LL words made from two data words (`two`: the first in the low half)
// and one flag, streamed as one pair: interleaving the data words with the
// flag (one unpack) gives both words whole, with no shifts or ors per word.
struct StreamedFlag {
  __m128i lanes;
};
RK_FORCEINLINE StreamedFlag MakeStreamedFlag(u32 flag) { return StreamedFlag{_mm_set1_epi32(static_cast<int>(flag))}; }
RK_FORCEINLINE void StoreStreamedLlPair(u64* p, u64 two, StreamedFlag f) {
  _mm_stream_si128(reinterpret_cast<__m128i*>(p),
                   _mm_unpacklo_epi32(_mm_cvtsi64_si128(static_cast<long long>(two)), f.lanes));
}
#else
inline constexpr bool kStreamedStores = false;
RK_FORCEINLINE void StoreStreamedPair(u64* p, u64 a, u64 b) {
  __atomic_store_n(p, a, __ATOMIC_RELEASE);
  __atomic_store_n(p + 1, b, __ATOMIC_RELEASE);
}
RK_FORCEINLINE void FenceStreamed() { __atomic_signal_fence(__ATOMIC_SEQ_CST); }
struct StreamedFlag {
  u64 flagged;
};
RK_FORCEINLINE StreamedFlag MakeStreamedFlag(u32 flag) { return StreamedFlag{static_cast<u64>(flag) << 32}; }
RK_FORCEINLINE void StoreStreamedLlPair(u64* p, u64 two, StreamedFlag f) {
  StoreStreamedPair(p, (two & 0xFFFFFFFFu) | f.flagged, (two >> 32) | f.flagged);
}
#endif

#endif

// The scope of a ring's producer counters, for the algorithms that take it
// as a parameter (ll_ring.h): GpuScope where producers are any GPU threads
// or host threads, CtaScope where they are the threads of one block and the
// counters live in its shared memory (on the host, where the tests drive
// the algorithms, the two are the same).
struct GpuScope {
  static RK_HOST_DEVICE RK_FORCEINLINE u64 LoadRelaxed(const u64* p) { return LoadRelaxedGpu(p); }
  static RK_HOST_DEVICE RK_FORCEINLINE u64 LoadAcquire(const u64* p) { return LoadAcquireGpu(p); }
  static RK_HOST_DEVICE RK_FORCEINLINE u64 Cas(u64* p, u64 e, u64 d) { return CompareExchangeGpu(p, e, d); }
  static RK_HOST_DEVICE RK_FORCEINLINE u64 CasAcqRel(u64* p, u64 e, u64 d) {
    return CompareExchangeAcqRelGpu(p, e, d);
  }
};
struct CtaScope {
  static RK_HOST_DEVICE RK_FORCEINLINE u64 LoadRelaxed(const u64* p) { return LoadRelaxedCta(p); }
  static RK_HOST_DEVICE RK_FORCEINLINE u64 LoadAcquire(const u64* p) { return LoadAcquireCta(p); }
  static RK_HOST_DEVICE RK_FORCEINLINE u64 Cas(u64* p, u64 e, u64 d) { return CompareExchangeCta(p, e, d); }
  static RK_HOST_DEVICE RK_FORCEINLINE u64 CasAcqRel(u64* p, u64 e, u64 d) {
    return CompareExchangeAcqRelCta(p, e, d);
  }
};

// A 64-bit index alone on its cache line: one writer, any number of readers.
struct alignas(kLineBytes) PaddedIndex {
  u64 value;
  u8 pad[kLineBytes - sizeof(u64)];
};
static_assert(sizeof(PaddedIndex) == kLineBytes, "PaddedIndex must fill one line");
static_assert(alignof(PaddedIndex) == kLineBytes, "PaddedIndex must start a line");

}  // namespace rk

#endif  // RINGKERNEL_DEVICE_ATOMICS_H_
