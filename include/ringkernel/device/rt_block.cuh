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

// Whether the first four header words of a record (type, size, sender,
// flags) say that a record for a block handler has begun at the position
// of `flag`: once they are there, the rest of it is being written or is (a
// plain payload before its header), and the takes wait for it.
__device__ __forceinline__ bool BlockRecordBegun(u64 w0, u64 w1, u64 w2, u64 w3, u32 flag, u32 actor_type) {
  if ((LlWordFlag(w0) ^ flag) | (LlWordFlag(w1) ^ flag) | (LlWordFlag(w2) ^ flag) | (LlWordFlag(w3) ^ flag)) {
    return false;
  }
  return (LlData(w3) & kMailVoid) == 0 && HandlerKindFast(actor_type, LlData(w0)) == 2;
}
__device__ __forceinline__ void LoadBlockPeek(const OwnedActor& o, u64 pos, u64* w) {
  const u64* slot = MailboxSlotAt(o.box, o.log2, o.slot_bytes, pos);
  LoadLlPairGpu(slot, &w[0], &w[1]);
  LoadLlPairGpu(slot + 2, &w[2], &w[3]);
}

// Whether the record at the head after a block run's round goes on in the
// same meeting (the leader decides, RunBlockMessage): the actor healthy, no
// hand-over waiting for it, the run under the actor's batch, and a record
// for a block handler begun there — seen by the loads made during the
// round's handler (`seen`), or by a look now.
__device__ __forceinline__ bool BlockRunGoesOn(WorkerThread& w, const OwnedActor& o, u32 a, DirectSlot* slots,
                                               u32 handled, bool seen) {
  if (o.failed || handled >= w.sys->batch_max) return false;
  if (a < kDirectSlots && HandOverWaiting(&slots[a])) return false;
  if (seen) return true;
  u64 p[4];
  LoadBlockPeek(o, o.head, p);
  return BlockRecordBegun(p[0], p[1], p[2], p[3], LlFlag(o.head, o.log2), o.type);
}

// The words of a record's first pass (MailboxLoadFirstPass) that lanes of
// a block run's leading warp loaded while the round before ran its handler,
// in the order they lie in the slot.
constexpr u32 kBlockStageWords = kMailHeaderWords + kMailWideWords;
__device__ __forceinline__ u32 FirstPassWords(u32 inline_words) {
  return kMailHeaderWords + (inline_words < kMailWideWords ? inline_words : kMailWideWords);
}

// 16 bytes of global memory copied into shared memory asynchronously (no
// register holds them: the copy stays in flight while the thread runs a
// handler), and the wait for this thread's copies. The copy reads L2, where
// the GPU's writes meet, 16 aligned bytes at once, so each 8-byte LL word
// arrives whole; what it read is trusted only as far as those words' flags
// say, as with a look at the slot. A plain payload after such a header is
// read after the taker's acquire fence (MailboxTakeFirstPass), which drops
// this SM's L1 lines: its producer fenced before the header, so the payload
// was in L2 before the header the copy saw.
__device__ __forceinline__ void CopyToShared16(void* to, const void* from) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(static_cast<u32>(__cvta_generic_to_shared(to))),
               "l"(from)
               : "memory");
}
__device__ __forceinline__ void WaitCopiesToShared() { asm volatile("cp.async.wait_all;" ::: "memory"); }

