// Copyright 2026 The RingKernel Authors.
//
// ask_slots.h: where a waiting Ask is registered, so that the thread that
// drains its reply hands the answer over, without a lock or a map on the
// Ask's own path.
//
// An Ask claims a slot (a bit in a small bitmap, one atomic operation; a
// thread tries the slot it had last first, so the lines its Asks touch stay
// the same ones) and gets a correlation that names the slot: bits 48..57
// hold the slot, bits 0..47 a sequence number that is never reused, so a
// reply's correlation says which slot it is for and whether that slot still
// waits for it. Each slot has one state word:
//
//   0                  free, or being claimed
//   c                  the Ask with correlation c waits
//   c | kFilling       a drainer is writing c's answer into the slot
//   c | kFilled        the answer is there; the Ask takes it
//
// Transitions: the Ask stores c (it owns the slot from its claim); a drainer
// moves c → c|kFilling by compare-and-swap (a late or second reply for c, or
// one for a slot since withdrawn or reused, fails it and is late); the
// drainer stores c|kFilled with release; the Ask, seeing it (acquire), moves
// the answer out, stores 0 and frees the bit. An Ask that gives up moves
// c → 0 by compare-and-swap; if that fails, a drainer has the slot, and the
// answer stands: the Ask waits for kFilled and takes it. So an answer is
// delivered to its own Ask exactly once, or counted late, never given to
// another Ask. An Ask may claim with memory of its own (Direct: a typed
// Ask's result); the drainer that moved c → c|kFilling may write there
// until it stores kFilled, and no one else ever does. The Ask's own path
// touches its slot's lines and one bitmap word; while every slot is taken
// Claim returns 0, and the caller waits for one to come free.
//
// The ThreadSanitizer test (tests/ask_slots_tsan_test.cc) races claims,
// answers, late and duplicate answers and withdrawals.
#ifndef RINGKERNEL_RUNTIME_ASK_SLOTS_H_
#define RINGKERNEL_RUNTIME_ASK_SLOTS_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <utility>

namespace rk::internal {

// Where an Ask wants an answer of one kind put (AskSlots::FillWith passes it
// to whoever makes the answer): its type, its size and the Ask's own
// memory. `dest` null: nowhere. The memory is the Ask's until FillWith
// returns.
struct AskDirect {
  void* dest = nullptr;
  uint32_t type = 0;
  uint32_t size = 0;
};

template <class Answer>
class AskSlots {
 public:
  static constexpr uint32_t kSlotBits = 10;
  static constexpr uint32_t kSlots = (1u << kSlotBits) - 1;  // the last slot number means "not a slot"
  static constexpr int kSlotShift = 48;
  static constexpr uint64_t kSeqMask = (uint64_t{1} << kSlotShift) - 1;
  static constexpr uint64_t kFilling = uint64_t{1} << 62;
  static constexpr uint64_t kFilled = uint64_t{1} << 63;

  using Direct = AskDirect;

  AskSlots() : slots_(new Slot[kSlots]) {}
  AskSlots(const AskSlots&) = delete;
  AskSlots& operator=(const AskSlots&) = delete;

  // The correlation of a new Ask with sequence number `seq` (1 or more; the
  // low 48 bits are used), registered in a slot of its own; 0 if every slot
  // is taken. `*hint` is the caller's slot of last time (any value at first).
  // `direct` goes with the slot (stored before the slot is published).
  uint64_t Claim(uint64_t seq, uint32_t* hint, const Direct& direct = {}) {
    const uint32_t start = *hint < kSlots ? *hint : 0;
    for (uint32_t k = 0; k < kSlots; ++k) {
      uint32_t s = start + k;
      if (s >= kSlots) s -= kSlots;
      std::atomic<uint64_t>& word = used_[s / 64];
      const uint64_t bit = uint64_t{1} << (s % 64);
      if ((word.load(std::memory_order_relaxed) & bit) != 0) continue;
      if ((word.fetch_or(bit, std::memory_order_acquire) & bit) != 0) continue;
      const uint64_t c = (uint64_t{s} << kSlotShift) | (seq & kSeqMask);
      slots_[s].direct = direct;
      slots_[s].state.store(c, std::memory_order_release);
      *hint = s;
      return c;
    }
    return 0;
  }

