// Copyright 2026 The RingKernel Authors.
//
// ring_owner.h: one writer per host → worker ring while only one thread
// sends to that worker (internal to runtime/).
//
// A `Send` from a thread that alone writes a ring streams its record there
// (ll_ring.h, LlPlaceOwned / LlWriteOwned): no compare-and-swap, no read of
// a line the GPU polls, stores that bypass the CPU's caches. Where several
// threads write one ring they claim their records in the ring itself
// (LlTryClaimUnits), as before. A ring starts free; the first thread to send
// to it owns it; once a second thread sends to it, it is shared for good.
//
// Taking a ring from its owner never waits for the owner: a thread stopped
// mid-record (preempted, or in a debugger) holds up only its own record, as
// with shared rings. Before each record the owner publishes its intent — the
// place it is about to write — and only then looks whether it still owns
// the ring:
//
//   owner                                   taker
//   intent = place       (seqlock, below)   owner = kRevoking   (CAS)
//   compiler barrier                        membarrier()
//   if (owner == me) stream the record      adopt the intent:   (CAS)
//   else withdraw the intent   (CAS)          claim that place for the owner
//                                           floor = end of the owner's records
//                                           owner = kShared     (release)
//
// Linux's membarrier (private expedited) makes every running thread of the
// process execute a full barrier; as in writer_gate.h, it orders each side's
// store before its load. So either the owner's look came before its barrier
// (then its intent did too, and the taker sees it), or after (then the owner
// sees kRevoking and does not write as the owner). The intent is adopted or
// withdrawn, never both (one compare-and-swap on its sequence word each), and
// an adopted intent is written by its owner: the taker claims its units in
// the ring (LlClaimFor), so that other producers and the GPU see its extent
// before its stores land. The floor keeps every later producer's claims past
// the owner's records, some of which may not be visible yet (streamed stores
// are weakly ordered). A process barrier also drains every thread's
// write-combining buffers, so the owner's records before its barrier are
// visible once the call returns; one whose intent was withdrawn is visible
// because the withdrawal is a locked instruction.
//
// The owner's streamed stores are not ordered before its later stores, so
// two more places fence (FenceStreamed): an owner that finds it lost the ring
// fences before it writes anything else (its later records, claimed in order,
// must not become visible before its streamed ones: the GPU's hole rule
// relies on that, ll_ring.h LlHolePick); and a `Send` that finds the gate
// closing fences before it leaves the gate (Stop then reads the rings).
//
// The intent's sequence word is a seqlock: odd while the owner rewrites the
// place, even (and not zero) once it is complete; the taker adopts, or the
// owner withdraws, an even value by setting a bit. A taker that finds it odd
// waits for the few stores in between (an owner preempted right there holds
// the taker that long).
//
// Without membarrier (an old kernel, a sandbox that filters it) there are no
// owners: every ring is shared from the start.
//
//   RingOwners owners;
//   owners.Init(rings, /*enabled=*/gate.asymmetric());
//   const uint32_t me = gate.SlotTag();                   // 0: none
//   RingOwners::Mode mode = owners.Enter(r, me, ring, barrier);  // before the gate
//   if (gate.TryEnter(r)) {
//     while (!owners.TryWrite(r, me, &mode, ring, h, payload, barrier, gate_open)) ...  // full
//     gate.Leave(r);
//   }
#ifndef RINGKERNEL_RUNTIME_RING_OWNER_H_
#define RINGKERNEL_RUNTIME_RING_OWNER_H_

#include <atomic>
#include <cstdint>
#include <memory>

#include "ringkernel/device/ll_ring.h"

