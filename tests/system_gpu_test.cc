// Copyright 2026 The RingKernel Authors.
//
// Test goals: the GPU runtime end to end on a real device — one cooperative
// launch, messages in from the host, K2K between actors, replies out — and
// each semantic promise of the runtime, made observable by the actors of
// tests/data/gpu/semantics.cu:
//   * one message at a time per actor, FIFO per (sender, receiver), nothing
//     lost or duplicated with many host threads and many K2K producers;
//   * a full mailbox gives kFull on the device and is counted;
//   * an unbound route gives kNoActor and is counted; binding it while the
//     system runs takes effect;
//   * ctx.fail stops only that actor and the host learns the code;
//   * the HLC is monotonic per actor and ordered across a send;
//   * block handlers with scratch and sync; a stream of block messages,
//     handled several to a meeting (block runs), keeps each sender's order
//     with its thread-handler messages, every rank runs each, and Asks to
//     the receiver are answered meanwhile;
//   * default member initialisers run at spawn;
//   * host messages of mixed sizes wrap the host ring whole and in order;
//   * Stop drains and reports; bad host input gets a clear error, and a host
//     type whose layout signature is not the program's is refused;
//   * a Send racing with Stop is handled or refused, never OK and lost;
//   * dead letters and failures wait for a full ring back rather than
//     vanish, and are all accounted for (taken, or counted past the host's
//     bound); a reply the background reader drains still reaches its Ask;
//     the host's inbox is bounded with kFull back-pressure to the senders;
//   * a delegate's reply (ctx.forward) answers the original Ask or actor, and
//     a reply to an Ask that timed out never reaches Receive;
//   * ctx.retry_later waits for room without deadlocking a consumer that
//     shares the producer's worker thread;
//   * a host record half written (its writer preempted) is never taken torn
//     and holds up only its own worker's ring.
// Faults (traps, stuck handlers) are in fault_gpu_test.cc. Every test skips
// with the reason when there is no CUDA device.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/codegen.h"
#include "jit/nvrtc_compiler.h"
#include "ringkernel/runtime.h"
#include "runtime/cuda_driver.h"
#include "runtime/device_buffer.h"
#include "runtime/mapped_buffer.h"
#include "runtime/module.h"
#include "runtime/primary_context.h"
#include "runtime/stream.h"
#include "runtime/system_access.h"
#include "tests/gpu_test_support.h"
#include "tests/test_support.h"

// The message types of semantics.cu, generated at build time from it by
// ringkernel_add_program (tests/CMakeLists.txt), with their layout
// signatures: every Send and Ask below also checks them against the program.
#include "semantics_program.h"

namespace rk {
namespace {

using ::rk::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;

// Written by hand on purpose: Seq as a stale header might declare it, with
// the program's name, size and alignment but the fields in another order
// (and the layout signature of that order). Only the layout check can tell
// it from the program's Seq, which
// AHostTypeWithAStaleLayoutIsRefusedAndNothingIsSent checks; a header
// generated from semantics.cu is always the program's, so it cannot be one.
struct StaleSeq { int32_t n; int32_t producer; };
// The program's Poked has one int: a host type of its name and another size.
struct WidePoked { int32_t pokes; int32_t extra; };
// The host's side of kHeldSource's messages (below).
struct HoldGo { ActorId to; };
struct HoldStarted { int32_t unused; };
struct HoldSecond { int32_t unused; };
struct HoldQuery { int32_t unused; };
struct HoldOrder { int32_t order; int32_t count; };
}  // namespace
}  // namespace rk

RK_HOST_MESSAGE(rk::HoldGo, "HoldGo");
RK_HOST_MESSAGE(rk::HoldStarted, "HoldStarted");
RK_HOST_MESSAGE(rk::HoldSecond, "HoldSecond");
RK_HOST_MESSAGE(rk::HoldQuery, "HoldQuery");
RK_HOST_MESSAGE(rk::HoldOrder, "HoldOrder");
RK_HOST_MESSAGE_LAYOUT(rk::StaleSeq, "Seq", "n:int32@0;producer:int32@4");
RK_HOST_MESSAGE(rk::WidePoked, "Poked");

namespace rk {
namespace {

constexpr absl::Duration kAsk = absl::Seconds(5);

class SystemGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RK_GPU_TEST_SETUP(runtime_);
    absl::StatusOr<Program> p =
        runtime_->CompileFiles({::rk::testing::TestDataDir() + "/gpu/semantics.cu"}, ProgramOptions());
    ASSERT_TRUE(p.ok()) << p.status();
    program_ = *p;
  }
  // How semantics.cu is built (a parameterised suite may build it otherwise).
  virtual CompileOptions ProgramOptions() const { return {}; }
  std::unique_ptr<System> StartSystem(SystemOptions o = {}) {
    absl::StatusOr<std::unique_ptr<System>> s = runtime_->Start(program_, ::rk::testing::TestOptions(o));
    EXPECT_TRUE(s.ok()) << s.status();
    return s.ok() ? std::move(*s) : nullptr;
  }
  ActorId SpawnOrDie(System& s, const std::string& type, const std::string& name) {
    absl::StatusOr<ActorId> id = s.Spawn(type, name);
    EXPECT_TRUE(id.ok()) << id.status();
    return id.ok() ? *id : ActorId{};
  }
  // A Fragile actor on the worker of `of` (its host messages share that
  // worker's ring), spawning up to 8 to find one.
  std::optional<ActorId> SpawnBeside(System& s, ActorId of) {
    for (int i = 0; i < 8; ++i) {
      const ActorId a = SpawnOrDie(s, "Fragile", "beside" + std::to_string(i));
      if (internal::SystemAccess::WorkerOf(s, a) == internal::SystemAccess::WorkerOf(s, of)) return a;
    }
    return std::nullopt;
  }
  // `name`'s statistics now (empty ones, and a failure, if they cannot be
  // read).
  static ActorStats StatsOf(System& s, const std::string& name) {
    absl::StatusOr<SystemStats> st = s.Stats();
    EXPECT_TRUE(st.ok()) << st.status();
    const ActorStats* a = st.ok() ? st->Find(name) : nullptr;
    EXPECT_NE(a, nullptr) << name;
    return a != nullptr ? *a : ActorStats{};
  }
  // One worker whose ring back holds 8 records and whose host inbox takes
  // 4: an actor's messages to the host soon fill both.
  std::unique_ptr<System> StartWithSmallRingBack() {
    SystemOptions o;
    o.workers = 1;
    o.outbound_ring_capacity = 8;
    o.host_inbox_capacity = 4;
    return StartSystem(o);
  }
  // MixChecker `mix` has received `messages` messages (1, 2, ...), each
  // whole and in order.
  static void ExpectMixWholeInOrder(System& s, ActorId mix, int messages) {
    absl::StatusOr<MixReport> r = s.Ask<MixReport>(mix, MixQuery{0}, kAsk);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->received, messages);
    EXPECT_EQ(r->last, messages);
    EXPECT_EQ(r->out_of_order, 0);
    EXPECT_EQ(r->bad_bytes, 0) << "a torn payload";
  }
  // Stops `s` and checks that the stop drained everything it had accepted:
  // nothing left unhandled.
  static void ExpectStopDrained(System& s) {
    absl::StatusOr<StopReport> rep = s.Stop();
    ASSERT_TRUE(rep.ok()) << rep.status();
    EXPECT_TRUE(rep->drained);
    EXPECT_EQ(rep->unhandled, 0u) << rep->ToString();
  }
  // Message `n` of a MixChecker type, its first `len` bytes as it checks them.
  template <typename M>
  static M MixMessage(int n, int len) {
    M m{};
    m.n = n;
    for (int i = 0; i < len; ++i) m.bytes[i] = static_cast<unsigned char>(n * 7 + i);
    return m;
  }
  // A 400-byte Large message whose bytes MixChecker checks.
  static Large LargeMessage(int n) {
    Large m = MixMessage<Large>(n, 400);
    m.len = 400;
    return m;
  }

  std::unique_ptr<Runtime> runtime_;
  Program program_;
};

TEST_F(SystemGpuTest, ManyHostThreadsLoseNothingAndKeepFifoPerThread) {
  auto sys = StartSystem();
  ASSERT_NE(sys, nullptr);
  const ActorId seq = SpawnOrDie(*sys, "Sequencer", "seq");
  const int kThreads = 8, kPerThread = ::rk::testing::Scaled(20000);
  std::vector<std::thread> threads;
  std::atomic<int> refused{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int n = 1; n <= kPerThread; ++n) {
        absl::Status s = sys->Send(seq, Seq{t, n}, absl::Now() + absl::Seconds(10));
        if (!s.ok()) {
          refused.fetch_add(1);
          ADD_FAILURE() << s;
          return;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  ASSERT_EQ(refused.load(), 0);
  // Ask from each producer's point of view; the query follows its sends.
  for (int t = 0; t < kThreads; ++t) {
    absl::StatusOr<SeqReport> r = sys->Ask<SeqReport>(seq, SeqQuery{t}, kAsk);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->last, kPerThread) << "producer " << t;
    EXPECT_EQ(r->violations, 0);
  }
  absl::StatusOr<SeqReport> r = sys->Ask<SeqReport>(seq, SeqQuery{0}, kAsk);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->received, int64_t{kThreads} * kPerThread);
  absl::StatusOr<SystemStats> st = sys->Stats();
  ASSERT_TRUE(st.ok()) << st.status();
  const ActorStats* a = st->Find("seq");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->received, uint64_t{kThreads} * kPerThread + kThreads + 1);
  EXPECT_EQ(a->handled, a->received);
  EXPECT_EQ(a->dead_lettered, 0u);
  ASSERT_NO_FATAL_FAILURE(ExpectStopDrained(*sys));
}

// The host → worker ring holds records of their own length: small and large
// messages interleaved in a ring with room for only a few large ones wrap it
// again and again, with skip records at its end, and come out whole and in
// order — the small ones handed over in shared memory, the large ones
// through the mailbox.
TEST_F(SystemGpuTest, HostMessagesOfMixedSizesWrapTheRingAndArriveWholeInOrder) {
  SystemOptions o;
  o.host_ring_capacity = 2;  // room for two records of the largest message
  auto sys = StartSystem(o);
  ASSERT_NE(sys, nullptr);
  const ActorId mix = SpawnOrDie(*sys, "MixChecker", "mix");
  const int kMessages = ::rk::testing::Scaled(20000);
  for (int n = 1; n <= kMessages; ++n) {
    // Runs of small messages between large ones of varying length, so that
    // records start at every unit offset of the ring.
    absl::Status s;
    if (n % 5 == 0 || n % 7 == 0) {
      Large m = MixMessage<Large>(n, 400);
      m.len = (n * 37) % 401;
      s = sys->Send(mix, m, absl::Now() + absl::Seconds(10));
    } else {
      s = sys->Send(mix, MixMessage<Little>(n, 20), absl::Now() + absl::Seconds(10));
    }
    ASSERT_TRUE(s.ok()) << "message " << n << ": " << s;
  }
  ASSERT_NO_FATAL_FAILURE(ExpectMixWholeInOrder(*sys, mix, kMessages));
  ASSERT_NO_FATAL_FAILURE(ExpectStopDrained(*sys));
}

// The largest host message handed over in shared memory is 112 bytes (an
// entry's payload, read and written 16 bytes at a time); one of 120 bytes
// goes through the mailbox. Interleaved with small ones, each kind arrives
// whole (every byte checked) and in order.
TEST_F(SystemGpuTest, HostMessagesEitherSideOfTheHandOversLimitArriveWholeInOrder) {
  static_assert(sizeof(Edge112) == 112 && sizeof(Edge120) == 120, "the sizes the test is about");
  auto sys = StartSystem();
  ASSERT_NE(sys, nullptr);
  const ActorId mix = SpawnOrDie(*sys, "MixChecker", "mix");
  const int kMessages = ::rk::testing::Scaled(20000);
  for (int n = 1; n <= kMessages; ++n) {
    const absl::Time deadline = absl::Now() + absl::Seconds(10);
    const absl::Status s = n % 3 == 0   ? sys->Send(mix, MixMessage<Edge112>(n, 108), deadline)
                           : n % 3 == 1 ? sys->Send(mix, MixMessage<Edge120>(n, 116), deadline)
                                        : sys->Send(mix, MixMessage<Little>(n, 20), deadline);
    ASSERT_TRUE(s.ok()) << "message " << n << ": " << s;
  }
  ASSERT_NO_FATAL_FAILURE(ExpectMixWholeInOrder(*sys, mix, kMessages));
  const ActorStats a = StatsOf(*sys, "mix");
  EXPECT_EQ(a.received, static_cast<uint64_t>(kMessages) + 1);
  EXPECT_EQ(a.dead_lettered, 0u);
  ASSERT_NO_FATAL_FAILURE(ExpectStopDrained(*sys));
}

