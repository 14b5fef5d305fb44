// Copyright 2026 The RingKernel Authors.
//
// The clang front-end: models of good fragments (layouts, ids, handlers,
// routes, headers), errors that are not tied to a fixture, reading
// fragments, thread safety and the parse time. The one-fixture-per-error
// tests are in frontend_fixtures_test.cc.
#include "jit/frontend.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <filesystem>
#include <sstream>
#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_support.h"

// The host compiler's view of the layout fixture: for these types LP64 Linux
// and nvptx64 agree, so offsetof and sizeof here are an independent check of
// the layouts the front-end reads from clang.
#include "ringkernel/device/types.h"
#define RK_MESSAGE
#include "tests/data/fragments/ok/layout_types.h"
#undef RK_MESSAGE

namespace rk::jit {

// Readable failures.
void PrintTo(const SourceLocation& l, std::ostream* os) { *os << "'" << l.ToString() << "'"; }
void PrintTo(const SourceFile& f, std::ostream* os) {
  *os << "{" << f.name << ", " << f.contents.size() << " bytes, " << (f.fragment ? "fragment" : "header") << "}";
}

namespace {

using ::rk::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string Fixture(const std::string& name) { return rk::testing::TestDataDir() + "/fragments/" + name; }

absl::StatusOr<HandlerModel> ParseFiles(const std::vector<std::string>& paths, std::vector<Diagnostic>* diagnostics,
                                        const FrontendOptions& options = {}) {
  absl::StatusOr<std::vector<SourceFile>> sources = ReadFragments(paths);
  if (!sources.ok()) return sources.status();
  return ParseFragments(*sources, options, diagnostics);
}

// Where `needle` first occurs in `path` (line and column from 1), found
// independently of clang.
SourceLocation Find(const std::string& path, const std::string& needle, int occurrence = 0) {
  const std::string text = rk::testing::ReadFileOrDie(path);
  size_t at = 0;
  for (int i = 0; i <= occurrence; ++i) {
    at = text.find(needle, i == 0 ? 0 : at + 1);
    if (at == std::string::npos) {
      ADD_FAILURE() << needle << " not in " << path;
      return {};
    }
  }
  const size_t line_start = text.rfind('\n', at);
  const uint32_t line = static_cast<uint32_t>(std::count(text.begin(), text.begin() + static_cast<long>(at), '\n')) + 1;
  const uint32_t column = static_cast<uint32_t>(at - (line_start == std::string::npos ? 0 : line_start + 1)) + 1;
  return SourceLocation{path, line, column};
}

// How diagnostics and locations name a header: relative to the working
// directory when below it, else absolute (fragments keep their given names).
std::string Shown(const std::string& absolute_path) {
  std::string cwd = std::filesystem::current_path().string() + "/";
  return absolute_path.rfind(cwd, 0) == 0 ? absolute_path.substr(cwd.size()) : absolute_path;
}

SourceLocation FindInHeader(const std::string& path, const std::string& needle) {
  SourceLocation l = Find(path, needle);
  l.file = Shown(l.file);
  return l;
}

const FieldLayout* FindField(const RecordLayout& record, const std::string& name) {
  for (const FieldLayout& f : record.fields) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

// ---------------------------------------------------------------------------
// Good fragments

TEST(FrontendTest, BankExampleModel) {
  const std::string path = Fixture("ok/bank.cu");
  std::vector<Diagnostic> diagnostics;
  absl::StatusOr<HandlerModel> model = ParseFiles({path}, &diagnostics);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_TRUE(diagnostics.empty()) << FormatDiagnostics(diagnostics);

  // Messages: the handler parameters and the reply, ids by sorted name.
  ASSERT_EQ(model->records.size(), 3u);
  EXPECT_EQ(model->message_count(), 3u);
  const RecordLayout& balance = model->records[0];
  const RecordLayout& deposit = model->records[1];
  const RecordLayout& query = model->records[2];
  EXPECT_EQ(balance.name, "Balance");
  EXPECT_EQ(balance.message_id, 1u);
  EXPECT_EQ(deposit.name, "Deposit");
  EXPECT_EQ(deposit.message_id, 2u);
  EXPECT_EQ(query.name, "Query");
  EXPECT_EQ(query.message_id, 3u);

  EXPECT_EQ(deposit.size, 16u);
  EXPECT_EQ(deposit.alignment, 8u);
  EXPECT_EQ(deposit.tag, "struct");
  EXPECT_TRUE(deposit.namespaces.empty());
  EXPECT_EQ(deposit.location, Find(path, "Deposit {"));
  ASSERT_EQ(deposit.fields.size(), 2u);
  EXPECT_EQ(deposit.fields[0].name, "account");
  EXPECT_EQ(deposit.fields[0].type, "int");
  EXPECT_EQ(deposit.fields[0].kind, FieldKind::kInt32);
  EXPECT_EQ(deposit.fields[0].offset, 0u);
  EXPECT_EQ(deposit.fields[0].size, 4u);
  EXPECT_EQ(deposit.fields[0].element_size, 4u);
  EXPECT_TRUE(deposit.fields[0].dims.empty());
  EXPECT_EQ(deposit.fields[1].name, "cents");
  EXPECT_EQ(deposit.fields[1].type, "long long");
  EXPECT_EQ(deposit.fields[1].kind, FieldKind::kInt64);
  EXPECT_EQ(deposit.fields[1].offset, 8u);
  EXPECT_EQ(deposit.fields[1].size, 8u);
  EXPECT_EQ(deposit.fields[1].element_size, 8u);

  EXPECT_EQ(query.size, 4u);
  EXPECT_EQ(query.alignment, 4u);
  ASSERT_EQ(query.fields.size(), 1u);
  EXPECT_EQ(query.fields[0].offset, 0u);
  EXPECT_EQ(balance.size, 16u);
  EXPECT_EQ(balance.alignment, 8u);
  ASSERT_EQ(balance.fields.size(), 2u);
  EXPECT_EQ(balance.fields[1].offset, 8u);

  ASSERT_EQ(model->actors.size(), 1u);
  const ActorInfo& bank = model->actors[0];
  EXPECT_EQ(bank.name, "Bank");
  EXPECT_EQ(bank.type_id, 0u);
  EXPECT_EQ(bank.state_size, 512u);
  EXPECT_EQ(bank.state_alignment, 8u);
  EXPECT_TRUE(bank.zero_initialized);
  EXPECT_EQ(bank.location, Find(path, "Bank {"));
  ASSERT_EQ(bank.handlers.size(), 2u);
  EXPECT_EQ(bank.handlers[0].method, "on");
  EXPECT_EQ(bank.handlers[0].message, "Deposit");
  EXPECT_EQ(bank.handlers[0].message_id, 2u);
  EXPECT_EQ(bank.handlers[0].kind, HandlerKind::kThread);
  EXPECT_EQ(bank.handlers[0].location, Find(path, "on(const Deposit"));
  EXPECT_EQ(bank.handlers[1].message, "Query");
  EXPECT_EQ(bank.handlers[1].message_id, 3u);
  EXPECT_EQ(bank.handlers[1].kind, HandlerKind::kThread);
  EXPECT_EQ(model->MaxHandledSize(bank), 16u);

  EXPECT_TRUE(model->routes.empty());
  EXPECT_EQ(model->max_payload, 4096u);
  ASSERT_EQ(model->sources.size(), 1u);
  EXPECT_EQ(model->sources[0].name, path);
  EXPECT_TRUE(model->sources[0].fragment);
  EXPECT_EQ(model->sources[0].contents, rk::testing::ReadFileOrDie(path));
}

TEST(FrontendTest, DefaultMemberInitializersMeanTheStateIsNotJustZeroed) {
  absl::StatusOr<HandlerModel> model = ParseFiles({Fixture("ok/initializers.cu")}, nullptr);
  ASSERT_TRUE(model.ok()) << model.status();
  auto zeroed = [&](const std::string& name) {
    const ActorInfo* actor = model->FindActor(name);
    EXPECT_NE(actor, nullptr) << name;
    return actor != nullptr && actor->zero_initialized;
  };
  EXPECT_FALSE(zeroed("Counter"));   // int step = 1;
  EXPECT_FALSE(zeroed("Averager"));  // Stats stats[4], Stats has an initialiser
  EXPECT_FALSE(zeroed("Random"));    // Seeded() : seed(42) {}
  EXPECT_FALSE(zeroed("Braced"));    // int window[3]{};
  EXPECT_TRUE(zeroed("Plain"));      // Plain() = default; nothing else
  // Actor type ids follow the sorted names.
  std::vector<std::string> names;
  for (const ActorInfo& a : model->actors) names.push_back(a.name + "=" + std::to_string(a.type_id));
  EXPECT_THAT(names, ElementsAre("Averager=0", "Braced=1", "Counter=2", "Plain=3", "Random=4"));
}

TEST(FrontendTest, BlockHandlers) {
  const std::string path = Fixture("ok/block_handler.cu");
  absl::StatusOr<HandlerModel> model = ParseFiles({path}, nullptr);
  ASSERT_TRUE(model.ok()) << model.status();
  const ActorInfo* reducer = model->FindActor("Reducer");
  ASSERT_NE(reducer, nullptr);
  ASSERT_EQ(reducer->handlers.size(), 2u);
  // Samples = 1, Sum = 2.
  EXPECT_EQ(reducer->handlers[0].message, "Samples");
  EXPECT_EQ(reducer->handlers[0].kind, HandlerKind::kBlock);
  EXPECT_EQ(reducer->handlers[0].location, Find(path, "on(const Samples"));
  EXPECT_EQ(reducer->handlers[1].message, "Sum");
  EXPECT_EQ(reducer->handlers[1].kind, HandlerKind::kThread);
  EXPECT_EQ(model->FindRecord("Samples")->size, 256u * 4 + 4);
}

TEST(FrontendTest, RoutesAreSortedAndEveryUseIsRecorded) {
  const std::string path = Fixture("ok/routes.cu");
  absl::StatusOr<HandlerModel> model = ParseFiles({path}, nullptr);
  ASSERT_TRUE(model.ok()) << model.status();
  ASSERT_EQ(model->routes.size(), 3u);
  EXPECT_EQ(model->routes[0].name, "audit");
  EXPECT_EQ(model->routes[0].id, 0u);
  EXPECT_THAT(model->routes[0].uses,
              ElementsAre(Find(path, "rk::route(\"audit\")"), Find(path, "rk::route(\"audit\")", 1)));
  EXPECT_EQ(model->routes[1].name, "metrics");
  EXPECT_EQ(model->routes[1].id, 1u);
  EXPECT_THAT(model->routes[1].uses, ElementsAre(Find(path, "rk::route((\"metrics\"))")));
  EXPECT_EQ(model->routes[2].name, "zeta");
  EXPECT_EQ(model->routes[2].id, 2u);
  EXPECT_THAT(model->routes[2].uses, ElementsAre(Find(path, "rk::route(\"zeta\")")));
  EXPECT_EQ(model->FindRoute("audit"), &model->routes[0]);
}

TEST(FrontendTest, MessageLayoutsMatchTheCompiler) {
  const std::string path = Fixture("ok/layouts.cu");
  const std::string header = Fixture("ok/layout_types.h");
  absl::StatusOr<HandlerModel> model = ParseFiles({path}, nullptr);
  ASSERT_TRUE(model.ok()) << model.status();

  // Messages (the handler's parameter, the sent Point, the RK_MESSAGE Shape)
  // by sorted name, then the nested-only Span.
  std::vector<std::string> records;
  for (const RecordLayout& r : model->records) records.push_back(r.name + "=" + std::to_string(r.message_id));
  EXPECT_THAT(records, ElementsAre("Envelope=1", "geo::Point=2", "geo::Shape=3", "geo::Span=0"));

  const RecordLayout* shape = model->FindRecord("geo::Shape");
  ASSERT_NE(shape, nullptr);
  EXPECT_EQ(shape->size, sizeof(geo::Shape));
  EXPECT_EQ(shape->alignment, alignof(geo::Shape));
  EXPECT_THAT(shape->namespaces, ElementsAre("geo"));
  EXPECT_EQ(shape->tag, "struct");
  EXPECT_EQ(shape->location, FindInHeader(header, "Shape {"));

  struct Expected {
    const char* name;
    size_t offset;
    size_t size;
    FieldKind kind;
    const char* type;
    std::vector<uint64_t> dims;
    size_t element_size;
  };
  const Expected expected[] = {
      {"corners",
       offsetof(geo::Shape, corners),
       sizeof(geo::Shape::corners),
       FieldKind::kRecord,
       "geo::Point[4]",
       {4},
       sizeof(geo::Point)},
      {"quadrant", offsetof(geo::Shape, quadrant), 1, FieldKind::kUInt8, "geo::Quadrant", {}, 1},
      {"color", offsetof(geo::Shape, color), sizeof(geo::Color), FieldKind::kUInt32, "geo::Color", {}, 4},
      {"label", offsetof(geo::Shape, label), 16, FieldKind::kChar, "char[16]", {16}, 1},
      {"grid", offsetof(geo::Shape, grid), sizeof(geo::Shape::grid), FieldKind::kFloat64, "double[2][3]", {2, 3}, 8},
      {"owner", offsetof(geo::Shape, owner), 4, FieldKind::kActorId, "rk::ActorId", {}, 4},
      {"filled", offsetof(geo::Shape, filled), 1, FieldKind::kBool, "bool", {}, 1},
      {"layer", offsetof(geo::Shape, layer), 2, FieldKind::kInt16, "short", {}, 2},
      {"flags", offsetof(geo::Shape, flags), 2, FieldKind::kUInt16, "unsigned short", {}, 2},
      {"bias", offsetof(geo::Shape, bias), 1, FieldKind::kInt8, "signed char", {}, 1},
      {"alpha", offsetof(geo::Shape, alpha), 1, FieldKind::kUInt8, "unsigned char", {}, 1},
      {"id", offsetof(geo::Shape, id), 4, FieldKind::kUInt32, "unsigned int", {}, 4},
      {"big", offsetof(geo::Shape, big), 8, FieldKind::kInt64, "long", {}, 8},
      {"ubig", offsetof(geo::Shape, ubig), 8, FieldKind::kUInt64, "unsigned long long", {}, 8},
      {"watchers", offsetof(geo::Shape, watchers), 8, FieldKind::kActorId, "rk::ActorId[2]", {2}, 4},
      {"range", offsetof(geo::Shape, range), sizeof(geo::Span), FieldKind::kRecord, "geo::Span", {}, 8},
  };
  ASSERT_EQ(shape->fields.size(), std::size(expected));
  for (size_t i = 0; i < std::size(expected); ++i) {
    const FieldLayout& f = shape->fields[i];
    const Expected& e = expected[i];
    SCOPED_TRACE(e.name);
    EXPECT_EQ(f.name, e.name);
    EXPECT_EQ(f.offset, e.offset);
    EXPECT_EQ(f.size, e.size);
    EXPECT_EQ(f.kind, e.kind);
    EXPECT_EQ(f.type, e.type);
    EXPECT_EQ(f.dims, e.dims);
    EXPECT_EQ(f.element_size, e.element_size);
  }
  EXPECT_EQ(FindField(*shape, "corners")->record, "geo::Point");
  EXPECT_EQ(FindField(*shape, "range")->record, "geo::Span");
  // The enum fields name their enums, which the model describes.
  EXPECT_EQ(FindField(*shape, "quadrant")->enum_name, "geo::Quadrant");
  EXPECT_EQ(FindField(*shape, "color")->enum_name, "geo::Color");
  EXPECT_EQ(FindField(*shape, "label")->enum_name, "");
  ASSERT_EQ(model->enums.size(), 2u);
  EXPECT_EQ(model->enums[0].name, "geo::Color");
  EXPECT_EQ(model->enums[0].location, FindInHeader(header, "Color {"));
  EXPECT_EQ(model->enums[1].name, "geo::Quadrant");
  EXPECT_EQ(model->enums[1].location, FindInHeader(header, "Quadrant :"));

  const RecordLayout* envelope = model->FindRecord("Envelope");
  ASSERT_NE(envelope, nullptr);
  EXPECT_EQ(envelope->tag, "class");
  EXPECT_EQ(envelope->size, sizeof(Envelope));
  EXPECT_EQ(envelope->alignment, alignof(Envelope));
  ASSERT_EQ(envelope->fields.size(), 3u);
  EXPECT_EQ(envelope->fields[1].offset, offsetof(Envelope, hops));
  EXPECT_EQ(envelope->fields[2].offset, offsetof(Envelope, weights));
  EXPECT_EQ(envelope->fields[2].dims, (std::vector<uint64_t>{3, 2, 2}));
  EXPECT_EQ(envelope->fields[2].size, sizeof(Envelope::weights));

  const RecordLayout* span = model->FindRecord("geo::Span");
  ASSERT_NE(span, nullptr);
  EXPECT_FALSE(span->is_message());
  EXPECT_EQ(span->size, sizeof(geo::Span));

  // The header is returned under the name it is included by.
  ASSERT_EQ(model->sources.size(), 2u);
  EXPECT_EQ(model->sources[1].name, "layout_types.h");
  EXPECT_FALSE(model->sources[1].fragment);
  EXPECT_EQ(model->sources[1].contents, rk::testing::ReadFileOrDie(header));
}

const EnumLayout* FindEnum(const HandlerModel& model, const std::string& name) {
  const EnumLayout* e = model.FindEnum(name);
  EXPECT_NE(e, nullptr) << name;
  return e;
}

std::vector<std::string> Enumerators(const EnumLayout& e) {
  std::vector<std::string> out;
  for (const EnumeratorLayout& v : e.enumerators) out.push_back(v.name + "=" + FormatEnumeratorValue(e.kind, v.value));
  return out;
}

TEST(FrontendTest, EnumFieldsKeepTheirEnums) {
  std::vector<SourceFile> fragments = {
      {"market.cu",
       "namespace market {\n"
       "enum class Side : int { kBuy, kSell };\n"                        // scoped, explicit int
       "enum Level : unsigned char { kLow = 1, kHigh = 200 };\n"          // unscoped, explicit uint8
       "namespace risk { enum class Delta : long long { kDown = -9223372036854775807LL - 1, kFlat = 0 }; }\n"
       "enum class Wide : unsigned long long { kZero, kMax = 18446744073709551615ULL };\n"
       "enum class Tick { kUp = 5, kSame, kDown = -5 };\n"                // scoped, int by default, negative
       "struct Order {\n"
       "  Side side;\n"
       "  Level levels[3];\n"
       "  risk::Delta delta;\n"
       "  Wide wide;\n"
       "  Side legs[2][2];\n"
       "  rk::SendStatus status;\n"
       "};\n"
       "}  // namespace market\n"
       "enum Color { kRed = -1, kGreen, kBlue };\n"                      // unscoped, int (a negative value)
       "typedef enum { kOff, kOn } Switch;\n"                            // named by its typedef
       "struct Note { Color color; market::Tick tick; Switch power; };\n"
       "struct RK_ACTOR Desk {\n"
       "  int n;\n"
       "  RK_HANDLER void on(const market::Order& o, rk::Ctx&) { n += static_cast<int>(o.side); }\n"
       "  RK_HANDLER void on(const Note& o, rk::Ctx&) { n += o.color; }\n"
       "};\n",
       true}};
  std::vector<Diagnostic> diagnostics;
  absl::StatusOr<HandlerModel> model = ParseFragments(fragments, {}, &diagnostics);
  ASSERT_TRUE(model.ok()) << FormatDiagnostics(diagnostics);
  EXPECT_TRUE(diagnostics.empty()) << FormatDiagnostics(diagnostics);

  // Every enum a field uses, sorted by name; rk::SendStatus is RingKernel's
  // own and stays a plain integer.
  std::vector<std::string> names;
  for (const EnumLayout& e : model->enums) names.push_back(e.name);
  EXPECT_THAT(names, ElementsAre("Color", "Switch", "market::Level", "market::Side", "market::Tick", "market::Wide",
                                 "market::risk::Delta"));

  const EnumLayout* side = FindEnum(*model, "market::Side");
  ASSERT_NE(side, nullptr);
  EXPECT_TRUE(side->scoped);
  EXPECT_EQ(side->kind, FieldKind::kInt32);
  EXPECT_THAT(side->namespaces, ElementsAre("market"));
  EXPECT_THAT(Enumerators(*side), ElementsAre("kBuy=0", "kSell=1"));
  EXPECT_EQ(side->location, (SourceLocation{"market.cu", 2, 12}));

  const EnumLayout* level = FindEnum(*model, "market::Level");
  ASSERT_NE(level, nullptr);
  EXPECT_FALSE(level->scoped);
  EXPECT_EQ(level->kind, FieldKind::kUInt8);
  EXPECT_THAT(Enumerators(*level), ElementsAre("kLow=1", "kHigh=200"));

  const EnumLayout* delta = FindEnum(*model, "market::risk::Delta");
  ASSERT_NE(delta, nullptr);
  EXPECT_THAT(delta->namespaces, ElementsAre("market", "risk"));
  EXPECT_EQ(delta->kind, FieldKind::kInt64);
  EXPECT_THAT(Enumerators(*delta), ElementsAre("kDown=-9223372036854775808", "kFlat=0"));

  const EnumLayout* wide = FindEnum(*model, "market::Wide");
  ASSERT_NE(wide, nullptr);
  EXPECT_EQ(wide->kind, FieldKind::kUInt64);
  EXPECT_THAT(Enumerators(*wide), ElementsAre("kZero=0", "kMax=18446744073709551615"));

  const EnumLayout* tick = FindEnum(*model, "market::Tick");
  ASSERT_NE(tick, nullptr);
  EXPECT_TRUE(tick->scoped);
  EXPECT_EQ(tick->kind, FieldKind::kInt32);  // a scoped enum's default
  EXPECT_THAT(Enumerators(*tick), ElementsAre("kUp=5", "kSame=6", "kDown=-5"));

  const EnumLayout* color = FindEnum(*model, "Color");
  ASSERT_NE(color, nullptr);
  EXPECT_FALSE(color->scoped);
  EXPECT_TRUE(color->namespaces.empty());
  EXPECT_EQ(color->kind, FieldKind::kInt32);  // signed: it has a negative value
  EXPECT_THAT(Enumerators(*color), ElementsAre("kRed=-1", "kGreen=0", "kBlue=1"));

  const EnumLayout* power = FindEnum(*model, "Switch");
  ASSERT_NE(power, nullptr);
  EXPECT_EQ(power->kind, FieldKind::kUInt32);  // unscoped without negative values: unsigned
  EXPECT_THAT(Enumerators(*power), ElementsAre("kOff=0", "kOn=1"));

  // The fields: the enum's name, its underlying kind, arrays as usual.
  const RecordLayout* order = model->FindRecord("market::Order");
  ASSERT_NE(order, nullptr);
  EXPECT_EQ(FindField(*order, "side")->enum_name, "market::Side");
  EXPECT_EQ(FindField(*order, "side")->kind, FieldKind::kInt32);
  const FieldLayout* levels = FindField(*order, "levels");
  EXPECT_EQ(levels->enum_name, "market::Level");
  EXPECT_EQ(levels->kind, FieldKind::kUInt8);
  EXPECT_EQ(levels->dims, (std::vector<uint64_t>{3}));
  EXPECT_EQ(levels->size, 3u);
  EXPECT_EQ(FindField(*order, "delta")->enum_name, "market::risk::Delta");
  EXPECT_EQ(FindField(*order, "delta")->offset, 8u);
  const FieldLayout* legs = FindField(*order, "legs");
  EXPECT_EQ(legs->enum_name, "market::Side");
  EXPECT_EQ(legs->dims, (std::vector<uint64_t>{2, 2}));
  EXPECT_EQ(legs->type, "market::Side[2][2]");
  const FieldLayout* status = FindField(*order, "status");
  EXPECT_EQ(status->enum_name, "");
  EXPECT_EQ(status->kind, FieldKind::kUInt32);
  EXPECT_EQ(FindField(*model->FindRecord("Note"), "power")->enum_name, "Switch");

  // And the manifest keeps all of it.
  absl::StatusOr<HandlerModel> back = HandlerModel::FromJson(model->ToJson());
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, *model);
}

TEST(FrontendTest, EnumsThatHostCodeCannotNameAreRejected) {
  struct Case {
    std::string code;
    std::string error;
  };
  const std::vector<Case> cases = {
      {"struct M { enum class Side { kBuy }; Side side; };",
       "x.cu:1:43: error: field 'side' of 'M' has type 'M::Side', an enum which is declared inside 'M'; enums in "
       "messages must be declared at namespace scope, in a named namespace or none, so that the host header can "
       "declare them"},
      {"struct Holder { enum Side { kBuy }; }; struct M { Holder::Side sides[2]; };",
       "x.cu:1:64: error: field 'sides' of 'M' has type 'Holder::Side', an enum which is declared inside 'Holder'"},
      {"namespace { enum class Side { kBuy }; } struct M { Side side; };",
       "x.cu:1:57: error: field 'side' of 'M' has type '(anonymous namespace)::Side', an enum which is declared in an "
       "anonymous namespace"},
      {"struct M { enum { kA, kB } mode; };",
       "x.cu:1:28: error: field 'mode' of 'M' has an enum type without a name ('M::(unnamed enum at x.cu:1:12)'); "
       "the host header must name it: declare a named enum at namespace scope"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.code);
    std::vector<SourceFile> fragments = {
        {"x.cu", c.code + "\nstruct RK_ACTOR A { int n; RK_HANDLER void on(const M&, rk::Ctx&) { n += 1; } };\n",
         true}};
    std::vector<Diagnostic> diagnostics;
    EXPECT_THAT(ParseFragments(fragments, {}, &diagnostics),
                StatusIs(absl::StatusCode::kInvalidArgument, ::testing::_));
    ASSERT_EQ(diagnostics.size(), 1u) << FormatDiagnostics(diagnostics);
    EXPECT_THAT(diagnostics[0].ToString(), ::testing::StartsWith(c.error));
  }
}

TEST(FrontendTest, HeaderIncludedByTwoFragmentsIsReturnedOnce) {
  const std::string first = Fixture("ok/shared/first.cu");
  const std::string second = Fixture("ok/shared/second.cu");
  std::vector<Diagnostic> diagnostics;
  absl::StatusOr<HandlerModel> model = ParseFiles({first, second}, &diagnostics);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_TRUE(diagnostics.empty()) << FormatDiagnostics(diagnostics);

  ASSERT_EQ(model->sources.size(), 4u);
  EXPECT_EQ(model->sources[0].name, first);
  EXPECT_EQ(model->sources[1].name, second);
  EXPECT_EQ(model->sources[2].name, "messages.h");
  EXPECT_FALSE(model->sources[2].fragment);
  EXPECT_EQ(model->sources[2].contents, rk::testing::ReadFileOrDie(Fixture("ok/shared/messages.h")));
  EXPECT_EQ(model->sources[3].name, "sub/units.h");
  EXPECT_EQ(model->sources[3].contents, rk::testing::ReadFileOrDie(Fixture("ok/shared/sub/units.h")));

  const RecordLayout* credit = model->FindRecord("ledger::Credit");
  ASSERT_NE(credit, nullptr);
  EXPECT_EQ(credit->location, FindInHeader(Fixture("ok/shared/messages.h"), "Credit {"));
  EXPECT_NE(model->FindRecord("ledger::Report"), nullptr);
  const RecordLayout* cents = model->FindRecord("Cents");
  ASSERT_NE(cents, nullptr);
  EXPECT_FALSE(cents->is_message());
  ASSERT_EQ(model->actors.size(), 2u);
  EXPECT_EQ(model->actors[0].name, "Auditor");
  EXPECT_EQ(model->actors[1].name, "Ledger");
  // Both actors handle the one Credit type.
  EXPECT_EQ(model->actors[0].handlers[0].message_id, credit->message_id);
  EXPECT_EQ(model->actors[1].handlers[0].message_id, credit->message_id);
}

TEST(FrontendTest, InMemoryFragmentsIncludeEachOtherByName) {
  // Runtime registration: nothing on disk. actors.cu includes messages.cu,
  // which is also a fragment of its own (#pragma once keeps it single).
  std::vector<SourceFile> fragments = {
      {"mem/actors.cu",
       "#include \"messages.cu\"\n"
       "#include \"limits.h\"\n"
       "struct RK_ACTOR Pinger {\n"
       "  int count;\n"
       "  RK_HANDLER void on(const Ping& p, rk::Ctx& ctx) { count += p.n % kLimit; ctx.reply(Pong{count}); }\n"
       "};\n",
       true},
      {"mem/messages.cu", "#pragma once\nstruct Ping { int n; };\nstruct Pong { int total; };\n", true},
      {"mem/limits.h", "#pragma once\nconstexpr int kLimit = 100;\n", false},
  };
  std::vector<Diagnostic> diagnostics;
  absl::StatusOr<HandlerModel> model = ParseFragments(fragments, {}, &diagnostics);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_TRUE(diagnostics.empty()) << FormatDiagnostics(diagnostics);
  ASSERT_EQ(model->sources.size(), 3u);
  EXPECT_EQ(model->sources[0], fragments[0]);
  EXPECT_EQ(model->sources[1], fragments[1]);
  // The in-memory header, under its include name.
  EXPECT_EQ(model->sources[2], (SourceFile{"limits.h", fragments[2].contents, false}));
  const RecordLayout* ping = model->FindRecord("Ping");
  ASSERT_NE(ping, nullptr);
  EXPECT_EQ(ping->location, (SourceLocation{"mem/messages.cu", 2, 8}));
  EXPECT_EQ(model->FindActor("Pinger")->location, (SourceLocation{"mem/actors.cu", 3, 17}));
}

// A type a handler only forwards (ctx.forward) is a message like one it
// sends: it gets an id, and the program builds.
TEST(FrontendTest, AForwardedTypeIsAMessage) {
  std::vector<SourceFile> fragments = {
      {"mem/fwd.cu",
       "struct Job { int n; };\n"
       "struct Handoff { int n; };\n"
       "struct RK_ACTOR Front {\n"
       "  rk::ActorId back;\n"
       "  RK_HANDLER void on(const Job& j, rk::Ctx& ctx) { ctx.forward(back, Handoff{j.n}); }\n"
       "};\n",
       true},
  };
  std::vector<Diagnostic> diagnostics;
  absl::StatusOr<HandlerModel> model = ParseFragments(fragments, {}, &diagnostics);
  ASSERT_TRUE(model.ok()) << model.status() << FormatDiagnostics(diagnostics);
  const RecordLayout* handoff = model->FindRecord("Handoff");
  ASSERT_NE(handoff, nullptr);
  EXPECT_TRUE(handoff->is_message()) << "a forwarded type needs a message id";
}

TEST(FrontendTest, HelperFunctionsWithAndWithoutDevice) {
  std::vector<Diagnostic> diagnostics;
  absl::StatusOr<HandlerModel> model = ParseFiles({Fixture("ok/helpers.cu")}, &diagnostics);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_TRUE(diagnostics.empty()) << FormatDiagnostics(diagnostics);
  // Only the actor's handler and its messages make the model: helper
  // functions, constants and globals do not.
  EXPECT_EQ(model->actors.size(), 1u);
  EXPECT_EQ(model->message_count(), 2u);
}

TEST(FrontendTest, CudaBuiltinsAreDeclared) {
  // Every use in this fixture must resolve: a missing declaration in the
  // shim would be an "undeclared identifier" error here.
  std::vector<Diagnostic> diagnostics;
  absl::StatusOr<HandlerModel> model = ParseFiles({Fixture("ok/intrinsics.cu")}, &diagnostics);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_TRUE(diagnostics.empty()) << FormatDiagnostics(diagnostics);
  EXPECT_EQ(model->actors[0].handlers[0].kind, HandlerKind::kBlock);
}

TEST(FrontendTest, ShimVectorTypesHaveCudaLayouts) {
  std::vector<SourceFile> fragments = {
      {"vec.cu",
       "struct Packet { char c; float4 f; int2 i; double2 d; uchar3 u; };\n"
       "static_assert(sizeof(float4) == 16 && alignof(float4) == 16, \"\");\n"
       "static_assert(alignof(int2) == 8 && alignof(short2) == 4, \"\");\n"
       "static_assert(sizeof(uchar3) == 3 && alignof(uchar3) == 1, \"\");\n"
       "static_assert(sizeof(dim3) == 12 && sizeof(uint3) == 12, \"\");\n"
       "static_assert(sizeof(long) == 8 && sizeof(int64_t) == 8, \"\");\n"
       "struct RK_ACTOR A { int n; RK_HANDLER void on(const Packet& p, rk::Ctx&) { n += p.i.x; } };\n",
       true}};
  std::vector<Diagnostic> diagnostics;
  absl::StatusOr<HandlerModel> model = ParseFragments(fragments, {}, &diagnostics);
  ASSERT_TRUE(model.ok()) << FormatDiagnostics(diagnostics);
  const RecordLayout* packet = model->FindRecord("Packet");
  ASSERT_NE(packet, nullptr);
  EXPECT_EQ(packet->fields[1].offset, 16u);
  EXPECT_EQ(packet->fields[1].kind, FieldKind::kRecord);
  EXPECT_EQ(packet->fields[1].record, "float4");
  EXPECT_EQ(packet->alignment, 16u);
  const RecordLayout* float4_layout = model->FindRecord("float4");
  ASSERT_NE(float4_layout, nullptr);
  EXPECT_EQ(float4_layout->fields.size(), 4u);
  EXPECT_TRUE(float4_layout->location.file.empty());  // declared by RingKernel's shim, not the user
}

TEST(FrontendTest, IncludeDirectoriesAndDefines) {
  rk::testing::TempDir dir;
  std::filesystem::create_directories(dir.Join("inc/proto"));
  std::filesystem::create_directories(dir.Join("src"));
  rk::testing::WriteFileOrDie(dir.Join("inc/proto/wire.h"), "#pragma once\nstruct Wire { int bytes[SCALE]; };\n");
  rk::testing::WriteFileOrDie(
      dir.Join("src/main.cu"),
      "#include \"proto/wire.h\"\n"
      "struct RK_ACTOR Link { int total; RK_HANDLER void on(const Wire& w, rk::Ctx&) { total += "
      "w.bytes[0]; } };\n");
  FrontendOptions options;
  options.include_dirs = {dir.Join("inc")};
  options.defines = {"SCALE=3", "UNUSED_FLAG"};
  std::vector<Diagnostic> diagnostics;
  absl::StatusOr<HandlerModel> model = ParseFiles({dir.Join("src/main.cu")}, &diagnostics, options);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(model->FindRecord("Wire")->size, 12u);
  ASSERT_EQ(model->sources.size(), 2u);
  EXPECT_EQ(model->sources[1].name, "proto/wire.h");
  EXPECT_EQ(model->FindRecord("Wire")->location.file, Shown(dir.Join("inc/proto/wire.h")));

  // Without the include directory the header is not found, at the user's
  // #include.
  diagnostics.clear();
  options.include_dirs.clear();
  EXPECT_THAT(ParseFiles({dir.Join("src/main.cu")}, &diagnostics, options),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("'proto/wire.h' file not found")));
  ASSERT_FALSE(diagnostics.empty());
  EXPECT_EQ(diagnostics[0].location, (SourceLocation{dir.Join("src/main.cu"), 1, 10}));

