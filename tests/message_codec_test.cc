// Copyright 2026 The RingKernel Authors.
//
// The JSON message codec. The layouts are those of host structs declared
// here (offsetof/sizeof), so an encoded message can be checked byte for byte
// against what the compiler itself would store.
#include "jit/message_codec.h"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ringkernel/device/types.h"
#include "tests/test_support.h"

namespace rk::jit {
namespace {

using ::rk::testing::StatusIs;
using ::testing::HasSubstr;
using json = nlohmann::json;

struct Vec2 {
  float x;
  float y;
};

struct AllKinds {
  bool b;
  char c;
  int8_t i8;
  uint8_t u8;
  int16_t i16;
  uint16_t u16;
  int32_t i32;
  uint32_t u32;
  int64_t i64;
  uint64_t u64;
  float f32;  // then 4 bytes of padding
  double f64;
  uint32_t who;  // rk::ActorId
  Vec2 pos;      // then 4 bytes of padding
};
static_assert(offsetof(AllKinds, f64) == 40 && sizeof(AllKinds) == 64, "padding this test relies on");

struct Arrays {
  int16_t grid[2][3];
  char name[8];
  char names[2][4];
  Vec2 path[2];
  uint32_t peers[2];  // rk::ActorId[2]
  uint8_t raw[3];     // then 1 byte of padding
};
static_assert(sizeof(Arrays) == 56, "padding this test relies on");

struct Outer {
  int8_t tag;  // then 3 bytes of padding
  Vec2 at;
  struct Inner {
    Vec2 corners[2];
    uint32_t owner;
  } box;
};

#define RK_FIELD(T, m, kind, elem, ...) \
  FieldLayout { #m, "", kind, "", __VA_ARGS__, offsetof(T, m), sizeof(T::m), elem }

FieldLayout RecordField(std::string name, std::string record, uint64_t offset, uint64_t elem,
                        std::vector<uint64_t> dims = {}) {
  FieldLayout f{std::move(name), record, FieldKind::kRecord, record, std::move(dims), offset, elem, elem};
  for (uint64_t d : f.dims) f.size *= d;
  return f;
}

RecordLayout Record(std::string name, uint64_t size, uint64_t alignment, uint32_t id, std::vector<FieldLayout> fields) {
  RecordLayout r;
  r.name = std::move(name);
  r.tag = "struct";
  r.size = size;
  r.alignment = alignment;
  r.message_id = id;
  r.fields = std::move(fields);
  return r;
}

HandlerModel TestModel() {
  HandlerModel m;
  m.records.push_back(Record("AllKinds", sizeof(AllKinds), alignof(AllKinds), 1,
                             {
                                 RK_FIELD(AllKinds, b, FieldKind::kBool, 1, {}),
                                 RK_FIELD(AllKinds, c, FieldKind::kChar, 1, {}),
                                 RK_FIELD(AllKinds, i8, FieldKind::kInt8, 1, {}),
                                 RK_FIELD(AllKinds, u8, FieldKind::kUInt8, 1, {}),
                                 RK_FIELD(AllKinds, i16, FieldKind::kInt16, 2, {}),
                                 RK_FIELD(AllKinds, u16, FieldKind::kUInt16, 2, {}),
                                 RK_FIELD(AllKinds, i32, FieldKind::kInt32, 4, {}),
                                 RK_FIELD(AllKinds, u32, FieldKind::kUInt32, 4, {}),
                                 RK_FIELD(AllKinds, i64, FieldKind::kInt64, 8, {}),
                                 RK_FIELD(AllKinds, u64, FieldKind::kUInt64, 8, {}),
                                 RK_FIELD(AllKinds, f32, FieldKind::kFloat32, 4, {}),
                                 RK_FIELD(AllKinds, f64, FieldKind::kFloat64, 8, {}),
                                 RK_FIELD(AllKinds, who, FieldKind::kActorId, 4, {}),
                                 RecordField("pos", "Vec2", offsetof(AllKinds, pos), sizeof(Vec2)),
                             }));
  m.records.push_back(Record("Arrays", sizeof(Arrays), alignof(Arrays), 2,
                             {
                                 RK_FIELD(Arrays, grid, FieldKind::kInt16, 2, {2, 3}),
                                 RK_FIELD(Arrays, name, FieldKind::kChar, 1, {8}),
                                 RK_FIELD(Arrays, names, FieldKind::kChar, 1, {2, 4}),
                                 RecordField("path", "Vec2", offsetof(Arrays, path), sizeof(Vec2), {2}),
                                 RK_FIELD(Arrays, peers, FieldKind::kActorId, 4, {2}),
                                 RK_FIELD(Arrays, raw, FieldKind::kUInt8, 1, {3}),
                             }));
  m.records.push_back(Record("Outer", sizeof(Outer), alignof(Outer), 3,
                             {
                                 RK_FIELD(Outer, tag, FieldKind::kInt8, 1, {}),
                                 RecordField("at", "Vec2", offsetof(Outer, at), sizeof(Vec2)),
                                 RecordField("box", "Outer::Inner", offsetof(Outer, box), sizeof(Outer::Inner)),
                             }));
  m.records.push_back(Record("Outer::Inner", sizeof(Outer::Inner), alignof(Outer::Inner), 0,
                             {
                                 RecordField("corners", "Vec2", offsetof(Outer::Inner, corners), sizeof(Vec2), {2}),
                                 RK_FIELD(Outer::Inner, owner, FieldKind::kActorId, 4, {}),
                             }));
  m.records.push_back(Record("Vec2", sizeof(Vec2), alignof(Vec2), 0,
                             {RK_FIELD(Vec2, x, FieldKind::kFloat32, 4, {}), RK_FIELD(Vec2, y, FieldKind::kFloat32, 4, {})}));
  return m;
}

absl::StatusOr<uint32_t> Resolve(std::string_view name) {
  static const std::map<std::string, uint32_t, std::less<>> kActors = {{"bank", 3}, {"audit", 12}};
  auto it = kActors.find(name);
  if (it == kActors.end()) return absl::NotFoundError(absl::StrCat("no actor named '", std::string(name), "'"));
  return it->second;
}

std::optional<std::string> NameOf(uint32_t id) {
  if (id == 3) return "bank";
  if (id == 12) return "audit";
  return std::nullopt;
}

template <typename T>
std::string BytesOf(const T& value) {
  return std::string(reinterpret_cast<const char*>(&value), sizeof(T));
}

class CodecTest : public ::testing::Test {
 protected:
  absl::StatusOr<std::string> Encode(const std::string& record, const json& value) {
    return EncodeMessage(model_, *model_.FindRecord(record), value, Resolve);
  }
  absl::StatusOr<json> Decode(const std::string& record, std::string_view bytes) {
    return DecodeMessage(model_, *model_.FindRecord(record), bytes, NameOf);
  }
  json AllKindsJson() {
    return json{{"b", true},        {"c", "A"},           {"i8", -5},          {"u8", 200},
                {"i16", -30000},    {"u16", 65000},       {"i32", -2000000000}, {"u32", 4000000000u},
                {"i64", -9000000000000000000LL},             {"u64", 18000000000000000000ull},
                {"f32", 1.5},       {"f64", -2.25e100},   {"who", "bank"},
                {"pos", {{"x", 0.5}, {"y", -8.0}}}};
  }
  HandlerModel model_ = TestModel();
};

TEST_F(CodecTest, EveryKindEncodesToTheCompilersLayout) {
  absl::StatusOr<std::string> bytes = Encode("AllKinds", AllKindsJson());
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  AllKinds expected;
  std::memset(&expected, 0, sizeof(expected));  // padding included
  expected.b = true;
  expected.c = 'A';
  expected.i8 = -5;
  expected.u8 = 200;
  expected.i16 = -30000;
  expected.u16 = 65000;
  expected.i32 = -2000000000;
  expected.u32 = 4000000000u;
  expected.i64 = -9000000000000000000LL;
  expected.u64 = 18000000000000000000ull;
  expected.f32 = 1.5f;
  expected.f64 = -2.25e100;
  expected.who = 3;
  expected.pos = {0.5f, -8.0f};
  EXPECT_EQ(*bytes, BytesOf(expected));
  // Spot checks at the layout's offsets, little-endian.
  EXPECT_EQ((*bytes)[offsetof(AllKinds, i32)], '\x00');  // -2000000000 = 0x88CA6C00
  EXPECT_EQ((*bytes)[offsetof(AllKinds, i32) + 3], '\x88');
  EXPECT_EQ((*bytes)[offsetof(AllKinds, u8)], '\xc8');
  EXPECT_EQ((*bytes)[offsetof(AllKinds, who)], '\x03');
  for (size_t pad = 36; pad < 40; ++pad) EXPECT_EQ((*bytes)[pad], '\0') << "padding at " << pad;
  for (size_t pad = 60; pad < 64; ++pad) EXPECT_EQ((*bytes)[pad], '\0') << "padding at " << pad;

  absl::StatusOr<json> back = Decode("AllKinds", *bytes);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, AllKindsJson());
}

TEST_F(CodecTest, IntegerLimitsRoundTrip) {
  json v = AllKindsJson();
  v["i8"] = -128;
  v["u8"] = 255;
  v["i16"] = -32768;
  v["u16"] = 65535;
  v["i32"] = std::numeric_limits<int32_t>::min();
  v["u32"] = std::numeric_limits<uint32_t>::max();
  v["i64"] = std::numeric_limits<int64_t>::min();
  v["u64"] = std::numeric_limits<uint64_t>::max();
  absl::StatusOr<std::string> bytes = Encode("AllKinds", v);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  AllKinds got;
  std::memcpy(&got, bytes->data(), sizeof(got));
  EXPECT_EQ(got.i8, -128);
  EXPECT_EQ(got.u8, 255);
  EXPECT_EQ(got.i16, -32768);
  EXPECT_EQ(got.u16, 65535);
  EXPECT_EQ(got.i32, std::numeric_limits<int32_t>::min());
  EXPECT_EQ(got.u32, std::numeric_limits<uint32_t>::max());
  EXPECT_EQ(got.i64, std::numeric_limits<int64_t>::min());
  EXPECT_EQ(got.u64, std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(Decode("AllKinds", *bytes).value(), v);
  // From text, as a script would give them.
  const json parsed = json::parse(v.dump());
  EXPECT_EQ(Encode("AllKinds", parsed).value(), *bytes);
}

TEST_F(CodecTest, IntegralFloatsAreAcceptedForIntegers) {
  json v = AllKindsJson();
  v["i32"] = 2.0;
  v["u64"] = 1e19;
  v["i16"] = -32768.0;
  absl::StatusOr<std::string> bytes = Encode("AllKinds", v);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  AllKinds got;
  std::memcpy(&got, bytes->data(), sizeof(got));
  EXPECT_EQ(got.i32, 2);
  EXPECT_EQ(got.u64, 10000000000000000000ull);
  EXPECT_EQ(got.i16, -32768);
}

TEST_F(CodecTest, OutOfRangeIntegersAreRejectedForEveryWidth) {
  struct Case {
    const char* field;
    json value;
    const char* message;
  };
  const Case cases[] = {
      {"i8", 128, "AllKinds: i8: 128 does not fit in int8 (-128..127)"},
      {"i8", -129, "AllKinds: i8: -129 does not fit in int8 (-128..127)"},
      {"u8", 256, "AllKinds: u8: 256 does not fit in uint8 (0..255)"},
      {"u8", -1, "AllKinds: u8: -1 does not fit in uint8 (0..255)"},
      {"i16", 32768, "AllKinds: i16: 32768 does not fit in int16 (-32768..32767)"},
      {"i16", -32769, "AllKinds: i16: -32769 does not fit in int16"},
      {"u16", 65536, "AllKinds: u16: 65536 does not fit in uint16 (0..65535)"},
      {"u16", -1, "AllKinds: u16: -1 does not fit in uint16"},
      {"i32", 2147483648LL, "AllKinds: i32: 2147483648 does not fit in int32 (-2147483648..2147483647)"},
      {"i32", -2147483649LL, "AllKinds: i32: -2147483649 does not fit in int32"},
      {"u32", 4294967296LL, "AllKinds: u32: 4294967296 does not fit in uint32 (0..4294967295)"},
      {"u32", -1, "AllKinds: u32: -1 does not fit in uint32"},
      {"i64", 9223372036854775808ull,
       "AllKinds: i64: 9223372036854775808 does not fit in int64 (-9223372036854775808..9223372036854775807)"},
      {"i64", -9.3e18, "AllKinds: i64: -9.3e+18 does not fit in int64"},
      {"u64", -1, "AllKinds: u64: -1 does not fit in uint64 (0..18446744073709551615)"},
      {"u64", 1.8446744073709552e19, "AllKinds: u64: 1.8446744073709552e+19 does not fit in uint64"},
      {"c", 256, "AllKinds: c: 256 does not fit in char (-128..255)"},
      {"c", -129, "AllKinds: c: -129 does not fit in char"},
      {"i32", 1.5, "AllKinds: i32: 1.5 is not an integer (int32)"},
      {"f32", 1e39, "AllKinds: f32: 1e+39 does not fit in float32"},
  };
  for (const Case& c : cases) {
    json v = AllKindsJson();
    v[c.field] = c.value;
    EXPECT_THAT(Encode("AllKinds", v), StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(c.message)))
        << c.field << " = " << c.value.dump();
  }
  // Parsed from text too (nlohmann then stores non-negative values unsigned).
  json v = json::parse(R"({"i8": 300})");
  json all = AllKindsJson();
  all["i8"] = v["i8"];
  EXPECT_THAT(Encode("AllKinds", all),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("AllKinds: i8: 300 does not fit in int8")));
}

TEST_F(CodecTest, WrongJsonTypesAreRejected) {
  struct Case {
    const char* field;
    json value;
    const char* message;
  };
  const Case cases[] = {
      {"i32", "5", "AllKinds: i32: expected an integer (int32), got \"5\""},
      {"u64", true, "AllKinds: u64: expected an integer (uint64), got true"},
      {"b", 1, "AllKinds: b: expected true or false, got 1"},
      {"b", "true", "AllKinds: b: expected true or false, got \"true\""},
      {"f64", "1.0", "AllKinds: f64: expected a number (or \"nan\", \"inf\", \"-inf\"), got \"1.0\""},
      {"f32", nullptr, "AllKinds: f32: expected a number"},
      {"who", 3, "AllKinds: who: expected an actor name, null or {\"actor_id\": N}, got 3"},
      {"who", json{{"actor_id", -1}}, "AllKinds: who: expected {\"actor_id\": <32-bit id>}, got {\"actor_id\":-1}"},
      {"pos", json::array({1, 2}), "AllKinds: pos: expected a JSON object with the fields of Vec2 (x, y), got array"},
      {"c", "AB", "AllKinds: c: the string is 2 bytes, a char holds 1"},
  };
  for (const Case& c : cases) {
    json v = AllKindsJson();
    v[c.field] = c.value;
    EXPECT_THAT(Encode("AllKinds", v), StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(c.message)))
        << c.field << " = " << c.value.dump();
  }
  json v = AllKindsJson();
  v["pos"]["y"] = "down";
  EXPECT_THAT(Encode("AllKinds", v),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("AllKinds: pos.y: expected a number")));
}

