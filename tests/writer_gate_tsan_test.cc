// Copyright 2026 The RingKernel Authors.
//
// The gate between the host's writers into the rings to the GPU and Stop
// (runtime/writer_gate.h), driven by host threads under ThreadSanitizer as
// SystemImpl::Send and SystemImpl::Stop drive it.
//
// Test goals: every writer the gate admits has finished its record before
// the closer's wait returns (the closer then reads each record with plain
// loads, which ThreadSanitizer reports as a race if any writer could still
// be writing), and every writer that comes after Close is refused — so a
// writer that returned OK is always among those the closer counted. Before
// the gate, Send looked at "accepting" and wrote afterwards: a writer could
// pass the look, be preempted, and write after Stop had counted the ring.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/writer_gate.h"

namespace rk {
namespace {

// What one writer thread writes: plain (non-atomic) memory, as the records
// the runtime writes into a ring are plain words to the closer.
struct WriterLog {
  uint64_t count = 0;  // records written
  std::vector<uint64_t> values;
};

// Both ways the writer can be ordered against the closer: the closer's
// process-wide barrier (what ships where the kernel has membarrier) and the
// writer's own sequentially consistent store.
class WriterGateModeTest : public testing::TestWithParam<bool> {};

TEST_P(WriterGateModeTest, EveryAdmittedWriterFinishesBeforeTheCloserLooksAndLaterOnesAreRefused) {
  constexpr int kWriters = 4;
  constexpr int kRounds = 200;
  constexpr uint64_t kMaxRecords = 4096;
  {
    WriterGate probe;
    probe.Init(1, GetParam());
    if (GetParam() && !probe.asymmetric()) {
      GTEST_SKIP() << "this kernel offers no private expedited membarrier: Send fences itself here";
    }
    EXPECT_EQ(probe.asymmetric(), GetParam());
  }
  for (int round = 0; round < kRounds; ++round) {
    WriterGate gate;
    gate.Init(kWriters, GetParam());
    gate.Open();
    std::vector<WriterLog> logs(kWriters);
    for (WriterLog& l : logs) l.values.resize(kMaxRecords);
    std::vector<uint64_t> admitted(kWriters, 0);  // each written by its own thread only
    std::vector<uint64_t> refused(kWriters, 0);
    std::atomic<int> started{0};
    std::vector<std::thread> writers;
    for (int t = 0; t < kWriters; ++t) {
      writers.emplace_back([&, t] {
        started.fetch_add(1);
        WriterLog& log = logs[t];
        for (uint64_t n = 0; n < kMaxRecords; ++n) {
          if (!gate.TryEnter(static_cast<uint32_t>(t))) {
            ++refused[t];
            // Refused once, refused for good: the gate never reopens.
            EXPECT_FALSE(gate.TryEnter(static_cast<uint32_t>(t)));
            return;
          }
          log.values[log.count] = (uint64_t{static_cast<uint32_t>(t)} << 32) | n;
          ++log.count;
          gate.Leave(static_cast<uint32_t>(t));
          ++admitted[t];
          if ((n & 7) == 0) std::this_thread::yield();
        }
      });
    }
    while (started.load() < kWriters) std::this_thread::yield();
    // Let the writers get going for a round-dependent while, then close.
    for (int spin = 0; spin < (round % 16) * 50; ++spin) std::this_thread::yield();
    gate.Close();
    while (gate.InFlight() != 0) std::this_thread::yield();
    // What the closer counts: every record, read with plain loads.
    std::vector<uint64_t> seen(kWriters);
    for (int t = 0; t < kWriters; ++t) {
      seen[t] = logs[t].count;
      for (uint64_t n = 0; n < seen[t]; ++n) {
        ASSERT_EQ(logs[t].values[n], (uint64_t{static_cast<uint32_t>(t)} << 32) | n);
      }
    }
    for (std::thread& w : writers) w.join();
    for (int t = 0; t < kWriters; ++t) {
      EXPECT_EQ(admitted[t], seen[t]) << "round " << round << ", writer " << t
                                      << ": a writer admitted after the closer counted";
      EXPECT_EQ(logs[t].count, seen[t]) << "round " << round << ", writer " << t;
    }
    EXPECT_EQ(gate.InFlight(), 0u);
  }
}

INSTANTIATE_TEST_SUITE_P(Modes, WriterGateModeTest, testing::Values(true, false),
                         [](const testing::TestParamInfo<bool>& i) {
                           return i.param ? std::string("ClosersBarrier") : std::string("WritersFence");
                         });

// The runtime's fault injection pauses a Send after it was admitted: the
// closer must wait for it, however long, and then see its record.
TEST(WriterGateTest, TheCloserWaitsForAWriterPausedAfterItsAdmission) {
  WriterGate gate;
  gate.Init(2);
  gate.Open();
  std::atomic<bool> admitted{false};
  std::atomic<bool> resume{false};
  uint64_t record = 0;  // plain, as a ring's words are
  std::thread writer([&] {
    ASSERT_TRUE(gate.TryEnter(1));
    admitted.store(true);
    while (!resume.load()) std::this_thread::yield();
    record = 42;
    gate.Leave(1);
  });
  while (!admitted.load()) std::this_thread::yield();
  gate.Close();
  EXPECT_FALSE(gate.TryEnter(0)) << "a writer after Close is refused";
  EXPECT_FALSE(gate.TryEnter(1));
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(50);
  while (std::chrono::steady_clock::now() < until) {
    ASSERT_EQ(gate.InFlight(), 1u) << "the paused writer is still counted";
    std::this_thread::yield();
  }
  resume.store(true);
  while (gate.InFlight() != 0) std::this_thread::yield();
  EXPECT_EQ(record, 42u);
  writer.join();
}

// Each writing thread gets a slot of its own; once every slot is taken,
// later threads are counted on the shared lanes, and the closer waits for
// them just the same.
TEST(WriterGateTest, ThreadsBeyondTheSlotsShareTheLanesAndAreCountedToo) {
  WriterGate gate;
  gate.Init(2);
  gate.Open();
  for (uint32_t i = 0; i < WriterGate::kSlots; ++i) {
    std::thread t([&] {
      ASSERT_TRUE(gate.TryEnter(0));
      gate.Leave(0);
    });
    t.join();
  }
  ASSERT_EQ(gate.InFlight(), 0u);
  std::atomic<bool> admitted{false};
  std::atomic<bool> resume{false};
  uint64_t record = 0;
  std::thread late([&] {
    ASSERT_TRUE(gate.TryEnter(1));  // no slot left: lane 1
    admitted.store(true);
    while (!resume.load()) std::this_thread::yield();
    record = 7;
    gate.Leave(1);
  });
  while (!admitted.load()) std::this_thread::yield();
  gate.Close();
  EXPECT_EQ(gate.InFlight(), 1u) << "the writer on a lane is counted";
  resume.store(true);
  while (gate.InFlight() != 0) std::this_thread::yield();
  EXPECT_EQ(record, 7u);
  late.join();
  std::thread refused([&] { EXPECT_FALSE(gate.TryEnter(0)); });
  refused.join();
  EXPECT_EQ(gate.InFlight(), 0u) << "a refused writer leaves nothing counted";
}

TEST(WriterGateTest, NothingIsAdmittedBeforeOpen) {
  WriterGate gate;
  gate.Init(1);
  EXPECT_FALSE(gate.open());
  EXPECT_FALSE(gate.TryEnter(0));
  EXPECT_EQ(gate.InFlight(), 0u);
  gate.Open();
  EXPECT_TRUE(gate.open());
  ASSERT_TRUE(gate.TryEnter(0));
  EXPECT_EQ(gate.InFlight(), 1u);
  gate.Leave(0);
  EXPECT_EQ(gate.InFlight(), 0u);
}

}  // namespace
}  // namespace rk
