// Copyright 2026 The RingKernel Authors.
//
// HandlerModel ⇄ JSON, the model part of a package manifest.
//
// FromJson is the gate between a file on disk and the rest of the pipeline:
// codegen, the message codec and the runtime index records by id and copy
// bytes at the offsets found here. So it checks every value it reads — types,
// ranges, cross references and layout arithmetic — and reports the first
// problem as InvalidArgument with the JSON path of the value
// ("model.records[2].fields[0].offset: ...").
#include "jit/handler_model.h"

#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "ringkernel/status_macros.h"

namespace rk::jit {
namespace {

using nlohmann::json;

// Messages are copied with 16-byte vector loads at most, and mailbox slots
// are 16-byte aligned: a stricter alignment can't be honoured.
constexpr uint64_t kMaxMessageAlignment = 16;
// Records nest at most this deep; deeper is certainly a corrupted manifest
// and would only make the codec recurse without need.
constexpr int kMaxNesting = 64;

absl::Status Error(const std::string& path, std::string_view problem) {
  return absl::InvalidArgumentError(absl::StrCat(path, ": ", std::string(problem)));
}

std::string TypeName(const json& j) { return std::string(j.type_name()); }

// Typed access to one member of an object, with the member's path in every
// error.
class ObjectReader {
 public:
  static absl::StatusOr<ObjectReader> Create(const json& j, std::string path) {
    if (!j.is_object()) return Error(path, absl::StrCat("expected an object, got ", TypeName(j)));
    return ObjectReader(j, std::move(path));
  }

  std::string Path(std::string_view key) const { return absl::StrCat(path_, ".", std::string(key)); }
  const std::string& path() const { return path_; }
  bool Has(const char* key) const { return j_->contains(key); }

  absl::StatusOr<const json*> Get(const char* key) const {
    auto it = j_->find(key);
    if (it == j_->end()) return Error(Path(key), "missing");
    return &*it;
  }

  absl::StatusOr<std::string> String(const char* key, bool allow_empty = true) const {
    RK_ASSIGN_OR_RETURN(const json* v, Get(key));
    if (!v->is_string()) return Error(Path(key), absl::StrCat("expected a string, got ", TypeName(*v)));
    std::string s = v->get<std::string>();
    if (!allow_empty && s.empty()) return Error(Path(key), "must not be empty");
    return s;
  }

  absl::StatusOr<bool> Bool(const char* key) const {
    RK_ASSIGN_OR_RETURN(const json* v, Get(key));
    if (!v->is_boolean()) return Error(Path(key), absl::StrCat("expected true or false, got ", TypeName(*v)));
    return v->get<bool>();
  }

  absl::StatusOr<uint64_t> Uint(const char* key, uint64_t max = std::numeric_limits<uint64_t>::max()) const {
    RK_ASSIGN_OR_RETURN(const json* v, Get(key));
    return ReadUint(*v, Path(key), max);
  }

  absl::StatusOr<uint32_t> Uint32(const char* key) const {
    RK_ASSIGN_OR_RETURN(uint64_t v, Uint(key, std::numeric_limits<uint32_t>::max()));
    return static_cast<uint32_t>(v);
  }

  absl::StatusOr<const json*> Array(const char* key) const {
    RK_ASSIGN_OR_RETURN(const json* v, Get(key));
    if (!v->is_array()) return Error(Path(key), absl::StrCat("expected an array, got ", TypeName(*v)));
    return v;
  }

  static absl::StatusOr<uint64_t> ReadUint(const json& v, const std::string& path, uint64_t max) {
    // Floats (even 2.0) are not accepted where sizes and ids go.
    if (!v.is_number_integer()) {
      return Error(path, absl::StrCat("expected a non-negative integer, got ", TypeName(v)));
    }
    // (Values built in code rather than parsed may be signed yet non-negative.)
    if (!v.is_number_unsigned() && v.get<int64_t>() < 0) {
      return Error(path, absl::StrCat("must not be negative, got ", v.get<int64_t>()));
    }
    const uint64_t value = v.get<uint64_t>();
    if (value > max) return Error(path, absl::StrCat(value, " is larger than the limit ", max));
    return value;
  }

