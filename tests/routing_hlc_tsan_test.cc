// Copyright 2026 The RingKernel Authors.
//
// Named routes (include/ringkernel/device/routing.h) under ThreadSanitizer,
// and the hybrid logical clock (hlc.h) over random event sequences.
//
// Routes: a binder thread rebinds routes while reader threads resolve
// them, as the service warp and sending workers do on the GPU. Every read
// must be a value that was bound (or kNoActorValue), and whoever sees a
// binding must also see what the binder wrote before binding it (the
// actor's spawn) — TSan reports a race if the release/acquire pair does not
// order them.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "ringkernel/device/hlc.h"
#include "ringkernel/device/routing.h"

namespace rk {
namespace {

TEST(RoutingTest, UnknownAndUnboundRoutes) {
  u32 routes[3] = {kNoActorValue, 7, kNoActorValue};
  EXPECT_EQ(RouteTarget(routes, 3, 0), kNoActorValue);
  EXPECT_EQ(RouteTarget(routes, 3, 1), 7u);
  // A name the program never used has index -1; indices past the table are
  // unknown too.
  EXPECT_EQ(RouteTarget(routes, 3, -1), kNoActorValue);
  EXPECT_EQ(RouteTarget(routes, 3, 3), kNoActorValue);
  EXPECT_EQ(RouteTarget(routes, 3, 1 << 30), kNoActorValue);
  EXPECT_EQ(RouteTarget(routes, 0, 0), kNoActorValue);
  RouteBind(routes, 2, 9);
  EXPECT_EQ(RouteTarget(routes, 3, 2), 9u);
  RouteBind(routes, 1, kNoActorValue);
  EXPECT_EQ(RouteTarget(routes, 3, 1), kNoActorValue);
}

// The binder spawns fresh actors (writing their state with plain stores)
// and binds routes to them, sometimes unbinding; readers resolve routes and
// read the state of whatever actor they got with plain loads.
TEST(RoutingTest, RebindingWhileReading) {
  constexpr u32 kRoutes = 4;
  constexpr u32 kActors = 20000;  // each spawned once, bound once
  constexpr int kReaders = 3;
  std::vector<u64> actor_state(kActors, 0);  // plain memory, like an actor's spawn
  u32 routes[kRoutes];
  for (u32& r : routes) r = kNoActorValue;
  // For each route, the actors ever bound to it (written by the binder
  // before binding; read by the checker after everyone joined).
  std::vector<std::set<u32>> bound(kRoutes);
  std::atomic<bool> done{false};

  std::thread binder([&] {
    std::mt19937 rng(1);
    for (u32 actor = 0; actor < kActors; ++actor) {
      const u32 route = rng() % kRoutes;
      actor_state[actor] = u64{actor} * 7919 + 1;  // the "spawn"
      bound[route].insert(actor);
      RouteBind(routes, route, actor);
      if (rng() % 8 == 0) RouteBind(routes, rng() % kRoutes, kNoActorValue);
    }
    done = true;
  });

  struct ReaderResult {
    u64 reads = 0;
    u64 hits = 0;
    std::vector<std::vector<u32>> seen{kRoutes};
    std::string error;
  };
  std::vector<ReaderResult> results(kReaders);
  std::vector<std::thread> readers;
  for (int r = 0; r < kReaders; ++r) {
    readers.emplace_back([&, r] {
      ReaderResult& out = results[r];
      std::mt19937 rng(100 + r);
      while (!done.load(std::memory_order_relaxed) || out.reads < 1000) {
        const i32 index = static_cast<i32>(rng() % (kRoutes + 1)) - 1;  // -1 .. kRoutes-1
        const u32 target = RouteTarget(routes, kRoutes, index);
        ++out.reads;
        if (target == kNoActorValue) continue;
        if (index < 0 || target >= kActors) {
          out.error = "route " + std::to_string(index) + " resolved to " + std::to_string(target);
          return;
        }
        // The actor's spawn is visible to whoever sees it bound.
        if (actor_state[target] != u64{target} * 7919 + 1) {
          out.error = "actor " + std::to_string(target) + " is bound but its spawn is not visible";
          return;
        }
        ++out.hits;
        out.seen[index].push_back(target);
      }
    });
  }
  binder.join();
  for (std::thread& t : readers) t.join();

  u64 hits = 0;
  for (int r = 0; r < kReaders; ++r) {
    ASSERT_EQ(results[r].error, "") << "reader " << r;
    hits += results[r].hits;
    for (u32 route = 0; route < kRoutes; ++route) {
      // Every value read through a route was bound to that route: never a
      // mix of two bindings, never another route's actor.
      for (u32 target : results[r].seen[route]) {
        ASSERT_TRUE(bound[route].count(target)) << "reader " << r << " route " << route << " read " << target;
      }
      // Per reader, a route's bindings are seen in the order they were
      // made (fresh actors are bound in increasing order).
      EXPECT_TRUE(std::is_sorted(results[r].seen[route].begin(), results[r].seen[route].end()))
          << "reader " << r << " saw route " << route << " go back to an older binding";
    }
  }
  EXPECT_GT(hits, 0u);
}

// ---------------------------------------------------------------------------
// HLC

u64 Pt(u64 now_ns) { return now_ns & ~kHlcLogicalMask; }

TEST(HlcTest, PackedLayout) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 100000; ++i) {
    const u64 t = rng();
    EXPECT_EQ(HlcPhysical(t) | HlcLogical(t), t);
    EXPECT_EQ(HlcPhysical(t) & kHlcLogicalMask, 0u);
    EXPECT_LE(HlcLogical(t), kHlcLogicalMask);
    // Packed timestamps order by physical part first, then logical.
    const u64 u = rng();
    if (HlcPhysical(t) != HlcPhysical(u)) {
      ASSERT_EQ(t < u, HlcPhysical(t) < HlcPhysical(u));
    } else {
      ASSERT_EQ(t < u, HlcLogical(t) < HlcLogical(u));
    }
  }
}

