// Copyright 2026 The RingKernel Authors.
//
// rt_send.cuh: actor → actor (K2K) and actor → host sends, and the rest of
// rk::Ctx. Part of the device runtime (runtime.cuh).
//
// The K2K path, for a receiver this worker thread sent to last time (its
// SendCache hit): through this thread's channel to it (channel.h), the
// record's LL words and the tail as posted stores — no reservation, no
// fence, no load before them; through the receiver's mailbox (a pair that
// has no channel), one compare-and-swap on its tail, issued together with a
// load of its status, then the record's LL words. A new receiver costs one
// more trip (its record and its channel table, read together), and the
// first time a channel is opened for the pair or, through the mailbox, a
// failed compare-and-swap that teaches the cursor the tail. The Ctx, its send cache
// and a small message stay in registers throughout: the handler runs in a
// function of its own whose Ctx never has its address taken
// (RunThreadHandler, rt_dispatch.cuh), and nothing out of line takes a Ctx.
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

__device__ __forceinline__ u32 LaneMaskLt() {
  u32 m;
  asm("mov.u32 %0, %%lanemask_lt;" : "=r"(m));
  return m;
}

// Forgets the cached receiver.
__device__ __forceinline__ void ForgetReceiver(SendCache& c) { c.to = kNoActorValue; }

// SendCache::channel.
constexpr u32 kViaMailbox = 0;
constexpr u32 kViaChannel = 1;
constexpr u32 kViaMailboxMayOpen = 2;  // the mailbox now; the next send tries to open a channel

// How this thread's sends to actor `to` go (channel.h): its channel's box,
// or 0 for the mailbox — kViaMailboxMayOpen in `*via` when the receiver may
// still give it a channel. Out of line and by value: only when a thread's
// sends change receiver.
__device__ __noinline__ u64 ChannelTo(const SystemParams* sys, u32 to, u32 key, u32* via) {
  const ChannelTable* t = &sys->channel_tables[to];
  const u64 box = ChannelFind(t, key);
  if (box > kChannelNone) {
    *via = kViaChannel;
    return box;
  }
  *via = box == 0 && ChannelMayOpen(t) ? kViaMailboxMayOpen : kViaMailbox;
  return 0;
}

// The send that reserved mailbox position `pos` of actor `to` opens this
// thread's channel to it: claims an entry, writes the kMailChannel record
// at `pos` and publishes the entry. Returns the channel's box, or 0 when no
// channel was had (the message then goes to `pos`). Out of line and by
// value: once per pair.
__device__ __noinline__ u64 OpenChannelAt(const SystemParams* sys, u32 to, u32 key, MailboxHeader* mailbox,
                                          u64 pos, u32 log2, u32 inline_words, u32 slot_bytes, u32 self,
                                          u64 hlc) {
  ChannelTable* t = &sys->channel_tables[to];
  const MailboxShape shape{inline_words, slot_bytes - 8 * (kMailHeaderWords + inline_words), slot_bytes};
  const ChannelClaimResult claim = ChannelClaim(t, sys->channel_arena, sys->channel_arena_bytes,
                                                &sys->shared->channel_arena_used.value, log2, shape);
  if (claim.index >= kChannelsPerActor) return 0;
  if (claim.box > kChannelNone) {
    MailHeader h;
    h.type = 0;
    h.size = 0;
    h.sender = self;
    h.flags = kMailVoid | kMailChannel;
    h.correlation = claim.index;
    h.hlc = hlc;
    MailboxWrite(MailboxSlotAt(mailbox, log2, slot_bytes, pos), inline_words, LlFlag(pos, log2), h, nullptr);
  }
  ChannelPublish(t, claim.index, key, claim.box);
  return claim.box > kChannelNone ? claim.box : 0;
}

// A lane's reservation of a position in a mailbox, and its cursor after it.
struct MailboxReservation {
  u64 pos;
  u64 cursor_tail, cursor_head;
  u32 ok;  // 0: the mailbox was full
};

