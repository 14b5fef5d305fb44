// Copyright 2026 The RingKernel Authors.
//
// bulk_copy.h: large copies from global to global memory by one thread,
// through the tensor memory accelerator (sm_90 and later).
//
// A thread that copies with its own loads and stores keeps only as many
// bytes in flight as its registers hold, so a 4 KiB payload costs about 30
// trips to memory (6.5 µs on an H100, bench/probes/bulk_copy.cu). The
// accelerator moves it in two: global → shared (an mbarrier counts the bytes
// in), then shared → global (a bulk group, waited for until its writes are
// done): 0.68 µs for 4 KiB, 0.60 µs for 1 KiB, 0.59 µs for 256 B.
//
// Each worker block has one stage of kBulkStageBytes in shared memory,
// taken under a lock by one thread at a time (the block's handlers send in
// parallel: they take turns), and a second, the inbox, for the receiving
// side (InboxTake, below; and a block run's next payload, BlockInboxCopy in
// rt_block.cuh). Only worker blocks copy so: WorkerLoop
// initialises the stage (BulkStageInit) before any handler runs. Elsewhere,
// before sm_90, and when the system was started with RINGKERNEL_NO_BULK_COPY
// set (compute-sanitizer's racecheck and initcheck follow neither the
// accelerator's writes nor the stage's lock), BulkCopy copies nothing and
// the caller copies it all.
#ifndef RINGKERNEL_DEVICE_BULK_COPY_H_
#define RINGKERNEL_DEVICE_BULK_COPY_H_

#include "ringkernel/device/config.h"

#if RK_ON_DEVICE && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define RK_BULK_COPY 1
#else
#define RK_BULK_COPY 0
#endif
// The receiving side's stage (InboxTake), in the builds that copy, except
// tracing builds: their kernel's static shared memory is at the 48 KiB
// limit without it.
#if RK_BULK_COPY && !defined(RK_TRACE)
#define RK_BULK_INBOX 1
#else
#define RK_BULK_INBOX 0
#endif

namespace rk {

inline constexpr u32 kBulkStageBytes = 4096;
// Smaller copies go through registers (two trips to memory either way).
inline constexpr u32 kBulkMinBytes = 256;

#if RK_BULK_COPY
namespace detail {

struct BulkStage {
  alignas(128) u8 bytes[kBulkStageBytes];
  alignas(8) unsigned long long bar;  // the mbarrier of the copy in
  u32 lock;                           // 1 while a thread holds the stage
  u32 phase;                          // the mbarrier's phase to wait for
  u32 off;                            // 1: copy nothing (RINGKERNEL_NO_BULK_COPY)
};
__shared__ BulkStage rk_bulk_stage;
#if RK_BULK_INBOX
// The receiving side's stage (the inbox): a large payload copied in before
// its handler runs (InboxTake). Its `off` is unused: the send stage's says.
__shared__ BulkStage rk_bulk_inbox;
#endif

__device__ __forceinline__ void StageInit(BulkStage& s, u32 off) {
  s.lock = 0;
  s.phase = 0;
  s.off = off;
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(static_cast<u32>(__cvta_generic_to_shared(&s.bar)))
               : "memory");
}

__device__ __forceinline__ u32 SmemAddress(const void* p) {
  return static_cast<u32>(__cvta_generic_to_shared(p));
}

// Starts the accelerator's copy of `n` bytes (a multiple of 16) from global
// memory at `from` into the stage at shared address `stage`, counted in by
// the mbarrier at `bar`.
__device__ __forceinline__ void CopyIn(u32 stage, u32 bar, const u8* from, u32 n) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(n) : "memory");
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(stage),
               "l"(from), "r"(n), "r"(bar)
               : "memory");
}

// Waits until the mbarrier at `bar` completes phase `phase` (the copy in is
// there, and visible to this thread).
__device__ __forceinline__ void WaitIn(u32 bar, u32 phase) {
  u32 in = 0;
  while (in == 0) {
    asm volatile(
        "{\n\t.reg .pred p;\n\tmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\tselp.u32 %0, 1, 0, p;\n\t}"
        : "=r"(in)
        : "r"(bar), "r"(phase)
        : "memory");
  }
}

}  // namespace detail

