// Copyright 2026 The RingKernel Authors.
//
// Test goals: the handler-time histogram's buckets (handler_times.h), as the
// GPU and the host both compute them: every time falls in the bucket whose
// edges hold it, the buckets tile the line without gaps or overlaps, each is
// at most a quarter of its low edge wide, and the quantiles the host reads
// are the midpoints of the right buckets by rank.
#include <array>
#include <cstdint>

#include "gtest/gtest.h"
#include "ringkernel/device/handler_times.h"

namespace rk {
namespace {

TEST(HandlerTimesTest, EveryTimeFallsBetweenItsBucketsEdges) {
  for (uint64_t ns : {0ull, 1ull, 31ull, 32ull, 39ull, 40ull, 47ull, 48ull, 63ull, 64ull, 100ull, 999ull, 1000ull,
                      1023ull, 1024ull, 40000ull, 123456789ull, (1ull << 36) - 1, 1ull << 36}) {
    const uint32_t b = HandlerTimeBucket(ns);
    ASSERT_LT(b, kHandlerTimeBuckets - 1) << ns;
    EXPECT_LE(HandlerTimeBucketLow(b), ns) << ns;
    EXPECT_LT(ns, HandlerTimeBucketHigh(b)) << ns;
  }
  EXPECT_EQ(HandlerTimeBucket(31), 0u);
  EXPECT_EQ(HandlerTimeBucket(32), 1u);
  EXPECT_EQ(HandlerTimeBucket(40), 2u);
  EXPECT_EQ(HandlerTimeBucket(64), 5u);
}

TEST(HandlerTimesTest, BucketsTileTheLineAndAreAtMostAQuarterWide) {
  EXPECT_EQ(HandlerTimeBucketLow(0), 0u);
  EXPECT_EQ(HandlerTimeBucketLow(1), 32u);
  for (uint32_t b = 1; b + 1 < kHandlerTimeBuckets; ++b) {
    const uint64_t lo = HandlerTimeBucketLow(b), hi = HandlerTimeBucketHigh(b);
    ASSERT_LT(lo, hi) << b;
    EXPECT_EQ(hi, HandlerTimeBucketLow(b + 1)) << b;
    EXPECT_LE((hi - lo) * 4, lo) << b;
    EXPECT_EQ(HandlerTimeBucket(lo), b);
    EXPECT_EQ(HandlerTimeBucket(hi - 1), b);
  }
  // Everything from the last bucket's low edge (1.5 × 2^36 ns) up lands there.
  const uint64_t last = HandlerTimeBucketLow(kHandlerTimeBuckets - 1);
  EXPECT_EQ(last, 3ull << 35);
  EXPECT_EQ(HandlerTimeBucket(last), kHandlerTimeBuckets - 1);
  EXPECT_EQ(HandlerTimeBucket(~0ull), kHandlerTimeBuckets - 1);
}

TEST(HandlerTimesTest, QuantilesAreTheMidpointsOfTheBucketsThatHoldTheirRank) {
  std::array<uint32_t, kHandlerTimeBuckets> row{};
  EXPECT_EQ(HandlerTimeQuantile(row.data(), 0, 1, 2), 0u) << "no calls";
  // 98 calls of 1000 ns and 2 of 40000 ns.
  row[HandlerTimeBucket(1000)] = 98;
  row[HandlerTimeBucket(40000)] = 2;
  const uint32_t fast = HandlerTimeBucket(1000), slow = HandlerTimeBucket(40000);
  const uint64_t fast_mid = (HandlerTimeBucketLow(fast) + HandlerTimeBucketHigh(fast)) / 2;
  const uint64_t slow_mid = (HandlerTimeBucketLow(slow) + HandlerTimeBucketHigh(slow)) / 2;
  EXPECT_EQ(HandlerTimeQuantile(row.data(), 100, 1, 2), fast_mid);
  EXPECT_EQ(HandlerTimeQuantile(row.data(), 100, 98, 100), fast_mid) << "the 98th of 100";
  EXPECT_EQ(HandlerTimeQuantile(row.data(), 100, 99, 100), slow_mid) << "the 99th of 100";
  // The midpoint is within 12.5 % of any time in its bucket.
  EXPECT_LE(fast_mid, 1125u);
  EXPECT_GE(fast_mid, 1000u * 8 / 9);
  // One call: every quantile is its bucket.
  row.fill(0);
  row[kHandlerTimeBuckets - 1] = 1;
  EXPECT_EQ(HandlerTimeQuantile(row.data(), 1, 99, 100), HandlerTimeBucketLow(kHandlerTimeBuckets - 1));
}

}  // namespace
}  // namespace rk