// Reserves a position for this lane in `box`: the lanes sending to the same
// mailbox right now reserve their slots with one compare-and-swap (a lane
// sending alone skips the match). Out of line and by value: the path of
// pairs that have no channel.
__device__ __noinline__ MailboxReservation ReserveInMailbox(MailboxHeader* box, u32 log2, u64 cursor_tail,
                                                            u64 cursor_head) {
  const u32 active = __activemask();
  const u32 lane = LaneId();
  u32 peers = 1u << lane;
  if (active != peers) peers = __match_any_sync(active, reinterpret_cast<u64>(box));
  const u32 leader = __ffs(peers) - 1;
  const u32 rank = __popc(peers & LaneMaskLt());
  const u32 n = __popc(peers);
  u64 first = 0;
  u32 got = 0;
  MailboxCursor cursor{cursor_tail, cursor_head};
  if (lane == leader) got = MailboxReserve(box, u64{1} << log2, n, &cursor, &first);
  if (n > 1) {
    got = __shfl_sync(peers, got, leader);
    first = __shfl_sync(peers, first, leader);
    // Other lanes' cursors no longer know the tail; their next reservation
    // learns it from a failed compare-and-swap.
  }
  return MailboxReservation{first + rank, cursor.tail, cursor.head, rank < got ? 1u : 0u};
}

// The position a send names in the timeline (and the receiver's begin with
// it): a mailbox position, or a channel's mixed with its address so that
// the channels of one receiver do not share positions.
__device__ __forceinline__ u32 TraceFlowPosition(const void* box, u32 channel, u64 pos) {
  return channel ? static_cast<u32>(pos) + static_cast<u32>(reinterpret_cast<u64>(box) >> 7) * 2654435761u
                 : static_cast<u32>(pos);
}

// The largest payload a K2K send loads into registers first (SendToActor).
constexpr u32 kSendEarlyMaxBytes = 64;