  // Asks for the lines a Claim starting at `hint` touches (its bitmap word
  // and slot) ahead of it: a prefetch, nothing else.
  void PrefetchClaim(uint32_t hint) const {
    const uint32_t s = hint < kSlots ? hint : 0;
    __builtin_prefetch(&used_[s / 64], 1);
    __builtin_prefetch(&slots_[s], 1);
  }
  // The same for the rest of `c`'s slot (its answer), which a Take reads.
  void PrefetchAnswer(uint64_t c) const {
    const char* slot = reinterpret_cast<const char*>(&slots_[SlotOf(c)]);
    for (size_t at = 64; at < sizeof(Slot); at += 64) __builtin_prefetch(slot + at, 1);
  }
  // Whether `c` names a slot (rather than an Ask registered elsewhere).
  static bool InSlot(uint64_t c) { return c != 0 && SlotOf(c) < kSlots; }

  // Whether the Ask with correlation `c` still waits for its answer.
  bool Waiting(uint64_t c) const {
    return InSlot(c) && slots_[SlotOf(c)].state.load(std::memory_order_acquire) == c;
  }

  // Hands `answer` to the Ask with correlation `c`; false if no Ask waits for
  // it (a late or second answer), and then `answer` is left as it was.
  bool Fill(uint64_t c, Answer&& answer) {
    return FillWith(c, [&](const Direct&) { return std::move(answer); });
  }

  // As Fill, with the answer made by `make(direct)` (the Direct the Ask
  // claimed with) once this call holds the slot: only then may `make` write
  // to `direct.dest`, which the Ask does not leave before kFilled. False,
  // without calling `make`, if no Ask waits for `c`.
  template <class Make>
  bool FillWith(uint64_t c, Make&& make) {
    if (!InSlot(c)) return false;
    Slot& slot = slots_[SlotOf(c)];
    uint64_t expect = c;
    if (!slot.state.compare_exchange_strong(expect, c | kFilling, std::memory_order_acquire,
                                            std::memory_order_relaxed)) {
      return false;
    }
    slot.answer = make(static_cast<const Direct&>(slot.direct));
    slot.state.store(c | kFilled, std::memory_order_release);
    return true;
  }

  // Whether the answer of the Ask with correlation `c` has come.
  bool Filled(uint64_t c) const {
    return slots_[SlotOf(c)].state.load(std::memory_order_acquire) == (c | kFilled);
  }

  // The answer, once Filled(c); the slot is free again.
  Answer Take(uint64_t c) {
    Slot& slot = slots_[SlotOf(c)];
    Answer a = std::move(slot.answer);
    slot.answer = Answer();
    Free(c);
    return a;
  }

  // The Ask with correlation `c` stops waiting. True if no answer was being
  // handed over (the slot is free again); false if one was, and then the
  // answer stands: wait for Filled(c) and Take it.
  bool Withdraw(uint64_t c) {
    uint64_t expect = c;
    if (!slots_[SlotOf(c)].state.compare_exchange_strong(expect, 0, std::memory_order_acq_rel,
                                                         std::memory_order_relaxed)) {
      return false;
    }
    ReleaseBit(SlotOf(c));
    return true;
  }

 private:
  struct alignas(64) Slot {
    std::atomic<uint64_t> state{0};
    Direct direct{};
    Answer answer{};
  };

  static uint32_t SlotOf(uint64_t c) { return static_cast<uint32_t>((c >> kSlotShift) & ((1u << kSlotBits) - 1)); }

  void Free(uint64_t c) {
    slots_[SlotOf(c)].state.store(0, std::memory_order_relaxed);
    ReleaseBit(SlotOf(c));
  }
  // Release: the slot's last use (its answer moved out, its state cleared)
  // happens before the next claim of the bit.
  void ReleaseBit(uint32_t s) { used_[s / 64].fetch_and(~(uint64_t{1} << (s % 64)), std::memory_order_release); }

  std::unique_ptr<Slot[]> slots_;
  std::atomic<uint64_t> used_[(kSlots + 63) / 64] = {};
};

}  // namespace rk::internal

#endif  // RINGKERNEL_RUNTIME_ASK_SLOTS_H_
