// Copyright 2026 The RingKernel Authors.
//
// The device-memory mailbox (include/ringkernel/device/mailbox.h) driven by
// host threads under ThreadSanitizer: producer threads play the senders,
// one consumer thread plays the owning worker. The code under test is the
// exact header NVRTC compiles for the GPU; on the host its atomics are GCC
// builtins, so TSan checks every payload access against the protocol's
// release/acquire pairs.
//
// Each message says who sent it and its sequence number (the envelope's
// sender and correlation), and carries a payload of a size and content
// derived from both, so the consumer can prove that nothing was lost,
// duplicated, reordered per producer or torn.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "ringkernel/device/mailbox.h"

namespace rk {
namespace {

// A mailbox in zeroed, line-aligned memory, initialised before any thread
// touches it.
class TestMailbox {
 public:
  TestMailbox(u32 capacity_log2, u32 max_payload, u64 start) {
    slot_bytes_ = MailboxSlotBytes(max_payload);
    bytes_ = MailboxBytes(capacity_log2, slot_bytes_);
    const size_t rounded = AlignUp(bytes_, kLineBytes);
    memory_ = static_cast<u8*>(std::aligned_alloc(kLineBytes, rounded));
    std::memset(memory_, 0, rounded);
    box_ = reinterpret_cast<MailboxHeader*>(memory_);
    MailboxInit(box_, capacity_log2, slot_bytes_, start);
  }
  ~TestMailbox() { std::free(memory_); }
  TestMailbox(const TestMailbox&) = delete;
  TestMailbox& operator=(const TestMailbox&) = delete;

  MailboxHeader* box() const { return box_; }
  u64 bytes() const { return bytes_; }
  u32 slot_bytes() const { return slot_bytes_; }
  // Whether [p, p + n) lies inside the allocation.
  bool Contains(const void* p, u64 n) const {
    const u8* b = static_cast<const u8*>(p);
    return b >= memory_ && b + n <= memory_ + bytes_;
  }