// Sends a payload of kSize bytes (alignment kAlign) to actor `to`. Inlined
// into every send site, with the Ctx in registers: a message built in the
// handler goes from registers to the LL words of the receiver's mailbox or
// of this thread's channel to it.
// `sender`: who the receiver sees as the sender (d.self; the current
// message's sender for ctx.forward).
template <u32 kSize, u32 kAlign>
__device__ __forceinline__ SendStatus SendToActor(CtxData& d, u32 to, u32 type, const void* payload, u64 correlation,
                                                  u32 sender) {
  RK_HOP_ONLY(const u64 hop_in = GlobalTimerNs(); const long long hop_cyc_in = clock64();)
  // A payload of up to kSendEarlyMaxBytes is loaded before anything else:
  // the send's loads and atomics clobber memory, so a message the handler
  // built would otherwise be stored to its stack and read back after them.
  // (Larger ones are read where they lie: their words would hold registers
  // across the send.)
  constexpr bool kEarly = kSize <= kSendEarlyMaxBytes;
  constexpr u32 kEarlySize = kEarly ? kSize : 0;
  u32 early[MailTyped<kEarlySize>::kWords] = {};
  if (kEarly) LoadPayloadWords<kEarlySize, kAlign>(payload, early);
  const SystemParams* sys = d.sys;
  SendCache& c = d.cache;
  // The cache holds only a receiver that passed the checks below (or none:
  // kNoActorValue, which no valid `to` is), so a send to it reads nothing
  // through `sys` before its stores.
  const bool known = c.to == to && to != kNoActorValue;
  ActorSlot* target = &sys->actors[to];
  if (!known) {
    if (to >= sys->max_actors) {
      ++d.send_no_actor;
      return SendStatus::kNoActor;
    }
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
    c.cursor_tail = 0;
    c.cursor_head = 0;
    c.channel = kViaMailbox;
    c.status = t.status;
    if (sys->channel_tables != nullptr) {
      u32 via = kViaMailbox;
      const u64 channel =
          ChannelTo(sys, to, ChannelSenderKey(d.worker, sys->threads_per_block, threadIdx.x), &via);
      c.channel = via;
      if (channel != 0) {
        MailboxHeader* ch = reinterpret_cast<MailboxHeader*>(channel);
        c.box = ch;
        // Its own last tail, and the receiver's head.
        c.cursor_tail = LoadRelaxedGpu(&ch->tail.value);
        c.cursor_head = LoadAcquireGpu(&ch->head.value);
      }
    }
  }
  if (HandlerKindOf(c.type, type) == 0) {
    ++d.send_other;
    return SendStatus::kNoHandler;
  }
  if (kSize > c.max_payload) {
    ++d.send_other;
    return SendStatus::kTooLarge;
  }
  MailboxHeader* box = static_cast<MailboxHeader*>(c.box);
  MailHeader h;
  h.type = type;
  h.size = kSize;
  h.sender = sender;
  h.flags = 0;
  h.correlation = correlation;
  h.hlc = d.hlc;
  u64 pos;
  if (c.channel == kViaChannel) {
    // This thread's channel: no reservation. The receiver's status as the
    // last send read it (one that failed since gets this message as a dead
    // letter: its owner reports what reaches it).
    if (c.status != static_cast<u32>(ActorState::kRunning)) {
      ForgetReceiver(c);
      ++d.send_no_actor;
      return SendStatus::kNoActor;
    }
    pos = c.cursor_tail;
    if (!ChannelHasRoom(box, u64{1} << c.log2, pos, &c.cursor_head)) {
      ++d.send_full;
      return SendStatus::kFull;
    }
  } else {
    // For a known receiver its status goes out with the reservation.
    const u32 status = known ? LoadRelaxedGpu32(&target->status) : static_cast<u32>(ActorState::kRunning);
    const MailboxReservation r = ReserveInMailbox(box, c.log2, c.cursor_tail, c.cursor_head);
    c.cursor_tail = r.cursor_tail;
    c.cursor_head = r.cursor_head;
    if (!r.ok) {
      ++d.send_full;
      return SendStatus::kFull;
    }
    pos = r.pos;
    if (status != static_cast<u32>(ActorState::kRunning)) {
      // The receiver failed or left after we cached it: the position is
      // ours, so fill it with a record its owner skips.
      h.flags = kMailVoid;
      h.size = 0;
      MailboxWrite(MailboxSlotAt(box, c.log2, c.slot_bytes, pos), c.inline_words, LlFlag(pos, c.log2), h, nullptr);
      ForgetReceiver(c);
      ++d.send_no_actor;
      return SendStatus::kNoActor;
    }
    if (c.channel == kViaMailboxMayOpen) {
      // The pair's first send through the mailbox may open its channel.
      c.channel = kViaMailbox;
      const u64 channel =
          OpenChannelAt(sys, to, ChannelSenderKey(d.worker, sys->threads_per_block, threadIdx.x), box, pos, c.log2,
                        c.inline_words, c.slot_bytes, d.self, d.hlc);
      if (channel != 0) {
        box = reinterpret_cast<MailboxHeader*>(channel);
        c.box = box;
        c.channel = kViaChannel;
        c.cursor_tail = 0;
        c.cursor_head = 0;
        pos = 0;
      }
    }
  }
#ifdef RK_TEST_HOLD_K2K_RECORD_NS
  // Tests only: a sender held between its mailbox reservation and its
  // record, as a thread stalled there would be (the hand-over's marks must
  // keep a host message behind the record; system_gpu_test).
  if (c.channel != kViaChannel) {
    const u64 until = GlobalTimerNs() + static_cast<u64>(RK_TEST_HOLD_K2K_RECORD_NS);
    while (GlobalTimerNs() < until) {
    }
  }
#endif
  if (kEarly) {
    MailboxWriteWords<kEarlySize>(MailboxSlotAt(box, c.log2, c.slot_bytes, pos), LlFlag(pos, c.log2), h, early);
  } else {
    MailboxWriteTyped<kSize, kAlign>(MailboxSlotAt(box, c.log2, c.slot_bytes, pos), c.inline_words,
                                     LlFlag(pos, c.log2), h, payload);
  }
  if (c.channel == kViaChannel) {
    RK_HOP_ONLY({
      unsigned long long* hs = HopStampRow(to, pos);
      hs[kHopSendIn] = hop_in;
      hs[kHopStored] = GlobalTimerNs();
      hs[kHopPathCycles + kHpSendIn] = static_cast<unsigned long long>(hop_cyc_in);
      hs[kHopPathCycles + kHpStored] = static_cast<unsigned long long>(clock64());
    })
    c.cursor_tail = pos + 1;
    ChannelPublishTail(box, pos + 1);
    // For the next send (a load nothing here waits for).
    c.status = LoadRelaxedGpu32(&target->status);
  }
  ++d.sent;
  RK_TRACE_SEND(sys, &static_cast<OutboundCursor*>(d.outbound)->trace, type, d.self, to,
                TraceFlowPosition(box, c.channel == kViaChannel, pos), d.block == 0);
  return SendStatus::kOk;
}

