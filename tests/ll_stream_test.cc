// Copyright 2026 The RingKernel Authors.
//
// A host → worker ring's owner streams its records (ll_ring.h,
// LlPlaceOwned / LlWriteOwned / LlStreamRecord) with the instructions the
// runtime ships — on x86, non-temporal stores, which the ThreadSanitizer
// tests replace with atomics (ll_units_tsan_test.cc drives the protocol
// there). Here one thread writes and reads back: every record, of every size
// and payload alignment, reads whole and exact with the reader the GPU's
// poller follows, skips run to the ring's end, the words of a record's
// units past its own are zero, and the hint ends where the records end.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "gtest/gtest.h"
#include "ringkernel/device/ll_ring.h"

namespace rk {
namespace {

struct Ring {
  explicit Ring(u32 log2, u64 start) : log2(log2), hint(start), cached_head(start) {
    const u64 bytes = AlignUp(LlRingBytes(log2, kLlUnitWords), kLineBytes);
    memory = static_cast<u8*>(std::aligned_alloc(kLineBytes, bytes));
    // Stale words of an earlier lap everywhere: the reader must not take them.
    for (u64 i = kLlSlotsOffset; i + 8 <= bytes; i += 8) {
      *reinterpret_cast<u64*>(memory + i) = LlWord(0xDEADBEEFu, 0x80000000u | 0x1234u);
    }
    header()->capacity_log2 = log2;
    header()->slot_words = kLlUnitWords;
    header()->head.value = start;
  }
  ~Ring() { std::free(memory); }
  LlRingHeader* header() { return reinterpret_cast<LlRingHeader*>(memory); }
  u64* slots() { return reinterpret_cast<u64*>(memory + kLlSlotsOffset); }
  u32 log2;
  u64 hint;
  u64 cached_head;
  u8* memory;
};

u8 ByteOf(u64 seq, u32 i) { return static_cast<u8>(seq * 13 + i * 7 + 1); }

// Writes `count` records as the ring's owner and reads each back right
// after; sizes cycle through 0 .. max_payload and payloads start at every
// alignment.
void StreamAndRead(u32 log2, u64 start, u32 max_payload, u64 count) {
  Ring ring(log2, start);
  std::vector<u8> data(max_payload + 8);
  std::vector<u32> got(max_payload / 4 + 2);
  u64 pos = start;
  u64 skips = 0;
  for (u64 seq = 0; seq < count; ++seq) {
    const u32 size = static_cast<u32>((seq * 29) % (max_payload + 1));
    const u32 misalign = static_cast<u32>(seq % 4);
    for (u32 i = 0; i < size; ++i) data[misalign + i] = ByteOf(seq, i);
    LlHeader h{};
    h.type = 1 + static_cast<u32>(seq % 7);
    h.size = size;
    h.actor = static_cast<u32>(seq);
    h.writer = 5;
    h.correlation = seq * 3;
    h.hlc = ~seq;
    u64 at;
    u32 pad;
    ASSERT_TRUE(LlPlaceOwned(log2, &ring.hint, &ring.cached_head, &ring.header()->head.value, size, &at, &pad))
        << "record " << seq;
    ASSERT_EQ(at, pos) << "the owner's place is the end of its records";
    LlWriteOwned(ring.slots(), log2, &ring.hint, at, pad, h, data.data() + misalign);
    FenceStreamed();
    LlHeader r;
    u32 units = 0;
    if (pad != 0) {
      ASSERT_EQ(LlTryReadUnits(ring.slots(), log2, pos, max_payload, &r, got.data(), &units), LlReadResult::kReady);
      ASSERT_EQ(r.type, kLlSkipType);
      ASSERT_EQ(units, pad);
      ASSERT_EQ((pos + units) & ((u64{1} << log2) - 1), 0u) << "a skip runs to the ring's end";
      pos += units;
      ++skips;
    }
    ASSERT_EQ(LlTryReadUnits(ring.slots(), log2, pos, max_payload, &r, got.data(), &units), LlReadResult::kReady)
        << "record " << seq;
    EXPECT_EQ(r.type, h.type);
    EXPECT_EQ(r.size, size);
    EXPECT_EQ(r.actor, h.actor);
    EXPECT_EQ(r.writer, 5u);
    EXPECT_EQ(r.correlation, h.correlation);
    EXPECT_EQ(r.hlc, h.hlc);
    ASSERT_EQ(units, LlRecordUnits(size));
    const u8* bytes = reinterpret_cast<const u8*>(got.data());
    for (u32 i = 0; i < size; ++i) ASSERT_EQ(bytes[i], ByteOf(seq, i)) << "record " << seq << ", byte " << i;
    // The rest of the record's units: zero (no lap's word).
    const u64* unit = LlSlot(ring.slots(), kLlUnitWords, log2, pos);
    for (u32 w = kLlHeaderWords + (size + 3) / 4; w < units * kLlUnitWords; ++w) {
      ASSERT_EQ(unit[w], 0u) << "record " << seq << ", word " << w;
    }
    pos += units;
    EXPECT_EQ(ring.hint, pos);
    // The reader takes it: the units go back.
    LlRelease(ring.header(), pos);
  }
  EXPECT_GT(skips, 0u);
}

TEST(LlStreamTest, AnOwnersRecordsReadWholeAndExactAndLeaveTheirUnitsRestZero) {
  StreamAndRead(6, 0, 600, 3000);
}

TEST(LlStreamTest, AnOwnersPositionsWrapAround64Bits) { StreamAndRead(5, ~u64{0} - 300, 220, 2000); }

TEST(LlStreamTest, AFullRingHasNoPlaceUntilTheReaderReleasesUnits) {
  Ring ring(4, 0);  // 16 units
  LlHeader h{};
  h.type = 1;
  h.size = 200;  // 4 units
  u64 at;
  u32 pad;
  std::vector<u8> data(200, 7);
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(LlPlaceOwned(4, &ring.hint, &ring.cached_head, &ring.header()->head.value, h.size, &at, &pad));
    LlWriteOwned(ring.slots(), 4, &ring.hint, at, pad, h, data.data());
  }
  EXPECT_FALSE(LlPlaceOwned(4, &ring.hint, &ring.cached_head, &ring.header()->head.value, h.size, &at, &pad));
  EXPECT_EQ(ring.hint, 16u) << "nothing moved";
  LlRelease(ring.header(), 4);
  ASSERT_TRUE(LlPlaceOwned(4, &ring.hint, &ring.cached_head, &ring.header()->head.value, h.size, &at, &pad));
  EXPECT_EQ(at, 16u);
  EXPECT_EQ(pad, 0u);
  EXPECT_EQ(ring.cached_head, 4u) << "the cached head learned the reader's";
}

#if defined(__x86_64__)
TEST(LlStreamTest, TheHostStreamsWithNonTemporalStoresOnX86) {
  // The instruction this file exists to run (a ThreadSanitizer build uses
  // atomics instead and is not this one).
  EXPECT_TRUE(kStreamedStores);
}
#endif

}  // namespace
}  // namespace rk
