// Copyright 2026 The RingKernel Authors.
//
// The whole pipeline through jit::Builder: real parses and real NVRTC
// compiles for sm_89 and sm_90, the cache's hits and misses, and the build
// options it normalises. Runs without a GPU.
#include "jit/builder.h"

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/package.h"
#include "tests/test_support.h"

namespace rk::jit {
namespace {

using ::rk::testing::StatusIs;
using ::rk::testing::TempDir;
using ::testing::HasSubstr;

constexpr char kMessages[] = "struct Ping { int n; };\nstruct Pong { int n; };\n";
constexpr char kEcho[] = R"(#include <ringkernel/actor.cuh>
#include "messages.cuh"
struct RK_ACTOR Echo {
  RK_HANDLER void on(const Ping& p, rk::Ctx& ctx) { ctx.reply(Pong{p.n}); }
};
)";

class BuilderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ::rk::testing::WriteFileOrDie(dir_.Join("messages.cuh"), kMessages);
    ::rk::testing::WriteFileOrDie(dir_.Join("echo.cu"), kEcho);
    Builder::Options o;
    o.cache_dir = dir_.Join("cache");
    absl::StatusOr<Builder> b = Builder::Create(o);
    ASSERT_TRUE(b.ok()) << b.status();
    builder_.emplace(*std::move(b));
  }
  TempDir dir_;
  std::optional<Builder> builder_;
};

TEST_F(BuilderTest, BuildsBothArchitecturesAndPtxThenHitsTheCache) {
  std::vector<Diagnostic> diags;
  absl::StatusOr<BuildResult> cold = builder_->BuildFiles({dir_.Join("echo.cu")}, BuildOptions{}, &diags);
  ASSERT_TRUE(cold.ok()) << cold.status() << FormatDiagnostics(diags);
  EXPECT_FALSE(cold->cache_hit);
  ASSERT_EQ(cold->package.images.size(), 3u);
  EXPECT_EQ(cold->package.images[0].arch, "sm_89");
  EXPECT_EQ(cold->package.images[1].arch, "sm_90");
  EXPECT_EQ(cold->package.images[2].arch, "compute_90");
  EXPECT_EQ(cold->package.images[2].kind, ImageKind::kPtx);
  EXPECT_GT(cold->package.images[0].resources.registers, 0);
  EXPECT_EQ(cold->timings.arch_ms.size(), 2u);
  // The header the fragment included travels in the package.
  ASSERT_EQ(cold->package.model.sources.size(), 2u);
  EXPECT_EQ(cold->package.model.sources[1].name, "messages.cuh");
  EXPECT_FALSE(cold->package.model.sources[1].fragment);

  absl::StatusOr<BuildResult> warm = builder_->BuildFiles({dir_.Join("echo.cu")}, BuildOptions{}, &diags);
  ASSERT_TRUE(warm.ok()) << warm.status();
  EXPECT_TRUE(warm->cache_hit);
  EXPECT_EQ(warm->package, cold->package);
  std::printf("cold build %.1f ms (parse %.1f, nvrtc %.1f), cached build %.2f ms\n", cold->timings.total_ms,
              cold->timings.parse_ms, cold->timings.compile_ms, warm->timings.total_ms);
}

TEST_F(BuilderTest, AChangedHeaderIsAMissNotAStaleHit) {
  std::vector<Diagnostic> diags;
  BuildOptions o;
  o.archs = {"sm_90"};
  ASSERT_TRUE(builder_->BuildFiles({dir_.Join("echo.cu")}, o, &diags).ok());
  ::rk::testing::WriteFileOrDie(dir_.Join("messages.cuh"), "struct Ping { int n; int extra; };\nstruct Pong { int n; };\n");
  absl::StatusOr<BuildResult> again = builder_->BuildFiles({dir_.Join("echo.cu")}, o, &diags);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_FALSE(again->cache_hit);
  EXPECT_EQ(again->package.model.FindRecord("Ping")->size, 8u) << "the new layout of Ping";
}

TEST_F(BuilderTest, ArchitecturesAreNormalised) {
  BuildOptions o;
  o.archs = {"90", "sm_90", "compute_89"};
  absl::StatusOr<BuildOptions> n = NormalizeBuildOptions(o);
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(n->archs, (std::vector<std::string>{"sm_89", "sm_90"}));
  o.archs = {"sm_42"};
  EXPECT_THAT(NormalizeBuildOptions(o), StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("sm_42")));
  o.archs = {};
  EXPECT_THAT(NormalizeBuildOptions(o), StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("no architecture")));
  o.archs = {"sm_90"};
  o.max_payload = 1 << 20;
  EXPECT_THAT(NormalizeBuildOptions(o), StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("max payload")));
}

