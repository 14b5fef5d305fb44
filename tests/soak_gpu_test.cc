// Copyright 2026 The RingKernel Authors.
//
// Test goals (issue 9, "a runtime that survives its users"): a system under
// sustained hostile use keeps every promise of the README at once, for
// RINGKERNEL_SOAK_SECONDS (default 60; times RINGKERNEL_TEST_SCALE, which
// sanitizer runs set to 0.01, at least 1 s):
//   * host threads Send (some without a deadline into a full ring: refused)
//     and Ask (some Asks are never answered, some have short timeouts, so
//     replies come late), while producers keep K2K traffic flowing into
//     small mailboxes, by id and through a route that the host rebinds and
//     unbinds all along; they meet kFull and wait with ctx.retry_later;
//   * sinks fail (ctx.fail) on command and are replaced by fresh spawns while
//     traffic to them flows;
//   * at the end Stop, with a deadline, returns in time, and every message
//     is accounted for exactly once, per kind and per source: handled
//     (counted by the actor that handled it — and by the runtime, which must
//     agree), dead-lettered with a reason (its dead letter carries its bytes,
//     so its source and sequence number), refused at the send with a clear
//     status (counted by the sender, never accepted), or unhandled in the
//     report; the per-source sums of sequence numbers rule out double counts;
//   * FIFO per (sender, receiver), host -> actor and actor -> actor: every
//     receiver sees each source's sequence numbers rise;
//   * replies to Asks that gave up are counted as late, and never reach
//     Receive; an answered Ask gets its own reply;
//   * the host's memory does not grow (RSS at 25 % of the run and at the end).
// The random choices come from RINGKERNEL_SOAK_SEED (printed); the timing of
// a run is the GPU's. Under a sanitizer the traffic is paced, so that the GPU,
// slowed down a hundredfold, is not left with a backlog it cannot finish.
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <iostream>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/cleanup/cleanup.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "ringkernel/runtime.h"
#include "tests/gpu_test_support.h"
#include "tests/test_support.h"

// The message types of soak.cu, generated at build time from it by
// ringkernel_add_program (tests/CMakeLists.txt).
#include "soak_program.h"

