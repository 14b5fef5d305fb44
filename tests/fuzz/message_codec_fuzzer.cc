// Copyright 2026 The RingKernel Authors.
//
// The JSON message codec (jit/message_codec.h) on the records of model.cu.
// The first byte picks a record (its low bits) and a direction (its high
// bit); the rest is the input:
//   * JSON text to encode: an error is InvalidArgument "<Record>: ...";
//     encoded bytes are exactly the record's size, and they decode and
//     encode to the same bytes;
//   * message bytes to decode: a wrong size is InvalidArgument; bytes of the
//     right size always decode, the JSON always encodes again, and that
//     decodes to the same JSON (bool bytes and NaN payloads are the only
//     bytes that may change on the way).
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "jit/message_codec.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

using nlohmann::json;
using rk::fuzz::FuzzModel;

absl::StatusOr<uint32_t> Resolve(std::string_view name) {
  static const std::map<std::string, uint32_t, std::less<>> kActors = {{"book", 3}, {"auditor", 12}};
  auto it = kActors.find(name);
  if (it == kActors.end()) return absl::NotFoundError(absl::StrCat("no actor named '", std::string(name), "'"));
  return it->second;
}

std::optional<std::string> NameOf(uint32_t id) {
  if (id == 3) return "book";
  if (id == 12) return "auditor";
  return std::nullopt;
}

std::string Message(const absl::Status& s) { return std::string(s.message()); }

void EncodeJson(const rk::jit::RecordLayout& record, std::string_view text) {
  const rk::jit::HandlerModel& model = FuzzModel();
  const json value = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded()) return;
  absl::StatusOr<std::string> bytes = rk::jit::EncodeMessage(model, record, value, Resolve);
  if (!bytes.ok()) {
    FUZZ_CHECK(bytes.status().code() == absl::StatusCode::kInvalidArgument, "%s", Message(bytes.status()).c_str());
    FUZZ_CHECK(absl::StartsWith(bytes.status().message(), record.name + ": "), "%s", Message(bytes.status()).c_str());
    return;
  }
  FUZZ_CHECK(bytes->size() == record.size, "%zu bytes for %s", bytes->size(), record.name.c_str());
  absl::StatusOr<json> decoded = rk::jit::DecodeMessage(model, record, *bytes, NameOf);
  FUZZ_CHECK(decoded.ok(), "%s", Message(decoded.status()).c_str());
  absl::StatusOr<std::string> again = rk::jit::EncodeMessage(model, record, *decoded, Resolve);
  FUZZ_CHECK(again.ok(), "%s: %s", decoded->dump().c_str(), Message(again.status()).c_str());
  FUZZ_CHECK(*again == *bytes, "%s encodes to other bytes than %s", decoded->dump().c_str(), value.dump().c_str());
}

void DecodeBytes(const rk::jit::RecordLayout& record, std::string_view input) {
  const rk::jit::HandlerModel& model = FuzzModel();
  absl::StatusOr<json> decoded = rk::jit::DecodeMessage(model, record, input, NameOf);
  if (input.size() != record.size) {
    FUZZ_CHECK(!decoded.ok() && decoded.status().code() == absl::StatusCode::kInvalidArgument,
               "%zu bytes for the %llu of %s", input.size(), static_cast<unsigned long long>(record.size),
               record.name.c_str());
  }
  std::string bytes(input.substr(0, record.size));
  bytes.resize(record.size, '\0');
  decoded = rk::jit::DecodeMessage(model, record, bytes, NameOf);
  FUZZ_CHECK(decoded.ok(), "%s", Message(decoded.status()).c_str());
  absl::StatusOr<std::string> encoded = rk::jit::EncodeMessage(model, record, *decoded, Resolve);
  FUZZ_CHECK(encoded.ok(), "%s: %s", decoded->dump().c_str(), Message(encoded.status()).c_str());
  absl::StatusOr<json> again = rk::jit::DecodeMessage(model, record, *encoded, NameOf);
  FUZZ_CHECK(again.ok() && *again == *decoded, "%s decodes differently once encoded", decoded->dump().c_str());
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  FuzzModel();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const rk::jit::HandlerModel& model = FuzzModel();
  const rk::jit::RecordLayout& record = model.records[(data[0] & 0x7f) % model.records.size()];
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  if ((data[0] & 0x80) == 0) {
    EncodeJson(record, rest);
  } else {
    DecodeBytes(record, rest);
  }
  return 0;
}