// A fragment NVRTC warns about (an unused local).
constexpr char kUnused[] = R"(#include <ringkernel/actor.cuh>
#include "messages.cuh"
struct RK_ACTOR Quiet {
  int seen;
  RK_HANDLER void on(const Ping& p, rk::Ctx& ctx) {
    int spare = 3;
    seen += p.n;
  }
};
)";

TEST_F(BuilderTest, WarningsAreKeptInThePackageAndReportedAgainOnACacheHit) {
  ::rk::testing::WriteFileOrDie(dir_.Join("quiet.cu"), kUnused);
  BuildOptions o;
  o.archs = {"sm_90"};
  // The caller's earlier diagnostics are not this build's.
  Diagnostic earlier;
  earlier.severity = DiagnosticSeverity::kNote;
  earlier.message = "the caller's own note";
  std::vector<Diagnostic> cold_diags = {earlier};
  absl::StatusOr<BuildResult> cold = builder_->BuildFiles({dir_.Join("quiet.cu")}, o, &cold_diags);
  ASSERT_TRUE(cold.ok()) << cold.status() << FormatDiagnostics(cold_diags);
  EXPECT_FALSE(cold->cache_hit);
  ASSERT_EQ(cold_diags.size(), 2u) << FormatDiagnostics(cold_diags);
  EXPECT_EQ(cold_diags[0], earlier);
  const Diagnostic& unused = cold_diags[1];
  EXPECT_EQ(unused.severity, DiagnosticSeverity::kWarning);
  EXPECT_THAT(unused.ToString(), HasSubstr("quiet.cu:6:9: warning: variable \"spare\" was declared but never referenced"));
  EXPECT_EQ(cold->package.warnings, std::vector<Diagnostic>{unused});

  std::vector<Diagnostic> warm_diags;
  absl::StatusOr<BuildResult> warm = builder_->BuildFiles({dir_.Join("quiet.cu")}, o, &warm_diags);
  ASSERT_TRUE(warm.ok()) << warm.status();
  EXPECT_TRUE(warm->cache_hit);
  EXPECT_EQ(warm_diags, std::vector<Diagnostic>{unused}) << "a cache hit reports what the build warned of";
  EXPECT_EQ(warm->package, cold->package);

  // Sources registered in memory (Runtime::CompileSources) are named as
  // they were registered.
  std::vector<Diagnostic> memory_diags;
  absl::StatusOr<BuildResult> memory = builder_->BuildSources(
      {SourceFile{"quiet.cu", kUnused, true}, SourceFile{"messages.cuh", kMessages, false}}, o, &memory_diags);
  ASSERT_TRUE(memory.ok()) << memory.status() << FormatDiagnostics(memory_diags);
  ASSERT_EQ(memory_diags.size(), 1u) << FormatDiagnostics(memory_diags);
  EXPECT_EQ(memory_diags[0].ToString(), "quiet.cu:6:9: warning: variable \"spare\" was declared but never referenced");

  // A clean fragment's package has none, and no architecture spills.
  std::vector<Diagnostic> echo_diags;
  absl::StatusOr<BuildResult> echo = builder_->BuildFiles({dir_.Join("echo.cu")}, o, &echo_diags);
  ASSERT_TRUE(echo.ok()) << echo.status();
  EXPECT_TRUE(echo_diags.empty()) << FormatDiagnostics(echo_diags);
  EXPECT_TRUE(echo->package.warnings.empty());
}

// A handler that holds 240 loaded values across a memory clobber needs more
// registers than there are: the kernel spills, and the build says so.
constexpr char kSpills[] = R"(#include <ringkernel/actor.cuh>
struct Scale { float by; };
struct RK_ACTOR Heavy {
  float acc[240];
  RK_HANDLER void on(const Scale& s, rk::Ctx& ctx) {
    float v[240];
#pragma unroll
    for (int i = 0; i < 240; ++i) v[i] = acc[i] * s.by;
    asm volatile("" ::: "memory");
#pragma unroll
    for (int i = 0; i < 240; ++i) acc[i] = v[(i + 1) % 240] * v[i];
  }
};
)";

