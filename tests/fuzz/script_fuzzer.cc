// Copyright 2026 The RingKernel Authors.
//
// `actorc run`'s script parser (tools/script.h) on arbitrary text, against
// the fixed program of model.cu. Properties beyond "no crash, no hang, no
// sanitizer report":
//   * every error is InvalidArgument "fuzz.jsonl:LINE: problem", LINE a line
//     of the input, and a value out of range is named as the input wrote it;
//   * in a script that parses, every message a send or ask carries encodes
//     against its type, and its bytes decode and encode to the same bytes.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "jit/message_codec.h"
#include "ringkernel/device/types.h"
#include "tests/fuzz/fuzz_support.h"
#include "tools/script.h"

namespace {

using rk::fuzz::FuzzModel;

void CheckError(const absl::Status& status, const std::string& text) {
  FUZZ_CHECK(status.code() == absl::StatusCode::kInvalidArgument, "code %d: %s", static_cast<int>(status.code()),
             std::string(status.message()).c_str());
  const std::string message(status.message());
  FUZZ_CHECK(absl::StartsWith(message, "fuzz.jsonl:"), "%s", message.c_str());
  const size_t colon = message.find(':', 11);
  FUZZ_CHECK(colon != std::string::npos, "%s", message.c_str());
  int line = 0;
  FUZZ_CHECK(absl::SimpleAtoi(message.substr(11, colon - 11), &line), "%s", message.c_str());
  size_t lines = 1;
  for (char c : text) lines += c == '\n';
  FUZZ_CHECK(line >= 1 && static_cast<size_t>(line) <= lines, "line %d of %zu: %s", line, lines, message.c_str());
  // "'sleep_ms' is 18446744073709551615; it must be in [0, 600000]": the
  // value named is the one written (it once wrapped to int64 first).
  const size_t is = message.find("' is ");
  const size_t range = message.find("; it must be in [");
  if (is != std::string::npos && range != std::string::npos && is < range) {
    const std::string value = message.substr(is + 5, range - is - 5);
    FUZZ_CHECK(text.find(value) != std::string::npos, "%s names %s, which the input does not hold", message.c_str(),
               value.c_str());
  }
}

void CheckMessages(const rk::tools::Script& script) {
  const rk::jit::HandlerModel& model = FuzzModel();
  std::vector<std::string> actors;
  for (const rk::tools::ScriptCommand& c : script.commands) {
    if (c.kind == rk::tools::ScriptCommand::Kind::kSpawn) {
      FUZZ_CHECK(model.FindActor(c.type) != nullptr, "spawned unknown type %s", c.type.c_str());
      actors.push_back(c.actor);
    }
    if (c.kind != rk::tools::ScriptCommand::Kind::kSend && c.kind != rk::tools::ScriptCommand::Kind::kAsk) continue;
    const rk::jit::RecordLayout* record = model.FindRecord(c.type);
    FUZZ_CHECK(record != nullptr && record->is_message(), "line %d: %s", c.line, c.type.c_str());
    // The ids ParseScript's own check gives the actors named so far.
    auto resolve = [&](std::string_view name) -> absl::StatusOr<uint32_t> {
      for (size_t i = 0; i < actors.size(); ++i) {
        if (actors[i] == name) return static_cast<uint32_t>(i);
      }
      return absl::NotFoundError(absl::StrCat("unknown actor '", std::string(name), "'"));
    };
    auto name_of = [&](uint32_t id) -> std::optional<std::string> {
      if (id < actors.size()) return actors[id];
      return std::nullopt;
    };
    absl::StatusOr<std::string> bytes = rk::jit::EncodeMessage(model, *record, c.msg, resolve);
    FUZZ_CHECK(bytes.ok(), "line %d: a checked message does not encode: %s", c.line,
               std::string(bytes.status().message()).c_str());
    absl::StatusOr<nlohmann::json> decoded = rk::jit::DecodeMessage(model, *record, *bytes, name_of);
    FUZZ_CHECK(decoded.ok(), "line %d: %s", c.line, std::string(decoded.status().message()).c_str());
    absl::StatusOr<std::string> again = rk::jit::EncodeMessage(model, *record, *decoded, resolve);
    FUZZ_CHECK(again.ok() && *again == *bytes, "line %d: %s does not encode to the same bytes", c.line,
               decoded->dump().c_str());
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  FuzzModel();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<rk::tools::Script> script = rk::tools::ParseScript(text, "fuzz.jsonl", FuzzModel());
  if (!script.ok()) {
    CheckError(script.status(), text);
    return 0;
  }
  CheckMessages(*script);
  return 0;
}
