// Copyright 2026 The RingKernel Authors.
//
// message_codec.h: JSON ⇄ message bytes, driven by the layouts the front-end
// extracted (so `actorc run` can drive any program without host code).
//
// Encoding rules:
//   * a message is a JSON object with exactly its fields; a missing or an
//     unknown field is an error naming it (with its path, e.g. "pos.x");
//   * integers must fit their field's type; floats accept any JSON number;
//     bool fields take true/false;
//   * arrays are JSON arrays of exactly the declared extent (nested for
//     multi-dimensional arrays); a char array also takes a string that fits
//     (NUL-padded);
//   * nested structs are JSON objects;
//   * rk::ActorId fields are actor names, resolved by the caller; decoding
//     writes names back (or null for an id the caller doesn't know, and
//     "host" for rk::host()).
// Padding bytes are zero in encoded messages.
//
// Example:
//   auto bytes = rk::jit::EncodeMessage(model, *model.FindRecord("Deposit"),
//                                       nlohmann::json::parse(R"({"account":1,"cents":500})"), resolver);
#ifndef RINGKERNEL_JIT_MESSAGE_CODEC_H_
#define RINGKERNEL_JIT_MESSAGE_CODEC_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "jit/handler_model.h"
#include "nlohmann/json.hpp"

namespace rk::jit {

// Maps an actor name to its id value (rk::ActorId::value); NotFound for an
// unknown name. "host" maps to the host's id by convention of the caller.
using ActorResolver = std::function<absl::StatusOr<uint32_t>(std::string_view name)>;
// Maps an id value back to a name, nullopt if unknown.
using ActorNamer = std::function<std::optional<std::string>(uint32_t id)>;

// Encodes `value` as `record`'s bytes (exactly record.size bytes).
// InvalidArgument with the field path and the problem on bad input.
absl::StatusOr<std::string> EncodeMessage(const HandlerModel& model, const RecordLayout& record,
                                          const nlohmann::json& value, const ActorResolver& resolve);

// Decodes `bytes` (record.size bytes) to JSON. InvalidArgument if the size is
// wrong.
absl::StatusOr<nlohmann::json> DecodeMessage(const HandlerModel& model, const RecordLayout& record,
                                             std::string_view bytes, const ActorNamer& name_of);

}  // namespace rk::jit

#endif  // RINGKERNEL_JIT_MESSAGE_CODEC_H_