// Host messages with pauses between them, so that each is found by the
// worker's quiet read (the ring found empty by the wide read before it):
// after a one-unit record that read is one unit wide, and a larger record
// that follows is read again whole; every message arrives whole and in
// order whichever width found it.
TEST_F(SystemGpuTest, HostMessagesOfMixedSizesFoundByQuietReadsArriveWholeInOrder) {
  auto sys = StartSystem();
  ASSERT_NE(sys, nullptr);
  const ActorId mix = SpawnOrDie(*sys, "MixChecker", "mix");
  const int kMessages = ::rk::testing::Scaled(2000);
  for (int n = 1; n <= kMessages; ++n) {
    // One unit, one unit, three units, one unit, three units: each width
    // after each size.
    const absl::Time deadline = absl::Now() + absl::Seconds(10);
    const int kind = n % 5;
    const absl::Status s = kind == 2   ? sys->Send(mix, MixMessage<Edge112>(n, 108), deadline)
                           : kind == 4 ? sys->Send(mix, MixMessage<Edge120>(n, 116), deadline)
                                       : sys->Send(mix, MixMessage<Little>(n, 20), deadline);
    ASSERT_TRUE(s.ok()) << "message " << n << ": " << s;
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
  ASSERT_NO_FATAL_FAILURE(ExpectMixWholeInOrder(*sys, mix, kMessages));
  const ActorStats a = StatsOf(*sys, "mix");
  EXPECT_EQ(a.received, static_cast<uint64_t>(kMessages) + 1);
  EXPECT_EQ(a.dead_lettered, 0u);
  ASSERT_NO_FATAL_FAILURE(ExpectStopDrained(*sys));
}

// Issue 9 item 3: a host writer preempted in the middle of its record. The
// worker takes the record only once all of it is there (never a torn
// payload); meanwhile the records behind it in the same ring are taken (the
// worker passes over the claimed record: a hole), and so are other workers';
// the record then arrives whole and in order. `words_first`: how much of
// the record is written before the pause (0: only its claim, the size word;
// -1: half of it, the header among it).
class PausedWriterTest : public SystemGpuTest, public ::testing::WithParamInterface<int> {};

TEST_P(PausedWriterTest, AHostRecordIsTakenOnlyWholeAndAPausedWriterHoldsUpOnlyItsOwnRecord) {
  SystemOptions o;
  o.workers = 2;
  auto sys = StartSystem(o);
  ASSERT_NE(sys, nullptr);
  const ActorId mix = SpawnOrDie(*sys, "MixChecker", "mix");
  const ActorId other = SpawnOrDie(*sys, "Fragile", "other");
  const std::optional<ActorId> found = SpawnBeside(*sys, mix);
  ASSERT_NE(internal::SystemAccess::WorkerOf(*sys, mix), internal::SystemAccess::WorkerOf(*sys, other))
      << "the test needs an actor on another worker";
  ASSERT_TRUE(found.has_value()) << "the test needs another actor on mix's worker";
  const ActorId beside = *found;
  auto large = [](int n) { return LargeMessage(n); };
  ASSERT_TRUE(sys->Send(mix, large(1)).ok());
  std::atomic<bool> paused{false};
  std::atomic<bool> resume{false};
  internal::SystemAccess::PauseNextRecordMidway(
      *sys,
      [&] {
        paused.store(true);
        while (!resume.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      },
      GetParam());
  std::thread writer([&] { EXPECT_TRUE(sys->Send(mix, large(2)).ok()); });
  while (!paused.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  // Record 2 is claimed in mix's ring and not whole. Neither the other
  // worker's ring nor the records behind it in its own ring wait for it.
  for (int i = 0; i < 10; ++i) {
    absl::StatusOr<Poked> p = sys->Ask<Poked>(other, Poke{0}, kAsk);
    ASSERT_TRUE(p.ok()) << p.status();
    EXPECT_EQ(p->pokes, i + 1);
    absl::StatusOr<Poked> q = sys->Ask<Poked>(beside, Poke{0}, kAsk);
    ASSERT_TRUE(q.ok()) << "a message behind the paused record, in its ring: " << q.status();
    EXPECT_EQ(q->pokes, i + 1);
  }
  // The poller has looked at the partial record for a while: nothing taken.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(StatsOf(*sys, "mix").handled, 1u) << "a partly written record was taken";
  resume.store(true);
  writer.join();
  ASSERT_NO_FATAL_FAILURE(ExpectMixWholeInOrder(*sys, mix, 2));
  // Later messages in the ring go on as before (the hole is closed).
  for (int i = 0; i < 3; ++i) {
    absl::StatusOr<Poked> q = sys->Ask<Poked>(beside, Poke{0}, kAsk);
    ASSERT_TRUE(q.ok()) << q.status();
    EXPECT_EQ(q->pokes, 11 + i);
  }
  absl::StatusOr<StopReport> rep = sys->Stop();
  ASSERT_TRUE(rep.ok()) << rep.status();
  EXPECT_EQ(rep->unhandled, 0u) << rep->ToString();
}

INSTANTIATE_TEST_SUITE_P(WrittenBeforeThePause, PausedWriterTest, ::testing::Values(0, -1),
                         [](const ::testing::TestParamInfo<int>& i) {
                           return i.param == 0 ? std::string("OnlyTheClaim") : std::string("Half");
                         });

// A ring that one host thread alone writes is that thread's: its Sends
// stream their records (runtime/ring_owner.h). A second thread that sends to
// the same worker takes the ring, which is shared from then on. Each
// thread's messages arrive in order, none lost, before and after.
TEST_F(SystemGpuTest, ALoneSendersRingIsItsOwnUntilASecondThreadSharesItAndEachKeepsItsOrder) {
  if (std::getenv("RINGKERNEL_SHARED_RINGS") != nullptr) GTEST_SKIP() << "RINGKERNEL_SHARED_RINGS is set";
  SystemOptions o;
  o.workers = 2;
  auto sys = StartSystem(o);
  ASSERT_NE(sys, nullptr);
  const ActorId seq = SpawnOrDie(*sys, "Sequencer", "seq");
  const uint32_t w = internal::SystemAccess::WorkerOf(*sys, seq);
  EXPECT_EQ(internal::SystemAccess::RingOwnerOf(*sys, w), RingOwners::kFree);
  const int kFirst = ::rk::testing::Scaled(5000), kEach = ::rk::testing::Scaled(20000);
  for (int n = 1; n <= kFirst; ++n) ASSERT_TRUE(sys->Send(seq, Seq{0, n}, absl::Now() + absl::Seconds(10)).ok());
  const uint32_t owner = internal::SystemAccess::RingOwnerOf(*sys, w);
  EXPECT_NE(owner, RingOwners::kFree);
  EXPECT_NE(owner, RingOwners::kShared) << "one thread alone wrote the ring (the GPU machine's kernel has membarrier)";
  std::thread second([&] {
    for (int n = 1; n <= kEach; ++n) {
      absl::Status st = sys->Send(seq, Seq{1, n}, absl::Now() + absl::Seconds(10));
      if (!st.ok()) {
        ADD_FAILURE() << st;
        return;
      }
    }
  });
  for (int n = kFirst + 1; n <= kFirst + kEach; ++n) {
    absl::Status st = sys->Send(seq, Seq{0, n}, absl::Now() + absl::Seconds(10));
    ASSERT_TRUE(st.ok()) << st;
  }
  second.join();
  EXPECT_EQ(internal::SystemAccess::RingOwnerOf(*sys, w), RingOwners::kShared);
  for (int p = 0; p < 2; ++p) {
    absl::StatusOr<SeqReport> r = sys->Ask<SeqReport>(seq, SeqQuery{p}, kAsk);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->last, p == 0 ? kFirst + kEach : kEach) << "producer " << p;
    EXPECT_EQ(r->violations, 0);
    EXPECT_EQ(r->received, int64_t{kFirst} + 2 * kEach);
  }
  ASSERT_NO_FATAL_FAILURE(ExpectStopDrained(*sys));
}

// The owner of a ring stops in the middle of a record (after it saw it
// still owns the ring, before its stores: preempted, say). Another thread's
// Sends to that worker take the ring without waiting for it, and their
// records are taken past the stopped one (a hole, whose place the taker
// claimed for the owner); the stopped record arrives whole and in order once
// its owner goes on.
TEST_F(SystemGpuTest, ARingsOwnerStoppedMidRecordHoldsUpOnlyItsOwnRecord) {
  if (std::getenv("RINGKERNEL_SHARED_RINGS") != nullptr) GTEST_SKIP() << "RINGKERNEL_SHARED_RINGS is set";
  SystemOptions o;
  o.workers = 2;
  auto sys = StartSystem(o);
  ASSERT_NE(sys, nullptr);
  const ActorId mix = SpawnOrDie(*sys, "MixChecker", "mix");
  const std::optional<ActorId> found = SpawnBeside(*sys, mix);
  ASSERT_TRUE(found.has_value()) << "the test needs another actor on mix's worker";
  const ActorId beside = *found;
  const uint32_t w = internal::SystemAccess::WorkerOf(*sys, mix);
  auto large = [](int n) { return LargeMessage(n); };
  std::atomic<bool> stopped{false};
  std::atomic<bool> resume{false};
  std::atomic<uint32_t> owner_while_stopped{0};
  std::thread writer([&] {
    EXPECT_TRUE(sys->Send(mix, large(1)).ok());  // the ring is this thread's
    internal::SystemAccess::StopNextOwnedRecord(*sys, [&] {
      owner_while_stopped.store(internal::SystemAccess::RingOwnerOf(*sys, w));
      stopped.store(true);
      while (!resume.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    });
    EXPECT_TRUE(sys->Send(mix, large(2)).ok());
  });
  while (!stopped.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_NE(owner_while_stopped.load(), RingOwners::kShared) << "the writer owned the ring when it stopped";
  EXPECT_NE(owner_while_stopped.load(), RingOwners::kFree);
  // This thread takes the ring and its messages go past the stopped record.
  for (int i = 0; i < 10; ++i) {
    absl::StatusOr<Poked> q = sys->Ask<Poked>(beside, Poke{0}, kAsk);
    ASSERT_TRUE(q.ok()) << "a message behind the stopped record, in its ring: " << q.status();
    EXPECT_EQ(q->pokes, i + 1);
  }
  EXPECT_EQ(internal::SystemAccess::RingOwnerOf(*sys, w), RingOwners::kShared);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(StatsOf(*sys, "mix").handled, 1u) << "the stopped record was taken";
  resume.store(true);
  writer.join();
  for (int n = 3; n <= 6; ++n) ASSERT_TRUE(sys->Send(mix, large(n)).ok());
  ASSERT_NO_FATAL_FAILURE(ExpectMixWholeInOrder(*sys, mix, 6));
  absl::StatusOr<StopReport> rep = sys->Stop();
  ASSERT_TRUE(rep.ok()) << rep.status();
  EXPECT_EQ(rep->unhandled, 0u) << rep->ToString();
}

// Takes the Produced report that each of `n` senders (Producers,
// Alternators) sends the host when done, waiting up to `timeout` for each.
// A report that does not come, or does not read, fails the test and ends
// the list early; every report must say it sent `count`.
std::vector<Produced> TakeProducedReports(System& sys, int n, int count, absl::Duration timeout,
                                          const std::string& who) {
  std::vector<Produced> reports;
  while (static_cast<int>(reports.size()) < n) {
    absl::StatusOr<std::optional<Message>> m = sys.Receive(timeout);
    if (!m.ok() || !m->has_value()) {
      ADD_FAILURE() << "only " << reports.size() << " " << who << " finished"
                    << (m.ok() ? std::string() : ": " + m.status().ToString());
      break;
    }
    absl::StatusOr<Produced> pr = (*m)->As<Produced>();
    if (!pr.ok()) {
      ADD_FAILURE() << pr.status();
      break;
    }
    EXPECT_EQ(pr->sent, count);
    reports.push_back(*pr);
  }
  return reports;
}

// A stream's messages run several to a handler's call in programs built
// with RK_STREAM_RUNS (rt_dispatch.cuh, RunMore); the parameter builds the
// program with it. Either way: FIFO per sender with many senders into one
// mailbox (the first test below), a message handed back with retry_later in
// the middle of a stream comes back before the ones after it, and a failure
// in the middle of a stream handles exactly the messages before it and
// reports the rest.
class StreamRunsTest : public SystemGpuTest, public ::testing::WithParamInterface<bool> {
 protected:
  CompileOptions ProgramOptions() const override {
    CompileOptions co;
    if (GetParam()) co.defines.push_back("RK_STREAM_RUNS");
    return co;
  }
  // Streams `count` Seq messages from a Producer to `to`; returns what the
  // producer reported.
  Produced Stream(System& sys, ActorId to, int count) {
    const ActorId producer = SpawnOrDie(sys, "Producer", "producer");
    EXPECT_TRUE(sys.Send(producer, Produce{to, 0, count}).ok());
    absl::StatusOr<std::optional<Message>> m = sys.Receive(absl::Seconds(30));
    EXPECT_TRUE(m.ok()) << m.status();
    if (!m.ok() || !m->has_value()) {
      ADD_FAILURE() << "the producer never finished";
      return Produced{};
    }
    absl::StatusOr<Produced> pr = (*m)->As<Produced>();
    EXPECT_TRUE(pr.ok()) << pr.status();
    return pr.ok() ? *pr : Produced{};
  }
};

TEST_P(StreamRunsTest, ManyK2kProducersLoseNothingAndKeepFifoPerSender) {
  SystemOptions o;
  o.mailbox_capacity = 64;  // small, so producers meet kFull and retry
  auto sys = StartSystem(o);
  ASSERT_NE(sys, nullptr);
  const ActorId seq = SpawnOrDie(*sys, "Sequencer", "seq");
  const int kProducers = 32, kCount = ::rk::testing::Scaled(5000);
  std::vector<ActorId> producers;
  for (int p = 0; p < kProducers; ++p) producers.push_back(SpawnOrDie(*sys, "Producer", "p" + std::to_string(p)));
  for (int p = 0; p < kProducers; ++p) {
    ASSERT_TRUE(sys->Send(producers[p], Produce{seq, p, kCount}).ok());
  }
  // Each producer replies to the host when done.
  const std::vector<Produced> reports = TakeProducedReports(*sys, kProducers, kCount, absl::Seconds(20), "producers");
  ASSERT_EQ(reports.size(), static_cast<size_t>(kProducers));
  long long full = 0;
  for (const Produced& pr : reports) {
    EXPECT_EQ(pr.no_actor, 0);
    full += pr.full;
  }
  absl::StatusOr<SeqReport> r = sys->Ask<SeqReport>(seq, SeqQuery{0}, kAsk);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->received, int64_t{kProducers} * kCount);
  EXPECT_EQ(r->violations, 0);
  EXPECT_EQ(r->distinct_senders, kProducers);
  for (int p = 0; p < kProducers; ++p) {
    absl::StatusOr<SeqReport> rp = sys->Ask<SeqReport>(seq, SeqQuery{p}, kAsk);
    ASSERT_TRUE(rp.ok());
    EXPECT_EQ(rp->last, kCount);
  }
  absl::StatusOr<SystemStats> st = sys->Stats();
  ASSERT_TRUE(st.ok());
  uint64_t counted_full = 0;
  for (const ActorStats& a : st->actors) counted_full += a.send_full;
  EXPECT_EQ(counted_full, static_cast<uint64_t>(full)) << "every kFull a producer saw is counted";
  // The first producers' threads opened channels to the sequencer; the rest
  // share its mailbox (channel.h): both ways kept each sender's order.
  EXPECT_GT(st->channel_bytes, 0u);
  std::cout << "K2K: " << kProducers << " producers x " << kCount << " messages, " << full
            << " kFull retries with a 64-slot mailbox\n";
  absl::StatusOr<StopReport> rep = sys->Stop();
  ASSERT_TRUE(rep.ok()) << rep.status();
  EXPECT_EQ(rep->unhandled, 0u) << rep->ToString();
  for (const ActorStats& a : rep->actors) {
    if (a.name == "seq") {
      // Every Seq and the 1 + kProducers queries.
      EXPECT_EQ(a.handled, static_cast<uint64_t>(kProducers) * kCount + 1 + kProducers) << a.ToString();
    }
  }
}

TEST_F(SystemGpuTest, AnActorsThreadAndBlockHandlersSendToOneReceiverInOrder) {
  auto sys = StartSystem();
  ASSERT_NE(sys, nullptr);
  const ActorId seq = SpawnOrDie(*sys, "Sequencer", "seq");
  const int kAlternators = 6, kCount = ::rk::testing::Scaled(2000);
  std::vector<ActorId> alts;
  for (int p = 0; p < kAlternators; ++p) alts.push_back(SpawnOrDie(*sys, "Alternator", "alt" + std::to_string(p)));
  for (int p = 0; p < kAlternators; ++p) ASSERT_TRUE(sys->Send(alts[p], AltStart{seq, p, kCount}).ok());
  ASSERT_EQ(TakeProducedReports(*sys, kAlternators, kCount, absl::Seconds(30), "alternators").size(), static_cast<size_t>(kAlternators));
  absl::StatusOr<SeqReport> r = sys->Ask<SeqReport>(seq, SeqQuery{0}, kAsk);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->received, int64_t{kAlternators} * kCount);
  EXPECT_EQ(r->violations, 0) << "a block handler's sends overtook its thread handler's, or the reverse";
  for (int p = 0; p < kAlternators; ++p) {
    absl::StatusOr<SeqReport> rp = sys->Ask<SeqReport>(seq, SeqQuery{p}, kAsk);
    ASSERT_TRUE(rp.ok());
    EXPECT_EQ(rp->last, kCount);
  }
  absl::StatusOr<SystemStats> st = sys->Stats();
  ASSERT_TRUE(st.ok());
  EXPECT_GT(st->channel_bytes, 0u);
  absl::StatusOr<StopReport> rep = sys->Stop();
  ASSERT_TRUE(rep.ok()) << rep.status();
  EXPECT_EQ(rep->unhandled, 0u) << rep->ToString();
}

TEST_F(SystemGpuTest, AStreamOfBlockMessagesKeepsItsOrderAndEveryRankRunsEach) {
  auto sys = StartSystem();
  ASSERT_NE(sys, nullptr);
  const ActorId tally = SpawnOrDie(*sys, "BlockTally", "tally");
  const int kProducers = 3, kCount = ::rk::testing::Scaled(4000);
  std::vector<ActorId> producers;
  for (int p = 0; p < kProducers; ++p) producers.push_back(SpawnOrDie(*sys, "TickSender", "ticks" + std::to_string(p)));
  for (int p = 0; p < kProducers; ++p) ASSERT_TRUE(sys->Send(producers[p], TickStart{tally, p, kCount}).ok());
  // Asks while the streams run: a hand-over waiting ends a block run, so
  // each is answered, and what it sees is in order so far.
  for (int i = 0; i < 20; ++i) {
    absl::StatusOr<TallyReport> r = sys->Ask<TallyReport>(tally, TallyQuery{0}, kAsk);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->violations, 0);
  }
  const std::vector<Produced> reports = TakeProducedReports(*sys, kProducers, kCount, absl::Seconds(30), "tick senders");
  ASSERT_EQ(reports.size(), static_cast<size_t>(kProducers));
  absl::StatusOr<TallyReport> r = sys->Ask<TallyReport>(tally, TallyQuery{0}, kAsk);
  ASSERT_TRUE(r.ok()) << r.status();
  const long long marks = int64_t{kProducers} * (kCount / 8);
  EXPECT_EQ(r->marks, marks);
  EXPECT_EQ(r->ticks, int64_t{kProducers} * kCount - marks);
  EXPECT_EQ(r->violations, 0) << "a sender's ticks of the six block kinds and TickMarks were handled out of order";
  EXPECT_EQ(r->words_bad, 0);
  EXPECT_EQ(r->width, static_cast<int>(sys->threads_per_block()));
  EXPECT_EQ(r->rank_visits, r->ticks * r->width) << "a rank missed a block tick, or ran one twice";
  absl::StatusOr<StopReport> rep = sys->Stop();
  ASSERT_TRUE(rep.ok()) << rep.status();
  EXPECT_EQ(rep->unhandled, 0u) << rep->ToString();
}

TEST_F(SystemGpuTest, WithoutAChannelArenaEveryPairUsesTheMailboxAndKeepsItsOrder) {
  SystemOptions o;
  o.channel_arena_bytes = 0;
  o.mailbox_capacity = 64;
  auto sys = StartSystem(o);
  ASSERT_NE(sys, nullptr);
  const ActorId seq = SpawnOrDie(*sys, "Sequencer", "seq");
  const int kProducers = 8, kCount = ::rk::testing::Scaled(3000);
  std::vector<ActorId> producers;
  for (int p = 0; p < kProducers; ++p) producers.push_back(SpawnOrDie(*sys, "Producer", "p" + std::to_string(p)));
  for (int p = 0; p < kProducers; ++p) ASSERT_TRUE(sys->Send(producers[p], Produce{seq, p, kCount}).ok());
  ASSERT_EQ(TakeProducedReports(*sys, kProducers, kCount, absl::Seconds(30), "producers").size(), static_cast<size_t>(kProducers));
  absl::StatusOr<SeqReport> r = sys->Ask<SeqReport>(seq, SeqQuery{0}, kAsk);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->received, int64_t{kProducers} * kCount);
  EXPECT_EQ(r->violations, 0);
  absl::StatusOr<SystemStats> st = sys->Stats();
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->channel_bytes, 0u);
  absl::StatusOr<StopReport> rep = sys->Stop();
  ASSERT_TRUE(rep.ok()) << rep.status();
  EXPECT_EQ(rep->unhandled, 0u) << rep->ToString();
}

