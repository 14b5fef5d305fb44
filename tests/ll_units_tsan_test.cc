// Copyright 2026 The RingKernel Authors.
//
// The variable-length form of the host → worker rings (ll_ring.h: positions
// in units of kLlUnitWords words, a record as many units as it needs, skip
// records at the ring's end) driven by host threads under ThreadSanitizer:
// producer threads reserve with LlTryReserveUnits and write with
// LlWriteSkip and LlWriteRecord — the code System::Send runs — and one
// consumer reads with LlTryReadUnits, which follows the same rules as the
// GPU poller's window (rt_worker.cuh), and releases units with LlRelease.
//
// Records name their producer and sequence number and carry payloads of
// every size from 0 to the maximum, so the consumer proves that nothing was
// lost, duplicated, reordered per producer or torn, and that skips run
// exactly to the ring's end.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "ringkernel/device/ll_ring.h"

namespace rk {
namespace {

class UnitRing {
 public:
  UnitRing(u32 capacity_log2, u32 max_payload, u64 start) : capacity_log2_(capacity_log2), max_payload_(max_payload) {
    const u64 bytes = AlignUp(LlRingBytes(capacity_log2, kLlUnitWords), kLineBytes);
    memory_ = static_cast<u8*>(std::aligned_alloc(kLineBytes, bytes));
    std::memset(memory_, 0, bytes);
    header_ = reinterpret_cast<LlRingHeader*>(memory_);
    header_->capacity_log2 = capacity_log2;
    header_->slot_words = kLlUnitWords;
    header_->max_payload = max_payload;
    header_->head.value = start;
    tail_.value = start;
    cached_head_.value = start;
  }
  ~UnitRing() { std::free(memory_); }
  UnitRing(const UnitRing&) = delete;
  UnitRing& operator=(const UnitRing&) = delete;

  u64* slots() const { return reinterpret_cast<u64*>(memory_ + kLlSlotsOffset); }
  u64* Unit(u64 pos) const { return LlSlot(slots(), kLlUnitWords, capacity_log2_, pos); }
  u32 Flag(u64 pos) const { return LlFlag(pos, capacity_log2_); }
  u64 capacity() const { return u64{1} << capacity_log2_; }
  u32 log2() const { return capacity_log2_; }
  u32 max_payload() const { return max_payload_; }

  // As System::Send writes: reserve, the skip if any, then the record.
  // Returns the record's first unit (any u64, ~0 included: positions wrap),
  // or nothing when the ring is full.
  std::optional<u64> TryWrite(const LlHeader& h, const void* payload, u64* reserved_from = nullptr) {
    u64 pos;
    u32 skip;
    if (!LlTryReserveUnits(&tail_.value, &cached_head_.value, &header_->head.value, capacity_log2_,
                           LlRecordUnits(h.size), &pos, &skip)) {
      return std::nullopt;
    }
    if (reserved_from != nullptr) *reserved_from = pos;
    if (skip != 0) LlWriteSkip(Unit(pos), Flag(pos), skip);
    pos += skip;
    LlWriteRecord(Unit(pos), Flag(pos), h, payload);
    return pos;
  }
  LlReadResult TryRead(u64 pos, LlHeader* h, void* payload, u32* units) const {
    return LlTryReadUnits(slots(), capacity_log2_, pos, max_payload_, h, payload, units);
  }
  void Release(u64 new_head) { LlRelease(header_, new_head); }
  u64 tail() const { return LoadAcquireGpu(&tail_.value); }
  u64 head() const { return LoadAcquireSys(&header_->head.value); }

