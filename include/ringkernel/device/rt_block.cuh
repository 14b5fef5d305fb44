// Copyright 2026 The RingKernel Authors.
//
// rt_block.cuh: block handlers, run by every thread of a worker block when
// an owner queued one (RunBlockMessage). Part of the worker's device code
// (rt_worker.cuh has the paths through a worker).
#ifndef RINGKERNEL_DEVICE_RT_BLOCK_CUH_
#define RINGKERNEL_DEVICE_RT_BLOCK_CUH_

#include "ringkernel/device/rt_owner.cuh"

namespace rk {
namespace detail {

// Shared-memory requests raised by any thread and served by the whole block.
constexpr u32 kRequestBlockWork = 1;
constexpr u32 kRequestHalt = 2;

// Runs the block handler of the message at the head of the actor at list
// position `a` (queued by its owner). Called by every thread of the block.
__device__ void RunBlockMessage(WorkerThread& w, u32 queued, u8* smem, u64* s_hlc, unsigned long long* s_handled,
                                DirectSlot* slots) {
  const SystemParams* sys = w.sys;
  const u32 tid = threadIdx.x;
  const u32* list = sys->worker_lists + static_cast<u64>(w.worker) * sys->max_actors_per_worker;
  // The queue's entry: the list position, and where the message is (0: the
  // mailbox, k + 1: channel entry k, whose state the owner keeps in its row
  // of rk_rx).
  const u32 a = queued & 0xFFFFFFu;
  const u32 source = queued >> 24;
  // The actor's owner thread leads (rank 0): it makes the actor's sends.
  const u32 leader = kFirstOwner + a % OwnerCount();
  // Everyone reads the actor afresh (its owner stored and released it).
  OwnedActor o = LoadOwned(sys, list[a]);
  if (source != 0) {
    const ChannelRx& rx = rk_rx[a];
    o.box = reinterpret_cast<MailboxHeader*>(rx.box[source - 1]);
    o.head = rx.head[source - 1];
    o.released = o.head;
    o.source = source;
  }
  u64* slot = MailboxSlotAt(o.box, o.log2, o.slot_bytes, o.head);
  const u32 flag = LlFlag(o.head, o.log2);
  MailRecord r;
  // The owner saw it complete; everyone reads the same words.
  while (!MailboxTryTake(slot, o.inline_words, flag, true, &r, w.buf)) {
  }
  u64 begin_ns = 0;  // the leader's
  if (tid == leader) {
    MarkRunning(w, RunningEntry(o.index, r.h.type));
    if (!o.failed) {
      RK_TRACE_EVENT(sys, &w.out->trace, TraceBeginKindType<false>(r.h), o.index, r.h.sender,
                     TraceBeginFlow<false>(r.h, o));
    }
    // One stamp for the whole block, so ctx.now() agrees on every rank.
    begin_ns = GlobalTimerNs();
    *s_hlc = HlcMerge(o.hlc, r.h.hlc, begin_ns);
  }
  BlockBarrier();
  Ctx ctx;
  InitCtx(ctx, w, o, r.h, *s_hlc, smem, 1);
  ctx.d_.leader = leader;
  if (!o.failed) DispatchBlock(o.type, o.state, r.h.type, r.payload, ctx);
  *w.sends = ctx.d_.cache;
  BlockBarrier();
  if (tid == leader) {
    // The leader is the one that sends and fails.
    if (o.failed) {
      DeadLetterWaiting(sys, WorkerOutRing(sys, w.worker, w.out), DeadLetterReason::kActorFailed, o.index, r.h,
                        r.payload);
      RK_TRACE_EVENT(sys, &w.out->trace, TraceKindType(TraceKind::kDeadLetter, r.h.type), o.index,
                     static_cast<u32>(DeadLetterReason::kActorFailed), r.h.sender);
      ++o.dead_lettered;
    } else {
      // Its end (a block handler's sends are recorded as they happen: none
      // is staged).
      RK_TRACE_EVENT(sys, &w.out->trace, TraceKindType(TraceKind::kHandlerEnd, r.h.type), o.index, r.h.sender, 0);
      RK_HANDLER_TIME(sys, o.index, GlobalTimerNs() - begin_ns);
      o.hlc = ctx.d_.hlc;
      AddSends(o, OutcomeOf(ctx.d_));
      ++o.handled;
      if (ctx.d_.failed) o.failed = 1;
    }
    if ((r.h.flags & kMailIngress) && a < kDirectSlots) atomicSub(&slots[a].pending, 1u);
    if (o.failed && a < kDirectSlots) SlotSet(&slots[a].failed, 1);
    MailboxStampUnused(slot, o.inline_words, flag, r.h);
    ++o.head;
    StoreOwned(o);
    ++*s_handled;
    MailboxRelease(o.box, o.head);
    if (source != 0) {
      rk_rx[a].head[source - 1] = o.head;
      rk_rx[a].released[source - 1] = o.head;
    }
    MarkRunning(w, 0);
  }
  BlockBarrier();
}

}  // namespace detail
}  // namespace rk

#endif  // RINGKERNEL_DEVICE_RT_BLOCK_CUH_
