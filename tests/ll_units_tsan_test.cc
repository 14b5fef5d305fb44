// Copyright 2026 The RingKernel Authors.
//
// The variable-length form of the host → worker rings (ll_ring.h: positions
// in units of kLlUnitWords words, a record as many units as it needs, skip
// records at the ring's end) driven by host threads under ThreadSanitizer:
// producer threads claim with LlTryClaimUnits (which writes the skips) and
// write with LlWriteRecord — the code System::Send runs — and one consumer
// reads with LlTryReadUnits, which follows the same rules as the GPU
// poller's window (rt_poller.cuh), and releases units with LlRelease.
//
// Records name their producer and sequence number and carry payloads of
// every size from 0 to the maximum, so the consumer proves that nothing was
// lost, duplicated, reordered per producer or torn, and that skips run
// exactly to the ring's end. In the last tests a producer stops in the middle
// of some records, and a consumer that follows the poller's hole rule
// (rt_poller.cuh, "Holes") takes the records behind them meanwhile.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iostream>
#include <utility>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "ringkernel/device/ll_ring.h"
#include "runtime/ring_owner.h"
#include "runtime/writer_gate.h"

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

  // As System::Send writes: claim (and the skip if any), then the record.
  // Returns the record's first unit (any u64, ~0 included: positions wrap),
  // or nothing when the ring is full. `pause`, if set, runs after half of
  // the record's words are written (a writer preempted mid-record).
  std::optional<u64> TryWrite(const LlHeader& h, const void* payload, const std::function<void()>& pause = {}) {
    u64 pos;
    if (!LlTryClaimUnits(slots(), capacity_log2_, max_payload_, &tail_.value, &cached_head_.value,
                         &header_->head.value, h.size, &pos)) {
      return std::nullopt;
    }
    if (!pause) {
      LlWriteRecord(Unit(pos), Flag(pos), h, payload);
      return pos;
    }
    std::vector<u64> words(kLlHeaderWords + (h.size + 3) / 4);
    LlWriteRecord(words.data(), Flag(pos), h, payload);
    for (size_t i = 0; i < words.size(); ++i) {
      if (i == words.size() / 2) pause();
      StoreRelaxedSys(Unit(pos) + i, words[i]);
    }
    return pos;
  }
  // Claims units for a record of `size` bytes without writing it.
  std::optional<u64> Claim(u32 size) {
    u64 pos;
    if (!LlTryClaimUnits(slots(), capacity_log2_, max_payload_, &tail_.value, &cached_head_.value,
                         &header_->head.value, size, &pos)) {
      return std::nullopt;
    }
    return pos;
  }
  void SetHint(u64 hint) { __atomic_store_n(&tail_.value, hint, __ATOMIC_RELAXED); }
  void SetCachedHead(u64 head) { __atomic_store_n(&cached_head_.value, head, __ATOMIC_RELAXED); }
  // The claim at `pos`, if there is one: the record's size word.
  std::optional<u32> ClaimAt(u64 pos) const {
    const u64 w = LoadRelaxedSys(Unit(pos) + 1);
    if (LlWordFlag(w) != Flag(pos)) return std::nullopt;
    return LlData(w);
  }
  u64 ClaimedEnd() const { return LlClaimedEnd(slots(), capacity_log2_, max_payload_, tail()); }
  LlReadResult TryRead(u64 pos, LlHeader* h, void* payload, u32* units) const {
    return LlTryReadUnits(slots(), capacity_log2_, pos, max_payload_, h, payload, units);
  }
  void Release(u64 new_head) { LlRelease(header_, new_head); }
  u64 tail() const { return LoadAcquireGpu(&tail_.value); }
  u64 head() const { return LoadAcquireSys(&header_->head.value); }
  // The ring as its producers see it (runtime/ring_owner.h).
  RingRef Ref() { return RingRef{slots(), capacity_log2_, max_payload_, &tail_.value, &cached_head_.value, &header_->head.value}; }
  // What hole mode's look at `pos` finds (rt_poller.cuh, HostHoleLook):
  // whole or not, then the writer word.
  LlHoleLook Look(u64 pos, LlReadResult read) const {
    LlHoleLook look;
    look.whole = read == LlReadResult::kReady;
    const u64 writer = LoadRelaxedSys(Unit(pos) + 5);
    look.writer = LlData(writer);
    look.writer_known = LlWordFlag(writer) == Flag(pos);
    return look;
  }

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
  EXPECT_EQ(ring.TryWrite(HeaderOf(0, 2, 100), payload.data()), std::optional<u64>(8));
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