  // Include directories serve quoted includes only.
  rk::testing::WriteFileOrDie(dir.Join("src/angle.cu"), "#include <proto/wire.h>\n");
  options.include_dirs = {dir.Join("inc")};
  EXPECT_THAT(ParseFiles({dir.Join("src/angle.cu")}, nullptr, options),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("'proto/wire.h' file not found with <angled> include; use \"quotes\" instead")));

  options.defines = {"3D=1"};
  EXPECT_THAT(ParseFiles({dir.Join("src/main.cu")}, nullptr, options),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("bad define '3D=1'")));
}

TEST(FrontendTest, TwoHeadersUnderOneNameAreAnError) {
  rk::testing::TempDir dir;
  std::filesystem::create_directories(dir.Join("a"));
  std::filesystem::create_directories(dir.Join("b"));
  rk::testing::WriteFileOrDie(dir.Join("a/common.h"), "#pragma once\nstruct Ping { int n; };\n");
  rk::testing::WriteFileOrDie(dir.Join("b/common.h"), "#pragma once\nstruct Pong { int n; };\n");
  rk::testing::WriteFileOrDie(
      dir.Join("a/x.cu"),
      "#include \"common.h\"\n"
      "struct RK_ACTOR X { int n; RK_HANDLER void on(const Ping& p, rk::Ctx&) { n = p.n; } };\n");
  rk::testing::WriteFileOrDie(
      dir.Join("b/y.cu"),
      "#include \"common.h\"\n"
      "struct RK_ACTOR Y { int n; RK_HANDLER void on(const Pong& p, rk::Ctx&) { n = p.n; } };\n");
  std::vector<Diagnostic> diagnostics;
  EXPECT_THAT(ParseFiles({dir.Join("a/x.cu"), dir.Join("b/y.cu")}, &diagnostics),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("'common.h' names two different headers")));
  ASSERT_EQ(diagnostics.size(), 2u) << FormatDiagnostics(diagnostics);
  EXPECT_EQ(diagnostics[0].severity, DiagnosticSeverity::kError);
  EXPECT_EQ(diagnostics[0].location, (SourceLocation{dir.Join("b/y.cu"), 1, 10}));
  EXPECT_THAT(diagnostics[0].message, HasSubstr(Shown(dir.Join("a/common.h"))));
  EXPECT_THAT(diagnostics[0].message, HasSubstr(Shown(dir.Join("b/common.h"))));
  EXPECT_EQ(diagnostics[1].severity, DiagnosticSeverity::kNote);
  EXPECT_EQ(diagnostics[1].location, (SourceLocation{dir.Join("a/x.cu"), 1, 10}));
}

