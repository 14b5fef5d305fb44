// Copyright 2026 The RingKernel Authors.
//
// The low-latency rings between host and GPU (include/ringkernel/device/
// ll_ring.h) driven by host threads under ThreadSanitizer: producer threads
// reserve with LlTryReserve (shared tail, shared cached head) and write
// records with LlWriteRecord — or, as a worker block's threads reserve in
// its ring to the host, first without reading the consumer's head
// (LlTryReserveUnits<CtaScope> with no head: a handler's reply) and then
// with it; one consumer thread reads them with
// LlTryReadRecord and gives slots back with LlRelease — the same code the
// host runtime and the kernel run on each side of both rings.
//
// Each record names its producer and sequence number (header `actor` and
// `correlation`) and carries a payload whose size (0 to the maximum, most
// not a multiple of 4) and bytes derive from both, written from source
// buffers at every alignment, so the consumer can prove that nothing was
// lost, duplicated, reordered per producer or torn.
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
#include "ringkernel/device/ll_ring.h"

namespace rk {
namespace {

// A ring in zeroed, line-aligned memory (as the runtime allocates it in
// mapped memory), with the producers' tail and cached head beside it.
class TestRing {
 public:
  // `worker_path`: reserve as the GPU's worker threads do (see TryReserve).
  TestRing(u32 capacity_log2, u32 max_payload, u64 start, bool worker_path = false)
      : capacity_log2_(capacity_log2),
        max_payload_(max_payload),
        slot_words_(LlSlotWords(max_payload)),
        worker_path_(worker_path) {
    bytes_ = LlRingBytes(capacity_log2, slot_words_);
    const size_t rounded = AlignUp(bytes_, kLineBytes);
    memory_ = static_cast<u8*>(std::aligned_alloc(kLineBytes, rounded));
    std::memset(memory_, 0, rounded);
    header_ = reinterpret_cast<LlRingHeader*>(memory_);
    header_->capacity_log2 = capacity_log2;
    header_->slot_words = slot_words_;
    header_->max_payload = max_payload;
    header_->head.value = start;
    tail_.value = start;
    cached_head_.value = start;
  }
  ~TestRing() { std::free(memory_); }
  TestRing(const TestRing&) = delete;
  TestRing& operator=(const TestRing&) = delete;

  u64* slots() const { return reinterpret_cast<u64*>(memory_ + kLlSlotsOffset); }
  u64* Slot(u64 pos) const { return LlSlot(slots(), slot_words_, capacity_log2_, pos); }
  u32 Flag(u64 pos) const { return LlFlag(pos, capacity_log2_); }
  u32 max_payload() const { return max_payload_; }
  u32 slot_words() const { return slot_words_; }
  u64 capacity() const { return u64{1} << capacity_log2_; }
  u64 bytes() const { return bytes_; }

  // The host's producers: one call that reads the consumer's head when the
  // cache says the ring is full. A worker's threads: the reply's inlined
  // attempt, which never reads the head, then the out-of-line one, which does.
  bool TryReserve(u64* pos) {
    if (!worker_path_) {
      return LlTryReserve(&tail_.value, &cached_head_.value, &header_->head.value, capacity_log2_, pos);
    }
    u32 skip = 0;
    if (LlTryReserveUnits<CtaScope>(&tail_.value, &cached_head_.value, nullptr, capacity_log2_, 1, pos, &skip)) {
      return skip == 0;
    }
    return LlTryReserve<CtaScope>(&tail_.value, &cached_head_.value, &header_->head.value, capacity_log2_, pos);
  }
  // The inlined attempt alone.
  bool TryReserveCachedOnly(u64* pos) {
    u32 skip = 0;
    return LlTryReserveUnits<CtaScope>(&tail_.value, &cached_head_.value, nullptr, capacity_log2_, 1, pos, &skip);
  }
  LlReadResult TryRead(u64 pos, LlHeader* h, void* payload) const {
    return LlTryReadRecord(Slot(pos), Flag(pos), max_payload_, h, payload);
  }
  void Release(u64 new_head) { LlRelease(header_, new_head); }

  u64 tail() const { return LoadAcquireGpu(&tail_.value); }
  u64 cached_head() const { return LoadAcquireGpu(&cached_head_.value); }
  u64 head() const { return LoadAcquireSys(&header_->head.value); }