namespace rk {

// A spinning host thread's pause (the writers of the host rings, as they wait).
inline void CpuRelax() {
#if defined(__x86_64__)
  __builtin_ia32_pause();
#endif
}

// One host → worker ring as its producers see it: its slots and geometry
// (mapped), and the producers' hint and cached head (host memory).
struct RingRef {
  u64* slots;
  u32 log2;
  u32 max_payload;
  u64* hint;
  u64* cached_head;
  const u64* head;  // the consumer's
};

class RingOwners {
 public:
  // RingState::owner besides a writer's tag (1 ..).
  static constexpr uint32_t kFree = 0;
  static constexpr uint32_t kRevoking = 0xFFFFFFFEu;
  static constexpr uint32_t kShared = 0xFFFFFFFFu;

  // How a thread writes a ring: streamed, as its owner; or claimed in the
  // ring, shared.
  enum class Mode { kOwned, kShared };
  // What an owner's attempt at one record did.
  enum class Wrote {
    kWritten,   // the record is in the ring
    kFull,      // no room: nothing written
    kLost,      // the ring is no longer this thread's: nothing written, write it shared
  };

  // `enabled`: owners exist (the process barrier is available); else every
  // ring is shared.
  void Init(uint32_t rings, bool enabled) {
    rings_ = std::make_unique<RingState[]>(rings);
    if (!enabled) {
      for (uint32_t r = 0; r < rings; ++r) rings_[r].owner.store(kShared, std::memory_order_relaxed);
    }
  }

  // How the thread with tag `me` (0: none, from WriterGate::SlotTag) writes
  // ring `r`: takes it if it is free, takes it from another owner (making it
  // shared), or waits out a taker. `ring`: so that a taker can claim its
  // owner's intent. `barrier`: the process barrier.
  // Call it before entering the writer gate (a taker runs the barrier).
  template <class Barrier>
  Mode Enter(uint32_t r, uint32_t me, const RingRef& ring, Barrier&& barrier) {
    RingState& s = rings_[r];
    for (;;) {
      uint32_t o = s.owner.load(std::memory_order_acquire);
      if (o == kShared) return Mode::kShared;
      if (o == me && me != 0) return Mode::kOwned;
      if (o == kRevoking) {
        CpuRelax();  // a taker is claiming its owner's intent: a few stores
        continue;
      }
      if (o == kFree) {
        // The first writer owns it (a thread without a tag shares it). No
        // record was written, so there is no intent to adopt.
        if (s.owner.compare_exchange_strong(o, me != 0 ? me : kShared, std::memory_order_acq_rel)) {
          return me != 0 ? Mode::kOwned : Mode::kShared;
        }
        continue;
      }
      // Another thread's (or this thread's own, given up below): take it.
      if (!s.owner.compare_exchange_strong(o, kRevoking, std::memory_order_acq_rel)) continue;
      barrier();
      Revoke(s, ring);
      s.owner.store(kShared, std::memory_order_release);
      return Mode::kShared;
    }
  }

  // This thread (tag `me`) gives up its own ring: for a write that must be
  // claimed in order (fault injection: a writer paused mid-record).
  void GiveUp(uint32_t r, uint32_t me, const RingRef& ring) {
    RingState& s = rings_[r];
    uint32_t o = me;
    if (me == 0 || !s.owner.compare_exchange_strong(o, kRevoking, std::memory_order_acq_rel)) return;
    FenceStreamed();
    Revoke(s, ring);
    s.owner.store(kShared, std::memory_order_release);
  }