 private:
  u8* memory_ = nullptr;
  MailboxHeader* box_ = nullptr;
  u64 bytes_ = 0;
  u32 slot_bytes_ = 0;
};

u32 PayloadSize(u32 producer, u64 seq, u32 max_payload) {
  return static_cast<u32>((seq * 13 + producer * 7) % (max_payload + 1));
}
u8 PayloadByte(u32 producer, u64 seq, u32 i) { return static_cast<u8>(producer * 31 + seq * 17 + i * 7 + (i >> 8)); }
u64 HlcOf(u32 producer, u64 seq) { return (u64{producer} << 40) ^ (seq * 0x9E3779B97F4A7C15ull); }

// Writes message `seq` of `producer` into `e` (everything but `seq`, which
// MailboxPublish stores).
void FillEnvelope(Envelope* e, u32 producer, u64 seq, u32 max_payload) {
  const u32 size = PayloadSize(producer, seq, max_payload);
  e->type = 1 + static_cast<u32>(seq % 5);
  e->size = size;
  e->sender = producer;
  e->flags = 0;
  e->correlation = seq;
  e->hlc = HlcOf(producer, seq);
  e->reserved = 0;
  u8* payload = EnvelopePayload(e);
  for (u32 i = 0; i < size; ++i) payload[i] = PayloadByte(producer, seq, i);
}

// "" if `e` is message `seq` of `producer`, intact; else what is wrong.
std::string CheckEnvelope(const Envelope* e, u32 producer, u64 seq, u32 max_payload) {
  const u32 size = PayloadSize(producer, seq, max_payload);
  if (e->type != 1 + seq % 5) return "wrong type";
  if (e->size != size) return "wrong size";
  if (e->hlc != HlcOf(producer, seq)) return "wrong hlc";
  if (e->flags != 0 || e->reserved != 0) return "wrong flags";
  const u8* payload = EnvelopePayload(e);
  for (u32 i = 0; i < size; ++i) {
    if (payload[i] != PayloadByte(producer, seq, i)) return "payload byte " + std::to_string(i) + " differs";
  }
  return "";
}

// Bounds every wait of a stress run, so that a protocol bug that stops
// progress fails the test instead of hanging it; `failed` stops all threads
// once one of them found an error.
struct Watchdog {
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  std::atomic<bool> failed{false};
  bool Expired() const { return failed.load() || std::chrono::steady_clock::now() > deadline; }
};

struct ProducerStats {
  u64 full = 0;     // TryReserve returned 0
  u64 partial = 0;  // it returned fewer than asked for
  std::string error;
};

// Sends `count` messages, reserving 1..max_reserve positions at a time.
void Produce(MailboxHeader* box, u32 producer, u64 count, u32 max_payload, u32 max_reserve, Watchdog* watchdog,
             ProducerStats* stats) {
  std::mt19937 rng(producer * 7919 + 1);
  u64 seq = 0;
  while (seq < count) {
    const u32 want = static_cast<u32>(std::min<u64>(1 + rng() % max_reserve, count - seq));
    u64 first = 0;
    const u32 got = MailboxTryReserve(box, want, &first);
    if (got > want) {
      stats->error = "reserved more than asked for";
      watchdog->failed = true;
      return;
    }
    if (got == 0) {
      if (watchdog->Expired()) {
        stats->error = "gave up: the mailbox stayed full";
        return;
      }
      ++stats->full;
      std::this_thread::yield();
      continue;
    }
    if (got < want) ++stats->partial;
    for (u32 k = 0; k < got; ++k) {
      Envelope* e = MailboxSlot(box, first + k);
      FillEnvelope(e, producer, seq++, max_payload);
      MailboxPublish(e, first + k);
    }
  }
}

struct ConsumerStats {
  u64 consumed = 0;
  u64 final_position = 0;
  std::vector<u64> next_seq;  // per producer
  std::string error;
};

// The owner: consumes in position order until `total` messages arrived,
// releasing slots every `batch` messages (and whenever it has to wait).
void Consume(MailboxHeader* box, u64 start, u32 producers, u64 total, u32 max_payload, u32 batch, Watchdog* watchdog,
             ConsumerStats* stats) {
  stats->next_seq.assign(producers, 0);
  u64 pos = start;
  u32 pending = 0;
  while (stats->consumed < total) {
    const Envelope* e = MailboxPeek(box, pos);
    if (e == nullptr) {
      if (pending > 0) {
        MailboxRelease(box, pos);
        pending = 0;
      }
      if (watchdog->Expired()) {
        stats->error = "gave up waiting for position " + std::to_string(pos);
        watchdog->failed = true;
        return;
      }
      std::this_thread::yield();
      continue;
    }
    if (e->sender >= producers) {
      stats->error = "unknown sender " + std::to_string(e->sender) + " at position " + std::to_string(pos);
      watchdog->failed = true;
      return;
    }
    const u64 expected = stats->next_seq[e->sender];
    if (e->correlation != expected) {
      stats->error = "producer " + std::to_string(e->sender) + ": got message " + std::to_string(e->correlation) +
                     ", expected " + std::to_string(expected) + " (lost, duplicated or reordered)";
      watchdog->failed = true;
      return;
    }
    const std::string bad = CheckEnvelope(e, e->sender, expected, max_payload);
    if (!bad.empty()) {
      stats->error = "producer " + std::to_string(e->sender) + " message " + std::to_string(expected) + ": " + bad;
      watchdog->failed = true;
      return;
    }
    ++stats->next_seq[e->sender];
    ++stats->consumed;
    ++pos;
    if (++pending == batch) {
      MailboxRelease(box, pos);
      pending = 0;
    }
  }
  MailboxRelease(box, pos);
  stats->final_position = pos;
}

struct StressConfig {
  u32 capacity_log2;
  u32 max_payload;
  u64 start;
  u32 producers;
  u64 per_producer;
  u32 max_reserve;
  u32 batch;
};

// Runs producers against one consumer and checks the outcome.
void RunStress(const StressConfig& c) {
  TestMailbox mailbox(c.capacity_log2, c.max_payload, c.start);
  const u64 total = c.producers * c.per_producer;
  std::vector<ProducerStats> producer_stats(c.producers);
  ConsumerStats consumer_stats;
  Watchdog watchdog;
  std::thread consumer(Consume, mailbox.box(), c.start, c.producers, total, c.max_payload, c.batch, &watchdog,
                       &consumer_stats);
  std::vector<std::thread> producers;
  for (u32 p = 0; p < c.producers; ++p) {
    producers.emplace_back(Produce, mailbox.box(), p, c.per_producer, c.max_payload, c.max_reserve, &watchdog,
                           &producer_stats[p]);
  }
  for (std::thread& t : producers) t.join();
  consumer.join();

  for (u32 p = 0; p < c.producers; ++p) EXPECT_EQ(producer_stats[p].error, "") << "producer " << p;
  ASSERT_EQ(consumer_stats.error, "");
  EXPECT_EQ(consumer_stats.consumed, total);
  for (u32 p = 0; p < c.producers; ++p) EXPECT_EQ(consumer_stats.next_seq[p], c.per_producer) << "producer " << p;
  // Every position was used exactly once: head and tail both moved by the
  // total (modulo 2^64), and nothing is left.
  EXPECT_EQ(consumer_stats.final_position, c.start + total);
  EXPECT_EQ(LoadAcquireGpu(&mailbox.box()->tail.value), c.start + total);
  EXPECT_EQ(LoadAcquireGpu(&mailbox.box()->head.value), c.start + total);
  EXPECT_EQ(MailboxDepth(mailbox.box()), 0u);
}

TEST(MailboxTest, SlotBytesHoldEnvelopeAndPayload) {
  EXPECT_EQ(MailboxSlotBytes(0), 48u);
  EXPECT_EQ(MailboxSlotBytes(1), 64u);
  EXPECT_EQ(MailboxSlotBytes(16), 64u);
  EXPECT_EQ(MailboxSlotBytes(17), 80u);
  EXPECT_EQ(MailboxSlotBytes(4096), 4144u);
  for (u32 p = 0; p <= 600; ++p) {
    const u32 slot = MailboxSlotBytes(p);
    ASSERT_EQ(slot % 16, 0u) << p;  // every payload starts 16-byte aligned
    ASSERT_GE(slot, kEnvelopeBytes + p) << p;
    ASSERT_LT(slot, kEnvelopeBytes + p + 16) << p;
  }
  TestMailbox mailbox(3, 37, 0);
  EXPECT_EQ(mailbox.slot_bytes(), 96u);
  EXPECT_EQ(MailboxMaxPayload(mailbox.box()), 48u);
  EXPECT_EQ(MailboxCapacity(mailbox.box()), 8u);
  EXPECT_EQ(mailbox.bytes(), sizeof(MailboxHeader) + 8 * 96);
  // Slots tile the allocation, 16-byte aligned, and wrap with the position.
  for (u64 pos = 0; pos < 8; ++pos) {
    Envelope* e = MailboxSlot(mailbox.box(), pos);
    EXPECT_TRUE(mailbox.Contains(e, mailbox.slot_bytes())) << pos;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(EnvelopePayload(e)) % kMaxMessageAlignment, 0u);
    EXPECT_EQ(MailboxSlot(mailbox.box(), pos + 8), e);
    EXPECT_EQ(MailboxSlot(mailbox.box(), pos + 8 * 1000003), e);
  }
  EXPECT_EQ(MailboxSlot(mailbox.box(), ~u64{0}), MailboxSlot(mailbox.box(), 7));
}

TEST(MailboxTest, FullMailboxIsReportedAndNeverOverwritten) {
  constexpr u64 kStart = 1000;
  constexpr u32 kMax = 40;
  TestMailbox mailbox(4, kMax, kStart);  // 16 slots
  MailboxHeader* box = mailbox.box();

  // Fill without consuming: exactly the capacity is accepted.
  u64 accepted = 0;
  for (;;) {
    u64 pos = 0;
    if (MailboxTryReserve(box, 1, &pos) == 0) break;
    ASSERT_EQ(pos, kStart + accepted);
    Envelope* e = MailboxSlot(box, pos);
    FillEnvelope(e, 0, accepted, kMax);
    MailboxPublish(e, pos);
    ASSERT_LE(++accepted, 100u) << "a full mailbox kept accepting";
  }
  EXPECT_EQ(accepted, 16u);
  EXPECT_EQ(MailboxDepth(box), 16u);
  u64 unused = 12345;
  EXPECT_EQ(MailboxTryReserve(box, 5, &unused), 0u);
  EXPECT_EQ(unused, 12345u) << "a refused reservation must not report a position";

  // The owner takes three; a request for five gets the three free slots.
  for (u64 i = 0; i < 3; ++i) {
    const Envelope* e = MailboxPeek(box, kStart + i);
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(CheckEnvelope(e, 0, i, kMax), "");
  }
  MailboxRelease(box, kStart + 3);
  u64 first = 0;
  ASSERT_EQ(MailboxTryReserve(box, 5, &first), 3u);
  EXPECT_EQ(first, kStart + 16);
  for (u64 k = 0; k < 3; ++k) {
    Envelope* e = MailboxSlot(box, first + k);
    FillEnvelope(e, 1, k, kMax);
    MailboxPublish(e, first + k);
  }
  EXPECT_EQ(MailboxTryReserve(box, 1, &unused), 0u);

  // Drain: the 13 old messages are intact, then the 3 new ones.
  for (u64 i = 3; i < 16; ++i) {
    const Envelope* e = MailboxPeek(box, kStart + i);
    ASSERT_NE(e, nullptr) << i;
    EXPECT_EQ(e->sender, 0u);
    EXPECT_EQ(e->correlation, i);
    EXPECT_EQ(CheckEnvelope(e, 0, i, kMax), "") << i;
  }
  for (u64 k = 0; k < 3; ++k) {
    const Envelope* e = MailboxPeek(box, kStart + 16 + k);
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->sender, 1u);
    EXPECT_EQ(CheckEnvelope(e, 1, k, kMax), "") << k;
  }
  EXPECT_EQ(MailboxPeek(box, kStart + 19), nullptr);
  MailboxRelease(box, kStart + 19);
  EXPECT_EQ(MailboxDepth(box), 0u);
}

