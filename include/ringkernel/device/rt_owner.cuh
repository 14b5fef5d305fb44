// Copyright 2026 The RingKernel Authors.
//
// rt_owner.cuh: an owner thread's queues: its actor's mailbox and channels
// polled and served (ServeMailbox, the spin after messages), and the host
// messages handed over to it (ServeDirect). Part of the worker's device code
// (rt_worker.cuh has the paths through a worker and the owner loop's rule
// for hand-overs).
#ifndef RINGKERNEL_DEVICE_RT_OWNER_CUH_
#define RINGKERNEL_DEVICE_RT_OWNER_CUH_

#include "ringkernel/device/rt_dispatch.cuh"

namespace rk {
namespace detail {

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
// The spin took the hand-overs it saw itself (ServeMailbox's take_direct);
// kHotTookAny: it handled at least one. Read and cleared by the owner loop,
// which takes no other hand-over in that iteration.
constexpr u32 kHotTook = 0x800u;
constexpr u32 kHotTookAny = 0x1000u;
__device__ __forceinline__ bool IsHot(const OwnedActor& o) { return (o.hot & kHotCalls) != 0; }

// Empty polls in a row after which an owner writes its counters back and
// hands consumed slots to producers.
constexpr u32 kQuietPolls = 4;

__device__ u32 ServeDirect(WorkerThread& w, OwnedActor& o, DirectSlot* d, u32 tail);

// Takes and handles up to batch_max messages from `o`'s mailbox. Returns how
// many; sets *block when the message at the head needs the whole block (it
// is left there), and *retried when its handler asked for it again later
// (ctx.retry_later: it stays at the head). `resident`: `o` stays in registers until the next call
// (else its head is released before it is dropped). `take_direct`: this
// queue is the actor's only one (no channel open or looked for), so a spin
// that ends for a hand-over takes the entries it saw itself (kHotTook): its
// last poll, just before, found the queue empty at its head, and an entry
// is taken only once that head has passed the entry's mark (ServeDirect).
__device__ u32 ServeMailbox(WorkerThread& w, OwnedActor& o, DirectSlot* direct, bool resident, bool take_direct,
                            bool* block, bool* retried) {
  const SystemParams* sys = w.sys;
  const u64 capacity = u64{1} << o.log2;
  u32 n = 0;
  u32 spins = 0;  // empty polls in a row (in all, outside a conversation)
  u32 spun = 0;   // empty polls in this call
  u32 stored = 0;  // n when the counters last went back to the actor's slot
  u32 ran_out = 0;  // kHotRanOut: the short spin ran out; kHotLong: the long one did
  bool cut = false;  // the spin ended for a hand-over
  u32 took = 0;      // kHotTook (| kHotTookAny): the spin took it itself
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
#ifdef RK_ASK_STAMPS
    const u64 poll_ns = GlobalTimerNs();
#endif
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
      // message is handed over to it: that is taken here when the mailbox
      // is the actor's only queue (take_direct), else once this returns.
      if (resident && IsHot(o)) {
        const u32 spin_max = (o.hot & kHotLong) != 0 ? kLongSpinPolls : kHotSpinPolls;
        // The hand-over ring's head and tail in one shared atomic (none:
        // both 0).
        const u64 direct_ht = direct != nullptr ? SlotGetPair(&direct->head) : 0ull;
        const u32 direct_tail = static_cast<u32>(direct_ht >> 32);
        if (direct_tail != static_cast<u32>(direct_ht)) {
          // A hand-over soon after a spin ran out: a conversation too.
          if ((o.hot & kHotRanOut) != 0) o.hot = (o.hot & ~kHotRanOut) | kHotLong;
          cut = true;
#ifdef RK_ASK_STAMPS
          w.cut_ns = GlobalTimerNs();
          w.cut_poll_ns = poll_ns;
#endif
          RK_OC_ONLY(w.cut_cyc = clock64();)
          // The mailbox is the only queue and was just found empty: the
          // entries seen are taken here (those whose marks the head has
          // passed), without the way back through the owner loop (about
          // 0.25 µs of an Ask, bench/NOTES.md, session 38). Once: an entry
          // handed back (retry_later, a dead letter that found the host
          // ring full) or waiting for its mark waits for a later iteration.
          // (A record taken in this call may have announced a channel.)
          if (take_direct && o.look == 0) {
            if (n != stored) {
              StoreOwned(o);
              stored = n;
            }
            RK_OC_ONLY(w.cut_ret = w.cut_call = clock64();)
            took = kHotTook | (ServeDirect(w, o, direct, direct_tail) != 0 ? kHotTookAny : 0u);
          }
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
#if RK_CONV_RUNS_ON
    // In a conversation, or in a stream (a record was taken before this one
    // in this call), the handler's call may run the records that follow
    // this one as they come (ConvRun): only a small K2K record of a
    // resident actor's, with room before producers get slots back.
    ConvRun* conv = nullptr;
    const bool talking = (o.hot & kHotLong) != 0;
    if (resident && (talking || n != 0) && (r.h.flags & (kMailIngress | kMailVoid | kMailPlain)) == 0 &&
        r.h.size <= 4 * kMailWideWords && spun < kSpinCallPolls) {
      const u64 quarter = capacity / 4;
      const u64 since = o.head - o.released;
      conv = quarter > since + 1 ? ConvOf(w.sends) : nullptr;
      if (conv != nullptr) {
        u64 max = quarter - since - 1;
        if (sys->batch_max - n - 1 < max) max = sys->batch_max - n - 1;
        conv->buf = w.buf;
        conv->box = o.box;
        conv->direct = direct;
        conv->slot = o.slot;
        conv->pos = o.head + 1;
        conv->log2 = o.log2;
        conv->slot_bytes = o.slot_bytes;
        conv->inline_words = o.inline_words;
        conv->type = r.h.type;
        conv->max = static_cast<u32>(max);
        conv->begun = conv->ran = conv->retry_next = 0;
        // Each wait of a conversation has the long spin's polls; a stream's
        // run waits only for what is left of the call's short spin.
        conv->wait_polls = talking ? kLongSpinPolls : (IsHot(o) && spins < kHotSpinPolls ? kHotSpinPolls - spins : 0u);
        conv->spin_left = kSpinCallPolls - spun;
        conv->spun = conv->ran_out = 0;
        RK_OC_ONLY(for (u32 k = 0; k < kOwnerCyclesPerActor - kOcRunFirst; ++k) conv->oc[k] = 0;)
        conv->handled = o.handled;
        conv->sent = o.sent;
        conv->send_full = o.send_full;
        conv->send_no_actor = o.send_no_actor;
        conv->send_other = o.send_other;
        staged = 1;
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
#if RK_CONV_RUNS_ON
    if (conv != nullptr) {
      ran = conv->ran;
      retry_next = conv->retry_next;
      spun += conv->spun;
      // A wait of the run that used its polls: this call's next empty poll
      // ends it, as the spin's own would.
      if (conv->ran_out) spins = (o.hot & kHotLong) != 0 ? kLongSpinPolls : kHotSpinPolls;
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
  o.hot = (calls != 0 ? flags | calls : 0) | (cut ? kHotCut : 0u) | took;
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
  RK_OC_ONLY(if (cut && took == 0) w.cut_ret = clock64();)
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


// Takes the messages the poller handed over in `d` before `tail` (a tail of
// the slot the owner read), if any, and handles them in order. Only after
// the messages queued before them (see the top of rt_worker.cuh and the owner
// loop): an entry waits until the mailbox head (`o` is the mailbox) has
// passed its mark, the mailbox tail the poller read after the record.
// Returns how many.
__device__ u32 ServeDirect(WorkerThread& w, OwnedActor& o, DirectSlot* d, u32 tail) {
  u32 head = SlotGet(&d->head);
  if (tail == head) return 0;
#ifdef RK_ASK_STAMPS
  const u64 seen = GlobalTimerNs();
#endif
  RK_OC_ONLY({
    const long long look = clock64();
    if (w.cut_cyc != 0 && w.cut_ret >= w.cut_cyc && w.cut_call >= w.cut_ret) {
      RK_OC_DIRECT(o.index, kOcCuts, 1);
      RK_OC_DIRECT(o.index, kOcCutOut, w.cut_ret - w.cut_cyc);
      RK_OC_DIRECT(o.index, kOcCutLoop, w.cut_call - w.cut_ret);
      RK_OC_DIRECT(o.index, kOcCutLook, look - w.cut_call);
    }
    w.cut_cyc = 0;
  })
  u32 n = 0;
  RK_OC_ONLY(long long oc_last = 0;)
  for (; head != tail; ++head) {
    RK_OC_ONLY(const long long oc0 = clock64();)
    __threadfence_block();
    DirectEntry* e = &d->e[head % kDirectDepth];
    MailRecord r;
    const SlotPair128 sc = SlotGet128(&e->size);  // size and type, correlation
    const SlotPair128 hm = SlotGet128(&e->hlc);   // hlc, mark
    const u64 st = sc.lo;
    r.h.correlation = sc.hi;
    r.h.hlc = hm.lo;
    const u64 mark = hm.hi;
    // A K2K message reserved before this one came is not taken yet (its
    // sender may still be writing it): the entry waits for a later look.
    // (Tested after the entry's reads, so that they go together.)
    if (static_cast<i64>(o.head - mark) < 0) {
      RK_ORDER_EVENT(kOrderDirectWait, w.worker, tail - head, o.index, head, 0u);
      break;
    }
    r.h.size = static_cast<u32>(st);
    r.h.type = static_cast<u32>(st >> 32);
    r.h.sender = kHostActorValue;
    r.h.flags = 0;
    // The payload four words at a time (w.buf is 16-byte aligned).
    const u32 words = (r.h.size + 3) / 4;
    for (u32 i = 0; i < words; i += 4) {
      const SlotPair128 v = SlotGet128(&e->payload[i]);
      reinterpret_cast<u64*>(w.buf + i)[0] = v.lo;
      reinterpret_cast<u64*>(w.buf + i)[1] = v.hi;
    }
    r.payload = reinterpret_cast<const u8*>(w.buf);
    RK_ASK_STAMP(r.h.correlation, kStampTaken, GlobalTimerNs());
    RK_ASK_STAMP(r.h.correlation, kStampDirectSeen, seen);
    RK_ASK_STAMP(r.h.correlation, kStampSpinCut, w.cut_ns);
    RK_ASK_STAMP(r.h.correlation, kStampSpinPoll, w.cut_poll_ns);
    RK_OC_ONLY(const long long oc1 = clock64();)
    RK_OC_ADD(kOcDirect, 1);
    RK_OC_ADD(kOcDirectCopy, oc1 - oc0);
    MarkRunning(w, RunningEntry(o.index, r.h.type));
    // ctx.retry_later: the entry stays, and is handled again later.
    const Handled handled = HandleOne<true>(w, o, r);
    RK_OC_ONLY(const long long oc2 = clock64();)
    RK_OC_ADD(kOcDirectHandle, oc2 - oc1);
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
    RK_OC_ONLY(if (head + 1 != tail) RK_OC_DIRECT(o.index, kOcDirectAfter, clock64() - oc2);)
    RK_OC_ONLY(if (head + 1 == tail) oc_last = oc2;)
  }
  o.hot = (o.hot & ~kHotCalls) | 64;
  o.quiet = 0;
  if (o.failed) SlotSet(&d->failed, 1);
  StoreOwned(o);
  RK_OC_ONLY(if (oc_last != 0) RK_OC_DIRECT(o.index, kOcDirectAfter, clock64() - oc_last);)
  return n;
}

}  // namespace detail
}  // namespace rk

#endif  // RINGKERNEL_DEVICE_RT_OWNER_CUH_