namespace rk {
namespace {

using Clock = std::chrono::steady_clock;
using soak::Kind;

// The fragment's constants, from the generated types.
constexpr int kSources = static_cast<int>(std::extent_v<decltype(soak::Tally::count)>);
constexpr int kKinds = static_cast<int>(std::extent_v<decltype(soak::Tally::kinds)>);
constexpr int kSlots = static_cast<int>(std::extent_v<decltype(soak::Start::targets)>);
// Sources (soak.cu): host threads, the chaos thread, the main thread, producers.
constexpr int kHostThreads = 4;
constexpr int kChaosSrc = 4;
constexpr int kMainSrc = 5;
constexpr int kFirstProducerSrc = 8;
constexpr int kProducers = 8;
constexpr int kSinks = kSlots;
static_assert(kHostThreads <= kChaosSrc && kFirstProducerSrc + kProducers <= kSources, "sources overlap");
constexpr int kBurst = 16;  // Works per Pump (2 under a sanitizer)
constexpr auto kFaultInterval = std::chrono::milliseconds(200);

constexpr int K(Kind k) { return static_cast<int>(k); }
// Kinds a sink handles (its tally counts their sources); the others go to producers.
constexpr bool SinkBound(int kind) { return kind <= K(Kind::kDie); }
constexpr const char* kKindNames[] = {"tally query", "host send", "host ask", "k2k by id",
                                      "k2k by route", "die", "pump", "control"};
static_assert(std::size(kKindNames) == kKinds);

// The header every message to a sink or a producer starts with.
struct Header {
  int32_t src;
  Kind kind;
  int64_t seq;
};
template <class M>
constexpr bool StartsWithHeader() {
  return offsetof(M, src) == offsetof(Header, src) && offsetof(M, kind) == offsetof(Header, kind) &&
         offsetof(M, seq) == offsetof(Header, seq) && sizeof(M) >= sizeof(Header);
}
static_assert(StartsWithHeader<soak::Work>() && StartsWithHeader<soak::Query>() && StartsWithHeader<soak::Die>() &&
                  StartsWithHeader<soak::TallyQuery>() && StartsWithHeader<soak::Start>() &&
                  StartsWithHeader<soak::Retarget>() && StartsWithHeader<soak::Pump>() &&
                  StartsWithHeader<soak::Halt>() && StartsWithHeader<soak::ProducerQuery>(),
              "every message a sink or producer handles starts with the header");

using ::rk::testing::SlowFactor;
using ::rk::testing::TestScale;

double SoakSeconds() {
  const char* v = std::getenv("RINGKERNEL_SOAK_SECONDS");
  int seconds = v != nullptr ? std::atoi(v) : 60;
  if (seconds <= 0) seconds = 60;
  return std::max(1.0, seconds * TestScale());
}

uint64_t SoakSeed() {
  const char* v = std::getenv("RINGKERNEL_SOAK_SEED");
  return v != nullptr ? std::strtoull(v, nullptr, 0) : 0x50A4'2026ull;
}

// Resident set size of this process.
uint64_t RssBytes() {
  std::ifstream statm("/proc/self/statm");
  uint64_t size = 0, resident = 0;
  statm >> size >> resident;
  return resident * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

// Messages of one source: how many and the sum of their sequence numbers
// (mod 2^64). A message counted twice and another not at all would have to
// carry the same number to leave both unchanged.
struct Stream {
  uint64_t count = 0;
  uint64_t sum = 0;
  void Add(int64_t seq) {
    ++count;
    sum += static_cast<uint64_t>(seq);
  }
  void Add(uint64_t n, uint64_t s) {
    count += n;
    sum += s;
  }
  void Add(const Stream& o) { Add(o.count, o.sum); }
};
using KindCounts = std::array<uint64_t, kKinds>;

// What the background collector thread gathers: dead letters (folded into
// counts as they come, so that the host keeps no more of them), failures,
// the tallies sinks send as they die, and anything else that reaches
// Receive (nothing should).
class Ledger {
 public:
  void AddDeadLetters(const std::vector<DeadLetter>& letters) {
    absl::MutexLock lock(&mu_);
    for (const DeadLetter& d : letters) {
      Header h{};
      if (d.reason == DeadLetterReason::kNone || d.bytes.size() < sizeof(Header)) {
        NoteBad(absl::StrCat("a dead letter of '", d.type, "' to ", d.to_name, " with reason ",
                             DeadLetterReasonName(d.reason), " and ", d.bytes.size(), " bytes"));
        continue;
      }
      std::memcpy(&h, d.bytes.data(), sizeof(h));
      const int k = K(h.kind);
      if (k < 0 || k >= kKinds || h.src < 0 || h.src >= kSources) {
        NoteBad(absl::StrCat("a dead letter of '", d.type, "' with source ", h.src, " and kind ", k));
        continue;
      }
      ++dead_[k];
      ++reasons_[DeadLetterReasonName(d.reason)];
      if (SinkBound(k)) dead_src_[h.src].Add(h.seq);
      if (h.kind == Kind::kDie) die_dead_.insert(d.to.value);
    }
  }
  void AddFailures(const std::vector<ActorFailure>& failures) {
    absl::MutexLock lock(&mu_);
    for (const ActorFailure& f : failures) {
      if (!failed_.emplace(f.actor.value, f.code).second) ++duplicate_failures_;
    }
  }
  // A message from Receive (or in the report's undelivered): only the
  // tallies of dying sinks are expected.
  void AddMessage(const Message& m) {
    absl::StatusOr<soak::Tally> t = m.As<soak::Tally>();
    absl::MutexLock lock(&mu_);
    if (!t.ok() || t->died != 1) {
      if (stray_++ == 0) first_stray_ = absl::StrCat("a '", m.type, "' from actor ", m.from.value);
      return;
    }
    if (!tallies_.emplace(t->sink, *t).second) ++duplicate_tallies_;
  }
  // One Die outcome: the sink failed, or the Die was dead-lettered.
  bool DieSettled(ActorId sink) const {
    absl::MutexLock lock(&mu_);
    return failed_.count(sink.value) != 0 || die_dead_.count(sink.value) != 0;
  }
  bool Failed(ActorId sink) const {
    absl::MutexLock lock(&mu_);
    return failed_.count(sink.value) != 0;
  }
  void NoteBad(const std::string& what) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (bad_++ == 0) first_bad_ = what;
  }

  mutable absl::Mutex mu_;
  KindCounts dead_ ABSL_GUARDED_BY(mu_){};
  std::array<Stream, kSources> dead_src_ ABSL_GUARDED_BY(mu_){};
  std::map<std::string, uint64_t> reasons_ ABSL_GUARDED_BY(mu_);
  std::set<uint32_t> die_dead_ ABSL_GUARDED_BY(mu_);
  std::map<uint32_t, uint32_t> failed_ ABSL_GUARDED_BY(mu_);  // actor -> code
  std::map<uint32_t, soak::Tally> tallies_ ABSL_GUARDED_BY(mu_);  // of sinks that died
  uint64_t duplicate_failures_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t duplicate_tallies_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t stray_ ABSL_GUARDED_BY(mu_) = 0;
  std::string first_stray_ ABSL_GUARDED_BY(mu_);
  uint64_t bad_ ABSL_GUARDED_BY(mu_) = 0;
  std::string first_bad_ ABSL_GUARDED_BY(mu_);
};

// One host thread's counts, read once it has joined.
struct HostTotals {
  Stream stream;  // its messages accepted (its source's)
  KindCounts sent{};
  uint64_t refused_full = 0;      // Send without a deadline: ResourceExhausted
  uint64_t refused_deadline = 0;  // a Send (or an Ask's send) with a deadline: DeadlineExceeded
  uint64_t asks = 0, answered = 0, timed_out = 0, ask_actor_failed = 0;
  Stream ask_dead;  // Queries whose dead letter answered their Ask (it never reaches TakeDeadLetters)
  uint64_t wrong_answers = 0;
  std::string unexpected;
};

// The chaos thread's: Dies, spawns, route bindings.
struct ChaosTotals {
  Stream dies;
  KindCounts sent{};
  uint64_t refused = 0, faults = 0, rebinds = 0, unbinds = 0, unsettled = 0;
  std::map<uint32_t, uint32_t> codes;  // sink -> the code its Die carried
  std::vector<ActorId> spawned;
  std::string unexpected;
};

class SoakGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RK_GPU_TEST_SETUP(runtime_);
    absl::StatusOr<Program> p = runtime_->CompileFiles({::rk::testing::TestDataDir() + "/gpu/soak.cu"});
    ASSERT_TRUE(p.ok()) << p.status();
    program_ = *p;
  }
  std::unique_ptr<Runtime> runtime_;
  Program program_;
};