TEST_F(CodecTest, MissingAndUnknownFieldsAreNamed) {
  json v = AllKindsJson();
  v.erase("u16");
  EXPECT_THAT(Encode("AllKinds", v),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("AllKinds: u16: missing field (AllKinds needs b, c, i8, u8, i16, u16, i32")));
  v = AllKindsJson();
  v["zz"] = 1;
  EXPECT_THAT(Encode("AllKinds", v),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("AllKinds: zz: unknown field (AllKinds has b, c,")));
  v = AllKindsJson();
  v["pos"].erase("x");
  EXPECT_THAT(Encode("AllKinds", v),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("AllKinds: pos.x: missing field (Vec2 needs x, y)")));
  v = AllKindsJson();
  v["pos"]["z"] = 0;
  EXPECT_THAT(Encode("AllKinds", v),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("AllKinds: pos.z: unknown field (Vec2 has x, y)")));
}

TEST_F(CodecTest, NonObjectMessageIsRejected) {
  for (const json& bad : {json::array({1}), json(5), json("AllKinds"), json(nullptr)}) {
    EXPECT_THAT(Encode("AllKinds", bad),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         HasSubstr("AllKinds: expected a JSON object with the fields of AllKinds (b, c, i8")))
        << bad.dump();
  }
}

json ArraysJson() {
  return json{{"grid", {{1, -2, 3}, {4, 5, -32768}}},
              {"name", "bank"},
              {"names", {"ab", "wxyz"}},
              {"path", {{{"x", 1.0}, {"y", 2.0}}, {{"x", 3.0}, {"y", 4.0}}}},
              {"peers", {"audit", "host"}},
              {"raw", {0, 127, 255}}};
}