// ---------------------------------------------------------------------------
// Diagnostics

TEST(FrontendTest, ErrorsInsideRingKernelHeadersPointAtTheUsersCode) {
  // Sending a type whose operator& returns void breaks the body of
  // Ctx::send, in actor.cuh; the user must be pointed at their send.
  std::vector<SourceFile> fragments = {
      {"odd.cu",
       "struct Odd { int n; void operator&() const {} };\n"
       "struct Ping { int n; };\n"
       "struct RK_ACTOR A {\n"
       "  int n;\n"
       "  RK_HANDLER void on(const Ping& p, rk::Ctx& ctx) { ctx.send(ctx.sender(), Odd{p.n}); }\n"
       "};\n",
       true}};
  std::vector<Diagnostic> diagnostics;
  EXPECT_THAT(ParseFragments(fragments, {}, &diagnostics),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("odd.cu:5:")));
  ASSERT_FALSE(diagnostics.empty());
  EXPECT_EQ(diagnostics[0].severity, DiagnosticSeverity::kError);
  EXPECT_EQ(diagnostics[0].location.file, "odd.cu");
  EXPECT_EQ(diagnostics[0].location.line, 5u);
  EXPECT_EQ(diagnostics[0].location.column, 57u);  // send, in ctx.send(
  for (const Diagnostic& d : diagnostics) {
    EXPECT_EQ(d.location.file.find("ringkernel"), std::string::npos) << d.ToString();
    EXPECT_EQ(d.message.find("ringkernel-virtual"), std::string::npos) << d.ToString();
  }
}

