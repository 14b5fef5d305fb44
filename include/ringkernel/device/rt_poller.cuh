// Copyright 2026 The RingKernel Authors.
//
// rt_poller.cuh: warp 0 of a worker, the host → worker ring's reader: the
// window, records handed over to owners or forwarded into mailboxes, and
// records whose writer stopped in the middle (holes). Part of the worker's
// device code (rt_worker.cuh has the paths through a worker).
#ifndef RINGKERNEL_DEVICE_RT_POLLER_CUH_
#define RINGKERNEL_DEVICE_RT_POLLER_CUH_

#include "ringkernel/device/rt_dispatch.cuh"
#include "ringkernel/device/ll_ring.h"

namespace rk {
namespace detail {

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
  u32 quiet_words;     // the quiet poll's width (LoadWindowStart)
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

// The first ring.quiet_words words of the window only (the rest read as
// not written): what a quiet ring's poll loads. Two units (kQuietWords),
// or one after a lone record that fitted in one was handed over from such a
// read: a read over the bus takes longer the more it reads (some 0.15 µs a
// unit, bench/NOTES.md, session 17), and a conversation's next request is
// most likely the size of its last. A record that does not fit is read
// again whole (ServeHostRing) and puts the width back to two units.
constexpr u32 kQuietWords = 32;
__device__ __forceinline__ void LoadWindowStart(const HostRing& ring, Window* win) {
  const u32 lane = LaneId();
#pragma unroll
  for (u32 k = 0; k < kWindowLoads; ++k) win->v[k][0] = win->v[k][1] = 0;
  if (2 * lane < ring.quiet_words) {
    LoadRelaxedSysPair(HostWord(ring, ring.head, 2 * lane), &win->v[0][0], &win->v[0][1]);
  }
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

// Lane 0: the mark of an entry for the record just read — the tail of the
// mailbox `box` (the slot's, read after its `actor` and a block fence; 0
// while its owner has not loaded it), read after the record (its address
// comes from the record's words). Its load is issued among the poller's
// checks, after the slot's reads (which the address waits for), and waited
// for only where the mark is stored (PutDirectHeader), after the payload's.
__device__ __forceinline__ u64 LoadMark(u64 box) {
  return box != 0 ? LoadRelaxedGpu(&reinterpret_cast<MailboxHeader*>(box)->tail.value) : 0;
}

// Lane 0: a hand-over entry's fields besides the payload.
__device__ __forceinline__ void PutDirectHeader(const LlHeader& h, u64 mark, DirectEntry* e) {
  SlotSet128(&e->size, static_cast<u64>(h.size) | static_cast<u64>(h.type) << 32, h.correlation);
  SlotSet128(&e->hlc, h.hlc, mark);
}

// Copies the record at window word `base` into entry `e` of a hand-over
// ring: each lane stores the payload words its window holds (the caller
// checked that the window holds the whole record).
__device__ __forceinline__ void PutDirect(const Window& win, u32 base, const LlHeader& h, u64 mark, DirectEntry* e) {
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
  if (lane == 0) PutDirectHeader(h, mark, e);
}

// The times an `Ask`'s record passed the poller's steps, stamped with the
// hand-over (RK_ASK_STAMPS builds set them; others leave them out).
struct PollerTimes {
#ifdef RK_ASK_STAMPS
  u64 poll, header_in, record_in, checked, put;
#endif
};

// Lane 0, after every lane's stores of entry `dtail` and the warp's
// __threadfence_block and __syncwarp: publishes the entry, and counts it for
// the drain (Quiescent: handed over, not yet taken).
__device__ __forceinline__ void PublishDirect(const WorkerThread& w, DirectSlot* slot, u32 dtail, const LlHeader& h,
                                              u32 trace_word, const PollerTimes& t) {
  SlotSet(&slot->tail, dtail + 1);
  RK_ORDER_EVENT(kOrderPutDirect, w.worker, 0, h.actor, dtail, trace_word);
  atomicAdd(reinterpret_cast<unsigned long long*>(&w.sys->worker_stats[w.worker].handed), 1ull);
  RK_ASK_STAMP(h.correlation, kStampPollBegan, t.poll);
  RK_ASK_STAMP(h.correlation, kStampHandedOver, GlobalTimerNs());
  RK_ASK_STAMP(h.correlation, kStampHeaderIn, t.header_in);
  RK_ASK_STAMP(h.correlation, kStampRecordIn, t.record_in);
  RK_ASK_STAMP(h.correlation, kStampChecked, t.checked);
  RK_ASK_STAMP(h.correlation, kStampPut, t.put);
  (void)trace_word;
  (void)t;
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
    u64 mark = 0;  // lane 0: the entry's (LoadMark)
    if (slot != nullptr) {
      u32 head = 0, pending = 0, actor = 0, type = 0, failed = 0, eligible = 0, ok = 0;
      if (lane == 0) {
        // 64-bit reads of the fields (pairs of neighbours).
        // `actor` first: its owner wrote the type, the failed flag, the
        // handler mask and the mailbox before it, with a block fence
        // between.
        const u64 pa = SlotGetPair(&slot->pending);
        __threadfence_block();
        const u64 box = SlotGet64(&slot->box);
        const u64 ht = SlotGetPair(&slot->head);
        const u64 tf = SlotGetPair(&slot->actor_type);
        const u64 thread_types = SlotGet64(&slot->thread_types);
        mark = LoadMark(box);
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
      PutDirect(win, base, h, mark, &slot->e[dtail % kDirectDepth]);
#ifdef RK_ASK_STAMPS
      const u64 put = GlobalTimerNs();
#endif
      // Every lane's stores before lane 0 publishes the entry.
      __threadfence_block();
      __syncwarp();
      if (lane == 0) {
        PollerTimes t;
#ifdef RK_ASK_STAMPS
        t = PollerTimes{now, header_in, record_in, checked, put};
#endif
        PublishDirect(w, slot, dtail, h, RK_ORDER_WORD(trace_word), t);
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

// The quiet poll's lone record, handed over in straight-line code: a small
// thread-handler message at the head, whole in the quiet read's
// ring.quiet_words words (lane l holds words 2l and 2l + 1), to one of the
// first actors whose owner can take it now. The same checks and the same
// hand-over as TakeRecords' (a record in order, the actor's host messages
// not in its mailbox, room in its ring), each read once, from the words
// where the lanes hold them (bench/NOTES.md, session 33: the relay itself costs
// some 0.5 µs over the floor's read; TakeRecords' general loop, window
// checks and second look took more). Returns false, having done nothing,
// whenever anything is otherwise (a record not whole, a skip, a corrupt
// header, an actor that is not ready or not eligible, a full ring): the
// caller then takes the window the general way, which decides as before.
// Records after this one are left for the next poll (a wide one).
__device__ __forceinline__ bool QuietHandOver(WorkerThread& w, HostRing& ring, const Window& win, DirectSlot* slots,
                                              u64 now, u32 size) {
  const SystemParams* sys = w.sys;
  const u32 lane = LaneId();
  const u32 words = (size + 3) / 4;
  const u32 record_words = kLlHeaderWords + words;
  if (record_words > ring.quiet_words || size > 4 * kDirectWords) return false;
  // Whole: each word carries the flag of its unit.
  {
    const u32 i = 2 * lane;
    const u32 f = LlFlag(ring.head + i / kLlUnitWords, ring.log2);
    const bool ok = (i >= record_words || LlWordFlag(win.v[0][0]) == f) &&
                    (i + 1 >= record_words || LlWordFlag(win.v[0][1]) == f);
    if (!__all_sync(0xFFFFFFFFu, ok)) return false;
  }
#ifdef RK_ASK_STAMPS
  const u64 header_in = GlobalTimerNs();
#endif
  // The header's words from the lanes that hold them (LlHeaderFromWords'
  // layout: type, size, actor, peer, aux, writer, correlation, hlc).
  LlHeader h;
  h.type = __shfl_sync(0xFFFFFFFFu, LlData(win.v[0][0]), 0);
  h.size = size;
  h.actor = __shfl_sync(0xFFFFFFFFu, LlData(win.v[0][0]), 1);
  h.peer = __shfl_sync(0xFFFFFFFFu, LlData(win.v[0][1]), 1);
  h.aux = 0;  // read only for a skip, which is not taken here
  h.writer = 0;
  h.correlation = static_cast<u64>(__shfl_sync(0xFFFFFFFFu, LlData(win.v[0][0]), 3)) |
                  static_cast<u64>(__shfl_sync(0xFFFFFFFFu, LlData(win.v[0][1]), 3)) << 32;
  h.hlc = static_cast<u64>(__shfl_sync(0xFFFFFFFFu, LlData(win.v[0][0]), 4)) |
          static_cast<u64>(__shfl_sync(0xFFFFFFFFu, LlData(win.v[0][1]), 4)) << 32;
  if (h.type == kLlSkipType || h.type >= kControlTypeBase || h.peer >= kDirectSlots) return false;
  const u32 runits = LlRecordExtent(h, ring.head, ring.log2, sys->max_payload);
  if (runits == 0) return false;
#ifdef RK_ASK_STAMPS
  const u64 record_in = GlobalTimerNs();
  u64 checked = 0;
#endif
  DirectSlot* slot = &slots[h.peer];
  u32 take = 0;  // lane 0: 1 + the entry's index when the hand-over may go ahead
  u64 mark = 0;  // lane 0: the entry's (LoadMark)
  if (lane == 0) {
    // TakeRecords' reads of the slot, in its order (`actor` first, then a
    // block fence, then the rest).
    const u64 pa = SlotGetPair(&slot->pending);
    __threadfence_block();
    const u64 box = SlotGet64(&slot->box);
    const u64 ht = SlotGetPair(&slot->head);
    const u64 tf = SlotGetPair(&slot->actor_type);
    const u64 thread_types = SlotGet64(&slot->thread_types);
    mark = LoadMark(box);
    const u32 head = static_cast<u32>(ht);
    const u32 tail = static_cast<u32>(ht >> 32);
    const bool eligible = static_cast<u32>(pa >> 32) == h.actor + 1 && static_cast<u32>(tf >> 32) == 0 &&
                          static_cast<u32>(pa) == 0 &&
                          (h.type < 64 ? (thread_types >> h.type) & 1
                                       : HandlerKindOf(static_cast<u32>(tf), h.type) == 1);
    take = eligible && tail - head < kDirectDepth ? 1 + tail : 0;
#ifdef RK_ASK_STAMPS
    checked = GlobalTimerNs();
#endif
  }
  take = __shfl_sync(0xFFFFFFFFu, take, 0);
  if (take == 0) return false;
  const u32 dtail = take - 1;
  DirectEntry* e = &slot->e[dtail % kDirectDepth];
  {
    // Payload word p is record word kLlHeaderWords + p: lane l's pair is
    // payload words 2l - 10 and 2l - 9 (a lone last word alone).
    const u32 i = 2 * lane;
    if (i >= kLlHeaderWords && i + 1 < record_words) {
      SlotSet64(reinterpret_cast<unsigned long long*>(&e->payload[i - kLlHeaderWords]),
                static_cast<u64>(LlData(win.v[0][0])) | static_cast<u64>(LlData(win.v[0][1])) << 32);
    } else if (i >= kLlHeaderWords && i < record_words) {
      SlotSet(&e->payload[i - kLlHeaderWords], LlData(win.v[0][0]));
    }
  }
  if (lane == 0) PutDirectHeader(h, mark, e);
#ifdef RK_ASK_STAMPS
  const u64 put = GlobalTimerNs();
#endif
#ifdef RK_ORDER_TRACE
  const u32 trace_word = WindowWord(win, kLlHeaderWords);
#endif
  // Every lane's stores before lane 0 publishes the entry.
  __threadfence_block();
  __syncwarp();
  if (lane == 0) {
    PollerTimes t;
#ifdef RK_ASK_STAMPS
    t = PollerTimes{now, header_in, record_in, checked, put};
#endif
    PublishDirect(w, slot, dtail, h, RK_ORDER_WORD(trace_word), t);
    atomicAdd(&sys->shared->ingress_messages.value, 1ull);
    LlStampUnusedUnits(const_cast<u64*>(LlSlot(ring.slots, kLlUnitWords, ring.log2, ring.head)), runits,
                       record_words, LlFlag(ring.head, ring.log2));
  }
  __syncwarp();
  ring.took_last = 1;
  ring.quiet_words = runits == 1 ? kLlUnitWords : kQuietWords;
  ring.head += runits;
  ring.last_record_ns = now;
  if (ring.head - ring.released >= kHostReleaseUnits) {
    if (lane == 0) LlRelease(ring.hdr, ring.head);
    ring.released = ring.head;
  }
  return true;
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
    // Quiet: the first ring.quiet_words words only, one 16-byte load from
    // each of a few lanes — the whole of a small record, which is then
    // taken from this read rather than a second trip over the bus.
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
    if (size_there && QuietHandOver(w, ring, win, slots, now, size)) return 1;
    // A record too large for that (or whose size is not written yet: the
    // loop below then finds it incomplete and the next poll reads again);
    // one larger than the read is read again whole.
    if (size_there && kLlHeaderWords + (size + 3) / 4 > ring.quiet_words) {
      LoadWindow(ring, &win);
      ring.quiet_words = kQuietWords;
    }
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

}  // namespace detail
}  // namespace rk

#endif  // RINGKERNEL_DEVICE_RT_POLLER_CUH_
