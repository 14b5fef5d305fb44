// Copyright 2026 The RingKernel Authors.
//
// Test goals: the shipped examples run on a real GPU and do what their
// comments say — through the embedded API (files, in-memory sources, a
// prebuilt package) and through `actorc run` with the example scripts.
//   * bank.cu: deposits, withdrawals and queries; an overdraft goes through
//     the live-bound route "audit" to the Auditor and on to the host;
//   * pingpong.cu: two actors rally 1000 times K2K; the HLC of the last hit
//     is later than the serve's;
//   * reduce.cu: a block handler sums a chunk with shared-memory scratch
//     and barriers, and the result equals the CPU's sum;
//   * `actorc run --stats-every MS` prints the system's statistics as JSON
//     lines while a script runs, each whole, naming the script's actors,
//     all before the system stops.
// The host's message types are the ones `actorc header` generates from the
// examples, as an application would use them, so every Send and Ask also
// checks their layouts against the program that runs.
#include <cmath>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "ringkernel/runtime.h"
#include "tests/gpu_test_support.h"
#include "tests/test_support.h"

// The examples' message types, generated at build time from the same
// fragments by ringkernel_add_program (tests/CMakeLists.txt).
#include "bank_program.h"      // Deposit, Withdraw, Query, Balance, Overdraft
#include "pingpong_program.h"  // Serve, Ball, RallyOver
#include "reduce_program.h"    // Chunk, Sum

namespace rk {
namespace {

using ::testing::HasSubstr;

class ExamplesGpuTest : public ::testing::Test {
 protected:
  void SetUp() override { RK_GPU_TEST_SETUP(runtime_); }
  std::string Handler(const std::string& name) { return ::rk::testing::SourceDir() + "/handlers/" + name; }
  std::unique_ptr<Runtime> runtime_;
};

void RunBank(Runtime& runtime, const Program& program) {
  absl::StatusOr<std::unique_ptr<System>> sys = runtime.Start(program, ::rk::testing::TestOptions());
  ASSERT_TRUE(sys.ok()) << sys.status();
  System& s = **sys;
  absl::StatusOr<ActorId> bank = s.Spawn("Bank", "bank");
  absl::StatusOr<ActorId> auditor = s.Spawn("Auditor", "auditor");
  ASSERT_TRUE(bank.ok() && auditor.ok());
  ASSERT_TRUE(s.Bind("audit", *auditor).ok());
  ASSERT_TRUE(s.Send(*bank, Deposit{1, 500}).ok());
  ASSERT_TRUE(s.Send(*bank, Deposit{1, 250}).ok());
  ASSERT_TRUE(s.Send(*bank, Withdraw{1, 100}).ok());
  absl::StatusOr<Balance> b = s.Ask<Balance>(*bank, Query{1}, absl::Seconds(5));
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->account, 1);
  EXPECT_EQ(b->cents, 650);
  ASSERT_TRUE(s.Send(*bank, Withdraw{2, 300}).ok());  // account 2 is empty: an overdraft
  absl::StatusOr<std::optional<Message>> m = s.Receive(absl::Seconds(5));
  ASSERT_TRUE(m.ok() && m->has_value());
  EXPECT_EQ(*s.NameOf((*m)->from), "auditor");
  absl::StatusOr<Overdraft> o = (*m)->As<Overdraft>();
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->account, 2);
  EXPECT_EQ(o->requested, 300);
  EXPECT_EQ(o->available, 0);
  absl::StatusOr<StopReport> r = s.Stop();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->drained);
  EXPECT_EQ(r->unhandled, 0u);
  EXPECT_EQ(r->handled, 6u);  // 5 for the bank, 1 for the auditor
}

TEST_F(ExamplesGpuTest, BankFromFiles) {
  absl::StatusOr<Program> p = runtime_->CompileFiles({Handler("bank.cu")});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_THAT(p->warnings(), ::testing::IsEmpty());
  RunBank(*runtime_, *p);
}

// What a build warned of stays with the program, whether the build ran or
// the compile cache answered it.
TEST_F(ExamplesGpuTest, SourcesRegisteredAtRunTimeKeepTheirWarningsThroughTheCache) {
  const Source quiet{"quiet.cu",
                     "#include <ringkernel/actor.cuh>\n"
                     "struct Tap { int n; };\n"
                     "struct RK_ACTOR Quiet {\n"
                     "  int seen;\n"
                     "  RK_HANDLER void on(const Tap& t, rk::Ctx& ctx) { int spare = 1; seen += t.n; }\n"
                     "};\n"};
  const std::vector<std::string> expected = {
      "quiet.cu:5:56: warning: variable \"spare\" was declared but never referenced"};
  absl::StatusOr<Program> first = runtime_->CompileSources({quiet});
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->warnings(), expected);
  absl::StatusOr<Program> second = runtime_->CompileSources({quiet});
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_TRUE(second->cache_hit());
  EXPECT_EQ(second->warnings(), expected);
}

