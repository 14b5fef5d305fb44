// Copyright 2026 The RingKernel Authors.
//
// HandlerModel ⇄ JSON: the round trip is exact, and FromJson rejects each
// kind of inconsistency with the path of the offending value.
#include <functional>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/handler_model.h"
#include "jit/message_codec.h"
#include "tests/layout_builders.h"
#include "tests/test_support.h"

namespace rk::jit {
namespace {

using ::rk::testing::StatusIs;
using ::testing::HasSubstr;
using json = nlohmann::json;

using ::rk::testing::EnumField;
using ::rk::testing::Field;

// A model with nested records, arrays of records, multi-dimensional arrays,
// char arrays, actor ids, enums (scoped and not, negative values, a uint64
// value above INT64_MAX, an array of enums), thread and block handlers and
// routes.
HandlerModel RichModel() {
  HandlerModel m;
  m.sources = {{"walker.cu", "#include \"geo.h\"\nstruct RK_ACTOR Walker {};\n", true},
               {"geo.h", "struct Vec2 { float x, y; };\n", false}};

  RecordLayout move;
  move.name = "geo::Move";
  move.tag = "struct";
  move.namespaces = {"geo"};
  move.size = 48;
  move.alignment = 8;
  move.message_id = 1;
  move.location = {"walker.cu", 3, 8};
  move.fields = {
      Field("pos", "geo::Vec2", FieldKind::kRecord, 0, 8, {}, "geo::Vec2"),
      Field("path", "geo::Vec2[2]", FieldKind::kRecord, 8, 8, {2}, "geo::Vec2"),
      Field("target", "rk::ActorId", FieldKind::kActorId, 24, 4),
      Field("grid", "short[2][3]", FieldKind::kInt16, 28, 2, {2, 3}),
      Field("stamp", "unsigned long long", FieldKind::kUInt64, 40, 8),
  };

  RecordLayout ping;
  ping.name = "Ping";
  ping.tag = "class";
  ping.size = 40;
  ping.alignment = 8;
  ping.message_id = 2;
  ping.location = {"walker.cu", 9, 7};
  ping.fields = {Field("from", "rk::ActorId", FieldKind::kActorId, 0, 4),
                 Field("label", "char[16]", FieldKind::kChar, 4, 1, {16}),
                 EnumField("turns", "geo::Turn", FieldKind::kInt8, 20, {2}),
                 EnumField("level", "Level", FieldKind::kUInt64, 24),
                 EnumField("last", "geo::Turn", FieldKind::kInt8, 32)};

  RecordLayout vec2;
  vec2.name = "geo::Vec2";
  vec2.tag = "struct";
  vec2.namespaces = {"geo"};
  vec2.size = 8;
  vec2.alignment = 4;
  vec2.location = {"geo.h", 1, 8};
  vec2.fields = {Field("x", "float", FieldKind::kFloat32, 0, 4), Field("y", "float", FieldKind::kFloat32, 4, 4)};
  m.records = {move, ping, vec2};

  EnumLayout level;  // unscoped, at global scope
  level.name = "Level";
  level.scoped = false;
  level.kind = FieldKind::kUInt64;
  level.location = {"walker.cu", 7, 6};
  level.enumerators = {{"kLow", 0}, {"kTop", static_cast<int64_t>(~uint64_t{0})}};
  EnumLayout turn;
  turn.name = "geo::Turn";
  turn.namespaces = {"geo"};
  turn.scoped = true;
  turn.kind = FieldKind::kInt8;
  turn.location = {"geo.h", 2, 12};
  turn.enumerators = {{"kLeft", -1}, {"kStraight", 0}, {"kRight", 1}};
  m.enums = {level, turn};  // sorted by name: 'L' < 'g'

  ActorInfo walker;
  walker.name = "geo::Walker";
  walker.namespaces = {"geo"};
  walker.type_id = 0;
  walker.state_size = 64;
  walker.state_alignment = 8;
  walker.location = {"walker.cu", 2, 17};
  walker.handlers = {{"on", "geo::Move", 1, HandlerKind::kThread, {"walker.cu", 4, 21}},
                     {"ping", "Ping", 2, HandlerKind::kBlock, {"walker.cu", 5, 21}}};
  ActorInfo pinger;
  pinger.name = "Pinger";
  pinger.type_id = 1;
  pinger.state_size = 4;
  pinger.state_alignment = 4;
  pinger.zero_initialized = false;
  pinger.location = {"walker.cu", 12, 17};
  pinger.handlers = {{"on", "Ping", 2, HandlerKind::kThread, {"walker.cu", 13, 21}}};
  m.actors = {walker, pinger};

  m.routes = {{"audit", 0, {{"walker.cu", 4, 40}, {"walker.cu", 13, 9}}}, {"log", 1, {}}};
  m.max_payload = 1024;
  return m;
}

TEST(HandlerModelJsonTest, RoundTripIsExact) {
  const HandlerModel model = RichModel();
  const json j = model.ToJson();
  absl::StatusOr<HandlerModel> back = HandlerModel::FromJson(j);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, model);
  // Through text as well, as a manifest stores it.
  absl::StatusOr<HandlerModel> from_text = HandlerModel::FromJson(json::parse(j.dump()));
  ASSERT_TRUE(from_text.ok()) << from_text.status();
  EXPECT_EQ(*from_text, model);
  EXPECT_EQ(from_text->ToJson(), j);
}

TEST(HandlerModelJsonTest, JsonShape) {
  const json j = RichModel().ToJson();
  EXPECT_EQ(j["max_payload"], 1024);
  EXPECT_EQ(j["sources"][1]["fragment"], false);
  EXPECT_EQ(j["records"][0]["fields"][0]["kind"], "record");
  EXPECT_EQ(j["records"][0]["fields"][0]["record"], "geo::Vec2");
  EXPECT_FALSE(j["records"][0]["fields"][2].contains("record"));  // only record fields name one
  EXPECT_EQ(j["records"][0]["fields"][3]["dims"], json::array({2, 3}));
  EXPECT_EQ(j["records"][0]["fields"][2]["kind"], "actor_id");
  EXPECT_EQ(j["records"][0]["location"], json({{"file", "walker.cu"}, {"line", 3}, {"column", 8}}));
  EXPECT_EQ(j["actors"][0]["handlers"][1]["kind"], "block");
  EXPECT_EQ(j["actors"][1]["zero_initialized"], false);
  EXPECT_EQ(j["routes"][0]["uses"].size(), 2u);
  // Enums: the field names its enum and keeps the underlying kind; values
  // are written as the underlying type holds them.
  EXPECT_EQ(j["records"][1]["fields"][2]["enum"], "geo::Turn");
  EXPECT_EQ(j["records"][1]["fields"][2]["kind"], "int8");
  EXPECT_FALSE(j["records"][1]["fields"][1].contains("enum"));  // only enum fields name one
  EXPECT_EQ(j["enums"][0]["name"], "Level");
  EXPECT_EQ(j["enums"][0]["scoped"], false);
  EXPECT_EQ(j["enums"][0]["kind"], "uint64");
  EXPECT_EQ(j["enums"][0]["enumerators"][1], json({{"name", "kTop"}, {"value", ~uint64_t{0}}}));
  EXPECT_TRUE(j["enums"][0]["enumerators"][1]["value"].is_number_unsigned());
  EXPECT_EQ(j["enums"][1]["namespaces"], json::array({"geo"}));
  EXPECT_EQ(j["enums"][1]["enumerators"][0], json({{"name", "kLeft"}, {"value", -1}}));
}

TEST(HandlerModelJsonTest, ManifestsWrittenBeforeEnumsStillRead) {
  // Then enum fields were plain integers: no "enums", no field "enum".
  json j = RichModel().ToJson();
  j.erase("enums");
  for (json& f : j["records"][1]["fields"]) f.erase("enum");
  absl::StatusOr<HandlerModel> back = HandlerModel::FromJson(j);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_TRUE(back->enums.empty());
  const FieldLayout& turns = back->FindRecord("Ping")->fields[2];
  EXPECT_EQ(turns.kind, FieldKind::kInt8);
  EXPECT_EQ(turns.enum_name, "");
  EXPECT_EQ(turns.dims, (std::vector<uint64_t>{2}));
}

TEST(HandlerModelJsonTest, EmptyModelRoundTrips) {
  HandlerModel empty;
  absl::StatusOr<HandlerModel> back = HandlerModel::FromJson(empty.ToJson());
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, empty);
}