TEST(FrontendTest, ErrorsInsideRingKernelHeadersPointAtTheUsersInclude) {
  // A user macro that breaks a RingKernel header the fragment includes: the
  // errors clang finds inside the header are reported at the #include.
  std::vector<SourceFile> fragments = {
      {"inc.cu",
       "#define kLineBytes )\n"
       "#include <ringkernel/device/mailbox.h>\n"
       "struct Ping { int n; };\n"
       "struct RK_ACTOR A { int n; RK_HANDLER void on(const Ping& p, rk::Ctx&) { n = p.n; } };\n",
       true}};
  std::vector<Diagnostic> diagnostics;
  EXPECT_THAT(ParseFragments(fragments, {}, &diagnostics), StatusIs(absl::StatusCode::kInvalidArgument, ::testing::_));
  ASSERT_GT(diagnostics.size(), 2u);
  int at_include = 0;
  for (const Diagnostic& d : diagnostics) {
    // clang's closing "too many errors" note is about no place.
    if (d.message == "too many errors emitted, stopping now") {
      EXPECT_EQ(d.location.file, "") << d.ToString();
      continue;
    }
    EXPECT_EQ(d.location.file, "inc.cu") << d.ToString();
    if (d.location == SourceLocation{"inc.cu", 2, 10}) ++at_include;
  }
  EXPECT_GT(at_include, 1) << FormatDiagnostics(diagnostics);
}

