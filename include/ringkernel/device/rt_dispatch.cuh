// Copyright 2026 The RingKernel Authors.
//
// rt_dispatch.cuh: what a worker thread carries from message to message, and
// how it runs one message's thread handler (HandleOne, RunThreadHandler,
// the generated dispatch), with the hand-over ring's layout and stream runs.
// Part of the worker's device code (rt_worker.cuh has the paths through a
// worker).
#ifndef RINGKERNEL_DEVICE_RT_DISPATCH_CUH_
#define RINGKERNEL_DEVICE_RT_DISPATCH_CUH_

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
  // RK_ASK_STAMPS: when this thread's last mailbox spin ended for a
  // hand-over, and when the poll before that end began (stamped with the
  // hand-overs it takes).
#ifdef RK_ASK_STAMPS
  u64 cut_ns;
  u64 cut_poll_ns;
#endif
  // RK_OWNER_CYCLES: the same moment, ServeMailbox's return after it, and
  // the ServeDirect call after that (clock64; 0: no spin ended for one).
  RK_OC_ONLY(long long cut_cyc; long long cut_ret; long long cut_call;)
};

// Records in the running table that this thread runs `entry` (see the top
// of rt_worker.cuh for why only on a change, and why without a fence).
__device__ __forceinline__ void MarkRunning(WorkerThread& w, u64 entry) {
  const SystemParams* sys = w.sys;
  if (!sys->track_running || entry == w.running) return;
  StoreRelaxedSys(&sys->running[static_cast<u64>(w.worker) * sys->threads_per_block + threadIdx.x], entry);
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
constexpr u32 kDirectWords = 28;  // 112 payload bytes
// Its fields in 16-byte pairs, each read and written in one shared atomic
// on sm_90 (SlotGet128): the size and type with the correlation, the clock
// with the mark, the payload by four words.
struct alignas(16) DirectEntry {
  u32 size;
  u32 msg_type;
  unsigned long long correlation;
  unsigned long long hlc;
  // The actor's mailbox tail as the poller read it after this record: every
  // K2K message reserved before the host message was read lies below it,
  // the ones that led to it among them (a sender reserves its position
  // before it writes, and before it can tell anyone). The owner takes the
  // entry only once its mailbox head has passed it.
  unsigned long long mark;
  u32 payload[kDirectWords];
};
RK_ASSERT_OFFSET(DirectEntry, correlation, 8);
RK_ASSERT_OFFSET(DirectEntry, hlc, 16);
RK_ASSERT_OFFSET(DirectEntry, mark, 24);
RK_ASSERT_OFFSET(DirectEntry, payload, 32);
static_assert(kDirectWords % 4 == 0 && sizeof(DirectEntry) % 16 == 0, "the payload is read by 16 bytes");
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
  // The actor's MailboxHeader (the poller reads its tail for an entry's
  // mark); written with the fields above, before `actor`.
  unsigned long long box;
  unsigned long long unused;  // the entries 16-byte aligned
  DirectEntry e[kDirectDepth];
};
// SlotGetPair reads these fields in pairs.
RK_ASSERT_OFFSET(DirectSlot, tail, 4);
RK_ASSERT_OFFSET(DirectSlot, pending, 8);
RK_ASSERT_OFFSET(DirectSlot, actor, 12);
RK_ASSERT_OFFSET(DirectSlot, actor_type, 16);
RK_ASSERT_OFFSET(DirectSlot, failed, 20);
RK_ASSERT_OFFSET(DirectSlot, thread_types, 24);
RK_ASSERT_OFFSET(DirectSlot, box, 32);
RK_ASSERT_OFFSET(DirectSlot, e, 48);