// Applies `corrupt` to the rich model's JSON and expects FromJson to fail
// with InvalidArgument and a message containing `expected`.
void ExpectRejected(const std::function<void(json&)>& corrupt, const std::string& expected) {
  json j = RichModel().ToJson();
  corrupt(j);
  EXPECT_THAT(HandlerModel::FromJson(j), StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(expected)));
}

TEST(HandlerModelJsonTest, RejectsFieldPastTheEndOfItsRecord) {
  ExpectRejected([](json& j) { j["records"][0]["fields"][4]["offset"] = 44; },
                 "model.records[0].fields[4].offset: field 'stamp' at offset 44 with size 8 ends past the end of "
                 "geo::Move (48 bytes)");
}

TEST(HandlerModelJsonTest, RejectsMessageIdsThatAreNotDense) {
  ExpectRejected([](json& j) { j["records"][1]["message_id"] = 5; },
                 "model.records[1].message_id: message_id 5 is out of range: ids must be dense, 1..2 for 2 entries");
}

TEST(HandlerModelJsonTest, RejectsDuplicateMessageIds) {
  // Two messages with id 1: both in range, so only uniqueness catches it.
  ExpectRejected(
      [](json& j) {
        j["records"][1]["message_id"] = 1;
        j["records"][2]["message_id"] = 2;
        j["actors"] = json::array();
      },
      "model.records[1].message_id: message_id 1 is used twice (also at model.records[0].message_id)");
}