// Thread 0 of a worker block, before the block's first barrier. `off`:
// SystemParams::no_bulk_copy.
__device__ __forceinline__ void BulkStageInit(u32 off) {
  detail::StageInit(detail::rk_bulk_stage, off);
#if RK_BULK_INBOX
  detail::StageInit(detail::rk_bulk_inbox, off);
#endif
  // The initialisation, before the accelerator (the async proxy) uses it.
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

// Copies the first bytes of `from` to `to` (global memory both) through the
// block's stage: as many whole 16-byte pieces as it can when both are
// 16-byte aligned, `from` is in global memory and `size` is at least
// kBulkMinBytes; else none. Returns the bytes copied, a multiple of 16: the
// caller copies the rest. Once it returns the copied bytes are written (as
// this thread's own stores would be), ready for the release fence that
// publishes them.
__device__ __noinline__ u32 BulkCopy(u8* to, const u8* from, u32 size) {
  if (size < kBulkMinBytes || ((reinterpret_cast<u64>(to) | reinterpret_cast<u64>(from)) & 15) != 0 ||
      !__isGlobal(from) || !__isGlobal(to)) {
    return 0;
  }
  detail::BulkStage& s = detail::rk_bulk_stage;
  if (s.off != 0) return 0;
  const u32 total = size & ~15u;
  while (atomicCAS(&s.lock, 0u, 1u) != 0u) {
  }
  __threadfence_block();
  const u32 stage = detail::SmemAddress(s.bytes);
  const u32 bar = detail::SmemAddress(&s.bar);
  u32 phase = s.phase;
  // This thread's (and, through the handler's acquire, others') earlier
  // writes of the source, before the async proxy reads it.
  asm volatile("fence.proxy.async.global;" ::: "memory");
  for (u32 done = 0; done < total;) {
    const u32 n = total - done < kBulkStageBytes ? total - done : kBulkStageBytes;
    detail::CopyIn(stage, bar, from + done, n);
    detail::WaitIn(bar, phase);
    phase ^= 1;
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(to + done), "r"(stage), "r"(n)
                 : "memory");
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
    // Until the writes are done (which also frees the stage for the next
    // piece).
    asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
    done += n;
  }
  // The async proxy's writes, before this thread's later generic accesses
  // (the release fence and the header that publish the record).
  asm volatile("fence.proxy.async.global;" ::: "memory");
  s.phase = phase;
  __threadfence_block();
  atomicExch(&s.lock, 0u);
  return total;
}

// The receiving side: InboxTake (below) and the inbox it copies into.
#if RK_BULK_INBOX
inline constexpr u32 kInboxMinBytes = 512;

namespace detail {
// Takes the inbox for this thread (kept, with kMayHold, if this thread
// holds it already: a block run's copier) and starts the accelerator's copy
// of `n` bytes (a multiple of 16, at most kBulkStageBytes) from `from` into
// it: true, with `*phase` the mbarrier phase that says the copy is in
// (WaitIn), or false, with nothing done, when another thread holds the
// inbox. The payload must have been acquired by this thread (or ordered
// before it); the proxy fences here order the last holder's generic reads
// of the inbox before the accelerator's writes, and that payload before the
// accelerator's reads. Used by InboxTake (a thread handler's payload) and
// by a block run's copier (BlockInboxCopy, rt_block.cuh: the next round's
// payload).
template <bool kMayHold>
__device__ __forceinline__ bool InboxCopyIn(const u8* from, u32 n, u32* phase) {
  BulkStage& s = rk_bulk_inbox;
  if (!kMayHold || *static_cast<volatile u32*>(&s.lock) != threadIdx.x + 1) {
    if (atomicCAS(&s.lock, 0u, threadIdx.x + 1) != 0u) return false;
    __threadfence_block();
  }
  *phase = s.phase;
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  asm volatile("fence.proxy.async.global;" ::: "memory");
  CopyIn(SmemAddress(s.bytes), SmemAddress(&s.bar), from, n);
  s.phase = *phase ^ 1;
  return true;
}
}  // namespace detail

// A handler that reads a large payload where it lies, in the mailbox's
// plain area, waits one trip to L2 per batch of loads its registers hold:
// a 4 KiB payload read 16 loads at a time is 16 trips, and was what bound a
// one-pair stream of 4 KiB messages (bench/NOTES.md, sessions 12 and 24).
// So the owner copies a plain payload of kInboxMinBytes or more into the
// block's inbox with the accelerator (one trip) and runs the handler on the
// copy, where its loads are shared-memory loads. The inbox is taken only if free, never waited for:
// a payload that finds it taken (another thread of the block is in a
// handler on it) is read where it lies, as before. Returns the copy, or
// `from` when there is none (the inbox taken, the copy off, or a payload
// that is small, unaligned or not in global memory). Once the handler
// returned, the caller calls InboxRelease, which gives the inbox back if
// this thread holds it (nothing stays live across the handler's call).
__device__ __noinline__ const void* InboxTake(const u8* from, u32 size) {
  if (size < kInboxMinBytes || size > kBulkStageBytes || (reinterpret_cast<u64>(from) & 15) != 0 ||
      !__isGlobal(from) || detail::rk_bulk_stage.off != 0) {
    return from;
  }
  const u32 total = size & ~15u;
  u32 phase;
  if (!detail::InboxCopyIn<false>(from, total, &phase)) return from;
  detail::BulkStage& s = detail::rk_bulk_inbox;
  // The bytes past the last whole 16, by the thread, meanwhile.
  for (u32 i = total; i < size; ++i) s.bytes[i] = from[i];
  // (The completed wait makes the accelerator's writes visible to this thread.)
  detail::WaitIn(detail::SmemAddress(&s.bar), phase);
  return s.bytes;
}

// After the handler of a record taken by InboxTake returned: gives the
// inbox back if this thread holds it.
__device__ __forceinline__ void InboxRelease() {
  u32* lock = &detail::rk_bulk_inbox.lock;
  if (*static_cast<volatile u32*>(lock) != threadIdx.x + 1) return;
  __threadfence_block();
  atomicExch(lock, 0u);
}
#endif  // RK_BULK_INBOX
#endif  // RK_BULK_COPY

}  // namespace rk

#endif  // RINGKERNEL_DEVICE_BULK_COPY_H_