 private:
  ObjectReader(const json& j, std::string path) : j_(&j), path_(std::move(path)) {}
  const json* j_;
  std::string path_;
};

std::string Index(const std::string& path, size_t i) { return absl::StrCat(path, "[", i, "]"); }

absl::StatusOr<std::vector<std::string>> ReadStrings(const ObjectReader& r, const char* key) {
  RK_ASSIGN_OR_RETURN(const json* array, r.Array(key));
  std::vector<std::string> out;
  for (size_t i = 0; i < array->size(); ++i) {
    const json& v = (*array)[i];
    if (!v.is_string()) return Error(Index(r.Path(key), i), absl::StrCat("expected a string, got ", TypeName(v)));
    out.push_back(v.get<std::string>());
  }
  return out;
}

}  // namespace

// (Declared in handler_model.h: the package's warnings use them too.)
json SourceLocationToJson(const SourceLocation& l) {
  return json{{"file", l.file}, {"line", l.line}, {"column", l.column}};
}

absl::StatusOr<SourceLocation> SourceLocationFromJson(const json& j, const std::string& path) {
  RK_ASSIGN_OR_RETURN(ObjectReader r, ObjectReader::Create(j, path));
  SourceLocation l;
  RK_ASSIGN_OR_RETURN(l.file, r.String("file"));
  RK_ASSIGN_OR_RETURN(l.line, r.Uint32("line"));
  RK_ASSIGN_OR_RETURN(l.column, r.Uint32("column"));
  return l;
}

namespace {

absl::StatusOr<SourceLocation> ReadLocationMember(const ObjectReader& r, const char* key) {
  RK_ASSIGN_OR_RETURN(const json* v, r.Get(key));
  return SourceLocationFromJson(*v, r.Path(key));
}

bool IsPowerOfTwo(uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

std::string_view HandlerKindName(HandlerKind kind) { return kind == HandlerKind::kBlock ? "block" : "thread"; }

// --- Reading, one entity at a time. Cross references are checked afterwards,
// once every record is known.

absl::StatusOr<FieldLayout> ReadField(const json& j, const std::string& path) {
  RK_ASSIGN_OR_RETURN(ObjectReader r, ObjectReader::Create(j, path));
  FieldLayout f;
  RK_ASSIGN_OR_RETURN(f.name, r.String("name", /*allow_empty=*/false));
  RK_ASSIGN_OR_RETURN(f.type, r.String("type"));
  RK_ASSIGN_OR_RETURN(std::string kind, r.String("kind"));
  absl::StatusOr<FieldKind> parsed = FieldKindFromName(kind);
  if (!parsed.ok()) return Error(r.Path("kind"), std::string(parsed.status().message()));
  f.kind = *parsed;
  if (f.kind == FieldKind::kRecord) {
    RK_ASSIGN_OR_RETURN(f.record, r.String("record", /*allow_empty=*/false));
  } else if (r.Has("record")) {
    return Error(r.Path("record"), absl::StrCat("only fields of kind 'record' name a record, this one is '", kind, "'"));
  }
  // Optional: manifests written before enums were described have none.
  if (r.Has("enum")) {
    if (!IsEnumUnderlyingKind(f.kind)) {
      return Error(r.Path("enum"), absl::StrCat("a field of kind '", kind, "' cannot be an enum"));
    }
    RK_ASSIGN_OR_RETURN(f.enum_name, r.String("enum", /*allow_empty=*/false));
  }
  RK_ASSIGN_OR_RETURN(const json* dims, r.Array("dims"));
  for (size_t i = 0; i < dims->size(); ++i) {
    RK_ASSIGN_OR_RETURN(uint64_t d, ObjectReader::ReadUint((*dims)[i], Index(r.Path("dims"), i),
                                                           std::numeric_limits<uint64_t>::max()));
    if (d == 0) return Error(Index(r.Path("dims"), i), "array extents must be at least 1");
    f.dims.push_back(d);
  }
  RK_ASSIGN_OR_RETURN(f.offset, r.Uint("offset"));
  RK_ASSIGN_OR_RETURN(f.size, r.Uint("size"));
  RK_ASSIGN_OR_RETURN(f.element_size, r.Uint("element_size"));
  if (f.kind != FieldKind::kRecord && f.element_size != FieldKindSize(f.kind)) {
    return Error(r.Path("element_size"), absl::StrCat(f.element_size, " does not match kind '", kind, "' (",
                                                      FieldKindSize(f.kind), " bytes)"));
  }
  // element_size × extents == size, computed without overflow.
  uint64_t total = f.element_size;
  for (uint64_t d : f.dims) {
    if (total != 0 && d > std::numeric_limits<uint64_t>::max() / total) {
      return Error(r.Path("dims"), "the array's size overflows 64 bits");
    }
    total *= d;
  }
  if (total != f.size) {
    return Error(r.Path("size"), absl::StrCat(f.size, " is not element_size (", f.element_size,
                                              ") times the array extents (", total, " bytes)"));
  }
  return f;
}

absl::StatusOr<RecordLayout> ReadRecord(const json& j, const std::string& path) {
  RK_ASSIGN_OR_RETURN(ObjectReader r, ObjectReader::Create(j, path));
  RecordLayout rec;
  RK_ASSIGN_OR_RETURN(rec.name, r.String("name", /*allow_empty=*/false));
  RK_ASSIGN_OR_RETURN(rec.tag, r.String("tag"));
  if (rec.tag != "struct" && rec.tag != "class") {
    return Error(r.Path("tag"), absl::StrCat("expected \"struct\" or \"class\", got \"", rec.tag, "\""));
  }
  RK_ASSIGN_OR_RETURN(rec.namespaces, ReadStrings(r, "namespaces"));
  RK_ASSIGN_OR_RETURN(rec.size, r.Uint("size"));
  RK_ASSIGN_OR_RETURN(rec.alignment, r.Uint("alignment"));
  RK_ASSIGN_OR_RETURN(rec.message_id, r.Uint32("message_id"));
  RK_ASSIGN_OR_RETURN(rec.location, ReadLocationMember(r, "location"));
  if (rec.size == 0) return Error(r.Path("size"), "a record is at least 1 byte");
  if (!IsPowerOfTwo(rec.alignment)) {
    return Error(r.Path("alignment"), absl::StrCat(rec.alignment, " is not a power of two"));
  }
  if (rec.size % rec.alignment != 0) {
    return Error(r.Path("size"), absl::StrCat(rec.size, " is not a multiple of the alignment ", rec.alignment));
  }
  if (rec.is_message() && rec.alignment > kMaxMessageAlignment) {
    return Error(r.Path("alignment"), absl::StrCat(rec.alignment, " is larger than the ", kMaxMessageAlignment,
                                                   " bytes a message may ask for"));
  }
  RK_ASSIGN_OR_RETURN(const json* fields, r.Array("fields"));
  std::set<std::string> names;
  for (size_t i = 0; i < fields->size(); ++i) {
    const std::string fpath = Index(r.Path("fields"), i);
    RK_ASSIGN_OR_RETURN(FieldLayout f, ReadField((*fields)[i], fpath));
    if (!names.insert(f.name).second) {
      return Error(fpath + ".name", absl::StrCat("duplicate field '", f.name, "'"));
    }
    if (f.offset > rec.size || f.size > rec.size - f.offset) {
      return Error(fpath + ".offset", absl::StrCat("field '", f.name, "' at offset ", f.offset, " with size ", f.size,
                                                   " ends past the end of ", rec.name, " (", rec.size, " bytes)"));
    }
    rec.fields.push_back(std::move(f));
  }
  return rec;
}

// The values an enum of underlying kind `kind` can hold, as int64_t (uint64
// values above INT64_MAX wrapped, as EnumeratorLayout stores them).
struct ValueRange {
  bool is_unsigned;
  int64_t min;
  uint64_t max;
};
ValueRange RangeOf(FieldKind kind) {
  switch (kind) {
    case FieldKind::kBool: return {true, 0, 1};
    case FieldKind::kChar: return {false, INT8_MIN, INT8_MAX};  // char is signed on nvptx64
    case FieldKind::kInt8: return {false, INT8_MIN, INT8_MAX};
    case FieldKind::kUInt8: return {true, 0, UINT8_MAX};
    case FieldKind::kInt16: return {false, INT16_MIN, INT16_MAX};
    case FieldKind::kUInt16: return {true, 0, UINT16_MAX};
    case FieldKind::kInt32: return {false, INT32_MIN, INT32_MAX};
    case FieldKind::kUInt32: return {true, 0, UINT32_MAX};
    case FieldKind::kInt64: return {false, INT64_MIN, INT64_MAX};
    case FieldKind::kUInt64: return {true, 0, UINT64_MAX};
    default: return {false, 0, 0};
  }
}

json EnumeratorValueToJson(FieldKind kind, int64_t value) {
  if (RangeOf(kind).is_unsigned) return json(static_cast<uint64_t>(value));
  return json(value);
}

absl::StatusOr<int64_t> ReadEnumeratorValue(const json& v, const std::string& path, FieldKind kind) {
  const ValueRange range = RangeOf(kind);
  const std::string limits = absl::StrCat(std::string(FieldKindName(kind)), " (", range.min, "..", range.max, ")");
  if (!v.is_number_integer()) return Error(path, absl::StrCat("expected an integer, got ", TypeName(v)));
  if (range.is_unsigned) {
    if (!v.is_number_unsigned() && v.get<int64_t>() < 0) {
      return Error(path, absl::StrCat(v.get<int64_t>(), " does not fit the enum's underlying type ", limits));
    }
    const uint64_t value = v.get<uint64_t>();
    if (value > range.max) {
      return Error(path, absl::StrCat(value, " does not fit the enum's underlying type ", limits));
    }
    return static_cast<int64_t>(value);
  }
  if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return Error(path, absl::StrCat(v.get<uint64_t>(), " does not fit the enum's underlying type ", limits));
  }
  const int64_t value = v.get<int64_t>();
  if (value < range.min || (value > 0 && static_cast<uint64_t>(value) > range.max)) {
    return Error(path, absl::StrCat(value, " does not fit the enum's underlying type ", limits));
  }
  return value;
}

absl::StatusOr<EnumLayout> ReadEnum(const json& j, const std::string& path) {
  RK_ASSIGN_OR_RETURN(ObjectReader r, ObjectReader::Create(j, path));
  EnumLayout e;
  RK_ASSIGN_OR_RETURN(e.name, r.String("name", /*allow_empty=*/false));
  RK_ASSIGN_OR_RETURN(e.namespaces, ReadStrings(r, "namespaces"));
  RK_ASSIGN_OR_RETURN(e.scoped, r.Bool("scoped"));
  RK_ASSIGN_OR_RETURN(std::string kind, r.String("kind"));
  absl::StatusOr<FieldKind> parsed = FieldKindFromName(kind);
  if (!parsed.ok()) return Error(r.Path("kind"), std::string(parsed.status().message()));
  if (!IsEnumUnderlyingKind(*parsed)) {
    return Error(r.Path("kind"), absl::StrCat("'", kind, "' cannot be the underlying type of an enum"));
  }
  e.kind = *parsed;
  RK_ASSIGN_OR_RETURN(e.location, ReadLocationMember(r, "location"));
  RK_ASSIGN_OR_RETURN(const json* enumerators, r.Array("enumerators"));
  std::set<std::string> names;
  for (size_t i = 0; i < enumerators->size(); ++i) {
    const std::string vpath = Index(r.Path("enumerators"), i);
    RK_ASSIGN_OR_RETURN(ObjectReader v, ObjectReader::Create((*enumerators)[i], vpath));
    EnumeratorLayout value;
    RK_ASSIGN_OR_RETURN(value.name, v.String("name", /*allow_empty=*/false));
    if (!names.insert(value.name).second) {
      return Error(v.Path("name"), absl::StrCat("duplicate enumerator '", value.name, "'"));
    }
    RK_ASSIGN_OR_RETURN(const json* number, v.Get("value"));
    RK_ASSIGN_OR_RETURN(value.value, ReadEnumeratorValue(*number, v.Path("value"), e.kind));
    e.enumerators.push_back(std::move(value));
  }
  return e;
}

absl::StatusOr<HandlerInfo> ReadHandler(const json& j, const std::string& path) {
  RK_ASSIGN_OR_RETURN(ObjectReader r, ObjectReader::Create(j, path));
  HandlerInfo h;
  RK_ASSIGN_OR_RETURN(h.method, r.String("method", /*allow_empty=*/false));
  RK_ASSIGN_OR_RETURN(h.message, r.String("message", /*allow_empty=*/false));
  RK_ASSIGN_OR_RETURN(h.message_id, r.Uint32("message_id"));
  RK_ASSIGN_OR_RETURN(std::string kind, r.String("kind"));
  if (kind == "thread") {
    h.kind = HandlerKind::kThread;
  } else if (kind == "block") {
    h.kind = HandlerKind::kBlock;
  } else {
    return Error(r.Path("kind"), absl::StrCat("expected \"thread\" or \"block\", got \"", kind, "\""));
  }
  RK_ASSIGN_OR_RETURN(h.location, ReadLocationMember(r, "location"));
  return h;
}

absl::StatusOr<ActorInfo> ReadActor(const json& j, const std::string& path) {
  RK_ASSIGN_OR_RETURN(ObjectReader r, ObjectReader::Create(j, path));
  ActorInfo a;
  RK_ASSIGN_OR_RETURN(a.name, r.String("name", /*allow_empty=*/false));
  RK_ASSIGN_OR_RETURN(a.namespaces, ReadStrings(r, "namespaces"));
  RK_ASSIGN_OR_RETURN(a.type_id, r.Uint32("type_id"));
  RK_ASSIGN_OR_RETURN(a.state_size, r.Uint("state_size"));
  RK_ASSIGN_OR_RETURN(a.state_alignment, r.Uint("state_alignment"));
  RK_ASSIGN_OR_RETURN(a.zero_initialized, r.Bool("zero_initialized"));
  RK_ASSIGN_OR_RETURN(a.location, ReadLocationMember(r, "location"));
  if (!IsPowerOfTwo(a.state_alignment)) {
    return Error(r.Path("state_alignment"), absl::StrCat(a.state_alignment, " is not a power of two"));
  }
  if (a.state_size % a.state_alignment != 0) {
    return Error(r.Path("state_size"),
                 absl::StrCat(a.state_size, " is not a multiple of the state alignment ", a.state_alignment));
  }
  RK_ASSIGN_OR_RETURN(const json* handlers, r.Array("handlers"));
  for (size_t i = 0; i < handlers->size(); ++i) {
    RK_ASSIGN_OR_RETURN(HandlerInfo h, ReadHandler((*handlers)[i], Index(r.Path("handlers"), i)));
    a.handlers.push_back(std::move(h));
  }
  return a;
}

absl::StatusOr<RouteInfo> ReadRoute(const json& j, const std::string& path) {
  RK_ASSIGN_OR_RETURN(ObjectReader r, ObjectReader::Create(j, path));
  RouteInfo route;
  RK_ASSIGN_OR_RETURN(route.name, r.String("name", /*allow_empty=*/false));
  RK_ASSIGN_OR_RETURN(route.id, r.Uint32("id"));
  RK_ASSIGN_OR_RETURN(const json* uses, r.Array("uses"));
  for (size_t i = 0; i < uses->size(); ++i) {
    RK_ASSIGN_OR_RETURN(SourceLocation l, SourceLocationFromJson((*uses)[i], Index(r.Path("uses"), i)));
    route.uses.push_back(std::move(l));
  }
  return route;
}

// Ids of `count` entities must be exactly first..first+count-1, each once.
// `id_of(i)` is the i-th entity's id; `path_of(i)` the path of that id.
template <typename IdOf, typename PathOf>
absl::Status CheckDenseIds(size_t count, uint64_t first, std::string_view what, IdOf id_of, PathOf path_of) {
  std::map<uint64_t, size_t> seen;
  for (size_t i = 0; i < count; ++i) {
    const uint64_t id = id_of(i);
    if (id < first || id - first >= count) {
      return Error(path_of(i), absl::StrCat(std::string(what), " ", id, " is out of range: ids must be dense, ",
                                            first, "..", first + count - 1, " for ", count, " entries"));
    }
    auto [it, inserted] = seen.emplace(id, i);
    if (!inserted) {
      return Error(path_of(i), absl::StrCat(std::string(what), " ", id, " is used twice (also at ",
                                            path_of(it->second), ")"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

json HandlerModel::ToJson() const {
  json j_sources = json::array();
  for (const SourceFile& s : sources) {
    j_sources.push_back(json{{"name", s.name}, {"fragment", s.fragment}, {"contents", s.contents}});
  }
  json j_records = json::array();
  for (const RecordLayout& r : records) {
    json j_fields = json::array();
    for (const FieldLayout& f : r.fields) {
      json jf{{"name", f.name},     {"type", f.type},          {"kind", std::string(FieldKindName(f.kind))},
              {"dims", f.dims},     {"offset", f.offset},      {"size", f.size},
              {"element_size", f.element_size}};
      if (f.kind == FieldKind::kRecord) jf["record"] = f.record;
      if (!f.enum_name.empty()) jf["enum"] = f.enum_name;
      j_fields.push_back(std::move(jf));
    }
    j_records.push_back(json{{"name", r.name},
                             {"tag", r.tag},
                             {"namespaces", r.namespaces},
                             {"size", r.size},
                             {"alignment", r.alignment},
                             {"message_id", r.message_id},
                             {"location", SourceLocationToJson(r.location)},
                             {"fields", std::move(j_fields)}});
  }
  json j_enums = json::array();
  for (const EnumLayout& e : enums) {
    json j_values = json::array();
    for (const EnumeratorLayout& v : e.enumerators) {
      j_values.push_back(json{{"name", v.name}, {"value", EnumeratorValueToJson(e.kind, v.value)}});
    }
    j_enums.push_back(json{{"name", e.name},
                           {"namespaces", e.namespaces},
                           {"scoped", e.scoped},
                           {"kind", std::string(FieldKindName(e.kind))},
                           {"location", SourceLocationToJson(e.location)},
                           {"enumerators", std::move(j_values)}});
  }
  json j_actors = json::array();
  for (const ActorInfo& a : actors) {
    json j_handlers = json::array();
    for (const HandlerInfo& h : a.handlers) {
      j_handlers.push_back(json{{"method", h.method},
                                {"message", h.message},
                                {"message_id", h.message_id},
                                {"kind", std::string(HandlerKindName(h.kind))},
                                {"location", SourceLocationToJson(h.location)}});
    }
    j_actors.push_back(json{{"name", a.name},
                            {"namespaces", a.namespaces},
                            {"type_id", a.type_id},
                            {"state_size", a.state_size},
                            {"state_alignment", a.state_alignment},
                            {"zero_initialized", a.zero_initialized},
                            {"location", SourceLocationToJson(a.location)},
                            {"handlers", std::move(j_handlers)}});
  }
  json j_routes = json::array();
  for (const RouteInfo& r : routes) {
    json uses = json::array();
    for (const SourceLocation& l : r.uses) uses.push_back(SourceLocationToJson(l));
    j_routes.push_back(json{{"name", r.name}, {"id", r.id}, {"uses", std::move(uses)}});
  }
  return json{{"sources", std::move(j_sources)}, {"records", std::move(j_records)},
              {"enums", std::move(j_enums)},     {"actors", std::move(j_actors)},
              {"routes", std::move(j_routes)},   {"max_payload", max_payload}};
}

absl::StatusOr<HandlerModel> HandlerModel::FromJson(const json& j) {
  RK_ASSIGN_OR_RETURN(ObjectReader r, ObjectReader::Create(j, "model"));
  HandlerModel model;
  RK_ASSIGN_OR_RETURN(model.max_payload, r.Uint32("max_payload"));
  if (model.max_payload == 0) return Error(r.Path("max_payload"), "must be at least 1");

  // Sources.
  RK_ASSIGN_OR_RETURN(const json* sources, r.Array("sources"));
  std::set<std::string> source_names;
  for (size_t i = 0; i < sources->size(); ++i) {
    const std::string path = Index(r.Path("sources"), i);
    RK_ASSIGN_OR_RETURN(ObjectReader s, ObjectReader::Create((*sources)[i], path));
    SourceFile file;
    RK_ASSIGN_OR_RETURN(file.name, s.String("name", /*allow_empty=*/false));
    RK_ASSIGN_OR_RETURN(file.fragment, s.Bool("fragment"));
    RK_ASSIGN_OR_RETURN(file.contents, s.String("contents"));
    if (!source_names.insert(file.name).second) {
      return Error(s.Path("name"), absl::StrCat("duplicate source '", file.name, "'"));
    }
    model.sources.push_back(std::move(file));
  }

  // Records: each on its own first, then the references between them.
  RK_ASSIGN_OR_RETURN(const json* records, r.Array("records"));
  const std::string records_path = r.Path("records");
  std::map<std::string, size_t> record_index;
  for (size_t i = 0; i < records->size(); ++i) {
    RK_ASSIGN_OR_RETURN(RecordLayout rec, ReadRecord((*records)[i], Index(records_path, i)));
    if (!record_index.emplace(rec.name, i).second) {
      return Error(Index(records_path, i) + ".name", absl::StrCat("duplicate record '", rec.name, "'"));
    }
    if (rec.is_message() && rec.size > model.max_payload) {
      return Error(Index(records_path, i) + ".size",
                   absl::StrCat("message ", rec.name, " is ", rec.size, " bytes, larger than max_payload (",
                                model.max_payload, ")"));
    }
    model.records.push_back(std::move(rec));
  }
  // Enums (optional: manifests written before they were described have
  // none, and their enum fields are plain integers).
  const std::string enums_path = r.Path("enums");
  std::map<std::string, size_t> enum_index;
  if (r.Has("enums")) {
    RK_ASSIGN_OR_RETURN(const json* enums, r.Array("enums"));
    for (size_t i = 0; i < enums->size(); ++i) {
      RK_ASSIGN_OR_RETURN(EnumLayout e, ReadEnum((*enums)[i], Index(enums_path, i)));
      if (!enum_index.emplace(e.name, i).second) {
        return Error(Index(enums_path, i) + ".name", absl::StrCat("duplicate enum '", e.name, "'"));
      }
      if (record_index.count(e.name) != 0) {
        return Error(Index(enums_path, i) + ".name", absl::StrCat("'", e.name, "' is both a record and an enum"));
      }
      if (i > 0 && !(model.enums.back().name < e.name)) {
        return Error(Index(enums_path, i) + ".name",
                     absl::StrCat("enums must be sorted by name: '", e.name, "' comes after '", model.enums.back().name,
                                  "'"));
      }
      model.enums.push_back(std::move(e));
    }
  }

  std::vector<size_t> messages;  // indices into model.records
  for (size_t i = 0; i < model.records.size(); ++i) {
    if (model.records[i].is_message()) messages.push_back(i);
  }
  RK_RETURN_IF_ERROR(CheckDenseIds(
      messages.size(), 1, "message_id", [&](size_t k) { return model.records[messages[k]].message_id; },
      [&](size_t k) { return Index(records_path, messages[k]) + ".message_id"; }));

  for (size_t i = 0; i < model.records.size(); ++i) {
    const RecordLayout& rec = model.records[i];
    for (size_t k = 0; k < rec.fields.size(); ++k) {
      const FieldLayout& f = rec.fields[k];
      const std::string fpath = absl::StrCat(Index(records_path, i), ".fields[", k, "]");
      if (!f.enum_name.empty()) {
        auto e = enum_index.find(f.enum_name);
        if (e == enum_index.end()) {
          return Error(fpath + ".enum", absl::StrCat("names no enum of the model: '", f.enum_name, "'"));
        }
        const EnumLayout& en = model.enums[e->second];
        if (en.kind != f.kind) {
          return Error(fpath + ".kind",
                       absl::StrCat("'", std::string(FieldKindName(f.kind)), "' does not match the underlying type of ",
                                    en.name, " ('", std::string(FieldKindName(en.kind)), "')"));
        }
      }
      if (f.kind != FieldKind::kRecord) continue;
      auto it = record_index.find(f.record);
      if (it == record_index.end()) {
        return Error(fpath + ".record", absl::StrCat("names no record of the model: '", f.record, "'"));
      }
      const RecordLayout& nested = model.records[it->second];
      if (f.element_size != nested.size) {
        return Error(fpath + ".element_size", absl::StrCat(f.element_size, " does not match the size of ",
                                                           nested.name, " (", nested.size, " bytes)"));
      }
    }
  }
  // A record must not contain itself, directly or through others: the codec
  // and codegen walk nested records recursively. Depth-first search with the
  // usual three colours; the depth bound also catches absurd nesting.
  {
    enum Colour { kWhite, kGrey, kBlack };
    std::vector<Colour> colour(model.records.size(), kWhite);
    std::function<absl::Status(size_t, int)> visit = [&](size_t i, int depth) -> absl::Status {
      const RecordLayout& rec = model.records[i];
      if (depth > kMaxNesting) {
        return Error(Index(records_path, i), absl::StrCat("records nest more than ", kMaxNesting, " deep"));
      }
      colour[i] = kGrey;
      for (size_t k = 0; k < rec.fields.size(); ++k) {
        const FieldLayout& f = rec.fields[k];
        if (f.kind != FieldKind::kRecord) continue;
        const size_t next = record_index.at(f.record);
        if (colour[next] == kGrey) {
          return Error(absl::StrCat(Index(records_path, i), ".fields[", k, "].record"),
                       absl::StrCat("record ", rec.name, " contains itself through '", f.record, "'"));
        }
        if (colour[next] == kWhite) RK_RETURN_IF_ERROR(visit(next, depth + 1));
      }
      colour[i] = kBlack;
      return absl::OkStatus();
    };
    for (size_t i = 0; i < model.records.size(); ++i) {
      if (colour[i] == kWhite) RK_RETURN_IF_ERROR(visit(i, 0));
    }
  }

  // Actors.
  RK_ASSIGN_OR_RETURN(const json* actors, r.Array("actors"));
  const std::string actors_path = r.Path("actors");
  std::set<std::string> actor_names;
  for (size_t i = 0; i < actors->size(); ++i) {
    const std::string apath = Index(actors_path, i);
    RK_ASSIGN_OR_RETURN(ActorInfo a, ReadActor((*actors)[i], apath));
    if (!actor_names.insert(a.name).second) {
      return Error(apath + ".name", absl::StrCat("duplicate actor '", a.name, "'"));
    }
    std::set<uint32_t> handled;
    for (size_t k = 0; k < a.handlers.size(); ++k) {
      const HandlerInfo& h = a.handlers[k];
      const std::string hpath = absl::StrCat(apath, ".handlers[", k, "]");
      const RecordLayout* message = model.FindMessage(h.message_id);
      if (message == nullptr) {
        return Error(hpath + ".message_id", absl::StrCat("names no message of the model: ", h.message_id));
      }
      if (message->name != h.message) {
        return Error(hpath + ".message", absl::StrCat("'", h.message, "' does not match message ", h.message_id,
                                                      ", which is '", message->name, "'"));
      }
      if (!handled.insert(h.message_id).second) {
        return Error(hpath + ".message_id", absl::StrCat("actor ", a.name, " has two handlers for ", h.message));
      }
    }
    model.actors.push_back(std::move(a));
  }
  RK_RETURN_IF_ERROR(CheckDenseIds(
      model.actors.size(), 0, "type_id", [&](size_t k) { return model.actors[k].type_id; },
      [&](size_t k) { return Index(actors_path, k) + ".type_id"; }));

  // Routes.
  RK_ASSIGN_OR_RETURN(const json* routes, r.Array("routes"));
  const std::string routes_path = r.Path("routes");
  std::set<std::string> route_names;
  for (size_t i = 0; i < routes->size(); ++i) {
    RK_ASSIGN_OR_RETURN(RouteInfo route, ReadRoute((*routes)[i], Index(routes_path, i)));
    if (!route_names.insert(route.name).second) {
      return Error(Index(routes_path, i) + ".name", absl::StrCat("duplicate route '", route.name, "'"));
    }
    model.routes.push_back(std::move(route));
  }
  RK_RETURN_IF_ERROR(CheckDenseIds(
      model.routes.size(), 0, "id", [&](size_t k) { return model.routes[k].id; },
      [&](size_t k) { return Index(routes_path, k) + ".id"; }));
  return model;
}

}  // namespace rk::jit