__device__ __forceinline__ u32 SlotGet(u32* p) { return atomicOr(p, 0u); }
__device__ __forceinline__ void SlotSet(u32* p, u32 v) { atomicExch(p, v); }
// A 64-bit read as a compare-and-swap that never swaps: one native shared
// atomic (a 64-bit atomicOr is a compare-and-swap loop).
__device__ __forceinline__ u64 SlotGet64(unsigned long long* p) { return atomicCAS(p, 0ull, 0ull); }
__device__ __forceinline__ void SlotSet64(unsigned long long* p, u64 v) { atomicExch(p, v); }
// Two neighbouring 32-bit fields (the first 8-byte aligned) in one 64-bit
// read: the first in the low half. A native shared atomic whatever the
// compiler knows of the pointer (every DirectSlot is in the block's shared
// memory): atomicCAS through a pointer kept in the thread's stack frame
// would be a generic one with a fallback path.
__device__ __forceinline__ u64 SlotGetPair(u32* p) {
  u64 v;
  asm volatile("atom.shared.cas.b64 %0, [%1], 0, 0;"
               : "=l"(v)
               : "r"(static_cast<u32>(__cvta_generic_to_shared(p)))
               : "memory");
  return v;
}
// Two neighbouring 64-bit fields, 16-byte aligned, in one read: on sm_90 a
// 128-bit compare-and-swap that never swaps (one native shared atomic),
// elsewhere two 64-bit reads. `lo` is the field at the lower address.
struct SlotPair128 {
  u64 lo, hi;
};
__device__ __forceinline__ SlotPair128 SlotGet128(void* p) {
  SlotPair128 v;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile(
      "{\n\t.reg .b128 z, d;\n\tmov.b128 z, {%2, %2};\n\tatom.shared.cas.b128 d, [%3], z, z;\n\t"
      "mov.b128 {%0, %1}, d;\n\t}"
      : "=l"(v.lo), "=l"(v.hi)
      : "l"(0ull), "r"(static_cast<u32>(__cvta_generic_to_shared(p)))
      : "memory");
#else
  unsigned long long* q = static_cast<unsigned long long*>(p);
  v.lo = SlotGet64(q);
  v.hi = SlotGet64(q + 1);
#endif
  return v;
}
// The same two fields written in one exchange on sm_90 (two elsewhere).
__device__ __forceinline__ void SlotSet128(void* p, u64 lo, u64 hi) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile(
      "{\n\t.reg .b128 v, d;\n\tmov.b128 v, {%0, %1};\n\tatom.shared.exch.b128 d, [%2], v;\n\t}" ::"l"(lo),
      "l"(hi), "r"(static_cast<u32>(__cvta_generic_to_shared(p)))
      : "memory");
#else
  unsigned long long* q = static_cast<unsigned long long*>(p);
  SlotSet64(q, lo);
  SlotSet64(q + 1, hi);
