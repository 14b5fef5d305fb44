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
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
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

// A location's manifest form ({"file", "line", "column"}) and back, as the
// model writes its own; `path` names the value in a schema error.
nlohmann::json SourceLocationToJson(const SourceLocation& location);
absl::StatusOr<SourceLocation> SourceLocationFromJson(const nlohmann::json& json, const std::string& path);

enum class DiagnosticSeverity { kNote, kWarning, kError };

// One message for the user, pointing into their file.
struct Diagnostic {
  DiagnosticSeverity severity = DiagnosticSeverity::kError;
  SourceLocation location;
  std::string message;

  // "bank.cu:12:7: error: message" (the location part is left out when
  // unknown), the format compilers use so that editors can jump to it.
  std::string ToString() const;
  friend bool operator==(const Diagnostic&, const Diagnostic&) = default;
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
// Whether an enum can have `kind` as its underlying type: bool, char and the
// integers.
bool IsEnumUnderlyingKind(FieldKind kind);

// One named value of an enum.
struct EnumeratorLayout {
  std::string name;
  // The value. Enums whose underlying kind is uint64 store values above
  // INT64_MAX wrapped (read them back with static_cast<uint64_t>);
  // FormatEnumeratorValue prints either kind right.
  int64_t value = 0;

  friend bool operator==(const EnumeratorLayout&, const EnumeratorLayout&) = default;
};

// An enum that a message field (or a field of a struct in one) has as its
// type. The host header declares it, so that host code writes
// `Side::kSell`, not 1. Only enums declared at namespace scope by the
// program are described: an enum nested in a struct is rejected by the
// front-end, and RingKernel's own (rk::SendStatus, ...) stay plain integers.
struct EnumLayout {
  std::string name;                     // qualified: "Side", "market::Side"
  std::vector<std::string> namespaces;  // enclosing namespaces, outermost first
  bool scoped = false;                  // `enum class` (or `enum struct`)
  FieldKind kind = FieldKind::kInt32;   // the underlying type; IsEnumUnderlyingKind
  std::vector<EnumeratorLayout> enumerators;  // in declaration order
  SourceLocation location;              // of the enum's name in its definition

  friend bool operator==(const EnumLayout&, const EnumLayout&) = default;
};

// `value` as a C++ integer of `kind` would print it: "-1", "255",
// "18446744073709551615" (not "-1") for uint64.
std::string FormatEnumeratorValue(FieldKind kind, int64_t value);

struct FieldLayout {
  std::string name;
  std::string type;            // as clang spells it: "long long", "int[4]", "Inner"
  // The element's kind; for an enum, its underlying integer kind.
  FieldKind kind = FieldKind::kInt32;
  std::string record;          // kind == kRecord: the nested RecordLayout's name
  std::vector<uint64_t> dims;  // array extents, outermost first; empty for one element
  uint64_t offset = 0;         // bytes from the start of the enclosing record
  uint64_t size = 0;           // bytes of the whole field
  uint64_t element_size = 0;   // bytes of one element
  // An enum field: the EnumLayout's name (`kind` is its underlying kind);
  // empty otherwise. Last, so that aggregate initialisers written before
  // enums were described still mean what they did.
  std::string enum_name;

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
  std::vector<EnumLayout> enums;      // the enums fields have as types, sorted by name
  std::vector<ActorInfo> actors;      // sorted by type_id
  std::vector<RouteInfo> routes;      // sorted by id
  uint32_t max_payload = 4096;        // the largest message the program allows

  const RecordLayout* FindRecord(std::string_view name) const;
  const EnumLayout* FindEnum(std::string_view name) const;
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

// --- Layout signatures: what a host type must match.
//
// The layout signature of a record is a deterministic string that describes
// every field in declaration order: its name, element type, array extents
// and offset, with nested records described in place and enums by name,
// underlying kind and enumerators:
//
//   account:int32@0;cents:int64@8;pos:{x:float32@0;y:float32@4}@16;tag:char[8]@24
//   side:enum market::Side:int32{kBuy=0,kSell=1}@4;ids:actor_id[2][3]@8
//
// Offsets are from the start of the enclosing record (a nested record's
// fields from the start of that record). Two records with equal signatures
// have the same bytes for the same values, field by field; the record's own
// name, the names of nested records and whether an enum is scoped are left
// out, since they do not change the bytes. `actorc header` writes each
// message's signature into the generated header (RK_HOST_MESSAGE_LAYOUT) and
// the runtime compares it with the program's when the host first sends that
// type, so that a stale or edited header is refused instead of corrupting
// messages.

// The signature of `record`, whose nested records and enums are looked up in
// `model`. InvalidArgument if a field names a record or enum `model` lacks,
// or records nest too deep (a record that contains itself).
absl::StatusOr<std::string> LayoutSignature(const HandlerModel& model, const RecordLayout& record);

// The first field at which two layout signatures differ.
struct LayoutDifference {
  // The path of the record the field is in: "" for the outermost, "pos",
  // "corners[0]" (element 0 of an array of structs), "a.b".
  std::string record;
  // The field's position in that record, from 1; 0 when the signatures
  // differ as a whole (one of them is not a signature).
  size_t position = 0;
  // The field's name in each signature; empty where that signature has no
  // field at this position.
  std::string first_name;
  std::string second_name;
  // The field's type and offset in each signature, in words ("int64 at
  // offset 8", "enum market::Side (int32: kBuy=0, kSell=1) at offset 4");
  // empty where that signature has no such field; the whole signature when
  // position is 0. Offsets count from the start of the outermost record.
  std::string first;
  std::string second;

  // "pos.y": the record's path and the field's name (the first signature's,
  // else the second's); empty when position is 0.
  std::string field() const;
  // One sentence that names the two sides. With "the host type" and "the
  // program": "field 'cents' is int32 at offset 8 in the host type but int64
  // at offset 8 in the program"; where the names differ, "the 1st field is
  // 'cents' (int64 at offset 0) in the host type but 'account' (int32 at
  // offset 0) in the program".
  std::string Describe(std::string_view first_side, std::string_view second_side) const;
};

// Where `first` and `second` (layout signatures) first differ; nullopt when
// they are equal. Either may be any string: what is not a signature is
// reported as differing as a whole.
std::optional<LayoutDifference> DiffLayoutSignatures(std::string_view first, std::string_view second);

// Checks a host type's layout signature (the kLayout of its
// RK_HOST_MESSAGE_LAYOUT) against the program's `record`: OK when they are
// equal, else InvalidArgument naming the type, the first field that differs
// with its layout on both sides, and how to fix it (regenerate the header
// with `actorc header`).
absl::Status CheckHostLayout(const HandlerModel& model, const RecordLayout& record, std::string_view host_layout);

}  // namespace rk::jit

#endif  // RINGKERNEL_JIT_HANDLER_MODEL_H_
