// Copyright 2026 The RingKernel Authors.
//
// JSON ⇄ message bytes. The layouts may come from a hand-built model as well
// as from a validated manifest, so before touching a record's bytes the codec
// re-checks that each field lies inside the record and that its sizes add
// up: every memcpy below is then in bounds by construction.
#include "jit/message_codec.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ringkernel/device/types.h"
#include "ringkernel/status_macros.h"

namespace rk::jit {
namespace {

using nlohmann::json;

// Guards recursion on models that were not validated (FromJson rejects
// cycles; a hand-built model might not).
constexpr int kMaxDepth = 64;
// The largest finite double that still rounds to a finite float (FLT_MAX plus
// half an ulp, exclusive): converting anything larger is undefined behaviour.
constexpr double kFloatOverflow = 0x1.ffffffp127;

std::string FieldNames(const RecordLayout& record) {
  std::vector<std::string> names;
  for (const FieldLayout& f : record.fields) names.push_back(f.name);
  return names.empty() ? "no fields" : absl::StrJoin(names, ", ");
}

std::string Join(const std::string& path, const std::string& name) { return path.empty() ? name : path + "." + name; }

// Checks that `record`'s fields fit inside it, with consistent sizes, and
// that nested records exist and match; returns them by field index.
absl::StatusOr<std::vector<const RecordLayout*>> CheckLayout(const HandlerModel& model, const RecordLayout& record) {
  std::vector<const RecordLayout*> nested(record.fields.size(), nullptr);
  for (size_t i = 0; i < record.fields.size(); ++i) {
    const FieldLayout& f = record.fields[i];
    auto bad = [&](std::string_view why) {
      return absl::InvalidArgumentError(absl::StrCat("the layout of ", record.name, " is inconsistent: field '",
                                                     f.name, "' ", std::string(why)));
    };
    if (f.offset > record.size || f.size > record.size - f.offset) return bad("ends past the end of the record");
    uint64_t total = f.element_size;
    for (uint64_t d : f.dims) {
      if (d == 0 || (total != 0 && d > std::numeric_limits<uint64_t>::max() / total)) return bad("has bad extents");
      total *= d;
    }
    if (total != f.size) return bad("has a size that is not element_size times its extents");
    if (f.kind == FieldKind::kRecord) {
      nested[i] = model.FindRecord(f.record);
      if (nested[i] == nullptr) return bad(absl::StrCat("names the unknown record '", f.record, "'"));
      if (nested[i]->size != f.element_size) return bad(absl::StrCat("does not match the size of ", f.record));
    } else if (f.element_size != FieldKindSize(f.kind) || f.element_size == 0) {
      return bad("has an element size that does not match its kind");
    }
  }
  return nested;
}

struct IntKind {
  int bytes;
  bool is_signed;
  int64_t min;   // for signed kinds (and char)
  uint64_t max;
};

IntKind IntKindOf(FieldKind kind) {
  switch (kind) {
    case FieldKind::kChar: return {1, true, -128, 255};  // text bytes: either spelling of a byte
    case FieldKind::kInt8: return {1, true, INT8_MIN, INT8_MAX};
    case FieldKind::kUInt8: return {1, false, 0, UINT8_MAX};
    case FieldKind::kInt16: return {2, true, INT16_MIN, INT16_MAX};
    case FieldKind::kUInt16: return {2, false, 0, UINT16_MAX};
    case FieldKind::kInt32: return {4, true, INT32_MIN, INT32_MAX};
    case FieldKind::kUInt32: return {4, false, 0, UINT32_MAX};
    case FieldKind::kInt64: return {8, true, INT64_MIN, INT64_MAX};
    default: return {8, false, 0, UINT64_MAX};
  }
}

// A byte sequence that reads well as a JSON string: valid UTF-8 without
// control characters other than tab, newline and carriage return.
bool IsText(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f) return false;
      ++i;
      continue;
    }
    int extra;
    uint32_t cp;
    if (c >= 0xc2 && c <= 0xdf) {
      extra = 1;
      cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
      extra = 2;
      cp = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      extra = 3;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (i + static_cast<size_t>(extra) >= s.size()) return false;
    for (int k = 1; k <= extra; ++k) {
      const unsigned char cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3f);
    }
    // Overlong forms, UTF-16 surrogates and code points past U+10FFFF.
    if ((extra == 2 && cp < 0x800) || (extra == 3 && (cp < 0x10000 || cp > 0x10ffff)) ||
        (cp >= 0xd800 && cp <= 0xdfff)) {
      return false;
    }
    i += static_cast<size_t>(extra) + 1;
  }
  return true;
}

class Encoder {
 public:
  Encoder(const HandlerModel& model, const ActorResolver& resolve, const std::string& message, std::string* out)
      : model_(model), resolve_(resolve), message_(message), out_(out) {}