#endif
}
// Whether the poller handed the slot's actor a host message that its owner
// has not taken: `head` and `tail` in one read (one shared atomic, where
// two were a wait each, and one instant for both).
__device__ __forceinline__ bool HandOverWaiting(DirectSlot* d) {
  const u64 ht = SlotGetPair(&d->head);
  return static_cast<u32>(ht) != static_cast<u32>(ht >> 32);
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

// After a run's handler returned (stream runs and conversation runs alike):
// whether the handler let the run go on. `begun`: records begun after the
// first, this one among them when not 0. A run record's retry_later ends
// the run with that record left at the head (`*retry_next`); a failure
// ends it with the record handled (counted in `*ran`, as a run record that
// returned is). The caller also ends it at the end of its records.
__device__ __forceinline__ bool RunGoesOn(CtxData& d, u32 begun, u32* ran, u32* retry_next) {
  if (begun != 0) {
    if (d.retry && !d.failed) {
      d.retry = 0;
      *retry_next = 1;
      return false;
    }
    ++*ran;
  }
  return (d.failed | d.retry) == 0;
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
  if (!RunGoesOn(d, k, &m->ran, &m->retry_next) || k >= count) return false;
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

// Conversation runs (builds without stream runs, tracing or hop stamps).
// An actor in a conversation (kHotLong, rt_owner.cuh) that takes a small
// K2K record lets the handler's call wait for the next one itself: after
// the handler returns, RunThreadHandler polls the same queue at the next
// position (ConversationPoll, with the owner's spin bounds and its
// hand-over check), and when a small record of the same message type comes
// it runs the handler again in the same call, the Ctx and the send cache
// still in registers. A rally's reply then goes from the poll that takes it
// to its handler without the owner's step back through ServeMailbox,
// HandleOne and the call (some 900 cycles of one thread, RK_HOP_STAMPS).
// A stream takes the same way: a small K2K record taken after another in
// the same ServeMailbox call starts a run too, whose waits have only what
// is left of the call's short spin (the runs of one Pump's stream into a
// Sink64: +21 % for the background pumps, bench/NOTES.md, session 23).
// The owner learns what the run took from the thread's ConvRun and moves
// its head past those records, as after a stream run. A record of another
// type or kind, a host message, a hand-over waiting, the end of the room
// before producers get slots back, or a wait that used its polls ends the
// run; the owner takes what comes next as before.
#if !RK_STREAM_RUNS_ON && !defined(RK_TRACE) && !defined(RK_HOP_STAMPS)
#define RK_CONV_RUNS_ON 1
#else
#define RK_CONV_RUNS_ON 0
#endif
#if RK_CONV_RUNS_ON
struct ConvRun {
  u32* buf;                     // the owner's payload buffer (WorkerThread::buf), refilled per record
  MailboxHeader* box;           // the queue (the mailbox or a channel)
  DirectSlot* direct;           // the actor's hand-over ring, or null
  ActorSlot* slot;
  u64 pos;                      // the position of the next record
  u32 log2, slot_bytes, inline_words, type;
  u32 max;         // records the call may run after the first
  u32 begun;       // records begun after the first
  u32 ran;         // of those, handled (the owner moves its head past them)
  u32 retry_next;  // the one after them asked to be retried: it stays at the head
  u32 wait_polls;  // empty polls a wait may make
  u32 spin_left;   // empty polls the call may still make
  u32 spun;        // empty polls made
  u32 ran_out;     // a wait used all its polls
  u64 hlc;         // the actor's clock after the last record run
  // The owner's counters before the call, for the write-back before a wait
  // (a flush the host asks for once it has a reply must find it counted).
  u64 handled, sent, send_full, send_no_actor, send_other;
  // RK_OWNER_CYCLES: the run's counts (kOcRuns...), added into the actor's
  // row once the call returns.
  RK_OC_ONLY(unsigned long long oc[kOwnerCyclesPerActor - kOcRunFirst];)
};
#endif  // RK_CONV_RUNS_ON

// What a worker thread keeps in its stack frame besides its payload buffer:
// its send cache (WorkerThread::sends points at it) and, in builds with
// conversation runs, the run's state. Local memory, not shared: only the
// thread touches it, and the accesses right after a handler returns are
// L1 hits that no tool instruments (a flush the host asks for after a
// reply must find the handler counted, and the write-back comes first).
struct ThreadFrame {
  SendCache sends;  // first: a SendCache* is the frame's address
#if RK_CONV_RUNS_ON
  ConvRun conv;
#endif
};
#if RK_CONV_RUNS_ON
__device__ __forceinline__ ConvRun* ConvOf(SendCache* sends) { return &reinterpret_cast<ThreadFrame*>(sends)->conv; }

struct ConvTake {
  u32 ok;
  u32 sender;
  u64 correlation;
  u64 hlc;
};

// Waits for the next small record of the run's type at c->pos, taking its
// payload into c->buf. Inlined into RunThreadHandler after the dispatch
// (the handlers' registers are free there; out of line, the call's saves
// and restores cost the 64-byte pair 4 % and the hop 1 %: bench/NOTES.md,
// session 23). Not taken: empty after the wait's polls, another kind or
// type of record, or a hand-over waiting.
__device__ __forceinline__ ConvTake ConversationPoll(ConvRun* c, u32 sent, u32 send_full, u32 send_no_actor,
                                                  u32 send_other, u64 hlc) {
  ConvTake t{};
  // The wait's geometry and bounds in registers: a poll's loads are asm
  // with a memory clobber, after which fields read through `c` would be
  // loaded again from the stack frame on every poll, ahead of its address.
  MailboxHeader* const box = c->box;
  const u32 log2 = c->log2, slot_bytes = c->slot_bytes, inline_words = c->inline_words;
  u32* const buf = c->buf;
  DirectSlot* const direct = c->direct;
  const u64 pos = c->pos;
  const u32 wait_polls = c->wait_polls;
  u32 spin_left = c->spin_left;
  u64* const slot = MailboxSlotAt(box, log2, slot_bytes, pos);
  const u32 flag = LlFlag(pos, log2);
  u32 polls = 0;
  for (;;) {
    MailHeader h;
    RK_OC_ONLY(const long long oc_look = clock64();)
    const u32 look = MailboxLookSmall<true>(slot, inline_words, flag, kMailWideWords, &h, buf);
    if (look == kLookTaken) {
      if (h.type != c->type || (h.flags & kMailIngress) != 0) break;  // the owner's to take
      RK_OC_ONLY(c->oc[kOcRunLook - kOcRunFirst] += clock64() - oc_look;
                 c->oc[kOcRunFirstLook - kOcRunFirst] += polls == 0 ? 1 : 0;)
      MailboxStampUnused(slot, inline_words, flag, h);
      c->pos = pos + 1;
      t.ok = 1;
      t.sender = h.sender;
      t.correlation = h.correlation;
      t.hlc = h.hlc;
      break;
    }
    if (look != kLookEmpty) break;
    if (polls == 0) {
      // Before the wait, the counters of what ran so far go back (posted
      // stores, after the handler's sends): a flush the host asks for once
      // it has a handler's reply must find that message counted, and the
      // wait may be long. A record found at the first look needs no wait:
      // a stream's counters go back when its run waits or ends.
      ActorSlot* s = c->slot;
      s->hlc = hlc;
      s->handled = c->handled + 1 + c->ran;
      s->sent = c->sent + sent;
      s->send_full = c->send_full + send_full;
      s->send_no_actor = c->send_no_actor + send_no_actor;
      s->send_other = c->send_other + send_other;
    }
    if (direct != nullptr && HandOverWaiting(direct)) break;
    RK_OC_ONLY(c->oc[kOcRunEmptyLooks - kOcRunFirst] += 1; c->oc[kOcRunEmpty - kOcRunFirst] += clock64() - oc_look;)
    if (polls >= wait_polls || spin_left == 0) {
      c->ran_out = polls >= wait_polls;
      break;
    }
    ++polls;
    --spin_left;
  }
  c->spin_left = spin_left;
  c->spun += polls;
  return t;
}

// After a thread handler returned, in RunThreadHandler: whether the
// conversation's run goes on, and if so with the next record's payload
// (the Ctx refilled for it: sender, correlation, clock merged). As
// RunNext: a run record's retry_later ends the run with it left at the
// head; a failure ends it with the record handled.
__device__ __forceinline__ bool ConversationNext(CtxData& d, SendCache* sends, const void** payload) {
  if (__builtin_expect(d.run == 0, 1)) return false;
  ConvRun* c = ConvOf(sends);
  const u32 k = c->begun;
  if (!RunGoesOn(d, k, &c->ran, &c->retry_next) || k >= c->max) return false;
  const ConvTake t = ConversationPoll(c, d.sent, d.send_full, d.send_no_actor, d.send_other, d.hlc);
  if (!t.ok) return false;
  d.hlc = HlcMerge(d.hlc, t.hlc, GlobalTimerNs());
  c->hlc = d.hlc;
  d.sender = t.sender;
  d.correlation = t.correlation;
  *payload = c->buf;
  c->begun = k + 1;
  return true;
}
#endif  // RK_CONV_RUNS_ON

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
#if RK_CONV_RUNS_ON
  // (One call site of the dispatch: the loop is around it, not in each case.)
  RK_OC_ONLY(u32 oc_record = 0;)
  for (;;) {
    RK_OC_ONLY(const long long oc_in = clock64();)
    DispatchThread(actor_type, state, msg_type, payload, ctx);
    RK_OC_ONLY(const long long oc_out = clock64();
               if (oc_record != 0) ConvOf(sends)->oc[kOcRunHandler - kOcRunFirst] += oc_out - oc_in;)
    if (!ConversationNext(d, sends, &payload)) break;
    RK_OC_ONLY(ConvOf(sends)->oc[kOcRunNext - kOcRunFirst] += clock64() - oc_out; ++oc_record;)
  }
#else
  DispatchThread(actor_type, state, msg_type, payload, ctx);
#endif
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
#if RK_BULK_INBOX
  // A large payload runs from the block's inbox when it is free (bulk_copy.h).
  const bool plain = __builtin_expect((r.h.flags & kMailPlain) != 0, 0);
  const void* payload = plain ? InboxTake(static_cast<const u8*>(r.payload), r.h.size) : r.payload;
#else
  const void* payload = r.payload;
#endif
  const HandlerOutcome out = RunThreadHandler(sys, w.worker, w.out, w.sends, o.slot, o.state, o.type, o.index,
                                              r.h.type, r.h.sender, r.h.correlation, hlc, payload, run);
#if RK_BULK_INBOX
  if (plain) InboxRelease();
#endif
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
#if RK_CONV_RUNS_ON
  if (run != 0) {
    const ConvRun* c = ConvOf(w.sends);
    if (c->ran != 0) {
      o.hlc = c->hlc;
      o.handled += c->ran;
    }
    RK_OC_ONLY(RK_OC_DIRECT(o.index, kOcRuns, 1); RK_OC_DIRECT(o.index, kOcRunRecords, c->begun);
               for (u32 k = kOcRunFirst; k < kOwnerCyclesPerActor; ++k) {
                 if (c->oc[k - kOcRunFirst] != 0) RK_OC_DIRECT(o.index, k, c->oc[k - kOcRunFirst]);
               })
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

}  // namespace detail
}  // namespace rk

#endif  // RINGKERNEL_DEVICE_RT_DISPATCH_CUH_