TEST(FrontendTest, ErrorsInUserHeadersNameTheHeaderAndTheInclude) {
  rk::testing::TempDir dir;
  rk::testing::WriteFileOrDie(dir.Join("util.h"), "#pragma once\nint Broken() { return undefined_value; }\n");
  rk::testing::WriteFileOrDie(dir.Join("main.cu"), "#include \"util.h\"\n");
  std::vector<Diagnostic> diagnostics;
  EXPECT_THAT(
      ParseFiles({dir.Join("main.cu")}, &diagnostics),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("use of undeclared identifier 'undefined_value'")));
  ASSERT_EQ(diagnostics.size(), 2u) << FormatDiagnostics(diagnostics);
  EXPECT_EQ(diagnostics[0].location, (SourceLocation{Shown(dir.Join("util.h")), 2, 23}));
  EXPECT_EQ(diagnostics[1].severity, DiagnosticSeverity::kNote);
  EXPECT_EQ(diagnostics[1].location, (SourceLocation{dir.Join("main.cu"), 1, 10}));
  EXPECT_EQ(diagnostics[1].message, "in a file included from here");
}

TEST(FrontendTest, MessagesNameFragmentsAsTheUserDoes) {
  // clang names unnamed types by where they are; that must be the
  // fragment's name, not the path the parser served it under.
  std::vector<SourceFile> fragments = {{"un.cu", "struct { int n; } g;\nint x = g;\n", true}};
  std::vector<Diagnostic> diagnostics;
  EXPECT_THAT(ParseFragments(fragments, {}, &diagnostics), StatusIs(absl::StatusCode::kInvalidArgument, ::testing::_));
  ASSERT_FALSE(diagnostics.empty());
  EXPECT_THAT(diagnostics[0].message, HasSubstr("(unnamed struct at un.cu:1:1)"));
  EXPECT_EQ(diagnostics[0].location, (SourceLocation{"un.cu", 2, 5}));
}

