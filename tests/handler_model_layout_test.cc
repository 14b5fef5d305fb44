// Copyright 2026 The RingKernel Authors.
//
// Layout signatures (jit/handler_model.h): the signature of a record is
// exact and deterministic, the difference between two names the first field
// that differs in words, and CheckHostLayout — what the runtime calls when a
// host type with RK_HOST_MESSAGE_LAYOUT is first sent — refuses a stale
// layout with the field and the fix. CPU only: the runtime's check is this
// function, and tests/system_gpu_test.cc checks that it is the one called.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/handler_model.h"
#include "tests/layout_builders.h"
#include "tests/test_support.h"

namespace rk::jit {
namespace {

using ::rk::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::StartsWith;

using ::rk::testing::EnumField;
using ::rk::testing::Field;

FieldLayout RecordField(std::string name, std::string record, uint64_t offset, uint64_t element_size,
                        std::vector<uint64_t> dims = {}) {
  FieldLayout f = Field(std::move(name), FieldKind::kRecord, offset, element_size, std::move(dims));
  f.record = std::move(record);
  return f;
}

RecordLayout Record(std::string name, uint64_t size, uint64_t alignment, std::vector<FieldLayout> fields,
                    uint32_t message_id = 0) {
  RecordLayout r;
  r.name = std::move(name);
  r.tag = "struct";
  r.size = size;
  r.alignment = alignment;
  r.fields = std::move(fields);
  r.message_id = message_id;
  return r;
}

// Deposit: the example of handler_model.h. Trade: an enum, an array of
// enums, an array of structs, a multi-dimensional array and an actor id.
HandlerModel Model() {
  HandlerModel m;
  m.records = {
      Record("Deposit", 32, 8,
             {Field("account", FieldKind::kInt32, 0, 4), Field("cents", FieldKind::kInt64, 8, 8),
              RecordField("pos", "Vec2", 16, 8), Field("tag", FieldKind::kChar, 24, 1, {8})},
             1),
      Record("market::Trade", 48, 8,
             {EnumField("side", "market::Side", FieldKind::kInt32, 0),
              EnumField("legs", "market::Side", FieldKind::kInt32, 4, {2}), RecordField("path", "Vec2", 12, 8, {2}),
              Field("ids", FieldKind::kActorId, 28, 4, {2, 1}), Field("stamp", FieldKind::kUInt64, 40, 8)},
             2),
      Record("Vec2", 8, 4, {Field("x", FieldKind::kFloat32, 0, 4), Field("y", FieldKind::kFloat32, 4, 4)}),
  };
  EnumLayout side;
  side.name = "market::Side";
  side.namespaces = {"market"};
  side.scoped = true;
  side.kind = FieldKind::kInt32;
  side.enumerators = {{"kBuy", 0}, {"kSell", 1}, {"kShort", -1}};
  m.enums = {side};
  return m;
}

std::string SignatureOrDie(const HandlerModel& model, const std::string& record) {
  const RecordLayout* r = model.FindRecord(record);
  EXPECT_NE(r, nullptr) << record;
  if (r == nullptr) return "";
  absl::StatusOr<std::string> s = LayoutSignature(model, *r);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *s : "";
}

TEST(LayoutSignatureTest, DescribesEveryFieldInOrder) {
  const HandlerModel m = Model();
  EXPECT_EQ(SignatureOrDie(m, "Deposit"),
            "account:int32@0;cents:int64@8;pos:{x:float32@0;y:float32@4}@16;tag:char[8]@24");
  EXPECT_EQ(SignatureOrDie(m, "market::Trade"),
            "side:enum market::Side:int32{kBuy=0,kSell=1,kShort=-1}@0;"
            "legs:enum market::Side:int32{kBuy=0,kSell=1,kShort=-1}[2]@4;"
            "path:{x:float32@0;y:float32@4}[2]@12;ids:actor_id[2][1]@28;stamp:uint64@40");
}

TEST(LayoutSignatureTest, EveryKindAndEnumValueIsSpelledExactly) {
  HandlerModel m;
  const FieldKind kinds[] = {FieldKind::kBool,   FieldKind::kChar,   FieldKind::kInt8,    FieldKind::kUInt8,
                             FieldKind::kInt16,  FieldKind::kUInt16, FieldKind::kInt32,   FieldKind::kUInt32,
                             FieldKind::kInt64,  FieldKind::kUInt64, FieldKind::kFloat32, FieldKind::kFloat64,
                             FieldKind::kActorId};
  std::vector<FieldLayout> fields;
  uint64_t offset = 0;
  for (FieldKind k : kinds) {
    fields.push_back(Field("f" + std::to_string(fields.size()), k, offset, FieldKindSize(k)));
    offset += 8;
  }
  fields.push_back(EnumField("big", "Big", FieldKind::kUInt64, offset));
  m.records = {Record("All", offset + 8, 8, fields, 1)};
  EnumLayout big;
  big.name = "Big";
  big.kind = FieldKind::kUInt64;
  big.enumerators = {{"kMax", static_cast<int64_t>(~uint64_t{0})}};  // stored wrapped, printed as uint64
  m.enums = {big};
  EXPECT_EQ(SignatureOrDie(m, "All"),
            "f0:bool@0;f1:char@8;f2:int8@16;f3:uint8@24;f4:int16@32;f5:uint16@40;f6:int32@48;f7:uint32@56;"
            "f8:int64@64;f9:uint64@72;f10:float32@80;f11:float64@88;f12:actor_id@96;"
            "big:enum Big:uint64{kMax=18446744073709551615}@104");
}

TEST(LayoutSignatureTest, NamesOfRecordsAndScopingDoNotCount) {
  // Neither changes a byte: a host type may be named differently, and an
  // unscoped enum may stand for a scoped one.
  HandlerModel a = Model();
  HandlerModel b = Model();
  b.records[0].name = "Savings";
  b.enums[0].scoped = false;
  b.records[2].name = "Point";
  b.records[0].fields[2].record = "Point";
  b.records[1].fields[2].record = "Point";
  EXPECT_EQ(SignatureOrDie(a, "Deposit"), SignatureOrDie(b, "Savings"));
  EXPECT_EQ(SignatureOrDie(a, "market::Trade"), SignatureOrDie(b, "market::Trade"));
  // An enumerator's value does count: a stale header would send the old one.
  b.enums[0].enumerators[1].value = 2;
  EXPECT_NE(SignatureOrDie(a, "market::Trade"), SignatureOrDie(b, "market::Trade"));
}

TEST(LayoutSignatureTest, UnknownReferencesAndCyclesAreErrors) {
  HandlerModel m = Model();
  m.records[0].fields[2].record = "Vec3";
  EXPECT_THAT(LayoutSignature(m, m.records[0]),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("field 'pos' of 'Deposit' names unknown record 'Vec3'")));
  m = Model();
  m.records[1].fields[1].enum_name = "market::Bearing";
  EXPECT_THAT(LayoutSignature(m, m.records[1]),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("field 'legs' of 'market::Trade' names unknown enum 'market::Bearing'")));
  // A model built in code has not been through FromJson's cycle check.
  m = Model();
  m.records[2].fields[0] = RecordField("x", "Vec2", 0, 8);
  EXPECT_THAT(LayoutSignature(m, m.records[0]),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("record 'Vec2' nests more than 64 deep")));
}