  absl::Status Record(const RecordLayout& record, const json& value, uint64_t base, const std::string& path,
                      int depth) {
    if (depth > kMaxDepth) return Error(path, "records nest too deeply (is a record its own member?)");
    if (!value.is_object()) {
      return Error(path, absl::StrCat("expected a JSON object with the fields of ", record.name, " (",
                                      FieldNames(record), "), got ", value.type_name()));
    }
    RK_ASSIGN_OR_RETURN(std::vector<const RecordLayout*> nested, CheckLayout(model_, record));
    for (auto it = value.begin(); it != value.end(); ++it) {
      bool known = false;
      for (const FieldLayout& f : record.fields) known = known || f.name == it.key();
      if (!known) {
        return Error(Join(path, it.key()),
                     absl::StrCat("unknown field (", record.name, " has ", FieldNames(record), ")"));
      }
    }
    for (size_t i = 0; i < record.fields.size(); ++i) {
      const FieldLayout& f = record.fields[i];
      const std::string fpath = Join(path, f.name);
      auto it = value.find(f.name);
      if (it == value.end()) {
        return Error(fpath, absl::StrCat("missing field (", record.name, " needs ", FieldNames(record), ")"));
      }
      RK_RETURN_IF_ERROR(Array(f, nested[i], 0, *it, base + f.offset, fpath, depth));
    }
    return absl::OkStatus();
  }

 private:
  absl::Status Error(const std::string& path, std::string_view problem) const {
    if (path.empty()) return absl::InvalidArgumentError(absl::StrCat(message_, ": ", std::string(problem)));
    return absl::InvalidArgumentError(absl::StrCat(message_, ": ", path, ": ", std::string(problem)));
  }

  // Dimension `dim` of field `f` at byte `offset`.
  absl::Status Array(const FieldLayout& f, const RecordLayout* nested, size_t dim, const json& value, uint64_t offset,
                     const std::string& path, int depth) {
    if (dim == f.dims.size()) return Element(f, nested, value, offset, path, depth);
    const uint64_t extent = f.dims[dim];
    uint64_t stride = f.element_size;
    for (size_t d = dim + 1; d < f.dims.size(); ++d) stride *= f.dims[d];
    if (f.kind == FieldKind::kChar && dim + 1 == f.dims.size() && value.is_string()) {
      const std::string& s = value.get_ref<const std::string&>();
      if (s.size() > extent) {
        return Error(path, absl::StrCat("the string is ", s.size(), " bytes, more than the ", extent,
                                        " of char[", extent, "]"));
      }
      std::memcpy(out_->data() + offset, s.data(), s.size());  // the rest stays NUL
      return absl::OkStatus();
    }
    if (!value.is_array()) {
      return Error(path, absl::StrCat("expected an array of ", extent,
                                      f.kind == FieldKind::kChar && dim + 1 == f.dims.size() ? " chars or a string"
                                                                                             : " elements",
                                      ", got ", value.type_name()));
    }
    if (value.size() != extent) {
      return Error(path, absl::StrCat("expected ", extent, " elements, got ", value.size()));
    }
    for (uint64_t i = 0; i < extent; ++i) {
      RK_RETURN_IF_ERROR(
          Array(f, nested, dim + 1, value[i], offset + i * stride, absl::StrCat(path, "[", i, "]"), depth));
    }
    return absl::OkStatus();
  }

  absl::Status Element(const FieldLayout& f, const RecordLayout* nested, const json& value, uint64_t offset,
                       const std::string& path, int depth) {
    char* at = out_->data() + offset;
    switch (f.kind) {
      case FieldKind::kRecord:
        return Record(*nested, value, offset, path, depth + 1);
      case FieldKind::kBool: {
        if (!value.is_boolean()) return Error(path, absl::StrCat("expected true or false, got ", value.dump()));
        *at = value.get<bool>() ? 1 : 0;
        return absl::OkStatus();
      }
      case FieldKind::kFloat32:
      case FieldKind::kFloat64: {
        double d;
        if (value.is_number()) {
          d = value.get<double>();
        } else if (value == "nan") {
          d = std::numeric_limits<double>::quiet_NaN();
        } else if (value == "inf") {
          d = std::numeric_limits<double>::infinity();
        } else if (value == "-inf") {
          d = -std::numeric_limits<double>::infinity();
        } else {
          return Error(path, absl::StrCat("expected a number (or \"nan\", \"inf\", \"-inf\"), got ", value.dump()));
        }
        if (f.kind == FieldKind::kFloat64) {
          std::memcpy(at, &d, 8);
          return absl::OkStatus();
        }
        if (std::isfinite(d) && std::fabs(d) >= kFloatOverflow) {
          return Error(path, absl::StrCat(value.dump(), " does not fit in float32"));
        }
        const float x = static_cast<float>(d);
        std::memcpy(at, &x, 4);
        return absl::OkStatus();
      }
      case FieldKind::kActorId: {
        RK_ASSIGN_OR_RETURN(uint32_t id, ActorIdValue(value, path));
        std::memcpy(at, &id, 4);
        return absl::OkStatus();
      }
      case FieldKind::kChar:
        // A lone char takes a string of at most one byte, like char[1].
        if (value.is_string()) {
          const std::string& s = value.get_ref<const std::string&>();
          if (s.size() > 1) return Error(path, absl::StrCat("the string is ", s.size(), " bytes, a char holds 1"));
          *at = s.empty() ? 0 : s[0];
          return absl::OkStatus();
        }
        return Integer(f.kind, value, at, path);
      default:
        return Integer(f.kind, value, at, path);
    }
  }

