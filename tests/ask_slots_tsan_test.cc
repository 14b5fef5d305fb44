// Copyright 2026 The RingKernel Authors.
//
// The slots where waiting Asks are registered (runtime/ask_slots.h), driven
// by host threads under ThreadSanitizer as SystemImpl::Ask and the drains of
// the rings back drive them: askers claim a slot, put their correlation on a
// "wire" (the GPU, here a queue), wait for the answer, and give up at
// random; drainers hand answers over, some of them twice and some after the
// Ask gave up.
//
// Test goals: an answer reaches the Ask whose correlation it carries, and
// that Ask only, exactly once, with every byte the drainer wrote (the
// answer's string is plain memory: ThreadSanitizer reports a hand-over that
// does not order it), or copied into the memory the Ask claimed with, which
// nothing writes once the Ask gave up; an answer for an Ask that gave up, a second answer and
// one for a slot since reused are refused (counted late by the caller);
// every Ask ends answered or withdrawn; claims never hand one slot to two
// Asks; all slots are free at the end.
#include <atomic>
#include <chrono>
#include <cstring>
#include <cstdint>
#include <deque>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/ask_slots.h"

namespace rk::internal {
namespace {

struct Answer {
  uint64_t correlation = 0;
  std::string text;
  bool copied = false;  // the text went to the Ask's Direct memory instead
};
using Slots = AskSlots<Answer>;

std::string TextFor(uint64_t c) { return "answer to " + std::to_string(c) + std::string(40, 'x'); }

// What a drainer does (SortLocked's way): the answer's text copied into the
// Ask's own memory when it claimed with some, else carried in the answer.
bool Give(Slots& slots, uint64_t c) {
  return slots.FillWith(c, [&](const Slots::Direct& d) {
    const std::string text = TextFor(c);
    if (d.dest != nullptr && text.size() <= d.size) {
      std::memcpy(d.dest, text.data(), text.size());
      return Answer{c, "", true};
    }
    return Answer{c, text, false};
  });
}

TEST(AskSlotsTest, ClaimsNameTheirSlotAndSequenceUntilEverySlotIsTaken) {
  Slots slots;
  std::set<uint64_t> slot_numbers;
  std::vector<uint64_t> claimed;
  uint32_t hint = 0;
  for (uint64_t seq = 1; seq <= Slots::kSlots; ++seq) {
    const uint64_t c = slots.Claim(seq, &hint);
    ASSERT_NE(c, 0u) << "slot " << seq << " of " << Slots::kSlots;
    EXPECT_TRUE(Slots::InSlot(c));
    EXPECT_EQ(c & Slots::kSeqMask, seq);
    EXPECT_TRUE(slot_numbers.insert(c >> Slots::kSlotShift).second) << "one slot claimed twice";
    EXPECT_TRUE(slots.Waiting(c));
    EXPECT_FALSE(slots.Filled(c));
    claimed.push_back(c);
  }
  EXPECT_EQ(slots.Claim(Slots::kSlots + 1, &hint), 0u) << "every slot is taken";
  // A correlation whose slot field is the last number names no slot.
  EXPECT_FALSE(Slots::InSlot((uint64_t{Slots::kSlots} << Slots::kSlotShift) | 5));
  EXPECT_FALSE(Slots::InSlot(0));
  // One withdrawn: the next claim gets that slot.
  const uint64_t freed = claimed[517];
  ASSERT_TRUE(slots.Withdraw(freed));
  EXPECT_FALSE(slots.Waiting(freed));
  const uint64_t again = slots.Claim(5000, &hint);
  ASSERT_NE(again, 0u);
  EXPECT_EQ(again >> Slots::kSlotShift, freed >> Slots::kSlotShift);
  EXPECT_EQ(again & Slots::kSeqMask, 5000u);
}

TEST(AskSlotsTest, AnAnswerForAWithdrawnOrReusedSlotIsRefusedAndTheNewAskGetsOnlyItsOwn) {
  Slots slots;
  uint32_t hint = 0;
  const uint64_t first = slots.Claim(1, &hint);
  ASSERT_TRUE(slots.Withdraw(first));
  EXPECT_FALSE(slots.Fill(first, Answer{first, TextFor(first)})) << "the Ask gave up";
  const uint64_t second = slots.Claim(2, &hint);
  ASSERT_EQ(second >> Slots::kSlotShift, first >> Slots::kSlotShift) << "the thread's slot of last time";
  Answer stale{first, TextFor(first)};
  EXPECT_FALSE(slots.Fill(first, std::move(stale))) << "an answer for the slot's earlier Ask";
  EXPECT_EQ(stale.text, TextFor(first)) << "a refused answer is left as it was";
  EXPECT_FALSE(slots.Filled(second));
  ASSERT_TRUE(slots.Fill(second, Answer{second, TextFor(second)}));
  EXPECT_FALSE(slots.Fill(second, Answer{second, "again"})) << "a second answer";
  EXPECT_FALSE(slots.Waiting(second));
  ASSERT_TRUE(slots.Filled(second));
  EXPECT_FALSE(slots.Withdraw(second)) << "an answer that came stands";
  const Answer a = slots.Take(second);
  EXPECT_EQ(a.correlation, second);
  EXPECT_EQ(a.text, TextFor(second));
  EXPECT_FALSE(slots.Fill(second, Answer{second, "late"})) << "after the Ask took its answer";
}

TEST(AskSlotsTest, ConcurrentAsksEachGetTheirOwnAnswerOnceOrGiveUpAndNothingIsDeliveredTwice) {
  constexpr int kAskers = 6;
  constexpr int kDrainers = 2;
  constexpr int kAsksEach = 2000;
  Slots slots;
  std::mutex wire_mu;  // the GPU: correlations in, answers out
  std::deque<uint64_t> wire;
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> next_seq{1};
  std::atomic<uint64_t> fills_ok{0}, fills_refused{0};
  std::atomic<uint64_t> answered{0}, gave_up{0}, wrong{0};
  std::mutex drain_mu;  // out_mu_: fills are made under it, as SortLocked does

  std::vector<std::thread> drainers;
  for (int d = 0; d < kDrainers; ++d) {
    drainers.emplace_back([&, d] {
      std::mt19937 rng(100 + d);
      std::vector<uint64_t> later;  // answers held back: they come after the Ask may have given up
      for (;;) {
        uint64_t c = 0;
        {
          std::lock_guard<std::mutex> lock(wire_mu);
          if (!wire.empty()) {
            c = wire.front();
            wire.pop_front();
          }
        }
        if (c == 0) {
          if (stop.load(std::memory_order_acquire)) break;
          // Nothing new: the answers held back come now (the Asks that
          // wait for them without giving up would otherwise wait for ever).
          std::lock_guard<std::mutex> lock(drain_mu);
          for (uint64_t l : later) (Give(slots, l) ? fills_ok : fills_refused).fetch_add(1);
          later.clear();
          std::this_thread::yield();
          continue;
        }
        const int r = static_cast<int>(rng() % 16);
        if (r == 0) {
          later.push_back(c);
          continue;
        }
        const int times = r == 1 ? 2 : 1;  // a duplicate now and then
        for (int t = 0; t < times; ++t) {
          std::lock_guard<std::mutex> lock(drain_mu);
          if (Give(slots, c)) {
            fills_ok.fetch_add(1);
          } else {
            fills_refused.fetch_add(1);
          }
        }
        if (later.size() > 8) {
          std::lock_guard<std::mutex> lock(drain_mu);
          for (uint64_t l : later) (Give(slots, l) ? fills_ok : fills_refused).fetch_add(1);
          later.clear();
        }
      }
      std::lock_guard<std::mutex> lock(drain_mu);
      for (uint64_t l : later) (Give(slots, l) ? fills_ok : fills_refused).fetch_add(1);
    });
  }
  std::vector<std::thread> askers;
  for (int a = 0; a < kAskers; ++a) {
    askers.emplace_back([&, a] {
      std::mt19937 rng(a);
      uint32_t hint = 0;
      // Half the askers give the drainers memory of their own for the
      // answer (as a typed Ask does): it must be written only while the
      // Ask waits, and then whole.
      const bool direct = a % 2 == 0;
      char mine[96];  // room for any TextFor
      for (int i = 0; i < kAsksEach; ++i) {
        std::memset(mine, '?', sizeof(mine));
        const uint64_t c = slots.Claim(next_seq.fetch_add(1), &hint,
                                       direct ? Slots::Direct{mine, 0, sizeof(mine)} : Slots::Direct{});
        if (c == 0) {
          wrong.fetch_add(1);
          continue;
        }
        {
          std::lock_guard<std::mutex> lock(wire_mu);
          wire.push_back(c);
        }
        // Patience: none at all, a little, or until the answer comes.
        const int patience = static_cast<int>(rng() % 3) == 0 ? static_cast<int>(rng() % 50) : 1 << 30;
        bool done = false;
        for (int spin = 0; spin < patience; ++spin) {
          if (slots.Filled(c)) {
            done = true;
            break;
          }
          std::this_thread::yield();
        }
        // Giving up without the drainers' lock: the slot's state decides.
        if (!done && slots.Withdraw(c)) {
          gave_up.fetch_add(1);
          if (std::string(mine, sizeof(mine)) != std::string(sizeof(mine), '?')) wrong.fetch_add(1);
          continue;
        }
        while (!slots.Filled(c)) std::this_thread::yield();  // a drainer had it: the answer stands
        const Answer got = slots.Take(c);
        const std::string text = TextFor(c);
        if (got.correlation != c || got.copied != direct) wrong.fetch_add(1);
        if (direct ? std::string(mine, text.size()) != text || !got.text.empty() : got.text != text) {
          wrong.fetch_add(1);
        }
        answered.fetch_add(1);
      }
    });
  }
  for (std::thread& t : askers) t.join();
  stop.store(true, std::memory_order_release);
  for (std::thread& t : drainers) t.join();

  EXPECT_EQ(wrong.load(), 0u) << "an Ask got another's answer, or no slot";
  EXPECT_EQ(answered.load() + gave_up.load(), uint64_t{kAskers} * kAsksEach);
  EXPECT_EQ(fills_ok.load(), answered.load()) << "every answer handed over was taken, once";
  EXPECT_GT(gave_up.load(), 0u) << "the test gave up on none: it proves nothing about giving up";
  EXPECT_GT(fills_refused.load(), 0u) << "no answer was late or a duplicate: the test proves nothing about them";
  // All slots free again.
  uint32_t hint = 0;
  for (uint32_t k = 0; k < Slots::kSlots; ++k) ASSERT_NE(slots.Claim(k + 1, &hint), 0u) << "slot " << k << " leaked";
}

}  // namespace
}  // namespace rk::internal