TEST_F(SystemGpuTest, FullMailboxRefusesWithKFullAndCountsIt) {
  SystemOptions o;
  o.mailbox_capacity = 8;
  auto sys = StartSystem(o);
  ASSERT_NE(sys, nullptr);
  const ActorId sloth = SpawnOrDie(*sys, "Sloth", "sloth");
  const ActorId burster = SpawnOrDie(*sys, "Burster", "burster");
  absl::StatusOr<BurstResult> r = sys->Ask<BurstResult>(burster, Burst{sloth, 200}, kAsk);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->ok + r->full, 200);
  EXPECT_GT(r->full, 0) << "200 sends into 8 slots of a slow actor must meet a full mailbox";
  EXPECT_GE(r->ok, 8);
  // Every accepted message is handled; the refused ones were never accepted.
  absl::StatusOr<StopReport> rep = sys->Stop();
  ASSERT_TRUE(rep.ok()) << rep.status();
  uint64_t handled = 0, send_full = 0;
  for (const ActorStats& a : rep->actors) {
    if (a.name == "sloth") handled = a.handled;
    if (a.name == "burster") send_full = a.send_full;
  }
  EXPECT_EQ(handled, static_cast<uint64_t>(r->ok));
  EXPECT_EQ(send_full, static_cast<uint64_t>(r->full));
  EXPECT_EQ(rep->unhandled, 0u);
}

// Host messages handed over in a worker's shared memory (a small message to
// one of the worker's first actors) while their owner is busy are part of
// what Stop drains: the drain's quiescence counts hand-overs made and taken,
// not only mailboxes. Before it did, Stop halted the kernel with three of
// these four still waiting and reported a drained system.
TEST_F(SystemGpuTest, HostMessagesHandedOverBehindABusyOwnerAreHandledBeforeStopReturns) {
  auto sys = StartSystem();
  ASSERT_NE(sys, nullptr);
  const ActorId sloth = SpawnOrDie(*sys, "Sloth", "sloth");  // about 1 ms a message
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(sys->Send(sloth, Slow{i}).ok()) << i;
  absl::StatusOr<StopReport> rep = sys->Stop();
  ASSERT_TRUE(rep.ok()) << rep.status();
  EXPECT_TRUE(rep->drained);
  uint64_t handled = 0;
  for (const ActorStats& a : rep->actors) {
    if (a.name == "sloth") handled = a.handled;
  }
  EXPECT_EQ(handled, 4u);
  EXPECT_EQ(rep->unhandled, 0u);
}

TEST_F(SystemGpuTest, UnboundRouteGivesKNoActorAndBindingTakesEffectWhileRunning) {
  auto sys = StartSystem();
  ASSERT_NE(sys, nullptr);
  const ActorId notifier = SpawnOrDie(*sys, "Notifier", "notifier");
  const ActorId rec1 = SpawnOrDie(*sys, "Recorder", "rec1");
  const ActorId rec2 = SpawnOrDie(*sys, "Recorder", "rec2");
  absl::StatusOr<NotifyResult> r = sys->Ask<NotifyResult>(notifier, Notify{1}, kAsk);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, static_cast<unsigned>(SendStatus::kNoActor));
  ASSERT_TRUE(sys->Bind("audit", rec1).ok());
  r = sys->Ask<NotifyResult>(notifier, Notify{10}, kAsk);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, static_cast<unsigned>(SendStatus::kOk));
  ASSERT_TRUE(sys->Bind("audit", rec2).ok());  // rebind while running
  r = sys->Ask<NotifyResult>(notifier, Notify{100}, kAsk);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, static_cast<unsigned>(SendStatus::kOk));
  // The recorders forward what they got to the host: 10 from rec1, 100 from rec2.
  std::map<std::string, int> got;
  for (int i = 0; i < 2; ++i) {
    absl::StatusOr<std::optional<Message>> m = sys->Receive(absl::Seconds(5));
    ASSERT_TRUE(m.ok() && m->has_value());
    got[*sys->NameOf((*m)->from)] = (*m)->As<Noted>()->value;
  }
  EXPECT_EQ(got["rec1"], 10);
  EXPECT_EQ(got["rec2"], 100);
  ASSERT_TRUE(sys->Unbind("audit").ok());
  r = sys->Ask<NotifyResult>(notifier, Notify{1000}, kAsk);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, static_cast<unsigned>(SendStatus::kNoActor));
  absl::StatusOr<SystemStats> st = sys->Stats();
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->Find("notifier")->send_no_actor, 2u);
  EXPECT_THAT(sys->Bind("nonexistent", rec1), StatusIs(absl::StatusCode::kNotFound, HasSubstr("uses audit")));
}

