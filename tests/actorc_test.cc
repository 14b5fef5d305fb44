// Copyright 2026 The RingKernel Authors.
//
// actorc end to end, as a user runs it: check, build, inspect, header and
// run (up to the GPU), with the exit codes of its contract — 0 ok, 1 a
// problem in the input, 2 a usage or environment problem — and the exact
// messages for bad input. Runs without a GPU (CI).
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/libclang.h"
#include "nlohmann/json.hpp"
#include "tests/test_support.h"

namespace rk::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class ActorcTest : public ::testing::Test {
 protected:
  void SetUp() override { cache_env_ = "RINGKERNEL_CACHE_DIR=" + dir_.Join("cache"); }
  CommandResult Actorc(std::vector<std::string> args, const std::string& stdin_data = "") {
    args.insert(args.begin(), ActorcPath());
    return RunCommand(args, {cache_env_}, stdin_data, 300);
  }
  std::string Handler(const std::string& name) { return SourceDir() + "/handlers/" + name; }
  std::string Write(const std::string& name, const std::string& contents) {
    WriteFileOrDie(dir_.Join(name), contents);
    return dir_.Join(name);
  }

  TempDir dir_;
  std::string cache_env_;
};

TEST_F(ActorcTest, CheckSummarisesAGoodProgram) {
  CommandResult r = Actorc({"check", Handler("bank.cu")});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "ok: 2 actor type(s), 4 handler(s), 5 message type(s), 1 route(s)\n");
}

TEST_F(ActorcTest, CheckReportsErrorsAtTheUsersLineWithExitCode1) {
  const std::string bad = Write("bad.cu",
                                "#include <ringkernel/actor.cuh>\n"
                                "struct Ping { int n; };\n"
                                "struct RK_ACTOR A {\n"
                                "  RK_HANDLER void on(const Ping& p, rk::Ctx& ctx) { undefined_call(p.n); }\n"
                                "};\n");
  CommandResult r = Actorc({"check", bad});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr(bad + ":4:53: error: use of undeclared identifier 'undefined_call'"));
  EXPECT_THAT(r.err, HasSubstr("failed to build"));
  EXPECT_EQ(r.out, "");
}