TEST_F(CodecTest, ArraysEncodeRowMajorWithPaddedStrings) {
  absl::StatusOr<std::string> bytes = Encode("Arrays", ArraysJson());
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  Arrays expected;
  std::memset(&expected, 0, sizeof(expected));
  const int16_t grid[2][3] = {{1, -2, 3}, {4, 5, -32768}};
  std::memcpy(expected.grid, grid, sizeof(grid));
  std::memcpy(expected.name, "bank", 4);
  std::memcpy(expected.names[0], "ab", 2);
  std::memcpy(expected.names[1], "wxyz", 4);  // exactly the extent: no NUL
  expected.path[0] = {1, 2};
  expected.path[1] = {3, 4};
  expected.peers[0] = 12;
  expected.peers[1] = kHostActorValue;
  expected.raw[0] = 0;
  expected.raw[1] = 127;
  expected.raw[2] = 255;
  EXPECT_EQ(*bytes, BytesOf(expected));
  EXPECT_EQ((*bytes)[offsetof(Arrays, grid) + 2 * 5], '\x00');  // grid[1][2] = 0x8000, low byte first
  EXPECT_EQ((*bytes)[offsetof(Arrays, grid) + 2 * 5 + 1], '\x80');
  EXPECT_EQ((*bytes)[55], '\0');  // trailing padding

  absl::StatusOr<json> back = Decode("Arrays", *bytes);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, ArraysJson());
}

