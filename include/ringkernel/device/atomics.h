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