TEST(HandlerModelJsonTest, RejectsActorTypeIdsThatAreNotDense) {
  ExpectRejected([](json& j) { j["actors"][1]["type_id"] = 0; },
                 "model.actors[1].type_id: type_id 0 is used twice (also at model.actors[0].type_id)");
  ExpectRejected([](json& j) { j["actors"][0]["type_id"] = 2; },
                 "model.actors[0].type_id: type_id 2 is out of range: ids must be dense, 0..1 for 2 entries");
}

TEST(HandlerModelJsonTest, RejectsRouteIdsThatAreNotDense) {
  ExpectRejected([](json& j) { j["routes"][1]["id"] = 3; },
                 "model.routes[1].id: id 3 is out of range: ids must be dense, 0..1 for 2 entries");
}

TEST(HandlerModelJsonTest, RejectsHandlerForUnknownMessage) {
  ExpectRejected([](json& j) { j["actors"][0]["handlers"][0]["message_id"] = 3; },
                 "model.actors[0].handlers[0].message_id: names no message of the model: 3");
  // The nested-only record has id 0, which is never a message.
  ExpectRejected([](json& j) { j["actors"][0]["handlers"][0]["message_id"] = 0; },
                 "model.actors[0].handlers[0].message_id: names no message of the model: 0");
}

TEST(HandlerModelJsonTest, RejectsHandlerWhoseMessageNameDoesNotMatchItsId) {
  ExpectRejected([](json& j) { j["actors"][0]["handlers"][1]["message"] = "geo::Move"; },
                 "model.actors[0].handlers[1].message: 'geo::Move' does not match message 2, which is 'Ping'");
}

TEST(HandlerModelJsonTest, RejectsTwoHandlersForOneMessage) {
  ExpectRejected(
      [](json& j) {
        j["actors"][0]["handlers"][1]["message"] = "geo::Move";
        j["actors"][0]["handlers"][1]["message_id"] = 1;
      },
      "model.actors[0].handlers[1].message_id: actor geo::Walker has two handlers for geo::Move");
}

TEST(HandlerModelJsonTest, RejectsRecordFieldNamingNoRecord) {
  ExpectRejected([](json& j) { j["records"][0]["fields"][1]["record"] = "geo::Vec3"; },
                 "model.records[0].fields[1].record: names no record of the model: 'geo::Vec3'");
}

