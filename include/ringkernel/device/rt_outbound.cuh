// Copyright 2026 The RingKernel Authors.
//
// rt_outbound.cuh: GPU → host. Part of the device runtime (runtime.cuh).
//
// Every worker block has its own ring to the host (mapped memory): its
// threads reserve positions with a compare-and-swap on a tail in the block's
// shared memory — never a global atomic — and write LL records with posted
// stores. The host drains them all, continuously (a background thread) and
// whenever a call waits on them; a reply to an Ask, and the dead letters and
// failures of the asked actor, come back on the ring of that actor's worker,
// which is the ring the waiting Ask polls.
//
// A full ring: an actor's own send to the host is refused with kFull (its
// back-pressure, counted in outbound_full). A host message the poller
// rejects, and a failure record, wait for room (ReserveReport), since the
// host keeps draining; only once the kernel is halting, with the ring still
// full kReportHaltGraceNs later (the host no longer drains), do they give up;
// that loss is counted in reports_lost, which Stop's report carries. A dead
// letter from an owner's loop (a message in the mailbox of an actor that
// failed, or of a type it has no handler for) does not wait there, since the
// owner's other actors would wait with it: the message stays where it is and
// the owner tries again after its other actors had their turn (as for
// ctx.retry_later), so it is neither lost nor overtaken.
//
// Release/acquire pairs: a producer's acquire load of the ring's `head`
// (LlTryReserve, only when its cached copy says the ring is full) pairs with
// the host's release store of it after reading the slots.
#ifndef RINGKERNEL_DEVICE_RT_OUTBOUND_CUH_
#define RINGKERNEL_DEVICE_RT_OUTBOUND_CUH_

#include "ringkernel/device/rt_base.cuh"
#include "ringkernel/device/rt_trace.cuh"