TEST_F(SystemGpuTest, FailStopsOnlyThatActorAndTheHostLearnsWhy) {
  auto sys = StartSystem();
  ASSERT_NE(sys, nullptr);
  const ActorId fragile = SpawnOrDie(*sys, "Fragile", "fragile");
  const ActorId other = SpawnOrDie(*sys, "Fragile", "other");
  ASSERT_EQ(sys->Ask<Poked>(fragile, Poke{0}, kAsk)->pokes, 1);
  ASSERT_TRUE(sys->Send(fragile, Poke{7}).ok());
  // Messages after the failure are not handled but reported.
  ASSERT_TRUE(sys->Send(fragile, Poke{0}).ok());
  EXPECT_THAT(sys->Ask<Poked>(fragile, Poke{0}, kAsk),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("fragile")));
  // The other actor goes on.
  for (int i = 1; i <= 3; ++i) EXPECT_EQ(sys->Ask<Poked>(other, Poke{0}, kAsk)->pokes, i);
  std::vector<ActorFailure> failures = sys->TakeFailures();
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_EQ(failures[0].name, "fragile");
  EXPECT_EQ(failures[0].code, 7u);
  absl::StatusOr<SystemStats> st = sys->Stats();
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->Find("fragile")->state, ActorState::kFailed);
  EXPECT_EQ(st->Find("fragile")->fail_code, 7u);
  EXPECT_EQ(st->Find("other")->state, ActorState::kRunning);
  std::cout << "before Stop: " << st->Find("fragile")->ToString() << "\n";
  absl::StatusOr<StopReport> rep = sys->Stop();
  ASSERT_TRUE(rep.ok()) << rep.status();
  // Nothing lost: each message to 'fragile' was handled, dead-lettered or
  // refused at the send.
  const ActorStats* f = nullptr;
  for (const ActorStats& a : rep->actors) {
    if (a.name == "fragile") f = &a;
  }
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->handled + f->dead_lettered + f->depth, f->received) << f->ToString();
  EXPECT_EQ(rep->unhandled, 0u);
}

TEST_F(SystemGpuTest, HlcIsMonotonicPerActorAndOrderedAcrossASend) {
  auto sys = StartSystem();
  ASSERT_NE(sys, nullptr);
  const ActorId a = SpawnOrDie(*sys, "Clock", "a");
  const ActorId b = SpawnOrDie(*sys, "Clock", "b");
  uint64_t last = 0;
  for (int i = 0; i < 200; ++i) {
    absl::StatusOr<Tock> t = sys->Ask<Tock>(a, Tick{0}, kAsk);
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_GT(t->now, last) << "invocation " << i;
    last = t->now;
  }
  // a stamps a Tick and sends it to b; b's clock at receipt is later.
  for (int i = 0; i < 50; ++i) {
    ASSERT_TRUE(sys->Send(a, Relay{b}).ok());
    absl::StatusOr<std::optional<Message>> m = sys->Receive(absl::Seconds(5));
    ASSERT_TRUE(m.ok() && m->has_value());
    absl::StatusOr<Tock> t = (*m)->As<Tock>();
    ASSERT_TRUE(t.ok());
    EXPECT_GT(t->now, t->sender_stamp);
  }
}

// An actor whose own messages never leave its mailbox empty (it sends itself
// one per message) still answers the host: a host message waits only for the
// messages queued before it, not for the mailbox to run dry.
TEST_F(SystemGpuTest, AnActorThatKeepsItsMailboxBusyStillAnswersAsks) {
  auto sys = StartSystem();
  ASSERT_NE(sys, nullptr);
  const ActorId looper = SpawnOrDie(*sys, "Looper", "looper");
  ASSERT_TRUE(sys->Send(looper, Loop{0}).ok());
  long long last = 0;
  for (int i = 0; i < 20; ++i) {
    absl::StatusOr<LoopCount> c = sys->Ask<LoopCount>(looper, LoopQuery{0}, absl::Seconds(2));
    ASSERT_TRUE(c.ok()) << "ask " << i << ": " << c.status();
    EXPECT_GT(c->loops, last) << "ask " << i << ": the loop must keep running between asks";
    last = c->loops;
    absl::SleepFor(absl::Milliseconds(2));
  }
  absl::StatusOr<LoopCount> stop = sys->Ask<LoopCount>(looper, LoopQuery{1}, absl::Seconds(2));
  ASSERT_TRUE(stop.ok()) << stop.status();
  ASSERT_NO_FATAL_FAILURE(ExpectStopDrained(*sys));
}

TEST_F(SystemGpuTest, DefaultMemberInitialisersRunAtSpawn) {
  auto sys = StartSystem();
  ASSERT_NE(sys, nullptr);
  const ActorId x = SpawnOrDie(*sys, "Initialised", "x");
  absl::StatusOr<Defaults> d = sys->Ask<Defaults>(x, Peek{0}, kAsk);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->seven, 7);
  EXPECT_EQ(d->zero, 0);
  EXPECT_EQ(d->half, 0.5f);
}

TEST_F(SystemGpuTest, HostInputErrorsAreClearAndLoseNothing) {
  auto sys = StartSystem();
  ASSERT_NE(sys, nullptr);
  const ActorId seq = SpawnOrDie(*sys, "Sequencer", "seq");
  EXPECT_THAT(sys->Spawn("Sequencer", "seq"), StatusIs(absl::StatusCode::kAlreadyExists, HasSubstr("'seq'")));
  EXPECT_THAT(sys->Spawn("NoSuchType", "x"), StatusIs(absl::StatusCode::kNotFound, HasSubstr("'NoSuchType'")));
  EXPECT_THAT(sys->Send(seq, Poke{1}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("has no handler for 'Poke'")));
  EXPECT_THAT(sys->Send(ActorId{999}, Seq{0, 1}), StatusIs(absl::StatusCode::kNotFound, HasSubstr("999")));
  EXPECT_THAT(sys->SendBytes(seq, "Seq", std::string(3, 'x')),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("'Seq' is 8 bytes")));
  const ActorId spinner = SpawnOrDie(*sys, "Sloth", "sloth");
  EXPECT_THAT(sys->Ask<SlowCount>(spinner, Slow{0}, absl::Milliseconds(50)),
              StatusIs(absl::StatusCode::kDeadlineExceeded, HasSubstr("no reply from actor 'sloth'")));
  absl::StatusOr<SeqReport> r = sys->Ask<SeqReport>(seq, SeqQuery{0}, kAsk);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->received, 0) << "refused sends never reach the actor";
  ASSERT_TRUE(sys->Stop().ok());
  EXPECT_THAT(sys->Send(seq, Seq{0, 1}), StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("exited")));
}

// A Spawn whose wait for the GPU timed out used to leave its index to the
// next Spawn, while the GPU could still apply the first record: two actors,
// and two owners, on one index and worker lane. The record stays in the
// ring, so its index and lane stay used.
TEST_F(SystemGpuTest, ATimedOutSpawnNeverSharesItsIndexWithALaterOne) {
  auto sys = StartSystem();
  ASSERT_NE(sys, nullptr);
  internal::SystemAccess::TimeOutNextControlWait(*sys);
  EXPECT_THAT(sys->Spawn("Sequencer", "first"),
              StatusIs(absl::StatusCode::kDeadlineExceeded, HasSubstr("waiting for a spawn to be applied")));
  // The name was never handed out, so it can be spawned again; the
  // timed-out index cannot be sent to.
  const ActorId again = SpawnOrDie(*sys, "Sequencer", "first");
  const ActorId other = SpawnOrDie(*sys, "Sequencer", "other");
  EXPECT_EQ(again.value, 1u);
  EXPECT_EQ(other.value, 2u);
  EXPECT_THAT(sys->Send(ActorId{0}, Seq{0, 1}),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("no actor with id 0 (its spawn timed out)")));
  absl::StatusOr<ActorId> named = sys->Lookup("first");
  ASSERT_TRUE(named.ok()) << named.status();
  EXPECT_EQ(named->value, again.value) << "the name belongs to the spawn that succeeded";
  // Each actor gets its own messages, all of them, in order.
  const int kN = 1000;
  for (int n = 1; n <= kN; ++n) {
    ASSERT_TRUE(sys->Send(again, Seq{0, n}, absl::Now() + absl::Seconds(10)).ok());
    ASSERT_TRUE(sys->Send(other, Seq{1, n}, absl::Now() + absl::Seconds(10)).ok());
  }
  for (const auto& [id, producer] : {std::pair{again, 0}, std::pair{other, 1}}) {
    absl::StatusOr<SeqReport> r = sys->Ask<SeqReport>(id, SeqQuery{producer}, kAsk);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->received, kN) << "actor " << id.value;
    EXPECT_EQ(r->last, kN) << "actor " << id.value;
    EXPECT_EQ(r->violations, 0) << "actor " << id.value;
  }
  // The GPU did apply the timed-out record: the actor exists there, unnamed
  // and unused.
  absl::StatusOr<SystemStats> st = sys->Stats();
  ASSERT_TRUE(st.ok()) << st.status();
  ASSERT_EQ(st->actors.size(), 3u);
  EXPECT_EQ(st->actors[0].name, "(spawn of 'first' timed out)");
  EXPECT_EQ(st->actors[0].state, ActorState::kRunning);
  EXPECT_EQ(st->actors[0].received, 0u);
  absl::StatusOr<StopReport> report = sys->Stop();
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->unhandled, 0u);
}

// While a system's kernel runs, loading another program in the device's
// context waits for that kernel to exit: a second Start used to block (until
// its start timeout, leaving a kernel queued behind the first). It is
// refused at once, and Start works again once the first system stopped.
TEST_F(SystemGpuTest, ASecondSystemOnTheDeviceIsRefusedAtOnceAndTheRuntimeStaysUsable) {
  absl::StatusOr<std::unique_ptr<System>> a = runtime_->Start(program_, ::rk::testing::TestOptions());
  ASSERT_TRUE(a.ok()) << a.status();
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_THAT(runtime_->Start(program_, ::rk::testing::TestOptions()),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       AllOf(HasSubstr("Start: this runtime already runs a system (of "),
                             HasSubstr("one system runs at a time on a device"))));
  // Another Runtime of the same device shares its context: refused alike.
  absl::StatusOr<std::unique_ptr<Runtime>> other = Runtime::Create();
  ASSERT_TRUE(other.ok()) << other.status();
  EXPECT_THAT((*other)->Start(program_, ::rk::testing::TestOptions()),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("one system runs at a time")));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(seconds, 2.0) << "refused at once, not after a wait for the running system";
  // The running system is untouched.
  const ActorId seq = SpawnOrDie(**a, "Sequencer", "seq");
  for (int n = 1; n <= 100; ++n) ASSERT_TRUE((*a)->Send(seq, Seq{0, n}).ok());
  absl::StatusOr<SeqReport> r = (*a)->Ask<SeqReport>(seq, SeqQuery{0}, kAsk);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->received, 100);
  // Once it stopped (the System object still alive), the device is free.
  ASSERT_TRUE((*a)->Stop().ok());
  absl::StatusOr<std::unique_ptr<System>> b = runtime_->Start(program_, ::rk::testing::TestOptions());
  ASSERT_TRUE(b.ok()) << b.status();
  const ActorId seq2 = SpawnOrDie(**b, "Sequencer", "seq");
  r = (*b)->Ask<SeqReport>(seq2, SeqQuery{0}, kAsk);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->received, 0);
}

// A System may outlive the Runtime that started it (the device context stays
// until the last of them is gone); the usual order works as before.
TEST_F(SystemGpuTest, ASystemOutlivesItsRuntimeAndTheUsualOrderStillWorks) {
  for (const bool runtime_first : {true, false}) {
    SCOPED_TRACE(runtime_first ? "Runtime destroyed first" : "System destroyed first");
    if (runtime_ == nullptr) {
      absl::StatusOr<std::unique_ptr<Runtime>> r = Runtime::Create();
      ASSERT_TRUE(r.ok()) << r.status();
      runtime_ = *std::move(r);
    }
    auto sys = StartSystem();
    ASSERT_NE(sys, nullptr);
    const ActorId seq = SpawnOrDie(*sys, "Sequencer", "seq");
    if (runtime_first) runtime_.reset();
    for (int n = 1; n <= 100; ++n) ASSERT_TRUE(sys->Send(seq, Seq{0, n}).ok());
    absl::StatusOr<SeqReport> r = sys->Ask<SeqReport>(seq, SeqQuery{0}, kAsk);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->received, 100);
    EXPECT_EQ(r->violations, 0);
    absl::StatusOr<StopReport> report = sys->Stop();
    ASSERT_TRUE(report.ok()) << report.status();
    EXPECT_EQ(report->unhandled, 0u);
    sys.reset();
    runtime_.reset();
  }
}