TEST(FrontendTest, ErrorsWithNoUserLocationHaveNoLocation) {
  // A define that breaks RingKernel's own headers: nothing in the user's
  // files led there, so the errors carry no location (and no virtual path).
  FrontendOptions options;
  options.defines = {"u64=int"};
  std::vector<Diagnostic> diagnostics;
  EXPECT_THAT(ParseFiles({Fixture("ok/bank.cu")}, &diagnostics, options),
              StatusIs(absl::StatusCode::kInvalidArgument, ::testing::_));
  ASSERT_FALSE(diagnostics.empty());
  for (const Diagnostic& d : diagnostics) {
    EXPECT_EQ(d.location.file.find("ringkernel-virtual"), std::string::npos) << d.ToString();
  }
  EXPECT_TRUE(std::any_of(diagnostics.begin(), diagnostics.end(), [](const Diagnostic& d) {
    return d.severity == DiagnosticSeverity::kError && d.location.file.empty();
  })) << FormatDiagnostics(diagnostics);
}

TEST(FrontendTest, WarningsAreReportedWithoutFailingTheParse) {
  std::vector<SourceFile> fragments = {
      {"warn.cu",
       "int Forgot(int x) { if (x) return 1; }\n"
       "struct Ping { int n; };\n"
       "struct RK_ACTOR A { int n; RK_HANDLER void on(const Ping& p, rk::Ctx&) { n = Forgot(p.n); } };\n",
       true}};
  std::vector<Diagnostic> diagnostics;
  absl::StatusOr<HandlerModel> model = ParseFragments(fragments, {}, &diagnostics);
  ASSERT_TRUE(model.ok()) << model.status();
  ASSERT_EQ(diagnostics.size(), 1u) << FormatDiagnostics(diagnostics);
  EXPECT_EQ(diagnostics[0].severity, DiagnosticSeverity::kWarning);
  EXPECT_EQ(diagnostics[0].location, (SourceLocation{"warn.cu", 1, 38}));
  EXPECT_THAT(diagnostics[0].message, HasSubstr("non-void function does not return a value"));
}

