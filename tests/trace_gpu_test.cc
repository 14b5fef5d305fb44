// Copyright 2026 The RingKernel Authors.
//
// The device timeline on the GPU (System::StartTrace, trace.h): a traced
// rally between two players comes out as the Chrome trace-event JSON that
// Perfetto opens, with one handler span per hit on each player's track, in
// order, and one flow per ball sent; a trace whose rings overflow says how
// many events it lost, and what it kept plus what it lost is every event
// the run made.
#include <cstdint>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "pingpong_program.h"
#include "ringkernel/runtime.h"
#include "ringkernel/status_macros.h"
#include "runtime/system_access.h"
#include "runtime/trace_events.h"
#include "semantics_program.h"
#include "tests/gpu_test_support.h"
#include "tests/test_support.h"

namespace rk {
namespace {

using json = nlohmann::json;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The events of a trace file by what they are.
struct Parsed {
  json doc;
  std::map<uint64_t, std::vector<json>> spans;  // actor track (tid) → its handler spans, by ts
  std::map<uint64_t, std::vector<json>> instants;  // actor track → its instants
  std::vector<json> flow_starts, flow_ends, host_calls, globals;
};

Parsed Parse(const std::string& text) {
  Parsed p;
  p.doc = json::parse(text);
  for (const json& e : p.doc["traceEvents"]) {
    const std::string ph = e["ph"];
    const uint64_t pid = e["pid"];
    if (ph == "X" && pid == 2) p.spans[e["tid"]].push_back(e);
    if (ph == "X" && pid == 3) p.host_calls.push_back(e);
    if (ph == "i" && e.value("s", "") == "g") p.globals.push_back(e);
    if (ph == "i" && pid == 2 && e.value("s", "") != "g") p.instants[e["tid"]].push_back(e);
    if (ph == "s") p.flow_starts.push_back(e);
    if (ph == "f") p.flow_ends.push_back(e);
  }
  return p;
}

// Stats, taken again until every actor named has handled at least `n`
// messages or 30 s have passed: the last snapshot.
absl::StatusOr<SystemStats> StatsOnceHandled(System& sys, const std::vector<std::string>& names, uint64_t n) {
  const absl::Time until = absl::Now() + absl::Seconds(30);
  for (;;) {
    RK_ASSIGN_OR_RETURN(SystemStats st, sys.Stats());
    bool all = true;
    for (const std::string& name : names) {
      const ActorStats* a = st.Find(name);
      all = all && a != nullptr && a->handled >= n;
    }
    if (all || absl::Now() >= until) return st;
  }
}

class TraceGpuTest : public ::testing::Test {
 protected:
  void SetUp() override { RK_GPU_TEST_SETUP(runtime_); }
  absl::StatusOr<Program> Traced(const std::string& file) {
    CompileOptions co;
    co.trace = true;
    return runtime_->CompileFiles({file}, co);
  }
  std::unique_ptr<Runtime> runtime_;
  ::rk::testing::TempDir dir_;
};

TEST_F(TraceGpuTest, ARallyHasOneSpanPerHitOnEachPlayersTrackAndOneFlowPerBall) {
  absl::StatusOr<Program> program = Traced(::rk::testing::SourceDir() + "/handlers/pingpong.cu");
  ASSERT_TRUE(program.ok()) << program.status();
  SystemOptions o;
  o.workers = ::rk::testing::CappedWorkers(2);
  absl::StatusOr<std::unique_ptr<System>> started = runtime_->Start(*program, o);
  ASSERT_TRUE(started.ok()) << started.status();
  System& sys = **started;
  absl::StatusOr<ActorId> a = sys.Spawn("Player", "a");
  absl::StatusOr<ActorId> b = sys.Spawn("Player", "b");
  ASSERT_TRUE(a.ok() && b.ok());
  const std::string path = dir_.Join("rally.json");
  ASSERT_TRUE(sys.StartTrace(path).ok());
  EXPECT_TRUE(sys.tracing());
  EXPECT_EQ(sys.StartTrace(path).code(), absl::StatusCode::kFailedPrecondition) << "a second trace while one runs";
  constexpr int kHits = 1000;
  // A spawn while tracing is a host call on the host track too.
  ASSERT_TRUE(sys.Spawn("Player", "spectator").ok());
  ASSERT_TRUE(sys.Send(*a, Serve{*b, kHits}).ok());
  absl::StatusOr<std::optional<Message>> over = sys.Receive(absl::Seconds(20));
  ASSERT_TRUE(over.ok() && over->has_value()) << over.status();
  ASSERT_TRUE(sys.StopTrace().ok());
  EXPECT_FALSE(sys.tracing());
  EXPECT_EQ(sys.StopTrace().code(), absl::StatusCode::kFailedPrecondition) << "no trace runs";
  ASSERT_TRUE(sys.Stop().ok());

  const std::string text = ReadAll(path);
  ASSERT_TRUE(internal::ValidateChromeTrace(text).ok()) << internal::ValidateChromeTrace(text);
  Parsed p = Parse(text);
  EXPECT_EQ(p.doc["otherData"]["dropped_events"], 0);
  // a serves and hits every other ball: kHits / 2 spans each, the first
  // of a's its Serve, every other a Ball.
  const uint64_t ta = a->value + 1, tb = b->value + 1;
  ASSERT_EQ(p.spans[ta].size(), static_cast<size_t>(kHits / 2));
  ASSERT_EQ(p.spans[tb].size(), static_cast<size_t>(kHits / 2));
  EXPECT_EQ(p.spans[ta][0]["name"], "Serve");
  for (uint64_t t : {ta, tb}) {
    for (size_t i = 1; i < p.spans[t].size(); ++i) {
      EXPECT_EQ(p.spans[t][i]["name"], "Ball") << "track " << t << " span " << i;
      // One actor handles one message at a time: its spans never overlap.
      const double end_prev = p.spans[t][i - 1]["ts"].get<double>() + p.spans[t][i - 1]["dur"].get<double>();
      EXPECT_LE(end_prev, p.spans[t][i]["ts"].get<double>()) << "track " << t << " span " << i;
    }
  }
  // The rally alternates: a's i-th hit comes before b's i-th, which comes
  // before a's (i+1)-th.
  for (size_t i = 0; i + 1 < p.spans[tb].size(); ++i) {
    EXPECT_LT(p.spans[ta][i]["ts"].get<double>(), p.spans[tb][i]["ts"].get<double>());
    EXPECT_LT(p.spans[tb][i]["ts"].get<double>(), p.spans[ta][i + 1]["ts"].get<double>());
  }
  // One flow per ball (kHits - 1 of them), each from the sender's track to
  // the receiver's, ending where a span begins.
  ASSERT_EQ(p.flow_starts.size(), static_cast<size_t>(kHits - 1));
  ASSERT_EQ(p.flow_ends.size(), static_cast<size_t>(kHits - 1));
  std::map<std::string, json> starts;
  for (const json& s : p.flow_starts) starts[s["id"].dump()] = s;
  std::set<double> span_begins;
  for (uint64_t t : {ta, tb}) {
    for (const json& s : p.spans[t]) span_begins.insert(s["ts"].get<double>());
  }
  for (const json& f : p.flow_ends) {
    auto it = starts.find(f["id"].dump());
    ASSERT_NE(it, starts.end()) << f.dump();
    EXPECT_NE(it->second["tid"], f["tid"]) << "a ball goes to the other player";
    EXPECT_TRUE(span_begins.count(f["ts"].get<double>())) << f.dump();
  }
  // The host's calls while tracing, on the host track: the spectator's
  // Spawn, then the Send (a and b were spawned before the trace began).
  ASSERT_EQ(p.host_calls.size(), 2u);
  EXPECT_EQ(p.host_calls[0]["name"], "Spawn");
  EXPECT_EQ(p.host_calls[1]["name"], "Send");
}

// Test goals: a trace ring that overflows loses events, never silently:
// the file counts them (and shows them), and the events it holds plus those
// it lost are exactly the events the run made.
TEST_F(TraceGpuTest, ARingThatOverflowsCountsWhatItLostAndKeepsTheRestExactly) {
  absl::StatusOr<Program> program = Traced(::rk::testing::TestDataDir() + "/gpu/semantics.cu");
  ASSERT_TRUE(program.ok()) << program.status();
  // One handler sends them all; the host does not drain the trace meanwhile,
  // so the ring of 256 events overflows whatever the GPU's speed.
  const int kDrops = ::rk::testing::Scaled(100000);
  SystemOptions o;
  o.workers = 1;
  o.trace_capacity = 256;
  o.mailbox_capacity = 1024;
  while (o.mailbox_capacity < static_cast<uint32_t>(kDrops)) o.mailbox_capacity *= 2;
  absl::StatusOr<std::unique_ptr<System>> started = runtime_->Start(*program, o);
  ASSERT_TRUE(started.ok()) << started.status();
  System& sys = **started;
  absl::StatusOr<ActorId> pourer = sys.Spawn("Pourer", "pourer");
  absl::StatusOr<ActorId> bucket = sys.Spawn("Bucket", "bucket");
  ASSERT_TRUE(pourer.ok() && bucket.ok());
  const std::string path = dir_.Join("flood.json");
  ASSERT_TRUE(sys.StartTrace(path).ok());
  internal::SystemAccess::PauseTraceDrain(sys, true);
  ASSERT_TRUE(sys.Send(*pourer, Pour{*bucket, kDrops}).ok());
  absl::StatusOr<std::optional<Message>> done = sys.Receive(absl::Seconds(30));
  ASSERT_TRUE(done.ok() && done->has_value()) << done.status();
  absl::StatusOr<Poured> as = (*done)->As<Poured>();
  ASSERT_TRUE(as.ok()) << as.status();
  const Poured poured = *as;
  ASSERT_EQ(poured.sent, kDrops);
  absl::StatusOr<SystemStats> st = StatsOnceHandled(sys, {"bucket"}, kDrops);
  ASSERT_TRUE(st.ok()) << st.status();
  ASSERT_EQ(st->Find("bucket")->handled, static_cast<uint64_t>(kDrops));
  internal::SystemAccess::PauseTraceDrain(sys, false);
  ASSERT_TRUE(sys.StopTrace().ok());
  ASSERT_TRUE(sys.Stop().ok());

  const std::string text = ReadAll(path);
  ASSERT_TRUE(internal::ValidateChromeTrace(text).ok()) << internal::ValidateChromeTrace(text);
  Parsed p = Parse(text);
  // The worker's ring (the last of dropped_per_worker is the monitor's,
  // whose depth samples are not counted below).
  const json& per_ring = p.doc["otherData"]["dropped_per_worker"];
  ASSERT_EQ(per_ring.size(), 2u);
  const uint64_t dropped = per_ring[0];
  EXPECT_GT(dropped, 0u) << "a ring of 256 events, not drained, cannot hold " << kDrops << " sends";
  EXPECT_EQ(p.doc["otherData"]["dropped_events"].get<uint64_t>(), dropped + per_ring[1].get<uint64_t>());
  bool shown = false;
  for (const json& g : p.globals) shown = shown || g["name"].get<std::string>().find("dropped") != std::string::npos;
  EXPECT_TRUE(shown) << "the loss is shown in the trace, not only counted";
  // What the run made: the pourer's begins (its first delivery and each
  // retry), its retries, its end, its sends (the drops and its report), and
  // a begin and an end for each drop the bucket handled.
  const uint64_t retries = static_cast<uint64_t>(poured.retries);
  const uint64_t made = (1 + retries) + retries + 1 + (static_cast<uint64_t>(kDrops) + 1) + 2ull * kDrops;
  // What the trace holds of it: two events a finished span (its begin and
  // end), one a span that was retried (its end is the retry, an instant) or
  // unfinished, one an end without its begin, one an instant.
  uint64_t kept = p.doc["otherData"].value("unmatched_ends", uint64_t{0});
  for (const auto& [tid, spans] : p.spans) {
    for (const json& s : spans) {
      kept += s["args"].value("unfinished", false) || s["args"].value("retried", false) ? 1 : 2;
    }
  }
  for (const auto& [tid, instants] : p.instants) kept += instants.size();
  EXPECT_EQ(kept + dropped, made) << "kept " << kept << ", dropped " << dropped << ", retries " << retries;
}

// A program built without tracing says so.
TEST_F(TraceGpuTest, StartTraceOnAProgramBuiltWithoutTracingNamesTheFix) {
  absl::StatusOr<Program> program = runtime_->CompileFiles({::rk::testing::SourceDir() + "/handlers/pingpong.cu"});
  ASSERT_TRUE(program.ok()) << program.status();
  SystemOptions o;
  o.workers = 1;
  absl::StatusOr<std::unique_ptr<System>> started = runtime_->Start(*program, o);
  ASSERT_TRUE(started.ok()) << started.status();
  const absl::Status s = (*started)->StartTrace(dir_.Join("none.json"));
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("CompileOptions::trace"), std::string::npos) << s;
  EXPECT_FALSE((*started)->tracing());
  ASSERT_TRUE((*started)->Stop().ok());
}

// Test goals: a program built with tracing keeps a histogram of handler
// times per actor on the GPU, and Stats, its text and its JSON, and the
// stop report read the right percentiles from it; a program built without
// keeps none and says so (null), rather than report zeros.
TEST_F(TraceGpuTest, HandlerTimesCountEveryCallAndTheirPercentilesBracketWhatTheHandlersTook) {
  absl::StatusOr<Program> program = Traced(::rk::testing::TestDataDir() + "/gpu/semantics.cu");
  ASSERT_TRUE(program.ok()) << program.status();
  SystemOptions o;
  o.workers = ::rk::testing::CappedWorkers(2);
  absl::StatusOr<std::unique_ptr<System>> started = runtime_->Start(*program, o);
  ASSERT_TRUE(started.ok()) << started.status();
  System& sys = **started;
  absl::StatusOr<ActorId> slow = sys.Spawn("Waiter", "slow");
  absl::StatusOr<ActorId> fast = sys.Spawn("Waiter", "fast");
  absl::StatusOr<ActorId> idle = sys.Spawn("Waiter", "idle");
  ASSERT_TRUE(slow.ok() && fast.ok() && idle.ok());
  constexpr int kCalls = 60;
  constexpr uint64_t kSlowNs = 40000;
  for (int i = 0; i < kCalls; ++i) {
    ASSERT_TRUE(sys.Send(*slow, Wait{static_cast<unsigned>(kSlowNs)}).ok());
    ASSERT_TRUE(sys.Send(*fast, Wait{0}).ok());
  }
  absl::StatusOr<SystemStats> st = StatsOnceHandled(sys, {"slow", "fast"}, kCalls);
  ASSERT_TRUE(st.ok()) << st.status();
  // A call's histogram count is an atomic add that nothing waits for: it
  // can land after the handled count that a flush shows, never be lost.
  const absl::Time until = absl::Now() + absl::Seconds(10);
  while (st->Find("slow")->timed_calls + st->Find("fast")->timed_calls < 2 * static_cast<uint64_t>(kCalls) &&
         absl::Now() < until) {
    st = sys.Stats();
    ASSERT_TRUE(st.ok()) << st.status();
  }
  const ActorStats& s = *st->Find("slow");
  const ActorStats& f = *st->Find("fast");
  const ActorStats& i = *st->Find("idle");
  ASSERT_EQ(s.handled, static_cast<uint64_t>(kCalls));
  ASSERT_EQ(f.handled, static_cast<uint64_t>(kCalls));
  EXPECT_TRUE(s.timed && f.timed && i.timed);
  EXPECT_EQ(s.timed_calls, static_cast<uint64_t>(kCalls));
  EXPECT_EQ(f.timed_calls, static_cast<uint64_t>(kCalls));
  EXPECT_EQ(i.timed_calls, 0u);
  // Every slow call took at least kSlowNs, so both percentiles are the
  // midpoints of buckets at or above the one that holds kSlowNs.
  const uint64_t floor_mid = (HandlerTimeBucketLow(HandlerTimeBucket(kSlowNs)) +
                              HandlerTimeBucketHigh(HandlerTimeBucket(kSlowNs))) / 2;
  EXPECT_GE(s.handler_p50_ns, floor_mid);
  EXPECT_GE(s.handler_p99_ns, s.handler_p50_ns);
  // And the wait dominates them: a slow call takes a little more than its
  // wait (the bound leaves room for a sanitizer's slow-down).
  EXPECT_LT(s.handler_p50_ns, 20 * kSlowNs);
  EXPECT_LT(f.handler_p50_ns, s.handler_p50_ns);
  const std::string text = st->ToText();
  EXPECT_NE(text.find("p50 µs"), std::string::npos) << text;
  EXPECT_NE(text.find("p99 µs"), std::string::npos) << text;
  const json j = json::parse(st->ToJson());
  bool seen = false;
  for (const json& a : j["actors"]) {
    if (a["name"] == "slow") {
      seen = true;
      EXPECT_EQ(a["timed_calls"], kCalls);
      EXPECT_EQ(a["handler_p50_ns"], s.handler_p50_ns);
      EXPECT_EQ(a["handler_p99_ns"], s.handler_p99_ns);
    }
    if (a["name"] == "idle") {
      EXPECT_EQ(a["timed_calls"], 0);
      EXPECT_TRUE(a["handler_p50_ns"].is_null()) << a.dump();
    }
  }
  EXPECT_TRUE(seen);
  // The kernel's last flush: the stop report has them too.
  ASSERT_TRUE(sys.Send(*fast, Wait{0}).ok());
  absl::StatusOr<StopReport> report = sys.Stop();
  ASSERT_TRUE(report.ok()) << report.status();
  bool found = false;
  for (const ActorStats& a : report->actors) {
    if (a.name == "fast") {
      found = true;
      EXPECT_EQ(a.timed_calls, static_cast<uint64_t>(kCalls + 1));
    }
  }
  EXPECT_TRUE(found);
}

// Test goals: sends from a block handler, made by a rank that is not the
// leader (the leader alone writes the handler's end), are each in the
// timeline with one flow to the handler that took it — none is held back
// for an end that its thread never writes.
TEST_F(TraceGpuTest, EverySendOfABlockHandlerHasItsFlowWhicheverRankSentIt) {
  absl::StatusOr<Program> program = Traced(::rk::testing::TestDataDir() + "/gpu/semantics.cu");
  ASSERT_TRUE(program.ok()) << program.status();
  SystemOptions o;
  o.workers = ::rk::testing::CappedWorkers(2);
  absl::StatusOr<std::unique_ptr<System>> started = runtime_->Start(*program, o);
  ASSERT_TRUE(started.ok()) << started.status();
  System& sys = **started;
  absl::StatusOr<ActorId> scatterer = sys.Spawn("Scatterer", "scatterer");
  absl::StatusOr<ActorId> bucket = sys.Spawn("Bucket", "bucket");
  ASSERT_TRUE(scatterer.ok() && bucket.ok());
  const std::string path = dir_.Join("scatter.json");
  ASSERT_TRUE(sys.StartTrace(path).ok());
  constexpr int kRounds = 3, kCount = 4;
  for (int i = 0; i < kRounds; ++i) ASSERT_TRUE(sys.Send(*scatterer, Scatter{*bucket, kCount}).ok());
  absl::StatusOr<SystemStats> st = StatsOnceHandled(sys, {"bucket"}, kRounds * kCount);
  ASSERT_TRUE(st.ok()) << st.status();
  ASSERT_EQ(st->Find("bucket")->handled, static_cast<uint64_t>(kRounds * kCount));
  ASSERT_TRUE(sys.StopTrace().ok());
  ASSERT_TRUE(sys.Stop().ok());

  const std::string text = ReadAll(path);
  ASSERT_TRUE(internal::ValidateChromeTrace(text).ok()) << internal::ValidateChromeTrace(text);
  Parsed p = Parse(text);
  EXPECT_EQ(p.doc["otherData"]["dropped_events"], 0);
  const uint64_t ts = scatterer->value + 1, tb = bucket->value + 1;
  EXPECT_EQ(p.spans[ts].size(), static_cast<size_t>(kRounds));
  EXPECT_EQ(p.spans[tb].size(), static_cast<size_t>(kRounds * kCount));
  ASSERT_EQ(p.flow_starts.size(), static_cast<size_t>(kRounds * kCount)) << "one flow per send";
  ASSERT_EQ(p.flow_ends.size(), static_cast<size_t>(kRounds * kCount));
  for (const json& f : p.flow_starts) EXPECT_EQ(f["tid"], ts) << f.dump();
  for (const json& f : p.flow_ends) EXPECT_EQ(f["tid"], tb) << f.dump();
}

TEST_F(TraceGpuTest, AProgramBuiltWithoutTracingKeepsNoHandlerTimesAndSaysSo) {
  absl::StatusOr<Program> program = runtime_->CompileFiles({::rk::testing::TestDataDir() + "/gpu/semantics.cu"});
  ASSERT_TRUE(program.ok()) << program.status();
  SystemOptions o;
  o.workers = 1;
  absl::StatusOr<std::unique_ptr<System>> started = runtime_->Start(*program, o);
  ASSERT_TRUE(started.ok()) << started.status();
  System& sys = **started;
  absl::StatusOr<ActorId> w = sys.Spawn("Waiter", "w");
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE(sys.Send(*w, Wait{1000}).ok());
  absl::StatusOr<SystemStats> st = StatsOnceHandled(sys, {"w"}, 1);
  ASSERT_TRUE(st.ok()) << st.status();
  ASSERT_EQ(st->Find("w")->handled, 1u);
  EXPECT_FALSE(st->Find("w")->timed);
  EXPECT_EQ(st->ToText().find("p50"), std::string::npos) << st->ToText();
  const json j = json::parse(st->ToJson());
  EXPECT_TRUE(j["actors"][0]["timed_calls"].is_null()) << j.dump();
  EXPECT_TRUE(j["actors"][0]["handler_p99_ns"].is_null()) << j.dump();
  ASSERT_TRUE(sys.Stop().ok());
}

}  // namespace
}  // namespace rk