TEST_F(SystemGpuTest, AHostTypeWithAStaleLayoutIsRefusedAndNothingIsSent) {
  auto sys = StartSystem();
  ASSERT_NE(sys, nullptr);
  const ActorId seq = SpawnOrDie(*sys, "Sequencer", "seq");
  const std::string expected =
      "host type for 'Seq' does not match the program's layout of it: the 1st field is 'n' (int32 at offset 0) in "
      "the host type but 'producer' (int32 at offset 0) in the program. The host type's layout is from a header "
      "generated for another version of the program (or edited since); regenerate the header with `actorc header`";
  EXPECT_THAT(sys->Send(seq, StaleSeq{1, 0}), StatusIs(absl::StatusCode::kInvalidArgument, expected));
  // Refused every time (a refusal is not cached), and by Ask too.
  EXPECT_THAT(sys->Send(seq, StaleSeq{1, 0}, absl::Now() + kAsk),
              StatusIs(absl::StatusCode::kInvalidArgument, expected));
  EXPECT_THAT(sys->Ask<SeqReport>(seq, StaleSeq{1, 0}, kAsk), StatusIs(absl::StatusCode::kInvalidArgument, expected));
  absl::StatusOr<SystemStats> stats = sys->Stats();
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->host_sent, 0u) << "nothing reached the ring";
  ASSERT_NE(stats->Find("seq"), nullptr);
  EXPECT_EQ(stats->Find("seq")->received, 0u);

  // The same message type through the generated host type, whose layout is
  // the program's.
  ASSERT_TRUE(sys->Send(seq, Seq{3, 1}).ok());
  absl::StatusOr<SeqReport> r = sys->Ask<SeqReport>(seq, SeqQuery{3}, kAsk);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->received, 1) << "only the message with the right layout arrived";
  EXPECT_EQ(r->violations, 0);
  EXPECT_EQ(r->last, 1);
}

// Test goals: a Send that Stop overtakes between its check that the system
// accepts messages and the write of its record — held there by
// internal::SystemAccess::PauseNextSend while Stop runs on another thread —
// either returns a refusal, or returns OK and its message shows up in Stop's
// report (handled, dead-lettered or unhandled): nothing lost. Before the
// writer gate, Stop drained, halted the kernel and counted the rings while
// the Send was held; the Send then wrote into a ring nobody would read and
// returned OK for a message neither handled nor reported.
TEST_F(SystemGpuTest, ASendHeldAcrossStopIsHandledOrRefusedNeverLost) {
  auto sys = StartSystem();
  ASSERT_NE(sys, nullptr);
  const ActorId seq = SpawnOrDie(*sys, "Sequencer", "seq");
  ASSERT_TRUE(sys->Send(seq, Seq{0, 1}).ok());
  absl::Notification held, resume;
  internal::SystemAccess::PauseNextSend(*sys, [&] {
    held.Notify();
    resume.WaitForNotification();
  });
  absl::Status sent = absl::UnknownError("the Send did not return");
  std::thread sender([&] { sent = sys->Send(seq, Seq{0, 2}); });
  held.WaitForNotification();
  absl::StatusOr<StopReport> report = absl::UnknownError("Stop did not return");
  std::thread stopper([&] { report = sys->Stop(absl::Seconds(20)); });
  // Once Stop has begun (it admits no more Sends), give it ample time to
  // drain, halt and count the rings — what it did while the Send was held,
  // before it waited for admitted Sends — then let the Send go on.
  const absl::Time until = absl::Now() + absl::Seconds(10);
  while (internal::SystemAccess::Accepting(*sys) && absl::Now() < until) absl::SleepFor(absl::Microseconds(50));
  const bool stop_began = !internal::SystemAccess::Accepting(*sys);
  absl::SleepFor(absl::Milliseconds(300));
  resume.Notify();
  sender.join();
  stopper.join();
  ASSERT_TRUE(stop_began) << "Stop did not close the system to Sends within 10 s";
  ASSERT_TRUE(report.ok()) << report.status();
  const ActorStats* s = nullptr;
  for (const ActorStats& a : report->actors) {
    if (a.name == "seq") s = &a;
  }
  ASSERT_NE(s, nullptr);
  // Every message accepted for 'seq' is somewhere in the report.
  const uint64_t accounted = s->handled + s->dead_lettered + report->unhandled + report->dead_letters.size();
  if (sent.ok()) {
    EXPECT_EQ(accounted, 2u) << "the held Send returned OK: its message must be handled or reported\n"
                             << report->ToString() << "\n" << s->ToString();
  } else {
    EXPECT_THAT(sent, StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("accepts nothing")));
    EXPECT_EQ(accounted, 1u) << report->ToString();
  }
  EXPECT_EQ(report->reports_lost, 0u);
  EXPECT_THAT(sys->Send(seq, Seq{0, 3}), StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("exited")));
}

// Test goals: dead letters and failure records are never dropped because the
// worker's ring back to the host is full, and an application that takes
// nothing until the end still gets all of them. One worker and a ring back
// of 8 records; the host sends many messages to an actor that has failed
// (each one dead-lettered, by its owner or by the ring poller), and 16 other
// actors on the same worker fail in the middle of it. Every dead letter is
// either taken (TakeDeadLetters, then the report) or counted in
// dead_letters_dropped past SystemOptions::dead_letter_capacity — both with
// the default bound and with a bound of 1000 — matching the actors' own
// counters exactly; all 17 failures arrive with their codes; nothing is
// counted as lost at the halt. Before, the GPU dropped each record that met
// a full ring and only counted it in outbound_full.
TEST_F(SystemGpuTest, DeadLettersAndFailuresWaitForAFullRingBackAndAreAllAccountedFor) {
  for (const uint64_t capacity : {SystemOptions{}.dead_letter_capacity, uint64_t{1000}}) {
    SCOPED_TRACE(::testing::Message() << "dead_letter_capacity " << capacity);
    SystemOptions o;
    o.workers = 1;
    o.outbound_ring_capacity = 8;
    o.dead_letter_capacity = capacity;
    auto sys = StartSystem(o);
    ASSERT_NE(sys, nullptr);
    const ActorId dead = SpawnOrDie(*sys, "Fragile", "dead");
    constexpr int kFailers = 16;
    std::vector<ActorId> failers;
    for (int k = 0; k < kFailers; ++k) failers.push_back(SpawnOrDie(*sys, "Fragile", "f" + std::to_string(k)));
    ASSERT_TRUE(sys->Send(dead, Poke{1}).ok());
    const int kLetters = ::rk::testing::Scaled(20000);
    for (int n = 0; n < kLetters; ++n) {
      if (n == kLetters / 2) {
        for (int k = 0; k < kFailers; ++k) {
          ASSERT_TRUE(sys->Send(failers[k], Poke{100 + k}, absl::Now() + absl::Seconds(20)).ok());
        }
      }
      ASSERT_TRUE(sys->Send(dead, Poke{0}, absl::Now() + absl::Seconds(20)).ok()) << "message " << n;
    }
    // The application looks at nothing for a while; the GPU meets a full
    // ring back all along.
    absl::SleepFor(absl::Milliseconds(100));
    // Then waits until the worker has dealt with every message (its own
    // counters, which count whether or not the host got the record).
    uint64_t dealt = 0;
    const absl::Time until = absl::Now() + absl::Seconds(30);
    while (absl::Now() < until) {
      absl::StatusOr<SystemStats> st = sys->Stats();
      ASSERT_TRUE(st.ok()) << st.status();
      const ActorStats* d = st->Find("dead");
      ASSERT_NE(d, nullptr);
      dealt = d->dead_lettered + d->rejected;
      if (dealt >= static_cast<uint64_t>(kLetters)) {
        EXPECT_EQ(st->outbound_full, 0u) << "no actor sent to the host; dead letters are never refused";
        break;
      }
      absl::SleepFor(absl::Milliseconds(5));
    }
    ASSERT_EQ(dealt, static_cast<uint64_t>(kLetters));
    std::vector<DeadLetter> taken = sys->TakeDeadLetters();
    std::vector<ActorFailure> failures = sys->TakeFailures();
    absl::StatusOr<StopReport> rep = sys->Stop();
    ASSERT_TRUE(rep.ok()) << rep.status();
    EXPECT_EQ(rep->reports_lost, 0u) << rep->ToString();
    const uint64_t kept = std::min<uint64_t>(kLetters, capacity);
    EXPECT_EQ(taken.size(), kept) << rep->ToString();
    EXPECT_TRUE(rep->dead_letters.empty()) << rep->ToString();
    EXPECT_EQ(taken.size() + rep->dead_letters.size() + rep->dead_letters_dropped, static_cast<uint64_t>(kLetters))
        << rep->ToString();
    EXPECT_EQ(rep->dead_letters_dropped, kLetters - kept);
    for (const DeadLetter& d : taken) {
      ASSERT_EQ(d.to, dead);
      ASSERT_EQ(d.type, "Poke");
      ASSERT_TRUE(d.from.is_host());
      ASSERT_NE(d.reason, DeadLetterReason::kNone);
    }
    // The actor's own counters, final after the halt, say the same.
    const ActorStats* d = nullptr;
    for (const ActorStats& a : rep->actors) {
      if (a.name == "dead") d = &a;
    }
    ASSERT_NE(d, nullptr);
    EXPECT_EQ(d->dead_lettered + d->rejected, static_cast<uint64_t>(kLetters)) << d->ToString();
    EXPECT_EQ(d->handled, 1u) << d->ToString();
    // Every failure, with its code, despite the full ring.
    failures.insert(failures.end(), rep->failures.begin(), rep->failures.end());
    EXPECT_EQ(rep->failures_dropped, 0u);
    std::map<std::string, uint32_t> codes;
    for (const ActorFailure& f : failures) codes[f.name] = f.code;
    ASSERT_EQ(codes.size(), static_cast<size_t>(kFailers + 1));
    EXPECT_EQ(codes["dead"], 1u);
    for (int k = 0; k < kFailers; ++k) EXPECT_EQ(codes["f" + std::to_string(k)], static_cast<uint32_t>(100 + k));
    EXPECT_EQ(rep->unhandled, 0u) << rep->ToString();
  }
}

// Test goals: the background reader drains the very ring an Ask polls; a
// reply it takes still reaches the waiting Ask (matched by correlation),
// never the inbox. Asks to an actor on one worker while that worker's ring
// back is busy with dead letters (a second thread keeps sending to a failed
// actor on the same worker) are all answered, in order.
TEST_F(SystemGpuTest, RepliesTheBackgroundReaderTakesStillReachTheirAsks) {
  SystemOptions o;
  o.workers = 1;
  o.outbound_ring_capacity = 8;
  auto sys = StartSystem(o);
  ASSERT_NE(sys, nullptr);
  const ActorId dead = SpawnOrDie(*sys, "Fragile", "dead");
  const ActorId live = SpawnOrDie(*sys, "Fragile", "live");
  ASSERT_TRUE(sys->Send(dead, Poke{1}).ok());
  std::atomic<bool> done{false};
  std::atomic<int> letters{0};
  std::thread flood([&] {
    while (!done.load()) {
      if (sys->Send(dead, Poke{0}, absl::Now() + absl::Seconds(5)).ok()) letters.fetch_add(1);
    }
  });
  // Each Ask's message waits behind the flood in the ring to the worker
  // (a ring of dead letters, each slowed down a lot by racecheck).
  const int kAsks = ::rk::testing::Scaled(200);
  int answered = 0;
  for (int i = 1; i <= kAsks; ++i) {
    absl::StatusOr<Poked> p = sys->Ask<Poked>(live, Poke{0}, kAsk * ::rk::testing::SlowFactor());
    if (!p.ok()) {
      ADD_FAILURE() << "ask " << i << ": " << p.status();
      break;
    }
    EXPECT_EQ(p->pokes, i);
    ++answered;
  }
  done.store(true);
  flood.join();
  EXPECT_EQ(answered, kAsks);
  absl::StatusOr<std::optional<Message>> stray = sys->Receive(absl::Milliseconds(50));
  ASSERT_TRUE(stray.ok()) << stray.status();
  EXPECT_FALSE(stray->has_value()) << "a reply went to the inbox instead of its Ask";
  absl::StatusOr<StopReport> rep = sys->Stop();
  ASSERT_TRUE(rep.ok()) << rep.status();
  const std::vector<DeadLetter> taken = sys->TakeDeadLetters();
  EXPECT_EQ(rep->dead_letters.size() + taken.size() + rep->dead_letters_dropped,
            static_cast<uint64_t>(letters.load()))
      << rep->ToString();
  EXPECT_TRUE(rep->undelivered.empty()) << rep->ToString();
  std::cout << "asks answered while " << letters.load() << " dead letters went through the same 8-record ring\n";
}