// --- DiffLayoutSignatures

const char kDeposit[] = "account:int32@0;cents:int64@8;pos:{x:float32@0;y:float32@4}@16;tag:char[8]@24";

std::string HostVsProgram(const std::string& host, const std::string& program) {
  std::optional<LayoutDifference> d = DiffLayoutSignatures(host, program);
  if (!d) return "(equal)";
  return d->Describe("the host type", "the program");
}

TEST(DiffLayoutSignaturesTest, EqualSignaturesHaveNoDifference) {
  EXPECT_FALSE(DiffLayoutSignatures(kDeposit, kDeposit).has_value());
  EXPECT_FALSE(DiffLayoutSignatures("", "").has_value());
}

TEST(DiffLayoutSignaturesTest, AFieldOfAnotherType) {
  const std::string host = "account:int32@0;cents:int32@8;pos:{x:float32@0;y:float32@4}@16;tag:char[8]@24";
  std::optional<LayoutDifference> d = DiffLayoutSignatures(host, kDeposit);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->field(), "cents");
  EXPECT_EQ(d->record, "");
  EXPECT_EQ(d->position, 2u);
  EXPECT_EQ(d->first, "int32 at offset 8");
  EXPECT_EQ(d->second, "int64 at offset 8");
  EXPECT_EQ(d->Describe("the host type", "the program"),
            "field 'cents' is int32 at offset 8 in the host type but int64 at offset 8 in the program");
}