TEST(HlcTest, TickIsMonotonicAndTracksPhysicalTime) {
  std::mt19937_64 rng(11);
  for (int run = 0; run < 200; ++run) {
    u64 clock = 0;
    u64 now = rng() % (u64{1} << 50);
    for (int i = 0; i < 2000; ++i) {
      // Physical time mostly advances by less than a tick, sometimes jumps,
      // sometimes steps back (another SM's timer, a clock correction).
      const u64 r = rng() % 10;
      if (r < 6) {
        now += rng() % 3000;
      } else if (r < 8) {
        now += rng() % (u64{1} << 24);
      } else if (now > (u64{1} << 20)) {
        now -= rng() % (u64{1} << 20);
      }
      const u64 next = HlcTick(clock, now);
      ASSERT_GT(next, clock) << "the clock went backwards or stood still";
      ASSERT_GE(next, Pt(now)) << "the clock fell behind physical time";
      if (Pt(now) > clock) {
        ASSERT_EQ(next, Pt(now)) << "a new physical tick restarts the counter";
        ASSERT_EQ(HlcLogical(next), 0u);
      } else {
        ASSERT_EQ(next, clock + 1) << "a stalled physical clock advances the counter by one";
      }
      clock = next;
    }
  }
}

TEST(HlcTest, CounterOverflowCarriesIntoThePhysicalPart) {
  const u64 clock = Pt(u64{5} << 30) | kHlcLogicalMask;  // the counter is full
  const u64 next = HlcTick(clock, u64{5} << 30);
  EXPECT_GT(next, clock);
  EXPECT_EQ(HlcLogical(next), 0u);
  EXPECT_EQ(HlcPhysical(next), HlcPhysical(clock) + kHlcLogicalMask + 1);
  EXPECT_GT(HlcMerge(0, clock, 0), clock);
}

TEST(HlcTest, MergeIsLaterThanBothClocks) {
  std::mt19937_64 rng(13);
  for (int i = 0; i < 200000; ++i) {
    const u64 base = rng() % (u64{1} << 50);
    const u64 local = base + rng() % (u64{1} << 22);
    const u64 remote = base + rng() % (u64{1} << 22);
    const u64 now = base + rng() % (u64{1} << 22);
    const u64 merged = HlcMerge(local, remote, now);
    ASSERT_GT(merged, local);
    ASSERT_GT(merged, remote);
    ASSERT_GE(merged, Pt(now));
    ASSERT_EQ(merged, std::max(HlcTick(local, now), HlcTick(remote, now)))
        << "merging is ticking the later of the two clocks";
  }
}

// Actors with skewed, wobbling physical clocks exchange messages at random:
// every receive is later than its send and than the receiver's previous
// event, and each actor's events are strictly increasing.
TEST(HlcTest, CausalityAcrossActorsWithSkewedClocks) {
  constexpr int kActors = 8;
  std::mt19937_64 rng(17);
  std::vector<u64> clock(kActors, 0);
  std::vector<i64> skew(kActors);
  for (i64& s : skew) s = static_cast<i64>(rng() % 2000000) - 1000000;  // ±1 ms
  struct InFlight {
    int to;
    u64 stamp;
  };
  std::vector<InFlight> in_flight;
  u64 true_time = u64{1} << 40;
  // An actor's reading of physical time: its skew plus ±50 µs of wobble.
  const auto now_of = [&](int actor) {
    return static_cast<u64>(static_cast<i64>(true_time) + skew[actor] + static_cast<i64>(rng() % 100000) - 50000);
  };
  u64 receives = 0;
  for (int step = 0; step < 200000; ++step) {
    true_time += rng() % 500;
    if (!in_flight.empty() && rng() % 2 == 0) {
      // Deliver one message (not necessarily the oldest: no global order).
      const size_t k = rng() % in_flight.size();
      const InFlight m = in_flight[k];
      in_flight.erase(in_flight.begin() + static_cast<long>(k));
      const u64 before = clock[m.to];
      clock[m.to] = HlcMerge(clock[m.to], m.stamp, now_of(m.to));
      ASSERT_GT(clock[m.to], m.stamp) << "a receive is not later than its send";
      ASSERT_GT(clock[m.to], before);
      ++receives;
    } else {
      // A local event that sends a message.
      const int actor = static_cast<int>(rng() % kActors);
      const u64 before = clock[actor];
      clock[actor] = HlcTick(clock[actor], now_of(actor));
      ASSERT_GT(clock[actor], before);
      in_flight.push_back({static_cast<int>(rng() % kActors), clock[actor]});
    }
  }
  EXPECT_GT(receives, 50000u);
}

}  // namespace
}  // namespace rk
