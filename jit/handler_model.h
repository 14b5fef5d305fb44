// Copyright 2026 The RingKernel Authors.
//
// handler_model.h: what the clang front-end learns from handler fragments,
// and the diagnostics it reports. The first stage of the JIT pipeline:
//
//   Sources → HandlerModel → GeneratedUnit → CompiledImage → LoadedModule → System
//
// A HandlerModel is a plain value: codegen turns it into CUDA source, the
// package manifest stores it as JSON, `actorc header` prints it as a host
// header, and the message codec uses its layouts to turn JSON into message
// bytes and back.
//
// Ids are dense and deterministic: message ids 1..N follow the messages'
// qualified names in sorted order, actor type ids 0..A-1 and route ids 0..R-1
// likewise, so reordering code in a fragment never renumbers anything.
#ifndef RINGKERNEL_JIT_HANDLER_MODEL_H_
#define RINGKERNEL_JIT_HANDLER_MODEL_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace rk::jit {

// A position in a user's file; line and column count from 1.
struct SourceLocation {
  std::string file;
  uint32_t line = 0;
  uint32_t column = 0;

  // "file:line:col", or "file" / "" when unknown.
  std::string ToString() const;
  friend bool operator==(const SourceLocation&, const SourceLocation&) = default;
};

enum class DiagnosticSeverity { kNote, kWarning, kError };

// One message for the user, pointing into their file.
struct Diagnostic {
  DiagnosticSeverity severity = DiagnosticSeverity::kError;
  SourceLocation location;
  std::string message;

  // "bank.cu:12:7: error: message" (the location part is left out when
  // unknown), the format compilers use so that editors can jump to it.
  std::string ToString() const;
};

// The diagnostics, one per line.
std::string FormatDiagnostics(const std::vector<Diagnostic>& diagnostics);
bool HasErrors(const std::vector<Diagnostic>& diagnostics);

// A file of handler code: a fragment the user named, or a header a fragment
// includes.
struct SourceFile {
  std::string name;      // shown in diagnostics; the name NVRTC knows it by
  std::string contents;
  bool fragment = true;  // false: a header included by a fragment

  friend bool operator==(const SourceFile&, const SourceFile&) = default;
};

// The element type of a message field.
enum class FieldKind {
  kBool,
  kChar,     // char: JSON strings for char arrays
  kInt8,
  kUInt8,
  kInt16,
  kUInt16,
  kInt32,
  kUInt32,
  kInt64,
  kUInt64,
  kFloat32,
  kFloat64,
  kActorId,  // rk::ActorId: JSON writes actor names
  kRecord,   // a nested struct, described by its own RecordLayout
};

std::string_view FieldKindName(FieldKind kind);              // "int32", "actor_id", ...
absl::StatusOr<FieldKind> FieldKindFromName(std::string_view name);
uint64_t FieldKindSize(FieldKind kind);                      // 0 for kRecord

struct FieldLayout {
  std::string name;
  std::string type;            // as clang spells it: "long long", "int[4]", "Inner"
  FieldKind kind = FieldKind::kInt32;
  std::string record;          // kind == kRecord: the nested RecordLayout's name
  std::vector<uint64_t> dims;  // array extents, outermost first; empty for one element
  uint64_t offset = 0;         // bytes from the start of the enclosing record
  uint64_t size = 0;           // bytes of the whole field
  uint64_t element_size = 0;   // bytes of one element

  friend bool operator==(const FieldLayout&, const FieldLayout&) = default;
};

// A message type or a struct nested in one, with its exact device layout.
struct RecordLayout {
  std::string name;                     // qualified: "Deposit", "bank::Deposit"
  std::string tag;                      // "struct" or "class"
  std::vector<std::string> namespaces;  // enclosing namespaces, outermost first
  uint64_t size = 0;
  uint64_t alignment = 0;
  std::vector<FieldLayout> fields;      // in declaration order
  SourceLocation location;              // of the type's name in its definition
  uint32_t message_id = 0;              // 1..N for messages; 0 for nested-only records

  bool is_message() const { return message_id != 0; }
  friend bool operator==(const RecordLayout&, const RecordLayout&) = default;
};

enum class HandlerKind { kThread, kBlock };

struct HandlerInfo {
  std::string method;        // "on"
  std::string message;       // the message's qualified name
  uint32_t message_id = 0;
  HandlerKind kind = HandlerKind::kThread;
  SourceLocation location;   // of the method's name

  friend bool operator==(const HandlerInfo&, const HandlerInfo&) = default;
};

struct ActorInfo {
  std::string name;                     // qualified
  std::vector<std::string> namespaces;  // enclosing namespaces, outermost first
  uint32_t type_id = 0;                 // 0..A-1
  uint64_t state_size = 0;
  uint64_t state_alignment = 0;
  // False when constructing the state does more than zero it: default member
  // initialisers (or a default constructor) that the runtime runs at spawn.
  bool zero_initialized = true;
  std::vector<HandlerInfo> handlers;    // sorted by message_id
  SourceLocation location;

  friend bool operator==(const ActorInfo&, const ActorInfo&) = default;
};

// A named route (`rk::route("audit")`) and where the fragments use it.
struct RouteInfo {
  std::string name;
  uint32_t id = 0;
  std::vector<SourceLocation> uses;

  friend bool operator==(const RouteInfo&, const RouteInfo&) = default;
};

struct HandlerModel {
  std::vector<SourceFile> sources;    // fragments first, in the order given, then headers
  std::vector<RecordLayout> records;  // messages sorted by id, then nested-only records by name
  std::vector<ActorInfo> actors;      // sorted by type_id
  std::vector<RouteInfo> routes;      // sorted by id
  uint32_t max_payload = 4096;        // the largest message the program allows

  const RecordLayout* FindRecord(std::string_view name) const;
  const RecordLayout* FindMessage(uint32_t message_id) const;
  const ActorInfo* FindActor(std::string_view name) const;
  const RouteInfo* FindRoute(std::string_view name) const;
  size_t message_count() const;
  // The largest message an actor of this type handles (0 without handlers).
  uint64_t MaxHandledSize(const ActorInfo& actor) const;

  // The manifest form, sources included, and back. FromJson validates what
  // it reads: a manifest from a corrupted package gives an error, not a
  // model with dangling ids.
  nlohmann::json ToJson() const;
  static absl::StatusOr<HandlerModel> FromJson(const nlohmann::json& json);

  friend bool operator==(const HandlerModel&, const HandlerModel&) = default;
};

}  // namespace rk::jit

#endif  // RINGKERNEL_JIT_HANDLER_MODEL_H_