#if RK_BULK_INBOX && !(RK_STREAM_RUNS_ON || defined(RK_TRACE))
// A block run's next plain payload, copied into the block's inbox by the
// accelerator while the round ends and the next one begins (the leader's
// bookkeeping, the take, the prelude), so that the next handler reads it
// from shared memory instead of waiting for its trip to L2 (a 4 KiB
// payload's loads are most of a block handler's time in a stream). Called
// after the round's second barrier — every thread is done with the inbox
// then — by a thread outside the leader's warp (its fences would wait for
// the leader's stores, on the round's critical path), with the stage of
// the run's next position `pos`. It starts the copy if the staged header is
// whole and says a plain payload for a block handler that the inbox takes
// (kInboxMinBytes to kBulkStageBytes, whole 16-byte pieces), and returns
// whether it did, with the inbox's mbarrier phase to wait for in `*phase`.
// The inbox is free while the block meets (a thread handler gives it back
// when it returns); the copier holds it from its first copy to the run's
// end, when it waits for a copy that no round took (the run ended for a
// reason the leader alone knows) and gives it back.
__device__ __forceinline__ bool BlockInboxCopy(const u64* staged, const OwnedActor& o, u64 pos, u32* phase) {
  MailHeader h;
  if (!MailboxFirstHeader(staged, LlFlag(pos, o.log2), &h)) return false;
  if ((h.flags & (kMailPlain | kMailVoid)) != kMailPlain || h.size < kInboxMinBytes || h.size > kBulkStageBytes ||
      (h.size & 15) != 0 || detail::rk_bulk_stage.off != 0 || HandlerKindFast(o.type, h.type) != 2) {
    return false;
  }
  const u8* from = MailboxPlain(MailboxSlotAt(o.box, o.log2, o.slot_bytes, pos), o.inline_words);
  if ((reinterpret_cast<u64>(from) & 15) != 0) return false;
  // The header (seen in the stage, whose copy this thread waited for or
  // the round's barrier ordered) before the payload's reads, as a take
  // would order them; InboxCopyIn fences for the accelerator.
  FenceAcquireGpu();
  return InboxCopyIn<true>(from, h.size, phase);
}
#endif

// The actor a queued block message is for, read afresh by every thread
// (its owner stored and released it): the list position `a`, and where the
// message is (`source` 0: the mailbox, k + 1: channel entry k, whose state
// the owner keeps in its row of rk_rx).
__device__ __forceinline__ void LoadQueuedActor(const SystemParams* sys, const u32* list, u32 a, u32 source,
                                                OwnedActor& o) {
  o = LoadOwned(sys, list[a]);
  if (source != 0) {
    const ChannelRx& rx = rk_rx[a];
    o.box = reinterpret_cast<MailboxHeader*>(rx.box[source - 1]);
    o.head = rx.head[source - 1];
    o.released = o.head;
    o.source = source;
  }
}

#ifdef RK_OWNER_CYCLES
// A block run's cycles, by step (rt_base.cuh, kOcBlock*): kept per run in
// the leader's registers, added into the actor's row once the run ends.
__device__ __forceinline__ long long BlockCyclesStep(unsigned long long* oc, u32 k, long long since) {
  const long long now = clock64();
  oc[k - kOcBlockTake] += static_cast<unsigned long long>(now - since);
  return now;
}
__device__ __forceinline__ void BlockCyclesBetween(u32 actor, long long start) {
  if (rk_oc_block_end != 0) RK_OC_DIRECT(actor, kOcBlockBetween, start - rk_oc_block_end);
}
__device__ __forceinline__ void BlockCyclesRun(u32 actor, u32 rounds, const unsigned long long* oc) {
  unsigned long long* row = &rk_owner_cycles[(actor & 1023) * kOwnerCyclesPerActor];
  atomicAdd(&row[kOcBlockRuns], 1ull);
  atomicAdd(&row[kOcBlockRounds], static_cast<unsigned long long>(rounds));
  for (u32 k = kOcBlockTake; k <= kOcBlockMeet3; ++k) atomicAdd(&row[k], oc[k - kOcBlockTake]);
  rk_oc_block_end = clock64();
}
#endif