TEST_F(ExamplesGpuTest, BankRegisteredAtRunTime) {
  absl::StatusOr<Program> p = runtime_->CompileSources({{"bank.cu", ::rk::testing::ReadFileOrDie(Handler("bank.cu"))}});
  ASSERT_TRUE(p.ok()) << p.status();
  RunBank(*runtime_, *p);
}

TEST_F(ExamplesGpuTest, BankFromAPackageBuiltByActorc) {
  ::rk::testing::TempDir dir;
  const std::string pkg = dir.Join("bank.rkpkg");
  ::rk::testing::CommandResult r =
      ::rk::testing::RunCommand({::rk::testing::ActorcPath(), "build", Handler("bank.cu"), "-o", pkg});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  absl::StatusOr<Program> p = runtime_->LoadPackage(pkg);
  ASSERT_TRUE(p.ok()) << p.status();
  RunBank(*runtime_, *p);
}

TEST_F(ExamplesGpuTest, PingPongRalliesActorToActor) {
  absl::StatusOr<Program> p = runtime_->CompileFiles({Handler("pingpong.cu")});
  ASSERT_TRUE(p.ok()) << p.status();
  absl::StatusOr<std::unique_ptr<System>> sys = runtime_->Start(*p, ::rk::testing::TestOptions());
  ASSERT_TRUE(sys.ok()) << sys.status();
  System& s = **sys;
  absl::StatusOr<ActorId> ping = s.Spawn("Player", "ping");
  absl::StatusOr<ActorId> pong = s.Spawn("Player", "pong");
  ASSERT_TRUE(ping.ok() && pong.ok());
  const int kExchanges = ::rk::testing::Scaled(1000);
  ASSERT_TRUE(s.Send(*ping, Serve{*pong, kExchanges}).ok());
  absl::StatusOr<std::optional<Message>> m = s.Receive(absl::Seconds(10));
  ASSERT_TRUE(m.ok() && m->has_value());
  absl::StatusOr<RallyOver> over = (*m)->As<RallyOver>();
  ASSERT_TRUE(over.ok()) << over.status();
  EXPECT_EQ(over->hits, kExchanges);
  // Ping serves (hit 1), so the players alternate and an even count ends on pong.
  EXPECT_EQ(over->last_hitter, kExchanges % 2 == 0 ? *pong : *ping);
  EXPECT_GT(over->ended_at, over->served_at);
  absl::StatusOr<SystemStats> st = s.Stats();
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->Find("ping")->handled + st->Find("pong")->handled, static_cast<uint64_t>(kExchanges));
}

TEST_F(ExamplesGpuTest, ReduceRunsABlockHandlerWithScratch) {
  absl::StatusOr<Program> p = runtime_->CompileFiles({Handler("reduce.cu")});
  ASSERT_TRUE(p.ok()) << p.status();
  SystemOptions o;
  o.threads_per_block = 128;
  o.scratch_bytes = 128 * sizeof(float);
  absl::StatusOr<std::unique_ptr<System>> sys = runtime_->Start(*p, ::rk::testing::TestOptions(o));
  ASSERT_TRUE(sys.ok()) << sys.status();
  absl::StatusOr<ActorId> r = (*sys)->Spawn("Reducer", "reducer");
  ASSERT_TRUE(r.ok());
  double running = 0;
  for (int round = 0; round < 20; ++round) {
    Chunk c{};
    c.n = 1 + (round * 7) % 64;
    for (int i = 0; i < 64; ++i) c.values[i] = static_cast<float>((i * 31 + round * 17) % 23) - 11.0f;
    const float expect = std::accumulate(c.values, c.values + c.n, 0.0f);
    absl::StatusOr<Sum> sum = (*sys)->Ask<Sum>(*r, c, absl::Seconds(5));
    ASSERT_TRUE(sum.ok()) << sum.status();
    EXPECT_EQ(sum->n, c.n);
    EXPECT_NEAR(sum->total, expect, 1e-3) << "round " << round;
    running += sum->total;
    EXPECT_NEAR(sum->running_total, running, 1e-2);
  }
}