TEST(FrontendTest, DiagnosticsAreAppended) {
  // Filled field by field: a braced initializer list of it trips a false
  // -Wmaybe-uninitialized in g++ 12 -O3.
  std::vector<Diagnostic> diagnostics(1);
  diagnostics[0].severity = DiagnosticSeverity::kWarning;
  diagnostics[0].location.file = "earlier.cu";
  diagnostics[0].location.line = 1;
  diagnostics[0].location.column = 1;
  diagnostics[0].message = "from before";
  std::vector<SourceFile> fragments = {{"bad.cu", "struct RK_ACTOR A { int n; };\n", true}};
  absl::StatusOr<HandlerModel> model = ParseFragments(fragments, {}, &diagnostics);
  EXPECT_THAT(model,
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("bad.cu:1:17: error: actor 'A' has no handlers")));
  // The status holds this parse's errors only.
  EXPECT_THAT(std::string(model.status().message()), ::testing::Not(HasSubstr("from before")));
  ASSERT_EQ(diagnostics.size(), 2u);
  EXPECT_EQ(diagnostics[0].message, "from before");
}

// Found by tests/fuzz/frontend_fuzzer: a context parameter that is not a
// reference has no pointee, and asking libclang 16 for the unqualified form
// of that invalid type crashed the front-end (SEGV in
// clang_getUnqualifiedType). Now it is the usual diagnostic.
TEST(FrontendTest, ContextParameterThatIsNotAReferenceIsAnErrorNotACrash) {
  auto fragment = [](const std::string& parameter) {
    return std::vector<SourceFile>{
        {"ctx.cu",
         "struct M { int n; };\nstruct RK_ACTOR A {\n  int n;\n  RK_HANDLER void on(const M& m, " + parameter +
             ") {}\n};\n",
         true}};
  };
  const std::string error = "ctx.cu:4:34: error: the second parameter of a handler must be 'rk::Ctx&', but 'on' takes ";
  EXPECT_THAT(ParseFragments(fragment("rk::Ctx ctx"), {}, nullptr),
              StatusIs(absl::StatusCode::kInvalidArgument, error + "'rk::Ctx'"));
  EXPECT_THAT(ParseFragments(fragment("int ctx"), {}, nullptr),
              StatusIs(absl::StatusCode::kInvalidArgument, error + "'int'"));
  // The fuzzer's own find: a stray character after the type.
  EXPECT_THAT(ParseFragments(fragment("rk::Ctx` ctx"), {}, nullptr),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "ctx.cu:4:41: error: expected ')'\nctx.cu:4:21: note: to match this '('\n" + error +
                           "'rk::Ctx'"));
}