 private:
  u32 capacity_log2_;
  u32 max_payload_;
  u32 slot_words_;
  bool worker_path_;
  u64 bytes_ = 0;
  u8* memory_ = nullptr;
  LlRingHeader* header_ = nullptr;
  PaddedIndex tail_{};         // producers' memory
  PaddedIndex cached_head_{};  // producers' memory
};

u32 PayloadSize(u32 producer, u64 seq, u32 max_payload) {
  return static_cast<u32>((seq * 11 + producer * 5) % (max_payload + 1));
}
u8 PayloadByte(u32 producer, u64 seq, u32 i) { return static_cast<u8>(producer * 29 + seq * 13 + i * 3 + 1); }

LlHeader HeaderFor(u32 producer, u64 seq, u32 size) {
  LlHeader h;
  h.type = 1 + static_cast<u32>(seq % 7);
  h.size = size;
  h.actor = producer;
  h.peer = ~producer;
  h.aux = static_cast<u32>(seq * 3);
  h.writer = static_cast<u32>(seq) ^ 0xA5A5A5A5u;
  h.correlation = seq | (u64{producer} << 48);
  h.hlc = seq * 0x9E3779B97F4A7C15ull + producer;
  return h;
}

// Writes record `seq` of `producer` at `pos`, its payload copied from a
// source buffer misaligned by `misalign` bytes (0..3).
void WriteRecord(TestRing& ring, u64 pos, u32 producer, u64 seq, u32 size, u32 misalign) {
  std::vector<u8> source(size + 8);
  u8* data = source.data() + misalign;
  for (u32 i = 0; i < size; ++i) data[i] = PayloadByte(producer, seq, i);
  LlWriteRecord(ring.Slot(pos), ring.Flag(pos), HeaderFor(producer, seq, size), data);
}

// "" if `h` and `payload` are record `seq` of `producer` of `size` bytes,
// zero-padded to whole words, and the word after them is untouched.
std::string CheckRecord(const LlHeader& h, const u32* payload, u32 producer, u64 seq, u32 size, u32 sentinel) {
  const LlHeader want = HeaderFor(producer, seq, size);
  if (h.type != want.type || h.size != want.size || h.actor != want.actor || h.peer != want.peer || h.aux != want.aux ||
      h.writer != want.writer || h.correlation != want.correlation || h.hlc != want.hlc) {
    return "header differs";
  }
  const u8* bytes = reinterpret_cast<const u8*>(payload);
  for (u32 i = 0; i < size; ++i) {
    if (bytes[i] != PayloadByte(producer, seq, i)) return "payload byte " + std::to_string(i) + " differs";
  }
  const u32 words = (size + 3) / 4;
  for (u32 i = size; i < 4 * words; ++i) {
    if (bytes[i] != 0) return "padding byte " + std::to_string(i) + " is not zero";
  }
  if (payload[words] != sentinel) return "the read wrote past the record's last word";
  return "";
}

constexpr u32 kSentinel = 0xDEADBEEFu;

struct Watchdog {
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  std::atomic<bool> failed{false};
  bool Expired() const { return failed.load() || std::chrono::steady_clock::now() > deadline; }
};

struct ProducerStats {
  u64 full = 0;
  std::string error;
};

// The ring's words are atomics on both sides, so ThreadSanitizer cannot see
// a slot overwritten too early. This log makes it visible: the consumer
// marks each position it has finished reading with a plain store, before
// releasing it, and the producer that reuses the slot one lap later checks
// that mark with a plain load before writing. The protocol promises that
// the first happens before the second (release of `head`, acquire of it,
// or of the cached head another producer refreshed); if it did not, TSan
// would report a race, and a missing mark would fail the test. Each entry
// is written once and read once.
struct ConsumedLog {
  u64 start = 0;
  std::vector<u64> done;  // by position - start; one 8-byte word each, so that TSan tracks each on its own
};

void Produce(TestRing* ring, u32 producer, u64 count, ConsumedLog* log, Watchdog* watchdog, ProducerStats* stats) {
  for (u64 seq = 0; seq < count; ++seq) {
    u64 pos = 0;
    while (!ring->TryReserve(&pos)) {
      if (watchdog->Expired()) {
        stats->error = "gave up: the ring stayed full";
        return;
      }
      ++stats->full;
      std::this_thread::yield();
    }
    const u64 index = pos - log->start;
    if (index >= log->done.size()) {
      stats->error = "reserved position " + std::to_string(pos) + " beyond the run";
      watchdog->failed = true;
      return;
    }
    if (index >= ring->capacity() && log->done[index - ring->capacity()] != 1) {
      stats->error = "position " + std::to_string(pos) + " reuses a slot whose record was not read yet";
      watchdog->failed = true;
      return;
    }
    WriteRecord(*ring, pos, producer, seq, PayloadSize(producer, seq, ring->max_payload()),
                static_cast<u32>((seq + producer) % 4));
  }
}

struct ConsumerStats {
  u64 consumed = 0;
  u64 not_ready = 0;
  u64 final_position = 0;
  std::vector<u64> next_seq;
  std::string error;
};

void Consume(TestRing* ring, u64 start, u32 producers, u64 total, u32 batch, ConsumedLog* log, Watchdog* watchdog,
             ConsumerStats* stats) {
  stats->next_seq.assign(producers, 0);
  std::vector<u32> buffer(ring->max_payload() / 4 + 2);
  u64 pos = start;
  u32 pending = 0;
  const auto fail = [&](const std::string& what) {
    stats->error = "position " + std::to_string(pos) + ": " + what;
    watchdog->failed = true;
  };
  while (stats->consumed < total) {
    std::fill(buffer.begin(), buffer.end(), kSentinel);
    LlHeader h;
    const LlReadResult r = ring->TryRead(pos, &h, buffer.data());
    if (r == LlReadResult::kNotReady) {
      ++stats->not_ready;
      if (pending > 0) {
        ring->Release(pos);
        pending = 0;
      }
      if (watchdog->Expired()) return fail("gave up waiting");
      std::this_thread::yield();
      continue;
    }
    if (r != LlReadResult::kReady) return fail("reported corrupt");
    if (h.actor >= producers) return fail("unknown producer " + std::to_string(h.actor));
    const u64 expected = stats->next_seq[h.actor];
    const u64 seq = h.correlation & ((u64{1} << 48) - 1);
    if (seq != expected) {
      return fail("producer " + std::to_string(h.actor) + ": got record " + std::to_string(seq) + ", expected " +
                  std::to_string(expected) + " (lost, duplicated or reordered)");
    }
    const std::string bad =
        CheckRecord(h, buffer.data(), h.actor, seq, PayloadSize(h.actor, seq, ring->max_payload()), kSentinel);
    if (!bad.empty())
      return fail("producer " + std::to_string(h.actor) + " record " + std::to_string(seq) + ": " + bad);
    ++stats->next_seq[h.actor];
    ++stats->consumed;
    log->done[pos - log->start] = 1;
    ++pos;
    if (++pending == batch) {
      ring->Release(pos);
      pending = 0;
    }
  }
  ring->Release(pos);
  stats->final_position = pos;
}

struct StressConfig {
  u32 capacity_log2;
  u32 max_payload;
  u64 start;
  u32 producers;
  u64 per_producer;
  u32 batch;
  bool worker_path = false;
};

void RunStress(const StressConfig& c) {
  TestRing ring(c.capacity_log2, c.max_payload, c.start, c.worker_path);
  const u64 total = c.producers * c.per_producer;
  Watchdog watchdog;
  std::vector<ProducerStats> producer_stats(c.producers);
  ConsumerStats consumer_stats;
  ConsumedLog log{c.start, std::vector<u64>(total, 0)};
  std::thread consumer(Consume, &ring, c.start, c.producers, total, c.batch, &log, &watchdog, &consumer_stats);
  std::vector<std::thread> producers;
  for (u32 p = 0; p < c.producers; ++p) {
    producers.emplace_back(Produce, &ring, p, c.per_producer, &log, &watchdog, &producer_stats[p]);
  }
  for (std::thread& t : producers) t.join();
  consumer.join();

  for (u32 p = 0; p < c.producers; ++p) EXPECT_EQ(producer_stats[p].error, "") << "producer " << p;
  ASSERT_EQ(consumer_stats.error, "");
  EXPECT_EQ(consumer_stats.consumed, total);
  for (u32 p = 0; p < c.producers; ++p) EXPECT_EQ(consumer_stats.next_seq[p], c.per_producer) << "producer " << p;
  EXPECT_EQ(consumer_stats.final_position, c.start + total);
  EXPECT_EQ(ring.tail(), c.start + total);
  EXPECT_EQ(ring.head(), c.start + total);
  // The cached head never runs ahead of the real one.
  EXPECT_LE(ring.cached_head() - c.start, total);
}

TEST(LlRingTest, SlotWordsAndFlags) {
  EXPECT_EQ(kLlHeaderWords, 10u);
  // A record of 10 + ceil(max_payload / 4) words gets 16 or 32 words, or a
  // multiple of 64 beyond that.
  EXPECT_EQ(LlSlotWords(0), 16u);       // 10 words
  EXPECT_EQ(LlSlotWords(24), 16u);      // 10 + 6
  EXPECT_EQ(LlSlotWords(25), 32u);      // 10 + 7
  EXPECT_EQ(LlSlotWords(88), 32u);      // 10 + 22
  EXPECT_EQ(LlSlotWords(89), 64u);      // 10 + 23
  EXPECT_EQ(LlSlotWords(216), 64u);     // 10 + 54
  EXPECT_EQ(LlSlotWords(217), 128u);    // 10 + 55
  EXPECT_EQ(LlSlotWords(4096), 1088u);  // 10 + 1024
  for (u32 p = 0; p <= 5000; ++p) {
    const u32 record = kLlHeaderWords + (p + 3) / 4;
    const u32 words = LlSlotWords(p);
    // The slot holds the record, and is the smallest of 16, 32, 64, 128,
    // 192, ... that does.
    ASSERT_GE(words, record) << p;
    if (words == 16) continue;
    ASSERT_GT(record, 16u) << p;
    if (words == 32) continue;
    ASSERT_GT(record, 32u) << p;
    ASSERT_EQ(words % 64, 0u) << p;
    ASSERT_LT(words, record + 64) << p;
  }
  EXPECT_EQ(LlRingBytes(3, 64), kLlSlotsOffset + 8 * 64 * 8);

  // Flags: never zero (zeroed memory is never a record), the same within a
  // lap, different from one lap to the next — also where the 31-bit lap
  // counter and the 64-bit position wrap.
  for (u32 log2 : {0u, 3u, 10u}) {
    for (u64 pos : {u64{0}, u64{12345}, (u64{1} << (31 + log2)) - 1, ~u64{0}}) {
      const u64 lap_start = pos & ~((u64{1} << log2) - 1);
      EXPECT_NE(LlFlag(pos, log2) & 0x80000000u, 0u);
      EXPECT_EQ(LlFlag(pos, log2), LlFlag(lap_start, log2));
      EXPECT_NE(LlFlag(pos, log2), LlFlag(lap_start + (u64{1} << log2), log2)) << pos << " log2 " << log2;
    }
  }
  EXPECT_EQ(LlWordFlag(LlWord(0x12345678u, 0x80000003u)), 0x80000003u);
  EXPECT_EQ(LlData(LlWord(0x12345678u, 0x80000003u)), 0x12345678u);
}

TEST(LlRingTest, RoundTripsEverySizeFromEveryAlignment) {
  constexpr u32 kMax = 77;
  TestRing ring(2, kMax, 0);
  std::vector<u32> buffer(kMax / 4 + 2);
  u64 pos = 0;
  for (u32 size = 0; size <= kMax; ++size) {
    for (u32 misalign = 0; misalign < 4; ++misalign) {
      u64 reserved = 0;
      ASSERT_TRUE(ring.TryReserve(&reserved));
      ASSERT_EQ(reserved, pos);
      const u64 seq = size * 4 + misalign;
      WriteRecord(ring, pos, 3, seq, size, misalign);
      std::fill(buffer.begin(), buffer.end(), kSentinel);
      LlHeader h;
      ASSERT_EQ(ring.TryRead(pos, &h, buffer.data()), LlReadResult::kReady) << "size " << size;
      EXPECT_EQ(CheckRecord(h, buffer.data(), 3, seq, size, kSentinel), "")
          << "size " << size << " misalign " << misalign;
      ++pos;
      ring.Release(pos);
    }
  }
}

TEST(LlRingTest, ZeroedAndStaleSlotsAreNotReady) {
  TestRing ring(2, 32, 0);
  LlHeader h;
  std::vector<u32> buffer(10);
  for (u64 pos = 0; pos < 4; ++pos) EXPECT_EQ(ring.TryRead(pos, &h, buffer.data()), LlReadResult::kNotReady);
  u64 pos = 0;
  ASSERT_TRUE(ring.TryReserve(&pos));
  WriteRecord(ring, pos, 0, 0, 20, 0);
  ASSERT_EQ(ring.TryRead(0, &h, buffer.data()), LlReadResult::kReady);
  // The same slot, one lap later: the old record does not count.
  EXPECT_EQ(ring.Slot(4), ring.Slot(0));
  EXPECT_EQ(ring.TryRead(4, &h, buffer.data()), LlReadResult::kNotReady);
}

TEST(LlRingTest, FullRingIsReportedAndNeverOverwritten) {
  constexpr u64 kStart = 500;
  constexpr u32 kMax = 30;
  TestRing ring(3, kMax, kStart);  // 8 slots
  for (u64 i = 0; i < 8; ++i) {
    u64 pos = 0;
    ASSERT_TRUE(ring.TryReserve(&pos)) << i;
    ASSERT_EQ(pos, kStart + i);
    WriteRecord(ring, pos, 0, i, PayloadSize(0, i, kMax), 1);
  }
  u64 pos = 0;
  EXPECT_FALSE(ring.TryReserve(&pos));
  EXPECT_FALSE(ring.TryReserve(&pos));
  EXPECT_EQ(ring.tail(), kStart + 8);
  EXPECT_EQ(ring.cached_head(), kStart);

  // The consumer reads two and releases them.
  std::vector<u32> buffer(kMax / 4 + 2);
  LlHeader h;
  for (u64 i = 0; i < 2; ++i) {
    std::fill(buffer.begin(), buffer.end(), kSentinel);
    ASSERT_EQ(ring.TryRead(kStart + i, &h, buffer.data()), LlReadResult::kReady);
    EXPECT_EQ(CheckRecord(h, buffer.data(), 0, i, PayloadSize(0, i, kMax), kSentinel), "");
  }
  ring.Release(kStart + 2);
  // The cached head is stale until a producer finds the ring full, then it
  // is refreshed from the consumer's head: two more fit, not three.
  EXPECT_EQ(ring.cached_head(), kStart);
  for (u64 i = 8; i < 10; ++i) {
    ASSERT_TRUE(ring.TryReserve(&pos)) << i;
    ASSERT_EQ(pos, kStart + i);
    WriteRecord(ring, pos, 0, i, PayloadSize(0, i, kMax), 2);
  }
  EXPECT_EQ(ring.cached_head(), kStart + 2);
  EXPECT_FALSE(ring.TryReserve(&pos));

  // Everything not yet read is intact, in order.
  for (u64 i = 2; i < 10; ++i) {
    std::fill(buffer.begin(), buffer.end(), kSentinel);
    ASSERT_EQ(ring.TryRead(kStart + i, &h, buffer.data()), LlReadResult::kReady) << i;
    EXPECT_EQ(CheckRecord(h, buffer.data(), 0, i, PayloadSize(0, i, kMax), kSentinel), "") << i;
  }
  EXPECT_EQ(ring.TryRead(kStart + 10, &h, buffer.data()), LlReadResult::kNotReady);
}

TEST(LlRingTest, CorruptSizeIsReported) {
  constexpr u32 kMax = 40;
  TestRing ring(1, kMax, 0);
  LlHeader h;
  std::vector<u32> buffer(kMax / 4 + 2, kSentinel);
  const auto write_header = [&](u64 pos, u32 size, u32 words) {
    LlHeader bad = HeaderFor(0, pos, 0);
    bad.size = size;
    u32 raw[kLlHeaderWords];
    std::memcpy(raw, &bad, sizeof(raw));
    for (u32 i = 0; i < words; ++i) StoreRelaxedSys(ring.Slot(pos) + i, LlWord(raw[i], ring.Flag(pos)));
  };
  // A complete header naming more than the maximum: corrupt.
  write_header(0, kMax + 1, kLlHeaderWords);
  EXPECT_EQ(ring.TryRead(0, &h, buffer.data()), LlReadResult::kCorrupt);
  write_header(1, 0xFFFFFFFFu, kLlHeaderWords);
  EXPECT_EQ(ring.TryRead(1, &h, buffer.data()), LlReadResult::kCorrupt);
  EXPECT_EQ(buffer[0], kSentinel) << "a corrupt record must not be copied out";
  // An incomplete header is only not ready, whatever its size word says.
  write_header(2, 0xFFFFFFFFu, kLlHeaderWords - 1);
  EXPECT_EQ(ring.TryRead(2, &h, buffer.data()), LlReadResult::kNotReady);
  // Exactly the maximum is fine once its payload is there.
  u64 pos = 0;
  TestRing fine(1, kMax, 0);
  ASSERT_TRUE(fine.TryReserve(&pos));
  WriteRecord(fine, pos, 0, 0, kMax, 3);
  EXPECT_EQ(fine.TryRead(0, &h, buffer.data()), LlReadResult::kReady);
  EXPECT_EQ(h.size, kMax);
}

// One writer stores a record's words one at a time, in random order and
// slowly, while the reader polls the slot: the reader must see kNotReady
// until the last word is there, and then exactly the record. The slot holds
// the previous lap's record (different in every word) when the writer
// starts, as it does in a running ring.
TEST(LlRingTest, PartiallyWrittenRecordIsNeverAccepted) {
  constexpr u32 kMax = 60;
  TestRing ring(1, kMax, 0);  // 2 slots; positions 0, 2, 4, ... share slot 0
  std::mt19937 rng(42);
  u64 total_not_ready = 0;
  u32 round = 0;
  for (u32 size : {0u, 1u, 3u, 4u, 5u, 17u, 40u, kMax}) {
    const u64 old_pos = 2 * round;
    const u64 pos = old_pos + 2;
    // The previous lap: a full-size record from another producer.
    WriteRecord(ring, old_pos, 7, round, kMax, 0);

    // The record's final image, built by LlWriteRecord in scratch memory.
    std::vector<u64> image(ring.slot_words(), 0);
    std::vector<u8> source(size + 1);
    for (u32 i = 0; i < size; ++i) source[i] = PayloadByte(1, round, i);
    LlWriteRecord(image.data(), ring.Flag(pos), HeaderFor(1, round, size), source.data());
    std::vector<u32> order(kLlHeaderWords + (size + 3) / 4);
    for (u32 i = 0; i < order.size(); ++i) order[i] = i;
    std::shuffle(order.begin(), order.end(), rng);

    std::atomic<bool> writer_done{false};
    std::thread writer([&] {
      for (u32 word : order) {
        StoreRelaxedSys(ring.Slot(pos) + word, image[word]);
        std::this_thread::sleep_for(std::chrono::microseconds(200));
      }
      writer_done = true;
    });
    std::vector<u32> buffer(kMax / 4 + 2);
    LlHeader h;
    LlReadResult r = LlReadResult::kNotReady;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < deadline) {
      std::fill(buffer.begin(), buffer.end(), kSentinel);
      r = ring.TryRead(pos, &h, buffer.data());
      if (r != LlReadResult::kNotReady) break;
      ++total_not_ready;
      std::this_thread::yield();
    }
    writer.join();
    ASSERT_EQ(r, LlReadResult::kReady) << "size " << size;
    EXPECT_EQ(CheckRecord(h, buffer.data(), 1, round, size, kSentinel), "") << "size " << size;
    ring.Release(pos + 1);
    ++round;
  }
  // The reader did poll while records were incomplete.
  EXPECT_GT(total_not_ready, 0u);
}

// The cached head hands the consumer's release on from one producer to
// another: producer A finds the ring full, reads the consumer's head and
// refreshes the cached copy; producer B then reserves from the cached copy
// alone, never reading the head. B must still be ordered after the
// consumer's reads (the acquire/release of the cached head). The threads
// are sequenced with relaxed atomics only, which give ThreadSanitizer no
// ordering of their own: any ordering it sees comes from the ring.
TEST(LlRingTest, CachedHeadCarriesTheConsumersRelease) {
  TestRing ring(2, 8, 0);  // 4 slots
  for (u64 pos = 0; pos < 4; ++pos) {
    u64 reserved = 0;
    ASSERT_TRUE(ring.TryReserve(&reserved));
    WriteRecord(ring, reserved, 0, pos, 4, 0);
  }
  // Plain memory: the consumer's "finished reading" marks, one 8-byte word
  // each so that TSan tracks each on its own.
  std::vector<u64> done(8, 0);
  std::atomic<int> phase{0};
  const auto wait_for = [&phase](int p) {
    while (phase.load(std::memory_order_relaxed) < p) std::this_thread::yield();
  };
  u64 a_pos = 0;
  u64 b_pos = 0;
  u64 b_saw = 0;
  bool a_ok = false;
  bool b_ok = false;
  std::thread consumer([&] {
    LlHeader h;
    u32 buffer[4];
    for (u64 pos = 0; pos < 3; ++pos) {
      while (ring.TryRead(pos, &h, buffer) != LlReadResult::kReady) std::this_thread::yield();
      done[pos] = 1;
    }
    ring.Release(3);
    phase.store(1, std::memory_order_relaxed);
  });
  std::thread producer_a([&] {
    wait_for(1);
    a_ok = ring.TryReserve(&a_pos);  // full by the cache: reads head (3), refreshes the cache
    if (a_ok && done[a_pos - 4] == 1) WriteRecord(ring, a_pos, 1, 0, 4, 0);
    phase.store(2, std::memory_order_relaxed);
  });
  std::thread producer_b([&] {
    wait_for(2);
    b_ok = ring.TryReserve(&b_pos);  // fits by the refreshed cache alone
    if (b_ok) b_saw = done[b_pos - 4];
  });
  consumer.join();
  producer_a.join();
  producer_b.join();
  ASSERT_TRUE(a_ok);
  ASSERT_TRUE(b_ok);
  EXPECT_EQ(a_pos, 4u);
  EXPECT_EQ(b_pos, 5u);
  EXPECT_EQ(b_saw, 1u);
  EXPECT_EQ(ring.cached_head(), 3u);
}

TEST(LlRingTest, ManyProducersOneConsumer) {
  RunStress({.capacity_log2 = 5, .max_payload = 61, .start = 0, .producers = 6, .per_producer = 8000, .batch = 4});
}

TEST(LlRingTest, PositionsWrapAtTwoToTheSixtyFour) {
  RunStress(
      {.capacity_log2 = 3, .max_payload = 45, .start = ~u64{0} - 499, .producers = 4, .per_producer = 800, .batch = 2});
}

TEST(LlRingTest, LapFlagsWrap) {
  // The flag keeps 31 bits of the lap number: it wraps to lap 0's flag at
  // lap 2^31, here 60 positions after the start.
  constexpr u32 kLog2 = 3;
  constexpr u64 kWrap = u64{1} << (31 + kLog2);
  static_assert(LlFlag(kWrap - 1, kLog2) == 0xFFFFFFFFu, "last lap before the wrap");
  static_assert(LlFlag(kWrap, kLog2) == 0x80000000u, "first lap after it");
  RunStress({.capacity_log2 = kLog2,
             .max_payload = 29,
             .start = kWrap - 60,
             .producers = 4,
             .per_producer = 600,
             .batch = 3});
}

TEST(LlRingTest, TinyRingUnderHeavyContention) {
  RunStress({.capacity_log2 = 0, .max_payload = 13, .start = 9, .producers = 6, .per_producer = 1500, .batch = 1});
}

// The worker's path: the cached-only attempt, then the one that reads head.
TEST(LlRingTest, ManyProducersOneConsumerReservingAsWorkerThreads) {
  RunStress({.capacity_log2 = 5,
             .max_payload = 61,
             .start = 0,
             .producers = 6,
             .per_producer = 8000,
             .batch = 4,
             .worker_path = true});
}

TEST(LlRingTest, TinyRingReservedAsWorkerThreadsUnderHeavyContention) {
  RunStress({.capacity_log2 = 1,
             .max_payload = 13,
             .start = ~u64{0} - 20,
             .producers = 6,
             .per_producer = 1500,
             .batch = 1,
             .worker_path = true});
}

// Without the consumer's head the attempt is refused once the cache says
// full, and takes nothing; with it, the released room is found.
TEST(LlRingTest, CachedOnlyReservationNeverReadsTheConsumersHead) {
  TestRing ring(2, 8, 0, /*worker_path=*/true);  // 4 slots
  u64 pos = 0;
  for (u64 i = 0; i < 4; ++i) {
    ASSERT_TRUE(ring.TryReserveCachedOnly(&pos)) << i;
    EXPECT_EQ(pos, i);
    WriteRecord(ring, pos, 0, i, 4, 0);
  }
  ring.Release(2);  // the consumer read two records
  EXPECT_FALSE(ring.TryReserveCachedOnly(&pos));
  EXPECT_EQ(ring.tail(), 4u);
  EXPECT_EQ(ring.cached_head(), 0u);
  ASSERT_TRUE(ring.TryReserve(&pos));  // reads head (2), refreshes the cache
  EXPECT_EQ(pos, 4u);
  EXPECT_EQ(ring.cached_head(), 2u);
  ASSERT_TRUE(ring.TryReserveCachedOnly(&pos));  // fits by the refreshed cache
  EXPECT_EQ(pos, 5u);
  EXPECT_FALSE(ring.TryReserveCachedOnly(&pos));
}

// The consumer's stamps (LlStampUnusedWords, LlStampUnusedUnits) write
// nothing during a ring's first lap, whose slots start zeroed (a ring back's
// first records would otherwise rewrite every unused word of their slots,
// some 1,000 words each for a program with a 4 KiB message), and write every
// unused word, with the lap's flag, at lap 2^29 and 2^29 + 2^30.
TEST(LlRingTest, StampsWriteNothingInTheFirstLapAndEveryUnusedWordAtAStampingLap) {
  constexpr u32 kMax = 4096;
  TestRing ring(1, kMax, 0);
  constexpr u64 kLap = 2;  // positions per lap
  const u32 used = kLlHeaderWords + 16 / 4;
  for (u64 pos : {u64{0}, u64{1}, kLap, (u64{1} << 29) * kLap, (u64{1} << 29) * kLap + 1,
                  ((u64{1} << 29) + (u64{1} << 30)) * kLap, (u64{1} << 30) * kLap, (u64{1} << 31) * kLap}) {
    const bool stamping = pos >= (u64{1} << 29) * kLap && pos != (u64{1} << 30) * kLap && pos != (u64{1} << 31) * kLap;
    u64* slot = ring.Slot(pos);
    for (u32 i = 0; i < ring.slot_words(); ++i) slot[i] = 0;
    WriteRecord(ring, pos, 0, 1, 16, 0);
    LlStampUnusedWords(slot, ring.slot_words(), ring.Flag(pos), 16);
    for (u32 i = used; i < ring.slot_words(); ++i) {
      ASSERT_EQ(slot[i], stamping ? LlWord(0, ring.Flag(pos)) : u64{0}) << "word " << i << " at position " << pos;
    }
    // The units' form, on the same slot taken as 4 units of which the
    // record used `used` words.
    for (u32 i = 0; i < 4 * kLlUnitWords; ++i) slot[i] = 0;
    LlStampUnusedUnits(slot, 4, used, ring.Flag(pos));
    for (u32 i = used; i < 4 * kLlUnitWords; ++i) {
      ASSERT_EQ(slot[i], stamping ? LlWord(0, ring.Flag(pos)) : u64{0}) << "unit word " << i << " at position " << pos;
    }
    for (u32 i = 0; i < used; ++i) ASSERT_EQ(slot[i], u64{0}) << "a word the record used, at position " << pos;
  }
}

// Flags are the lap number modulo 2^31 and a record rewrites only the words
// it uses, so a payload word that no record of its slot rewrote for 2^31
// laps would show the current lap's flag; a reader polling while the current
// writer has stored its header but not yet that word would accept it (a torn
// record). The consumer prevents this by stamping a slot's unused words every
// 2^30 laps (LlStampUnusedWords). Here: 2 slots; a 64-byte record at position
// 0 (lap 0); in that slot since, only header-only records (laps 2^29, which
// the consumer stamps, and 2^31 - 1); at position 2^32 (lap 2^31: the same
// slot and flag as lap 0) a 64-byte record whose header is written but whose
// payload is not yet.
TEST(LlRingTest, StalePayloadWordsDoNotAliasAfterTwoToTheThirtyOneLaps) {
  constexpr u32 kMax = 64;
  TestRing ring(1, kMax, 0);
  constexpr u64 kLap = 2;  // positions per lap
  constexpr u64 kAliasing = (u64{1} << 31) * kLap;
  ASSERT_EQ(ring.Slot(kAliasing), ring.Slot(0));
  ASSERT_EQ(ring.Flag(kAliasing), ring.Flag(0));
  WriteRecord(ring, 0, 0, 0, kMax, 0);                   // lap 0: all 16 payload words
  WriteRecord(ring, (u64{1} << 29) * kLap, 0, 1, 0, 0);  // lap 2^29: header only
  // ...which its consumer read and, at this lap, stamped.
  LlStampUnusedWords(ring.Slot((u64{1} << 29) * kLap), ring.slot_words(), ring.Flag((u64{1} << 29) * kLap), 0);
  WriteRecord(ring, kAliasing - kLap, 0, 2, 0, 0);       // lap 2^31 - 1: header only
  // Lap 2^31: the header only, so far.
  std::vector<u64> image(ring.slot_words(), 0);
  std::vector<u8> source(kMax, 0x77);
  LlWriteRecord(image.data(), ring.Flag(kAliasing), HeaderFor(0, 3, kMax), source.data());
  for (u32 i = 0; i < kLlHeaderWords; ++i) StoreRelaxedSys(ring.Slot(kAliasing) + i, image[i]);
  LlHeader h;
  std::vector<u32> buffer(kMax / 4 + 1);
  EXPECT_EQ(ring.TryRead(kAliasing, &h, buffer.data()), LlReadResult::kNotReady)
      << "the reader accepted payload words written 2^31 laps ago";
}

}  // namespace
}  // namespace rk