TEST_F(ExamplesGpuTest, ActorcRunsTheBankScript) {
  ::rk::testing::CommandResult r = ::rk::testing::RunCommand(
      {::rk::testing::ActorcPath(), "run", Handler("bank.cu"), "--script",
       ::rk::testing::SourceDir() + "/examples/bank.jsonl"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr(R"({"line":8,"reply":{"from":"bank","msg":{"account":1,"cents":650},"type":"Balance"}})"));
  EXPECT_THAT(r.out, HasSubstr(R"("received":{"from":"auditor","msg":{"account":2,"available":0,"requested":300},"type":"Overdraft"})"));
  EXPECT_THAT(r.out, HasSubstr(R"({"stopped":{"drained":true,"handled":6,"unhandled":0}})"));
}

TEST_F(ExamplesGpuTest, ActorcRunsThePingPongAndReduceScripts) {
  ::rk::testing::CommandResult r = ::rk::testing::RunCommand(
      {::rk::testing::ActorcPath(), "run", Handler("pingpong.cu"), "--script",
       ::rk::testing::SourceDir() + "/examples/pingpong.jsonl"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr(R"("hits":1000)"));
  r = ::rk::testing::RunCommand({::rk::testing::ActorcPath(), "run", Handler("reduce.cu"), "--script",
                                 ::rk::testing::SourceDir() + "/examples/reduce.jsonl"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr(R"("total":93.0)"));
  EXPECT_THAT(r.out, HasSubstr(R"("total":10.0)"));
}

TEST_F(ExamplesGpuTest, ActorcRunStatsEveryPrintsStatsLinesWhileTheScriptRuns) {
  ::rk::testing::TempDir dir;
  const std::string script = dir.Join("watched.jsonl");
  ::rk::testing::WriteFileOrDie(script, R"({"spawn": "Bank", "name": "bank"}
{"spawn": "Auditor", "name": "auditor"}
{"bind": "audit", "to": "auditor"}
{"send": "bank", "type": "Deposit", "msg": {"account": 1, "cents": 500}}
{"sleep_ms": 400}
{"ask": "bank", "type": "Query", "msg": {"account": 1}, "timeout_ms": 1000}
)");
  ::rk::testing::CommandResult r = ::rk::testing::RunCommand(
      {::rk::testing::ActorcPath(), "run", Handler("bank.cu"), "--script", script, "--stats-every", "20"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Every line is whole JSON (the stats thread never writes inside the
  // script's lines); the periodic ones carry "at_ms" and all come before
  // the system stops.
  std::vector<nlohmann::json> periodic;
  size_t stopped_at = 0, last_periodic_at = 0, line_no = 0;
  int64_t last_ms = -1;
  for (absl::string_view line : absl::StrSplit(r.out, '\n', absl::SkipEmpty())) {
    ++line_no;
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    ASSERT_FALSE(j.is_discarded()) << "not JSON: " << line;
    if (j.contains("stopped")) stopped_at = line_no;
    if (!j.contains("at_ms")) continue;
    last_periodic_at = line_no;
    ASSERT_TRUE(j["at_ms"].is_number_integer()) << line;
    EXPECT_GE(j["at_ms"].get<int64_t>(), last_ms) << line;
    last_ms = j["at_ms"].get<int64_t>();
    ASSERT_TRUE(j.contains("stats") && j["stats"].is_object()) << line;
    const nlohmann::json& st = j["stats"];
    EXPECT_THAT(st["phase"].get<std::string>(), ::testing::AnyOf("starting", "running")) << line;
    ASSERT_TRUE(st["actors"].is_array()) << line;
    for (const nlohmann::json& a : st["actors"]) {
      EXPECT_THAT(a["name"].get<std::string>(), ::testing::AnyOf("bank", "auditor")) << line;
    }
    periodic.push_back(st);
  }
  // 400 ms of sleep alone at one line per 20 ms: many; at least one.
  ASSERT_GE(periodic.size(), 1u) << r.out;
  EXPECT_GT(stopped_at, last_periodic_at) << r.out;
  // By the last one, both actors exist and the deposit was handled.
  const nlohmann::json& last = periodic.back();
  ASSERT_EQ(last["actors"].size(), 2u) << last.dump();
  EXPECT_EQ(last["actors"][0]["name"], "bank");
  EXPECT_EQ(last["actors"][1]["name"], "auditor");
  EXPECT_GE(last["actors"][0]["handled"].get<uint64_t>(), 1u) << last.dump();
  EXPECT_GE(last["host_sent"].get<uint64_t>(), 1u) << last.dump();
  // --stats-every built the fragments with tracing: the bank's handler
  // times are there, copied out by the GPU's periodic flush (every 64 ms;
  // the deposit came 400 ms before the last line).
  ASSERT_TRUE(last["actors"][0]["timed_calls"].is_number_unsigned()) << last.dump();
  EXPECT_GE(last["actors"][0]["timed_calls"].get<uint64_t>(), 1u) << last.dump();
  EXPECT_TRUE(last["actors"][0]["handler_p50_ns"].is_number_unsigned()) << last.dump();
  EXPECT_TRUE(last["actors"][0]["handler_p99_ns"].is_number_unsigned()) << last.dump();
  // The script's own answer is still there.
  EXPECT_THAT(r.out, HasSubstr(R"("msg":{"account":1,"cents":500},"type":"Balance")"));
}

}  // namespace
}  // namespace rk