TEST_F(CodecTest, CharArraysAlsoTakeIntegers) {
  json v = ArraysJson();
  v["name"] = {104, 105, 0, 0, 0, 0, 0, 0};
  absl::StatusOr<std::string> bytes = Encode("Arrays", v);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  EXPECT_EQ(bytes->substr(offsetof(Arrays, name), 8), std::string("hi\0\0\0\0\0\0", 8));
  EXPECT_EQ(Decode("Arrays", *bytes).value()["name"], "hi");
}

TEST_F(CodecTest, CharArraysThatAreNotTextDecodeAsBytes) {
  Arrays a;
  std::memset(&a, 0, sizeof(a));
  std::memcpy(a.name, "ok\0junk", 7);  // bytes after the NUL: not a plain string
  a.names[0][0] = '\x01';              // a control character
  a.names[1][0] = '\xc3';              // half of a UTF-8 sequence
  a.peers[0] = kNoActorValue;
  a.peers[1] = kNoActorValue;
  absl::StatusOr<json> j = Decode("Arrays", BytesOf(a));
  ASSERT_TRUE(j.ok()) << j.status();
  EXPECT_EQ((*j)["name"], json::array({'o', 'k', 0, 'j', 'u', 'n', 'k', 0}));
  EXPECT_EQ((*j)["names"], json::array({json::array({1, 0, 0, 0}), json::array({0xc3, 0, 0, 0})}));
  EXPECT_EQ((*j)["peers"], json::array({nullptr, nullptr}));
  // And they encode back to the same bytes.
  EXPECT_EQ(Encode("Arrays", *j).value(), BytesOf(a));
  // UTF-8 text stays a string.
  json v = ArraysJson();
  v["name"] = "caf\xc3\xa9";
  absl::StatusOr<std::string> bytes = Encode("Arrays", v);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  EXPECT_EQ(Decode("Arrays", *bytes).value()["name"], "caf\xc3\xa9");
}