// Test goals: messages the actors send to rk::host() are bounded on the host
// too (SystemOptions::host_inbox_capacity): past it they stay in the ring
// back, which fills, and the senders get kFull — the documented
// back-pressure, as before the background reader — rather than the inbox
// growing without bound. What the host received is exactly what the sender
// counted as sent, in order.
TEST_F(SystemGpuTest, TheHostInboxIsBoundedAndSendersToTheHostGetKFull) {
  auto sys = StartWithSmallRingBack();
  ASSERT_NE(sys, nullptr);
  const ActorId rec = SpawnOrDie(*sys, "Recorder", "rec");
  constexpr int kNotes = 100;
  for (int n = 1; n <= kNotes; ++n) ASSERT_TRUE(sys->Send(rec, Noted{n}).ok());
  const ActorStats* r = nullptr;
  SystemStats st;
  const absl::Time until = absl::Now() + absl::Seconds(20);
  while (absl::Now() < until) {
    absl::StatusOr<SystemStats> s = sys->Stats();
    ASSERT_TRUE(s.ok()) << s.status();
    st = *std::move(s);
    r = st.Find("rec");
    ASSERT_NE(r, nullptr);
    if (r->handled == static_cast<uint64_t>(kNotes)) break;
    absl::SleepFor(absl::Milliseconds(5));
  }
  ASSERT_EQ(r->handled, static_cast<uint64_t>(kNotes)) << r->ToString();
  EXPECT_EQ(r->sent + r->send_full, static_cast<uint64_t>(kNotes)) << r->ToString();
  EXPECT_GT(r->send_full, 0u) << "an inbox of 4 and a ring of 8 cannot take 100: " << r->ToString();
  EXPECT_LE(r->sent, 4u + 8u) << r->ToString();
  EXPECT_EQ(st.outbound_full, r->send_full);
  int received = 0, last = 0;
  for (;;) {
    absl::StatusOr<std::optional<Message>> m = sys->Receive(absl::Milliseconds(50));
    ASSERT_TRUE(m.ok()) << m.status();
    if (!m->has_value()) break;
    absl::StatusOr<Noted> note = (*m)->As<Noted>();
    ASSERT_TRUE(note.ok()) << note.status();
    EXPECT_GT(note->value, last) << "in order";
    last = note->value;
    ++received;
  }
  EXPECT_EQ(static_cast<uint64_t>(received), r->sent);
  absl::StatusOr<StopReport> rep = sys->Stop();
  ASSERT_TRUE(rep.ok()) << rep.status();
  EXPECT_TRUE(rep->undelivered.empty()) << rep->ToString();
  EXPECT_EQ(rep->unhandled, 0u) << rep->ToString();
}

// Issue 9 item 2: a dead letter that an owner writes (for each message in
// the mailbox of an actor that failed) never vanishes at a full ring back to
// the host. The message stays in the mailbox while the ring is full, and its
// owner tries again after its other actors; as the host makes room, every
// dead letter arrives, in order, and none is counted lost. (Before, each one
// that met the full ring was dropped and counted in reports_lost.)
TEST_F(SystemGpuTest, AnOwnersDeadLettersWaitForRoomInTheRingBackAndNoneIsLost) {
  auto sys = StartWithSmallRingBack();
  ASSERT_NE(sys, nullptr);
  const ActorId rec = SpawnOrDie(*sys, "Recorder", "rec");
  const ActorId brittle = SpawnOrDie(*sys, "Brittle", "brittle");
  // The ring back fills: the inbox takes 4 of rec's notes, the ring holds 8
  // more behind them (the host leaves them there), and rec gets kFull. The
  // background reader may move notes into the inbox after rec met kFull
  // (a slowed GPU makes that likely), which leaves room in the ring: so rec
  // gets one note at a time until 12 of its notes went out, 4 in the inbox
  // and 8 filling the ring, where no reader takes them any more.
  constexpr uint64_t kHeld = 4 + 8;
  int notes = 0;
  for (const absl::Time until = absl::Now() + absl::Seconds(30);
       StatsOf(*sys, "rec").sent < kHeld && absl::Now() < until;) {
    ASSERT_TRUE(sys->Send(rec, Noted{++notes}).ok());
    while (StatsOf(*sys, "rec").handled < static_cast<uint64_t>(notes) && absl::Now() < until) {
      absl::SleepFor(absl::Milliseconds(1));
    }
  }
  ASSERT_EQ(StatsOf(*sys, "rec").sent, kHeld) << "the ring back never filled";
  ASSERT_EQ(StatsOf(*sys, "rec").handled, static_cast<uint64_t>(notes));
  // Brittle queues 50 messages to itself and fails: its failure record waits
  // for room, and so do the 50 dead letters its owner writes after it.
  constexpr int kSeqs = 50;
  ASSERT_TRUE(sys->Send(brittle, Crumble{kSeqs}).ok());
  absl::SleepFor(absl::Milliseconds(50));
  EXPECT_EQ(StatsOf(*sys, "brittle").dead_lettered, 0u) << "no room in the ring back, yet dead letters were written";
  // The host takes what it has; the ring drains eight records at a time
  // while the owner writes faster.
  std::vector<DeadLetter> letters;
  for (const absl::Time until = absl::Now() + absl::Seconds(30);
       letters.size() < static_cast<size_t>(kSeqs) && absl::Now() < until;) {
    absl::StatusOr<std::optional<Message>> m = sys->Receive(absl::Milliseconds(2));
    ASSERT_TRUE(m.ok()) << m.status();
    std::vector<DeadLetter> more = sys->TakeDeadLetters();
    letters.insert(letters.end(), more.begin(), more.end());
  }
  ASSERT_EQ(letters.size(), static_cast<size_t>(kSeqs));
  for (int i = 0; i < kSeqs; ++i) {
    const DeadLetter& d = letters[i];
    ASSERT_EQ(d.to, brittle);
    ASSERT_EQ(d.from, brittle);
    ASSERT_EQ(d.reason, DeadLetterReason::kActorFailed);
    ASSERT_EQ(d.type, "Seq");
    Seq seq{};
    ASSERT_EQ(d.bytes.size(), sizeof(seq));
    std::memcpy(&seq, d.bytes.data(), sizeof(seq));
    EXPECT_EQ(seq.n, i + 1) << "dead letters in the order sent";
  }
  const ActorStats b = StatsOf(*sys, "brittle");
  EXPECT_EQ(b.dead_lettered, static_cast<uint64_t>(kSeqs)) << b.ToString();
  EXPECT_EQ(b.sent, static_cast<uint64_t>(kSeqs)) << b.ToString();
  std::vector<ActorFailure> failures = sys->TakeFailures();
  absl::StatusOr<StopReport> rep = sys->Stop();
  ASSERT_TRUE(rep.ok()) << rep.status();
  failures.insert(failures.end(), rep->failures.begin(), rep->failures.end());
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_EQ(failures[0].code, 7u);
  EXPECT_EQ(rep->reports_lost, 0u) << rep->ToString();
  EXPECT_EQ(rep->unhandled, 0u) << rep->ToString();
}

// Issue 9 item 7: an actor that delegates a request with ctx.forward lets
// the delegate's reply answer the original Ask (and, between actors, reach
// the original sender).
TEST_F(SystemGpuTest, ADelegatesReplyAnswersTheOriginalAskAndTheOriginalActor) {
  auto sys = StartSystem(SystemOptions{});
  ASSERT_NE(sys, nullptr);
  const ActorId front = SpawnOrDie(*sys, "Front", "front");
  const ActorId back = SpawnOrDie(*sys, "Back", "back");
  const ActorId client = SpawnOrDie(*sys, "Client", "client");
  ASSERT_TRUE(sys->Send(front, Wire{back}).ok());
  for (int x = 1; x <= 20; ++x) {
    absl::StatusOr<Response> r = sys->Ask<Response>(front, Request{x, 0}, kAsk);
    ASSERT_TRUE(r.ok()) << "ask " << x << ": " << r.status();
    EXPECT_EQ(r->y, 2 * x);
    EXPECT_EQ(r->replier, back.value) << "the delegate answered";
    EXPECT_TRUE(ActorId{r->seen_sender}.is_host()) << "the delegate saw the host as the sender";
  }
  // Between actors: the client's request goes front -> back, back's reply
  // comes to the client.
  ASSERT_TRUE(sys->Send(client, Ask2{front, 21}).ok());
  absl::StatusOr<std::optional<Message>> m = sys->Receive(absl::Seconds(5));
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_TRUE(m->has_value()) << "the client's report never came";
  absl::StatusOr<Response> got = (*m)->As<Response>();
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->y, 42);
  EXPECT_EQ(got->replier, back.value);
  EXPECT_EQ(got->seen_sender, back.value) << "the client got its reply from the delegate";
  absl::StatusOr<StopReport> rep = sys->Stop();
  ASSERT_TRUE(rep.ok()) << rep.status();
  EXPECT_EQ(rep->unhandled, 0u) << rep->ToString();
  EXPECT_TRUE(rep->dead_letters.empty()) << rep->ToString();
  EXPECT_TRUE(rep->undelivered.empty()) << rep->ToString();
}

// A reply that comes after its Ask gave up is dropped and counted, never
// handed to Receive; the next Ask gets its own reply.
TEST_F(SystemGpuTest, ALateReplyToATimedOutAskNeverReachesReceive) {
  auto sys = StartSystem(SystemOptions{});
  ASSERT_NE(sys, nullptr);
  const ActorId front = SpawnOrDie(*sys, "Front", "front");
  const ActorId back = SpawnOrDie(*sys, "Back", "back");
  ASSERT_TRUE(sys->Send(front, Wire{back}).ok());
  // The delegate takes 200 ms; the Ask waits 20.
  absl::StatusOr<Response> late = sys->Ask<Response>(front, Request{5, 200000000}, absl::Milliseconds(20));
  ASSERT_FALSE(late.ok());
  EXPECT_EQ(late.status().code(), absl::StatusCode::kDeadlineExceeded) << late.status();
  // The reply arrives meanwhile; it must not surface here.
  absl::StatusOr<std::optional<Message>> stray = sys->Receive(absl::Milliseconds(600));
  ASSERT_TRUE(stray.ok()) << stray.status();
  EXPECT_FALSE(stray->has_value()) << "a late reply leaked into Receive";
  absl::StatusOr<SystemStats> st = sys->Stats();
  ASSERT_TRUE(st.ok()) << st.status();
  EXPECT_EQ(st->late_replies, 1u);
  absl::StatusOr<Response> next = sys->Ask<Response>(front, Request{6, 0}, kAsk);
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_EQ(next->y, 12) << "the next Ask got its own reply, not the late one";
  absl::StatusOr<StopReport> rep = sys->Stop();
  ASSERT_TRUE(rep.ok()) << rep.status();
  EXPECT_TRUE(rep->undelivered.empty()) << rep->ToString();
}

// Test goals: a typed Ask whose reply is of the type it asked for gets it
// (copied into its result by whoever drains it, ask_slots.h); a reply of
// another type, or of the same name and another size, is refused with the
// same words as Message::As, after the actor handled the message; the
// untyped Ask gets the same reply as a Message; no reply leaks into
// Receive or counts as late.
TEST_F(SystemGpuTest, ATypedAskGetsItsReplyAndOneOfAnotherTypeIsNamed) {
  auto sys = StartSystem();
  ASSERT_NE(sys, nullptr);
  const ActorId fragile = SpawnOrDie(*sys, "Fragile", "fragile");
  absl::StatusOr<Poked> p = sys->Ask<Poked>(fragile, Poke{0}, kAsk);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->pokes, 1);
  EXPECT_THAT(sys->Ask<SeqReport>(fragile, Poke{0}, kAsk),
              StatusIs(absl::StatusCode::kInvalidArgument, "the message is a 'Poked', not a 'SeqReport'"));
  EXPECT_THAT(sys->Ask<WidePoked>(fragile, Poke{0}, kAsk),
              StatusIs(absl::StatusCode::kInvalidArgument, "the message 'Poked' is 4 bytes; the host type is 8"));
  absl::StatusOr<Message> m = sys->AskBytes(fragile, "Poke", std::string(sizeof(Poke), '\0'), kAsk);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->type, "Poked");
  absl::StatusOr<Poked> as = m->As<Poked>();
  ASSERT_TRUE(as.ok()) << as.status();
  EXPECT_EQ(as->pokes, 4) << "the refused replies' messages were handled";
  p = sys->Ask<Poked>(fragile, Poke{0}, kAsk);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->pokes, 5);
  absl::StatusOr<std::optional<Message>> stray = sys->Receive(absl::Milliseconds(50));
  ASSERT_TRUE(stray.ok()) << stray.status();
  EXPECT_FALSE(stray->has_value()) << "a reply leaked into Receive";
  absl::StatusOr<SystemStats> st = sys->Stats();
  ASSERT_TRUE(st.ok()) << st.status();
  EXPECT_EQ(st->late_replies, 0u);
}

// Issue 9 item 6: a producer that waits for room by retrying in its handler
// would wait forever here — its consumer is owned by the same worker thread
// (one worker of 64 threads: 32 owner threads, so actor 32 shares actor 0's)
// and runs only after the producer's handler returns. ctx.retry_later hands
// the message back instead, and every message arrives, in order.
TEST_F(SystemGpuTest, AProducerWaitingForRoomWithRetryLaterLetsItsConsumerOnTheSameThreadRun) {
  SystemOptions o;
  o.workers = 1;
  o.threads_per_block = 64;
  o.mailbox_capacity = 8;
  auto sys = StartSystem(o);
  ASSERT_NE(sys, nullptr);
  ASSERT_EQ(sys->threads_per_block(), 64u);
  const ActorId pourer = SpawnOrDie(*sys, "Pourer", "pourer");
  for (int i = 1; i < 32; ++i) SpawnOrDie(*sys, "Bucket", "filler" + std::to_string(i));
  const ActorId bucket = SpawnOrDie(*sys, "Bucket", "bucket");  // list position 32: the pourer's thread
  constexpr int kDrops = 2000;
  ASSERT_TRUE(sys->Send(pourer, Pour{bucket, kDrops}).ok());
  absl::StatusOr<std::optional<Message>> m = sys->Receive(absl::Seconds(20));
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_TRUE(m->has_value()) << "the producer never finished: a deadlock";
  absl::StatusOr<Poured> done = (*m)->As<Poured>();
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_EQ(done->sent, kDrops);
  EXPECT_GT(done->retries, 0) << "2000 messages into 8 slots must have met a full mailbox";
  absl::StatusOr<DropCount> c = sys->Ask<DropCount>(bucket, DropQuery{0}, kAsk);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->received, kDrops);
  EXPECT_EQ(c->out_of_order, 0);
  absl::StatusOr<StopReport> rep = sys->Stop();
  ASSERT_TRUE(rep.ok()) << rep.status();
  EXPECT_EQ(rep->unhandled, 0u) << rep->ToString();
  for (const ActorStats& a : rep->actors) {
    // Each retry is a delivery that was handed back, not handled.
    if (a.name == "pourer") {
      EXPECT_EQ(a.handled, 1u) << a.ToString();
    }
  }
}