#if RK_STREAM_RUNS_ON || defined(RK_TRACE)
// Builds with stream runs or tracing run one block message a meeting, as
// before block runs (this is that code): those kernels have no registers to
// spare, and with a block run's loop they spilled (sm_90: 80 to 116 bytes
// with stream runs in every form tried, 152 traced; bench/NOTES.md,
// session 25).
// Runs the block handler of the message at the head of the actor at list
// position `a` (queued by its owner). Called by every thread of the block.
__device__ void RunBlockMessage(WorkerThread& w, u32 queued, u8* smem, u64* s_hlc, unsigned long long* s_handled,
                                DirectSlot* slots) {
  const SystemParams* sys = w.sys;
  const u32 tid = threadIdx.x;
  const u32* list = sys->worker_lists + static_cast<u64>(w.worker) * sys->max_actors_per_worker;
  // The queue's entry: the list position and the message's source.
  const u32 a = queued & 0xFFFFFFu;
  const u32 source = queued >> 24;
  // The actor's owner thread leads (rank 0): it makes the actor's sends.
  const u32 leader = kFirstOwner + a % OwnerCount();
  OwnedActor o;
  LoadQueuedActor(sys, list, a, source, o);
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

#else
// Runs the block handler of the message at the head of the actor at list
// position `a` (queued by its owner), and then, in the same meeting, the
// block handlers of the messages after it in the same queue while they are
// there (a block run: a stream of block messages pays for one meeting, not
// one each; at most the batch an owner takes per turn, since the block's
// other actors wait meanwhile). Within a run every thread keeps the actor
// in registers and moves its head itself; the leader marks the running
// table once, and gives producers room a quarter of the queue at a time
// and at the run's end, as an owner does; and the next record's first pass
// is copied into shared memory while the handler runs, so that in a
// backlog the next round takes it without a trip to memory. Called by
// every thread of the block.
__device__ void RunBlockMessage(WorkerThread& w, u32 queued, u8* smem, u64* s_hlc, unsigned long long* s_handled,
                                DirectSlot* slots) {
  const SystemParams* sys = w.sys;
  const u32 tid = threadIdx.x;
  const u32* list = sys->worker_lists + static_cast<u64>(w.worker) * sys->max_actors_per_worker;
  // The queue's entry: the list position and the message's source.
  const u32 a = queued & 0xFFFFFFu;
  const u32 source = queued >> 24;
  // The actor's owner thread leads (rank 0): it makes the actor's sends.
  const u32 leader = kFirstOwner + a % OwnerCount();
  OwnedActor o;
  LoadQueuedActor(sys, list, a, source, o);
  // The leader's word on whether the run goes on, read by all after the
  // round's last barrier (and written again only after the next round's
  // first).
  __shared__ u32 s_run_on;
  // The next record's first pass, copied by lanes of the leader's warp
  // while the handler runs: in a backlog a round takes its record from
  // here, without a trip to memory of its own.
  __shared__ __align__(16) u64 s_next[kBlockStageWords];
#if RK_BULK_INBOX
  // 1 when the inbox has (or is being given) the payload of the next
  // round's record (BlockInboxCopy), and the mbarrier phase to wait for.
  __shared__ u32 s_inbox_next;
  __shared__ u32 s_inbox_phase;
#endif
  const u32 stage_lane = (tid >> 5) == (leader >> 5) ? tid & 31 : 32;
  const bool stager = 2 * stage_lane < FirstPassWords(o.inline_words);
#if RK_BULK_INBOX
  // The thread that copies the next payload into the inbox: in the warp
  // after the leader's (or before it), or the leader in a block of one warp.
  const u32 copier = leader + 32 < blockDim.x ? leader + 32 : leader >= 32 ? leader - 32 : leader;
#endif
  RK_OC_ONLY(unsigned long long oc[kOcBlockMeet3 - kOcBlockTake + 1] = {}; long long oc_t = clock64();)
  RK_OC_ONLY(if (tid == leader) BlockCyclesBetween(o.index, oc_t);)
#pragma unroll 1
  for (u32 round = 1;; ++round) {
    u64* slot = MailboxSlotAt(o.box, o.log2, o.slot_bytes, o.head);
    const u32 flag = LlFlag(o.head, o.log2);
    MailRecord r;
    // The owner (or the leader's look) saw it begun; everyone reads the
    // same words: the stage's, if they are whole.
    for (bool staged = round > 1;; staged = false) {
      u64 words[kBlockStageWords];
      if (staged) {
RK_UNROLL
        for (u32 i = 0; i < kBlockStageWords; ++i) words[i] = s_next[i];
      } else {
        MailboxLoadFirstPass(slot, o.inline_words, 0, words);
      }
      if (MailboxTakeFirstPass(words, slot, o.inline_words, flag, &r, w.buf)) break;
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
#if RK_BULK_INBOX
      if (round == 1) s_inbox_next = 0;
#endif
    }
    RK_OC_ONLY(oc_t = BlockCyclesStep(oc, kOcBlockTake, oc_t);)
    BlockBarrier();
    RK_OC_ONLY(oc_t = BlockCyclesStep(oc, kOcBlockMeet1, oc_t);)
    // The next record's first pass, in flight during the handler (every
    // thread has read the stage by now).
    if (stager) {
      CopyToShared16(&s_next[2 * stage_lane], MailboxSlotAt(o.box, o.log2, o.slot_bytes, o.head + 1) + 2 * stage_lane);
    }
    const void* payload = r.payload;
#if RK_BULK_INBOX
    if (s_inbox_next != 0) {
      // (The completed wait makes the accelerator's writes visible to this thread.)
      WaitIn(SmemAddress(&rk_bulk_inbox.bar), s_inbox_phase);
      payload = rk_bulk_inbox.bytes;
    }
#endif
    Ctx ctx;
    InitCtx(ctx, w, o, r.h, *s_hlc, smem, 1);
    ctx.d_.leader = leader;
    if (!o.failed) DispatchBlock(o.type, o.state, r.h.type, payload, ctx);
    *w.sends = ctx.d_.cache;
    if (stager) WaitCopiesToShared();
    RK_OC_ONLY(oc_t = BlockCyclesStep(oc, kOcBlockHandler, oc_t);)
    BlockBarrier();
    RK_OC_ONLY(oc_t = BlockCyclesStep(oc, kOcBlockMeet2, oc_t);)
    ++o.head;
#if RK_BULK_INBOX
    if (tid == copier) {
      u32 phase = 0;
      s_inbox_next = round < sys->batch_max && BlockInboxCopy(s_next, o, o.head, &phase);
      s_inbox_phase = phase;
    }
#endif
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
      StoreOwned(o);
      ++*s_handled;
      const bool more = BlockRunGoesOn(
          w, o, a, slots, round,
          BlockRecordBegun(s_next[0], s_next[1], s_next[2], s_next[3], LlFlag(o.head, o.log2), o.type));
      if (!more || o.head - o.released >= (u64{1} << o.log2) / 4) {
        MailboxRelease(o.box, o.head);
        o.released = o.head;
      }
      if (source != 0) {
        rk_rx[a].head[source - 1] = o.head;
        rk_rx[a].released[source - 1] = o.released;
      }
      if (!more) MarkRunning(w, 0);
      s_run_on = more;
    }
    RK_OC_ONLY(oc_t = BlockCyclesStep(oc, kOcBlockAfter, oc_t);)
    BlockBarrier();
    RK_OC_ONLY(oc_t = BlockCyclesStep(oc, kOcBlockMeet3, oc_t);)
    if (!*static_cast<volatile u32*>(&s_run_on)) {
      RK_OC_ONLY(if (tid == leader) BlockCyclesRun(o.index, round, oc);)
#if RK_BULK_INBOX
      if (tid == copier) {
        if (s_inbox_next != 0) WaitIn(SmemAddress(&rk_bulk_inbox.bar), s_inbox_phase);
        InboxRelease();
      }
#endif
      break;
    }
  }
}
#endif  // RK_STREAM_RUNS_ON || defined(RK_TRACE)

}  // namespace detail
}  // namespace rk

#endif  // RINGKERNEL_DEVICE_RT_BLOCK_CUH_