TEST_F(BuilderTest, AKernelThatSpillsIsAWarningNamingItsArchitecture) {
  ::rk::testing::WriteFileOrDie(dir_.Join("heavy.cu"), kSpills);
  BuildOptions o;
  o.archs = {"sm_90"};
  std::vector<Diagnostic> diags;
  absl::StatusOr<BuildResult> r = builder_->BuildFiles({dir_.Join("heavy.cu")}, o, &diags);
  ASSERT_TRUE(r.ok()) << r.status() << FormatDiagnostics(diags);
  const ResourceUsage& res = r->package.images[0].resources;
  ASSERT_GT(res.spill_store_bytes, 0) << "the fragment no longer makes the kernel spill";
  ASSERT_EQ(diags.size(), 1u) << FormatDiagnostics(diags);
  EXPECT_EQ(diags[0].severity, DiagnosticSeverity::kWarning);
  EXPECT_EQ(diags[0].location.file, "");
  EXPECT_THAT(diags[0].message, HasSubstr(absl::StrCat("sm_90: the system kernel spills registers to local memory (",
                                                       res.registers, " registers, ", res.spill_store_bytes,
                                                       " B of spill stores, ", res.spill_load_bytes,
                                                       " B of spill loads)")));
  EXPECT_EQ(r->package.warnings, diags);
}

TEST_F(BuilderTest, ParseErrorsComeBackAsDiagnosticsAndNothingIsCached) {
  ::rk::testing::WriteFileOrDie(dir_.Join("broken.cu"), "struct RK_ACTOR Broken { int x }\n");
  std::vector<Diagnostic> diags;
  absl::StatusOr<BuildResult> r = builder_->BuildFiles({dir_.Join("broken.cu")}, BuildOptions{}, &diags);
  EXPECT_THAT(r, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("broken.cu:1:")));
  ASSERT_TRUE(HasErrors(diags));
  size_t entries = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir_.Join("cache"))) ++entries;
  EXPECT_EQ(entries, 0u);
}

}  // namespace
}  // namespace rk::jit