TEST_F(SoakGpuTest, HostileTrafficFailuresAndRebindsLoseNothingAndKeepFifo) {
  const double seconds = SoakSeconds();
  const uint64_t seed = SoakSeed();
  const int slow = SlowFactor();
  const bool full_scale = TestScale() >= 1.0;
  std::cout << absl::StrFormat("soak: %.1f s, seed 0x%x (RINGKERNEL_SOAK_SEED), scale %g\n", seconds, seed,
                               TestScale());

  SystemOptions o;
  o.workers = ::rk::testing::CappedWorkers(16);
  o.mailbox_capacity = 64;  // small: producers meet kFull
  const uint64_t max_faults = static_cast<uint64_t>(seconds * 1000 / kFaultInterval.count()) + 16;
  o.max_actors = static_cast<uint32_t>((kSinks + kProducers + max_faults + 64 + 255) / 256 * 256);
  absl::StatusOr<std::unique_ptr<System>> started = runtime_->Start(program_, o);
  ASSERT_TRUE(started.ok()) << started.status();
  System& sys = **started;

  std::array<std::atomic<uint32_t>, kSinks> sinks;
  std::vector<ActorId> all_sinks;
  for (int i = 0; i < kSinks; ++i) {
    absl::StatusOr<ActorId> id = sys.Spawn("soak::Sink", absl::StrCat("sink-", i));
    ASSERT_TRUE(id.ok()) << id.status();
    sinks[i].store(id->value);
    all_sinks.push_back(*id);
  }
  std::vector<ActorId> producers;
  for (int p = 0; p < kProducers; ++p) {
    absl::StatusOr<ActorId> id = sys.Spawn("soak::Producer", absl::StrCat("producer-", p));
    ASSERT_TRUE(id.ok()) << id.status();
    producers.push_back(*id);
  }
  ASSERT_TRUE(sys.Bind("soak", all_sinks[0]).ok());

  // The main thread's messages: control to producers, tally queries to sinks.
  KindCounts main_sent{};
  Stream main_stream;  // its TallyQueries (source kMainSrc)
  const absl::Duration kLong = absl::Seconds(20) * slow;
  for (int p = 0; p < kProducers; ++p) {
    soak::Start s{};
    s.src = kMainSrc;
    s.kind = Kind::kControl;
    s.id = kFirstProducerSrc + p;
    s.burst = full_scale ? kBurst : 2;
    s.slots = kSinks;
    for (int i = 0; i < kSinks; ++i) s.targets[i] = ActorId{sinks[i].load()};
    ASSERT_TRUE(sys.Send(producers[p], s, absl::Now() + kLong).ok());
    ++main_sent[K(Kind::kControl)];
  }

  Ledger ledger;
  std::atomic<bool> stop_traffic{false};
  std::atomic<bool> stop_collector{false};
  std::string collector_error;
  std::array<HostTotals, kHostThreads> host{};
  ChaosTotals chaos;
  std::thread collector, chaos_thread;
  std::vector<std::thread> host_threads;
  // Every thread is joined before the test returns, an assertion's early
  // return included.
  absl::Cleanup join_all = [&] {
    stop_traffic.store(true);
    for (std::thread& th : host_threads) {
      if (th.joinable()) th.join();
    }
    if (chaos_thread.joinable()) chaos_thread.join();
    stop_collector.store(true);
    if (collector.joinable()) collector.join();
  };
  collector = std::thread([&] {
    auto last_take = Clock::now();
    while (!stop_collector.load()) {
      absl::StatusOr<std::optional<Message>> m = sys.Receive(absl::Milliseconds(5));
      if (!m.ok()) {
        collector_error = std::string(m.status().message());
        return;
      }
      if (m->has_value()) ledger.AddMessage(**m);
      if (Clock::now() - last_take >= std::chrono::milliseconds(10)) {
        ledger.AddDeadLetters(sys.TakeDeadLetters());
        ledger.AddFailures(sys.TakeFailures());
        last_take = Clock::now();
      }
    }
  });

  for (int t = 0; t < kHostThreads; ++t) {
    host_threads.emplace_back([&, t] {
      HostTotals& tot = host[t];
      std::mt19937_64 rng(seed + 1 + t);
      while (!stop_traffic.load(std::memory_order_relaxed)) {
        // Under a sanitizer the GPU takes a few thousand messages a second:
        // a host thread that sent at full speed would leave a backlog of
        // tens of thousands in the rings for the end of the run.
        if (!full_scale) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        const ActorId to{sinks[rng() % kSinks].load()};
        const uint64_t dice = rng() % 100;
        const int64_t seq = static_cast<int64_t>(tot.stream.count) + 1;
        if (dice < 88) {
          const soak::Work w{t, Kind::kHostSend, seq};
          const absl::Status s = dice < 80 ? sys.Send(to, w) : sys.Send(to, w, absl::Now() + absl::Milliseconds(1));
          if (s.ok()) {
            tot.stream.Add(seq);
            ++tot.sent[K(Kind::kHostSend)];
          } else if (s.code() == absl::StatusCode::kResourceExhausted) {
            ++tot.refused_full;
            std::this_thread::sleep_for(std::chrono::microseconds(20));
          } else if (s.code() == absl::StatusCode::kDeadlineExceeded) {
            ++tot.refused_deadline;
          } else {
            tot.unexpected = absl::StrCat("Send: ", s.ToString());
            return;
          }
          continue;
        }
        // Asks: most with a long timeout; some with a short one (replies
        // then often come after the Ask gave up: late); some to a handler
        // that never replies.
        const int mode = dice >= 98 ? 1 : 0;
        const absl::Duration timeout =
            dice < 95 ? absl::Seconds(2) * slow : absl::Microseconds(50 + static_cast<int64_t>(rng() % 250));
        ++tot.asks;
        absl::StatusOr<soak::Answer> r = sys.Ask<soak::Answer>(to, soak::Query{t, Kind::kHostAsk, seq, mode, 0}, timeout);
        if (!r.ok() && absl::StartsWith(r.status().message(), "Send:")) {
          // Its message was never accepted (the ring stayed full).
          if (r.status().code() != absl::StatusCode::kDeadlineExceeded) {
            tot.unexpected = absl::StrCat("Ask: ", r.status().ToString());
            return;
          }
          ++tot.refused_deadline;
          continue;
        }
        tot.stream.Add(seq);
        ++tot.sent[K(Kind::kHostAsk)];
        if (r.ok()) {
          ++tot.answered;
          if (r->seq != seq || r->sink != to.value) ++tot.wrong_answers;
        } else if (r.status().code() == absl::StatusCode::kDeadlineExceeded) {
          ++tot.timed_out;
        } else if (r.status().code() == absl::StatusCode::kFailedPrecondition &&
                   absl::StrContains(r.status().message(), "was dead-lettered")) {
          tot.ask_dead.Add(seq);
        } else if (r.status().code() == absl::StatusCode::kFailedPrecondition &&
                   absl::StrContains(r.status().message(), "failed with code")) {
          ++tot.ask_actor_failed;  // handled before it failed, or dead-lettered after: the ledger has it
        } else {
          tot.unexpected = absl::StrCat("Ask: ", r.status().ToString());
          return;
        }
      }
    });
  }

  // Chaos: kills a sink every kFaultInterval (its Die makes it send its
  // tally and fail), spawns its replacement and points the producers at
  // it; rebinds the route every few milliseconds, sometimes unbinding it.
  const auto start = Clock::now();
  chaos_thread = std::thread([&] {
    std::mt19937_64 rng(seed ^ 0xC4A05ull);
    ActorId route_to = all_sinks[0];
    auto next_fault = start + kFaultInterval;
    auto next_bind = start;
    const absl::Duration kControlDeadline = absl::Seconds(2) * slow;
    auto bind = [&](ActorId to) {
      const absl::Status s = sys.Bind("soak", to);
      if (!s.ok()) {
        chaos.unexpected = absl::StrCat("Bind: ", s.ToString());
        return false;
      }
      ++chaos.rebinds;
      route_to = to;
      return true;
    };
    for (int n = 0; !stop_traffic.load();) {
      const auto now = Clock::now();
      if (now >= next_bind) {
        if (rng() % 8 == 0) {
          const absl::Status s = sys.Unbind("soak");
          if (!s.ok()) {
            chaos.unexpected = absl::StrCat("Unbind: ", s.ToString());
            return;
          }
          ++chaos.unbinds;
          route_to = ActorId{};
        } else if (!bind(ActorId{sinks[rng() % kSinks].load()})) {
          return;
        }
        next_bind = now + std::chrono::milliseconds(2 + rng() % 10);
      }
      if (now >= next_fault) {
        next_fault = std::max(next_fault + kFaultInterval, now);
        const int slot = static_cast<int>(rng() % kSinks);
        const ActorId victim{sinks[slot].load()};
        const uint32_t code = 1000 + n;
        const int64_t seq = static_cast<int64_t>(chaos.dies.count) + 1;
        const absl::Status s = sys.Send(victim, soak::Die{kChaosSrc, Kind::kDie, seq, code, 0},
                                        absl::Now() + kControlDeadline);
        if (!s.ok()) {
          if (s.code() != absl::StatusCode::kDeadlineExceeded) {
            chaos.unexpected = absl::StrCat("Send(Die): ", s.ToString());
            return;
          }
          ++chaos.refused;
          continue;
        }
        chaos.dies.Add(seq);
        ++chaos.sent[K(Kind::kDie)];
        ++chaos.faults;
        chaos.codes[victim.value] = code;
        absl::StatusOr<ActorId> fresh = sys.Spawn("soak::Sink", absl::StrCat("sink-r", n));
        ++n;
        if (!fresh.ok()) {
          chaos.unexpected = absl::StrCat("Spawn: ", fresh.status().ToString());
          return;
        }
        chaos.spawned.push_back(*fresh);
        sinks[slot].store(fresh->value);
        for (const ActorId p : producers) {
          const absl::Status r =
              sys.Send(p, soak::Retarget{kChaosSrc, Kind::kControl, 0, slot, *fresh}, absl::Now() + kControlDeadline);
          if (r.ok()) {
            ++chaos.sent[K(Kind::kControl)];
          } else if (r.code() == absl::StatusCode::kDeadlineExceeded) {
            ++chaos.refused;
          } else {
            chaos.unexpected = absl::StrCat("Send(Retarget): ", r.ToString());
            return;
          }
        }
        if (route_to == victim && !bind(*fresh)) return;
        // One Die outstanding at a time: it fails the sink, or comes back
        // as a dead letter (its mailbox stayed full).
        const auto until = Clock::now() + std::chrono::seconds(10) * slow;
        while (!ledger.DieSettled(victim) && Clock::now() < until) {
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        if (!ledger.DieSettled(victim)) ++chaos.unsettled;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });

  // The run, with the host's memory read at 25 % of it and at the end.
  const auto run = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  std::this_thread::sleep_until(start + run / 4);
  const uint64_t rss_quarter = RssBytes();
  {
    absl::StatusOr<SystemStats> st = sys.Stats();
    EXPECT_TRUE(st.ok()) << st.status();
    if (st.ok()) {
      std::cout << absl::StrFormat("soak: at 25%%: %d actors, host ring full %d, outbound full %d, late replies %d\n",
                                   st->actors.size(), st->host_ring_full, st->outbound_full, st->late_replies);
    }
  }
  std::this_thread::sleep_until(start + run);
  stop_traffic.store(true);
  for (std::thread& th : host_threads) th.join();
  chaos_thread.join();
  for (int t = 0; t < kHostThreads; ++t) {
    ASSERT_TRUE(host[t].unexpected.empty()) << "host thread " << t << ": " << host[t].unexpected;
  }
  ASSERT_TRUE(chaos.unexpected.empty()) << chaos.unexpected;

  // Quiesce: producers stop (the Pump already queued is handled and sends
  // nothing), then report; a report is handled after everything the
  // producer had queued, so its counts are final.
  std::vector<soak::Produced> produced;
  for (int p = 0; p < kProducers; ++p) {
    absl::StatusOr<soak::Produced> h =
        sys.Ask<soak::Produced>(producers[p], soak::Halt{kMainSrc, Kind::kControl, 0}, kLong);
    if (!h.ok()) {
      // What the producer and its worker were doing: twice, a second
      // apart, so that a producer still sending (its `sent` and `kFull`
      // rising) tells itself apart from one that stopped.
      for (int look = 0; look < 2; ++look) {
        if (look != 0) std::this_thread::sleep_for(std::chrono::seconds(1));
        absl::StatusOr<SystemStats> st = sys.Stats();
        std::cout << "soak: producer " << p << "'s Halt unanswered; the system "
                  << (st.ok() ? st->ToText(/*with_workers=*/true) : st.status().ToString()) << "\n";
      }
    }
    ASSERT_TRUE(h.ok()) << "producer " << p << ": " << h.status();
    ++main_sent[K(Kind::kControl)];
  }
  for (int p = 0; p < kProducers; ++p) {
    absl::StatusOr<soak::Produced> r =
        sys.Ask<soak::Produced>(producers[p], soak::ProducerQuery{kMainSrc, Kind::kControl, 0}, kLong);
    ASSERT_TRUE(r.ok()) << "producer " << p << ": " << r.status();
    ++main_sent[K(Kind::kControl)];
    EXPECT_EQ(r->running, 0) << "producer " << p;
    produced.push_back(*r);
  }
  stop_collector.store(true);
  collector.join();
  ASSERT_TRUE(collector_error.empty()) << collector_error;
  ledger.AddDeadLetters(sys.TakeDeadLetters());
  ledger.AddFailures(sys.TakeFailures());
  for (;;) {
    absl::StatusOr<std::optional<Message>> m = sys.Receive(absl::Milliseconds(20));
    ASSERT_TRUE(m.ok()) << m.status();
    if (!m->has_value()) break;
    ledger.AddMessage(**m);
  }

  // Every sink that ever lived: a dead one sent its tally before failing
  // (so it came back before the failure); a live one answers one now,
  // after everything it had queued.
  all_sinks.insert(all_sinks.end(), chaos.spawned.begin(), chaos.spawned.end());
  std::map<uint32_t, soak::Tally> tallies;
  std::vector<uint32_t> dead_without_tally;
  for (const ActorId s : all_sinks) {
    if (ledger.Failed(s)) {
      absl::MutexLock lock(&ledger.mu_);
      auto it = ledger.tallies_.find(s.value);
      if (it == ledger.tallies_.end()) {
        dead_without_tally.push_back(s.value);
      } else {
        tallies.emplace(s.value, it->second);
      }
      continue;
    }
    const int64_t seq = static_cast<int64_t>(main_stream.count) + 1;
    absl::StatusOr<soak::Tally> t = sys.Ask<soak::Tally>(s, soak::TallyQuery{kMainSrc, Kind::kTally, seq}, kLong);
    ASSERT_TRUE(t.ok()) << "sink " << s.value << ": " << t.status();
    main_stream.Add(seq);
    ++main_sent[K(Kind::kTally)];
    EXPECT_EQ(t->died, 0);
    EXPECT_EQ(t->sink, s.value);
    tallies.emplace(s.value, *t);
  }
  EXPECT_TRUE(dead_without_tally.empty()) << dead_without_tally.size() << " sink(s) failed without a tally, e.g. "
                                          << dead_without_tally.front();
  // Every reply was written before the tally of the sink that wrote it: the
  // late ones are all counted by now.
  absl::StatusOr<SystemStats> final_stats = sys.Stats();
  ASSERT_TRUE(final_stats.ok()) << final_stats.status();
  const uint64_t rss_end = RssBytes();

  const absl::Duration stop_timeout = absl::Seconds(30) * slow;
  const auto stop_began = Clock::now();
  absl::StatusOr<StopReport> report = sys.Stop(stop_timeout);
  const double stop_seconds = std::chrono::duration<double>(Clock::now() - stop_began).count();
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_LE(stop_seconds, absl::ToDoubleSeconds(stop_timeout)) << "Stop returned after its deadline";
  EXPECT_TRUE(report->drained) << "a quiet system must drain: " << report->ToString();
  ledger.AddDeadLetters(report->dead_letters);
  ledger.AddFailures(report->failures);
  for (const Message& m : report->undelivered) ledger.AddMessage(m);

  // ---- Everyone's counts, added up. ----
  for (int t = 0; t < kHostThreads; ++t) {
    EXPECT_EQ(host[t].wrong_answers, 0u) << "host thread " << t << " got another Ask's reply";
  }
  EXPECT_EQ(chaos.unsettled, 0u) << "Dies that neither failed their sink nor came back as dead letters";

  KindCounts sent = main_sent, handled{}, dead{};
  std::array<Stream, kSources> expected{}, observed{};
  expected[kMainSrc] = main_stream;
  expected[kChaosSrc] = chaos.dies;
  uint64_t refused_full = 0, refused_deadline = chaos.refused, asks = 0, answered = 0, timed_out = 0;
  uint64_t ask_actor_failed = 0;
  for (int t = 0; t < kHostThreads; ++t) {
    for (int k = 0; k < kKinds; ++k) sent[k] += host[t].sent[k];
    expected[t] = host[t].stream;
    observed[t].Add(host[t].ask_dead);
    dead[K(Kind::kHostAsk)] += host[t].ask_dead.count;
    refused_full += host[t].refused_full;
    refused_deadline += host[t].refused_deadline;
    asks += host[t].asks;
    answered += host[t].answered;
    timed_out += host[t].timed_out;
    ask_actor_failed += host[t].ask_actor_failed;
  }
  for (int k = 0; k < kKinds; ++k) sent[k] += chaos.sent[k];
  uint64_t k2k_full = 0, no_actor = 0;
  for (int p = 0; p < kProducers; ++p) {
    const soak::Produced& r = produced[p];
    for (int k = 0; k < kKinds; ++k) {
      sent[k] += r.sent[k];
      handled[k] += r.kinds[k];
    }
    // Works 1..seq, by id or by route.
    const uint64_t n = static_cast<uint64_t>(r.seq);
    expected[kFirstProducerSrc + p].Add(n, n % 2 == 0 ? n / 2 * (n + 1) : (n + 1) / 2 * n);
    EXPECT_EQ(static_cast<uint64_t>(r.sent[K(Kind::kK2k)] + r.sent[K(Kind::kRoute)]), n) << "producer " << p;
    EXPECT_EQ(r.other, 0) << "producer " << p << ": refusals other than kFull and kNoActor";
    k2k_full += r.full;
    no_actor += r.no_actor;
  }
  int64_t violations = 0, reply_full = 0, replied = 0;
  uint64_t deaths = 0;
  for (const auto& [id, t] : tallies) {
    for (int k = 0; k < kKinds; ++k) handled[k] += t.kinds[k];
    for (int s = 0; s < kSources; ++s) observed[s].Add(t.count[s], t.sum[s]);
    violations += t.violations;
    reply_full += t.reply_full;
    replied += t.replied;
    deaths += t.died != 0;
  }
  // Dead letters that reached the host (taken, or in the report), and
  // failures: each a Die's, with its code, each after its sink's tally.
  uint64_t dead_letters = 0, failures_seen = 0;
  std::map<std::string, uint64_t> reasons;
  {
    absl::MutexLock lock(&ledger.mu_);
    EXPECT_EQ(ledger.bad_, 0u) << ledger.first_bad_;
    EXPECT_EQ(ledger.stray_, 0u) << "messages that reached Receive besides the dying sinks' tallies, e.g. "
                                 << ledger.first_stray_;
    EXPECT_EQ(ledger.duplicate_tallies_, 0u);
    EXPECT_EQ(ledger.duplicate_failures_, 0u);
    for (int k = 0; k < kKinds; ++k) {
      dead[k] += ledger.dead_[k];
      dead_letters += ledger.dead_[k];
    }
    for (int s = 0; s < kSources; ++s) observed[s].Add(ledger.dead_src_[s]);
    reasons = ledger.reasons_;
    for (const auto& [actor, code] : ledger.failed_) {
      auto it = chaos.codes.find(actor);
      if (it == chaos.codes.end()) {
        ADD_FAILURE() << "actor " << actor << " failed with code " << code << " but was never told to";
      } else {
        EXPECT_EQ(code, it->second) << "actor " << actor;
      }
    }
    failures_seen = ledger.failed_.size();
  }
  uint64_t ask_dead_letters = 0;
  for (int t = 0; t < kHostThreads; ++t) ask_dead_letters += host[t].ask_dead.count;
  EXPECT_LE(failures_seen + report->failures_dropped, deaths) << "failures without a Die";

  // What the runtime could not attribute: messages queued at the halt
  // (none, after a drain), dead letters the GPU had no room to write back
  // (reports_lost, less the failure records lost), dead letters the host
  // dropped past its bound.
  const uint64_t lost_failures = deaths - std::min(deaths, failures_seen + report->failures_dropped);
  EXPECT_LE(lost_failures, report->reports_lost) << "failures neither reported nor counted as lost";
  const uint64_t lost_letters = report->reports_lost - std::min(report->reports_lost, lost_failures);
  const uint64_t unaccounted = report->unhandled + lost_letters + report->dead_letters_dropped;

  // ---- Per kind: sent == handled + dead-lettered (+ what the report could
  // not attribute), never more. ----
  uint64_t total_sent = 0, total_handled = 0, total_dead = 0;
  for (int k = 0; k < kKinds; ++k) {
    EXPECT_LE(handled[k] + dead[k], sent[k]) << kKindNames[k] << ": counted more often than sent";
    if (unaccounted == 0) {
      EXPECT_EQ(handled[k] + dead[k], sent[k]) << kKindNames[k];
    }
    total_sent += sent[k];
    total_handled += handled[k];
    total_dead += dead[k];
    std::cout << absl::StrFormat("soak:   %-13s sent %12d  handled %12d  dead-lettered %9d\n", kKindNames[k], sent[k],
                                 handled[k], dead[k]);
  }
  EXPECT_EQ(total_sent, total_handled + total_dead + unaccounted)
      << "unhandled " << report->unhandled << ", reports lost " << lost_letters << ", dead letters dropped "
      << report->dead_letters_dropped;

  // ---- Per source: each message exactly once, and in order. ----
  for (int s = 0; s < kSources; ++s) {
    if (unaccounted == 0) {
      EXPECT_EQ(observed[s].count, expected[s].count) << "source " << s << ": messages handled or dead-lettered";
      EXPECT_EQ(observed[s].sum, expected[s].sum) << "source " << s << ": a message counted twice, another never";
    } else {
      EXPECT_LE(observed[s].count, expected[s].count) << "source " << s;
    }
  }
  EXPECT_EQ(violations, 0) << "FIFO per (sender, receiver) broken";

  // ---- The runtime's own counters agree with the actors'. ----
  uint64_t runtime_dead = 0;
  for (const ActorStats& a : report->actors) {
    runtime_dead += a.dead_lettered + a.rejected;
    if (auto it = tallies.find(a.id.value); it != tallies.end()) {
      EXPECT_EQ(a.handled, static_cast<uint64_t>(it->second.handled)) << a.ToString();
      EXPECT_EQ(a.state, it->second.died ? ActorState::kFailed : ActorState::kRunning) << a.ToString();
      if (it->second.died) {
        EXPECT_EQ(a.fail_code, chaos.codes[a.id.value]) << a.ToString();
      }
    }
    for (int p = 0; p < kProducers; ++p) {
      if (a.id == producers[p]) {
        EXPECT_EQ(a.handled, static_cast<uint64_t>(produced[p].handled)) << a.ToString();
      }
    }
  }
  EXPECT_EQ(runtime_dead, dead_letters + ask_dead_letters + lost_letters + report->dead_letters_dropped)
      << "the actors' dead_lettered + rejected against the dead letters that reached the host";

  // ---- Asks: a late reply is counted, never Received (the ledger saw no
  // stray Answer). Every Query of mode 0 handled was answered, so the late
  // ones are those handled but not answered. ----
  const uint64_t expected_late = static_cast<uint64_t>(replied) - std::min<uint64_t>(replied, answered);
  EXPECT_LE(final_stats->late_replies, expected_late) << "a reply counted late twice, or an answered one";
  // A reply that a concurrent drain hands to its Ask just as that Ask passes
  // its deadline is dropped without being counted (SystemImpl::Ask's
  // deadline branch erases the completed entry); rare, hence the slack.
  EXPECT_GE(final_stats->late_replies + 2 + expected_late / 100, expected_late);

  // ---- Memory: the host's resident set does not grow. ----
  const int64_t growth = static_cast<int64_t>(rss_end) - static_cast<int64_t>(rss_quarter);
  std::cout << absl::StrFormat("soak: RSS %.1f MiB at 25%%, %.1f MiB at the end (%+.1f MiB)\n",
                               rss_quarter / 1048576.0, rss_end / 1048576.0, growth / 1048576.0);
  if (full_scale) {
    EXPECT_LT(growth, int64_t{64} << 20) << "the host's memory grew";
  }

  // ---- It was a soak: every hostile thing happened. ----
  EXPECT_GT(chaos.faults, 0u);
  EXPECT_GT(chaos.rebinds, 0u);
  EXPECT_GT(timed_out, 0u) << "Asks of a handler that never replies time out";
  if (full_scale) {
    EXPECT_GT(k2k_full, 0u) << "producers never met a full mailbox";
  }

  std::string reason_list;
  for (const auto& [reason, n] : reasons) absl::StrAppend(&reason_list, reason_list.empty() ? "" : ", ", reason, " ", n);
  std::cout << absl::StrFormat(
      "soak: %.0f s: messages sent %d, handled %d, dead-lettered %d (%s), refused %d (host ring full %d, deadline "
      "%d), unhandled %d, reports lost %d; faults injected %d, actors replaced %d, rebinds %d (unbinds %d); asks %d, "
      "answered %d, timed out %d (late replies %d of %d expected), actor failed %d; kFull seen %d (K2K %d, replies "
      "%d); kNoActor %d; Stop %.3f s\n",
      seconds, total_sent, total_handled, total_dead, reason_list.empty() ? "none" : reason_list,
      refused_full + refused_deadline, refused_full, refused_deadline, report->unhandled, report->reports_lost,
      chaos.faults, chaos.spawned.size(), chaos.rebinds, chaos.unbinds, asks, answered, timed_out,
      final_stats->late_replies, expected_late, ask_actor_failed, k2k_full + reply_full, k2k_full, reply_full,
      no_actor, stop_seconds);
}

}  // namespace
}  // namespace rk