TEST(FrontendTest, MaxPayloadOption) {
  FrontendOptions options;
  options.max_payload = 16;
  absl::StatusOr<HandlerModel> model = ParseFiles({Fixture("ok/bank.cu")}, nullptr, options);
  ASSERT_TRUE(model.ok()) << model.status();  // the largest message is exactly 16 bytes
  EXPECT_EQ(model->max_payload, 16u);
  options.max_payload = 15;
  EXPECT_THAT(ParseFiles({Fixture("ok/bank.cu")}, nullptr, options),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("message 'Balance' is 16 bytes, larger than the max payload of 15 bytes")));
}

TEST(FrontendTest, BadInputLists) {
  EXPECT_THAT(ParseFragments({}, {}, nullptr),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("no handler fragments")));
  EXPECT_THAT(ParseFragments({{"a.cu", "", true}, {"./a.cu", "", true}}, {}, nullptr),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("'a.cu' and './a.cu' are the same file")));
  EXPECT_THAT(ParseFragments({{"", "", true}}, {}, nullptr),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("empty name")));
  EXPECT_THAT(ParseFragments({{"a\"b.cu", "", true}}, {}, nullptr),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("contains a quote")));
}

// ---------------------------------------------------------------------------
// ReadFragments

TEST(ReadFragmentsTest, ReadsFilesInOrder) {
  rk::testing::TempDir dir;
  rk::testing::WriteFileOrDie(dir.Join("a.cu"), "// a\n");
  rk::testing::WriteFileOrDie(dir.Join("b.cu"), "// b\n");
  absl::StatusOr<std::vector<SourceFile>> files = ReadFragments({dir.Join("b.cu"), dir.Join("a.cu")});
  ASSERT_TRUE(files.ok()) << files.status();
  EXPECT_THAT(*files,
              ElementsAre(SourceFile{dir.Join("b.cu"), "// b\n", true}, SourceFile{dir.Join("a.cu"), "// a\n", true}));
}

TEST(ReadFragmentsTest, Errors) {
  rk::testing::TempDir dir;
  EXPECT_THAT(ReadFragments({dir.Join("missing.cu")}),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr(dir.Join("missing.cu"))));
  EXPECT_THAT(ReadFragments({dir.path()}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(dir.path() + "': it is a directory")));
  if (geteuid() != 0) {  // root reads anything
    rk::testing::WriteFileOrDie(dir.Join("secret.cu"), "// x\n");
    chmod(dir.Join("secret.cu").c_str(), 0);
    EXPECT_THAT(ReadFragments({dir.Join("secret.cu")}),
                StatusIs(absl::StatusCode::kPermissionDenied, HasSubstr(dir.Join("secret.cu"))));
  }
}

// ---------------------------------------------------------------------------
// Threads and time

TEST(FrontendTest, ConcurrentParsesGiveIdenticalModels) {
  const std::vector<std::string> paths = {Fixture("ok/bank.cu"), Fixture("ok/layouts.cu"), Fixture("ok/routes.cu")};
  absl::StatusOr<HandlerModel> reference = ParseFiles(paths, nullptr);
  ASSERT_TRUE(reference.ok()) << reference.status();
  constexpr int kThreads = 4;
  constexpr int kRounds = 3;
  std::vector<std::vector<absl::StatusOr<HandlerModel>>> results(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int r = 0; r < kRounds; ++r) results[t].push_back(ParseFiles(paths, nullptr));
    });
  }
  for (std::thread& t : threads) t.join();
  for (const auto& per_thread : results) {
    ASSERT_EQ(per_thread.size(), static_cast<size_t>(kRounds));
    for (const absl::StatusOr<HandlerModel>& m : per_thread) {
      ASSERT_TRUE(m.ok()) << m.status();
      EXPECT_TRUE(*m == *reference);
    }
  }
}

// Ten handlers, ten messages: the size of program DESIGN.md's JIT target is
// stated for.
std::string TenHandlerFragment() {
  std::ostringstream out;
  for (int i = 0; i < 10; ++i) {
    out << "struct Msg" << i << " { int key; long long value; float weights[" << (i + 1) * 4 << "]; };\n";
  }
  out << "struct Total { long long sum; };\n";
  out << "struct RK_ACTOR Worker {\n  long long sums[10];\n  float scale = 1.0f;\n";
  for (int i = 0; i < 10; ++i) {
    out << "  RK_HANDLER void on(const Msg" << i << "& m, rk::Ctx& ctx) {\n"
        << "    float acc = 0.0f;\n"
        << "    for (int j = 0; j < " << (i + 1) * 4 << "; ++j) acc += m.weights[j] * scale;\n"
        << "    sums[" << i << "] += m.value + static_cast<long long>(sqrtf(fabsf(acc)));\n"
        << "    if (m.key < 0) ctx.send(rk::route(\"audit\"), Total{sums[" << i << "]});\n"
        << "    else ctx.reply(Total{sums[" << i << "]});\n"
        << "  }\n";
  }
  out << "};\n";
  return out.str();
}

TEST(FrontendTest, ParseTimeOfTenHandlers) {
  const std::vector<SourceFile> fragments = {{"ten.cu", TenHandlerFragment(), true}};
  absl::StatusOr<HandlerModel> model = ParseFragments(fragments, {}, nullptr);  // warm: libclang loaded
  ASSERT_TRUE(model.ok()) << model.status();
  ASSERT_EQ(model->actors[0].handlers.size(), 10u);
  std::vector<double> ms;
  for (int i = 0; i < 7; ++i) {
    const auto start = std::chrono::steady_clock::now();
    absl::StatusOr<HandlerModel> again = ParseFragments(fragments, {}, nullptr);
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    ASSERT_TRUE(again.ok());
  }
  std::sort(ms.begin(), ms.end());
  std::printf("[ timing ] ParseFragments, 10 handlers: median %.1f ms, min %.1f ms, max %.1f ms (7 runs)\n",
              ms[ms.size() / 2], ms.front(), ms.back());
}

}  // namespace
}  // namespace rk::jit