TEST(DiffLayoutSignaturesTest, AFieldAtAnotherOffsetOrWithOtherExtents) {
  EXPECT_EQ(HostVsProgram("account:int32@0;cents:int64@4;pos:{x:float32@0;y:float32@4}@16;tag:char[8]@24", kDeposit),
            "field 'cents' is int64 at offset 4 in the host type but int64 at offset 8 in the program");
  EXPECT_EQ(HostVsProgram("account:int32@0;cents:int64@8;pos:{x:float32@0;y:float32@4}@16;tag:char[16]@24", kDeposit),
            "field 'tag' is char[16] at offset 24 in the host type but char[8] at offset 24 in the program");
}

TEST(DiffLayoutSignaturesTest, ReorderedFieldsAreNamedByPosition) {
  EXPECT_EQ(HostVsProgram("cents:int64@0;account:int32@8;pos:{x:float32@0;y:float32@4}@16;tag:char[8]@24", kDeposit),
            "the 1st field is 'cents' (int64 at offset 0) in the host type but 'account' (int32 at offset 0) in "
            "the program");
  std::optional<LayoutDifference> d = DiffLayoutSignatures("a:int32@0;c:int32@4", "a:int32@0;b:int32@4");
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->position, 2u);
  EXPECT_EQ(d->first_name, "c");
  EXPECT_EQ(d->second_name, "b");
}

TEST(DiffLayoutSignaturesTest, MissingAndExtraFields) {
  EXPECT_EQ(HostVsProgram("account:int32@0;cents:int64@8;pos:{x:float32@0;y:float32@4}@16", kDeposit),
            "field 'tag' is missing in the host type but is char[8] at offset 24 in the program");
  EXPECT_EQ(HostVsProgram(std::string(kDeposit) + ";extra:bool@32", kDeposit),
            "field 'extra' is bool at offset 32 in the host type but missing in the program");
  EXPECT_EQ(HostVsProgram("", "a:int32@0"),
            "field 'a' is missing in the host type but is int32 at offset 0 in the program");
}

TEST(DiffLayoutSignaturesTest, InsideNestedStructsWithOffsetsFromTheStartOfTheMessage) {
  // pos is at 16 in both: the field that differs is inside it.
  EXPECT_EQ(HostVsProgram("account:int32@0;cents:int64@8;pos:{x:float32@0;y:float64@8}@16;tag:char[8]@24", kDeposit),
            "field 'pos.y' is float64 at offset 24 in the host type but float32 at offset 20 in the program");
  EXPECT_EQ(HostVsProgram("p:{q:{a:int8@0;b:int8@1}@4}[3]@8", "p:{q:{a:int8@0;c:int8@1}@4}[3]@8"),
            "the 2nd field of 'p[0].q' is 'b' (int8 at offset 13) in the host type but 'c' (int8 at offset 13) in "
            "the program");
  // Where the struct itself moved, it is reported whole.
  EXPECT_EQ(HostVsProgram("pos:{x:float32@0}@4", "pos:{x:float32@0}@8"),
            "field 'pos' is struct {x:float32@0} at offset 4 in the host type but struct {x:float32@0} at offset 8 "
            "in the program");
}

TEST(DiffLayoutSignaturesTest, EnumsAreDescribedWithTheirValues) {
  EXPECT_EQ(HostVsProgram("side:enum market::Side:int32{kBuy=0,kSell=1}@0",
                          "side:enum market::Side:int32{kBuy=0,kSell=2}@0"),
            "field 'side' is enum market::Side (int32: kBuy=0, kSell=1) at offset 0 in the host type but enum "
            "market::Side (int32: kBuy=0, kSell=2) at offset 0 in the program");
  EXPECT_EQ(HostVsProgram("legs:int32[2]@4", "legs:enum Side:int32{}[2]@4"),
            "field 'legs' is int32[2] at offset 4 in the host type but enum Side[2] (int32) at offset 4 in the "
            "program");
}

