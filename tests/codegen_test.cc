// Copyright 2026 The RingKernel Authors.
//
// Codegen and NVRTC, from hand-written models (independent of the clang
// front-end): the generated unit's shape, real NVRTC compiles for sm_89 and
// sm_90 with the device runtime, diagnostics mapped into the user's files,
// and the parsing of NVRTC's and ptxas's reports.
#include "jit/codegen.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/embedded_files.h"
#include "jit/nvrtc_compiler.h"
#include "tests/test_support.h"

namespace rk::jit {
namespace {

using ::rk::testing::StatusIs;
using ::testing::ContainsRegex;
using ::testing::HasSubstr;

constexpr char kBank[] = R"(#include <ringkernel/actor.cuh>
struct Deposit { int account; long long cents; };
struct Query { int account; };
struct Balance { int account; long long cents; };
struct RK_ACTOR Bank {
  long long cents[64];
  long long ops = 0;
  RK_HANDLER void on(const Deposit& m, rk::Ctx& ctx) { cents[m.account & 63] += m.cents; ++ops; }
  RK_HANDLER void on(const Query& q, rk::Ctx& ctx) { ctx.reply(Balance{q.account, cents[q.account & 63]}); }
};
struct Chunk { float v[32]; };
struct RK_ACTOR Summer {
  float total;
  RK_BLOCK_HANDLER void sum(const Chunk& c, rk::Ctx& ctx) {
    float* s = ctx.scratch<float>();
    s[ctx.rank()] = ctx.rank() < 32 ? c.v[ctx.rank()] : 0.0f;
    ctx.sync();
    if (ctx.leader()) { float t = 0; for (unsigned i = 0; i < ctx.width(); ++i) t += s[i]; total += t; }
    ctx.send(rk::route("audit"), Deposit{0, 1});
  }
};
)";

RecordLayout Record(const std::string& name, uint64_t size, uint64_t align, uint32_t id, int line,
                    std::vector<FieldLayout> fields) {
  RecordLayout r;
  r.name = name;
  r.tag = "struct";
  r.size = size;
  r.alignment = align;
  r.message_id = id;
  r.location = {"bank.cu", static_cast<uint32_t>(line), 8};
  r.fields = std::move(fields);
  return r;
}

FieldLayout Field(const std::string& name, FieldKind kind, uint64_t offset, uint64_t size) {
  FieldLayout f;
  f.name = name;
  f.kind = kind;
  f.type = std::string(FieldKindName(kind));
  f.offset = offset;
  f.size = size;
  f.element_size = size;
  return f;
}

HandlerModel BankModel() {
  HandlerModel m;
  m.sources.push_back(SourceFile{"bank.cu", kBank, true});
  m.records.push_back(Record("Balance", 16, 8, 1, 4,
                             {Field("account", FieldKind::kInt32, 0, 4), Field("cents", FieldKind::kInt64, 8, 8)}));
  FieldLayout v = Field("v", FieldKind::kFloat32, 0, 128);
  v.element_size = 4;
  v.dims = {32};
  m.records.push_back(Record("Chunk", 128, 4, 2, 11, {v}));
  m.records.push_back(Record("Deposit", 16, 8, 3, 2,
                             {Field("account", FieldKind::kInt32, 0, 4), Field("cents", FieldKind::kInt64, 8, 8)}));
  m.records.push_back(Record("Query", 4, 4, 4, 3, {Field("account", FieldKind::kInt32, 0, 4)}));
  ActorInfo bank;
  bank.name = "Bank";
  bank.type_id = 0;
  bank.state_size = 520;
  bank.state_alignment = 8;
  bank.zero_initialized = false;
  bank.location = {"bank.cu", 5, 17};
  bank.handlers.push_back(HandlerInfo{"on", "Deposit", 3, HandlerKind::kThread, {"bank.cu", 8, 19}});
  bank.handlers.push_back(HandlerInfo{"on", "Query", 4, HandlerKind::kThread, {"bank.cu", 9, 19}});
  ActorInfo summer;
  summer.name = "Summer";
  summer.type_id = 1;
  summer.state_size = 4;
  summer.state_alignment = 4;
  summer.location = {"bank.cu", 12, 17};
  summer.handlers.push_back(HandlerInfo{"sum", "Chunk", 2, HandlerKind::kBlock, {"bank.cu", 14, 25}});
  m.actors = {bank, summer};
  m.routes.push_back(RouteInfo{"audit", 0, {{"bank.cu", 19, 14}}});
  return m;
}

TEST(CodegenTest, UnitDeclaresIdsBeforeFragmentsAndDispatchesEveryHandler) {
  absl::StatusOr<GeneratedUnit> unit = GenerateUnit(BankModel(), BuildOptions{});
  ASSERT_TRUE(unit.ok()) << unit.status();
  const std::string& s = unit->source;
  const size_t ids = s.find("rk_message_id(const Deposit*) { return 3u; }");
  const size_t fragment = s.find("#include \"bank.cu\"");
  const size_t runtime = s.find("#include <ringkernel/device/runtime.cuh>");
  ASSERT_NE(ids, std::string::npos) << s;
  ASSERT_NE(fragment, std::string::npos);
  ASSERT_NE(runtime, std::string::npos);
  EXPECT_LT(ids, fragment);
  EXPECT_LT(fragment, runtime);
  // A thread handler runs on a copy of the Ctx of its own, and a small
  // message (Deposit: 16 bytes) is copied into registers first; a block
  // handler reads the payload in place.
  EXPECT_THAT(s, HasSubstr("__device__ __forceinline__ void DispatchThread("));
  EXPECT_THAT(s, HasSubstr("Ctx c = ctx;"));
  EXPECT_THAT(s, HasSubstr("const ::Deposit m = *static_cast<const ::Deposit*>(payload);"));
  EXPECT_THAT(s, HasSubstr("self->on(m, c);"));
  EXPECT_THAT(s, HasSubstr("self->sum(*static_cast<const ::Chunk*>(payload), ctx);"));
  // The handler call is reported at the handler's own line.
  EXPECT_THAT(s, ContainsRegex("#line 8 \"bank.cu\"\n +self->on\\(m, c\\);"));
  EXPECT_THAT(s, HasSubstr("::new (state) ::Bank();"));           // default member initialisers run
  EXPECT_THAT(s, Not(HasSubstr("::new (state) ::Summer();")));  // zero-initialised: nothing to run
  EXPECT_THAT(s, HasSubstr("case 0xed4df38cf0d47908ull: return 0;  // \"audit\""));
  EXPECT_THAT(s, HasSubstr("static_assert(sizeof(::Deposit) == 16 && alignof(::Deposit) == 8"));
  EXPECT_THAT(s, HasSubstr("extern \"C\" __global__ void rk_system_kernel("));
  EXPECT_EQ(unit->defines.front(), "RK_MAX_PAYLOAD=4096");
  // Every device header travels with the unit.
  size_t embedded = 0;
  for (const SourceFile& h : unit->headers) embedded += h.name.rfind("ringkernel/", 0) == 0 ? 1 : 0;
  EXPECT_EQ(embedded, EmbeddedDeviceHeaders().size());
}

// In a program built with RK_STREAM_RUNS, each thread handler's case runs a
// stream's staged records one after another (RunNext): the handler is
// inlined once per case either way, and reported at its own line in both.
TEST(CodegenTest, ThreadHandlerCasesRunStagedRecordsWhenBuiltWithStreamRuns) {
  absl::StatusOr<GeneratedUnit> unit = GenerateUnit(BankModel(), BuildOptions{});
  ASSERT_TRUE(unit.ok()) << unit.status();
  const std::string& s = unit->source;
  const size_t on = s.find("#if RK_STREAM_RUNS_ON");
  const size_t other = s.find("#else", on);
  const size_t end = s.find("#endif", other);
  ASSERT_NE(on, std::string::npos) << s;
  ASSERT_NE(other, std::string::npos);
  ASSERT_NE(end, std::string::npos);
  const std::string runs = s.substr(on, other - on);
  const std::string plain = s.substr(other, end - other);
  EXPECT_THAT(runs, HasSubstr("const ::Deposit m = *static_cast<const ::Deposit*>(run_payload);"));
  EXPECT_THAT(runs, ContainsRegex("#line 8 \"bank.cu\"\n +run_self->on\\(m, c\\);"));
  EXPECT_THAT(runs, HasSubstr("if (!::rk::detail::RunNext(c, &run_payload)) break;"));
  EXPECT_THAT(plain, ContainsRegex("#line 8 \"bank.cu\"\n +self->on\\(m, c\\);"));
  EXPECT_THAT(plain, Not(HasSubstr("RunNext")));
  // Block handlers never run a stream (the whole block meets for each).
  EXPECT_THAT(s, HasSubstr("self->sum(*static_cast<const ::Chunk*>(payload), ctx);"));
}

// Which kind of handler an actor type has for a message type known only at
// run time (HandlerKindFast) is a table in constant memory: one byte per
// pair (0 none, 1 thread, 2 block), indexed by actor type and message id;
// ids outside it answer 0. HandlerKindOf stays a switch (a send's message
// type is a constant, which folds it).
TEST(CodegenTest, HandlerKindsAreATableInConstantMemory) {
  absl::StatusOr<GeneratedUnit> unit = GenerateUnit(BankModel(), BuildOptions{});
  ASSERT_TRUE(unit.ok()) << unit.status();
  const std::string& s = unit->source;
  // Bank (type 0): Deposit (3) and Query (4) by thread; Summer (type 1):
  // Chunk (2) by block. Five ids (0 is no message).
  EXPECT_THAT(s, HasSubstr("__constant__ unsigned char rk_handler_kinds[10] = {\n    0,0,0,1,1,\n    0,0,2,0,0,\n};"))
      << s;
  EXPECT_THAT(s, HasSubstr("__device__ __forceinline__ u32 HandlerKindFast(u32 actor_type, u32 message_type) {\n  "
                           "return actor_type < 2u && message_type < 5u ? rk_handler_kinds[actor_type * 5u + "
                           "message_type] : 0u;"));
  EXPECT_THAT(s, HasSubstr("      switch (message_type) {\n        case 3: return 1u;\n        case 4: return 1u;"));
}

// A program whose table would be large answers by the switch.
TEST(CodegenTest, HandlerKindsOfALargeProgramAreASwitch) {
  HandlerModel m = BankModel();
  m.records.back().message_id = 20000;  // Query: 2 actor types x 20001 ids
  m.actors[0].handlers.back().message_id = 20000;
  absl::StatusOr<GeneratedUnit> unit = GenerateUnit(m, BuildOptions{});
  ASSERT_TRUE(unit.ok()) << unit.status();
  const std::string& s = unit->source;
  EXPECT_THAT(s, Not(HasSubstr("rk_handler_kinds")));
  EXPECT_THAT(s, HasSubstr("      switch (message_type) {\n        case 3: return 1u;\n        case 20000: return 1u;"));
  EXPECT_THAT(s, HasSubstr("        case 2: return 2u;"));
  EXPECT_THAT(s, HasSubstr("__device__ __forceinline__ u32 HandlerKindFast(u32 actor_type, u32 message_type) {\n  "
                           "return HandlerKindOf(actor_type, message_type);"));
}

TEST(CodegenTest, RejectsNamesThatAreNotQualifiedIdentifiers) {
  HandlerModel m = BankModel();
  m.records[0].name = "Bal ance";
  EXPECT_THAT(GenerateUnit(m, BuildOptions{}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("'Bal ance' is not a qualified C++ name")));
}

class NvrtcArchTest : public ::testing::TestWithParam<std::string> {};

TEST_P(NvrtcArchTest, CompilesTheRuntimeAndHandlers) {
  absl::StatusOr<GeneratedUnit> unit = GenerateUnit(BankModel(), BuildOptions{});
  ASSERT_TRUE(unit.ok()) << unit.status();
  std::vector<Diagnostic> diags;
  absl::StatusOr<NvrtcOutput> out = CompileForArch(*unit, GetParam(), true, &diags);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_FALSE(HasErrors(diags)) << FormatDiagnostics(diags);
  EXPECT_EQ(out->cubin.arch, GetParam());
  EXPECT_EQ(out->cubin.kind, ImageKind::kCubin);
  ASSERT_GE(out->cubin.bytes.size(), 4u);
  EXPECT_EQ(out->cubin.bytes.substr(0, 4), "\x7f" "ELF");
  EXPECT_THAT(out->ptx.bytes, HasSubstr(".entry rk_system_kernel"));
  EXPECT_EQ(out->ptx.arch, "compute_" + GetParam().substr(3));
  // ptxas reported the kernel's resources.
  EXPECT_GT(out->cubin.resources.registers, 0);
  EXPECT_GE(out->cubin.resources.spill_store_bytes, 0);
  EXPECT_GE(out->cubin.resources.stack_bytes, 0);
}

INSTANTIATE_TEST_SUITE_P(Archs, NvrtcArchTest, ::testing::Values("sm_89", "sm_90"));

TEST(NvrtcTest, ErrorsPointIntoTheUsersFile) {
  HandlerModel m = BankModel();
  std::string src = kBank;
  // An undeclared name inside a handler on line 8, column 63.
  src.replace(src.find("++ops; }"), 8, "++ops; nope(); }");
  m.sources[0].contents = src;
  absl::StatusOr<GeneratedUnit> unit = GenerateUnit(m, BuildOptions{});
  ASSERT_TRUE(unit.ok());
  std::vector<Diagnostic> diags;
  absl::StatusOr<NvrtcOutput> out = CompileForArch(*unit, "sm_90", false, &diags);
  ASSERT_THAT(out, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("bank.cu:8:")));
  ASSERT_FALSE(diags.empty());
  const Diagnostic& d = diags.front();
  EXPECT_EQ(d.severity, DiagnosticSeverity::kError);
  EXPECT_EQ(d.location.file, "bank.cu");
  EXPECT_EQ(d.location.line, 8u);
  // The column of "nope" on its line.
  const size_t line_start = src.rfind('\n', src.find("nope();")) + 1;
  EXPECT_EQ(d.location.column, src.find("nope();") - line_start + 1);
  EXPECT_THAT(d.message, HasSubstr("\"nope\" is undefined"));
}

