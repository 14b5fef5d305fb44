// Copyright 2026 The RingKernel Authors.
#include "jit/handler_model.h"

#include <algorithm>
#include <cstdint>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "ringkernel/status_macros.h"

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

bool IsEnumUnderlyingKind(FieldKind kind) {
  return kind != FieldKind::kFloat32 && kind != FieldKind::kFloat64 && kind != FieldKind::kActorId &&
         kind != FieldKind::kRecord;
}

std::string FormatEnumeratorValue(FieldKind kind, int64_t value) {
  if (kind == FieldKind::kUInt64) return absl::StrCat(static_cast<uint64_t>(value));
  return absl::StrCat(value);
}

const RecordLayout* HandlerModel::FindRecord(std::string_view name) const {
  for (const RecordLayout& r : records) {
    if (r.name == name) return &r;
  }
  return nullptr;
}

const EnumLayout* HandlerModel::FindEnum(std::string_view name) const {
  for (const EnumLayout& e : enums) {
    if (e.name == name) return &e;
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

// ---------------------------------------------------------------------------
// Layout signatures

namespace {

// Deeper than this is a record that contains itself (FromJson refuses such
// models, but a model built in code has not been through it).
constexpr int kMaxSignatureNesting = 64;

absl::Status AppendSignature(const HandlerModel& model, const RecordLayout& record, int depth, std::string* out) {
  if (depth > kMaxSignatureNesting) {
    return absl::InvalidArgumentError(absl::StrCat("record '", record.name, "' nests more than ", kMaxSignatureNesting,
                                                   " deep (does it contain itself?)"));
  }
  for (size_t i = 0; i < record.fields.size(); ++i) {
    const FieldLayout& f = record.fields[i];
    absl::StrAppend(out, i == 0 ? "" : ";", f.name, ":");
    if (f.kind == FieldKind::kRecord) {
      const RecordLayout* nested = model.FindRecord(f.record);
      if (nested == nullptr) {
        return absl::InvalidArgumentError(
            absl::StrCat("field '", f.name, "' of '", record.name, "' names unknown record '", f.record, "'"));
      }
      absl::StrAppend(out, "{");
      RK_RETURN_IF_ERROR(AppendSignature(model, *nested, depth + 1, out));
      absl::StrAppend(out, "}");
    } else if (!f.enum_name.empty()) {
      const EnumLayout* e = model.FindEnum(f.enum_name);
      if (e == nullptr) {
        return absl::InvalidArgumentError(
            absl::StrCat("field '", f.name, "' of '", record.name, "' names unknown enum '", f.enum_name, "'"));
      }
      // The enumerators are part of it: a stale header whose enum has other
      // values would send the wrong ones.
      absl::StrAppend(out, "enum ", e->name, ":", std::string(FieldKindName(e->kind)), "{",
                      absl::StrJoin(e->enumerators, ",",
                                    [&](std::string* o, const EnumeratorLayout& v) {
                                      absl::StrAppend(o, v.name, "=", FormatEnumeratorValue(e->kind, v.value));
                                    }),
                      "}");
    } else {
      absl::StrAppend(out, std::string(FieldKindName(f.kind)));
    }
    for (uint64_t d : f.dims) absl::StrAppend(out, "[", d, "]");
    absl::StrAppend(out, "@", f.offset);
  }
  return absl::OkStatus();
}

// One field of a signature, taken apart.
struct SignatureField {
  std::string_view name;
  std::string_view element;  // "int64", "{...}", "enum N:K{...}"
  std::string_view dims;     // "[4][2]" or ""
  uint64_t offset = 0;

  std::string_view type_text() const {
    return std::string_view(element.data(), static_cast<size_t>(dims.data() + dims.size() - element.data()));
  }
  bool is_record() const { return element.size() >= 2 && element.front() == '{' && element.back() == '}'; }
  std::string_view record_body() const { return element.substr(1, element.size() - 2); }
};

bool IsIdentifier(std::string_view s) {
  if (s.empty() || absl::ascii_isdigit(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

bool IsNumber(std::string_view s) {
  return !s.empty() &&
         std::all_of(s.begin(), s.end(), [](char c) { return absl::ascii_isdigit(static_cast<unsigned char>(c)); });
}

// Splits `signature` into its fields; false if it is not a signature. Only
// the shape is checked ("name:type@offset", balanced braces): the
// comparison is of text, and a field that differs is reported as it is.
bool ParseSignature(std::string_view signature, std::vector<SignatureField>* fields) {
  fields->clear();
  if (signature.empty()) return true;  // a record without fields
  std::vector<std::string_view> pieces;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < signature.size(); ++i) {
    const char c = signature[i];
    if (c == '{') ++depth;
    if (c == '}' && --depth < 0) return false;
    if (c == ';' && depth == 0) {
      pieces.push_back(signature.substr(start, i - start));
      start = i + 1;
    }
  }
  if (depth != 0) return false;
  pieces.push_back(signature.substr(start));
  for (std::string_view piece : pieces) {
    const size_t colon = piece.find(':');
    const size_t at = piece.rfind('@');  // the last: nested records have their own
    if (colon == std::string_view::npos || at == std::string_view::npos || at < colon) return false;
    SignatureField f;
    f.name = piece.substr(0, colon);
    std::string_view type = piece.substr(colon + 1, at - colon - 1);
    const std::string_view offset = piece.substr(at + 1);
    if (!IsIdentifier(f.name) || !IsNumber(offset) ||
        !absl::SimpleAtoi(absl::string_view(offset.data(), offset.size()), &f.offset)) {
      return false;
    }
    // Array extents trail the element: "[4][2]".
    size_t element_end = type.size();
    while (element_end > 0 && type[element_end - 1] == ']') {
      const size_t open = type.rfind('[', element_end - 1);
      if (open == std::string_view::npos || !IsNumber(type.substr(open + 1, element_end - open - 2))) return false;
      element_end = open;
    }
    f.element = type.substr(0, element_end);
    f.dims = type.substr(element_end);
    if (f.element.empty()) return false;
    fields->push_back(f);
  }
  return true;
}

// A field's type and place in words: "int64 at offset 8", "char[8] at offset
// 24", "enum Side (int32: kBuy=0, kSell=1) at offset 4".
std::string FieldWords(const SignatureField& f, uint64_t base) {
  std::string type;
  const std::string_view e = f.element;
  if (f.is_record()) {
    type = absl::StrCat("struct ", std::string(e), std::string(f.dims));
  } else if (e.substr(0, 5) == "enum " && e.back() == '}' && e.find('{') != std::string_view::npos) {
    const size_t brace = e.find('{');
    const size_t colon = e.rfind(':', brace);
    if (colon != std::string_view::npos && colon > 5) {
      const std::string values =
          absl::StrReplaceAll(std::string(e.substr(brace + 1, e.size() - brace - 2)), {{",", ", "}});
      type = absl::StrCat("enum ", std::string(e.substr(5, colon - 5)), std::string(f.dims), " (",
                          std::string(e.substr(colon + 1, brace - colon - 1)), values.empty() ? "" : ": ", values,
                          ")");
    } else {
      type = absl::StrCat(std::string(e), std::string(f.dims));
    }
  } else {
    type = absl::StrCat(std::string(e), std::string(f.dims));
  }
  return absl::StrCat(type, " at offset ", base + f.offset);
}

std::optional<LayoutDifference> DiffFields(const std::vector<SignatureField>& a, const std::vector<SignatureField>& b,
                                           const std::string& record, uint64_t base) {
  for (size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
    LayoutDifference d;
    d.record = record;
    d.position = i + 1;
    if (i < a.size()) {
      d.first_name = std::string(a[i].name);
      d.first = FieldWords(a[i], base);
    }
    if (i < b.size()) {
      d.second_name = std::string(b[i].name);
      d.second = FieldWords(b[i], base);
    }
    if (i >= a.size() || i >= b.size() || a[i].name != b[i].name) return d;
    if (a[i].offset == b[i].offset && a[i].type_text() == b[i].type_text()) continue;
    // The same field: look inside a struct at the same place for the field
    // that differs, which says more than two long struct descriptions.
    if (a[i].offset == b[i].offset && a[i].is_record() && b[i].is_record() && a[i].dims == b[i].dims) {
      std::vector<SignatureField> inner_a, inner_b;
      if (ParseSignature(a[i].record_body(), &inner_a) && ParseSignature(b[i].record_body(), &inner_b)) {
        std::string path = absl::StrCat(record, record.empty() ? "" : ".", std::string(a[i].name));
        for (size_t k = 0; k < a[i].dims.size(); ++k) {
          if (a[i].dims[k] == '[') absl::StrAppend(&path, "[0]");
        }
        if (std::optional<LayoutDifference> inner = DiffFields(inner_a, inner_b, path, base + a[i].offset)) {
          return inner;
        }
      }
    }
    return d;
  }
  return std::nullopt;
}

std::string Ordinal(size_t n) {
  const char* suffix = "th";
  if (n % 100 < 11 || n % 100 > 13) {
    if (n % 10 == 1) suffix = "st";
    if (n % 10 == 2) suffix = "nd";
    if (n % 10 == 3) suffix = "rd";
  }
  return absl::StrCat(n, suffix);
}

}  // namespace

absl::StatusOr<std::string> LayoutSignature(const HandlerModel& model, const RecordLayout& record) {
  std::string out;
  RK_RETURN_IF_ERROR(AppendSignature(model, record, 0, &out));
  return out;
}

std::string LayoutDifference::field() const {
  const std::string& name = first_name.empty() ? second_name : first_name;
  if (name.empty()) return "";
  return record.empty() ? name : absl::StrCat(record, ".", name);
}

std::string LayoutDifference::Describe(std::string_view first_side, std::string_view second_side) const {
  const std::string a(first_side), b(second_side);
  if (position == 0) {
    return absl::StrCat(a, " has the layout \"", first, "\" but ", b, " has \"", second, "\"");
  }
  if (first_name.empty()) {
    return absl::StrCat("field '", field(), "' is missing in ", a, " but is ", second, " in ", b);
  }
  if (second_name.empty()) {
    return absl::StrCat("field '", field(), "' is ", first, " in ", a, " but missing in ", b);
  }
  if (first_name != second_name) {
    return absl::StrCat("the ", Ordinal(position), " field", record.empty() ? "" : absl::StrCat(" of '", record, "'"),
                        " is '", first_name, "' (", first, ") in ", a, " but '", second_name, "' (", second, ") in ",
                        b);
  }
  return absl::StrCat("field '", field(), "' is ", first, " in ", a, " but ", second, " in ", b);
}

std::optional<LayoutDifference> DiffLayoutSignatures(std::string_view first, std::string_view second) {
  if (first == second) return std::nullopt;
  std::vector<SignatureField> a, b;
  if (ParseSignature(first, &a) && ParseSignature(second, &b)) {
    if (std::optional<LayoutDifference> d = DiffFields(a, b, "", 0)) return d;
  }
  // Not both signatures, or different in a way no field shows ("@08" for
  // "@8"): different as a whole.
  LayoutDifference d;
  d.first = std::string(first);
  d.second = std::string(second);
  return d;
}

absl::Status CheckHostLayout(const HandlerModel& model, const RecordLayout& record, std::string_view host_layout) {
  RK_ASSIGN_OR_RETURN(const std::string program, LayoutSignature(model, record));
  const std::optional<LayoutDifference> d = DiffLayoutSignatures(host_layout, program);
  if (!d) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "host type for '", record.name, "' does not match the program's layout of it: ",
      d->Describe("the host type", "the program"),
      ". The host type's layout is from a header generated for another version of the program (or edited since); "
      "regenerate the header with `actorc header`"));
}

}  // namespace rk::jit