namespace rk::jit {
namespace {

// Every fragment shipped in handlers/ builds for both architectures, without
// a warning.
class HandlersBuildTest : public ::testing::TestWithParam<std::string> {};

TEST_P(HandlersBuildTest, BuildsForSm89AndSm90) {
  ::rk::testing::TempDir dir;
  Builder::Options o;
  o.use_cache = false;
  absl::StatusOr<Builder> builder = Builder::Create(o);
  ASSERT_TRUE(builder.ok()) << builder.status();
  std::vector<Diagnostic> diags;
  absl::StatusOr<BuildResult> r =
      builder->BuildFiles({::rk::testing::SourceDir() + "/handlers/" + GetParam()}, BuildOptions{}, &diags);
  ASSERT_TRUE(r.ok()) << r.status() << FormatDiagnostics(diags);
  // The shipped fragments build clean: no warning of any kind (a spill
  // included) on either architecture.
  EXPECT_TRUE(diags.empty()) << GetParam() << ":\n" << FormatDiagnostics(diags);
  EXPECT_TRUE(r->package.warnings.empty());
  ASSERT_EQ(r->package.images.size(), 3u);
  for (const ArchImage& img : r->package.images) {
    if (img.kind == ImageKind::kCubin) {
      EXPECT_GT(img.resources.registers, 0) << img.arch;
      EXPECT_EQ(img.resources.spill_store_bytes, 0) << GetParam() << " spills on " << img.arch;
    }
  }
}

// Builds `file` for sm_90 with `define` and says whether its cubin has
// every symbol of `symbols` under its unmangled name.
void ExpectDiagnosticBuild(const std::string& file, const std::string& define,
                           const std::vector<std::string>& symbols) {
  Builder::Options o;
  o.use_cache = false;
  absl::StatusOr<Builder> builder = Builder::Create(o);
  ASSERT_TRUE(builder.ok()) << builder.status();
  BuildOptions b;
  b.archs = {"sm_90"};
  b.defines = {define};
  std::vector<Diagnostic> diags;
  absl::StatusOr<BuildResult> r = builder->BuildFiles({file}, b, &diags);
  ASSERT_TRUE(r.ok()) << r.status() << FormatDiagnostics(diags);
  const ArchImage* cubin = nullptr;
  for (const ArchImage& img : r->package.images) {
    if (img.kind == ImageKind::kCubin) cubin = &img;
  }
  ASSERT_NE(cubin, nullptr);
  for (const std::string& s : symbols) EXPECT_NE(cubin->bytes.find(s), std::string::npos) << "no " << s << " in the cubin";
}

// The measurement build rkbench's ask_stamps experiment runs (the device
// runtime stamps each step of a host request): it compiles, and its cubin
// has the table the experiment reads.
TEST(DiagnosticBuildTest, TheBenchProgramBuildsWithAskStampsAndExportsTheirTable) {
  ExpectDiagnosticBuild(::rk::testing::SourceDir() + "/handlers/bench.cu", "RK_ASK_STAMPS=1", {"rk_ask_stamps"});
}

// The measurement build that counts where each owner thread's cycles go
// (rkbench prints them after each system's Stop): it compiles, and its cubin
// has the table rkbench reads.
TEST(DiagnosticBuildTest, TheBenchProgramBuildsWithOwnerCyclesAndExportsTheirTable) {
  ExpectDiagnosticBuild(::rk::testing::SourceDir() + "/handlers/bench.cu", "RK_OWNER_CYCLES=1", {"rk_owner_cycles"});
}

// The measurement build that stamps each K2K channel record's steps, send to
// handler and the owner loop's steps after it (rkbench's hop prints them
// after Stop): it compiles, and its cubin has the table rkbench reads.
TEST(DiagnosticBuildTest, TheBenchProgramBuildsWithHopStampsAndExportsTheirTable) {
  ExpectDiagnosticBuild(::rk::testing::SourceDir() + "/handlers/bench.cu", "RK_HOP_STAMPS=1", {"rk_hop_stamps"});
}

// The build option that runs a stream's records several to a handler's call
// (RK_STREAM_RUNS, rt_dispatch.cuh): the bench program builds with it for both
// architectures without spilling, and only then has the runs' shared state.
TEST(StreamRunsBuildTest, TheBenchProgramBuildsWithStreamRunsWithoutSpilling) {
  Builder::Options o;
  o.use_cache = false;
  absl::StatusOr<Builder> builder = Builder::Create(o);
  ASSERT_TRUE(builder.ok()) << builder.status();
  for (const bool runs : {true, false}) {
    BuildOptions b;
    if (runs) b.defines = {"RK_STREAM_RUNS"};
    std::vector<Diagnostic> diags;
    absl::StatusOr<BuildResult> r =
        builder->BuildFiles({::rk::testing::SourceDir() + "/handlers/bench.cu"}, b, &diags);
    ASSERT_TRUE(r.ok()) << r.status() << FormatDiagnostics(diags);
    int cubins = 0;
    for (const ArchImage& img : r->package.images) {
      if (img.kind != ImageKind::kCubin) continue;
      ++cubins;
      EXPECT_EQ(img.resources.spill_store_bytes, 0) << img.arch << (runs ? " with" : " without") << " stream runs";
      EXPECT_EQ(img.bytes.find("rk_runs") != std::string::npos, runs) << img.arch;
    }
    EXPECT_EQ(cubins, 2);
  }
}

// The diagnostic build that logs each step of every host message's delivery
// (RK_ORDER_TRACE), which the fault tests read back when an actor's input
// comes out of order.
TEST(DiagnosticBuildTest, TheHostileProgramBuildsWithTheOrderTraceAndExportsIt) {
  ExpectDiagnosticBuild(::rk::testing::TestDataDir() + "/gpu/hostile.cu", "RK_ORDER_TRACE",
                        {"rk_order_trace", "rk_order_trace_n"});
}

// The test-only build that holds each K2K send between its mailbox
// reservation and its record (system_gpu_test's HeldRecordGpuTest, which
// runs only on a GPU): the hold compiles into the send path.
TEST(DiagnosticBuildTest, TheBenchProgramBuildsWithTheTestHoldOfK2kRecords) {
  ExpectDiagnosticBuild(::rk::testing::SourceDir() + "/handlers/bench.cu", "RK_TEST_HOLD_K2K_RECORD_NS=1000", {});
}

INSTANTIATE_TEST_SUITE_P(Handlers, HandlersBuildTest,
                         ::testing::Values("bank.cu", "pingpong.cu", "reduce.cu", "bench.cu", "compile_bench.cu"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param.substr(0, info.param.find('.'));
                         });

}  // namespace
}  // namespace rk::jit