TEST(HandlerModelJsonTest, RejectsRecordThatContainsItself) {
  // A contains B contains A (sizes consistent, so only the cycle is wrong).
  ExpectRejected(
      [](json& j) {
        auto record = [](const char* name, const char* member, const char* member_type) {
          return json{{"name", name},
                      {"tag", "struct"},
                      {"namespaces", json::array()},
                      {"size", 8},
                      {"alignment", 4},
                      {"message_id", 0},
                      {"location", {{"file", "a.cu"}, {"line", 1}, {"column", 1}}},
                      {"fields", json::array({json{{"name", member},
                                                   {"type", member_type},
                                                   {"kind", "record"},
                                                   {"record", member_type},
                                                   {"dims", json::array()},
                                                   {"offset", 0},
                                                   {"size", 8},
                                                   {"element_size", 8}}})}};
        };
        j["records"].push_back(record("A", "b", "B"));
        j["records"].push_back(record("B", "a", "A"));
      },
      "model.records[4].fields[0].record: record B contains itself through 'A'");
  // A direct self-reference.
  ExpectRejected(
      [](json& j) {
        json& y = j["records"][2]["fields"][1];
        y["kind"] = "record";
        y["record"] = "geo::Vec2";
        y["element_size"] = 8;
        y["size"] = 8;
        y["offset"] = 0;
      },
      "model.records[2].fields[1].record: record geo::Vec2 contains itself through 'geo::Vec2'");
}

TEST(HandlerModelJsonTest, RejectsSizeThatIsNotElementSizeTimesExtents) {
  ExpectRejected([](json& j) { j["records"][0]["fields"][3]["size"] = 10; },
                 "model.records[0].fields[3].size: 10 is not element_size (2) times the array extents (12 bytes)");
}

TEST(HandlerModelJsonTest, RejectsElementSizeThatDoesNotMatchTheKind) {
  ExpectRejected(
      [](json& j) {
        j["records"][0]["fields"][3]["element_size"] = 4;
        j["records"][0]["fields"][3]["size"] = 24;
      },
      "model.records[0].fields[3].element_size: 4 does not match kind 'int16' (2 bytes)");
  ExpectRejected([](json& j) { j["records"][0]["fields"][0]["element_size"] = 16; },
                 "model.records[0].fields[0].size: 8 is not element_size (16)");
}

TEST(HandlerModelJsonTest, RejectsNestedRecordSizeMismatch) {
  ExpectRejected(
      [](json& j) {
        j["records"][0]["fields"][1]["element_size"] = 4;
        j["records"][0]["fields"][1]["size"] = 8;
      },
      "model.records[0].fields[1].element_size: 4 does not match the size of geo::Vec2 (8 bytes)");
}

TEST(HandlerModelJsonTest, RejectsUnknownFieldKind) {
  ExpectRejected([](json& j) { j["records"][0]["fields"][4]["kind"] = "int128"; },
                 "model.records[0].fields[4].kind: unknown field kind 'int128'");
}

TEST(HandlerModelJsonTest, RejectsRecordNameOnNonRecordField) {
  ExpectRejected([](json& j) { j["records"][0]["fields"][4]["record"] = "geo::Vec2"; },
                 "model.records[0].fields[4].record: only fields of kind 'record' name a record");
}

TEST(HandlerModelJsonTest, RejectsBadAlignments) {
  ExpectRejected([](json& j) { j["records"][0]["alignment"] = 6; },
                 "model.records[0].alignment: 6 is not a power of two");
  ExpectRejected(
      [](json& j) {
        j["records"][0]["alignment"] = 32;
        j["records"][0]["size"] = 64;
      },
      "model.records[0].alignment: 32 is larger than the 16 bytes a message may ask for");
  ExpectRejected([](json& j) { j["actors"][0]["state_alignment"] = 0; },
                 "model.actors[0].state_alignment: 0 is not a power of two");
}

TEST(HandlerModelJsonTest, RejectsMessageLargerThanMaxPayload) {
  ExpectRejected([](json& j) { j["max_payload"] = 40; },
                 "model.records[0].size: message geo::Move is 48 bytes, larger than max_payload (40)");
}