TEST(NvrtcTest, LayoutMismatchIsReportedAtTheType) {
  HandlerModel m = BankModel();
  m.records[2].size = 24;  // the front-end "said" Deposit is 24 bytes
  absl::StatusOr<GeneratedUnit> unit = GenerateUnit(m, BuildOptions{});
  ASSERT_TRUE(unit.ok());
  std::vector<Diagnostic> diags;
  EXPECT_THAT(CompileForArch(*unit, "sm_90", false, &diags),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("bank.cu:2:1: error: static assertion failed with \"RingKernel: NVRTC and the "
                                 "front-end disagree on the layout of 'Deposit'\"")));
}

TEST(NvrtcLogTest, ParsesLocationsColumnsAndSeverities) {
  const std::string log =
      "bank.cu(12): error: identifier \"foo\" is undefined\n"
      "    foo(1);\n"
      "    ^\n"
      "\n"
      "other.cuh(3): warning #550-D: variable \"z\" was set but never used\n"
      "    int z = 0;\n"
      "        ^\n"
      "\n"
      "1 error detected in the compilation of \"rk_program.cu\".\n";
  std::vector<Diagnostic> d = ParseNvrtcLog(log);
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].ToString(), "bank.cu:12:3: error: identifier \"foo\" is undefined");
  EXPECT_EQ(d[1].severity, DiagnosticSeverity::kWarning);
  EXPECT_EQ(d[1].location.ToString(), "other.cuh:3:7");
}

