// Copyright 2026 The RingKernel Authors.
//
// rt_worker.cuh: the worker blocks of the persistent kernel. Part of the
// device runtime (runtime.cuh).
//
// A worker owns the actors the host assigned to it (one owner per actor: an
// actor handles one message at a time). Warp 0 is the worker's host poller
// and owns no actor; the actor at position i of the worker's list belongs to
// thread 32 + i mod (width - 32), which polls its mailbox and runs its thread
// handlers. The first `width - 32` actors stay in their thread's registers
// across iterations.
//
// Paths through a worker:
//   * K2K: the owner polls the slot at its mailbox head; the poll that sees
//     the record has read it (LL words, mailbox.h); it runs the handler and
//     releases the slots to producers lazily. The owner of one of the first
//     kChannelReceivers actors also serves the channels that sending
//     threads opened to it (channel.h), each the same way: the mailbox
//     first, then the channels in entry order, every iteration. An actor in
//     a conversation lets its handler's call wait for the next small record
//     of the same queue and run it too (rt_dispatch.cuh, ConvRun).
//   * Host → actor: each worker has its own ring in mapped memory, written by
//     the host for this worker's actors only, in variable-length records
//     (128-byte units, ll_ring.h), polled by warp 0 — while quiet with the
//     first two units only (a small record whole; one unit after a lone
//     one-unit record), and with a 2 KiB window while host traffic is
//     recent, so a backlog is read several records per bus round trip. A
//     warp of its own, because a read over the bus takes about a
//     microsecond, and the owners must not wait for it. Small
//     thread-handler messages for one of the first 32 actors are handed to
//     its owner through a ring of kDirectDepth entries in shared memory
//     (DirectSlot), which the owner empties in one iteration; anything else
//     (a block handler, a large payload, a later actor) is forwarded into
//     the actor's mailbox as any producer would. Per (host, actor) FIFO
//     holds: the poller hands over directly only while none of the actor's
//     host messages wait in its mailbox, and forwards only while its
//     hand-over ring is empty. A host message does not overtake the K2K
//     messages reserved in the actor's queues before it came: each entry
//     carries the mailbox tail the poller read after the record (its mark),
//     and the owner takes it only once its mailbox head has passed the mark.
//     The channels have tails of their own, so for them the owner also
//     takes only the hand-overs it saw before it found its queues empty (and
//     no channel opened that it has not looked at), or once each head has
//     passed the tail it read after it saw them waiting. An actor that keeps
//     itself busy still gets its host messages.
//   * Block handlers: the owner queues the actor in shared memory and raises
//     a request; every warp checks the request each iteration and the block
//     meets at a barrier to run them. No barrier otherwise.
//   * Idle: a warp that found no work for `idle_spin_ns` sleeps between
//     polls, doubling up to `idle_backoff_max_ns`; the first message ends it.
//     A worker with no actors sleeps kEmptyWorkerSleepNs between looks for
//     its first one.
//   * Fault attribution: a thread writes the running table (mapped) only
//     when the actor or message type it runs changes, with a posted store
//     and no fence; it clears its entry when idle. A fault in the handler
//     finds the entry because a thread's stores issued before a faulting
//     instruction reach the host before the fault is reported — measured,
//     not promised by the memory model (FaultRightAfterEntryGpuTest on
//     every GPU run; bench/probes/fault_store.cu). A system-scope fence
//     made sure of it and cost the first handler after idle some 1 µs.
#ifndef RINGKERNEL_DEVICE_RT_WORKER_CUH_
#define RINGKERNEL_DEVICE_RT_WORKER_CUH_

// In the order of their parts: a thread, its queues, the poller, the block.
#include "ringkernel/device/rt_dispatch.cuh"
#include "ringkernel/device/rt_owner.cuh"
#include "ringkernel/device/rt_poller.cuh"
#include "ringkernel/device/rt_block.cuh"