TEST_F(CodecTest, ArrayShapeErrors) {
  json v = ArraysJson();
  v["grid"][1] = {4, 5};
  EXPECT_THAT(Encode("Arrays", v),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("Arrays: grid[1]: expected 3 elements, got 2")));
  v = ArraysJson();
  v["grid"] = {1, 2, 3, 4, 5, 6};
  EXPECT_THAT(Encode("Arrays", v),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("Arrays: grid: expected 2 elements, got 6")));
  v = ArraysJson();
  v["grid"] = {{1, 2, 3}, 4};
  EXPECT_THAT(Encode("Arrays", v), StatusIs(absl::StatusCode::kInvalidArgument,
                                            HasSubstr("Arrays: grid[1]: expected an array of 3 elements, got number")));
  v = ArraysJson();
  v["name"] = "too long!";
  EXPECT_THAT(Encode("Arrays", v),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("Arrays: name: the string is 9 bytes, more than the 8 of char[8]")));
  v = ArraysJson();
  v["names"][1] = "abcde";
  EXPECT_THAT(Encode("Arrays", v),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("Arrays: names[1]: the string is 5 bytes")));
  v = ArraysJson();
  v["name"] = 5;
  EXPECT_THAT(Encode("Arrays", v),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("Arrays: name: expected an array of 8 chars or a string, got number")));
  v = ArraysJson();
  v["path"][1]["x"] = "far";
  EXPECT_THAT(Encode("Arrays", v),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("Arrays: path[1].x: expected a number")));
  v = ArraysJson();
  v["raw"][2] = 256;
  EXPECT_THAT(Encode("Arrays", v),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("Arrays: raw[2]: 256 does not fit in uint8")));
}