TEST(DiffLayoutSignaturesTest, WhatIsNotASignatureDiffersAsAWhole) {
  for (const std::string host : {"garbage", "a:int32", "a@0", "a:int32@x", "a:{b:int8@0@0", "a:int32[x]@0", ":int32@0",
                                  "a:int32@0;", "a:int32@00"}) {
    SCOPED_TRACE(host);
    std::optional<LayoutDifference> d = DiffLayoutSignatures(host, "a:int32@0");
    ASSERT_TRUE(d.has_value());
    EXPECT_EQ(d->position, 0u);
    EXPECT_EQ(d->field(), "");
    EXPECT_EQ(d->first, host);
    EXPECT_EQ(d->Describe("the host type", "the program"),
              "the host type has the layout \"" + host + "\" but the program has \"a:int32@0\"");
  }
}

TEST(DiffLayoutSignaturesTest, OrdinalsReadAsEnglish) {
  // n fields, the n-th renamed.
  auto nth = [](size_t n) {
    std::string a, b;
    for (size_t i = 1; i <= n; ++i) {
      const std::string sep = i == 1 ? "" : ";";
      a += sep + "f" + std::to_string(i) + ":int8@" + std::to_string(i);
      b += sep + (i == n ? "g" : "f") + std::to_string(i) + ":int8@" + std::to_string(i);
    }
    return HostVsProgram(a, b);
  };
  EXPECT_THAT(nth(1), StartsWith("the 1st field is 'f1'"));
  EXPECT_THAT(nth(2), StartsWith("the 2nd field is 'f2'"));
  EXPECT_THAT(nth(3), StartsWith("the 3rd field is 'f3'"));
  EXPECT_THAT(nth(4), StartsWith("the 4th field is 'f4'"));
  EXPECT_THAT(nth(11), StartsWith("the 11th field is 'f11'"));
  EXPECT_THAT(nth(12), StartsWith("the 12th field is 'f12'"));
  EXPECT_THAT(nth(13), StartsWith("the 13th field is 'f13'"));
  EXPECT_THAT(nth(21), StartsWith("the 21st field is 'f21'"));
  EXPECT_THAT(nth(22), StartsWith("the 22nd field is 'f22'"));
  EXPECT_THAT(nth(23), StartsWith("the 23rd field is 'f23'"));
  EXPECT_THAT(nth(112), StartsWith("the 112th field is 'f112'"));
}

// --- CheckHostLayout, the runtime's check

TEST(CheckHostLayoutTest, TheProgramsOwnSignatureIsAccepted) {
  const HandlerModel m = Model();
  EXPECT_TRUE(CheckHostLayout(m, m.records[0], kDeposit).ok());
  EXPECT_TRUE(CheckHostLayout(m, m.records[1], SignatureOrDie(m, "market::Trade")).ok());
}

TEST(CheckHostLayoutTest, AStaleLayoutIsRefusedNamingTheTypeTheFieldAndTheFix) {
  HandlerModel m = Model();
  // The header was generated when kSell was 1; the program now has 2.
  const std::string stale = SignatureOrDie(m, "market::Trade");
  m.enums[0].enumerators[1].value = 2;
  EXPECT_THAT(CheckHostLayout(m, m.records[1], stale),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "host type for 'market::Trade' does not match the program's layout of it: field 'side' is "
                       "enum market::Side (int32: kBuy=0, kSell=1, kShort=-1) at offset 0 in the host type but enum "
                       "market::Side (int32: kBuy=0, kSell=2, kShort=-1) at offset 0 in the program. The host type's "
                       "layout is from a header generated for another version of the program (or edited since); "
                       "regenerate the header with `actorc header`"));
  // Reordered fields of one size: the size and alignment checks cannot see it.
  EXPECT_THAT(CheckHostLayout(m, m.records[2], "y:float32@0;x:float32@4"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("host type for 'Vec2' does not match the program's layout of it: the 1st field "
                                 "is 'y' (float32 at offset 0) in the host type but 'x' (float32 at offset 0) in the "
                                 "program")));
}

TEST(CheckHostLayoutTest, AModelThatCannotBeDescribedIsAnError) {
  HandlerModel m = Model();
  m.records[0].fields[2].record = "Vec3";
  EXPECT_THAT(CheckHostLayout(m, m.records[0], kDeposit),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("names unknown record 'Vec3'")));
}

}  // namespace
}  // namespace rk::jit