 private:
  u32 capacity_log2_;
  u32 max_payload_;
  u8* memory_ = nullptr;
  LlRingHeader* header_ = nullptr;
  PaddedIndex tail_{};
  PaddedIndex cached_head_{};
};

u32 SizeOf(u32 producer, u64 seq, u32 max_payload) {
  return static_cast<u32>((seq * 37 + producer * 11) % (max_payload + 1));
}
u8 ByteOf(u32 producer, u64 seq, u32 i) { return static_cast<u8>(producer * 31 + seq * 7 + i * 5 + 3); }

LlHeader HeaderOf(u32 producer, u64 seq, u32 size) {
  LlHeader h{};
  h.type = 1 + static_cast<u32>(seq % 5);
  h.size = size;
  h.actor = producer;
  h.peer = static_cast<u32>(seq);
  h.correlation = seq | (u64{producer} << 48);
  h.hlc = ~seq;
  return h;
}

TEST(LlUnitsTest, RecordUnitsAndSkips) {
  EXPECT_EQ(kLlUnitWords, 16u);
  EXPECT_EQ(LlRecordUnits(0), 1u);     // 10 words
  EXPECT_EQ(LlRecordUnits(24), 1u);    // 16 words
  EXPECT_EQ(LlRecordUnits(25), 2u);    // 17 words
  EXPECT_EQ(LlRecordUnits(64), 2u);    // 26 words: a 64-byte message takes 256 bytes
  EXPECT_EQ(LlRecordUnits(88), 2u);    // 32 words
  EXPECT_EQ(LlRecordUnits(89), 3u);
  EXPECT_EQ(LlRecordUnits(4096), 65u);  // 1034 words
  // Capacity 16 units: a 3-unit record fits at 13, not at 14.
  EXPECT_EQ(LlSkipBefore(13, 3, 4), 0u);
  EXPECT_EQ(LlSkipBefore(14, 3, 4), 2u);
  EXPECT_EQ(LlSkipBefore(16 + 15, 3, 4), 1u);
  EXPECT_EQ(LlSkipBefore(32, 16, 4), 0u);
}

// Records of 3 units (100-byte payloads) in a ring of 8: the third would
// wrap, so a skip of 2 units goes before it and it starts the next lap; the
// reader sees the skip, then the record, with its bytes.
TEST(LlUnitsTest, ARecordThatWouldWrapStartsTheNextLapAfterASkip) {
  UnitRing ring(3, 128, 0);
  std::vector<u8> payload(100);
  for (u32 i = 0; i < payload.size(); ++i) payload[i] = static_cast<u8>(i * 7 + 1);
  ASSERT_EQ(LlRecordUnits(100), 3u);
  EXPECT_EQ(ring.TryWrite(HeaderOf(0, 0, 100), payload.data()), std::optional<u64>(0));
  EXPECT_EQ(ring.TryWrite(HeaderOf(0, 1, 100), payload.data()), std::optional<u64>(3));
  // 6 units used; the third needs 2 skipped and 3 more: 11 > 8.
  EXPECT_EQ(ring.TryWrite(HeaderOf(0, 2, 100), payload.data()), std::nullopt);
  EXPECT_EQ(ring.tail(), 6u) << "a failed reservation takes nothing";
  std::vector<u32> out(40);
  LlHeader h;
  u32 units = 0;
  ASSERT_EQ(ring.TryRead(0, &h, out.data(), &units), LlReadResult::kReady);
  EXPECT_EQ(units, 3u);
  ring.Release(3);
  // Now 3 are used and 2 + 3 more fit: the skip fills 6..7.
  u64 reserved = 0;
  EXPECT_EQ(ring.TryWrite(HeaderOf(0, 2, 100), payload.data(), &reserved), std::optional<u64>(8));
  EXPECT_EQ(reserved, 6u);
  EXPECT_EQ(ring.tail(), 11u);
  ASSERT_EQ(ring.TryRead(3, &h, out.data(), &units), LlReadResult::kReady);
  EXPECT_EQ(h.correlation, 1u);
  ASSERT_EQ(ring.TryRead(6, &h, out.data(), &units), LlReadResult::kReady);
  EXPECT_EQ(h.type, kLlSkipType);
  EXPECT_EQ(units, 2u);
  ASSERT_EQ(ring.TryRead(8, &h, out.data(), &units), LlReadResult::kReady);
  EXPECT_EQ(h.correlation, 2u);
  EXPECT_EQ(h.size, 100u);
  EXPECT_EQ(units, 3u);
  EXPECT_EQ(std::memcmp(out.data(), payload.data(), 100), 0);
  // Nothing at 11 yet: the words there still carry the first lap's flag.
  EXPECT_EQ(ring.TryRead(11, &h, out.data(), &units), LlReadResult::kNotReady);
}

// A skip that does not run to the ring's end, or a record that would wrap,
// is corrupt: the reader must not guess where the next record starts.
TEST(LlUnitsTest, ASkipOrRecordOfTheWrongLengthIsCorrupt) {
  UnitRing ring(3, 128, 0);
  LlWriteSkip(ring.Unit(5), ring.Flag(5), 2);  // 5 + 2 != 8
  LlHeader h;
  u32 units = 0;
  std::vector<u32> out(40);
  EXPECT_EQ(ring.TryRead(5, &h, out.data(), &units), LlReadResult::kCorrupt);
  std::vector<u8> payload(132, 1);
  LlWriteRecord(ring.Unit(6), ring.Flag(6), HeaderOf(0, 0, 100), payload.data());  // 3 units at 6 wrap
  EXPECT_EQ(ring.TryRead(6, &h, out.data(), &units), LlReadResult::kCorrupt);
  LlWriteRecord(ring.Unit(0), ring.Flag(0), HeaderOf(0, 0, 129), payload.data());  // over max_payload
  EXPECT_EQ(ring.TryRead(0, &h, out.data(), &units), LlReadResult::kCorrupt);
}

struct Watchdog {
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  std::atomic<bool> failed{false};
  bool Expired() const { return failed.load() || std::chrono::steady_clock::now() > deadline; }
};

// One plain word per unit position: the consumer marks each unit it has
// finished with (record or skip) before releasing it; a producer that
// reserves the unit a lap later checks the mark with a plain load. The
// protocol's release of `head` and acquire in the reservation order the two,
// so ThreadSanitizer reports a race if they are not (as in ll_ring_tsan_test).
struct UnitLog {
  u64 start = 0;
  std::vector<u64> done;
};

void Produce(UnitRing* ring, u32 producer, u64 count, UnitLog* log, Watchdog* watchdog, std::string* error) {
  std::vector<u8> data(ring->max_payload() + 4);
  for (u64 seq = 0; seq < count; ++seq) {
    const u32 size = SizeOf(producer, seq, ring->max_payload());
    const u32 misalign = static_cast<u32>(seq % 4);
    for (u32 i = 0; i < size; ++i) data[misalign + i] = ByteOf(producer, seq, i);
    u64 from = 0;
    std::optional<u64> written;
    while (!(written = ring->TryWrite(HeaderOf(producer, seq, size), data.data() + misalign, &from))) {
      if (watchdog->Expired()) {
        *error = "gave up: the ring stayed full";
        return;
      }
      std::this_thread::yield();
    }
    // Every unit reserved (skip and record) was consumed a lap ago.
    for (u64 u = from; u != *written + LlRecordUnits(size); ++u) {
      const u64 index = u - log->start;
      if (index >= log->done.size()) {
        *error = "unit " + std::to_string(u) + " beyond the run";
        watchdog->failed = true;
        return;
      }
      if (index >= ring->capacity() && log->done[index - ring->capacity()] != 1) {
        *error = "unit " + std::to_string(u) + " reused before the consumer finished with it";
        watchdog->failed = true;
        return;
      }
    }
  }
}

struct ConsumerResult {
  u64 records = 0;
  u64 skips = 0;
  u64 final_position = 0;
  std::vector<u64> next_seq;
  std::string error;
};

void Consume(UnitRing* ring, u64 start, u32 producers, u64 total, UnitLog* log, Watchdog* watchdog,
             ConsumerResult* result) {
  result->next_seq.assign(producers, 0);
  std::vector<u32> buffer(ring->max_payload() / 4 + 2);
  u64 pos = start;
  u64 released = start;
  auto fail = [&](const std::string& what) {
    result->error = "unit " + std::to_string(pos) + ": " + what;
    watchdog->failed = true;
  };
  while (result->records < total) {
    LlHeader h;
    u32 units = 0;
    const LlReadResult r = ring->TryRead(pos, &h, buffer.data(), &units);
    if (r == LlReadResult::kNotReady) {
      if (released != pos) {
        ring->Release(pos);
        released = pos;
      }
      if (watchdog->Expired()) return fail("gave up waiting");
      std::this_thread::yield();
      continue;
    }
    if (r != LlReadResult::kReady) return fail("reported corrupt");
    if (h.type == kLlSkipType) {
      if (((pos + units) & (ring->capacity() - 1)) != 0) return fail("a skip that does not end the lap");
      ++result->skips;
    } else {
      if (h.actor >= producers) return fail("unknown producer");
      const u64 seq = h.correlation & ((u64{1} << 48) - 1);
      if (seq != result->next_seq[h.actor]) return fail("out of order, lost or duplicated");
      const u32 size = SizeOf(h.actor, seq, ring->max_payload());
      const LlHeader want = HeaderOf(h.actor, seq, size);
      if (h.size != size || h.type != want.type || h.peer != want.peer || h.hlc != want.hlc) {
        return fail("header differs");
      }
      const u8* bytes = reinterpret_cast<const u8*>(buffer.data());
      for (u32 i = 0; i < size; ++i) {
        if (bytes[i] != ByteOf(h.actor, seq, i)) return fail("payload byte " + std::to_string(i) + " differs");
      }
      if (units != LlRecordUnits(size)) return fail("wrong unit count");
      ++result->next_seq[h.actor];
      ++result->records;
    }
    for (u32 u = 0; u < units; ++u) log->done[pos + u - log->start] = 1;
    pos += units;
    if (pos - released >= 8) {
      ring->Release(pos);
      released = pos;
    }
  }
  ring->Release(pos);
  result->final_position = pos;
}

void RunUnits(u32 capacity_log2, u32 max_payload, u64 start, u32 producers, u64 per_producer) {
  UnitRing ring(capacity_log2, max_payload, start);
  const u64 total = producers * per_producer;
  Watchdog watchdog;
  // At most (skip + record) units per record: capacity + largest each.
  UnitLog log{start, std::vector<u64>(total * (2 * LlRecordUnits(max_payload)) + ring.capacity(), 0)};
  ConsumerResult result;
  std::vector<std::string> errors(producers);
  std::thread consumer(Consume, &ring, start, producers, total, &log, &watchdog, &result);
  std::vector<std::thread> threads;
  for (u32 p = 0; p < producers; ++p) {
    threads.emplace_back(Produce, &ring, p, per_producer, &log, &watchdog, &errors[p]);
  }
  for (std::thread& t : threads) t.join();
  consumer.join();
  for (u32 p = 0; p < producers; ++p) EXPECT_EQ(errors[p], "") << "producer " << p;
  ASSERT_EQ(result.error, "");
  EXPECT_EQ(result.records, total);
  for (u32 p = 0; p < producers; ++p) EXPECT_EQ(result.next_seq[p], per_producer);
  EXPECT_GT(result.skips, 0u) << "sizes up to " << max_payload << " in " << ring.capacity()
                              << " units must need skips at the ring's end";
  EXPECT_EQ(ring.tail(), result.final_position);
  EXPECT_EQ(ring.head(), result.final_position);
}

TEST(LlUnitsTest, FourProducersSmallRingEveryRecordInOrderAndWhole) { RunUnits(5, 220, 0, 4, 3000); }

// Positions near 2^64: the tail, the head and the flags wrap.
TEST(LlUnitsTest, PositionsThatWrapAround64Bits) { RunUnits(6, 100, ~u64{0} - 500, 3, 2000); }

}  // namespace
}  // namespace rk
