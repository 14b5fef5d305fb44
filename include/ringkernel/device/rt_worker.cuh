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
//     first, then the channels in entry order, every iteration.
//   * Host → actor: each worker has its own ring in mapped memory, written by
//     the host for this worker's actors only, in variable-length records
//     (128-byte units, ll_ring.h), polled by warp 0 — while quiet with the
//     first two units only (a small record whole), and with a 2 KiB window
//     while host traffic is recent, so a backlog is read several records per
//     bus round trip. A warp of its own, because a read over the bus takes
//     about a microsecond, and the owners must not wait for it. Small
//     thread-handler messages for one of the first 32 actors are handed to
//     its owner through a ring of kDirectDepth entries in shared memory
//     (DirectSlot), which the owner empties in one iteration; anything else
//     (a block handler, a large payload, a later actor) is forwarded into
//     the actor's mailbox as any producer would. Per (host, actor) FIFO
//     holds: the poller hands over directly only while none of the actor's
//     host messages wait in its mailbox, and forwards only while its
//     hand-over ring is empty. An owner takes the hand-overs it saw before
//     it found its mailbox and its channels empty (and no channel opened
//     that it has not looked at), or once each of their heads has passed the
//     tail it read after it saw them waiting: a host message does not
//     overtake the K2K messages already there, and an actor that keeps
//     itself busy still gets it.
//   * Block handlers: the owner queues the actor in shared memory and raises
//     a request; every warp checks the request each iteration and the block
//     meets at a barrier to run them. No barrier otherwise.
//   * Idle: a warp that found no work for `idle_spin_ns` sleeps between
//     polls, doubling up to `idle_backoff_max_ns`; the first message ends it.
//     A worker with no actors sleeps kEmptyWorkerSleepNs between looks for
//     its first one.
//   * Fault attribution: a thread writes the running table (mapped) only
//     when the actor or message type it runs changes, then fences so that a
//     fault in the handler finds it there; it clears its entry when idle.
#ifndef RINGKERNEL_DEVICE_RT_WORKER_CUH_
#define RINGKERNEL_DEVICE_RT_WORKER_CUH_

#include "ringkernel/device/rt_base.cuh"
#include "ringkernel/device/rt_outbound.cuh"
#include "ringkernel/device/rt_send.cuh"