  // One attempt at writing record `h` to ring `r` as the thread with tag
  // `me`: streamed if *mode (from Enter) is kOwned, else claimed in the ring
  // past the floor (LlTryClaimUnits, LlWriteRecord); *mode becomes kShared
  // if the ring was taken from this thread meanwhile. False: the ring has no
  // room, nothing was written. Inside the writer gate: `gate_open()` says
  // whether it is still open (once it closes, Stop may read the rings, so an
  // owner's record is fenced before the writer leaves). `pause` (tests): run
  // by an owner after it saw it still owns the ring, before its stores;
  // `pos` (tests): where the record went.
  template <class Barrier, class GateOpen>
  bool TryWrite(uint32_t r, uint32_t me, Mode* mode, const RingRef& ring, const LlHeader& h, const void* payload,
                Barrier&& barrier, GateOpen&& gate_open, void (*pause)(void*) = nullptr, void* pause_arg = nullptr,
                u64* pos = nullptr) {
    if (*mode == Mode::kOwned) {
      switch (TryWriteOwned(r, me, ring, h, payload, pause, pause_arg, pos)) {
        case Wrote::kWritten:
          if (!Owns(r, me) || !gate_open()) FenceStreamed();
          return true;
        case Wrote::kFull:
          return false;
        case Wrote::kLost:
          *mode = Enter(r, me, ring, barrier);
          break;
      }
    }
    u64 at;
    if (!LlTryClaimUnits(ring.slots, ring.log2, ring.max_payload, ring.hint, ring.cached_head, ring.head, h.size,
                         &at, Floored(r), Floor(r))) {
      return false;
    }
    LlWriteRecord(LlSlot(ring.slots, kLlUnitWords, ring.log2, at), LlFlag(at, ring.log2), h, payload);
    if (pos != nullptr) *pos = at;
    return true;
  }

  // The owner `me` writes one record of ring `r` (LlPlaceOwned, then its
  // intent, then LlWriteOwned if it still owns the ring). Inside the writer
  // gate. On kLost nothing was written and the owner's streamed stores are
  // fenced: write the record shared (after Enter again).
  Wrote TryWriteOwned(uint32_t r, uint32_t me, const RingRef& ring, LlHeader h, const void* payload,
                      void (*pause)(void*) = nullptr, void* pause_arg = nullptr, u64* pos = nullptr) {
    RingState& s = rings_[r];
    u64 start;
    u32 pad;
    if (!LlPlaceOwned(ring.log2, ring.hint, ring.cached_head, ring.head, h.size, &start, &pad)) {
      // The writer waits for the reader now, and the reader may be waiting
      // for this thread's last records: make them visible. A ring taken
      // meanwhile is written shared (its hint is no longer this thread's
      // exact end, and a place found from it means nothing).
      FenceStreamed();
      return Owns(r, me) ? Wrote::kFull : Wrote::kLost;
    }
    // The intent: the sequence odd while its fields change, even after.
    // (Release stores, plain stores on x86: each field is ordered after the
    // odd value, so a taker that reads a new field sees the sequence move.)
    const u64 seq = s.seq.load(std::memory_order_relaxed);
    s.seq.store(seq + 1, std::memory_order_relaxed);
    s.start.store(start, std::memory_order_release);
    s.pad.store(pad, std::memory_order_release);
    s.size.store(h.size, std::memory_order_release);
    const u64 intent = seq + 2;
    s.seq.store(intent, std::memory_order_release);
    if (pos != nullptr) *pos = start + pad;
    // The taker's barrier orders the intent before this look (see the top).
    std::atomic_signal_fence(std::memory_order_seq_cst);
    h.writer = me;
    if (s.owner.load(std::memory_order_relaxed) == me) {
      if (pause != nullptr) pause(pause_arg);
      LlWriteOwned(ring.slots, ring.log2, ring.hint, start, pad, h, payload);
      return Wrote::kWritten;
    }
    // Taken from this thread: withdraw the intent, unless the taker adopted
    // it (then its place is claimed for this record, which goes there).
    u64 expected = intent;
    const bool withdrawn =
        s.seq.compare_exchange_strong(expected, intent | kWithdrawn, std::memory_order_acq_rel);
    if (!withdrawn) LlWriteOwned(ring.slots, ring.log2, ring.hint, start, pad, h, payload);
    FenceStreamed();
    return withdrawn ? Wrote::kLost : Wrote::kWritten;
  }