  absl::Status Integer(FieldKind kind, const json& value, char* at, const std::string& path) {
    const IntKind k = IntKindOf(kind);
    const std::string range =
        k.is_signed ? absl::StrCat(k.min, "..", k.max) : absl::StrCat("0..", k.max);
    const std::string kind_name(FieldKindName(kind));
    auto too_big = [&] {
      return Error(path, absl::StrCat(value.dump(), " does not fit in ", kind_name, " (", range, ")"));
    };
    uint64_t bits;  // two's complement of the value
    // nlohmann parses non-negative integers as unsigned; values built in code
    // may be signed whatever their sign.
    if (value.is_number_unsigned() || (value.is_number_integer() && value.get<int64_t>() >= 0)) {
      const uint64_t u = value.get<uint64_t>();
      if (u > k.max) return too_big();
      bits = u;
    } else if (value.is_number_integer()) {  // negative
      const int64_t s = value.get<int64_t>();
      if (!k.is_signed || s < k.min) return too_big();
      bits = static_cast<uint64_t>(s);
    } else if (value.is_number_float()) {
      // Integral floats (1e3, 2.0) are accepted: some JSON writers produce them.
      const double d = value.get<double>();
      if (std::trunc(d) != d) return Error(path, absl::StrCat(value.dump(), " is not an integer (", kind_name, ")"));
      // Compare in double without converting out-of-range values: 2^63 and
      // 2^64 are exact doubles.
      if (d < 0) {
        if (!k.is_signed || d < static_cast<double>(k.min)) return too_big();
        bits = static_cast<uint64_t>(static_cast<int64_t>(d));
      } else {
        if (d >= 18446744073709551616.0 || (k.max != UINT64_MAX && d > static_cast<double>(k.max)) ||
            (k.max == INT64_MAX && d >= 9223372036854775808.0)) {
          return too_big();
        }
        bits = static_cast<uint64_t>(d);
      }
    } else {
      return Error(path, absl::StrCat("expected an integer (", kind_name, "), got ", value.dump()));
    }
    std::memcpy(at, &bits, static_cast<size_t>(k.bytes));  // little-endian: the low bytes first
    return absl::OkStatus();
  }

  absl::StatusOr<uint32_t> ActorIdValue(const json& value, const std::string& path) {
    if (value.is_null()) return kNoActorValue;
    if (value.is_object()) {
      auto it = value.find("actor_id");
      if (value.size() == 1 && it != value.end() && it->is_number_integer() && it->get<int64_t>() >= 0 &&
          it->get<int64_t>() <= int64_t{UINT32_MAX}) {
        return static_cast<uint32_t>(it->get<uint64_t>());
      }
      return Error(path, absl::StrCat("expected {\"actor_id\": <32-bit id>}, got ", value.dump()));
    }
    if (!value.is_string()) {
      return Error(path, absl::StrCat("expected an actor name, null or {\"actor_id\": N}, got ", value.dump()));
    }
    const std::string& name = value.get_ref<const std::string&>();
    if (name == "host") return kHostActorValue;
    if (!resolve_) return Error(path, absl::StrCat("cannot resolve actor '", name, "': no actor names are known"));
    absl::StatusOr<uint32_t> id = resolve_(name);
    if (!id.ok()) {
      return Error(path, absl::StrCat("unknown actor '", name, "' (", std::string(id.status().message()), ")"));
    }
    return *id;
  }

  const HandlerModel& model_;
  const ActorResolver& resolve_;
  const std::string& message_;
  std::string* out_;
};

class Decoder {
 public:
  Decoder(const HandlerModel& model, const ActorNamer& name_of, std::string_view bytes)
      : model_(model), name_of_(name_of), bytes_(bytes) {}

