// Copyright 2026 The RingKernel Authors.
//
// `actorc header`'s generator (tools/host_header.cc) on models built in
// code, so that every kind of enum — scoped or not, in namespaces or not,
// each underlying type, extreme values — is covered without compiling a
// program: the exact text it writes, and that the host compiler accepts
// that text with the layouts and values it promises. actorc_test.cc runs
// the generator end to end on real packages.
#include "tools/host_header.h"

#include <limits>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/layout_builders.h"
#include "tests/test_support.h"

namespace rk::tools {
namespace {

using jit::EnumLayout;
using jit::FieldKind;
using jit::FieldLayout;
using jit::RecordLayout;
using ::testing::HasSubstr;
using ::testing::Not;

using ::rk::testing::EnumField;
using ::rk::testing::Field;

EnumLayout Enum(std::string name, std::vector<std::string> namespaces, bool scoped, FieldKind kind,
                std::vector<jit::EnumeratorLayout> enumerators) {
  EnumLayout e;
  e.name = std::move(name);
  e.namespaces = std::move(namespaces);
  e.scoped = scoped;
  e.kind = kind;
  e.enumerators = std::move(enumerators);
  return e;
}

// market::Order uses an enum of every underlying type the generator spells
// specially (bool, a negative char, INT64_MIN, a uint64 above INT64_MAX), an
// array of enums and an enum at global scope.
jit::Package TradingPackage() {
  jit::Package p;
  jit::HandlerModel& m = p.model;
  RecordLayout order;
  order.name = "market::Order";
  order.tag = "struct";
  order.namespaces = {"market"};
  order.size = 32;
  order.alignment = 8;
  order.message_id = 1;
  order.fields = {EnumField("side", "market::Side", FieldKind::kInt32, 0),
                  EnumField("levels", "market::Level", FieldKind::kUInt8, 4, {3}),
                  EnumField("flag", "market::Flag", FieldKind::kBool, 7),
                  EnumField("delta", "market::risk::Delta", FieldKind::kInt64, 8),
                  EnumField("wide", "market::Wide", FieldKind::kUInt64, 16),
                  EnumField("grade", "Grade", FieldKind::kChar, 24),
                  EnumField("none", "market::Empty", FieldKind::kInt16, 26),
                  Field("account", "int", FieldKind::kInt32, 28, 4)};
  m.records = {order};
  m.enums = {
      Enum("Grade", {}, false, FieldKind::kChar, {{"kBad", -1}, {"kGood", 'g'}}),
      Enum("market::Empty", {"market"}, true, FieldKind::kInt16, {}),
      Enum("market::Flag", {"market"}, true, FieldKind::kBool, {{"kNo", 0}, {"kYes", 1}}),
      Enum("market::Level", {"market"}, false, FieldKind::kUInt8, {{"kLow", 1}, {"kHigh", 200}}),
      Enum("market::Side", {"market"}, true, FieldKind::kInt32, {{"kBuy", 0}, {"kSell", 1}}),
      Enum("market::Wide", {"market"}, true, FieldKind::kUInt64,
           {{"kZero", 0}, {"kMax", static_cast<int64_t>(~uint64_t{0})}}),
      Enum("market::risk::Delta", {"market", "risk"}, true, FieldKind::kInt64,
           {{"kDown", std::numeric_limits<int64_t>::min()}, {"kUp", std::numeric_limits<int64_t>::max()}}),
  };
  return p;
}

std::string HeaderOrDie(const jit::Package& p) {
  absl::StatusOr<std::string> text = GenerateHostHeader(p, "TRADING_H_", "trading.rkpkg");
  EXPECT_TRUE(text.ok()) << text.status();
  return text.ok() ? *text : "";
}

TEST(HostHeaderTest, EnumsAreDeclaredInTheirNamespacesWithTheirUnderlyingTypes) {
  const std::string text = HeaderOrDie(TradingPackage());
  EXPECT_THAT(text, HasSubstr("enum Grade : char { kBad = -1, kGood = 103 };\n"
                              "static_assert(sizeof(::Grade) == 1, \"size of Grade\");\n"));
  EXPECT_THAT(text, HasSubstr("namespace market {\nenum class Empty : int16_t {};\n}  // namespace market\n"
                              "static_assert(sizeof(::market::Empty) == 2, \"size of market::Empty\");\n"));
  EXPECT_THAT(text, HasSubstr("enum class Flag : bool { kNo = false, kYes = true };\n"));
  EXPECT_THAT(text, HasSubstr("enum Level : uint8_t { kLow = 1, kHigh = 200 };\n"));
  EXPECT_THAT(text, HasSubstr("namespace market {\nenum class Side : int32_t { kBuy = 0, kSell = 1 };\n"
                              "}  // namespace market\n"
                              "static_assert(sizeof(::market::Side) == 4, \"size of market::Side\");\n"));
  // Literals that convert without a narrowing error.
  EXPECT_THAT(text, HasSubstr("enum class Wide : uint64_t { kZero = 0, kMax = 18446744073709551615ull };\n"));
  EXPECT_THAT(text, HasSubstr("namespace market {\nnamespace risk {\n"
                              "enum class Delta : int64_t { kDown = (-9223372036854775807 - 1), "
                              "kUp = 9223372036854775807 };\n"
                              "}  // namespace risk\n}  // namespace market\n"));
}

TEST(HostHeaderTest, FieldsHaveTheirEnumTypesAndEnumsComeBeforeTheStructs) {
  const std::string text = HeaderOrDie(TradingPackage());
  EXPECT_THAT(text, HasSubstr("  ::market::Side side;  // market::Side, offset 0\n"));
  EXPECT_THAT(text, HasSubstr("  ::market::Level levels[3];  // market::Level, offset 4\n"));
  EXPECT_THAT(text, HasSubstr("  ::Grade grade;  // Grade, offset 24\n"));
  EXPECT_THAT(text, HasSubstr("  int32_t account;  // int, offset 28\n"));
  const size_t last_enum = text.find("enum class Delta");
  const size_t first_struct = text.find("struct Order {");
  ASSERT_NE(last_enum, std::string::npos);
  ASSERT_NE(first_struct, std::string::npos);
  EXPECT_LT(last_enum, first_struct);
}

TEST(HostHeaderTest, MessagesCarryTheirLayoutSignature) {
  const std::string text = HeaderOrDie(TradingPackage());
  EXPECT_THAT(text, HasSubstr("RK_HOST_MESSAGE_LAYOUT(::market::Order, \"market::Order\", "
                              "\"side:enum market::Side:int32{kBuy=0,kSell=1}@0;"
                              "levels:enum market::Level:uint8{kLow=1,kHigh=200}[3]@4;"
                              "flag:enum market::Flag:bool{kNo=0,kYes=1}@7;"
                              "delta:enum market::risk::Delta:int64{kDown=-9223372036854775808,"
                              "kUp=9223372036854775807}@8;"
                              "wide:enum market::Wide:uint64{kZero=0,kMax=18446744073709551615}@16;"
                              "grade:enum Grade:char{kBad=-1,kGood=103}@24;"
                              "none:enum market::Empty:int16{}@26;account:int32@28\");\n"));
  EXPECT_THAT(text, Not(HasSubstr("RK_HOST_MESSAGE(")));
}

TEST(HostHeaderTest, AnEnumTheModelLacksIsAnError) {
  jit::Package p = TradingPackage();
  p.model.enums.pop_back();
  EXPECT_THAT(GenerateHostHeader(p, "G_", "x"),
              rk::testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                    HasSubstr("field 'delta' of 'market::Order' names unknown enum "
                                              "'market::risk::Delta'")));
}

TEST(HostHeaderTest, TheHostCompilerAcceptsTheHeaderWithItsValuesAndLayout) {
  rk::testing::TempDir dir;
  rk::testing::WriteFileOrDie(dir.Join("trading.h"), HeaderOrDie(TradingPackage()));
  rk::testing::WriteFileOrDie(
      dir.Join("main.cc"),
      "#include \"trading.h\"\n"
      "#include <string_view>\n"
      "#include <type_traits>\n"
      "static_assert(std::is_same_v<std::underlying_type_t<market::Side>, int32_t>);\n"
      "static_assert(std::is_same_v<std::underlying_type_t<market::Wide>, uint64_t>);\n"
      "static_assert(std::is_same_v<std::underlying_type_t<market::Flag>, bool>);\n"
      "static_assert(std::is_same_v<decltype(market::Order::side), market::Side>);\n"
      "static_assert(std::is_same_v<decltype(market::Order::levels), market::Level[3]>);\n"
      "static_assert(static_cast<int64_t>(market::risk::Delta::kDown) == INT64_MIN);\n"
      "static_assert(static_cast<uint64_t>(market::Wide::kMax) == UINT64_MAX);\n"
      "static_assert(market::kHigh == 200 && static_cast<char>(kBad) == -1);\n"
      "static_assert(std::string_view(rk::MessageTraits<market::Order>::kName) == \"market::Order\");\n"
      "static_assert(std::string_view(rk::detail::HostLayout<market::Order>()).starts_with(\"side:enum "
      "market::Side:int32{kBuy=0,kSell=1}@0;\"));\n"
      "// A hand-written type: name, size and alignment only.\n"
      "struct Hand { int a; };\n"
      "RK_HOST_MESSAGE(Hand, \"Hand\");\n"
      "static_assert(rk::detail::HostLayout<Hand>() == nullptr);\n"
      "int main() { market::Order o{}; o.side = market::Side::kSell; return o.side == market::Side::kSell ? 0 : 1; "
      "}\n");
  rk::testing::CommandResult r =
      rk::testing::RunCommand({"/usr/bin/g++", "-std=c++20", "-Wall", "-Wextra", "-Werror",
                               "-I" + rk::testing::SourceDir() + "/include", "-I/usr/include", "-fsyntax-only",
                               dir.Join("main.cc")});
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

}  // namespace
}  // namespace rk::tools