TEST(MailboxTest, PartialReservations) {
  TestMailbox mailbox(3, 8, 0);  // 8 slots
  u64 first = 0;
  EXPECT_EQ(MailboxTryReserve(mailbox.box(), 5, &first), 5u);
  EXPECT_EQ(first, 0u);
  EXPECT_EQ(MailboxTryReserve(mailbox.box(), 5, &first), 3u);
  EXPECT_EQ(first, 5u);
  EXPECT_EQ(MailboxTryReserve(mailbox.box(), 1, &first), 0u);
  EXPECT_EQ(MailboxDepth(mailbox.box()), 8u);

  TestMailbox big_request(3, 8, 77);
  EXPECT_EQ(MailboxTryReserve(big_request.box(), 100, &first), 8u);
  EXPECT_EQ(first, 77u);
}

TEST(MailboxTest, ConsumerWaitsForTheNextPositionAndIgnoresStaleLaps) {
  constexpr u32 kMax = 16;
  TestMailbox mailbox(2, kMax, 50);  // 4 slots
  MailboxHeader* box = mailbox.box();
  // Fresh slots hold the previous lap's sequence: nothing is ready.
  for (u64 pos = 50; pos < 54; ++pos) EXPECT_EQ(MailboxPeek(box, pos), nullptr);

  u64 first = 0;
  ASSERT_EQ(MailboxTryReserve(box, 2, &first), 2u);
  // Publishing the second position does not make the first ready; the
  // owner never skips ahead.
  FillEnvelope(MailboxSlot(box, 51), 0, 1, kMax);
  MailboxPublish(MailboxSlot(box, 51), 51);
  EXPECT_EQ(MailboxPeek(box, 50), nullptr);
  EXPECT_NE(MailboxPeek(box, 51), nullptr);
  FillEnvelope(MailboxSlot(box, 50), 0, 0, kMax);
  MailboxPublish(MailboxSlot(box, 50), 50);
  ASSERT_NE(MailboxPeek(box, 50), nullptr);
  MailboxRelease(box, 52);

  // A slot that holds a message of the previous lap is not ready for the
  // position of this lap that maps to it.
  EXPECT_EQ(MailboxSlot(box, 54), MailboxSlot(box, 50));
  EXPECT_EQ(MailboxPeek(box, 54), nullptr);
  EXPECT_EQ(MailboxPeek(box, 55), nullptr);
}

