// Copyright 2026 The RingKernel Authors.
//
// message_codec.h: JSON ⇄ message bytes, driven by the layouts the front-end
// extracted (so `actorc run` can drive any program without host code).
//
// Encoding rules:
//   * a message is a JSON object with exactly its fields; a missing or an
//     unknown field is an error naming it (with its path, e.g. "pos.x");
//   * integers must fit their field's type (integral floats such as 2.0 are
//     accepted); floats accept any JSON number, and the strings "nan",
//     "inf" and "-inf"; bool fields take true/false only;
//   * arrays are JSON arrays of exactly the declared extent (nested for
//     multi-dimensional arrays); a char array (the innermost dimension of a
//     char field) also takes a string of at most its extent bytes, NUL-padded
//     (a string of exactly the extent is stored without a NUL); a lone char
//     takes a string of at most one byte or an integer in -128..255;
//   * nested structs are JSON objects;
//   * rk::ActorId fields take an actor name, resolved by the caller's
//     ActorResolver, except "host", which the codec maps to rk::host()
//     itself; null is rk::ActorId{} (no actor) and {"actor_id": N} a raw id.
// Padding bytes are zero in encoded messages.
//
// Decoding gives the same shapes back, with these choices:
//   * an ActorId decodes as its name (ActorNamer), "host" for rk::host(),
//     null for no actor, and {"actor_id": N} for an id the namer doesn't
//     know — so an unknown id is still visible and can be encoded again;
//   * a char array decodes as a string up to its first NUL when those bytes
//     are UTF-8 text (no control characters but tab, CR and LF) and every
//     byte after the NUL is zero; otherwise as an array of the byte values
//     (0..255), so no byte is lost; a lone char decodes like char[1] (its
//     value as one integer when it is not text);
//   * non-finite floats decode as "nan", "inf" or "-inf";
//   * any non-zero bool byte decodes as true.
// Errors read "<Message>: <path>: <problem>", e.g.
// "Move: pos.x: 300 does not fit in int8 (-128..127)".
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
// unknown name. Never asked about "host", which the codec resolves itself.
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
