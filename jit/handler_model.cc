// Copyright 2026 The RingKernel Authors.
#include "jit/handler_model.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace rk::jit {

std::string SourceLocation::ToString() const {
  if (file.empty()) return "";
  if (line == 0) return file;
  if (column == 0) return absl::StrCat(file, ":", line);
  return absl::StrCat(file, ":", line, ":", column);
}

std::string Diagnostic::ToString() const {
  const char* sev = severity == DiagnosticSeverity::kError     ? "error"
                    : severity == DiagnosticSeverity::kWarning ? "warning"
                                                               : "note";
  const std::string where = location.ToString();
  if (where.empty()) return absl::StrCat(sev, ": ", message);
  return absl::StrCat(where, ": ", sev, ": ", message);
}

std::string FormatDiagnostics(const std::vector<Diagnostic>& diagnostics) {
  std::string out;
  for (const Diagnostic& d : diagnostics) absl::StrAppend(&out, d.ToString(), "\n");
  return out;
}

bool HasErrors(const std::vector<Diagnostic>& diagnostics) {
  return std::any_of(diagnostics.begin(), diagnostics.end(),
                     [](const Diagnostic& d) { return d.severity == DiagnosticSeverity::kError; });
}

namespace {
struct KindRow {
  FieldKind kind;
  std::string_view name;
  uint64_t size;
};
constexpr KindRow kKinds[] = {
    {FieldKind::kBool, "bool", 1},       {FieldKind::kChar, "char", 1},         {FieldKind::kInt8, "int8", 1},
    {FieldKind::kUInt8, "uint8", 1},     {FieldKind::kInt16, "int16", 2},       {FieldKind::kUInt16, "uint16", 2},
    {FieldKind::kInt32, "int32", 4},     {FieldKind::kUInt32, "uint32", 4},     {FieldKind::kInt64, "int64", 8},
    {FieldKind::kUInt64, "uint64", 8},   {FieldKind::kFloat32, "float32", 4},   {FieldKind::kFloat64, "float64", 8},
    {FieldKind::kActorId, "actor_id", 4}, {FieldKind::kRecord, "record", 0},
};
}  // namespace

std::string_view FieldKindName(FieldKind kind) {
  for (const KindRow& r : kKinds) {
    if (r.kind == kind) return r.name;
  }
  return "unknown";
}

absl::StatusOr<FieldKind> FieldKindFromName(std::string_view name) {
  for (const KindRow& r : kKinds) {
    if (r.name == name) return r.kind;
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown field kind '", std::string(name), "'"));
}

uint64_t FieldKindSize(FieldKind kind) {
  for (const KindRow& r : kKinds) {
    if (r.kind == kind) return r.size;
  }
  return 0;
}

const RecordLayout* HandlerModel::FindRecord(std::string_view name) const {
  for (const RecordLayout& r : records) {
    if (r.name == name) return &r;
  }
  return nullptr;
}

const RecordLayout* HandlerModel::FindMessage(uint32_t message_id) const {
  if (message_id == 0) return nullptr;
  for (const RecordLayout& r : records) {
    if (r.message_id == message_id) return &r;
  }
  return nullptr;
}

const ActorInfo* HandlerModel::FindActor(std::string_view name) const {
  for (const ActorInfo& a : actors) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

const RouteInfo* HandlerModel::FindRoute(std::string_view name) const {
  for (const RouteInfo& r : routes) {
    if (r.name == name) return &r;
  }
  return nullptr;
}

size_t HandlerModel::message_count() const {
  return static_cast<size_t>(
      std::count_if(records.begin(), records.end(), [](const RecordLayout& r) { return r.is_message(); }));
}

uint64_t HandlerModel::MaxHandledSize(const ActorInfo& actor) const {
  uint64_t max_size = 0;
  for (const HandlerInfo& h : actor.handlers) {
    if (const RecordLayout* m = FindMessage(h.message_id)) max_size = std::max(max_size, m->size);
  }
  return max_size;
}

}  // namespace rk::jit