// Found by tests/fuzz/frontend_fuzzer: a fragment on which libclang 16 itself
// crashes (a clang bug: clang++-16 -fsyntax-only crashes on it too). libclang
// recovers, and actorc reports it rather than crashing. The crashed parse's
// memory is never freed (libclang leaks it by design), so leak checking is
// off for this child in the sanitizer build (scripts/sanitize.sh).
TEST_F(ActorcTest, ALibclangCrashIsReportedNotFatal) {
  absl::StatusOr<std::string> version = jit::LibclangVersion();
  ASSERT_TRUE(version.ok()) << version.status();
  if (jit::ParseClangMajorVersion(*version) != 16) GTEST_SKIP() << "the crash is libclang 16's: " << *version;
  const std::string bad = Write("crash.cu", "struct RK_ACTOR A\nn(){struct{struct RK_ACTOR A.;struct RK_ACTOR A");
  CommandResult r = RunCommand({ActorcPath(), "check", bad}, {cache_env_, "ASAN_OPTIONS=detect_leaks=0"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("actorc: libclang (" + *version +
                               ") failed to parse the handler fragments (it crashed)\n"));
  EXPECT_EQ(r.out, "");
}

TEST_F(ActorcTest, BuildInspectAndHeaderDescribeTheSameProgram) {
  const std::string pkg = dir_.Join("bank.rkpkg");
  CommandResult r = Actorc({"build", Handler("bank.cu"), "-o", pkg});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "wrote " + pkg + " (sm_89, sm_90, compute_90 (PTX))\n");

  r = Actorc({"inspect", pkg});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("  Bank  (type 1, state 520 bytes, constructed at spawn)"));
  EXPECT_THAT(r.out, HasSubstr("    thread on(const Deposit&)  message 2"));
  EXPECT_THAT(r.out, HasSubstr("  struct Deposit  (16 bytes, align 8, message id 2)"));
  EXPECT_THAT(r.out, HasSubstr("  0 \"audit\"  used at "));
  EXPECT_THAT(r.out, ::testing::ContainsRegex("sm_90 +cubin +[0-9]+ bytes  [0-9]+ registers, 0 B spill stores"));
  EXPECT_THAT(r.out, HasSubstr("compute_90  ptx"));

  r = Actorc({"inspect", pkg, "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["images"].size(), 3u);
  EXPECT_EQ(j["model"]["actors"].size(), 2u);
  EXPECT_GT(j["images"][1]["resources"]["registers"].get<int>(), 0);

  // The header compiles with the host compiler, and its layout checks hold.
  const std::string header = dir_.Join("bank.h");
  r = Actorc({"header", pkg, "-o", header});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string text = ReadFileOrDie(header);
  EXPECT_THAT(text, HasSubstr("struct Deposit {\n  int32_t account;"));
  EXPECT_THAT(text,
              HasSubstr("\nRK_HOST_MESSAGE_LAYOUT(::Deposit, \"Deposit\", \"account:int32@0;cents:int64@8\");\n"));
  EXPECT_THAT(text, HasSubstr("\nRK_HOST_MESSAGE_LAYOUT(::Overdraft, \"Overdraft\", "
                              "\"account:int32@0;requested:int64@8;available:int64@16\");\n"));
  EXPECT_THAT(text, HasSubstr("inline constexpr const char kRouteAudit[] = \"audit\";"));
  const std::string main_cc = Write("main.cc",
                                    "#include \"bank.h\"\n"
                                    "static_assert(sizeof(Overdraft) == 24);\n"
                                    "int main() { return rk::MessageTraits<Deposit>::kName[0] == 'D' ? 0 : 1; }\n");
  r = RunCommand({"/usr/bin/g++", "-std=c++20", "-I" + SourceDir() + "/include", "-I/usr/include", "-fsyntax-only",
                  main_cc});
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

// A warning is printed by every check and build of the fragment, the ones
// the compile cache answers too, and the package keeps it for inspect.
TEST_F(ActorcTest, WarningsArePrintedAgainOnACacheHitAndInspectShowsThem) {
  const std::string frag = Write("spare.cu",
                                 "#include <ringkernel/actor.cuh>\n"
                                 "struct Ping { int n; };\n"
                                 "struct RK_ACTOR A {\n"
                                 "  int seen;\n"
                                 "  RK_HANDLER void on(const Ping& p, rk::Ctx& ctx) { int spare = 1; seen += p.n; }\n"
                                 "};\n");
  const std::string warning = frag + ":5:57: warning: variable \"spare\" was declared but never referenced\n";
  for (int i = 0; i < 2; ++i) {
    CommandResult r = Actorc({"check", frag, "--arch", "sm_90", "--timings"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_THAT(r.err, HasSubstr(warning)) << "check " << i + 1;
    EXPECT_THAT(r.err, HasSubstr(i == 0 ? "cache miss" : "cache hit"));
    EXPECT_EQ(r.out, "ok: 1 actor type(s), 1 handler(s), 1 message type(s), 0 route(s)\n");
  }
  const std::string pkg = dir_.Join("spare.rkpkg");
  CommandResult r = Actorc({"build", frag, "--arch", "sm_90", "-o", pkg});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr(warning));
  r = Actorc({"inspect", pkg});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("\nwarnings of the build:\n  " + warning));
  r = Actorc({"inspect", pkg, "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["warnings"], nlohmann::json::array({warning.substr(0, warning.size() - 1)}));

  // A program without warnings: no section.
  const std::string bank = dir_.Join("bank.rkpkg");
  ASSERT_EQ(Actorc({"build", Handler("bank.cu"), "--arch", "sm_90", "-o", bank}).exit_code, 0);
  r = Actorc({"inspect", bank});
  EXPECT_THAT(r.out, Not(HasSubstr("warnings of the build")));
}

TEST_F(ActorcTest, HeaderDeclaresTheProgramsEnumsAndTheHostCompilerAgrees) {
  const std::string cu = Write("market.cu",
                               "namespace market {\n"
                               "enum class Side : short { kBuy = 1, kSell = -1 };\n"
                               "enum Venue { kLit, kDark };\n"
                               "struct Order { int account; Side side; Venue venues[2]; };\n"
                               "}  // namespace market\n"
                               "struct RK_ACTOR Desk {\n"
                               "  int n;\n"
                               "  RK_HANDLER void on(const market::Order& o, rk::Ctx&) { n += o.account; }\n"
                               "};\n");
  const std::string pkg = dir_.Join("market.rkpkg");
  CommandResult r = Actorc({"build", cu, "-o", pkg, "--arch", "sm_90"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = Actorc({"inspect", pkg});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("\nenums:\n  enum class market::Side : int16  { kBuy = 1, kSell = -1 }  " + cu +
                               ":2:12\n  enum market::Venue : uint32  { kLit = 0, kDark = 1 }  " + cu + ":3:6\n"));
  const std::string header = dir_.Join("market.h");
  r = Actorc({"header", pkg, "-o", header});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string text = ReadFileOrDie(header);
  EXPECT_THAT(text, HasSubstr("namespace market {\nenum class Side : int16_t { kBuy = 1, kSell = -1 };\n"
                              "}  // namespace market\n"));
  EXPECT_THAT(text, HasSubstr("namespace market {\nenum Venue : uint32_t { kLit = 0, kDark = 1 };\n"));
  EXPECT_THAT(text, HasSubstr("  ::market::Side side;  // market::Side, offset 4\n"));
  EXPECT_THAT(text, HasSubstr("  ::market::Venue venues[2];  // market::Venue[2], offset 8\n"));
  EXPECT_THAT(text, HasSubstr("RK_HOST_MESSAGE_LAYOUT(::market::Order, \"market::Order\", \"account:int32@0;"
                              "side:enum market::Side:int16{kBuy=1,kSell=-1}@4;"
                              "venues:enum market::Venue:uint32{kLit=0,kDark=1}[2]@8\");\n"));
  // The enums are declared before use, with the program's values and sizes.
  const std::string main_cc = Write("main.cc",
                                    "#include \"market.h\"\n"
                                    "#include <type_traits>\n"
                                    "static_assert(std::is_same_v<decltype(market::Order::side), market::Side>);\n"
                                    "static_assert(static_cast<int>(market::Side::kSell) == -1);\n"
                                    "static_assert(market::kDark == 1 && sizeof(market::Order) == 16);\n"
                                    "int main() { return market::Order{1, market::Side::kBuy, {market::kLit, "
                                    "market::kDark}}.account == 1 ? 0 : 1; }\n");
  r = RunCommand({"/usr/bin/g++", "-std=c++20", "-Wall", "-Wextra", "-Werror", "-I" + SourceDir() + "/include",
                  "-I/usr/include", "-fsyntax-only", main_cc});
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST_F(ActorcTest, BadUsageIsExitCode2WithTheReason) {
  CommandResult r = Actorc({});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("actorc: no command given"));
  r = Actorc({"frobnicate"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("actorc: unknown command 'frobnicate'"));
  r = Actorc({"build", Handler("bank.cu")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("actorc: build needs -o APP.rkpkg"));
  r = Actorc({"build", Handler("bank.cu"), "-o", dir_.Join("x.rkpkg"), "--arch", "sm_42"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("unknown architecture 'sm_42'"));
  r = Actorc({"check", Handler("bank.cu"), "--bogus"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("actorc: unknown option '--bogus'"));
  r = Actorc({"check", dir_.Join("missing.cu")});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr(dir_.Join("missing.cu")));
}

TEST_F(ActorcTest, StatsEveryNeedsAPositiveWholeNumberOfMilliseconds) {
  const std::string script = SourceDir() + "/examples/bank.jsonl";
  for (const std::string bad : {"0", "-5", "abc", "10x", "", "1.5", "3600001", "99999999999999999999"}) {
    CommandResult r = Actorc({"run", Handler("bank.cu"), "--script", script, "--stats-every", bad});
    EXPECT_EQ(r.exit_code, 2) << bad;
    EXPECT_THAT(r.err, ::testing::StartsWith("actorc: --stats-every needs a whole number of milliseconds from 1 to "
                                             "3600000, got '" + bad + "'\n"));
    EXPECT_EQ(r.out, "");
  }
  CommandResult r = Actorc({"run", Handler("bank.cu"), "--script", script, "--stats-every"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, ::testing::StartsWith("actorc: --stats-every needs a number of milliseconds\n"));
  r = Actorc({"check", Handler("bank.cu"), "--stats-every", "100"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, ::testing::StartsWith("actorc: --stats-every is an option of run\n"));
  r = Actorc({"--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_THAT(r.out, HasSubstr("--stats-every MS"));
  // A good value passes, and the run gets as far as it can without a GPU.
  for (const std::string good : {"1", "250", "3600000"}) {
    r = RunCommand({ActorcPath(), "run", Handler("bank.cu"), "--script", script, "--stats-every", good},
                   {cache_env_, "RINGKERNEL_LIBCUDA=/nonexistent/libcuda.so.1"});
    EXPECT_EQ(r.exit_code, 2) << good;
    EXPECT_THAT(r.err, HasSubstr("actorc: cannot run on a GPU: no CUDA driver")) << good;
    EXPECT_EQ(r.out, "");
  }
}

TEST_F(ActorcTest, TruncatedAndCorruptedPackagesAreRefusedWithExitCode1) {
  const std::string pkg = dir_.Join("bank.rkpkg");
  ASSERT_EQ(Actorc({"build", Handler("bank.cu"), "-o", pkg}).exit_code, 0);
  const std::string bytes = ReadFileOrDie(pkg);
  const std::string truncated = Write("truncated.rkpkg", bytes.substr(0, bytes.size() / 2));
  CommandResult r = Actorc({"inspect", truncated});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("truncated.rkpkg"));
  std::string flipped = bytes;
  flipped[flipped.size() - 100] ^= 0x5A;
  const std::string corrupted = Write("corrupted.rkpkg", flipped);
  r = Actorc({"inspect", corrupted});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("corrupted.rkpkg"));
  EXPECT_THAT(r.err, HasSubstr("checksum"));
  const std::string foreign = Write("foreign.rkpkg", "this is not a package at all, just text\n");
  r = Actorc({"inspect", foreign});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("not a RingKernel package"));
}

TEST_F(ActorcTest, UnusableCacheIsAnEnvironmentErrorWithExitCode2) {
  const std::string file = Write("not_a_dir", "x");
  CommandResult r = RunCommand({ActorcPath(), "check", Handler("bank.cu")}, {"RINGKERNEL_CACHE_DIR=" + file});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr(file));
  EXPECT_THAT(r.err, HasSubstr("--no-cache"));
  // --no-cache builds anyway.
  r = RunCommand({ActorcPath(), "check", Handler("bank.cu"), "--no-cache"}, {"RINGKERNEL_CACHE_DIR=" + file});
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST_F(ActorcTest, TamperedCacheEntryIsRefusedNamingTheFile) {
  ASSERT_EQ(Actorc({"check", Handler("pingpong.cu")}).exit_code, 0);
  // Flip a byte in the middle of the one cache entry.
  std::string entry;
  for (const auto& e : std::filesystem::directory_iterator(dir_.Join("cache"))) entry = e.path().string();
  ASSERT_FALSE(entry.empty());
  std::string bytes = ReadFileOrDie(entry);
  bytes[bytes.size() / 2] ^= 0x01;
  WriteFileOrDie(entry, bytes);
  CommandResult r = Actorc({"check", Handler("pingpong.cu")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("the compile cache is unusable"));
  EXPECT_THAT(r.err, HasSubstr(entry));
}

TEST_F(ActorcTest, RunWithoutAGpuDoesEverythingElseThenSaysSo) {
  const std::string script = SourceDir() + "/examples/bank.jsonl";
  CommandResult r = RunCommand({ActorcPath(), "run", Handler("bank.cu"), "--script", script},
                               {cache_env_, "RINGKERNEL_LIBCUDA=/nonexistent/libcuda.so.1"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("actorc: cannot run on a GPU: no CUDA driver"));
  EXPECT_THAT(r.err, HasSubstr("the program was built and the script checked (10 command(s))"));
  EXPECT_EQ(r.out, "");
}

TEST_F(ActorcTest, BadScriptLinesAreReportedByLineBeforeAnythingRuns) {
  struct Case {
    std::string line;
    std::string error;
  };
  const std::vector<Case> cases = {
      {R"({"send": "bnk", "type": "Deposit", "msg": {"account": 1, "cents": 5}})",
       "script.jsonl:2: unknown actor 'bnk'; spawned so far: bank"},
      {R"({"send": "bank", "type": "Deposit", "msg": {"account": 1}})", "script.jsonl:2: "},
      {R"({"send": "bank", "type": "Deposit", "msg": {"account": 1, "cents": 5, "extra": 2}})",
       "script.jsonl:2: "},
      {R"({"send": "bank", "type": "Nope", "msg": {}})", "script.jsonl:2: unknown message type 'Nope'"},
      {R"({"spawn": "Vault", "name": "v"})", "script.jsonl:2: unknown actor type 'Vault'; the program has Auditor, Bank"},
      {R"({"bind": "nowhere", "to": "bank"})", "script.jsonl:2: unknown route 'nowhere'; the program uses audit"},
      {R"({"fly": true})", "script.jsonl:2: unknown command"},
      {R"(not json)", "script.jsonl:2: not valid JSON"},
      {R"({"options": {"workers": 2}})", "script.jsonl:2: 'options' must be the first command of the script"},
      // Above INT64_MAX: the error names the value as written, not as it
      // wrapped to int64 (-1).
      {R"({"sleep_ms": 18446744073709551615})",
       "script.jsonl:2: 'sleep_ms' is 18446744073709551615; it must be in [0, 600000]"},
      {R"({"receive": 3, "timeout_ms": -5})", "script.jsonl:2: 'timeout_ms' is -5; it must be in [0, 3600000]"},
  };
  for (const Case& c : cases) {
    const std::string script = Write("script.jsonl", "{\"spawn\": \"Bank\", \"name\": \"bank\"}\n" + c.line + "\n");
    CommandResult r = RunCommand({ActorcPath(), "run", Handler("bank.cu"), "--script", script},
                                 {cache_env_, "RINGKERNEL_LIBCUDA=/nonexistent/libcuda.so.1"});
    EXPECT_EQ(r.exit_code, 1) << c.line << "\n" << r.err;
    EXPECT_THAT(r.err, HasSubstr("actorc: " + dir_.Join(c.error))) << c.line;
    EXPECT_THAT(r.err, Not(HasSubstr("cannot run on a GPU"))) << "checked before the GPU";
  }
}

}  // namespace
}  // namespace rk::testing