TEST_F(CodecTest, ActorIds) {
  json v = ArraysJson();
  v["peers"] = {"bank", {{"actor_id", 7}}};
  absl::StatusOr<std::string> bytes = Encode("Arrays", v);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  Arrays a;
  std::memcpy(&a, bytes->data(), sizeof(a));
  EXPECT_EQ(a.peers[0], 3u);
  EXPECT_EQ(a.peers[1], 7u);
  // 7 has no name: it decodes as a raw id, which encodes back to 7.
  EXPECT_EQ(Decode("Arrays", *bytes).value()["peers"], json::array({"bank", {{"actor_id", 7}}}));
  // Without a namer every ordinary id is raw; the host and "no actor" keep
  // their spellings.
  a.peers[0] = kHostActorValue;
  a.peers[1] = 3;
  absl::StatusOr<json> unnamed = DecodeMessage(model_, *model_.FindRecord("Arrays"), BytesOf(a), nullptr);
  ASSERT_TRUE(unnamed.ok()) << unnamed.status();
  EXPECT_EQ((*unnamed)["peers"], json::array({"host", {{"actor_id", 3}}}));

  v["peers"] = {"bank", "nobody"};
  EXPECT_THAT(Encode("Arrays", v),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("Arrays: peers[1]: unknown actor 'nobody' (no actor named 'nobody')")));
  // "host" needs no resolver; other names do.
  v["peers"] = {"host", nullptr};
  bytes = EncodeMessage(model_, *model_.FindRecord("Arrays"), v, nullptr);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  std::memcpy(&a, bytes->data(), sizeof(a));
  EXPECT_EQ(a.peers[0], kHostActorValue);
  EXPECT_EQ(a.peers[1], kNoActorValue);
  v["peers"] = {"host", "bank"};
  EXPECT_THAT(EncodeMessage(model_, *model_.FindRecord("Arrays"), v, nullptr),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("Arrays: peers[1]: cannot resolve actor 'bank': no actor names are known")));
}

TEST_F(CodecTest, NestedRecords) {
  const json v = {{"tag", -1},
                  {"at", {{"x", 1.0}, {"y", 2.0}}},
                  {"box", {{"corners", {{{"x", 3.0}, {"y", 4.0}}, {{"x", 5.0}, {"y", 6.0}}}}, {"owner", "audit"}}}};
  absl::StatusOr<std::string> bytes = Encode("Outer", v);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  Outer expected;
  std::memset(&expected, 0, sizeof(expected));
  expected.tag = -1;
  expected.at = {1, 2};
  expected.box.corners[0] = {3, 4};
  expected.box.corners[1] = {5, 6};
  expected.box.owner = 12;
  EXPECT_EQ(*bytes, BytesOf(expected));
  EXPECT_EQ(bytes->substr(1, 3), std::string(3, '\0'));  // padding after tag
  EXPECT_EQ(Decode("Outer", *bytes).value(), v);
  json bad = v;
  bad["box"]["corners"][1]["y"] = "up";
  EXPECT_THAT(Encode("Outer", bad), StatusIs(absl::StatusCode::kInvalidArgument,
                                             HasSubstr("Outer: box.corners[1].y: expected a number")));
  bad = v;
  bad["box"]["owner"] = "ghost";
  EXPECT_THAT(Encode("Outer", bad), StatusIs(absl::StatusCode::kInvalidArgument,
                                             HasSubstr("Outer: box.owner: unknown actor 'ghost'")));
}

