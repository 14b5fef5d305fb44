// Copyright 2026 The RingKernel Authors.
//
// rt_send.cuh: actor → actor (K2K) and actor → host sends, and the rest of
// rk::Ctx. Part of the device runtime (runtime.cuh).
//
// The K2K path, for a receiver this worker thread sent to last time (its
// SendCache hit): one compare-and-swap on the receiver's mailbox tail,
// issued together with a load of its status, then the record's LL words as
// posted stores — no release fence, no load before the reservation. A new
// receiver costs one more trip (its record) and, the first time, a failed
// compare-and-swap that teaches the cursor the tail.
//
// Release/acquire pairs: see mailbox.h (the reservation's acquire of `head`
// against the owner's release; the plain-area fence against the owner's
// acquire fence).
#ifndef RINGKERNEL_DEVICE_RT_SEND_CUH_
#define RINGKERNEL_DEVICE_RT_SEND_CUH_

#include "ringkernel/device/rt_base.cuh"
#include "ringkernel/device/rt_outbound.cuh"

namespace rk {
namespace detail {

// What a worker thread knows of the receiver of its last K2K send (kept in
// the thread's registers or stack across messages). Actor indices are never
// reused and a mailbox never moves, so only the receiver's status can go
// stale — and that is read with every send.
struct SendCache {
  u32 to = kNoActorValue;
  u32 type = 0;
  MailboxHeader* box = nullptr;
  u32 log2 = 0;
  u32 inline_words = 0;
  u32 slot_bytes = 0;
  u32 max_payload = 0;
  MailboxCursor cursor{0, 0};
};

__device__ __forceinline__ u32 LaneMaskLt() {
  u32 m;
  asm("mov.u32 %0, %%lanemask_lt;" : "=r"(m));
  return m;
}

__device__ SendStatus SendToActor(Ctx& ctx, u32 to, u32 type, const void* payload, u32 size, u64 correlation) {
  CtxData& d = ctx.d_;
  const SystemParams* sys = d.sys;
  if (to >= sys->max_actors) {
    ++d.send_no_actor;
    return SendStatus::kNoActor;
  }
  SendCache& c = *static_cast<SendCache*>(d.sends);
  ActorSlot* target = &sys->actors[to];
  bool known = c.to == to;
  if (!known) {
    const TargetInfo t = ReadTarget(target);
    if (t.status != static_cast<u32>(ActorState::kRunning)) {
      ++d.send_no_actor;
      return SendStatus::kNoActor;
    }
    c.to = to;
    c.type = t.type;
    c.box = t.box;
    c.log2 = ShapeLog2(t.shape);
    c.inline_words = ShapeInlineWords(t.shape);
    c.slot_bytes = t.slot_bytes;
    c.max_payload = MailboxMaxPayload(t.shape, t.slot_bytes);
    c.cursor = MailboxCursor{0, 0};
  }
  if (HandlerKindOf(c.type, type) == 0) {
    ++d.send_other;
    return SendStatus::kNoHandler;
  }
  if (size > c.max_payload) {
    ++d.send_other;
    return SendStatus::kTooLarge;
  }
  // For a known receiver its status goes out with the reservation.
  const u32 status = known ? LoadRelaxedGpu32(&target->status) : static_cast<u32>(ActorState::kRunning);
  // Warp-aggregated reservation: the lanes sending to this mailbox right now
  // reserve their slots with one compare-and-swap.
  const u32 active = __activemask();
  const u32 peers = __match_any_sync(active, reinterpret_cast<u64>(c.box));
  const u32 leader = __ffs(peers) - 1;
  const u32 rank = __popc(peers & LaneMaskLt());
  const u32 n = __popc(peers);
  u64 first = 0;
  u32 got = 0;
  if (LaneId() == leader) got = MailboxReserve(c.box, u64{1} << c.log2, n, &c.cursor, &first);
  if (n > 1) {
    got = __shfl_sync(peers, got, leader);
    first = __shfl_sync(peers, first, leader);
    // Other lanes' cursors no longer know the tail; their next reservation
    // learns it from a failed compare-and-swap.
  }
  if (rank >= got) {
    ++d.send_full;
    return SendStatus::kFull;
  }
  const u64 pos = first + rank;
  u64* slot = MailboxSlotAt(c.box, c.log2, c.slot_bytes, pos);
  MailHeader h;
  h.type = type;
  h.size = size;
  h.sender = d.self;
  h.flags = 0;
  h.correlation = correlation;
  h.hlc = d.hlc;
  if (status != static_cast<u32>(ActorState::kRunning)) {
    // The receiver failed or left after we cached it: the position is ours,
    // so fill it with a record its owner skips.
    h.flags = kMailVoid;
    h.size = 0;
    MailboxWrite(slot, c.inline_words, LlFlag(pos, c.log2), h, nullptr);
    c.to = kNoActorValue;
    ++d.send_no_actor;
    return SendStatus::kNoActor;
  }
  MailboxWrite(slot, c.inline_words, LlFlag(pos, c.log2), h, payload);
  ++d.sent;
  return SendStatus::kOk;
}

__device__ __forceinline__ OutRing CtxOutRing(const CtxData& d) {
  return WorkerOutRing(d.sys, d.worker, static_cast<OutboundCursor*>(d.outbound));
}

__device__ __noinline__ SendStatus SendToHostFromActor(Ctx& ctx, u32 type, const void* payload, u32 size,
                                                       u64 correlation) {
  CtxData& d = ctx.d_;
  if (size > d.sys->max_payload) {
    ++d.send_other;
    return SendStatus::kTooLarge;
  }
  const LlHeader h = OutboundHeader(OutboundKind::kMessage, 0, type, size, d.self, 0, correlation, d.hlc);
  const SendStatus s = WriteOutbound(d.sys, CtxOutRing(d), h, payload);
  if (s == SendStatus::kOk) {
    ++d.sent;
  } else {
    ++d.send_full;
  }
  return s;
}

__device__ SendStatus SendBytes(Ctx& ctx, ActorId to, u32 type, const void* payload, u32 size) {
  if (to.is_host()) return SendToHostFromActor(ctx, type, payload, size, 0);
  return SendToActor(ctx, to.value, type, payload, size, 0);
}

__device__ SendStatus SendRouteBytes(Ctx& ctx, u64 route_hash, u32 type, const void* payload, u32 size) {
  const SystemParams* sys = ctx.d_.sys;
  const u32 target = RouteTarget(sys->routes, sys->num_routes, RouteIndexOf(route_hash));
  if (target == kNoActorValue) {
    ++ctx.d_.send_no_actor;
    return SendStatus::kNoActor;
  }
  if (target == kHostActorValue) return SendToHostFromActor(ctx, type, payload, size, 0);
  return SendToActor(ctx, target, type, payload, size, 0);
}

__device__ SendStatus ReplyBytes(Ctx& ctx, u32 type, const void* payload, u32 size) {
  const CtxData& d = ctx.d_;
  if (d.sender == kHostActorValue) return SendToHostFromActor(ctx, type, payload, size, d.correlation);
  return SendToActor(ctx, d.sender, type, payload, size, d.correlation);
}

__device__ __noinline__ void Fail(Ctx& ctx, u32 code) {
  CtxData& d = ctx.d_;
  if (d.failed) return;
  d.failed = 1;
  ActorSlot* slot = d.actor;
  slot->fail_code = code;
  StoreReleaseGpu32(&slot->status, static_cast<u32>(ActorState::kFailed));
  // Tell the host now (a rare path: the bus write is worth it).
  StoreRelaxedSys(&d.sys->actor_control[d.self].status,
                  static_cast<u64>(ActorState::kFailed) | static_cast<u64>(code) << 32);
  const LlHeader h = OutboundHeader(OutboundKind::kActorFailed, 0, 0, 0, d.self, d.sender, code, d.hlc);
  WriteOutbound(d.sys, CtxOutRing(d), h, nullptr);
}

__device__ void SyncBlock(Ctx& ctx) {
  if (ctx.d_.block) {
    __syncthreads();
  } else {
    // A barrier in a thread handler would wait for threads that never come.
    Fail(ctx, 0xFFFFFFFEu);
  }
}

}  // namespace detail
}  // namespace rk

#endif  // RINGKERNEL_DEVICE_RT_SEND_CUH_