namespace rk {
namespace detail {

// A ring to the host as its producers see it.
struct OutRing {
  LlRingHeader* ring;
  u64* slots;
  u64* tail;    // producers' reservation counter (the block's shared memory)
  u64* cached;  // producers' copy of the host's head
  u32 log2;
};

// The producer side of a worker's ring, in its block's shared memory: the
// counters, and the ring's geometry (set when the worker starts), which a
// handler's send to the host reads from there rather than from the params.
struct OutboundCursor {
  u64 tail;
  u64 cached_head;
  u64* slots;
  u32 log2;
  u32 slot_words;
  RK_TRACE_ONLY(TraceCursor trace;)  // the block's timeline ring (rt_trace.cuh)
};

__device__ __forceinline__ OutRing WorkerOutRing(const SystemParams* sys, u32 worker, OutboundCursor* c) {
  OutRing r;
  r.ring = WorkerRing(sys->worker_out, sys->worker_ring_bytes, worker);
  r.slots = RingSlots(r.ring);
  r.tail = &c->tail;
  r.cached = &c->cached_head;
  r.log2 = sys->worker_out_log2;
  return r;
}

__device__ __forceinline__ LlHeader OutboundHeader(OutboundKind kind, u32 reason, u32 type, u32 size, u32 actor,
                                                   u32 peer, u64 correlation, u64 hlc) {
  LlHeader h;
  h.type = type;
  h.size = size;
  h.actor = actor;
  h.peer = peer;
  h.aux = static_cast<u32>(kind) | (reason << 8);
  h.writer = 0;
  h.correlation = correlation;
  h.hlc = hlc;
  return h;
}

// Payloads up to this size go to the host from registers (a handler's
// send or reply to the host, inlined at the send site).
constexpr u32 kOutTypedMaxBytes = 64;

// A handler's record to the host, inlined: reserves a position with the
// block's counters (CtaScope) while the cached head says there is room, and
// stores the record's LL words from registers — the header, and a payload
// of kSize bytes loaded at fixed offsets. Returns false, having written
// nothing, when the cache says the ring is full: the caller then takes the
// out-of-line path, which reads the host's head.
template <u32 kSize, u32 kAlign>
__device__ __forceinline__ bool OutboundTryWriteTyped(OutboundCursor* c, const LlHeader& h, const void* payload) {
  // The record's words and the ring's geometry first: the reservation's
  // atomics clobber memory, and a payload or field read after them would be
  // read again from where it lies (the handler's message from the stack).
  constexpr u32 kWords = (kSize + 3) / 4;
  u32 w[kLlHeaderWords + kWords + 1] = {};
  LlHeaderToWords(h, w);
  LoadPayloadWords<kSize, kAlign>(payload, w + kLlHeaderWords);
  u64* const slots = c->slots;
  const u32 slot_words = c->slot_words;
  const u32 log2 = c->log2;
  u64 pos;
  u32 skip;
  RK_ASK_STAMP(h.correlation, kStampOutEnter, GlobalTimerNs());
  if (!LlTryReserveUnits<CtaScope>(&c->tail, &c->cached_head, nullptr, log2, 1, &pos, &skip)) return false;
  RK_ASK_STAMP(h.correlation, kStampOutReserved, GlobalTimerNs());
  u64* slot = LlSlot(slots, slot_words, log2, pos);
  const u32 flag = LlFlag(pos, log2);
  // Pairs of words; a record of an odd number of words ends with one store
  // (the slot's next word may not exist for the largest message).
  constexpr u32 kTotal = kLlHeaderWords + kWords;
#pragma unroll
  for (u32 i = 0; i + 1 < kTotal; i += 2) StoreRelaxedSysPair(slot + i, LlWord(w[i], flag), LlWord(w[i + 1], flag));
  if (kTotal % 2 != 0) StoreRelaxedSys(slot + kTotal - 1, LlWord(w[kTotal - 1], flag));
  return true;
}

// How long a dead letter or failure record waits for room after the kernel
// began to halt (the host drains while Stop waits for the halt), and the
// longest sleep between looks at the host's head while it waits.
constexpr u64 kReportHaltGraceNs = 1000000;
constexpr u32 kReportWaitMaxSleepNs = 8192;

// Writes one record without waiting. Returns kFull, and adds one to
// `*full_count` (if given), when the host has not drained the ring.
__device__ __noinline__ SendStatus WriteOutbound(const SystemParams* sys, const OutRing& r, const LlHeader& h,
                                                 const void* payload, unsigned long long* full_count) {
  u64 pos;
  RK_ASK_STAMP(h.correlation, kStampOutEnter, GlobalTimerNs());
  if (!LlTryReserve<CtaScope>(r.tail, r.cached, &r.ring->head.value, r.log2, &pos)) {
    if (full_count != nullptr) atomicAdd(full_count, 1ull);
    return SendStatus::kFull;
  }
  RK_ASK_STAMP(h.correlation, kStampOutReserved, GlobalTimerNs());
  LlWriteRecord(LlSlot(r.slots, sys->slot_words, r.log2, pos), LlFlag(pos, r.log2), h, payload);
  return SendStatus::kOk;
}

// Reserves a position for a dead letter or a failure record, waiting while
// the ring is full (sleeping between looks, each a read of the host's head
// over the bus). Returns false only when the kernel is halting and the ring
// stayed full for kReportHaltGraceNs: the record is then counted in
// reports_lost instead, so that Stop never waits on a host that stopped
// draining and the report still says what was lost.
__device__ __noinline__ bool ReserveReport(const SystemParams* sys, const OutRing& r, u64* pos) {
  u32 sleep_ns = 32;
  u64 halting_since = 0;
  while (!LlTryReserve<CtaScope>(r.tail, r.cached, &r.ring->head.value, r.log2, pos)) {
    if (LoadRelaxedGpu(&sys->shared->run.value) >= static_cast<u64>(KernelState::kHalting)) {
      const u64 now = GlobalTimerNs();
      if (halting_since == 0) {
        halting_since = now;
      } else if (now - halting_since > kReportHaltGraceNs) {
        atomicAdd(&sys->shared->reports_lost.value, 1ull);
        return false;
      }
    }
    __nanosleep(sleep_ns);
    if (sleep_ns < kReportWaitMaxSleepNs) sleep_ns *= 2;
  }
  return true;
}

// Writes a dead letter or a failure record, waiting for room (ReserveReport).
__device__ __noinline__ void WriteReport(const SystemParams* sys, const OutRing& r, const LlHeader& h,
                                         const void* payload) {
  u64 pos;
  if (!ReserveReport(sys, r, &pos)) return;
  LlWriteRecord(LlSlot(r.slots, sys->slot_words, r.log2, pos), LlFlag(pos, r.log2), h, payload);
}

// Reports an accepted message that will not be handled, from an owner's
// loop, which must not wait: false, with nothing written, when the ring to
// the host is full (the owner leaves the message in place and tries again
// later). Host messages the poller rejects, and failure records, wait for
// room (ReserveReport).
__device__ __forceinline__ LlHeader DeadLetterHeader(DeadLetterReason reason, u32 receiver, const MailHeader& m,
                                                     const void* payload) {
  return OutboundHeader(OutboundKind::kDeadLetter, static_cast<u32>(reason), m.type, payload != nullptr ? m.size : 0,
                        receiver, m.sender, m.correlation, m.hlc);
}
__device__ __noinline__ bool DeadLetter(const SystemParams* sys, const OutRing& out, DeadLetterReason reason,
                                        u32 receiver, const MailHeader& m, const void* payload) {
  return WriteOutbound(sys, out, DeadLetterHeader(reason, receiver, m, payload), payload, nullptr) == SendStatus::kOk;
}
// The same from a block handler's meeting (RunBlockMessage), where the
// message cannot stay for later: it waits for room (WriteReport), the
// block with it.
__device__ __noinline__ void DeadLetterWaiting(const SystemParams* sys, const OutRing& out, DeadLetterReason reason,
                                               u32 receiver, const MailHeader& m, const void* payload) {
  WriteReport(sys, out, DeadLetterHeader(reason, receiver, m, payload), payload);
}

// Copies a host record's payload (still in its ring) into a dead letter,
// word by word, so no staging buffer is needed. Waits for room
// (ReserveReport; the host ring's record stays put meanwhile).
__device__ __noinline__ void DeadLetterFromRing(const SystemParams* sys, const OutRing& r, const LlHeader& in,
                                                const u64* slot, DeadLetterReason reason) {
  u64 pos;
  if (!ReserveReport(sys, r, &pos)) return;
  u64* out = LlSlot(r.slots, sys->slot_words, r.log2, pos);
  const u32 flag = LlFlag(pos, r.log2);
  const LlHeader h = OutboundHeader(OutboundKind::kDeadLetter, static_cast<u32>(reason), in.type, in.size, in.actor,
                                    kHostActorValue, in.correlation, in.hlc);
  u32 hw[kLlHeaderWords];
  LlHeaderToWords(h, hw);
  for (u32 i = 0; i < kLlHeaderWords; ++i) StoreRelaxedSys(out + i, LlWord(hw[i], flag));
  const u32 words = (in.size + 3) / 4;
  for (u32 k = 0; k < words; ++k) {
    StoreRelaxedSys(out + kLlHeaderWords + k, LlWord(LlData(LoadRelaxedSys(slot + kLlHeaderWords + k)), flag));
  }
}

}  // namespace detail
}  // namespace rk

#endif  // RINGKERNEL_DEVICE_RT_OUTBOUND_CUH_