TEST(MailboxTest, ManyProducersOneConsumer) {
  RunStress({.capacity_log2 = 6,
             .max_payload = 100,
             .start = 0,
             .producers = 6,
             .per_producer = 20000,
             .max_reserve = 4,
             .batch = 5});
}

TEST(MailboxTest, PositionsWrapAtTwoToTheSixtyFour) {
  // Starts 1000 positions before the wrap, so that both the positions and
  // the slot index wrap while producers race.
  RunStress({.capacity_log2 = 4,
             .max_payload = 33,
             .start = ~u64{0} - 999,
             .producers = 4,
             .per_producer = 1500,
             .max_reserve = 3,
             .batch = 3});
  // And a start half a lap before the wrap: the last slot and slot 0 meet
  // there.
  RunStress({.capacity_log2 = 4,
             .max_payload = 33,
             .start = ~u64{0} - 7,
             .producers = 4,
             .per_producer = 500,
             .max_reserve = 2,
             .batch = 1});
}

TEST(MailboxTest, TinyCapacityUnderHeavyContention) {
  RunStress({.capacity_log2 = 1,
             .max_payload = 24,
             .start = 3,
             .producers = 8,
             .per_producer = 5000,
             .max_reserve = 3,
             .batch = 1});
}

TEST(MailboxTest, LargePayloadsFillTheirSlotsExactly) {
  // Payloads of every size up to the slot's maximum, with slots whose size
  // is not a power of two: a write past a slot would corrupt a neighbour.
  RunStress({.capacity_log2 = 3,
             .max_payload = MailboxSlotBytes(1000) - kEnvelopeBytes,
             .start = 5,
             .producers = 3,
             .per_producer = 1200,
             .max_reserve = 8,
             .batch = 2});
}

}  // namespace
}  // namespace rk