namespace rk {
namespace detail {

// What a worker thread keeps of an actor it owns. The owner is the only
// writer of the head, the clock and the counters, so none of them needs
// re-reading while it stays in registers.
struct OwnedActor {
  u32 index;
  ActorSlot* slot;
  MailboxHeader* box;
  void* state;
  u32 type;
  u32 log2;
  u32 inline_words;
  u32 slot_bytes;
  u32 failed;
  u32 hot;           // calls left with a wide poll (a message came recently), and the spin's flags (kHotCalls)
  u32 quiet;         // polls in a row that found the mailbox empty
  u32 source;        // what `box` is: 0 the mailbox, k + 1 channel entry k (SwapInChannel)
  u32 look;          // a kMailChannel record was taken: a sender opened a channel (channel.h)
  u64 head;          // next position to take
  u64 released;      // the head producers were last given
  u64 hlc;
  u64 handled;
  u64 dead_lettered;
  u64 direct;
  u64 sent, send_full, send_no_actor, send_other;
};

__device__ __forceinline__ OwnedActor LoadOwned(const SystemParams* sys, u32 index) {
  OwnedActor o;
  o.index = index;
  o.slot = &sys->actors[index];
  const TargetInfo t = ReadTarget(o.slot);
  o.box = t.box;
  o.state = t.state;
  o.type = t.type;
  o.log2 = ShapeLog2(t.shape);
  o.inline_words = ShapeInlineWords(t.shape);
  o.slot_bytes = t.slot_bytes;
  o.failed = t.status != static_cast<u32>(ActorState::kRunning);
  o.head = LoadRelaxedGpu(&o.box->head.value);
  o.released = o.head;
  o.hot = 0;
  o.quiet = 0;
  o.source = 0;
  o.look = 0;
  o.hlc = o.slot->hlc;
  o.handled = o.slot->handled;
  o.dead_lettered = o.slot->dead_lettered;
  o.direct = o.slot->direct;
  o.sent = o.slot->sent;
  o.send_full = o.slot->send_full;
  o.send_no_actor = o.slot->send_no_actor;
  o.send_other = o.slot->send_other;
  return o;
}

// Writes the owner's counters back for the monitor to flush.
__device__ __forceinline__ void StoreOwned(const OwnedActor& o) {
  ActorSlot* s = o.slot;
  s->hlc = o.hlc;
  s->handled = o.handled;
  s->dead_lettered = o.dead_lettered;
  s->direct = o.direct;
  s->sent = o.sent;
  s->send_full = o.send_full;
  s->send_no_actor = o.send_no_actor;
  s->send_other = o.send_other;
}

__device__ __forceinline__ void ReleaseOwned(OwnedActor& o) {
  if (o.released != o.head) {
    MailboxRelease(o.box, o.head);
    o.released = o.head;
  }
}

// What one worker thread carries from message to message. Scalars only, so
// that the compiler keeps it in registers: the arrays it points to live in
// the thread's stack frame, and a structure that held them would live there
// too, every field read a trip to local memory.
struct WorkerThread {
  const SystemParams* sys;
  u32 worker;
  OutboundCursor* out;  // the worker's ring to the host (shared memory)
  u64 running;          // this thread's entry in the running table, as last written
  SendCache* sends;     // its last K2K receiver
  u32* buf;             // an inline payload being handled (kMailInlineMaxWords words, 16-byte aligned)
  // RK_HOP_STAMPS: the last empty poll, and the row of the last record handled
  // (stamped until the next ServeMailbox call).
  RK_HOP_ONLY(u64 hop_prev_in; u64 hop_prev_out; unsigned long long* hop_after; u32 hop_done;)
};

// Records in the running table that this thread runs `entry` (see the top
// of this file for why only on a change, and why with a fence).
__device__ __forceinline__ void MarkRunning(WorkerThread& w, u64 entry) {
  const SystemParams* sys = w.sys;
  if (!sys->track_running || entry == w.running) return;
  StoreRelaxedSys(&sys->running[static_cast<u64>(w.worker) * sys->threads_per_block + threadIdx.x], entry);
  if (entry != 0) FenceSys();
  w.running = entry;
}

// The first thread that owns actors, and the number of owner threads.
constexpr u32 kFirstOwner = 32;
__device__ __forceinline__ u32 OwnerCount() { return blockDim.x - kFirstOwner; }

// Host messages handed by the poller (warp 0) to the owner of one of the
// first kDirectSlots actors, in shared memory: a ring of kDirectDepth
// entries per actor, which the poller fills from one read of its host ring
// and the owner empties in one of its iterations. Every access is an atomic
// operation: the hand-over is ordered by `tail`/`head` and block fences,
// not by a barrier, and atomics say so to the tools that check shared memory
// for races.
constexpr u32 kDirectSlots = 32;
constexpr u32 kDirectDepth = 4;
constexpr u32 kDirectWords = 30;  // 120 payload bytes
struct alignas(8) DirectEntry {
  u32 size;
  u32 msg_type;
  unsigned long long correlation;
  unsigned long long hlc;
  u32 payload[kDirectWords];
};
RK_ASSERT_OFFSET(DirectEntry, payload, 24);  // 8-byte aligned: read in pairs
static_assert(kDirectWords % 2 == 0, "the payload is read in pairs");
struct DirectSlot {
  u32 head;     // entries taken (the owner advances it)
  u32 tail;     // entries written (the poller advances it)
  u32 pending;  // this actor's host messages forwarded to its mailbox, not yet taken
  u32 actor;    // the owner's actor index + 1 once it has loaded it; 0 before
  u32 actor_type;  // its actor type
  u32 failed;   // 1 once it failed (its messages go the reporting way)
  // Bit m: message type m (< 64) has a thread handler in this actor type
  // (the poller's eligibility test without the handler table's switch).
  unsigned long long thread_types;
  DirectEntry e[kDirectDepth];
};
// SlotGetPair reads these fields in pairs.
RK_ASSERT_OFFSET(DirectSlot, tail, 4);
RK_ASSERT_OFFSET(DirectSlot, pending, 8);
RK_ASSERT_OFFSET(DirectSlot, actor, 12);
RK_ASSERT_OFFSET(DirectSlot, actor_type, 16);
RK_ASSERT_OFFSET(DirectSlot, failed, 20);
RK_ASSERT_OFFSET(DirectSlot, thread_types, 24);

__device__ __forceinline__ u32 SlotGet(u32* p) { return atomicOr(p, 0u); }
__device__ __forceinline__ void SlotSet(u32* p, u32 v) { atomicExch(p, v); }
// A 64-bit read as a compare-and-swap that never swaps: one native shared
// atomic (a 64-bit atomicOr is a compare-and-swap loop).
__device__ __forceinline__ u64 SlotGet64(unsigned long long* p) { return atomicCAS(p, 0ull, 0ull); }
__device__ __forceinline__ void SlotSet64(unsigned long long* p, u64 v) { atomicExch(p, v); }
// Two neighbouring 32-bit fields (the first 8-byte aligned) in one 64-bit
// read: the first in the low half.
__device__ __forceinline__ u64 SlotGetPair(u32* p) {
  return atomicCAS(reinterpret_cast<unsigned long long*>(p), 0ull, 0ull);
}

// Fills a Ctx for one invocation (the send cache copied in).
__device__ __forceinline__ void FillCtx(CtxData& d, const SystemParams* sys, ActorSlot* slot, u8* scratch,
                                        OutboundCursor* out, const SendCache& cache, u64 correlation, u64 hlc,
                                        u32 self, u32 sender, u32 worker, u32 block) {
  d.sys = sys;
  d.actor = slot;
  d.scratch = scratch;
  d.cache = cache;
  d.outbound = out;
  d.correlation = correlation;
  d.hlc = hlc;
  d.self = self;
  d.sender = sender;
  d.worker = worker;
  d.block = block;
  d.leader = 0;
  d.failed = 0;
  d.retry = 0;
  d.run = 0;
  d.sent = d.send_full = d.send_no_actor = d.send_other = 0;
}

__device__ __forceinline__ void InitCtx(Ctx& ctx, WorkerThread& w, const OwnedActor& o, const MailHeader& m, u64 hlc,
                                        u8* scratch, u32 block) {
  FillCtx(ctx.d_, w.sys, o.slot, scratch, w.out, *w.sends, m.correlation, hlc, o.index, m.sender, w.worker, block);
}

// What a handler's invocation did, for its owner's counters.
struct HandlerOutcome {
  u32 sent, send_full, send_no_actor, send_other, failed, retry;
};

__device__ __forceinline__ HandlerOutcome OutcomeOf(const CtxData& d) {
  return HandlerOutcome{d.sent, d.send_full, d.send_no_actor, d.send_other, d.failed, d.retry};
}

__device__ __forceinline__ void AddSends(OwnedActor& o, const HandlerOutcome& out) {
  o.sent += out.sent;
  o.send_full += out.send_full;
  o.send_no_actor += out.send_no_actor;
  o.send_other += out.send_other;
}

#if defined(RK_STREAM_RUNS) && !defined(RK_TRACE)
#define RK_STREAM_RUNS_ON 1
#else
#define RK_STREAM_RUNS_ON 0
#endif
#if RK_STREAM_RUNS_ON
// A stream's run: records after the first that a thread handler's call
// runs, each through the same handler (the generated dispatch loops in
// each handler's case, RunNext). When its mailbox is busy, the owner
// (ServeMailbox) stages the records that follow the one it took — whole,
// of the same type, payload inline and small — here, before the call;
// the call runs them one after another, so that a stream's messages pay
// the call, the owner's bookkeeping and the worker loop's step once per run
// instead of once each (bench/NOTES.md, session 14). The takes happen in
// the owner's loop, whose registers they had anyway: the handler's call
// only reads shared memory. One per owner thread of the first kDirectSlots
// (found from the thread's index: no argument, no field of the Ctx).
//
// A build option: programs built with -D RK_STREAM_RUNS (and without
// RK_TRACE, which times each handler) have it. It makes a stream of small
// messages to one actor 20-30 % faster and costs a message that arrives
// alone 5-9 % (a loop around every thread handler's call; bench/NOTES.md,
// session 14), so it is for programs whose actors mostly take streams.
constexpr u32 kRunDepth = 4;        // records staged after the first
constexpr u32 kRunWords = kMailWideWords;  // the largest payload staged, in words
struct alignas(16) RunStage {
  u32 payload[kRunWords];  // first: handed to the handler 16-byte aligned
  u64 correlation;
  u64 hlc;
  u32 sender;
};
struct RunMore {
  u32 next;  // staged records begun so far (how many: the Ctx's `run`)
  // What the run did, for the owner: the staged records that were handled
  // (`ran`; one that failed counts, and ends the run), whether the one
  // after them asked to be retried (it stays at the head; the call's own
  // retry flag is the first record's), the actor's clock after the last.
  u32 ran, retry_next;
  u64 hlc;
  void* state;
  RunStage stage[kRunDepth];
};
__shared__ RunMore rk_runs[kDirectSlots];

// This thread's run, or null (the poller, and owner threads past the first
// kDirectSlots: their streams run a record per call).
__device__ __forceinline__ RunMore* RunOfThread() {
  // The index read where it is used (a volatile read): in the loop around
  // a handler the compiler would otherwise compute this address before the
  // handler and keep it in registers across it (the bench program then
  // spills 108 bytes).
  u32 tid;
  asm volatile("mov.u32 %0, %%tid.x;" : "=r"(tid));
  const u32 i = tid - kFirstOwner;
  return i < kDirectSlots ? &rk_runs[i] : nullptr;
}

// After a thread handler returned, in the generated dispatch: whether the
// run goes on, and if so the next staged record's payload (its Ctx refilled
// for it: sender, correlation, clock merged at its start; the send counters
// go on adding up). A staged record's retry_later ends the run with it left
// at the head; a failure ends it with the record handled.
__device__ __forceinline__ bool RunNext(Ctx& ctx, const void** payload) {
  CtxData& d = ctx.d_;
  const u32 count = d.run;  // a message that came alone: a register's test
  if (__builtin_expect(count == 0, 1)) return false;
  RunMore* m = RunOfThread();
  const u32 k = m->next;
  if (k != 0) {
    if (d.retry && !d.failed) {
      d.retry = 0;
      m->retry_next = 1;
      return false;
    }
    ++m->ran;
  }
  if ((d.failed | d.retry) != 0 || k >= count) return false;
  const RunStage& st = m->stage[k];
  d.hlc = HlcMerge(d.hlc, st.hlc, GlobalTimerNs());
  m->hlc = d.hlc;
  d.sender = st.sender;
  d.correlation = st.correlation;
  *payload = st.payload;
  m->next = k + 1;
  return true;
}
// The running actor's state, for the next record of a run.
__device__ __forceinline__ void* RunState(const Ctx&) { return RunOfThread()->state; }

// Stages, for the record at `head` just taken (of message type `type`), the
// whole records after it that a run may take: up to `max`, stopping at the
// first that is not whole, of another type, void, a host message, in the
// plain area or larger than a stage holds. Returns how many. Out of line
// and called with values: its loads' registers are not the owner loop's.
__device__ __noinline__ u32 StageRun(RunMore* m, MailboxHeader* box, u32 log2, u32 slot_bytes, u32 inline_words,
                                     u64 head, u32 type, u32 max) {
  u32 staged = 0;
  for (; staged < max; ++staged) {
    const u64 pos = head + 1 + staged;
    u64* slot = MailboxSlotAt(box, log2, slot_bytes, pos);
    const u32 flag = LlFlag(pos, log2);
    MailHeader h;
    if (!MailboxTryTakeSmall(slot, inline_words, flag, kRunWords, &h, m->stage[staged].payload)) break;
    if (h.type != type || (h.flags & kMailIngress) != 0) break;
    MailboxStampUnused(slot, inline_words, flag, h);
    RunStage& st = m->stage[staged];
    st.sender = h.sender;
    st.correlation = h.correlation;
    st.hlc = h.hlc;
  }
  return staged;
}
#endif  // RK_STREAM_RUNS_ON

// Runs one thread handler. Out of line and called with values only: its Ctx
// is a local whose address never leaves it (the dispatch, the handlers and
// the send path are inlined here), so the compiler keeps the Ctx and the
// send cache in registers. The cache lives in the worker thread's stack
// between messages: copied in here and back after the handler.
__device__ __noinline__ HandlerOutcome RunThreadHandler(const SystemParams* sys, u32 worker, OutboundCursor* out,
                                                        SendCache* sends, ActorSlot* slot, void* state,
                                                        u32 actor_type, u32 self, u32 msg_type, u32 sender,
                                                        u64 correlation, u64 hlc, const void* payload, u32 run) {
  RK_OC_ONLY(const long long oc0 = clock64();)
  RK_HOP_ONLY(HopPathStamp(kHpCallIn);)
  RK_ASK_STAMP(correlation, kStampCallIn, GlobalTimerNs());
  Ctx ctx;
  CtxData& d = ctx.d_;
  FillCtx(d, sys, slot, nullptr, out, *sends, correlation, hlc, self, sender, worker, 0);
  d.run = run;
  RK_ASK_STAMP(correlation, kStampHandlerIn, GlobalTimerNs());
  RK_OC_ONLY(const long long oc1 = clock64();)
  RK_HOP_ONLY(HopPathStamp(kHpDispatch);)
  DispatchThread(actor_type, state, msg_type, payload, ctx);
  RK_OC_ONLY(const long long oc2 = clock64();)
  RK_ASK_STAMP(correlation, kStampHandlerOut, GlobalTimerNs());
  *sends = d.cache;
  RK_OC_ADD(kOcCallPre, oc1 - oc0);
  RK_OC_ADD(kOcDispatch, oc2 - oc1);
  RK_OC_ADD(kOcCallPost, clock64() - oc2);
  return OutcomeOf(d);
}

// A handler's begin in the timeline: a message from the mailbox names its
// position there (the sender's kSend names the same), a host Ask its
// correlation; a host Send has no flow. `kDirect`: a hand-over.
template <bool kDirect>
__device__ __forceinline__ u32 TraceBeginKindType(const MailHeader& h) {
  const bool host = kDirect || (h.flags & kMailIngress) != 0;
  const u32 flow = host ? (h.correlation != 0 ? kTraceFlowAsk : 0u) : kTraceFlowMailbox;
  return TraceKindType(TraceKind::kHandlerBegin, h.type, flow);
}
template <bool kDirect>
__device__ __forceinline__ u32 TraceBeginFlow(const MailHeader& h, const OwnedActor& o) {
  const bool host = kDirect || (h.flags & kMailIngress) != 0;
  return host ? static_cast<u32>(h.correlation) : TraceFlowPosition(o.box, o.source != 0, o.head);
}

// kRetry: the handler called ctx.retry_later; the message stays where it is
// and is handled again on a later iteration.
enum class Handled : u32 { kDone = 0, kNeedsBlock = 1, kRetry = 2 };

// Handles one record taken for `o` with a thread handler, or reports it.
// `kThread`: the record is known to have a thread handler (a hand-over: the
// poller checked), so the handler table is not consulted.
// `run`: records the caller staged after this one for the call to run
// (RunMore), 0 for none; those handled are counted here, and the caller
// advances its head past them (RunMore::ran).
template <bool kThread = false>
__device__ Handled HandleOne(WorkerThread& w, OwnedActor& o, const MailRecord& r, u32 run = 0) {
  RK_OC_ONLY(const long long oc_in = clock64();)
  const SystemParams* sys = w.sys;
  if (r.h.flags & kMailVoid) return Handled::kDone;
  // A dead letter that finds the ring to the host full leaves the message
  // where it is, to be tried again after the worker's other actors
  // (rt_outbound.cuh).
  if (o.failed) {
    if (!DeadLetter(sys, WorkerOutRing(sys, w.worker, w.out), DeadLetterReason::kActorFailed, o.index, r.h,
                    r.payload)) {
      return Handled::kRetry;
    }
    RK_TRACE_EVENT(sys, &w.out->trace, TraceKindType(TraceKind::kDeadLetter, r.h.type), o.index,
                   static_cast<u32>(DeadLetterReason::kActorFailed), r.h.sender);
    ++o.dead_lettered;
    return Handled::kDone;
  }
  const u32 kind = kThread ? 1u : HandlerKindFast(o.type, r.h.type);
  if (kind == 2) return Handled::kNeedsBlock;
  if (kind == 0) {
    if (!DeadLetter(sys, WorkerOutRing(sys, w.worker, w.out), DeadLetterReason::kNoHandler, o.index, r.h,
                    r.payload)) {
      return Handled::kRetry;
    }
    RK_TRACE_EVENT(sys, &w.out->trace, TraceKindType(TraceKind::kDeadLetter, r.h.type), o.index,
                   static_cast<u32>(DeadLetterReason::kNoHandler), r.h.sender);
    ++o.dead_lettered;
    return Handled::kDone;
  }
  // One read of the clock: the handler's time, its begin in the timeline
  // and its clock.
  const u64 begin_ns = GlobalTimerNs();
  RK_TRACE_ONLY(const u64 trace_begin = TraceOn(&w.out->trace) ? begin_ns : 0;)
  const u64 hlc = HlcMerge(o.hlc, r.h.hlc, begin_ns);
  RK_OC_ONLY(const long long oc_call = clock64();)
  RK_OC_ADD(kOcPreCall, oc_call - oc_in);
  const HandlerOutcome out = RunThreadHandler(sys, w.worker, w.out, w.sends, o.slot, o.state, o.type, o.index,
                                              r.h.type, r.h.sender, r.h.correlation, hlc, r.payload, run);
  RK_OC_ADD(kOcCall, clock64() - oc_call);
  RK_TRACE_ONLY(const u64 end_ns = GlobalTimerNs();)
  o.hlc = hlc;
  AddSends(o, out);
#if RK_STREAM_RUNS_ON
  if (run != 0) {
    const RunMore* more = RunOfThread();
    if (more->ran != 0) {
      o.hlc = more->hlc;
      o.handled += more->ran;
    }
  }
#endif
  if (out.failed) {
    o.failed = 1;
  } else if (out.retry) {
    RK_TRACE_HANDLER(sys, &w.out->trace, trace_begin, end_ns, TraceBeginKindType<kThread>(r.h),
                     TraceKindType(TraceKind::kRetry, r.h.type), o.index, r.h.sender, TraceBeginFlow<kThread>(r.h, o));
    return Handled::kRetry;
  }
  RK_TRACE_HANDLER(sys, &w.out->trace, trace_begin, end_ns, TraceBeginKindType<kThread>(r.h),
                   TraceKindType(TraceKind::kHandlerEnd, r.h.type), o.index, r.h.sender,
                   TraceBeginFlow<kThread>(r.h, o));
  // Last: the count into the histogram is a store nothing waits for.
  RK_HANDLER_TIME(sys, o.index, end_ns - begin_ns);
  ++o.handled;
  return Handled::kDone;
}

// Polls of an empty mailbox in a row that ServeMailbox makes for a hot
// actor before it returns.
constexpr u32 kHotSpinPolls = 8;
// The same for an actor in a conversation: one whose last spin ran out and
// whose next message was then at the head in the next call, within one step
// of the worker loop. A reply to what its handler sent comes back a round
// trip later (two hops, some 3.3 µs), past the short spin (about 1.8 µs),
// and waited for the loop's step (some 2 µs) until the spin ran this long.
// The long spin ends at once for a hand-over, as the short one does; one
// that runs out ends the conversation.
constexpr u32 kLongSpinPolls = 32;
// The most empty polls one call makes in all (each wait of a conversation
// has kLongSpinPolls): a conversation's call ends after some 30 µs of
// waiting, and the thread's other actors and the block's requests get
// their turn.
constexpr u32 kSpinCallPolls = 4 * kLongSpinPolls;

// OwnedActor::hot: the low byte counts calls left with a wide poll; the
// flags above it steer the spin.
constexpr u32 kHotCalls = 0xFFu;
constexpr u32 kHotRanOut = 0x100u;  // the last call's short spin ran out
constexpr u32 kHotLong = 0x200u;    // in a conversation: spin up to kLongSpinPolls
constexpr u32 kHotCut = 0x400u;     // this call's spin ended for a hand-over (read and cleared by the owner loop)
__device__ __forceinline__ bool IsHot(const OwnedActor& o) { return (o.hot & kHotCalls) != 0; }

// Empty polls in a row after which an owner writes its counters back and
// hands consumed slots to producers.
constexpr u32 kQuietPolls = 4;

// Takes and handles up to batch_max messages from `o`'s mailbox. Returns how
// many; sets *block when the message at the head needs the whole block (it
// is left there), and *retried when its handler asked for it again later
// (ctx.retry_later: it stays at the head). `resident`: `o` stays in registers until the next call
// (else its head is released before it is dropped).
__device__ u32 ServeMailbox(WorkerThread& w, OwnedActor& o, DirectSlot* direct, bool resident, bool* block,
                            bool* retried) {
  const SystemParams* sys = w.sys;
  const u64 capacity = u64{1} << o.log2;
  u32 n = 0;
  u32 spins = 0;  // empty polls in a row (in all, outside a conversation)
  u32 spun = 0;   // empty polls in this call
  u32 stored = 0;  // n when the counters last went back to the actor's slot
  u32 ran_out = 0;  // kHotRanOut: the short spin ran out; kHotLong: the long one did
  bool cut = false;  // the spin ended for a hand-over
  RK_OC_ADD(kOcServeCalls, 1);
  // (RK_HOP_STAMPS: the first call after the one that handled the record
  // ends its row.)
  RK_HOP_ONLY(if (w.hop_after != nullptr && (w.hop_done & (1u << kHopServeOut)) != 0) {
    RK_HOP_CYCLE(w, kHcNextServe);
    RK_HOP_STAMP(w, kHopNextServe, GlobalTimerNs());
    w.hop_after = nullptr;
  })
#if RK_STREAM_RUNS_ON
  RunMore* more = nullptr;  // this thread's run, looked up once a stream shows
#endif
  while (n < sys->batch_max) {
    RK_OC_ONLY(const long long oc0 = clock64();)
    RK_HOP_CYCLE(w, kHcPollIn);
    RK_HOP_ONLY(const u64 hop_poll = GlobalTimerNs(); const long long hop_poll_cyc = clock64();)
    u64* slot = MailboxSlotAt(o.box, o.log2, o.slot_bytes, o.head);
    const u32 flag = LlFlag(o.head, o.log2);
    MailRecord r;
    if (!MailboxTryTake(slot, o.inline_words, flag, IsHot(o), &r, w.buf)) {
      RK_HOP_ONLY(w.hop_prev_in = hop_poll; w.hop_prev_out = GlobalTimerNs();)
      RK_HOP_CYCLE(w, kHcPollOut);
      RK_OC_ADD(kOcEmptyPolls, 1);
      RK_OC_ADD(kOcEmpty, clock64() - oc0);
      // A hot resident actor polls again at once, up to kHotSpinPolls
      // times (kLongSpinPolls in a conversation), rather than go round the
      // worker loop first — also right after it handled messages: the reply
      // to what its handler sent comes back within a few polls, and a
      // message that lands meanwhile waits one poll, not the loop's step
      // (some 4,000 cycles of one thread, RK_HOP_STAMPS) — until a host
      // message is handed over to it: that is taken once this returns.
      if (resident && IsHot(o)) {
        const u32 spin_max = (o.hot & kHotLong) != 0 ? kLongSpinPolls : kHotSpinPolls;
        if (direct != nullptr && SlotGet(&direct->tail) != SlotGet(&direct->head)) {
          // A hand-over soon after a spin ran out: a conversation too.
          if ((o.hot & kHotRanOut) != 0) o.hot = (o.hot & ~kHotRanOut) | kHotLong;
          cut = true;
        } else if (spins < spin_max && spun < kSpinCallPolls) {
          // The counters of what was handled go back before the spin, as
          // after every batch (below): a flush the host asks for once it
          // has a handler's reply must find that message counted.
          if (n != stored) {
            StoreOwned(o);
            stored = n;
          }
          ++spins;
          ++spun;
          continue;
        } else if (spins >= spin_max) {
          ran_out = spin_max == kLongSpinPolls ? kHotLong : kHotRanOut;
        }
      }
      break;
    }
    // A message soon after the last spin ran out (in this call, or at the
    // first poll of this call, within a step of the loop): a conversation.
    if ((o.hot & kHotRanOut) != 0) o.hot = (o.hot & ~kHotRanOut) | kHotLong;
    // In a conversation each wait has the long spin's polls (the call's
    // polls stay bounded by kSpinCallPolls); otherwise the call has
    // kHotSpinPolls in all.
    if ((o.hot & kHotLong) != 0) spins = 0;
    RK_OC_ONLY(const long long oc1 = clock64();)
    RK_HOP_ONLY(const u64 hop_taken = GlobalTimerNs(); const long long hop_taken_cyc = clock64();)
    RK_OC_ADD(kOcTaken, 1);
    RK_OC_ADD(kOcTake, oc1 - oc0);
    if (!(r.h.flags & kMailVoid)) MarkRunning(w, RunningEntry(o.index, r.h.type));
    if (r.h.flags & kMailChannel) o.look = 1;
    // The records after this one may run in the same call (a stream of one
    // type, RunMore): up to the batch, and not past the next point where
    // producers get slots back (a run holds its slots until it returns).
    // Not after a host message (its count and order events are kept here)
    // or a large one, nor in builds that trace or time each handler.
    u32 ran = 0;
    u32 retry_next = 0;
    // Only while the mailbox is busy (a record was taken before this one in
    // this call): a message that arrives alone (a hop, a request) goes to
    // its handler without a look further, or any other cost.
    u32 staged = 0;
#if RK_STREAM_RUNS_ON
    if (n != 0 && (r.h.flags & (kMailIngress | kMailVoid | kMailPlain)) == 0 && r.h.size <= 4 * kRunWords) {
      if (more == nullptr) more = RunOfThread();
      const u64 quarter = capacity / 4;
      const u64 since = o.head - o.released;
      if (more != nullptr && quarter > since + 1) {
        const u64 room = quarter - since - 1;
        u32 max = sys->batch_max - n - 1;
        if (room < max) max = static_cast<u32>(room);
        if (kRunDepth < max) max = kRunDepth;
        staged = StageRun(more, o.box, o.log2, o.slot_bytes, o.inline_words, o.head, r.h.type, max);
        if (staged != 0) {
          more->next = more->ran = more->retry_next = 0;
          more->state = o.state;
        }
      }
    }
#endif
    RK_HOP_ONLY(unsigned long long* hop_row = o.source != 0 ? HopStampRow(o.index, o.head) : nullptr;)
    RK_HOP_ONLY(if (hop_row != nullptr) {
      hop_row[kHopPollIn] = hop_poll;
      hop_row[kHopTaken] = hop_taken;
      hop_row[kHopPrevPollIn] = w.hop_prev_in;
      hop_row[kHopPrevPollOut] = w.hop_prev_out;
      hop_row[kHopHandleIn] = GlobalTimerNs();
      hop_row[kHopPathCycles + kHpPollIn] = static_cast<unsigned long long>(hop_poll_cyc);
      hop_row[kHopPathCycles + kHpTaken] = static_cast<unsigned long long>(hop_taken_cyc);
      hop_row[kHopPathCycles + kHpHandleIn] = static_cast<unsigned long long>(clock64());
    })
    RK_HOP_ONLY(if (threadIdx.x < 256) rk_hop_current[threadIdx.x] = hop_row;)
    const Handled handled = HandleOne(w, o, r, staged);
    RK_HOP_ONLY(if (threadIdx.x < 256) rk_hop_current[threadIdx.x] = nullptr;)
    RK_HOP_ONLY(if (hop_row != nullptr) hop_row[kHopHandleOut] = GlobalTimerNs();)
    RK_HOP_ONLY(w.hop_after = hop_row; w.hop_done = 0;)
    RK_HOP_CYCLE(w, kHcHandleOut);
#if RK_STREAM_RUNS_ON
    if (staged != 0) {
      ran = more->ran;
      retry_next = more->retry_next;
    }
#endif
    RK_OC_ONLY(const long long oc2 = clock64();)
    RK_OC_ADD(kOcHandle, oc2 - oc1);
    if (handled == Handled::kNeedsBlock) {
      *block = true;
      break;
    }
    if (handled == Handled::kRetry) {  // the same record again next time
      if (r.h.flags & kMailIngress) {
        RK_ORDER_EVENT(kOrderMailRetry, w.worker, 0, o.index, o.head,
                       r.payload != nullptr ? reinterpret_cast<const u32*>(r.payload)[0] : 0u);
      }
      *retried = true;
      break;
    }
    if (r.h.flags & kMailIngress) {
      RK_ORDER_EVENT(kOrderMailTake, w.worker, 0, o.index, o.head,
                     r.payload != nullptr ? reinterpret_cast<const u32*>(r.payload)[0] : 0u);
    }
    if ((r.h.flags & kMailIngress) && direct != nullptr) atomicSub(&direct->pending, 1u);
    MailboxStampUnused(slot, o.inline_words, flag, r.h);
    o.head += 1 + ran;
    n += 1 + ran;
    RK_OC_ADD(kOcTaken, ran);
    // Producers get slots back while a long stream keeps the mailbox busy.
    if (o.head - o.released >= capacity / 4) ReleaseOwned(o);
    RK_OC_ADD(kOcAfter, clock64() - oc2);
    if (retry_next != 0) {  // the record now at the head asked to be retried
      *retried = true;
      break;
    }
  }
  // A short spin that ran out sets kHotRanOut; a long one that ran out in
  // a call that took nothing ends the conversation. The flags go when the
  // actor cools.
  u32 calls = o.hot & kHotCalls;
  u32 flags = o.hot & (kHotLong | kHotRanOut);
  if (ran_out == kHotRanOut) flags = kHotRanOut;
  if (ran_out == kHotLong && n == 0) flags = 0;
  if (n != 0) {
    calls = 64;
    o.quiet = 0;
  } else {
    if (calls != 0) --calls;
    ++o.quiet;
  }
  o.hot = (calls != 0 ? flags | calls : 0) | (cut ? kHotCut : 0u);
  // Consumed slots go back to producers when the actor is dropped from
  // registers or the block takes over, and otherwise once the mailbox has
  // stayed empty for a few polls: each release is a fence that waits for
  // this thread's stores (its sends among them), which a busy owner should
  // not pay per message.
  // Counters go back to memory after every batch (posted stores: a flush
  // the host asks for after a reply then sees that message counted).
  // (A call that asked to be retried may have sent and moved the clock.)
  if (n != stored || *block || *retried) StoreOwned(o);
  if (!resident || *block || o.quiet == kQuietPolls) ReleaseOwned(o);
  RK_HOP_CYCLE(w, kHcServeOut);
  RK_HOP_STAMP(w, kHopServeOut, GlobalTimerNs());
  return n;
}

// ---- K2K channels (channel.h), the receiving side. ----

// What the owner of one of the first kChannelReceivers actors knows of the
// channels senders opened to it, by entry of its ChannelTable: in shared
// memory (a row per owner thread), since the owner loop's registers are
// spoken for. Only that thread touches its row, except while the block runs
// a block handler of a message taken from a channel (RunBlockMessage), which
// reads and advances the row between barriers.
struct ChannelRx {
  u64 box[kChannelsPerActor];       // the channel's MailboxHeader (entries with `active` set)
  u64 head[kChannelsPerActor];      // next position to take
  u64 released[kChannelsPerActor];  // the head its producer was last given
  u64 mark[kChannelsPerActor];      // its tail when a waiting hand-over was first found (see the owner loop)
  u32 hot[kChannelsPerActor];
  u32 quiet[kChannelsPerActor];
  u32 seen;    // bit k: entry k was found published (a channel, or none)
  u32 active;  // bit k: entry k is a channel
};
__shared__ ChannelRx rk_rx[kChannelReceivers];

// Looks for entries of the actor's channel table published since the last
// look (after a kMailChannel record). Returns false while an entry claimed
// is not published yet (its sender writes its record first): look again.
__device__ __noinline__ bool LookForChannels(const SystemParams* sys, u32 actor, ChannelRx* rx) {
  const ChannelTable* t = &sys->channel_tables[actor];
  const u32 claimed = ChannelClaimed(t);
  bool all = true;
  for (u32 k = 0; k < claimed; ++k) {
    if ((rx->seen >> k) & 1) continue;
    const u64 box = ChannelEntryBox(t, k);
    if (box == 0) {  // its sender is preparing it
      all = false;
      continue;
    }
    rx->seen |= 1u << k;
    if (box == kChannelNone) continue;
    rx->box[k] = box;
    rx->head[k] = 0;
    rx->released[k] = 0;
    rx->mark[k] = 0;
    rx->hot[k] = 0;
    rx->quiet[k] = 0;
    rx->active |= 1u << k;
  }
  return all;
}

// The resident actor's channels are served as its mailbox is (ServeMailbox
// on the same OwnedActor: one copy of that code in the owner's loop): the
// channel's box, head and polling state take the mailbox's place, which
// waits in `saved`; the counters, the clock and the failed flag are the
// actor's, whichever way a message came.
struct SourceSaved {
  MailboxHeader* box;
  u64 head, released;
  u32 hot, quiet;
};
// (A channel has its mailbox's capacity, so `log2` stays.)
__device__ __forceinline__ SourceSaved SwapInChannel(OwnedActor& o, const ChannelRx* rx, u32 k) {
  const SourceSaved saved{o.box, o.head, o.released, o.hot, o.quiet};
  o.box = reinterpret_cast<MailboxHeader*>(rx->box[k]);
  o.head = rx->head[k];
  o.released = rx->released[k];
  o.hot = rx->hot[k];
  o.quiet = rx->quiet[k];
  o.source = k + 1;
  return saved;
}
__device__ __forceinline__ void SwapOutChannel(OwnedActor& o, ChannelRx* rx, u32 k, const SourceSaved& saved) {
  rx->head[k] = o.head;
  rx->released[k] = o.released;
  rx->hot[k] = o.hot;
  rx->quiet[k] = o.quiet;
  o.box = saved.box;
  o.head = saved.head;
  o.released = saved.released;
  o.hot = saved.hot;
  o.quiet = saved.quiet;
  o.source = 0;
}

// ---- The host → worker ring (warp 0). ----

// The window: each lane loads kWindowLoads 16-byte pieces, 64 words apart,
// so the warp reads 64 × kWindowLoads words of consecutive records at once.
constexpr u32 kWindowLoads = 4;
constexpr u32 kWindowWords = 64 * kWindowLoads;
// While records keep coming, the host gets consumed units back every this
// many (and at once when the ring is found empty).
constexpr u64 kHostReleaseUnits = 64;

struct HostRing {
  LlRingHeader* hdr;
  const u64* slots;
  u32 log2;  // capacity in units of kLlUnitWords words
  u64 head;  // units
  u64 released;
  u64 last_record_ns;  // when a record last came
  u32 took_last;       // the last poll took records: read the wide window (a backlog may follow)
  u64 full_since_ns;   // when forwarding the head record first found its mailbox full (0: not)
  u32 broken;          // a corrupt record was seen: no more host input
};

struct Window {
  u64 v[kWindowLoads][2];  // this lane's words: window word k*64 + 2*lane + j is v[k][j]
};

// Window word `i` (uniform across the warp), from whichever lane holds it.
__device__ __forceinline__ u64 WindowWord(const Window& win, u32 i) {
  const u32 k = i / 64;
  const u32 j = i & 1;
  const u32 src = (i & 63) / 2;
  u64 mine = 0;
#pragma unroll
  for (u32 kk = 0; kk < kWindowLoads; ++kk) {
    if (kk == k) mine = j == 0 ? win.v[kk][0] : win.v[kk][1];
  }
  return __shfl_sync(0xFFFFFFFFu, mine, src);
}

__device__ __forceinline__ const u64* HostWord(const HostRing& ring, u64 head, u32 i) {
  const u64 pos = head + i / kLlUnitWords;
  return LlSlot(ring.slots, kLlUnitWords, ring.log2, pos) + i % kLlUnitWords;
}

__device__ __forceinline__ void LoadWindow(const HostRing& ring, Window* win) {
  const u32 lane = LaneId();
#pragma unroll
  for (u32 k = 0; k < kWindowLoads; ++k) {
    const u32 i = k * 64 + 2 * lane;
    // Units are 16 words, so a lane's pair never straddles two.
    LoadRelaxedSysPair(HostWord(ring, ring.head, i), &win->v[k][0], &win->v[k][1]);
  }
}

// The first kQuietWords words of the window only (the rest read as not
// written): what a quiet ring's poll loads.
constexpr u32 kQuietWords = 32;
__device__ __forceinline__ void LoadWindowStart(const HostRing& ring, Window* win) {
  const u32 lane = LaneId();
#pragma unroll
  for (u32 k = 0; k < kWindowLoads; ++k) win->v[k][0] = win->v[k][1] = 0;
  if (2 * lane < kQuietWords) LoadRelaxedSysPair(HostWord(ring, ring.head, 2 * lane), &win->v[0][0], &win->v[0][1]);
}

// Whether window words [from, to) all carry the flag of their position.
__device__ __forceinline__ bool WindowComplete(const HostRing& ring, const Window& win, u32 from, u32 to) {
  const u32 lane = LaneId();
  bool ok = true;
#pragma unroll
  for (u32 k = 0; k < kWindowLoads; ++k) {
#pragma unroll
    for (u32 j = 0; j < 2; ++j) {
      const u32 i = k * 64 + 2 * lane + j;
      if (i >= from && i < to) {
        const u32 flag = LlFlag(ring.head + i / kLlUnitWords, ring.log2);
        ok = ok && LlWordFlag(win.v[k][j]) == flag;
      }
    }
  }
  return __all_sync(0xFFFFFFFFu, ok);
}

// Whether words [from, to) of the record at `rslot` all carry `rflag`
// (warp-wide: each lane checks kPerLane words per pass, 2 (a 16-byte load)
// where the words are on the hot path, 1 where registers matter more).
template <u32 kPerLane = 2>
__device__ __forceinline__ bool HostWordsWritten(const u64* rslot, u32 rflag, u32 from, u32 to) {
  static_assert(kPerLane == 1 || kPerLane == 2, "one word or a pair per lane");
  bool ok = true;
  if constexpr (kPerLane == 2) {
    for (u32 at = from; at < to; at += 64) {
      const u32 i = at + 2 * LaneId();
      u64 a = 0, b = 0;
      if (i < to) LoadRelaxedSysPair(rslot + i, &a, &b);
      ok = ok && (i >= to || LlWordFlag(a) == rflag) && (i + 1 >= to || LlWordFlag(b) == rflag);
    }
  } else {
    for (u32 i = from + LaneId(); i < to; i += 32) ok = ok && LlWordFlag(LoadRelaxedSys(rslot + i)) == rflag;
  }
  return __all_sync(0xFFFFFFFFu, ok);
}

// Forwards a host record into its actor's mailbox, the warp writing the
// payload in parallel. Record words beyond the window are read here, pass by
// pass, and checked first: a record is forwarded only whole. Returns
// kForwarded, or kForwardFull when the mailbox is full and kForwardNotWhole
// when the record is not all written yet (either way nothing was written and
// the record stays in the ring).
constexpr u32 kForwardFull = 0;
constexpr u32 kForwarded = 1;
constexpr u32 kForwardNotWhole = 2;
__device__ u32 ForwardHostRecord(const Window& win, u32 base, const u64* rslot, u32 rflag, const LlHeader& h,
                                 const TargetInfo& t) {
  const u32 lane = LaneId();
  const u32 in_window = kWindowWords - base;
  if (kLlHeaderWords + (h.size + 3) / 4 > in_window &&
      !HostWordsWritten(rslot, rflag, in_window, kLlHeaderWords + (h.size + 3) / 4)) {
    return kForwardNotWhole;
  }
  const u32 log2 = ShapeLog2(t.shape);
  const u32 inline_words = ShapeInlineWords(t.shape);
  u64 pos = 0;
  u32 got = 0;
  if (lane == 0) {
    MailboxCursor c{0, 0};
    got = MailboxReserve(t.box, u64{1} << log2, 1, &c, &pos);
  }
  got = __shfl_sync(0xFFFFFFFFu, got, 0);
  if (got == 0) return kForwardFull;
  pos = __shfl_sync(0xFFFFFFFFu, pos, 0);
  u64* slot = MailboxSlotAt(t.box, log2, t.slot_bytes, pos);
  const u32 mflag = LlFlag(pos, log2);
  const u32 words = (h.size + 3) / 4;
  const bool plain = words > inline_words;
  u32* plain_out = reinterpret_cast<u32*>(MailboxPlain(slot, inline_words));
  // Payload word p is record word kLlHeaderWords + p, window word base + that.
  auto put = [&](u32 p, u32 data) {
    if (plain) {
      plain_out[p] = data;
    } else {
      StoreRelaxedGpu(slot + kMailHeaderWords + p, LlWord(data, mflag));
    }
  };
  const u32 first_end = kWindowWords - base;  // record words the window holds
#pragma unroll
  for (u32 k = 0; k < kWindowLoads; ++k) {
#pragma unroll
    for (u32 j = 0; j < 2; ++j) {
      const u32 i = k * 64 + 2 * lane + j;
      if (i >= base + kLlHeaderWords && i < base + kLlHeaderWords + words) put(i - base - kLlHeaderWords, LlData(win.v[k][j]));
    }
  }
  // The rest of a large record, a 64-word pass at a time.
  const u32 record_words = kLlHeaderWords + words;
  for (u32 from = first_end; from < record_words; from += 64) {
    const u32 i = from + 2 * lane;
    u64 a = 0, b = 0;
    bool ok;
    do {
      if (i < record_words) LoadRelaxedSysPair(rslot + i, &a, &b);
      ok = (i >= record_words || LlWordFlag(a) == rflag) && (i + 1 >= record_words || LlWordFlag(b) == rflag);
    } while (!__all_sync(0xFFFFFFFFu, ok));
    if (i < record_words) put(i - kLlHeaderWords, LlData(a));
    if (i + 1 < record_words) put(i + 1 - kLlHeaderWords, LlData(b));
  }
  // A plain payload: every lane's stores before lane 0's header.
  if (plain) __threadfence();
  __syncwarp();
  if (lane == 0) {
    MailHeader m;
    m.type = h.type;
    m.size = h.size;
    m.sender = kHostActorValue;
    m.flags = kMailIngress | (plain ? kMailPlain : 0u);
    m.correlation = h.correlation;
    m.hlc = h.hlc;
    MailboxStoreHeader(slot, mflag, m);
  }
  __syncwarp();
  return kForwarded;
}

// How long the poller waits for room in a hand-over ring (or for it to
// empty, before forwarding past it) before it leaves the record for its
// next poll.
constexpr u64 kDirectWaitNs = 20000;

// Copies the record at window word `base` into entry `e` of a hand-over
// ring: each lane stores the payload words its window holds (the caller
// checked that the window holds the whole record).
__device__ __forceinline__ void PutDirect(const Window& win, u32 base, const LlHeader& h, DirectEntry* e) {
  const u32 lane = LaneId();
  const u32 words = (h.size + 3) / 4;
  const u32 from = base + kLlHeaderWords;
  // A record starts at an even window word and its header is ten words, so
  // a lane's pair of window words is a pair of payload words, stored with
  // one 64-bit exchange (a lone last word alone).
  static_assert(kLlHeaderWords % 2 == 0, "payload words come in the lanes' pairs");
#pragma unroll
  for (u32 k = 0; k < kWindowLoads; ++k) {
    const u32 i = k * 64 + 2 * lane;
    if (i >= from && i + 1 < from + words) {
      SlotSet64(reinterpret_cast<unsigned long long*>(&e->payload[i - from]),
                static_cast<u64>(LlData(win.v[k][0])) | static_cast<u64>(LlData(win.v[k][1])) << 32);
    } else if (i >= from && i < from + words) {
      SlotSet(&e->payload[i - from], LlData(win.v[k][0]));
    }
  }
  if (lane == 0) {
    SlotSet64(reinterpret_cast<unsigned long long*>(&e->size), static_cast<u64>(h.size) | static_cast<u64>(h.type) << 32);
    SlotSet64(&e->correlation, h.correlation);
    SlotSet64(&e->hlc, h.hlc);
  }
}

// Takes the records of `win` (loaded at ring.head) in order and delivers
// them: what the poller does with what it read. Stops at the first record
// that is not whole (*waiting set), at one it cannot deliver yet (its hand-
// over ring or mailbox full: retried on the next poll), after a large
// record, and once `limit` records are taken. In hole mode (`limit` 1, see
// below) a record taken is stamped kLlTakenType. Returns the messages
// delivered; *units_out: the units taken (the head moves by that much).
__device__ __forceinline__ u32 TakeRecords(WorkerThread& w, HostRing& ring, const Window& win, DirectSlot* slots,
                                           u64 now, const volatile u32* s_request, u32 limit, u32* units_out,
                                           bool* waiting) {
  const SystemParams* sys = w.sys;
  const u32 lane = LaneId();
  u32 records = 0;  // messages consumed (skips not counted)
  u32 units = 0;    // units consumed: the head moves by this much
  // `base`: the window word where the record at unit head + units starts.
  for (u32 base = 0; base + kLlHeaderWords <= kWindowWords; base = units * kLlUnitWords) {
    if (records >= limit) break;
    if (!WindowComplete(ring, win, base, base + kLlHeaderWords)) {
      *waiting = true;
      break;
    }
#ifdef RK_ASK_STAMPS
    const u64 header_in = GlobalTimerNs();
#endif
    // A record starts at a unit (16 words), so its header lies in one
    // 64-word row of the window: each lane picks its pair of that row once.
    u32 hw[kLlHeaderWords];
    {
      const u32 row = base / 64;
      u64 mine0 = 0, mine1 = 0;
#pragma unroll
      for (u32 k = 0; k < kWindowLoads; ++k) {
        if (k == row) {
          mine0 = win.v[k][0];
          mine1 = win.v[k][1];
        }
      }
      const u32 first = (base & 63) / 2;
#pragma unroll
      for (u32 x = 0; x < kLlHeaderWords; x += 2) {
        hw[x] = LlData(__shfl_sync(0xFFFFFFFFu, mine0, first + x / 2));
        hw[x + 1] = LlData(__shfl_sync(0xFFFFFFFFu, mine1, first + x / 2));
      }
    }
    static_assert(kLlUnitWords % 2 == 0 && 64 % kLlUnitWords == 0 && kLlHeaderWords <= kLlUnitWords,
                  "a header lies in one row of the window, starting at an even word");
    const LlHeader h = LlHeaderFromWords(hw);
    const u64 rpos = ring.head + units;
    u64* rslot = const_cast<u64*>(LlSlot(ring.slots, kLlUnitWords, ring.log2, rpos));
    const u32 rflag = LlFlag(rpos, ring.log2);
    const bool skip = h.type == kLlSkipType;
    const u32 runits = LlRecordExtent(h, rpos, ring.log2, sys->max_payload);
    if (runits == 0 || (!skip && h.type >= kControlTypeBase)) {
      // A corrupt record: the host never writes one. Say so and stop reading
      // this ring rather than guess where the next record starts.
      if (lane == 0) StoreReleaseSys(&sys->control->ingress_error.value, rpos + 1);
      ring.broken = 1;
      break;
    }
    if (skip) {
      // Padding to the ring's end: the next record starts a lap later.
      if (lane == 0) LlStampUnusedUnits(rslot, runits, kLlHeaderWords, rflag);
      units += runits;
      break;  // the window's words beyond the end belong to the next lap's first units
    }
    const u32 record_words = kLlHeaderWords + (h.size + 3) / 4;
    const u32 in_window = base + record_words <= kWindowWords ? record_words : kWindowWords - base;
    // Taken only whole: the words past the window of a large record are
    // checked before anything is reserved for it.
    if (!WindowComplete(ring, win, base, base + in_window)) {
      *waiting = true;
      break;
    }
#ifdef RK_ASK_STAMPS
    const u64 record_in = GlobalTimerNs();
    u64 checked = 0;
#endif
#ifdef RK_ORDER_TRACE
    const u32 trace_word = WindowWord(win, base + kLlHeaderWords);
#endif
    // One of the first actors: hand a small thread-handler message over in
    // shared memory while none of its host messages wait in its mailbox and
    // its ring has room; forward past the ring only once it is empty, so
    // that nothing forwarded overtakes a message handed over. Its owner
    // empties the ring within an iteration, so the poller waits for it
    // here rather than read the window over the bus again — but not past
    // kDirectWaitNs, nor while the block is asked to meet (the owner may be
    // waiting for this warp at the barrier).
    // Every position below kDirectSlots has its slot, whatever this warp's
    // copy of the worker's actor count says: that copy is refreshed only
    // every few iterations, and a message to an actor spawned since must
    // still be counted in `pending` when it is forwarded (its owner, which
    // may have loaded it already, counts it off when it takes it). Until its
    // owner has loaded it (`actor`), the poller waits.
    const u32 pos = h.peer;
    DirectSlot* slot = pos < kDirectSlots ? &slots[pos] : nullptr;
    bool direct = false;
    u32 dtail = 0;
    if (slot != nullptr) {
      u32 head = 0, pending = 0, actor = 0, type = 0, failed = 0, eligible = 0, ok = 0;
      if (lane == 0) {
        // 64-bit reads of the fields (pairs of neighbours).
        // `actor` first: its owner wrote the type, the failed flag and the
        // handler mask before it, with a block fence between.
        const u64 pa = SlotGetPair(&slot->pending);
        __threadfence_block();
        const u64 ht = SlotGetPair(&slot->head);
        const u64 tf = SlotGetPair(&slot->actor_type);
        const u64 thread_types = SlotGet64(&slot->thread_types);
        head = static_cast<u32>(ht);
        dtail = static_cast<u32>(ht >> 32);
        pending = static_cast<u32>(pa);
        actor = static_cast<u32>(pa >> 32);
        type = static_cast<u32>(tf);
        failed = static_cast<u32>(tf >> 32);
        eligible = actor == h.actor + 1 && failed == 0 && pending == 0 && h.size <= 4 * kDirectWords &&
                   record_words <= in_window &&
                   (h.type < 64 ? (thread_types >> h.type) & 1 : HandlerKindOf(type, h.type) == 1);
        // Direct: room for one more. Forwarded: the ring empty.
        const u32 room = eligible ? kDirectDepth : 1;
        ok = actor != 0 && dtail - head < room;
        if (actor != 0 && !ok) {
          const u64 until = GlobalTimerNs() + kDirectWaitNs;
          while (!ok && *s_request == 0 && GlobalTimerNs() < until) {
            head = SlotGet(&slot->head);
            ok = dtail - head < room;
          }
          failed = SlotGet(&slot->failed);
          pending = SlotGet(&slot->pending);
          eligible = eligible && failed == 0 && pending == 0;
          // An actor that failed meanwhile is forwarded to, which takes the
          // ring empty, not merely with room.
          ok = ok && (eligible || dtail == head);
        }
#ifdef RK_ASK_STAMPS
        checked = GlobalTimerNs();
#endif
      }
      ok = __shfl_sync(0xFFFFFFFFu, ok, 0);
      if (!ok) {
        if (lane == 0) RK_ORDER_EVENT(kOrderNotReady, w.worker, eligible, h.actor, dtail, trace_word);
        break;  // retried on the next poll
      }
      direct = __shfl_sync(0xFFFFFFFFu, eligible, 0) != 0;
      dtail = __shfl_sync(0xFFFFFFFFu, dtail, 0);
    }
    if (direct) {
      PutDirect(win, base, h, &slot->e[dtail % kDirectDepth]);
#ifdef RK_ASK_STAMPS
      const u64 put = GlobalTimerNs();
#endif
      // Every lane's stores before lane 0 publishes the entry.
      __threadfence_block();
      __syncwarp();
      if (lane == 0) {
        SlotSet(&slot->tail, dtail + 1);
        RK_ORDER_EVENT(kOrderPutDirect, w.worker, 0, h.actor, dtail, trace_word);
        // Counted for the drain (Quiescent): handed over, not yet taken.
        atomicAdd(reinterpret_cast<unsigned long long*>(&sys->worker_stats[w.worker].handed), 1ull);
        RK_ASK_STAMP(h.correlation, kStampPollBegan, now);
        RK_ASK_STAMP(h.correlation, kStampHandedOver, GlobalTimerNs());
        RK_ASK_STAMP(h.correlation, kStampHeaderIn, header_in);
        RK_ASK_STAMP(h.correlation, kStampRecordIn, record_in);
        RK_ASK_STAMP(h.correlation, kStampChecked, checked);
        RK_ASK_STAMP(h.correlation, kStampPut, put);
      }
      __syncwarp();
    } else {
      // Forward (or report) through the mailbox.
      DeadLetterReason reason = DeadLetterReason::kNone;
      TargetInfo t{};
      if (h.actor >= sys->max_actors) {
        reason = DeadLetterReason::kNoActor;
      } else {
        t = ReadTarget(&sys->actors[h.actor]);
        if (t.status != static_cast<u32>(ActorState::kRunning)) {
          reason = DeadLetterReason::kNoActor;
        } else if (HandlerKindOf(t.type, h.type) == 0) {
          reason = DeadLetterReason::kNoHandler;
        } else if (h.size > MailboxMaxPayload(t.shape, t.slot_bytes)) {
          reason = DeadLetterReason::kTooLarge;
        }
      }
      if (reason == DeadLetterReason::kNone) {
        const u32 forwarded = ForwardHostRecord(win, base, rslot, rflag, h, t);
        if (forwarded == kForwardNotWhole) {
          *waiting = true;
          break;
        }
        if (forwarded == kForwardFull) {
          // Full: give its owner until the timeout to make room (serving
          // this warp's own mailboxes meanwhile), then report the message
          // rather than hold every other actor's input back.
          if (ring.full_since_ns == 0) ring.full_since_ns = now;
          if (now - ring.full_since_ns <= sys->ingress_full_timeout_ns &&
              LoadRelaxedGpu32(&sys->actors[h.actor].status) == static_cast<u32>(ActorState::kRunning)) {
            break;
          }
          reason = DeadLetterReason::kMailboxFull;
        } else if (slot != nullptr && lane == 0) {
          atomicAdd(&slot->pending, 1u);
        }
        if (reason == DeadLetterReason::kNone && lane == 0) {
          RK_ORDER_EVENT(kOrderForward, w.worker, 0, h.actor, ring.head + units, trace_word);
        }
      }
      ring.full_since_ns = 0;
      if (reason != DeadLetterReason::kNone) {
        if (lane == 0) {
          DeadLetterFromRing(sys, WorkerOutRing(sys, w.worker, w.out), h, rslot, reason);
          RK_TRACE_EVENT(sys, &w.out->trace, TraceKindType(TraceKind::kDeadLetter, h.type), h.actor,
                         static_cast<u32>(reason), kHostActorValue);
          atomicAdd(&sys->shared->ingress_dead.value, 1ull);
          if (h.actor < sys->max_actors) atomicAdd(&sys->actors[h.actor].rejected, 1ull);
        }
        __syncwarp();
      }
    }
    if (lane == 0) {
      // Taken past a record still being written: marked, so that Stop's
      // count of what was never taken passes over it.
      if (limit == 1) StoreRelaxedSys(rslot, LlWord(kLlTakenType, rflag));
      LlStampUnusedUnits(rslot, runits, record_words, rflag);
    }
    ++records;
    units += runits;
    if (record_words > in_window) break;  // a large record: the window is spent
  }
  *units_out = units;
  return records;
}

// ---- Holes: records whose writer stopped in the middle. ----
//
// A host writer claims its record's units with the record's size word before
// it writes the rest (ll_ring.h). When the record at the head has stayed
// claimed but not whole for kHoleAfterNs (its writer was preempted, or
// stopped), the poller opens a hole: it notes the record's position and size
// and reads on past it. While a hole is open the ring is served in hole mode,
// one record a poll, and its units are released only up to the first hole.
//
// Order: FIFO per sender holds if a record is taken only while no earlier
// record of its writer is open. Each poll in hole mode (HostHolesPlan) reads
// the record at the head first and then the holes, last first, each read
// issued after the one before it came back, and takes the first of them it
// saw whole that may go first (LlHolePick, ll_ring.h). A record claimed in
// order (writer tag 0) may: its writer claimed it only once its previous
// one was whole, so every earlier record of that writer reads whole too and
// the holes before it that read open are other writers'. A record its
// ring's owner streamed (tag w, runtime/ring_owner.h) becomes visible in no
// particular order with the owner's records before it, so it waits while an
// earlier hole is w's or has no tag to read yet.
constexpr u32 kMaxHostHoles = 4;
constexpr u64 kHoleAfterNs = 100000;
// HostHolesPlan's answers besides a hole's index.
constexpr u32 kPlanHead = kMaxHostHoles;      // the record at the head
constexpr u32 kPlanNothing = kMaxHostHoles + 1;

struct HostHoles {
  u64 stall_at;     // the head at which a claimed record was last found not whole
  u64 stall_since;  // since when
  u64 pos[kMaxHostHoles];   // open holes, in ring order
  u32 size[kMaxHostHoles];  // their size words (claims)
  u32 count;
  u64 head;   // hole mode: the head (past the holes)
  u64 at;     // hole mode: where the record the next poll takes is (~0: none)
  u32 which;  // hole mode: which that is (an index, kPlanHead or kPlanNothing)
};
// Warp 0's, in shared memory: lane 0 writes, then the warp meets.
__shared__ HostHoles rk_host_holes;

__device__ __forceinline__ void InitHostHoles() {
  rk_host_holes.count = 0;
  rk_host_holes.stall_at = ~u64{0};
  rk_host_holes.stall_since = 0;
}

// How far the ring's units may be released: to the first open hole, or to
// `head`.
__device__ __forceinline__ u64 HostReleasePoint(u64 head) {
  return rk_host_holes.count != 0 ? rk_host_holes.pos[0] : head;
}

// The record at `head` is claimed (size word `claim`) but not whole: notes
// since when, and opens a hole once that is kHoleAfterNs ago and there is
// room for one. Returns the units to move the head by (0: none). Warp 0.
__device__ __noinline__ u32 NoteHostStall(const SystemParams* sys, u64 head, u32 claim, u64 now, u32 log2,
                                          u32 max_payload) {
  HostHoles& s = rk_host_holes;
  u32 skip = 0;
  if (LaneId() == 0) {
    if (s.stall_at != head) {
      s.stall_at = head;
      s.stall_since = now;
    } else if (now - s.stall_since >= kHoleAfterNs && s.count < kMaxHostHoles) {
      // A claim no producer makes (extent 0) opens nothing: the record is
      // judged, and found corrupt, once whole.
      const u32 extent = LlClaimExtent(claim, head, log2, max_payload);
      if (extent != 0) {
        s.pos[s.count] = head;
        s.size[s.count] = claim;
        ++s.count;
        s.stall_at = ~u64{0};
        s.head = head + extent;
        s.at = ~u64{0};  // the next poll plans
        skip = extent;
        atomicAdd(&sys->shared->host_holes.value, 1ull);
      }
    }
  }
  __syncwarp();
  return __shfl_sync(0xFFFFFFFFu, skip, 0);
}

// Whether the record at `pos` whose size word reads `claim` is whole (a
// word per lane per pass: hole mode is rare, its registers are not).
__device__ __forceinline__ bool HostRecordWhole(const u64* slots, u32 log2, u64 pos, u32 claim) {
  const u32 words = kLlHeaderWords + (claim == kLlSkipSize ? 0u : (claim + 3) / 4);
  return HostWordsWritten<1>(LlSlot(slots, kLlUnitWords, log2, pos), LlFlag(pos, log2), 0, words);
}

// What hole mode's look at the record at `pos` finds (LlHolePick): whether
// it is whole (`claim`: its size word; kNoClaim: not claimed), and its
// writer tag, read after the rest (a whole record's words no longer change).
constexpr u32 kNoClaim = 0xFFFFFFFDu;
__device__ __forceinline__ LlHoleLook HostHoleLook(const u64* slots, u32 log2, u64 pos, u32 claim) {
  const u64* at = LlSlot(slots, kLlUnitWords, log2, pos);
  LlHoleLook look;
  look.whole = claim != kNoClaim && HostRecordWhole(slots, log2, pos, claim);
  u64 writer = 0;
  if (LaneId() == 0) writer = LoadRelaxedSys(at + 5);
  writer = __shfl_sync(0xFFFFFFFFu, writer, 0);
  look.writer = LlData(writer);
  look.writer_known = LlWordFlag(writer) == LlFlag(pos, log2);
  return look;
}

// Hole mode, at the end of a poll: picks the record the next poll takes
// (above) and sets rk_host_holes.at to its position (~0: none) and .which
// to which it is; .head is the head, moved past a hole opened here, which
// it returns. (The choice stays right until then: records only get whole.)
// Warp 0.
__device__ __noinline__ u64 HostHolesPlan(const SystemParams* sys, const u64* slots, u32 log2, u64 head, u64 now,
                                          u32 max_payload) {
  const u32 lane = LaneId();
  u64 claim_word = 0;
  if (lane == 0) claim_word = LoadRelaxedSys(LlSlot(slots, kLlUnitWords, log2, head) + 1);
  claim_word = __shfl_sync(0xFFFFFFFFu, claim_word, 0);
  const bool claimed = LlWordFlag(claim_word) == LlFlag(head, log2);
  const u32 holes = rk_host_holes.count;
  LlHoleLook looks[kMaxHostHoles + 1];
  looks[holes] = HostHoleLook(slots, log2, head, claimed ? LlData(claim_word) : kNoClaim);
  // Each read of a hole is issued after the one before it came back.
  __threadfence_system();
  for (u32 j = holes; j-- > 0;) looks[j] = HostHoleLook(slots, log2, rk_host_holes.pos[j], rk_host_holes.size[j]);
  const u32 pick = LlHolePick(looks, holes);
  const u32 which = pick < holes ? pick : pick == holes ? kPlanHead : kPlanNothing;
  u64 at = ~u64{0};
  if (which < kPlanHead) {
    at = rk_host_holes.pos[which];
  } else if (which == kPlanHead) {
    at = head;
  } else if (claimed) {
    head += NoteHostStall(sys, head, LlData(claim_word), now, log2, max_payload);
  }
  __syncwarp();
  if (lane == 0) {
    rk_host_holes.which = which;
    rk_host_holes.head = head;
    rk_host_holes.at = at;
  }
  __syncwarp();
  return head;
}

// Hole mode, after a poll that took `units` units of the record it planned
// to: closes the hole, or moves the head past the record. Warp 0.
__device__ __noinline__ void HostHolesTook(u32 units) {
  if (LaneId() == 0 && units != 0) {
    HostHoles& s = rk_host_holes;
    if (s.which == kPlanHead) {
      s.head += units;
    } else if (s.which < kPlanHead) {
      for (u32 j = s.which; j + 1 < s.count; ++j) {
        s.pos[j] = s.pos[j + 1];
        s.size[j] = s.size[j + 1];
      }
      --s.count;
    }
  }
  __syncwarp();
}

// Polls the worker's host ring and delivers what is there, in order. Called
// by the whole of warp 0. The ring holds variable-length records in units
// (ll_ring.h); the window is read from the unit at the head. Returns the
// records consumed.
__device__ u32 ServeHostRing(WorkerThread& w, HostRing& ring, DirectSlot* slots, u64 now,
                             const volatile u32* s_request) {
  const SystemParams* sys = w.sys;
  const u32 lane = LaneId();
  if (ring.broken) return 0;
  // Wide (2 KiB) while records keep coming, so that a backlog is taken
  // several records per trip over the bus; otherwise the first 256 bytes,
  // which come back sooner and hold a small record whole.
  bool wide = ring.took_last != 0;
  u32 limit = ~0u;
  if (rk_host_holes.count != 0) {
    // Hole mode: the one record the last poll's HostHolesPlan picked, read
    // from where it is.
    const u64 at = rk_host_holes.at;
    if (at == ~u64{0}) {
      ring.head = HostHolesPlan(sys, ring.slots, ring.log2, ring.head, now, sys->max_payload);
      return 0;
    }
    ring.head = at;
    limit = 1;
    wide = true;
  }
  Window win;
  if (wide) {
    LoadWindow(ring, &win);
  } else {
    // Quiet: the first kQuietWords words only, one 16-byte load from each
    // of a few lanes — the whole of a small record, which is then taken
    // from this read rather than a second trip over the bus.
    LoadWindowStart(ring, &win);
    const u32 flag = LlFlag(ring.head, ring.log2);
    const bool begun = __shfl_sync(0xFFFFFFFFu, LlWordFlag(win.v[0][0]) == flag, 0);
    // The size word is the record's claim, written before the rest.
    const bool size_there = __shfl_sync(0xFFFFFFFFu, LlWordFlag(win.v[0][1]) == flag, 0);
    const u32 size = __shfl_sync(0xFFFFFFFFu, LlData(win.v[0][1]), 0);
    if (!begun) {
      if (ring.released != ring.head) {
        if (lane == 0) LlRelease(ring.hdr, ring.head);
        ring.released = ring.head;
      }
      if (size_there) ring.head += NoteHostStall(sys, ring.head, size, now, ring.log2, sys->max_payload);
      return 0;
    }
    // A record too large for that (or whose size is not written yet: the
    // loop below then finds it incomplete and the next poll reads again).
    if (size_there && kLlHeaderWords + (size + 3) / 4 > kQuietWords) LoadWindow(ring, &win);
  }
  u32 units = 0;
  bool waiting = false;
  const u32 records = TakeRecords(w, ring, win, slots, now, s_request, limit, &units, &waiting);
  if (limit == 1) {
    HostHolesTook(units);
    if (lane == 0 && records != 0) {
      atomicAdd(&sys->shared->ingress_messages.value, static_cast<unsigned long long>(records));
    }
    if (records != 0) ring.last_record_ns = now;
    const u64 release = HostReleasePoint(rk_host_holes.head);
    if (ring.released != release) {
      if (lane == 0) LlRelease(ring.hdr, release);
      ring.released = release;
    }
    ring.head = rk_host_holes.count != 0
                    ? HostHolesPlan(sys, ring.slots, ring.log2, rk_host_holes.head, now, sys->max_payload)
                    : rk_host_holes.head;
    return records;
  }
  ring.took_last = units != 0;
  if (units != 0) {
    if (lane == 0 && records != 0) {
      atomicAdd(&sys->shared->ingress_messages.value, static_cast<unsigned long long>(records));
    }
    ring.head += units;
    ring.last_record_ns = now;
    if (ring.head - ring.released >= kHostReleaseUnits) {
      if (lane == 0) LlRelease(ring.hdr, ring.head);
      ring.released = ring.head;
    }
  } else {
    if (ring.released != ring.head) {
      if (lane == 0) LlRelease(ring.hdr, ring.head);
      ring.released = ring.head;
    }
    // The record at the head is not whole: if it is claimed, how long has
    // it been (a hole may open)?
    if (waiting) {
      const u32 flag = LlFlag(ring.head, ring.log2);
      const bool claimed = __shfl_sync(0xFFFFFFFFu, LlWordFlag(win.v[0][1]) == flag, 0);
      const u32 claim = __shfl_sync(0xFFFFFFFFu, LlData(win.v[0][1]), 0);
      if (claimed) ring.head += NoteHostStall(sys, ring.head, claim, now, ring.log2, sys->max_payload);
    }
  }
  return records;
}

// ---- The worker loop. ----

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

// Takes the messages the poller handed over in `d` before `tail` (a tail of
// the slot the owner read), if any, and handles them in order. Only after
// the messages queued before them (see the top of this file and the owner
// loop). Returns how many.
__device__ u32 ServeDirect(WorkerThread& w, OwnedActor& o, DirectSlot* d, u32 tail) {
  u32 head = SlotGet(&d->head);
  if (tail == head) return 0;
#ifdef RK_ASK_STAMPS
  const u64 seen = GlobalTimerNs();
#endif
  u32 n = 0;
  for (; head != tail; ++head) {
    RK_OC_ONLY(const long long oc0 = clock64();)
    __threadfence_block();
    DirectEntry* e = &d->e[head % kDirectDepth];
    MailRecord r;
    const u64 st = SlotGetPair(&e->size);
    r.h.size = static_cast<u32>(st);
    r.h.type = static_cast<u32>(st >> 32);
    r.h.sender = kHostActorValue;
    r.h.flags = 0;
    r.h.correlation = SlotGet64(&e->correlation);
    r.h.hlc = SlotGet64(&e->hlc);
    // The payload two words at a time.
    const u32 words = (r.h.size + 3) / 4;
    for (u32 i = 0; i < words; i += 2) {
      const u64 v = SlotGetPair(&e->payload[i]);
      w.buf[i] = static_cast<u32>(v);
      w.buf[i + 1] = static_cast<u32>(v >> 32);
    }
    r.payload = reinterpret_cast<const u8*>(w.buf);
    RK_ASK_STAMP(r.h.correlation, kStampTaken, GlobalTimerNs());
    RK_ASK_STAMP(r.h.correlation, kStampDirectSeen, seen);
    RK_OC_ONLY(const long long oc1 = clock64();)
    RK_OC_ADD(kOcDirect, 1);
    RK_OC_ADD(kOcDirectCopy, oc1 - oc0);
    MarkRunning(w, RunningEntry(o.index, r.h.type));
    // ctx.retry_later: the entry stays, and is handled again later.
    const Handled handled = HandleOne<true>(w, o, r);
    RK_OC_ADD(kOcDirectHandle, clock64() - oc1);
    if (handled == Handled::kRetry) {
      RK_ORDER_EVENT(kOrderDirectRetry, w.worker, tail - head, o.index, head, w.buf[0]);
      break;
    }
    RK_ORDER_EVENT(kOrderDirectTake, w.worker, tail - head, o.index, head, w.buf[0]);
    // The entry is free for the poller once it is handled.
    __threadfence_block();
    SlotSet(&d->head, head + 1);
    RK_ASK_STAMP(r.h.correlation, kStampReleased, GlobalTimerNs());
    ++o.direct;
    ++n;
  }
  o.hot = (o.hot & ~kHotCalls) | 64;
  o.quiet = 0;
  if (o.failed) SlotSet(&d->failed, 1);
  StoreOwned(o);
  return n;
}

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
      auto serve = [&](OwnedActor& o, u32 a, DirectSlot* direct, bool resident) {
        bool block = false;
        bool retried = false;
        // (The loop's time between two calls counts only after a call that
        // took messages: a stream's, not an idle actor's sleeps.)
        RK_OC_ONLY(if (resident && oc_returned != 0) RK_OC_ADD(kOcBetween, clock64() - oc_returned);)
        RK_OC_ONLY(if (resident && oc_returned != 0) RK_OC_ADD(kOcStreamLoops, 1);)
        const u32 n = ServeMailbox(w, o, direct, resident, &block, &retried);
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
        const u32 first_src = __ffs(sources) - 1;
        // The hand-overs that came before any source is polled in this
        // iteration: the ones a drained iteration may take (below).
        u32 direct_limit = my_direct != nullptr ? SlotGet(&my_direct->tail) : 0u;
        do {
          const u32 src = __ffs(sources) - 1;
          sources &= sources - 1;
          SourceSaved saved{};
          if (src != 0) saved = SwapInChannel(mine, my_rx, src - 1);
          // A block handler's queue entry names the source (RunBlockMessage).
          drained = serve(mine, first | src << 24, my_direct, true) && drained;
          if ((mine.hot & kHotCut) != 0) {
            // This source's spin ended for a hand-over: its last poll came
            // just before the hand-over was seen, and the sources after it
            // are polled after. So if it is the first source, a drained
            // iteration may take what the spin saw. (A later source's spin
            // leaves the sources before it found empty that long ago: a
            // message that landed in one since may have come before the
            // hand-over — its sender, say, told the host it had sent it.)
            if (src == first_src) direct_limit = SlotGet(&my_direct->tail);
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
        }
        // Hand-overs: a host message is handled after the K2K messages that
        // were in the mailbox and the channels when it came (see the top of
        // this file).
        if (my_direct != nullptr) {
          if (drained) {
            RK_OC_ONLY(const long long oc_d = clock64();)
            const u32 nd = ServeDirect(w, mine, my_direct, direct_limit);
            RK_OC_ONLY(if (nd != 0) RK_OC_ADD(kOcServeDirect, clock64() - oc_d);)
            did |= nd;
            direct_mark = kNoMark;
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
              if (passed) {
                did |= ServeDirect(w, mine, my_direct, direct_mark_tail);
                direct_mark = kNoMark;
              }
            }
          }
          if (mine.failed) SlotSet(&my_direct->failed, 1);
        }
        RK_HOP_CYCLE(w, kHcHandOvers);
      }
      for (u32 a = first + owners; a < count; a += owners) {
        OwnedActor o = LoadOwned(sys, list[a]);
        serve(o, a, nullptr, false);
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
  SendCache sends{};
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