TEST(HandlerModelJsonTest, RejectsWrongTypes) {
  ExpectRejected([](json& j) { j["records"][0]["size"] = "48"; },
                 "model.records[0].size: expected a non-negative integer, got string");
  ExpectRejected([](json& j) { j["records"][0]["size"] = 48.0; },
                 "model.records[0].size: expected a non-negative integer, got number");
  ExpectRejected([](json& j) { j["actors"][1]["zero_initialized"] = 0; },
                 "model.actors[1].zero_initialized: expected true or false, got number");
  ExpectRejected([](json& j) { j["records"][1]["fields"] = json::object(); },
                 "model.records[1].fields: expected an array, got object");
  ExpectRejected([](json& j) { j["sources"][0] = "walker.cu"; }, "model.sources[0]: expected an object, got string");
  ExpectRejected([](json& j) { j["routes"][0]["uses"][1]["line"] = -4; },
                 "model.routes[0].uses[1].line: must not be negative, got -4");
  ExpectRejected([](json& j) { j["records"][0]["namespaces"][0] = 7; },
                 "model.records[0].namespaces[0]: expected a string, got number");
  ExpectRejected([](json& j) { j["actors"][0]["type_id"] = 4294967296; },
                 "model.actors[0].type_id: 4294967296 is larger than the limit 4294967295");
  EXPECT_THAT(HandlerModel::FromJson(json::array()),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("model: expected an object, got array")));
}

TEST(HandlerModelJsonTest, RejectsMissingKeys) {
  ExpectRejected([](json& j) { j["actors"][0].erase("zero_initialized"); },
                 "model.actors[0].zero_initialized: missing");
  ExpectRejected([](json& j) { j["records"][0]["fields"][2].erase("offset"); },
                 "model.records[0].fields[2].offset: missing");
  ExpectRejected([](json& j) { j.erase("routes"); }, "model.routes: missing");
}

TEST(HandlerModelJsonTest, RejectsDuplicatesAndBadEnums) {
  ExpectRejected([](json& j) { j["records"][1]["name"] = "geo::Move"; },
                 "model.records[1].name: duplicate record 'geo::Move'");
  ExpectRejected([](json& j) { j["records"][0]["fields"][1]["name"] = "pos"; },
                 "model.records[0].fields[1].name: duplicate field 'pos'");
  ExpectRejected([](json& j) { j["actors"][1]["name"] = "geo::Walker"; },
                 "model.actors[1].name: duplicate actor 'geo::Walker'");
  ExpectRejected([](json& j) { j["routes"][1]["name"] = "audit"; }, "model.routes[1].name: duplicate route 'audit'");
  ExpectRejected([](json& j) { j["sources"][1]["name"] = "walker.cu"; },
                 "model.sources[1].name: duplicate source 'walker.cu'");
  ExpectRejected([](json& j) { j["actors"][0]["handlers"][0]["kind"] = "warp"; },
                 "model.actors[0].handlers[0].kind: expected \"thread\" or \"block\", got \"warp\"");
  ExpectRejected([](json& j) { j["records"][0]["tag"] = "union"; },
                 "model.records[0].tag: expected \"struct\" or \"class\", got \"union\"");
  ExpectRejected([](json& j) { j["records"][0]["fields"][3]["dims"][1] = 0; },
                 "model.records[0].fields[3].dims[1]: array extents must be at least 1");
  ExpectRejected([](json& j) { j["max_payload"] = 0; }, "model.max_payload: must be at least 1");
}

