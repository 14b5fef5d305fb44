// Copyright 2026 The RingKernel Authors.
//
// rt_outbound.cuh: GPU → host. Part of the device runtime (runtime.cuh).
//
// Every worker block has its own ring to the host (mapped memory): its
// threads reserve positions with a compare-and-swap on a tail in the block's
// shared memory — never a global atomic — and write LL records with posted
// stores. The host drains them all; a reply to an Ask, and the dead letters
// and failures of the asked actor, come back on the ring of that actor's
// worker, which is the ring the waiting Ask polls.
//
// Release/acquire pairs: a producer's acquire load of the ring's `head`
// (LlTryReserve, only when its cached copy says the ring is full) pairs with
// the host's release store of it after reading the slots.
#ifndef RINGKERNEL_DEVICE_RT_OUTBOUND_CUH_
#define RINGKERNEL_DEVICE_RT_OUTBOUND_CUH_

#include "ringkernel/device/rt_base.cuh"

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

// The producer side of a worker's ring, in its block's shared memory.
struct OutboundCursor {
  u64 tail;
  u64 cached_head;
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
  h.reserved = 0;
  h.correlation = correlation;
  h.hlc = hlc;
  return h;
}

// Writes one record. Returns kFull (and counts it) when the host has not
// drained the ring.
__device__ __noinline__ SendStatus WriteOutbound(const SystemParams* sys, const OutRing& r, const LlHeader& h,
                                                 const void* payload) {
  u64 pos;
  if (!LlTryReserve(r.tail, r.cached, &r.ring->head.value, r.log2, &pos)) {
    atomicAdd(&sys->shared->outbound_full.value, 1ull);
    return SendStatus::kFull;
  }
  LlWriteRecord(LlSlot(r.slots, sys->slot_words, r.log2, pos), LlFlag(pos, r.log2), h, payload);
  return SendStatus::kOk;
}

// Reports an accepted message that will not be handled. The host gets the
// message back when the ring has room; the count is kept either way.
__device__ __noinline__ void DeadLetter(const SystemParams* sys, const OutRing& out, DeadLetterReason reason,
                                        u32 receiver, const MailHeader& m, const void* payload) {
  const LlHeader h = OutboundHeader(OutboundKind::kDeadLetter, static_cast<u32>(reason), m.type,
                                    payload != nullptr ? m.size : 0, receiver, m.sender, m.correlation, m.hlc);
  WriteOutbound(sys, out, h, payload);
}

// Copies a host record's payload (still in its ring) into a dead letter,
// word by word, so no staging buffer is needed.
__device__ __noinline__ void DeadLetterFromRing(const SystemParams* sys, const OutRing& r, const LlHeader& in,
                                                const u64* slot, DeadLetterReason reason) {
  u64 pos;
  if (!LlTryReserve(r.tail, r.cached, &r.ring->head.value, r.log2, &pos)) {
    atomicAdd(&sys->shared->outbound_full.value, 1ull);
    return;
  }
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