// Large payloads between actors (the mailbox's plain area): eight senders on
// one worker at once, each to its own checker, send 400- and 4088-byte
// payloads of every length from their state (on sm_90 the tensor memory
// accelerator copies those, the senders taking turns at the block's stage,
// and the bytes past the last whole 16 are copied by the thread) and from
// their stack (copied by the thread), meeting full mailboxes on the way.
// The checkers share one worker block's inbox: a payload of 512 bytes or
// more goes to its handler from there when it is free (copied by the
// accelerator, the tail past the last whole 16 by the thread), from the
// mailbox when another checker's handler holds it. Every byte arrives, in
// order. The parameter: with RINGKERNEL_NO_BULK_COPY
// set (the senders copy everything themselves).
class LargePayloadTest : public SystemGpuTest, public ::testing::WithParamInterface<bool> {};

TEST_P(LargePayloadTest, LargePayloadsBetweenActorsArriveWholeInOrderFromStateAndStack) {
  SystemOptions o;
  o.workers = 1;
  o.mailbox_capacity = 16;
  const char* was = std::getenv("RINGKERNEL_NO_BULK_COPY");
  const std::string saved = was != nullptr ? was : "";
  // (Set already, as under racecheck: kept.)
  setenv("RINGKERNEL_NO_BULK_COPY", GetParam() ? "1" : saved.c_str(), 1);
  auto sys = StartSystem(o);  // reads it
  setenv("RINGKERNEL_NO_BULK_COPY", saved.c_str(), 1);
  ASSERT_NE(sys, nullptr);
  constexpr int kPairs = 8;
  const int kMessages = ::rk::testing::Scaled(3000);
  std::vector<ActorId> senders, checkers;
  for (int i = 0; i < kPairs; ++i) {
    senders.push_back(SpawnOrDie(*sys, "LargeSender", "sender" + std::to_string(i)));
    checkers.push_back(SpawnOrDie(*sys, "MixChecker", "checker" + std::to_string(i)));
  }
  for (int i = 0; i < kPairs; ++i) ASSERT_TRUE(sys->Send(senders[i], SendLarge{checkers[i], kMessages}).ok());
  int retries = 0;
  for (int i = 0; i < kPairs; ++i) {
    absl::StatusOr<std::optional<Message>> m = sys->Receive(absl::Seconds(30));
    ASSERT_TRUE(m.ok()) << m.status();
    ASSERT_TRUE(m->has_value()) << "a sender never finished";
    absl::StatusOr<LargeSent> done = (*m)->As<LargeSent>();
    ASSERT_TRUE(done.ok()) << done.status();
    EXPECT_EQ(done->sent, kMessages);
    retries += done->retries;
  }
  EXPECT_GT(retries, 0) << "16-slot mailboxes never met full: the senders did not overlap";
  for (int i = 0; i < kPairs; ++i) {
    absl::StatusOr<MixReport> r = sys->Ask<MixReport>(checkers[i], MixQuery{0}, kAsk);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->received, kMessages) << "checker " << i;
    EXPECT_EQ(r->last, kMessages) << "checker " << i;
    EXPECT_EQ(r->out_of_order, 0) << "checker " << i;
    EXPECT_EQ(r->bad_bytes, 0) << "checker " << i;
  }
  absl::StatusOr<StopReport> rep = sys->Stop();
  ASSERT_TRUE(rep.ok()) << rep.status();
  EXPECT_EQ(rep->unhandled, 0u) << rep->ToString();
}

INSTANTIATE_TEST_SUITE_P(BulkCopy, LargePayloadTest, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& p) {
                           return std::string(p.param ? "SendersCopy" : "BulkCopyWhereItCan");
                         });

TEST_P(StreamRunsTest, AMessageHandedBackMidStreamComesBackBeforeTheOnesAfterIt) {
  SystemOptions o;
  o.mailbox_capacity = 64;
  auto sys = StartSystem(o);
  ASSERT_NE(sys, nullptr);
  const ActorId picky = SpawnOrDie(*sys, "Picky", "picky");
  ASSERT_TRUE(sys->Ask<PickyReport>(picky, PickyConfig{7, 0}, kAsk).ok());
  const int kCount = ::rk::testing::Scaled(20000);
  const Produced pr = Stream(*sys, picky, kCount);
  EXPECT_EQ(pr.sent, kCount);
  absl::StatusOr<PickyReport> r = sys->Ask<PickyReport>(picky, PickyQuery{0}, kAsk);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->handled, kCount);
  EXPECT_EQ(r->last, kCount);
  EXPECT_EQ(r->violations, 0) << "a message handed back was overtaken";
  EXPECT_EQ(r->retries, kCount / 7);
  absl::StatusOr<StopReport> rep = sys->Stop();
  ASSERT_TRUE(rep.ok()) << rep.status();
  EXPECT_EQ(rep->unhandled, 0u) << rep->ToString();
  for (const ActorStats& a : rep->actors) {
    // Each hand-back is a delivery, not a handling: Seq messages, the
    // configuration and the query.
    if (a.name == "picky") {
      EXPECT_EQ(a.handled, static_cast<uint64_t>(kCount) + 2) << a.ToString();
    }
  }
}

TEST_P(StreamRunsTest, AFailureMidStreamHandlesExactlyTheMessagesBeforeItAndReportsTheRest) {
  SystemOptions o;
  o.mailbox_capacity = 64;
  auto sys = StartSystem(o);
  ASSERT_NE(sys, nullptr);
  const ActorId picky = SpawnOrDie(*sys, "Picky", "picky");
  const int kCount = ::rk::testing::Scaled(20000);
  const int kFailAt = kCount / 2 + 3;
  ASSERT_TRUE(sys->Ask<PickyReport>(picky, PickyConfig{0, kFailAt}, kAsk).ok());
  const Produced pr = Stream(*sys, picky, kCount);
  EXPECT_EQ(pr.sent + pr.no_actor, kCount);
  absl::StatusOr<StopReport> rep = sys->Stop();
  ASSERT_TRUE(rep.ok()) << rep.status();
  EXPECT_EQ(rep->unhandled, 0u) << rep->ToString();
  bool seen = false;
  for (const ActorStats& a : rep->actors) {
    if (a.name != "picky") continue;
    seen = true;
    // The configuration, then Seq 1 … kFailAt (the last of them failed it).
    EXPECT_EQ(a.handled, static_cast<uint64_t>(kFailAt) + 1) << a.ToString();
    // Every Seq accepted after it is reported, none lost; the rest were
    // refused at the send (kNoActor) once the producer learned of it.
    EXPECT_EQ(a.dead_lettered, static_cast<uint64_t>(pr.sent - kFailAt)) << a.ToString();
  }
  EXPECT_TRUE(seen);
}

// A rally: each player waits for the other's ball, so its owner is in a
// conversation and its handler's call waits for the next ball itself
// (ConvRun, rt_dispatch.cuh). The server serves ball 1 to the receiver:
// the receiver takes the odd balls, the server the even ones and the last.
// Balls handed back with retry_later come back before the next one, and
// the counts see every ball once.
TEST_P(StreamRunsTest, ARallysBallsHandedBackComeBackInOrderAndEveryBallCountsOnce) {
  auto sys = StartSystem();
  ASSERT_NE(sys, nullptr);
  const ActorId server = SpawnOrDie(*sys, "Rallyer", "server");
  const ActorId receiver = SpawnOrDie(*sys, "Rallyer", "receiver");
  const int kBalls = ::rk::testing::Scaled(4000) & ~1;  // even: the server ends the rally
  ASSERT_TRUE(sys->Ask<RallyResult>(receiver, RallyPlay{server, kBalls, 5, 0, 0}, kAsk).ok());
  ASSERT_TRUE(sys->Ask<RallyResult>(server, RallyPlay{receiver, kBalls, 6, 0, 1}, kAsk).ok());
  absl::StatusOr<std::optional<Message>> m = sys->Receive(absl::Seconds(30));
  ASSERT_TRUE(m.ok() && m->has_value()) << "the rally never ended";
  absl::StatusOr<RallyResult> end = (*m)->As<RallyResult>();
  ASSERT_TRUE(end.ok()) << end.status();
  EXPECT_EQ(end->last, kBalls);
  EXPECT_EQ(end->handled, kBalls / 2);
  EXPECT_EQ(end->violations, 0) << "a ball handed back was overtaken";
  EXPECT_EQ(end->retries, kBalls / 6) << "balls 6, 12, … each handed back once";
  absl::StatusOr<RallyResult> r = sys->Ask<RallyResult>(receiver, RallyQuery{0}, kAsk);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->handled, kBalls / 2);
  EXPECT_EQ(r->last, kBalls - 1);
  EXPECT_EQ(r->violations, 0);
  EXPECT_EQ(r->retries, ((kBalls - 1) / 5 + 1) / 2) << "the odd balls that are multiples of 5";
  absl::StatusOr<StopReport> rep = sys->Stop();
  ASSERT_TRUE(rep.ok()) << rep.status();
  EXPECT_EQ(rep->unhandled, 0u) << rep->ToString();
  for (const ActorStats& a : rep->actors) {
    // Its balls, the play and (the receiver) the query: a hand-back is a
    // delivery, not a handling.
    if (a.name == "server") {
      EXPECT_EQ(a.handled, static_cast<uint64_t>(kBalls / 2) + 1) << a.ToString();
    }
    if (a.name == "receiver") {
      EXPECT_EQ(a.handled, static_cast<uint64_t>(kBalls / 2) + 2) << a.ToString();
    }
  }
}

// A player that fails in the middle of a rally: exactly the balls before
// the failing one (and it) are handled, the failure is reported with its
// code, and the other player gets no ball after it.
TEST_P(StreamRunsTest, APlayerThatFailsMidRallyHandlesExactlyTheBallsUpToIt) {
  auto sys = StartSystem();
  ASSERT_NE(sys, nullptr);
  const ActorId server = SpawnOrDie(*sys, "Rallyer", "server");
  const ActorId receiver = SpawnOrDie(*sys, "Rallyer", "receiver");
  const int kBalls = ::rk::testing::Scaled(4000) & ~1;
  const int kFailAt = (kBalls / 2) | 1;  // a ball of the receiver's
  ASSERT_TRUE(sys->Ask<RallyResult>(receiver, RallyPlay{server, kBalls, 0, kFailAt, 0}, kAsk).ok());
  ASSERT_TRUE(sys->Ask<RallyResult>(server, RallyPlay{receiver, kBalls, 0, 0, 1}, kAsk).ok());
  std::vector<ActorFailure> failures;
  for (const absl::Time deadline = absl::Now() + absl::Seconds(30); failures.empty() && absl::Now() < deadline;) {
    failures = sys->TakeFailures();
    if (failures.empty()) absl::SleepFor(absl::Milliseconds(1));
  }
  ASSERT_EQ(failures.size(), 1u) << "the failure was never reported";
  EXPECT_EQ(failures[0].name, "receiver");
  EXPECT_EQ(failures[0].code, 78u);
  absl::StatusOr<RallyResult> s = sys->Ask<RallyResult>(server, RallyQuery{0}, kAsk);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->last, kFailAt - 1) << "the server got a ball after the receiver failed";
  EXPECT_EQ(s->handled, (kFailAt - 1) / 2);
  EXPECT_EQ(s->violations, 0);
  absl::StatusOr<StopReport> rep = sys->Stop();
  ASSERT_TRUE(rep.ok()) << rep.status();
  EXPECT_EQ(rep->unhandled, 0u) << rep->ToString();
  bool seen = false;
  for (const ActorStats& a : rep->actors) {
    if (a.name != "receiver") continue;
    seen = true;
    // The play, then balls 1, 3, … kFailAt (the last of them failed it).
    EXPECT_EQ(a.handled, static_cast<uint64_t>((kFailAt + 1) / 2) + 1) << a.ToString();
    EXPECT_EQ(a.dead_lettered, 0u) << a.ToString();
  }
  EXPECT_TRUE(seen);
}

INSTANTIATE_TEST_SUITE_P(Build, StreamRunsTest, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& p) {
                           return std::string(p.param ? "WithStreamRuns" : "Default");
                         });