// A record to the host on the worker's ring (out of line: rare on hot paths,
// and its arguments are values, so that the caller's Ctx stays in registers).
__device__ __noinline__ SendStatus SendToHostRing(const SystemParams* sys, u32 worker, void* outbound, u32 self,
                                                  u64 hlc, u32 type, const void* payload, u32 size,
                                                  u64 correlation) {
  if (size > sys->max_payload) return SendStatus::kTooLarge;
  const LlHeader h = OutboundHeader(OutboundKind::kMessage, 0, type, size, self, 0, correlation, hlc);
  // A refusal is the actor's back-pressure, counted in outbound_full.
  return WriteOutbound(sys, WorkerOutRing(sys, worker, static_cast<OutboundCursor*>(outbound)), h, payload,
                       &sys->shared->outbound_full.value);
}

__device__ __forceinline__ SendStatus SendToHostFromActor(CtxData& d, u32 type, const void* payload, u32 size,
                                                          u64 correlation) {
  const SendStatus s = SendToHostRing(d.sys, d.worker, d.outbound, d.self, d.hlc, type, payload, size, correlation);
  if (s == SendStatus::kOk) {
    ++d.sent;
    RK_TRACE_EVENT(d.sys, &static_cast<OutboundCursor*>(d.outbound)->trace,
                   TraceKindType(TraceKind::kSend, type, kTraceFlowAsk), d.self, kHostActorValue,
                   static_cast<u32>(correlation));
  } else if (s == SendStatus::kFull) {
    ++d.send_full;
  } else {
    ++d.send_other;
  }
  return s;
}

// A reply to the host (an Ask's answer) of kSize bytes: a small one is
// written from registers at the reply site while the ring has room by the
// block's cached head (OutboundTryWriteTyped); anything else, and other
// sends to the host, go out of line (SendToHostRing: code size counts, and
// the reply is what an Ask waits for).
template <u32 kSize, u32 kAlign>
__device__ __forceinline__ SendStatus SendToHostTyped(CtxData& d, u32 type, const void* payload, u64 correlation) {
  if (kSize <= kOutTypedMaxBytes) {
    const LlHeader h = OutboundHeader(OutboundKind::kMessage, 0, type, kSize, d.self, 0, correlation, d.hlc);
    if (OutboundTryWriteTyped<kSize, kAlign>(static_cast<OutboundCursor*>(d.outbound), h, payload)) {
      ++d.sent;
      RK_TRACE_EVENT(d.sys, &static_cast<OutboundCursor*>(d.outbound)->trace,
                     TraceKindType(TraceKind::kSend, type, kTraceFlowAsk), d.self, kHostActorValue,
                     static_cast<u32>(correlation));
      return SendStatus::kOk;
    }
  }
  return SendToHostFromActor(d, type, payload, kSize, correlation);
}