TEST_F(CodecTest, NonFiniteFloatsAndLooseBools) {
  json v = AllKindsJson();
  v["f32"] = "inf";
  v["f64"] = "nan";
  absl::StatusOr<std::string> bytes = Encode("AllKinds", v);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  AllKinds got;
  std::memcpy(&got, bytes->data(), sizeof(got));
  EXPECT_TRUE(std::isinf(got.f32) && got.f32 > 0);
  EXPECT_TRUE(std::isnan(got.f64));
  json back = Decode("AllKinds", *bytes).value();
  EXPECT_EQ(back["f32"], "inf");
  EXPECT_EQ(back["f64"], "nan");
  // The largest float and a value that rounds to it are accepted.
  v["f32"] = 3.4028235e38;
  EXPECT_TRUE(Encode("AllKinds", v).ok());
  // Any non-zero byte reads as true; an integer 0 in a char decodes as "".
  std::string raw = *bytes;
  raw[offsetof(AllKinds, b)] = 7;
  raw[offsetof(AllKinds, c)] = 0;
  back = Decode("AllKinds", raw).value();
  EXPECT_EQ(back["b"], true);
  EXPECT_EQ(back["c"], "");
  raw[offsetof(AllKinds, c)] = '\x05';
  EXPECT_EQ(Decode("AllKinds", raw).value()["c"], 5);
}

TEST_F(CodecTest, DecodeNeedsExactlyTheRecordsSize) {
  const std::string bytes = Encode("AllKinds", AllKindsJson()).value();
  EXPECT_THAT(Decode("AllKinds", bytes.substr(0, 63)),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("AllKinds: expected 64 bytes, got 63")));
  EXPECT_THAT(Decode("AllKinds", bytes + "x"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("AllKinds: expected 64 bytes, got 65")));
}

TEST_F(CodecTest, InconsistentHandBuiltLayoutsAreErrorsNotCrashes) {
  HandlerModel m = TestModel();
  RecordLayout broken = *m.FindRecord("Vec2");
  broken.name = "Broken";
  broken.fields[1].offset = 6;  // 6 + 4 > 8
  EXPECT_THAT(EncodeMessage(m, broken, json{{"x", 1}, {"y", 2}}, Resolve),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("the layout of Broken is inconsistent: field 'y' ends past the end of the record")));
  EXPECT_THAT(DecodeMessage(m, broken, std::string(8, '\0'), NameOf),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("field 'y' ends past the end")));
  RecordLayout missing = *m.FindRecord("Outer");
  missing.fields[1].record = "Nowhere";
  EXPECT_THAT(DecodeMessage(m, missing, std::string(missing.size, '\0'), NameOf),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("names the unknown record 'Nowhere'")));
  // A record that contains itself (sizes made to agree).
  RecordLayout& vec2 = m.records[4];
  vec2.fields[0] = RecordField("x", "Vec2", 0, 8);
  EXPECT_THAT(EncodeMessage(m, vec2, json{{"x", {{"x", 1}}}, {"y", 2}}, Resolve),
              StatusIs(absl::StatusCode::kInvalidArgument, ::testing::_));
  EXPECT_THAT(DecodeMessage(m, vec2, std::string(8, '\0'), NameOf),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("records nest too deeply")));
  // Larger than the program allows.
  m.max_payload = 32;
  EXPECT_THAT(EncodeMessage(m, *m.FindRecord("AllKinds"), AllKindsJson(), Resolve),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("AllKinds is 64 bytes, more than the program's max payload (32)")));
}

}  // namespace
}  // namespace rk::jit