TEST_F(SystemGpuTest, StatsAreReadWhileTheKernelRuns) {
  auto sys = StartSystem();
  ASSERT_NE(sys, nullptr);
  const ActorId seq = SpawnOrDie(*sys, "Sequencer", "seq");
  for (int n = 1; n <= 100; ++n) ASSERT_TRUE(sys->Send(seq, Seq{0, n}, absl::Now() + absl::Seconds(5)).ok());
  ASSERT_TRUE(sys->Ask<SeqReport>(seq, SeqQuery{0}, kAsk).ok());
  absl::StatusOr<SystemStats> a = sys->Stats();
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->phase, KernelPhase::kRunning);
  EXPECT_EQ(a->Find("seq")->handled, 101u);
  EXPECT_EQ(a->host_sent, 101u);
  EXPECT_EQ(a->ingress_delivered, 101u);
  for (int n = 101; n <= 150; ++n) ASSERT_TRUE(sys->Send(seq, Seq{0, n}, absl::Now() + absl::Seconds(5)).ok());
  ASSERT_TRUE(sys->Ask<SeqReport>(seq, SeqQuery{0}, kAsk).ok());
  absl::StatusOr<SystemStats> b = sys->Stats();
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->Find("seq")->handled, 152u);
  EXPECT_GT(b->flush_epoch, a->flush_epoch);
  uint64_t beats = 0;
  for (const WorkerStatsView& w : b->workers) beats += w.heartbeat;
  EXPECT_GT(beats, 0u);
}

// The application's own kernel for the test below: block b of T threads
// sums b*T + t over its threads in shared memory (so every thread of the
// block must run) and writes out[2b] = sum ^ seed and out[2b+1] = the SM it
// ran on.
constexpr char kApplicationKernel[] = R"(
extern "C" __global__ void rk_app_block_sums(unsigned long long* out, unsigned long long seed) {
  __shared__ unsigned long long sum;
  if (threadIdx.x == 0) sum = 0;
  __syncthreads();
  atomicAdd(&sum, static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x);
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned smid;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
    out[2 * blockIdx.x] = sum ^ seed;
    out[2 * blockIdx.x + 1] = smid;
  }
}
)";

// Polls `stream` (never blocks in the driver) until its work is done (true),
// it fails (the error), or `timeout` passes (false).
absl::StatusOr<bool> PollStream(const cuda::Stream& stream, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  for (;;) {
    absl::StatusOr<bool> done = stream.Query();
    if (!done.ok() || *done) return done;
    if (absl::Now() >= deadline) return false;
    absl::SleepFor(absl::Microseconds(200));
  }
}

// Test goals: a System started with SystemOptions::workers well below the
// maximum leaves the rest of the GPU to the application. With 4 workers the
// persistent kernel holds 5 blocks (4 workers and the service block); while
// it runs (an Ask has been answered), the application compiles its own
// kernel with NVRTC and launches it through the driver on its own
// non-blocking stream, one block per SM. That kernel must finish within 10 s
// with every block's result right; the system must then still answer, and
// Stop must report nothing lost.
TEST_F(SystemGpuTest, FewWorkersLeaveRoomForTheApplicationsOwnKernels) {
  constexpr uint32_t kWorkers = 4;
  constexpr uint32_t kThreads = 256;
  constexpr uint64_t kSeed = 0x5EED0000C0FFEEull;
  const DeviceInfo& info = runtime_->device();
  ASSERT_GT(info.multiprocessors, static_cast<int>(kWorkers) + 1)
      << "this test needs a GPU with more SMs than the system's " << kWorkers + 1 << " blocks";

  // The application's side, in the same (primary) context as the system:
  // its kernel is compiled, loaded and resolved before the system starts,
  // as an application does at start-up (a module loaded lazily while the
  // persistent kernel runs may wait for it).
  absl::StatusOr<cuda::PrimaryContext> context = cuda::PrimaryContext::Create(info.ordinal);
  ASSERT_TRUE(context.ok()) << context.status();
  ASSERT_TRUE(context->MakeCurrent().ok());
  absl::StatusOr<const cuda::DriverApi*> cu = cuda::Driver();
  ASSERT_TRUE(cu.ok()) << cu.status();
  jit::GeneratedUnit unit;
  unit.name = "rk_application_kernel.cu";
  unit.source = kApplicationKernel;
  std::vector<jit::Diagnostic> diagnostics;
  absl::StatusOr<jit::NvrtcOutput> compiled = jit::CompileForArch(unit, info.arch(), false, &diagnostics);
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  absl::StatusOr<cuda::Module> module = cuda::Module::Create(compiled->cubin.bytes, "application kernel");
  ASSERT_TRUE(module.ok()) << module.status();
  absl::StatusOr<CUfunction> kernel = module->GetFunction("rk_app_block_sums");
  ASSERT_TRUE(kernel.ok()) << kernel.status();

  const uint32_t blocks = static_cast<uint32_t>(info.multiprocessors);  // one block per SM
  // No zeroing and no synchronous copies while the system runs: those go
  // through the legacy stream, which waits for the persistent kernel (until
  // it exits). The kernel writes every word, and the result comes back on
  // our own stream into pinned memory.
  absl::StatusOr<cuda::DeviceBuffer> out = cuda::DeviceBuffer::Create(size_t{blocks} * 2 * 8);
  ASSERT_TRUE(out.ok()) << out.status();
  absl::StatusOr<cuda::Stream> stream = cuda::Stream::Create({.non_blocking = true});
  ASSERT_TRUE(stream.ok()) << stream.status();
  absl::StatusOr<cuda::MappedBuffer> results = cuda::MappedBuffer::Create(size_t{blocks} * 2 * 8);
  ASSERT_TRUE(results.ok()) << results.status();

  SystemOptions o;
  o.workers = kWorkers;
  auto sys = StartSystem(o);
  ASSERT_NE(sys, nullptr);
  EXPECT_EQ(sys->workers(), kWorkers);
  const ActorId neighbour = SpawnOrDie(*sys, "Fragile", "neighbour");
  absl::StatusOr<Poked> poked = sys->Ask<Poked>(neighbour, Poke{0}, kAsk);
  ASSERT_TRUE(poked.ok()) << poked.status();
  EXPECT_EQ(poked->pokes, 1);
  ASSERT_EQ(sys->phase(), KernelPhase::kRunning);

  CUdeviceptr out_ptr = out->get();
  uint64_t seed = kSeed;
  void* params[] = {&out_ptr, &seed};
  ASSERT_EQ((*cu)->cuLaunchKernel(*kernel, blocks, 1, 1, kThreads, 1, 1, 0, stream->get(), params, nullptr),
            CUDA_SUCCESS);
  absl::StatusOr<bool> done = PollStream(*stream, absl::Seconds(10));
  if (!done.ok() || !*done) {
    // Let the kernel have the SMs, so that it ends before its module and
    // buffer are released, then fail.
    (void)sys->Stop();
    (void)PollStream(*stream, absl::Seconds(10));
    FAIL() << "the application's kernel (" << blocks << " blocks of " << kThreads
           << " threads) did not finish within 10 s while a system of " << kWorkers << " workers ran: "
           << (done.ok() ? "still running" : done.status().ToString());
  }

  ASSERT_TRUE(out->DownloadAsync(*stream, results->host(), size_t{blocks} * 2 * 8).ok());
  done = PollStream(*stream, absl::Seconds(10));
  ASSERT_TRUE(done.ok() && *done) << "the copy of the results did not finish within 10 s";
  const uint64_t* result = static_cast<const uint64_t*>(results->host());
  std::set<uint64_t> sms;
  for (uint32_t b = 0; b < blocks; ++b) {
    const uint64_t sum = uint64_t{b} * kThreads * kThreads + uint64_t{kThreads} * (kThreads - 1) / 2;
    ASSERT_EQ(result[2 * b], sum ^ kSeed) << "block " << b;
    sms.insert(result[2 * b + 1]);
  }
  std::cout << "application kernel: " << blocks << " blocks ran on " << sms.size() << " of "
            << info.multiprocessors << " SMs beside a system of " << sys->workers() << " workers\n";

  // The system went on meanwhile, and loses nothing.
  poked = sys->Ask<Poked>(neighbour, Poke{0}, kAsk);
  ASSERT_TRUE(poked.ok()) << poked.status();
  EXPECT_EQ(poked->pokes, 2);
  EXPECT_TRUE(sys->Health().ok());
  absl::StatusOr<StopReport> rep = sys->Stop();
  ASSERT_TRUE(rep.ok()) << rep.status();
  EXPECT_TRUE(rep->drained) << rep->ToString();
  EXPECT_EQ(rep->unhandled, 0u) << rep->ToString();
  EXPECT_TRUE(rep->dead_letters.empty()) << rep->ToString();
  EXPECT_TRUE(rep->failures.empty()) << rep->ToString();
  EXPECT_TRUE(rep->undelivered.empty()) << rep->ToString();
  const ActorStats* n = nullptr;
  for (const ActorStats& a : rep->actors) {
    if (a.name == "neighbour") n = &a;
  }
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->received, 2u) << n->ToString();
  EXPECT_EQ(n->handled, 2u) << n->ToString();
  EXPECT_EQ(n->dead_lettered, 0u) << n->ToString();
}

// ---- The hand-over's marks (ARCHITECTURE.md, "Hand-over"): a host message
// is handled after every K2K message whose sender had reserved its place in
// the mailbox when the GPU read the host message, even one whose record is
// not written yet. Built with RK_TEST_HOLD_K2K_RECORD_NS, a K2K send holds
// between its reservation and its record, as a stalled thread would; the
// receiver's mailbox is its only queue (no channel arena).
constexpr char kHeldSource[] = R"(#include <ringkernel/actor.cuh>
struct HoldGo { rk::ActorId to; };
struct HoldStarted { int unused; };
struct HoldFirst { int unused; };
struct HoldSecond { int unused; };
struct HoldQuery { int unused; };
struct HoldOrder { int order; int count; };
// Answers, then sends HoldFirst (held after its reservation).
struct RK_ACTOR HoldSender {
  RK_HANDLER void on(const HoldGo& g, rk::Ctx& ctx) {
    ctx.reply(HoldStarted{0});
    ctx.send(g.to, HoldFirst{0});
  }
};
// The order it handled them in, a digit each: 1 HoldFirst, 2 HoldSecond.
struct RK_ACTOR HoldReceiver {
  int order;
  int count;
  RK_HANDLER void on(const HoldFirst& m, rk::Ctx& ctx) { order = order * 10 + 1; ++count; }
  RK_HANDLER void on(const HoldSecond& m, rk::Ctx& ctx) { order = order * 10 + 2; ++count; }
  RK_HANDLER void on(const HoldQuery& q, rk::Ctx& ctx) { ctx.reply(HoldOrder{order, count}); }
};
)";

TEST(HeldRecordGpuTest, AHostMessageWaitsForAK2kRecordReservedBeforeTheGpuReadItInOrder) {
  std::unique_ptr<Runtime> runtime;
  RK_GPU_TEST_SETUP(runtime);
  CompileOptions options;
  // The send holds its reserved position 300 ms (the host waits 30 ms of it
  // before its message: time enough for the reservation, under the
  // sanitizers too).
  options.defines = {"RK_TEST_HOLD_K2K_RECORD_NS=300000000"};
  absl::StatusOr<Program> p = runtime->CompileSources({{"held.cu", kHeldSource}}, options);
  ASSERT_TRUE(p.ok()) << p.status();
  SystemOptions o;
  o.channel_arena_bytes = 0;
  absl::StatusOr<std::unique_ptr<System>> started = runtime->Start(*p, ::rk::testing::TestOptions(o));
  ASSERT_TRUE(started.ok()) << started.status();
  System& sys = **started;
  absl::StatusOr<ActorId> receiver = sys.Spawn("HoldReceiver", "receiver");
  absl::StatusOr<ActorId> sender = sys.Spawn("HoldSender", "sender");
  ASSERT_TRUE(receiver.ok() && sender.ok());
  // The receiver is its worker's first actor (its host messages are handed
  // over), the sender on another worker (its hold stalls only its own warp).
  ASSERT_NE(internal::SystemAccess::WorkerOf(sys, *receiver), internal::SystemAccess::WorkerOf(sys, *sender));
  absl::StatusOr<HoldStarted> go = sys.Ask<HoldStarted>(*sender, HoldGo{*receiver}, kAsk);
  ASSERT_TRUE(go.ok()) << go.status();
  absl::SleepFor(absl::Milliseconds(30));
  ASSERT_TRUE(sys.Send(*receiver, HoldSecond{0}).ok());
  absl::StatusOr<HoldOrder> order = sys.Ask<HoldOrder>(*receiver, HoldQuery{0}, kAsk);
  ASSERT_TRUE(order.ok()) << order.status();
  EXPECT_EQ(order->count, 2);
  EXPECT_EQ(order->order, 12) << "the host message overtook a K2K message reserved before the GPU read it";
  absl::StatusOr<StopReport> rep = sys.Stop();
  ASSERT_TRUE(rep.ok()) << rep.status();
  EXPECT_TRUE(rep->drained) << rep->ToString();
  EXPECT_EQ(rep->unhandled, 0u) << rep->ToString();
}

}  // namespace
}  // namespace rk