namespace rk {
namespace detail {

// How long a worker without actors sleeps between looks for its first one
// (the first message to an actor spawned on it may wait this much longer).
constexpr u32 kEmptyWorkerSleepNs = 20000;

// What both roles of a worker block share: its block-wide state in shared
// memory, and the thread's view of the worker.
struct WorkerShared {
  u32* pending;  // actors whose next message needs the block (dynamic shared memory)
  u8* smem;
  u32* request;
  u32* pending_count;
  unsigned long long* handled;
  unsigned long long* hlc;
  OutboundCursor* out;
  DirectSlot* direct;
};

// One role's loop: the poller (warp 0, kPoller) or the owners (the other
// warps). Each role has a loop of its own, so that what one role carries
// from iteration to iteration (the poller's ring, an owner's resident actor
// and hand-over mark) does not hold registers while the other role's code
// runs: the kernel is one function whose registers are allocated as a
// whole, and a handler's call has only what the caller's loop leaves free.
// What both do each iteration (new actors, block work, the halt, idling) is
// the same code in both.
template <bool kPoller>
__device__ __forceinline__ void WorkerRoleLoop(const SystemParams* sys, u32 worker, WorkerThread& w,
                                               const WorkerShared& sh) {
  const u32 tid = threadIdx.x;
  const u32 lane = LaneId();
  const u32 owners = OwnerCount();
  // This thread's first list position (kNoActorValue: warp 0, the poller).
  const u32 first = kPoller ? kNoActorValue : tid - kFirstOwner;
  const u32* list = sys->worker_lists + static_cast<u64>(worker) * sys->max_actors_per_worker;
  WorkerStats* stats = &sys->worker_stats[worker];
  DirectSlot* my_direct = !kPoller && first < kDirectSlots ? &sh.direct[first] : nullptr;
  // The channels of its resident actor (opened at spawn for exactly these
  // positions, ApplySpawn).
  ChannelRx* my_rx = !kPoller && first < kChannelReceivers && sys->channel_tables != nullptr ? &rk_rx[first] : nullptr;
  HostRing ring{};
  if (kPoller) {
    ring.hdr = WorkerRing(sys->worker_in, sys->worker_ring_bytes, worker);
    ring.slots = RingSlots(ring.hdr);
    ring.log2 = sys->worker_in_log2;
    ring.quiet_words = kQuietWords;
  }
  u32 count = 0;
  bool have_mine = false;
  OwnedActor mine{};
  // See the hand-over below: the mailbox tail when a waiting hand-over was
  // first found, or kNoMark.
  constexpr u64 kNoMark = ~u64{0};
  u64 direct_mark = kNoMark;
  u32 direct_mark_tail = 0;  // the hand-over slot's tail read before the marks
  RK_OC_ONLY(long long oc_returned = 0;)
  // The resident actor's channels (my_rx), kept here so that an iteration
  // reads no shared memory for an actor that has none: bit k, entry k is a
  // channel; bit 8 + k, it was hot after its last serve.
  u32 rx_bits = 0;
  u64 iterations = 0;
  u64 last_work_ns = __shfl_sync(0xFFFFFFFFu, GlobalTimerNs(), 0);
  u32 backoff = 0;
  for (;;) {
    ++iterations;
    // Everything a warp decides on together comes from its lane 0: after a
    // divergent branch its lanes need not have reconverged, and lanes that
    // read the same word at different moments could disagree.
    // New actors are looked for every 16 iterations (a trip to memory the
    // message paths need not wait for on every poll).
    // (Every iteration while the worker has none: it sleeps long then.)
    const u32 fresh = (iterations & 15) == 1 || count == 0
                          ? __shfl_sync(0xFFFFFFFFu, LoadRelaxedGpu32(&sys->worker_counts[worker]), 0)
                          : count;
    RK_TRACE_ONLY(if (tid == 0 && (iterations & 15) == 1) TraceRefresh(sys, &sh.out->trace);)
    RK_HOP_CYCLE(w, kHcFresh);
    if (fresh != count) {
      // Pick up actors spawned on this worker (the service warp
      // release-stores the count after the actor's record).
      count = __shfl_sync(0xFFFFFFFFu, LoadAcquireGpu32(&sys->worker_counts[worker]), 0);
      if (!kPoller && !have_mine && first < count) {
        mine = LoadOwned(sys, list[first]);
        have_mine = true;
        if (my_direct != nullptr) {
          SlotSet(&my_direct->actor_type, mine.type);
          SlotSet(&my_direct->failed, mine.failed);
          u64 thread_types = 0;
          for (u32 m = 0; m < 64; ++m) thread_types |= u64{HandlerKindOf(mine.type, m) == 1} << m;
          SlotSet64(&my_direct->thread_types, thread_types);
          SlotSet64(&my_direct->box, reinterpret_cast<u64>(mine.box));
          __threadfence_block();
          SlotSet(&my_direct->actor, mine.index + 1);
        }
      }
    }
    const u64 now = __shfl_sync(0xFFFFFFFFu, GlobalTimerNs(), 0);
    RK_HOP_CYCLE(w, kHcLoopTop);
    RK_HOP_STAMP(w, kHopLoopTop, GlobalTimerNs());
    u32 did = 0;
    bool want_block = false;
    if (kPoller) {
      // The poller. Only a worker with actors has host messages: the others
      // never touch the bus.
      if (count != 0) did |= ServeHostRing(w, ring, sh.direct, now, sh.request);
    } else {
      // Serves the mailbox of the actor at list position `a`; queues it for
      // the block when its next message needs a block handler. True when it
      // found the mailbox empty (a hand-over may be taken after it).
      auto serve = [&](OwnedActor& o, u32 a, DirectSlot* direct, bool resident, bool take_direct) {
        bool block = false;
        bool retried = false;
        // (The loop's time between two calls counts only after a call that
        // took messages: a stream's, not an idle actor's sleeps.)
        RK_OC_ONLY(if (resident && oc_returned != 0) RK_OC_ADD(kOcBetween, clock64() - oc_returned);)
        RK_OC_ONLY(if (resident && oc_returned != 0) RK_OC_ADD(kOcStreamLoops, 1);)
        const u32 n = ServeMailbox(w, o, direct, resident, take_direct, &block, &retried);
        RK_OC_ONLY(if (resident) oc_returned = n != 0 ? clock64() : 0;)
        if (n != 0) {
          did = 1;
          atomicAdd(sh.handled, static_cast<unsigned long long>(n));
        }
        RK_HOP_CYCLE(w, kHcServed);
        if (block) {
          sh.pending[atomicAdd(sh.pending_count, 1u)] = a;
          want_block = true;
        }
        // A message handed back with retry_later is still at the head: the
        // mailbox is not drained, so hand-overs wait behind it.
        return !block && !retried && n < sys->batch_max;
      };
      if (have_mine) {
        // Its sources: bit 0 the mailbox, bit k + 1 channel entry k. While
        // a channel is hot and the mailbox is not, the mailbox is polled
        // every 4th iteration only: a poll of an empty queue is a trip to L2
        // that the channel's next message would wait behind. (Hand-overs
        // wait for an iteration that polled it.)
        u32 sources = 1;
        bool drained = true;
        if (rx_bits != 0) {
          sources = (rx_bits & 0xFFu) << 1;
          if ((rx_bits >> 8) == 0 || IsHot(mine) || (iterations & 3) == 0) {
            sources |= 1;
          } else {
            drained = false;
          }
        }
        // The mailbox is the actor's only queue (no channel open or looked
        // for): the entries' marks alone order its hand-overs (below), and
        // its spin takes the ones it sees itself (ServeMailbox's
        // take_direct). Cleared when this iteration's records announce a
        // channel.
        bool sole = rx_bits == 0 && mine.look == 0;
        // Otherwise, the hand-overs that came before any source is polled in
        // this iteration: the ones a drained iteration may take (below).
        u32 direct_limit = my_direct != nullptr && !sole ? SlotGet(&my_direct->tail) : 0u;
        do {
          const u32 src = __ffs(sources) - 1;
          sources &= sources - 1;
          SourceSaved saved{};
          if (src != 0) saved = SwapInChannel(mine, my_rx, src - 1);
          // A block handler's queue entry names the source (RunBlockMessage).
          drained = serve(mine, first | src << 24, my_direct, true, sole) && drained;
          if ((mine.hot & kHotTook) != 0) {
            // It did: no other hand-over is taken in this iteration (one
            // it handed back waits for a later one, as anywhere).
            did |= (mine.hot & kHotTookAny) != 0 ? 1u : 0u;
            mine.hot &= ~(kHotTook | kHotTookAny | kHotCut);
            direct_mark = kNoMark;
            RK_HOP_CYCLE(w, kHcSources);
            goto hand_overs_done;
          }
          if ((mine.hot & kHotCut) != 0) {
            // This source's spin ended for a hand-over. If it is the
            // mailbox (always the first source polled), a drained
            // iteration may take what the spin saw: the entries' marks
            // cover the mailbox, and the channels are polled after. (A
            // channel's spin has no marks: a message that landed in it
            // after its last poll, or in a source polled before it, may
            // have come before the hand-over — its sender, say, told the
            // host it had sent it — so those hand-overs wait for an
            // iteration that saw them first.) (An actor with no channel has
            // its spin take the hand-over itself, above.)
            if (src == 0) direct_limit = SlotGet(&my_direct->tail);
            mine.hot &= ~kHotCut;
          }
          if (src != 0) {
            const u32 k = src - 1;
            rx_bits = (rx_bits & ~(0x100u << k)) | (IsHot(mine) ? 0x100u << k : 0u);
            SwapOutChannel(mine, my_rx, k, saved);
            // The block reloads the actor, mailbox head included.
            if (want_block) ReleaseOwned(mine);
          }
        } while (sources != 0 && !want_block);
        RK_HOP_CYCLE(w, kHcSources);
        if (mine.look != 0) {
          // A sender opened a channel (its record came through the
          // mailbox): served from the next iteration on, and hand-overs
          // wait for what it holds.
          mine.look = my_rx != nullptr && !LookForChannels(sys, mine.index, my_rx);
          if (my_rx != nullptr) rx_bits = (rx_bits & ~0xFFu) | my_rx->active;
          drained = false;
          sole = false;
        }
        // Hand-overs: a host message is handled after the K2K messages that
        // were in the mailbox and the channels when it came (see the top of
        // this file). For the mailbox alone the entries' marks say when:
        // ServeDirect takes those whose marks the head has passed, whatever
        // this iteration found (drained, busy, a block handler's message or
        // a retry_later at the head), and leaves the rest. With channels, the
        // loop's own rules: a drained iteration takes what came before its
        // polls, a busy one waits until each head has passed the tail it read
        // when it first found the hand-over waiting.
        if (my_direct != nullptr) {
          bool take = false;
          u32 limit = 0;
          if (sole) {
            const u64 ht = SlotGetPair(&my_direct->head);
            limit = static_cast<u32>(ht >> 32);
            take = limit != static_cast<u32>(ht);
          } else if (drained) {
            take = true;
            limit = direct_limit;
          } else if (SlotGet(&my_direct->tail) != SlotGet(&my_direct->head)) {
            // A hand-over waits while the actor stays busy (one that sends
            // itself messages may never leave its mailbox empty): it is
            // taken once each head has passed the tail seen when it was
            // first found, i.e. after the messages queued before it.
            if (direct_mark == kNoMark) {
              // (A tail never reaches kNoMark: 2^64 messages.) The
              // hand-overs seen before the marks are read are the ones
              // they cover.
              direct_mark_tail = SlotGet(&my_direct->tail);
              direct_mark = LoadRelaxedGpu(&mine.box->tail.value);
              if (rx_bits != 0) {
                for (u32 active = rx_bits & 0xFFu; active != 0; active &= active - 1) {
                  const u32 k = __ffs(active) - 1;
                  my_rx->mark[k] = LoadRelaxedGpu(&reinterpret_cast<MailboxHeader*>(my_rx->box[k])->tail.value);
                }
              }
            } else {
              bool passed = static_cast<i64>(mine.head - direct_mark) >= 0;
              if (rx_bits != 0) {
                for (u32 active = rx_bits & 0xFFu; active != 0; active &= active - 1) {
                  const u32 k = __ffs(active) - 1;
                  passed = passed && static_cast<i64>(my_rx->head[k] - my_rx->mark[k]) >= 0;
                }
              }
              take = passed;
              limit = direct_mark_tail;
            }
          }
          if (take) {
            RK_OC_ONLY(const long long oc_d = clock64(); w.cut_call = oc_d;)
            const u32 nd = ServeDirect(w, mine, my_direct, limit);
            RK_OC_ONLY(if (nd != 0) RK_OC_ADD(kOcServeDirect, clock64() - oc_d);)
            did |= nd;
          }
          if (take || sole) direct_mark = kNoMark;
          if (mine.failed) SlotSet(&my_direct->failed, 1);
        }
      hand_overs_done:
        RK_HOP_CYCLE(w, kHcHandOvers);
      }
      for (u32 a = first + owners; a < count; a += owners) {
        OwnedActor o = LoadOwned(sys, list[a]);
        serve(o, a, nullptr, false, false);
      }
    }
    if (want_block) atomicOr(sh.request, kRequestBlockWork);
    if (kPoller && tid == 0 && ((iterations & 63) == 0 || count == 0)) {
      if (LoadRelaxedGpu(&sys->shared->run.value) >= static_cast<u64>(KernelState::kHalting)) {
        atomicOr(sh.request, kRequestHalt);
      }
      StoreRelaxedGpu(&stats->iterations, iterations);
      StoreRelaxedGpu(&stats->handled, *sh.handled);
    }
    // Block work and halting: the whole block meets only when asked to.
    // (Each role has this code, so its barriers are BlockBarrier's: a
    // barrier that several instructions of the block meet at.)
    RK_HOP_CYCLE(w, kHcLoopEnd);
    RK_HOP_STAMP(w, kHopLoopEnd, GlobalTimerNs());
    if (__any_sync(0xFFFFFFFFu, *static_cast<volatile u32*>(sh.request) != 0)) {
      BlockBarrier();
      const u32 request = *static_cast<volatile u32*>(sh.request);
      const u32 n_pending = *static_cast<volatile u32*>(sh.pending_count);
      for (u32 i = 0; i < n_pending; ++i) {
        const u32 a = sh.pending[i];
        RunBlockMessage(w, a, sh.smem, sh.hlc, sh.handled, sh.direct);
        if (!kPoller && (a & 0xFFFFFFu) == first) mine = LoadOwned(sys, list[first]);
      }
      if (n_pending != 0) did = 1;
      BlockBarrier();
      if (tid == 0) {
        *sh.pending_count = 0;
        *sh.request = 0;
      }
      BlockBarrier();
      if (request & kRequestHalt) break;
    }
    RK_HOP_CYCLE(w, kHcRequest);
    // Idle: after idle_spin_ns without work, this warp sleeps between polls
    // (and its threads leave the running table).
    if (__any_sync(0xFFFFFFFFu, did != 0)) {
      last_work_ns = now;
      backoff = 0;
    } else if (count == 0) {
      // A worker without actors has nothing to poll: it only looks for its
      // first actor and for the halt, kEmptyWorkerSleepNs apart. Most
      // workers of a lightly used system are such, and their polling was
      // most of its idle power.
      __nanosleep(kEmptyWorkerSleepNs);
    } else if (now - last_work_ns > sys->idle_spin_ns) {
      MarkRunning(w, 0);
      if (sys->idle_backoff_max_ns != 0) {
        backoff = backoff == 0 ? 64 : (backoff * 2 > sys->idle_backoff_max_ns ? sys->idle_backoff_max_ns : backoff * 2);
        __nanosleep(backoff);
      }
    }
    RK_HOP_CYCLE(w, kHcIdle);
  }
  if (!kPoller && have_mine) {
    StoreOwned(mine);
    ReleaseOwned(mine);
    if (my_rx != nullptr) {
      for (u32 active = my_rx->active; active != 0; active &= active - 1) {
        const u32 k = __ffs(active) - 1;
        if (my_rx->released[k] != my_rx->head[k]) {
          MailboxRelease(reinterpret_cast<MailboxHeader*>(my_rx->box[k]), my_rx->head[k]);
        }
      }
    }
    RK_OC_ONLY(OwnerCyclesFlush(mine.index);)
  }
  MarkRunning(w, 0);
  if (kPoller && lane == 0 && ring.released != HostReleasePoint(ring.head)) {
    LlRelease(ring.hdr, HostReleasePoint(ring.head));
  }
  if (kPoller && tid == 0) {
    RK_TRACE_ONLY(TraceRefresh(sys, &sh.out->trace);)
    StoreRelaxedGpu(&stats->iterations, iterations);
    StoreRelaxedGpu(&stats->handled, *sh.handled);
    StoreRelaxedGpu(&stats->exited, 1);
    FetchAddGpu(&sys->shared->workers_exited.value, 1);
  }
}

__device__ void WorkerLoop(const SystemParams* sys, u32 worker, u8* smem) {
  const u32 tid = threadIdx.x;
  const u32 warp = tid / 32;
  __shared__ u32 s_request;
  __shared__ u32 s_pending_count;
  __shared__ unsigned long long s_handled;
  __shared__ unsigned long long s_hlc;
  __shared__ OutboundCursor s_out;
  __shared__ DirectSlot s_direct[kDirectSlots];
  if (tid == 0) {
    s_request = 0;
    s_pending_count = 0;
    s_handled = 0;
    s_out.tail = 0;
    s_out.cached_head = 0;
    const OutRing r = WorkerOutRing(sys, worker, &s_out);
    s_out.slots = r.slots;
    s_out.log2 = r.log2;
    s_out.slot_words = sys->slot_words;
    RK_TRACE_ONLY(TraceInit(&s_out.trace, worker);)
    InitHostHoles();
#if RK_BULK_COPY
    BulkStageInit(sys->no_bulk_copy);
#endif
  }
  RK_TRACE_ONLY(TraceStageInit();)
  RK_OC_ONLY(OwnerCyclesClear();)
  static_assert(kChannelReceivers <= kDirectSlots, "one loop initialises both");
  if (tid < kChannelReceivers) {
    rk_rx[tid].seen = 0;
    rk_rx[tid].active = 0;
  }
  if (tid < kDirectSlots) {
    SlotSet(&s_direct[tid].head, 0);
    SlotSet(&s_direct[tid].tail, 0);
    SlotSet(&s_direct[tid].pending, 0);
    SlotSet(&s_direct[tid].actor, 0);
    SlotSet(&s_direct[tid].failed, 0);
  }
  __syncthreads();
  ThreadFrame frame{};
  SendCache& sends = frame.sends;
  ForgetReceiver(sends);
  alignas(16) u32 buf[kMailInlineMaxWords];
  WorkerThread w;
  w.sys = sys;
  w.sends = &sends;
  w.buf = buf;
  w.worker = worker;
  w.out = &s_out;
  w.running = 0;
  RK_HOP_ONLY(w.hop_prev_in = w.hop_prev_out = 0; w.hop_after = nullptr; w.hop_done = 0;)
#ifdef RK_ASK_STAMPS
  w.cut_ns = 0;
  w.cut_poll_ns = 0;
#endif
  RK_OC_ONLY(w.cut_cyc = w.cut_ret = w.cut_call = 0;)
  RK_HOP_ONLY(if (tid < 256) rk_hop_current[tid] = nullptr;)
  WorkerShared sh;
  sh.pending = reinterpret_cast<u32*>(smem + AlignUp(sys->scratch_bytes, 16));
  sh.smem = smem;
  sh.request = &s_request;
  sh.pending_count = &s_pending_count;
  sh.handled = &s_handled;
  sh.hlc = &s_hlc;
  sh.out = &s_out;
  sh.direct = s_direct;
  if (warp == 0) {
    WorkerRoleLoop<true>(sys, worker, w, sh);
  } else {
    WorkerRoleLoop<false>(sys, worker, w, sh);
  }
}

}  // namespace detail
}  // namespace rk

#endif  // RINGKERNEL_DEVICE_RT_WORKER_CUH_