// How long a record must stay claimed and not whole before the consumer
// opens a hole at it (the GPU's kHoleAfterNs); producers pause for longer.
constexpr auto kHoleAfter = std::chrono::microseconds(100);
constexpr auto kPause = std::chrono::milliseconds(2);
// A pausing producer stays paused past kPause until a record behind its own
// was taken past its hole, up to this long: on a loaded machine the others
// may not run at all during a fixed pause, and the test would then show
// nothing about holes.
constexpr auto kPauseMax = std::chrono::milliseconds(100);

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

// `pause_every`: every that many records (0: never), the producer stops
// half-way through writing one for a moment (for longer, up to kPauseMax,
// until `taken_past` moves, where the consumer counts records taken past a
// hole).
void Produce(UnitRing* ring, u32 producer, u64 count, UnitLog* log, Watchdog* watchdog, std::string* error,
             u64 pause_every = 0, const std::atomic<u64>* taken_past = nullptr) {
  std::vector<u8> data(ring->max_payload() + 4);
  const std::function<void()> pause = [taken_past] {
    const auto begin = std::chrono::steady_clock::now();
    const u64 before = taken_past != nullptr ? taken_past->load() : 0;
    std::this_thread::sleep_for(kPause);
    while (taken_past != nullptr && taken_past->load() == before &&
           std::chrono::steady_clock::now() - begin < kPauseMax) {
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
  };
  const std::function<void()> none;
  for (u64 seq = 0; seq < count; ++seq) {
    const u32 size = SizeOf(producer, seq, ring->max_payload());
    const u32 misalign = static_cast<u32>(seq % 4);
    for (u32 i = 0; i < size; ++i) data[misalign + i] = ByteOf(producer, seq, i);
    std::optional<u64> written;
    const bool pausing = pause_every != 0 && seq % pause_every == pause_every / 2;
    while (!(written = ring->TryWrite(HeaderOf(producer, seq, size), data.data() + misalign, pausing ? pause : none))) {
      if (watchdog->Expired()) {
        *error = "gave up: the ring stayed full";
        return;
      }
      std::this_thread::yield();
    }
    // Every unit of the record was consumed a lap ago.
    for (u64 u = *written; u != *written + LlRecordUnits(size); ++u) {
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
  u64 holes = 0;        // holes opened
  u64 taken_past = 0;   // records taken while a hole before them was open
  u64 final_position = 0;
  std::vector<u64> next_seq;
  std::string error;
};

constexpr size_t kMaxHoles = 4;

// Reads every record in ring order or, with `holes` on, as the GPU's poller
// does (rt_poller.cuh, "Holes"): a record claimed but not whole for a while
// becomes a hole and the consumer reads on past it; while holes are open,
// each step reads the record at the head, then the holes last first, and
// takes the first of them it saw whole. Releases units only up to the first
// hole.
void Consume(UnitRing* ring, u64 start, u32 producers, u64 total, UnitLog* log, Watchdog* watchdog,
             ConsumerResult* result, bool holes_on, std::atomic<u64>* taken_past = nullptr) {
  result->next_seq.assign(producers, 0);
  std::vector<u32> buffer(ring->max_payload() / 4 + 2);
  u64 pos = start;
  u64 released = start;
  std::vector<std::pair<u64, u32>> holes;  // position, claim
  u64 stall_at = ~u64{0};
  std::chrono::steady_clock::time_point stall_since;
  auto fail = [&](u64 at, const std::string& what) {
    result->error = "unit " + std::to_string(at) + ": " + what;
    watchdog->failed = true;
  };
  // Checks and counts the (whole) record at `at`; false on a failure.
  auto deliver = [&](u64 at, const LlHeader& h, u32 units) {
    if (h.type == kLlSkipType) {
      if (((at + units) & (ring->capacity() - 1)) != 0) return fail(at, "a skip that does not end the lap"), false;
      ++result->skips;
    } else {
      if (h.actor >= producers) return fail(at, "unknown producer"), false;
      const u64 seq = h.correlation & ((u64{1} << 48) - 1);
      if (seq != result->next_seq[h.actor]) return fail(at, "out of order, lost or duplicated"), false;
      const u32 size = SizeOf(h.actor, seq, ring->max_payload());
      const LlHeader want = HeaderOf(h.actor, seq, size);
      if (h.size != size || h.type != want.type || h.peer != want.peer || h.hlc != want.hlc) {
        return fail(at, "header differs"), false;
      }
      const u8* bytes = reinterpret_cast<const u8*>(buffer.data());
      for (u32 i = 0; i < size; ++i) {
        if (bytes[i] != ByteOf(h.actor, seq, i)) return fail(at, "payload byte " + std::to_string(i) + " differs"), false;
      }
      if (units != LlRecordUnits(size)) return fail(at, "wrong unit count"), false;
      ++result->next_seq[h.actor];
      ++result->records;
      if (!holes.empty() && holes.front().first < at) {
        ++result->taken_past;
        if (taken_past != nullptr) taken_past->fetch_add(1);
      }
    }
    for (u32 u = 0; u < units; ++u) log->done[at + u - log->start] = 1;
    return true;
  };
  // The record at the head is not whole: a hole once it has stayed so.
  auto stall = [&] {
    const std::optional<u32> claim = ring->ClaimAt(pos);
    if (!holes_on || !claim.has_value()) return;
    if (stall_at != pos) {
      stall_at = pos;
      stall_since = std::chrono::steady_clock::now();
    } else if (std::chrono::steady_clock::now() - stall_since > kHoleAfter && holes.size() < kMaxHoles) {
      const u32 extent = LlClaimExtent(*claim, pos, ring->log2(), ring->max_payload());
      if (extent == 0) return fail(pos, "a claim no producer makes");
      holes.emplace_back(pos, *claim);
      ++result->holes;
      pos += extent;
      stall_at = ~u64{0};
    }
  };
  while (result->records < total || !holes.empty()) {
    if (watchdog->Expired()) {
      // What the reader waits at: the words of its first units (flag:data).
      std::string seen;
      for (u64 q = pos; q < pos + 3; ++q) {
        seen += "\n  unit " + std::to_string(q) + " (lap flag " + std::to_string(ring->Flag(q) & 0x7FFFFFFFu) + "):";
        for (u32 i = 0; i < kLlUnitWords; ++i) {
          const u64 w = LoadRelaxedSys(ring->Unit(q) + i);
          seen += " " + std::to_string(LlWordFlag(w) & 0x7FFFFFFFu) + ":" + std::to_string(LlData(w));
        }
      }
      return fail(pos, "gave up waiting; hint " + std::to_string(ring->tail()) + ", head " +
                           std::to_string(ring->head()) + seen);
    }
    LlHeader h;
    u32 units = 0;
    const LlReadResult r = ring->TryRead(pos, &h, buffer.data(), &units);
    if (r == LlReadResult::kCorrupt) return fail(pos, "reported corrupt");
    if (holes.empty()) {
      if (r == LlReadResult::kNotReady) {
        if (released != pos) {
          ring->Release(pos);
          released = pos;
        }
        stall();
        std::this_thread::yield();
        continue;
      }
      if (!deliver(pos, h, units)) return;
      pos += units;
      if (pos - released >= 8) {
        ring->Release(pos);
        released = pos;
      }
      continue;
    }
    // Hole mode: the head was read; now the holes, last first (each read
    // after the one before it: x86 keeps loads in order, as the GPU's
    // poller orders them by a fence and by waiting for each), and the
    // poller's choice among them (LlHolePick).
    const u32 n = static_cast<u32>(holes.size());
    LlHoleLook looks[kMaxHoles + 1];
    looks[n] = ring->Look(pos, r);
    for (u32 j = n; j-- > 0;) {
      LlHeader hh;
      u32 hu = 0;
      looks[j] = ring->Look(holes[j].first, ring->TryRead(holes[j].first, &hh, buffer.data(), &hu));
    }
    const u32 pick = LlHolePick(looks, n);
    if (pick < n) {
      const u64 at = holes[pick].first;
      if (ring->TryRead(at, &h, buffer.data(), &units) != LlReadResult::kReady) return fail(at, "a whole record changed");
      holes.erase(holes.begin() + pick);
      if (!deliver(at, h, units)) return;
    } else if (pick == n) {
      if (ring->TryRead(pos, &h, buffer.data(), &units) != LlReadResult::kReady) return fail(pos, "a whole record changed");
      if (!deliver(pos, h, units)) return;
      pos += units;
    } else {
      stall();
      std::this_thread::yield();
    }
    const u64 release = holes.empty() ? pos : holes.front().first;
    if (release != released) {
      ring->Release(release);
      released = release;
    }
  }
  ring->Release(pos);
  result->final_position = pos;
}

void RunUnits(u32 capacity_log2, u32 max_payload, u64 start, u32 producers, u64 per_producer,
              u64 pause_every = 0, bool holes = false) {
  UnitRing ring(capacity_log2, max_payload, start);
  const u64 total = producers * per_producer;
  Watchdog watchdog;
  // At most (skip + record) units per record: capacity + largest each.
  UnitLog log{start, std::vector<u64>(total * (2 * LlRecordUnits(max_payload)) + ring.capacity(), 0)};
  ConsumerResult result;
  std::vector<std::string> errors(producers);
  std::atomic<u64> taken_past{0};
  std::thread consumer(Consume, &ring, start, producers, total, &log, &watchdog, &result, holes, &taken_past);
  std::vector<std::thread> threads;
  for (u32 p = 0; p < producers; ++p) {
    // Producer 0 pauses mid-record now and then, if any does.
    threads.emplace_back(Produce, &ring, p, per_producer, &log, &watchdog, &errors[p], p == 0 ? pause_every : 0,
                         holes ? &taken_past : nullptr);
  }
  for (std::thread& t : threads) t.join();
  consumer.join();
  for (u32 p = 0; p < producers; ++p) EXPECT_EQ(errors[p], "") << "producer " << p;
  ASSERT_EQ(result.error, "");
  EXPECT_EQ(result.records, total);
  for (u32 p = 0; p < producers; ++p) EXPECT_EQ(result.next_seq[p], per_producer);
  EXPECT_GT(result.skips, 0u) << "sizes up to " << max_payload << " in " << ring.capacity()
                              << " units must need skips at the ring's end";
  EXPECT_EQ(ring.ClaimedEnd(), result.final_position);
  EXPECT_EQ(ring.head(), result.final_position);
  if (holes) {
    EXPECT_GT(result.holes, 0u) << "the paused producer's records must have become holes";
    EXPECT_GT(result.taken_past, 0u) << "records behind a hole must have been taken while it was open";
  } else {
    EXPECT_EQ(result.holes, 0u);
  }
  std::cout << total << " records, " << result.skips << " skips, " << result.holes << " holes, "
            << result.taken_past << " records taken past an open hole\n";
}

TEST(LlUnitsTest, FourProducersSmallRingEveryRecordInOrderAndWhole) { RunUnits(5, 220, 0, 4, 3000); }

// Positions near 2^64: the tail, the head and the flags wrap.
TEST(LlUnitsTest, PositionsThatWrapAround64Bits) { RunUnits(6, 100, ~u64{0} - 500, 3, 2000); }

// A producer that stops in the middle of a record: the in-order reader waits
// for it, and nothing is lost or reordered.
TEST(LlUnitsTest, AProducerPausedMidRecordHoldsUpAnInOrderReader) { RunUnits(6, 220, 0, 4, 1500, 100, false); }

// The same with the poller's holes: records behind a paused one (other
// producers') are taken meanwhile, each producer's own stay in order.
TEST(LlUnitsTest, RecordsBehindAPausedProducerAreTakenPastItsHoleInOrderPerProducer) {
  RunUnits(6, 220, 0, 4, 1500, 100, true);
}
TEST(LlUnitsTest, HolesWithPositionsThatWrapAround64Bits) { RunUnits(6, 100, ~u64{0} - 500, 3, 1500, 50, true); }

// ---- Rings with an owner (runtime/ring_owner.h), as System::Send writes. ----

struct OwnerRun {
  UnitRing* ring;
  RingOwners* owners;
  WriterGate* gate;
  UnitLog* log;
  Watchdog* watchdog;
  std::atomic<bool> go{false};              // the other producers may start
  std::atomic<u64> written_by_others{0};    // records the other producers wrote
  std::atomic<u64> others_during_pause{0};  // of them, while the owner was stopped
  std::atomic<u32> owner_before_others{0};  // the ring's owner when they started
};

// The owner stops between seeing it owns the ring and its stores (its
// intent published), lets the others start, and stays stopped for a while
// (long enough for the reader to open a hole on a loaded two-core machine).
constexpr auto kOwnerStop = std::chrono::milliseconds(50);
void StopOwner(void* arg) {
  OwnerRun* run = static_cast<OwnerRun*>(arg);
  run->owner_before_others.store(run->owners->OwnerOf(0));
  const u64 before = run->written_by_others.load();
  run->go.store(true);
  std::this_thread::sleep_for(kOwnerStop);
  run->others_during_pause.store(run->written_by_others.load() - before);
}

// Producer `producer` sends its records `from`..`to` through the RingOwners
// protocol (Enter, the gate, TryWrite) as System::Send does, from its own
// thread. Producer 0 lets the others start before its record `first`, or,
// with `stop_owner`, stops in the middle of writing it (StopOwner). The
// others start when told.
void ProduceOwned(OwnerRun* run, u32 producer, u64 count, u64 first, bool stop_owner, u32* tag_out,
                  std::string* error) {
  if (producer != 0) {
    while (!run->go.load()) std::this_thread::yield();
  }
  UnitRing* ring = run->ring;
  const u32 me = run->gate->SlotTag();
  *tag_out = me;
  auto barrier = [run] { run->gate->Barrier(); };
  auto open = [run] { return run->gate->open(); };
  std::vector<u8> data(ring->max_payload() + 4);
  for (u64 seq = 0; seq < count; ++seq) {
    const u32 size = SizeOf(producer, seq, ring->max_payload());
    const u32 misalign = static_cast<u32>(seq % 4);
    for (u32 i = 0; i < size; ++i) data[misalign + i] = ByteOf(producer, seq, i);
    const bool stop = producer == 0 && stop_owner && seq == first;
    if (producer == 0 && !stop_owner && seq == first) {
      run->owner_before_others.store(run->owners->OwnerOf(0));
      run->go.store(true);
    }
    RingOwners::Mode mode = run->owners->Enter(0, me, ring->Ref(), barrier);
    if (!run->gate->TryEnter(0)) {
      *error = "the gate refused";
      return;
    }
    u64 pos = 0;
    while (!run->owners->TryWrite(0, me, &mode, ring->Ref(), HeaderOf(producer, seq, size), data.data() + misalign,
                                  barrier, open, stop ? StopOwner : nullptr, run, &pos)) {
      if (run->watchdog->Expired()) {
        *error = "gave up: the ring stayed full";
        run->gate->Leave(0);
        return;
      }
      std::this_thread::yield();
    }
    run->gate->Leave(0);
    if (producer != 0) run->written_by_others.fetch_add(1);
    for (u64 u = pos; u != pos + LlRecordUnits(size); ++u) {
      const u64 index = u - run->log->start;
      if (index >= run->log->done.size() ||
          (index >= ring->capacity() && run->log->done[index - ring->capacity()] != 1)) {
        *error = "unit " + std::to_string(u) + " reused before the consumer finished with it";
        run->watchdog->failed = true;
        return;
      }
    }
  }
  if (producer == 0 && count <= first) run->go.store(true);
}

// Producer 0 writes `first` records alone (it owns the ring), then every
// producer writes `per_producer` records at once (the ring is taken from it
// and shared); a consumer that follows the poller's rules takes them all.
struct OwnerOutcome {
  ConsumerResult result;
  u32 owner_before_others = 0;
  u32 owner_at_end = 0;
  u32 tag0 = 0;
  u64 others_during_pause = 0;
};
OwnerOutcome RunOwned(u32 capacity_log2, u32 max_payload, u64 start, u32 producers, u64 first, u64 per_producer,
                      bool stop_owner, bool holes, bool asymmetric = true) {
  UnitRing ring(capacity_log2, max_payload, start);
  WriterGate gate;
  gate.Init(1, asymmetric);
  gate.Open();
  RingOwners owners;
  owners.Init(1, gate.asymmetric());
  Watchdog watchdog;
  const u64 total = first + producers * per_producer;
  UnitLog log{start, std::vector<u64>(total * (2 * LlRecordUnits(max_payload)) + ring.capacity(), 0)};
  OwnerRun run{&ring, &owners, &gate, &log, &watchdog};
  OwnerOutcome out;
  std::thread consumer(Consume, &ring, start, producers, total, &log, &watchdog, &out.result, holes, nullptr);
  std::vector<std::string> errors(producers);
  std::vector<u32> tags(producers, 0);
  std::vector<std::thread> threads;
  for (u32 p = 0; p < producers; ++p) {
    threads.emplace_back(ProduceOwned, &run, p, p == 0 ? first + per_producer : per_producer, first, stop_owner,
                         &tags[p], &errors[p]);
  }
  for (std::thread& t : threads) t.join();
  consumer.join();
  for (u32 p = 0; p < producers; ++p) EXPECT_EQ(errors[p], "") << "producer " << p;
  out.owner_before_others = run.owner_before_others.load();
  out.owner_at_end = owners.OwnerOf(0);
  out.tag0 = tags[0];
  out.others_during_pause = run.others_during_pause.load();
  EXPECT_EQ(out.result.error, "");
  std::cout << total << " records, " << out.result.skips << " skips, " << out.result.holes << " holes, "
            << out.result.taken_past << " taken past an open hole; owner before the others: "
            << out.owner_before_others << ", at the end " << out.owner_at_end << "; others' records while the owner "
            << "was stopped: " << out.others_during_pause << "\n";
  return out;
}

// Whether this machine's kernel offers the process barrier that owners need.
bool RingsHaveOwners() {
  WriterGate probe;
  probe.Init(1);
  return probe.asymmetric();
}

// One writer: it owns the ring and streams every record (whole units,
// skips at the ring's end), and the reader takes them all in order.
TEST(RingOwnersTest, ALoneWriterOwnsTheRingAndStreamsEveryRecordInOrder) {
  if (!RingsHaveOwners()) GTEST_SKIP() << "no process barrier (membarrier): rings have no owners here";
  const OwnerOutcome o = RunOwned(5, 220, 0, 1, 4000, 0, false, false);
  EXPECT_EQ(o.result.records, 4000u);
  EXPECT_EQ(o.result.next_seq[0], 4000u);
  EXPECT_GT(o.result.skips, 0u);
  EXPECT_NE(o.tag0, 0u);
  EXPECT_EQ(o.owner_at_end, o.tag0) << "the lone writer owns its ring";
}

// Positions near 2^64 with an owner: its hint and the flags wrap.
TEST(RingOwnersTest, AnOwnersPositionsWrapAround64Bits) {
  if (!RingsHaveOwners()) GTEST_SKIP() << "no process barrier (membarrier): rings have no owners here";
  const OwnerOutcome o = RunOwned(6, 100, ~u64{0} - 500, 1, 3000, 0, false, false);
  EXPECT_EQ(o.result.records, 3000u);
}

// A second writer takes the ring from its owner while the owner keeps
// writing: the ring is shared from then on, and every producer's records
// arrive whole and in order, none lost — the owner's last streamed record
// claimed for it by the taker, the others' claimed past the floor.
TEST(RingOwnersTest, WritersThatJoinAnOwnerShareTheRingAndLoseNothing) {
  if (!RingsHaveOwners()) GTEST_SKIP() << "no process barrier (membarrier): rings have no owners here";
  const OwnerOutcome o = RunOwned(6, 220, 0, 4, 500, 1500, false, false);
  EXPECT_EQ(o.result.records, 500u + 4 * 1500u);
  EXPECT_EQ(o.result.next_seq[0], 2000u);
  for (u32 p = 1; p < 4; ++p) EXPECT_EQ(o.result.next_seq[p], 1500u) << "producer " << p;
  EXPECT_EQ(o.owner_before_others, o.tag0);
  EXPECT_EQ(o.owner_at_end, RingOwners::kShared);
}

// The owner stops between seeing it owns the ring and its stores (its intent
// published: preempted, or in a debugger) while others write: taking the
// ring does not wait for it — they go on meanwhile, the reader takes their
// records past the owner's claimed place (a hole), and the owner's record
// still comes first among its own.
TEST(RingOwnersTest, AnOwnerStoppedMidRecordHoldsUpOnlyItsOwnRecord) {
  if (!RingsHaveOwners()) GTEST_SKIP() << "no process barrier (membarrier): rings have no owners here";
  const OwnerOutcome o = RunOwned(6, 220, 0, 4, 200, 1500, true, true);
  EXPECT_EQ(o.result.records, 200u + 4 * 1500u);
  EXPECT_EQ(o.result.next_seq[0], 1700u);
  EXPECT_EQ(o.owner_before_others, o.tag0);
  EXPECT_GT(o.others_during_pause, 0u) << "the other writers waited for the stopped owner";
  EXPECT_GT(o.result.holes, 0u) << "the stopped owner's claimed record must have become a hole";
  EXPECT_GT(o.result.taken_past, 0u) << "the others' records must have been taken past it";
}

// Without the process barrier there are no owners: the same run shares the
// ring from the first record.
TEST(RingOwnersTest, WithoutTheProcessBarrierEveryRingIsShared) {
  const OwnerOutcome o = RunOwned(6, 220, 0, 4, 300, 1000, false, false, /*asymmetric=*/false);
  EXPECT_EQ(o.result.records, 300u + 4 * 1000u);
  EXPECT_EQ(o.owner_before_others, RingOwners::kShared);
}

// A thread that entered as the ring's owner, whose ring another thread
// took before it found room: it writes its record shared, whatever the
// shared hint says — even one behind the reader, which is no place an owner
// could be (it used to find "no room" there forever).
TEST(RingOwnersTest, AnOwnerWhoseRingWasTakenWritesSharedEvenFromAHintBehindTheReader) {
  if (!RingsHaveOwners()) GTEST_SKIP() << "no process barrier (membarrier): rings have no owners here";
  UnitRing ring(6, 100, 0);
  WriterGate gate;
  gate.Init(1);
  gate.Open();
  RingOwners owners;
  owners.Init(1, gate.asymmetric());
  auto barrier = [&] { gate.Barrier(); };
  auto open = [&] { return gate.open(); };
  const u8 payload[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  LlHeader h = HeaderOf(0, 0, 8);
  const u32 a = gate.SlotTag();
  RingOwners::Mode mode = owners.Enter(0, a, ring.Ref(), barrier);
  ASSERT_EQ(mode, RingOwners::Mode::kOwned);
  ASSERT_TRUE(owners.TryWrite(0, a, &mode, ring.Ref(), h, payload, barrier, open));
  // Another thread takes the ring and writes six records; the reader takes
  // all seven; the shared hint is left well behind the reader's head.
  u32 b = 0;
  std::thread taker([&] {
    b = gate.SlotTag();
    RingOwners::Mode m = owners.Enter(0, b, ring.Ref(), barrier);
    EXPECT_EQ(m, RingOwners::Mode::kShared);
    for (u64 seq = 0; seq < 6; ++seq) {
      EXPECT_TRUE(owners.TryWrite(0, b, &m, ring.Ref(), HeaderOf(1, seq, 8), payload, barrier, open));
    }
  });
  taker.join();
  ASSERT_NE(b, a);
  EXPECT_EQ(owners.OwnerOf(0), RingOwners::kShared);
  u64 pos = 0;
  for (int i = 0; i < 7; ++i) {
    LlHeader r;
    u32 buf[8], units = 0;
    ASSERT_EQ(ring.TryRead(pos, &r, buf, &units), LlReadResult::kReady) << "record " << i;
    pos += units;
  }
  ring.Release(pos);
  ring.SetCachedHead(pos);
  ring.SetHint(pos - 5);
  // The first thread still thinks it owns the ring.
  u64 at = ~u64{0};
  ASSERT_TRUE(owners.TryWrite(0, a, &mode, ring.Ref(), HeaderOf(0, 1, 8), payload, barrier, open, nullptr, nullptr, &at))
      << "a ring with room refused a writer whose ring was taken";
  EXPECT_EQ(mode, RingOwners::Mode::kShared);
  EXPECT_EQ(at, pos);
  LlHeader r;
  u32 buf[8], units = 0;
  ASSERT_EQ(ring.TryRead(pos, &r, buf, &units), LlReadResult::kReady);
  EXPECT_EQ(r.peer, 1u) << "producer 0's second record";
  EXPECT_EQ(r.writer, 0u) << "written shared, in order";
}

// Hole mode's choice (LlHolePick) on looks the GPU may see.
TEST(RingOwnersTest, HoleModeKeepsAStreamedRecordBehindItsWritersOpenHoles) {
  auto look = [](bool whole, u32 writer, bool known = true) { return LlHoleLook{whole, writer, known}; };
  // Written in order (tag 0): the first whole record, holes before the head.
  LlHoleLook a[] = {look(false, 0), look(true, 0), look(true, 0)};
  EXPECT_EQ(LlHolePick(a, 2), 1u);
  // A streamed record whose writer has an open hole before it waits; one
  // of another writer goes.
  LlHoleLook b[] = {look(false, 7), look(true, 7), look(true, 9)};
  EXPECT_EQ(LlHolePick(b, 2), 2u);
  // A hole whose writer word is not there yet holds every streamed record,
  // not a record written in order.
  LlHoleLook c[] = {look(false, 0, false), look(true, 9)};
  EXPECT_EQ(LlHolePick(c, 1), 2u) << "nothing: the hole may be writer 9's";
  LlHoleLook d[] = {look(false, 0, false), look(true, 0)};
  EXPECT_EQ(LlHolePick(d, 1), 1u);
  // Nothing whole: nothing.
  LlHoleLook e[] = {look(false, 3), look(false, 0, false)};
  EXPECT_EQ(LlHolePick(e, 1), 2u);
  // The hole itself, once whole, goes first.
  LlHoleLook f[] = {look(true, 7), look(true, 7)};
  EXPECT_EQ(LlHolePick(f, 1), 0u);
}

TEST(LlUnitsTest, ClaimExtents) {
  // Capacity 8 units, max payload 128.
  EXPECT_EQ(LlClaimExtent(0, 0, 3, 128), 1u);
  EXPECT_EQ(LlClaimExtent(100, 5, 3, 128), 3u);   // 5..7
  EXPECT_EQ(LlClaimExtent(100, 6, 3, 128), 0u);   // would wrap
  EXPECT_EQ(LlClaimExtent(129, 0, 3, 128), 0u);   // over the max
  EXPECT_EQ(LlClaimExtent(kLlSkipSize, 6, 3, 128), 2u);
  EXPECT_EQ(LlClaimExtent(kLlSkipSize, 8, 3, 128), 0u) << "a skip never starts a lap";
  EXPECT_TRUE(LlLapLater(LlFlag(8, 3), LlFlag(0, 3)));
  EXPECT_FALSE(LlLapLater(LlFlag(0, 3), LlFlag(8, 3)));
  EXPECT_FALSE(LlLapLater(0, LlFlag(0, 3))) << "an unwritten word";
  EXPECT_TRUE(LlLapLater(LlFlag(0, 3), LlFlag(~u64{0}, 3))) << "laps wrap";
}

// The claim is the size word, there before any other word of the record: a
// reader knows how far a record goes while it is still being written, and a
// second producer claims the units after it.
TEST(LlUnitsTest, AClaimShowsTheRecordsExtentBeforeItIsWritten) {
  UnitRing ring(4, 128, 0);
  std::optional<u64> first = ring.Claim(100);  // 3 units
  ASSERT_EQ(first, std::optional<u64>(0));
  EXPECT_EQ(ring.ClaimAt(0), std::optional<u32>(100));
  EXPECT_EQ(ring.ClaimedEnd(), 3u);
  std::vector<u32> out(40);
  LlHeader h;
  u32 units = 0;
  EXPECT_EQ(ring.TryRead(0, &h, out.data(), &units), LlReadResult::kNotReady);
  std::vector<u8> payload(100, 9);
  EXPECT_EQ(ring.TryWrite(HeaderOf(1, 0, 10), payload.data()), std::optional<u64>(3));
  ASSERT_EQ(ring.TryRead(3, &h, out.data(), &units), LlReadResult::kReady);
  EXPECT_EQ(h.actor, 1u);
  // The first producer finishes its record where it claimed it.
  LlWriteRecord(ring.Unit(0), ring.Flag(0), HeaderOf(0, 0, 100), payload.data());
  ASSERT_EQ(ring.TryRead(0, &h, out.data(), &units), LlReadResult::kReady);
  EXPECT_EQ(units, 3u);
  EXPECT_EQ(ring.ClaimedEnd(), 4u);
}

// A hint left behind (its producer preempted between its claim and moving
// the hint, while the consumer went past) is passed over: the next claim
// starts at the consumer's head, or walks the claims after the hint.
TEST(LlUnitsTest, AStaleHintIsPassedOver) {
  UnitRing ring(3, 24, 0);  // 8 units, records of one unit
  std::vector<u8> payload(24, 1);
  for (u64 i = 0; i < 6; ++i) ASSERT_EQ(ring.TryWrite(HeaderOf(0, i, 24), payload.data()), std::optional<u64>(i));
  ring.Release(6);
  ring.SetHint(2);  // behind the head
  EXPECT_EQ(ring.TryWrite(HeaderOf(0, 6, 24), payload.data()), std::optional<u64>(6));
  ring.SetHint(3);  // behind the head, whose cached copy is older still
  EXPECT_EQ(ring.TryWrite(HeaderOf(0, 7, 24), payload.data()), std::optional<u64>(7));
  // A lap on: positions 8..13 reuse the first lap's units.
  for (u64 i = 8; i < 14; ++i) ASSERT_EQ(ring.TryWrite(HeaderOf(0, i, 24), payload.data()), std::optional<u64>(i));
  ring.Release(14);
  ring.SetHint(7);  // a record of the last lap; units 8..13 hold the next one's
  EXPECT_EQ(ring.TryWrite(HeaderOf(0, 14, 24), payload.data()), std::optional<u64>(14));
  ring.SetHint(1);  // a full lap behind (unit 1 holds position 9), and the
  ring.SetCachedHead(0);  // cached head as old: found by the flag of a later lap
  EXPECT_EQ(ring.TryWrite(HeaderOf(0, 15, 24), payload.data()), std::optional<u64>(15));
  EXPECT_EQ(ring.ClaimedEnd(), 16u);
}

}  // namespace
}  // namespace rk