template <u32 kSize, u32 kAlign>
__device__ __forceinline__ SendStatus SendBytes(Ctx& ctx, ActorId to, u32 type, const void* payload) {
  if (to.is_host()) return SendToHostFromActor(ctx.d_, type, payload, kSize, 0);
  return SendToActor<kSize, kAlign>(ctx.d_, to.value, type, payload, 0, ctx.d_.self);
}

template <u32 kSize, u32 kAlign>
__device__ __forceinline__ SendStatus SendRouteBytes(Ctx& ctx, u64 route_hash, u32 type, const void* payload) {
  const SystemParams* sys = ctx.d_.sys;
  const u32 target = RouteTarget(sys->routes, sys->num_routes, RouteIndexOf(route_hash));
  if (target == kNoActorValue) {
    ++ctx.d_.send_no_actor;
    return SendStatus::kNoActor;
  }
  if (target == kHostActorValue) return SendToHostFromActor(ctx.d_, type, payload, kSize, 0);
  return SendToActor<kSize, kAlign>(ctx.d_, target, type, payload, 0, ctx.d_.self);
}

template <u32 kSize, u32 kAlign>
__device__ __forceinline__ SendStatus ReplyBytes(Ctx& ctx, u32 type, const void* payload) {
  CtxData& d = ctx.d_;
  if (d.sender == kHostActorValue) return SendToHostTyped<kSize, kAlign>(d, type, payload, d.correlation);
  return SendToActor<kSize, kAlign>(d, d.sender, type, payload, d.correlation, d.self);
}

// ctx.forward: the record carries the current message's sender and
// correlation, so the receiver's reply goes where this actor's would have.
template <u32 kSize, u32 kAlign>
__device__ __forceinline__ SendStatus ForwardBytes(Ctx& ctx, ActorId to, u32 type, const void* payload) {
  CtxData& d = ctx.d_;
  if (to.is_host()) return SendToHostFromActor(d, type, payload, kSize, d.correlation);
  return SendToActor<kSize, kAlign>(d, to.value, type, payload, d.correlation, d.sender);
}

// Marks the actor failed and tells the host (out of line, by value: see
// SendToHostRing).
__device__ __noinline__ void FailActor(const SystemParams* sys, ActorSlot* slot, u32 worker, void* outbound,
                                       u32 self, u32 sender, u64 hlc, u32 code) {
  slot->fail_code = code;
  StoreReleaseGpu32(&slot->status, static_cast<u32>(ActorState::kFailed));
  RK_TRACE_EVENT(sys, &static_cast<OutboundCursor*>(outbound)->trace, TraceKindType(TraceKind::kFault, 0), self, code,
                 sender);
  // Tell the host now (a rare path: the bus write is worth it).
  StoreRelaxedSys(&sys->actor_control[self].status,
                  static_cast<u64>(ActorState::kFailed) | static_cast<u64>(code) << 32);
  // Waits for room in a full ring rather than drop it (rt_outbound.cuh).
  const LlHeader h = OutboundHeader(OutboundKind::kActorFailed, 0, 0, 0, self, sender, code, hlc);
  WriteReport(sys, WorkerOutRing(sys, worker, static_cast<OutboundCursor*>(outbound)), h, nullptr);
}

__device__ __forceinline__ void Fail(Ctx& ctx, u32 code) {
  CtxData& d = ctx.d_;
  if (d.failed) return;
  d.failed = 1;
  FailActor(d.sys, d.actor, d.worker, d.outbound, d.self, d.sender, d.hlc, code);
}

__device__ __forceinline__ void SyncBlock(Ctx& ctx) {
  if (ctx.d_.block) {
    BlockBarrier();
  } else {
    // A barrier in a thread handler would wait for threads that never come.
    Fail(ctx, 0xFFFFFFFEu);
  }
}

}  // namespace detail
}  // namespace rk

#endif  // RINGKERNEL_DEVICE_RT_SEND_CUH_