  absl::StatusOr<json> Record(const RecordLayout& record, uint64_t base, int depth) {
    if (depth > kMaxDepth) {
      return absl::InvalidArgumentError(absl::StrCat(record.name, ": records nest too deeply"));
    }
    RK_ASSIGN_OR_RETURN(std::vector<const RecordLayout*> nested, CheckLayout(model_, record));
    json out = json::object();
    for (size_t i = 0; i < record.fields.size(); ++i) {
      const FieldLayout& f = record.fields[i];
      RK_ASSIGN_OR_RETURN(out[f.name], Array(f, nested[i], 0, base + f.offset, depth));
    }
    return out;
  }

 private:
  absl::StatusOr<json> Array(const FieldLayout& f, const RecordLayout* nested, size_t dim, uint64_t offset,
                             int depth) {
    if (dim == f.dims.size()) {
      if (f.kind == FieldKind::kChar) return Chars(offset, 1);
      return Element(f, nested, offset, depth);
    }
    const uint64_t extent = f.dims[dim];
    if (f.kind == FieldKind::kChar && dim + 1 == f.dims.size()) return Chars(offset, extent);
    uint64_t stride = f.element_size;
    for (size_t d = dim + 1; d < f.dims.size(); ++d) stride *= f.dims[d];
    json out = json::array();
    for (uint64_t i = 0; i < extent; ++i) {
      RK_ASSIGN_OR_RETURN(json element, Array(f, nested, dim + 1, offset + i * stride, depth));
      out.push_back(std::move(element));
    }
    return out;
  }

  // `n` chars: a string up to the first NUL when the bytes are text and all
  // bytes after that NUL are zero, otherwise the byte values — so decoding
  // never loses what the bytes hold.
  json Chars(uint64_t offset, uint64_t n) const {
    const std::string_view all = bytes_.substr(offset, n);
    const size_t end = std::min(all.find('\0'), all.size());
    const std::string_view text = all.substr(0, end);
    const bool zero_tail = all.find_first_not_of('\0', end) == std::string_view::npos;
    if (zero_tail && IsText(text)) return std::string(text);
    if (n == 1) return static_cast<unsigned char>(all[0]);
    json out = json::array();
    for (char c : all) out.push_back(static_cast<unsigned char>(c));
    return out;
  }

  absl::StatusOr<json> Element(const FieldLayout& f, const RecordLayout* nested, uint64_t offset, int depth) {
    const char* at = bytes_.data() + offset;
    switch (f.kind) {
      case FieldKind::kRecord:
        return Record(*nested, offset, depth + 1);
      case FieldKind::kBool:
        return *at != 0;
      case FieldKind::kFloat32: {
        float x;
        std::memcpy(&x, at, 4);
        return Float(x);
      }
      case FieldKind::kFloat64: {
        double x;
        std::memcpy(&x, at, 8);
        return Float(x);
      }
      case FieldKind::kActorId: {
        uint32_t id;
        std::memcpy(&id, at, 4);
        if (id == kHostActorValue) return json("host");
        if (id == kNoActorValue) return json(nullptr);
        if (name_of_) {
          if (std::optional<std::string> name = name_of_(id)) return json(*name);
        }
        return json{{"actor_id", id}};
      }
      default: {
        const IntKind k = IntKindOf(f.kind);
        uint64_t bits = 0;
        std::memcpy(&bits, at, static_cast<size_t>(k.bytes));
        if (k.is_signed && k.bytes < 8 && (bits >> (8 * k.bytes - 1)) != 0) {
          bits |= ~uint64_t{0} << (8 * k.bytes);  // sign-extend
        }
        if (k.is_signed) return json(static_cast<int64_t>(bits));
        return json(bits);
      }
    }
  }

  static json Float(double x) {
    if (std::isnan(x)) return "nan";
    if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
    return x;
  }

  const HandlerModel& model_;
  const ActorNamer& name_of_;
  std::string_view bytes_;
};

}  // namespace

absl::StatusOr<std::string> EncodeMessage(const HandlerModel& model, const RecordLayout& record, const json& value,
                                          const ActorResolver& resolve) {
  if (record.size > model.max_payload) {
    return absl::InvalidArgumentError(absl::StrCat(record.name, " is ", record.size,
                                                   " bytes, more than the program's max payload (",
                                                   model.max_payload, ")"));
  }
  std::string out(record.size, '\0');  // padding stays zero
  Encoder encoder(model, resolve, record.name, &out);
  RK_RETURN_IF_ERROR(encoder.Record(record, value, 0, "", 0));
  return out;
}

absl::StatusOr<json> DecodeMessage(const HandlerModel& model, const RecordLayout& record, std::string_view bytes,
                                   const ActorNamer& name_of) {
  if (bytes.size() != record.size) {
    return absl::InvalidArgumentError(
        absl::StrCat(record.name, ": expected ", record.size, " bytes, got ", bytes.size()));
  }
  Decoder decoder(model, name_of, bytes);
  return decoder.Record(record, 0, 0);
}

}  // namespace rk::jit