  // Whether the thread with tag `me` still owns ring `r` (an owner whose
  // ring was taken, or whose gate is closing, fences before it leaves).
  bool Owns(uint32_t r, uint32_t me) const { return rings_[r].owner.load(std::memory_order_relaxed) == me; }
  // Asks for the lines an owner's write to ring `r` touches (its owner and
  // its intent) ahead of it: a prefetch, nothing else.
  void Prefetch(uint32_t r) const {
    __builtin_prefetch(&rings_[r].owner);
    __builtin_prefetch(&rings_[r].seq, 1);
  }

  // No shared claim of ring `r` goes below Floor if Floored: the end of its
  // last owner's records (a ring shared from the start has none). Read after
  // Enter returned kShared.
  bool Floored(uint32_t r) const { return rings_[r].floored.load(std::memory_order_relaxed); }
  u64 Floor(uint32_t r) const { return rings_[r].floor.load(std::memory_order_relaxed); }

  // The owner's tag, kFree, kRevoking or kShared (tests and statistics).
  uint32_t OwnerOf(uint32_t r) const { return rings_[r].owner.load(std::memory_order_acquire); }

 private:
  static constexpr u64 kAdopted = u64{1} << 62;
  static constexpr u64 kWithdrawn = u64{1} << 63;

  struct alignas(64) RingState {
    std::atomic<uint32_t> owner{kFree};  // read by every Send to the ring
    alignas(64) std::atomic<u64> seq{0};  // the owner's intent (seqlock): written by the owner, adopted by a taker
    std::atomic<u64> start{0};
    std::atomic<u32> pad{0};
    std::atomic<u32> size{0};
    alignas(64) std::atomic<u64> floor{0};  // written once, by the taker
    std::atomic<bool> floored{false};
  };

  // The taker, after its barrier: adopts the owner's last intent (if the
  // owner has not withdrawn it) and sets the floor past the owner's records.
  static void Revoke(RingState& s, const RingRef& ring) {
    u64 end = __atomic_load_n(ring.hint, __ATOMIC_ACQUIRE);
    for (;;) {
      u64 seq = s.seq.load(std::memory_order_acquire);
      if (seq == 0 || (seq & (kWithdrawn | kAdopted)) != 0) break;  // nothing (more) to adopt
      if ((seq & 1) != 0) {
        CpuRelax();  // the owner is writing its intent
        continue;
      }
      // A field the owner rewrote after this sequence value makes the
      // compare-and-swap below fail (acquire: the odd value it follows is
      // then seen), so the fields adopted are the intent's.
      const u64 start = s.start.load(std::memory_order_acquire);
      const u32 pad = s.pad.load(std::memory_order_acquire);
      const u32 size = s.size.load(std::memory_order_acquire);
      if (!s.seq.compare_exchange_strong(seq, seq | kAdopted, std::memory_order_acq_rel)) continue;
      // Adopted: the owner writes this record here. Claim it for the owner.
      if (pad != 0) LlClaimFor(ring.slots, ring.log2, start, kLlSkipSize);
      LlClaimFor(ring.slots, ring.log2, start + pad, size);
      const u64 adopted_end = start + pad + LlRecordUnits(size);
      if (static_cast<int64_t>(adopted_end - end) > 0) end = adopted_end;
      break;
    }
    // After a withdrawal (a locked instruction after the owner's last
    // record) its hint is visible; after an adoption the adopted end is.
    const u64 hint_now = __atomic_load_n(ring.hint, __ATOMIC_ACQUIRE);
    if (static_cast<int64_t>(hint_now - end) > 0) end = hint_now;
    s.floor.store(end, std::memory_order_relaxed);
    s.floored.store(true, std::memory_order_relaxed);
    if (static_cast<int64_t>(end - hint_now) > 0) __atomic_store_n(ring.hint, end, __ATOMIC_RELAXED);
  }

  std::unique_ptr<RingState[]> rings_;
};

}  // namespace rk

#endif  // RINGKERNEL_RUNTIME_RING_OWNER_H_
