// Copyright 2026 The RingKernel Authors.
//
// rt_service.cuh: the service block (block 0) of the persistent kernel.
// Part of the device runtime (runtime.cuh).
//   * warp 0, the control ingress: the only poller of the host's control
//     ring. It applies control records in order (spawn, bind, flush, drain,
//     halt) and acknowledges each. Messages never pass through it: the host
//     writes them to the ring of the receiver's worker (rt_worker.cuh).
//   * warp 1, the monitor: flushes counters to the mapped control blocks
//     (periodically and on request), detects quiescence while draining, and
//     halts the workers.
#ifndef RINGKERNEL_DEVICE_RT_SERVICE_CUH_
#define RINGKERNEL_DEVICE_RT_SERVICE_CUH_

#include "ringkernel/device/rt_base.cuh"
#include "ringkernel/device/rt_trace.cuh"

namespace rk {
namespace detail {

// One pass of a warp over 64 LL words of a slot: lane L loads words
// base+2L and base+2L+1 with one 16-byte load; every load of the pass is in
// flight at once, so a pass costs one bus round trip.
struct IngressPass {
  u32 w0, w1;     // this lane's two data words
  bool ok0, ok1;  // whether they carry the expected flag
};

__device__ __forceinline__ IngressPass ReadPass(const u64* slot, u32 base, u32 flag) {
  IngressPass p;
  u64 a, b;
  LoadRelaxedSysPair(slot + base + 2 * LaneId(), &a, &b);
  p.w0 = LlData(a);
  p.w1 = LlData(b);
  p.ok0 = LlWordFlag(a) == flag;
  p.ok1 = LlWordFlag(b) == flag;
  return p;
}

// Whether the words [base, base + 64) ∩ [0, words) of the pass are all there.
__device__ __forceinline__ bool PassComplete(const IngressPass& p, u32 base, u32 words) {
  const u32 i = base + 2 * LaneId();
  const bool ok = (i >= words || p.ok0) && (i + 1 >= words || p.ok1);
  return __all_sync(0xFFFFFFFFu, ok);
}

// The memory of a new actor comes uninitialised from the arena: the host
// never clears device memory while the kernel runs (a memset is a kernel of
// its own, which would wait for SMs the persistent kernel holds — until it
// exits, and then overwrite live state). The service warp prepares it.
__device__ __noinline__ void ApplySpawn(const SystemParams* sys, const SpawnRecord& r) {
  const u32 lane = LaneId();
  MailboxHeader* box = reinterpret_cast<MailboxHeader*>(r.mailbox);
  const u32 log2 = ShapeLog2(r.shape);
  const u32 ll_words = kMailHeaderWords + ShapeInlineWords(r.shape);
  const u64 capacity = u64{1} << log2;
  uint4* state = reinterpret_cast<uint4*>(r.state);
  for (u32 i = lane; i < r.state_bytes / 16; i += 32) state[i] = make_uint4(0, 0, 0, 0);
  // Every LL word of every slot cleared: zero never matches a flag.
  for (u64 i = 0; i < capacity; ++i) {
    u64* slot = MailboxSlotAt(box, log2, r.slot_bytes, i);
    for (u32 w = lane; w < ll_words; w += 32) StoreRelaxedGpu(slot + w, 0);
  }
  // Every lane's stores before lane 0 publishes the actor.
  __threadfence();
  __syncwarp();
  if (lane == 0) {
    box->capacity_log2 = log2;
    box->slot_bytes = r.slot_bytes;
    box->inline_words = ShapeInlineWords(r.shape);
    box->plain_bytes = r.plain_bytes;
    StoreRelaxedGpu(&box->head.value, 0);
    StoreRelaxedGpu(&box->tail.value, 0);
    ConstructActor(r.type, reinterpret_cast<void*>(r.state));
    ActorSlot* slot = &sys->actors[r.actor];
    slot->mailbox = r.mailbox;
    slot->state = r.state;
    slot->type = r.type;
    slot->shape = r.shape;
    slot->slot_bytes = r.slot_bytes;
    slot->worker = r.worker;
    slot->fail_code = 0;
    slot->hlc = 0;
    slot->handled = slot->dead_lettered = slot->sent = 0;
    slot->send_full = slot->send_no_actor = slot->send_other = slot->rejected = 0;
    slot->start = 0;
    slot->direct = 0;
    slot->lane = r.lane;
    // Channels to it (channel.h) where its owner will hold it in registers
    // and has a row for them: the first positions of its worker's list.
    // Fixed now, before anyone can send to it.
    if (sys->channel_tables != nullptr) {
      sys->channel_tables[r.actor].open =
          sys->channel_arena != nullptr && r.lane < kChannelReceivers && r.lane < sys->threads_per_block - 32;
    }
    StoreReleaseGpu32(&slot->status, static_cast<u32>(ActorState::kRunning));
    sys->worker_lists[static_cast<u64>(r.worker) * sys->max_actors_per_worker + r.lane] = r.actor;
    StoreReleaseGpu32(&sys->worker_counts[r.worker], r.lane + 1);
    const u64 count = LoadRelaxedGpu(&sys->shared->actor_count.value);
    if (r.actor + 1 > count) StoreReleaseGpu(&sys->shared->actor_count.value, r.actor + 1);
    StoreRelaxedSys(&sys->actor_control[r.actor].status, static_cast<u64>(ActorState::kRunning));
  }
  __syncwarp();
}

// ---- The control ingress. ----

__device__ void IngressLoop(const SystemParams* sys) {
  const u32 lane = LaneId();
  const u64* slots = sys->inbound_slots;
  const u32 log2 = sys->inbound_log2;
  const u32 slot_words = sys->slot_words;
  u64 head = 0;
  u32 idle = 0;
  for (;;) {
    const u32 flag = LlFlag(head, log2);
    const u64* slot = LlSlot(slots, slot_words, log2, head);
    IngressPass p = ReadPass(slot, 0, flag);
    if (!PassComplete(p, 0, kLlHeaderWords)) {
      if ((++idle & 255) == 0) {
        const u64 run = LoadRelaxedGpu(&sys->shared->run.value);
        if (run >= static_cast<u64>(KernelState::kHalting)) break;
      }
      // Control records are rare: poll the bus gently.
      __nanosleep(idle < 64 ? 200 : 2000);
      continue;
    }
    idle = 0;
    u32 hw[kLlHeaderWords];
#pragma unroll
    for (u32 k = 0; k < kLlHeaderWords / 2; ++k) {
      hw[2 * k] = __shfl_sync(0xFFFFFFFFu, p.w0, k);
      hw[2 * k + 1] = __shfl_sync(0xFFFFFFFFu, p.w1, k);
    }
    const LlHeader h = LlHeaderFromWords(hw);
    if (h.size > sys->max_payload || h.type < kControlTypeBase) {
      // A corrupt record: the host never writes one. Say so and stop reading
      // host input rather than guess where the next record starts.
      if (lane == 0) StoreReleaseSys(&sys->control->ingress_error.value, head + 1);
      break;
    }
    const u32 words = kLlHeaderWords + (h.size + 3) / 4;
    while (!PassComplete(p, 0, words < 64 ? words : 64)) p = ReadPass(slot, 0, flag);
    const ControlOp op = static_cast<ControlOp>(h.type - kControlTypeBase);
    if (op == ControlOp::kSpawn) {
      SpawnRecord r;
      u32* rw = reinterpret_cast<u32*>(&r);
      // The record's words are in lanes 5.. (two per lane).
#pragma unroll
      for (u32 k = 0; k < sizeof(SpawnRecord) / 8; ++k) {
        rw[2 * k] = __shfl_sync(0xFFFFFFFFu, p.w0, 5 + k);
        rw[2 * k + 1] = __shfl_sync(0xFFFFFFFFu, p.w1, 5 + k);
      }
      ApplySpawn(sys, r);
    } else if (lane == 0) {
      if (op == ControlOp::kBind) {
        if (h.actor < sys->num_routes) RouteBind(sys->routes, h.actor, h.aux);
      } else if (op == ControlOp::kFlush) {
        StoreReleaseGpu(&sys->shared->flush_request.value, h.hlc);
      } else if (op == ControlOp::kDrain) {
        StoreReleaseGpu(&sys->shared->run.value, static_cast<u64>(KernelState::kDraining));
      } else if (op == ControlOp::kHalt) {
        StoreReleaseGpu(&sys->shared->run.value, static_cast<u64>(KernelState::kHalting));
      } else if (op == ControlOp::kTrace) {
        // The clock first: the host pairs it with the times around its
        // wait for this record's ack (the release below orders it first).
        StoreRelaxedSys(&sys->control->trace_clock.value, GlobalTimerNs());
        StoreReleaseGpu(&sys->shared->trace_on.value, h.aux != 0 ? 1 : 0);
      }
    }
    const bool stop = op == ControlOp::kDrain || op == ControlOp::kHalt;
    __syncwarp();
    if (lane == 0) LlStampUnusedWords(const_cast<u64*>(slot), slot_words, flag, h.size);
    ++head;
    if (lane == 0) {
      LlRelease(sys->inbound, head);
      StoreReleaseSys(&sys->control->ack.value, h.hlc);
    }
    if (stop) break;
  }
  if (lane == 0) StoreReleaseGpu(&sys->shared->ingress_done.value, 1);
}

// ---- The monitor warp. ----

__device__ __noinline__ void FlushCounters(const SystemParams* sys) {
  const u32 lane = LaneId();
  const u64 count = LoadAcquireGpu(&sys->shared->actor_count.value);
  for (u64 a = lane; a < count; a += 32) {
    ActorSlot* s = &sys->actors[a];
    const u32 status = LoadAcquireGpu32(&s->status);
    if (status == static_cast<u32>(ActorState::kFree)) continue;
    MailboxHeader* box = reinterpret_cast<MailboxHeader*>(s->mailbox);
    // Received: what came through its channels too, less the mailbox's
    // kMailChannel records (notices, not messages). An entry is published
    // after its record's position was reserved, so with the entries read
    // first (acquire) the tail read after them counts every notice they
    // count.
    const ChannelCounts ch =
        sys->channel_tables != nullptr ? ChannelCountsOf(&sys->channel_tables[a]) : ChannelCounts{0, 0, 0};
    const u64 notices = ch.opened;
    const u64 tail = LoadAcquireGpu(&box->tail.value) + ch.tails;
    const u64 head = LoadAcquireGpu(&box->head.value) + ch.heads;
    ActorControl* c = &sys->actor_control[a];
    const u64 handled = LoadRelaxedGpu(&s->handled);
    const u64 dead = LoadRelaxedGpu(&s->dead_lettered);
    StoreRelaxedSysPair(&c->status, static_cast<u64>(status) | static_cast<u64>(s->fail_code) << 32,
                        tail - s->start - notices + LoadRelaxedGpu(&s->direct));
    StoreRelaxedSysPair(&c->handled, handled, dead);
    StoreRelaxedSysPair(&c->sent, LoadRelaxedGpu(&s->sent), LoadRelaxedGpu(&s->send_full));
    StoreRelaxedSysPair(&c->send_no_actor, LoadRelaxedGpu(&s->send_no_actor), LoadRelaxedGpu(&s->send_other));
    StoreRelaxedSysPair(&c->rejected, LoadRelaxedGpu(&s->rejected), LoadRelaxedGpu(&s->hlc));
    StoreRelaxedSys(&c->depth, tail - head);
  }
  for (u32 w = lane; w < sys->num_workers; w += 32) {
    WorkerStats* ws = &sys->worker_stats[w];
    WorkerControl* wc = &sys->worker_control[w];
    StoreRelaxedSysPair(&wc->heartbeat, LoadRelaxedGpu(&ws->iterations), LoadRelaxedGpu(&ws->handled));
    StoreRelaxedSys(&wc->exited, LoadRelaxedGpu(&ws->exited));
  }
  __syncwarp();
  if (lane == 0) {
    SystemControl* c = sys->control;
    StoreRelaxedSys(&c->ingress_messages.value, LoadRelaxedGpu(&sys->shared->ingress_messages.value));
    StoreRelaxedSys(&c->ingress_dead.value, LoadRelaxedGpu(&sys->shared->ingress_dead.value));
    StoreRelaxedSys(&c->outbound_full.value, LoadRelaxedGpu(&sys->shared->outbound_full.value));
    StoreRelaxedSys(&c->host_holes.value, LoadRelaxedGpu(&sys->shared->host_holes.value));
    StoreRelaxedSys(&c->channel_bytes.value, LoadRelaxedGpu(&sys->shared->channel_arena_used.value));
    StoreRelaxedSys(&c->last_flush_ns.value, GlobalTimerNs());
    // Release: a host that sees the new epoch sees everything above.
    const u64 epoch = LoadRelaxedSys(&c->flush_epoch.value);
    StoreReleaseSys(&c->flush_epoch.value, epoch + 1);
  }
  __syncwarp();
}

// The monitor copies the handler-time histograms out at every this many of
// its periodic flushes (64 ms at the default flush_interval of 1 ms), besides
// each flush the host asks for.
constexpr u32 kHandlerTimesEvery = 64;

// Copies every actor's handler-time histogram (handler_times.h) to mapped
// memory: a row of 128 counts per actor, four per lane, in two 8-byte loads
// and one 16-byte store.
__device__ __noinline__ void FlushHandlerTimes(const SystemParams* sys) {
  if (sys->handler_times == nullptr) return;
  const u32 lane = LaneId();
  constexpr u32 kRowWords = kHandlerTimeBuckets / 2;  // u64 words
  static_assert(kRowWords == 64, "a lane copies two words of a row");
  const u64 count = LoadAcquireGpu(&sys->shared->actor_count.value);
  for (u64 a = 0; a < count; ++a) {
    const u64* from = reinterpret_cast<const u64*>(sys->handler_times) + a * kRowWords;
    u64* to = reinterpret_cast<u64*>(sys->handler_times_out) + a * kRowWords;
    StoreRelaxedSysPair(&to[2 * lane], LoadRelaxedGpu(&from[2 * lane]), LoadRelaxedGpu(&from[2 * lane + 1]));
  }
  __syncwarp();
}

// Two waves — first what consumers have finished (the mailboxes' released
// heads, and the host messages each owner took from its hand-over ring,
// ActorSlot::direct), then what producers have published (the mailboxes'
// tails, and the hand-overs each worker's poller made, WorkerStats::handed).
// Consumers never pass producers and both only grow, so equal sums mean
// every message published before the second wave had been handled when the
// first was read: nothing was queued (in a mailbox or a hand-over ring) and
// no handler was running at that moment, and with the ingress stopped
// nothing can start again.
__device__ __noinline__ bool Quiescent(const SystemParams* sys) {
  const u32 lane = LaneId();
  const u64 count = LoadAcquireGpu(&sys->shared->actor_count.value);
  u64 done = 0, published = 0;
  for (u64 a = lane; a < count; a += 32) {
    ActorSlot* s = &sys->actors[a];
    if (LoadAcquireGpu32(&s->status) == static_cast<u32>(ActorState::kFree)) continue;
    done += LoadAcquireGpu(&reinterpret_cast<MailboxHeader*>(s->mailbox)->head.value);
    done += LoadRelaxedGpu(&s->direct);
    if (sys->channel_tables != nullptr) done += ChannelSum(&sys->channel_tables[a], ChannelLine::kHead);
  }
  FenceGpu();
  __syncwarp();
  for (u64 a = lane; a < count; a += 32) {
    ActorSlot* s = &sys->actors[a];
    if (LoadAcquireGpu32(&s->status) == static_cast<u32>(ActorState::kFree)) continue;
    published += LoadAcquireGpu(&reinterpret_cast<MailboxHeader*>(s->mailbox)->tail.value);
    if (sys->channel_tables != nullptr) published += ChannelSum(&sys->channel_tables[a], ChannelLine::kTail);
  }
  for (u32 w = lane; w < sys->num_workers; w += 32) published += LoadRelaxedGpu(&sys->worker_stats[w].handed);
  for (u32 off = 16; off > 0; off /= 2) {
    done += __shfl_xor_sync(0xFFFFFFFFu, done, off);
    published += __shfl_xor_sync(0xFFFFFFFFu, published, off);
  }
  return done == published;
}

#ifdef RK_TRACE
// How often the monitor samples the mailboxes' depths into the timeline.
constexpr u64 kTraceDepthIntervalNs = 100000;

// Records the depth of every actor's mailbox that changed since the last
// sample (ActorSlot::reserved holds the last depth recorded, monitor only).
__device__ __noinline__ void TraceDepths(const SystemParams* sys, TraceCursor* c) {
  const u64 count = LoadAcquireGpu(&sys->shared->actor_count.value);
  for (u64 a = LaneId(); a < count; a += 32) {
    ActorSlot* s = &sys->actors[a];
    if (LoadAcquireGpu32(&s->status) == static_cast<u32>(ActorState::kFree)) continue;
    MailboxHeader* box = reinterpret_cast<MailboxHeader*>(s->mailbox);
    u64 tail = LoadRelaxedGpu(&box->tail.value);
    u64 head = LoadRelaxedGpu(&box->head.value);
    if (sys->channel_tables != nullptr) {
      const ChannelCounts ch = ChannelCountsOf(&sys->channel_tables[a]);
      head += ch.heads;
      tail += ch.tails;
    }
    const u32 depth = static_cast<u32>(tail - head);
    if (depth != s->reserved) {
      s->reserved = depth;
      RK_TRACE_EVENT(sys, c, TraceKindType(TraceKind::kQueueDepth, 0), static_cast<u32>(a), depth, 0);
    }
  }
}
#endif

__device__ void MonitorLoop(const SystemParams* sys) {
  const u32 lane = LaneId();
  u64 last_flush = GlobalTimerNs();
  u64 served_flush = 0;
  u32 periodic = 0;  // flushes made on the interval
#ifdef RK_TRACE
  __shared__ TraceCursor s_trace;
  if (lane == 0) TraceInit(&s_trace, sys->num_workers);
  __syncwarp();
  u64 last_depths = 0;
#endif
  // The kernel is up: every block has started (a cooperative launch).
  if (lane == 0) {
    CompareExchangeGpu(&sys->shared->run.value, static_cast<u64>(KernelState::kNotStarted),
                       static_cast<u64>(KernelState::kRunning));
  }
  __syncwarp();
  for (;;) {
    const u64 now = GlobalTimerNs();
    u64 run = LoadAcquireGpu(&sys->shared->run.value);
    // The host's force-halt request (a bus read, but only every few µs).
    if (run < static_cast<u64>(KernelState::kHalting) && LoadAcquireSys(&sys->control->host_request.value) != 0) {
      if (lane == 0) StoreReleaseGpu(&sys->shared->run.value, static_cast<u64>(KernelState::kHalting));
      run = static_cast<u64>(KernelState::kHalting);
    }
    const u64 request = LoadAcquireGpu(&sys->shared->flush_request.value);
    if (request != served_flush || now - last_flush >= sys->flush_interval_ns) {
      // The histograms (rows of 512 bytes per actor) when asked for, and at
      // every kHandlerTimesEvery-th periodic flush.
      if (request != served_flush || ++periodic % kHandlerTimesEvery == 0) FlushHandlerTimes(sys);
      FlushCounters(sys);
      last_flush = now;
      if (request != served_flush) {
        served_flush = request;
        if (lane == 0) StoreReleaseSys(&sys->control->flush_ack.value, request);
      }
    }
#ifdef RK_TRACE
    if (lane == 0) TraceRefresh(sys, &s_trace);
    __syncwarp();
    if (*static_cast<volatile u32*>(&s_trace.on) != 0 && now - last_depths >= kTraceDepthIntervalNs) {
      TraceDepths(sys, &s_trace);
      last_depths = now;
    }
#endif
    if (run == static_cast<u64>(KernelState::kDraining) &&
        LoadAcquireGpu(&sys->shared->ingress_done.value) != 0 && Quiescent(sys)) {
      if (lane == 0) StoreReleaseGpu(&sys->shared->run.value, static_cast<u64>(KernelState::kHalting));
      run = static_cast<u64>(KernelState::kHalting);
    }
    if (lane == 0) StoreRelaxedSys(&sys->control->state.value, run);
    if (run >= static_cast<u64>(KernelState::kHalting) &&
        LoadAcquireGpu(&sys->shared->workers_exited.value) == sys->num_workers &&
        LoadAcquireGpu(&sys->shared->ingress_done.value) != 0) {
      break;
    }
    __nanosleep(2000);
  }
  FlushHandlerTimes(sys);
  FlushCounters(sys);
#ifdef RK_TRACE
  if (lane == 0) TraceRefresh(sys, &s_trace);
#endif
  if (lane == 0) StoreReleaseSys(&sys->control->state.value, static_cast<u64>(KernelState::kExited));
}


}  // namespace detail
}  // namespace rk

#endif  // RINGKERNEL_DEVICE_RT_SERVICE_CUH_