TEST(NvrtcLogTest, ParsesPtxasResourcesOfTheEntryOnly) {
  const std::string log =
      "ptxas info    : 0 bytes gmem\n"
      "ptxas info    : Compiling entry function 'helper_kernel' for 'sm_90'\n"
      "ptxas info    : Function properties for helper_kernel\n"
      "ptxas         .     8 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 12 registers, used 0 barriers\n"
      "ptxas info    : Compiling entry function 'rk_system_kernel' for 'sm_90'\n"
      "ptxas info    : Function properties for rk_system_kernel\n"
      "ptxas         .     48 bytes stack frame, 4 bytes spill stores, 8 bytes spill loads\n"
      "ptxas info    : Used 72 registers, used 1 barriers, 16 bytes smem, 400 bytes cmem[0]\n";
  ResourceUsage r = ParsePtxasResources(log, "rk_system_kernel");
  EXPECT_EQ(r.registers, 72);
  EXPECT_EQ(r.stack_bytes, 48);
  EXPECT_EQ(r.spill_store_bytes, 4);
  EXPECT_EQ(r.spill_load_bytes, 8);
  EXPECT_EQ(r.shared_bytes, 16);
  EXPECT_EQ(r.constant_bytes, 400);
}

TEST(NvrtcTest, DeviceHeadersAreNvrtcCleanOnTheirOwn) {
  // Each embedded header compiles alone under NVRTC with no include path.
  for (const EmbeddedFile& f : EmbeddedDeviceHeaders()) {
    if (std::string(f.path).find("parse_shim") != std::string::npos) continue;  // for the clang parse only
    GeneratedUnit unit;
    unit.source = "#include <" + std::string(f.path) + ">\n";
    for (const EmbeddedFile& h : EmbeddedDeviceHeaders()) {
      unit.headers.push_back(SourceFile{std::string(h.path), std::string(h.contents), false});
    }
    std::vector<Diagnostic> diags;
    absl::StatusOr<NvrtcOutput> out = CompileForArch(unit, "sm_90", false, &diags);
    EXPECT_TRUE(out.ok()) << f.path << ": " << out.status();
  }
}

}  // namespace
}  // namespace rk::jit