TEST(HandlerModelJsonTest, RejectsInconsistentEnums) {
  ExpectRejected([](json& j) { j["records"][1]["fields"][2]["enum"] = "geo::Bearing"; },
                 "model.records[1].fields[2].enum: names no enum of the model: 'geo::Bearing'");
  ExpectRejected([](json& j) { j["enums"].erase(1); },
                 "model.records[1].fields[2].enum: names no enum of the model: 'geo::Turn'");
  ExpectRejected(
      [](json& j) {
        j["records"][1]["fields"][4]["kind"] = "uint8";
      },
      "model.records[1].fields[4].kind: 'uint8' does not match the underlying type of geo::Turn ('int8')");
  ExpectRejected([](json& j) { j["records"][0]["fields"][0]["enum"] = "geo::Turn"; },
                 "model.records[0].fields[0].enum: a field of kind 'record' cannot be an enum");
  ExpectRejected([](json& j) { j["enums"][1]["kind"] = "float32"; },
                 "model.enums[1].kind: 'float32' cannot be the underlying type of an enum");
  ExpectRejected([](json& j) { j["enums"][1]["enumerators"][0]["value"] = -129; },
                 "model.enums[1].enumerators[0].value: -129 does not fit the enum's underlying type int8 (-128..127)");
  ExpectRejected([](json& j) { j["enums"][1]["enumerators"][2]["value"] = 128; },
                 "model.enums[1].enumerators[2].value: 128 does not fit the enum's underlying type int8 (-128..127)");
  ExpectRejected(
      [](json& j) { j["enums"][0]["enumerators"][0]["value"] = -1; },
      "model.enums[0].enumerators[0].value: -1 does not fit the enum's underlying type uint64 "
      "(0..18446744073709551615)");
  ExpectRejected([](json& j) { j["enums"][0]["enumerators"][0]["value"] = 0.5; },
                 "model.enums[0].enumerators[0].value: expected an integer, got number");
  ExpectRejected([](json& j) { j["enums"][1]["enumerators"][2]["name"] = "kLeft"; },
                 "model.enums[1].enumerators[2].name: duplicate enumerator 'kLeft'");
  ExpectRejected([](json& j) { j["enums"][1]["name"] = "Level"; }, "model.enums[1].name: duplicate enum 'Level'");
  ExpectRejected([](json& j) { j["enums"][1]["name"] = "Ping"; },
                 "model.enums[1].name: 'Ping' is both a record and an enum");
  ExpectRejected([](json& j) { std::swap(j["enums"][0], j["enums"][1]); },
                 "model.enums[1].name: enums must be sorted by name: 'Level' comes after 'geo::Turn'");
  ExpectRejected([](json& j) { j["enums"][0].erase("scoped"); }, "model.enums[0].scoped: missing");
  ExpectRejected([](json& j) { j["enums"] = json::object(); }, "model.enums: expected an array, got object");
}

TEST(HandlerModelJsonTest, RejectsOverflowingArraySize) {
  ExpectRejected(
      [](json& j) {
        j["records"][0]["fields"][3]["dims"] = json::array({uint64_t{1} << 40, uint64_t{1} << 40});
      },
      "model.records[0].fields[3].dims: the array's size overflows 64 bits");
}


void CollectPointers(const json& j, const json::json_pointer& at, std::vector<json::json_pointer>* out) {
  out->push_back(at);
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) CollectPointers(it.value(), at / it.key(), out);
  } else if (j.is_array()) {
    for (size_t i = 0; i < j.size(); ++i) CollectPointers(j[i], at / i, out);
  }
}

// Every value of the manifest replaced, one at a time, by each of a set of
// awkward values: FromJson either refuses the result with InvalidArgument or
// returns a model that the codec can walk (every message decodes from zero
// bytes) — a corrupted manifest never yields a model that breaks later.
TEST(HandlerModelJsonTest, MutatedManifestsAreRefusedOrSafe) {
  const json original = RichModel().ToJson();
  std::vector<json::json_pointer> pointers;
  CollectPointers(original, json::json_pointer(), &pointers);
  const std::vector<json> replacements = {json(0),       json(1),         json(3),          json(-1),
                                          json(7),       json(uint64_t{1} << 32),           json(~uint64_t{0}),
                                          json(0.5),     json(""),        json("geo::Vec2"), json("Ping"),
                                          json(nullptr), json::array(),   json::object(),   json(true)};
  size_t accepted = 0, refused = 0;
  for (const json::json_pointer& ptr : pointers) {
    if (ptr.empty()) continue;
    for (const json& replacement : replacements) {
      json j = original;
      j[ptr] = replacement;
      absl::StatusOr<HandlerModel> model = HandlerModel::FromJson(j);
      if (!model.ok()) {
        ASSERT_EQ(model.status().code(), absl::StatusCode::kInvalidArgument) << ptr.to_string() << ": "
                                                                              << model.status();
        ASSERT_EQ(model.status().message().substr(0, 5), "model") << model.status();
        ++refused;
        continue;
      }
      ++accepted;
      for (const RecordLayout& r : model->records) {
        if (!r.is_message()) continue;
        absl::StatusOr<json> decoded = DecodeMessage(*model, r, std::string(r.size, '\0'), nullptr);
        ASSERT_TRUE(decoded.ok()) << ptr.to_string() << " = " << replacement.dump() << ": " << decoded.status();
      }
    }
  }
  // Most single changes break some rule; names, locations and contents don't.
  EXPECT_GT(refused, accepted);
  EXPECT_GT(accepted, 0u);
}

}  // namespace
}  // namespace rk::jit
