// Copyright 2026 The RingKernel Authors.
//
// The `.rkpkg` container. ParsePackage reads untrusted bytes, so every read
// is bounds-checked against the buffer before it happens, and the checks run
// outside-in: header, section table (checksummed), section placement, section
// checksums, then the manifest's JSON schema and its agreement with the
// image sections. The first failure is reported; nothing is parsed from a
// region whose checksum has not been verified.
#include "jit/package.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <bit>
#include <cerrno>
#include <cstring>
#include <limits>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "ringkernel/device/system_layout.h"
#include "ringkernel/status_macros.h"
#include "xxhash.h"

namespace rk::jit {
namespace {

using nlohmann::json;

static_assert(std::endian::native == std::endian::little,
              "the package format is little-endian and written with memcpy");

constexpr char kMagic[8] = {'R', 'K', 'P', 'K', 'G', '\r', '\n', '\x1a'};
constexpr size_t kHeaderBytes = 32;        // magic, version, count, total size, table hash
constexpr size_t kSectionEntryBytes = 32;  // kind, reserved, offset, size, hash
constexpr uint32_t kSectionManifest = 1;
constexpr uint32_t kSectionImage = 2;
// Larger files are not packages we wrote (cubins are a few MB); refusing them
// up front keeps a wrong path from exhausting memory.
constexpr uint64_t kMaxPackageBytes = uint64_t{1} << 30;

void PutU32(std::string* out, uint32_t v) {
  char b[4];
  std::memcpy(b, &v, 4);
  out->append(b, 4);
}
void PutU64(std::string* out, uint64_t v) {
  char b[8];
  std::memcpy(b, &v, 8);
  out->append(b, 8);
}
// Callers check bounds first.
uint32_t GetU32(std::string_view bytes, size_t at) {
  uint32_t v;
  std::memcpy(&v, bytes.data() + at, 4);
  return v;
}
uint64_t GetU64(std::string_view bytes, size_t at) {
  uint64_t v;
  std::memcpy(&v, bytes.data() + at, 8);
  return v;
}

uint64_t Hash64(std::string_view bytes) { return XXH64(bytes.data(), bytes.size(), 0); }
std::string Hex64(uint64_t v) { return absl::StrFormat("%016x", v); }

std::string ErrnoText(int err) { return std::strerror(err); }

// --- JSON reading with paths (the model has its own reader; these are the
// few shapes the rest of the manifest needs).

absl::Status SchemaError(const std::string& path, std::string_view problem) {
  return absl::InvalidArgumentError(absl::StrCat(path, ": ", std::string(problem)));
}

absl::StatusOr<const json*> Member(const json& obj, const std::string& path, const char* key) {
  if (!obj.is_object()) return SchemaError(path, absl::StrCat("expected an object, got ", obj.type_name()));
  auto it = obj.find(key);
  if (it == obj.end()) return SchemaError(absl::StrCat(path, ".", key), "missing");
  return &*it;
}

absl::StatusOr<std::string> StringMember(const json& obj, const std::string& path, const char* key) {
  RK_ASSIGN_OR_RETURN(const json* v, Member(obj, path, key));
  if (!v->is_string()) {
    return SchemaError(absl::StrCat(path, ".", key), absl::StrCat("expected a string, got ", v->type_name()));
  }
  return v->get<std::string>();
}

absl::StatusOr<bool> BoolMember(const json& obj, const std::string& path, const char* key) {
  RK_ASSIGN_OR_RETURN(const json* v, Member(obj, path, key));
  if (!v->is_boolean()) {
    return SchemaError(absl::StrCat(path, ".", key), absl::StrCat("expected true or false, got ", v->type_name()));
  }
  return v->get<bool>();
}

absl::StatusOr<uint64_t> UintMember(const json& obj, const std::string& path, const char* key,
                                    uint64_t max = std::numeric_limits<uint64_t>::max()) {
  RK_ASSIGN_OR_RETURN(const json* v, Member(obj, path, key));
  const std::string vpath = absl::StrCat(path, ".", key);
  // nlohmann parses non-negative integers as unsigned, but values built in
  // code may be signed and non-negative.
  if (!v->is_number_integer() || (!v->is_number_unsigned() && v->get<int64_t>() < 0)) {
    return SchemaError(vpath, absl::StrCat("expected a non-negative integer, got ",
                                           v->is_number() ? v->dump() : std::string(v->type_name())));
  }
  if (v->get<uint64_t>() > max) return SchemaError(vpath, absl::StrCat(v->get<uint64_t>(), " is larger than ", max));
  return v->get<uint64_t>();
}

absl::StatusOr<std::vector<std::string>> StringsMember(const json& obj, const std::string& path, const char* key) {
  RK_ASSIGN_OR_RETURN(const json* v, Member(obj, path, key));
  const std::string vpath = absl::StrCat(path, ".", key);
  if (!v->is_array()) return SchemaError(vpath, absl::StrCat("expected an array, got ", v->type_name()));
  std::vector<std::string> out;
  for (size_t i = 0; i < v->size(); ++i) {
    if (!(*v)[i].is_string()) {
      return SchemaError(absl::StrCat(vpath, "[", i, "]"), absl::StrCat("expected a string, got ", (*v)[i].type_name()));
    }
    out.push_back((*v)[i].get<std::string>());
  }
  return out;
}

// Resource numbers: -1 (unknown) or a non-negative int32.
absl::Status CheckResources(const json& j, const std::string& path) {
  if (!j.is_object()) return SchemaError(path, absl::StrCat("expected an object, got ", j.type_name()));
  for (const char* key :
       {"registers", "spill_store_bytes", "spill_load_bytes", "shared_bytes", "stack_bytes", "constant_bytes"}) {
    RK_ASSIGN_OR_RETURN(const json* v, Member(j, path, key));
    const bool ok = v->is_number_integer() &&
                    (v->is_number_unsigned() ? v->get<uint64_t>() <= uint64_t{std::numeric_limits<int32_t>::max()}
                                             : v->get<int64_t>() >= -1 &&
                                                   v->get<int64_t>() <= std::numeric_limits<int32_t>::max());
    if (!ok) return SchemaError(absl::StrCat(path, ".", key), absl::StrCat("expected -1 or a 32-bit count, got ", v->dump()));
  }
  return absl::OkStatus();
}

std::string_view ImageKindName(ImageKind kind) { return kind == ImageKind::kPtx ? "ptx" : "cubin"; }

json ImageMetadata(const ArchImage& image) {
  return json{{"arch", image.arch},
              {"kind", std::string(ImageKindName(image.kind))},
              {"resources", ResourceUsageToJson(image.resources)},
              {"log", image.log},
              {"size", image.bytes.size()},
              {"xxh64", Hex64(Hash64(image.bytes))}};
}

json WarningJson(const Diagnostic& d) {
  return json{{"severity", d.severity == DiagnosticSeverity::kNote ? "note" : "warning"},
              {"location", SourceLocationToJson(d.location)},
              {"message", d.message}};
}

// One of the build's warnings. An error is not a warning: a build with
// errors makes no package, so a package that lists one was not written by
// a build.
absl::StatusOr<Diagnostic> ReadWarning(const json& j, const std::string& path) {
  if (!j.is_object()) return SchemaError(path, absl::StrCat("expected an object, got ", j.type_name()));
  Diagnostic d;
  RK_ASSIGN_OR_RETURN(std::string severity, StringMember(j, path, "severity"));
  if (severity == "warning") {
    d.severity = DiagnosticSeverity::kWarning;
  } else if (severity == "note") {
    d.severity = DiagnosticSeverity::kNote;
  } else {
    return SchemaError(path + ".severity", absl::StrCat("expected \"warning\" or \"note\", got \"", severity, "\""));
  }
  RK_ASSIGN_OR_RETURN(const json* location, Member(j, path, "location"));
  RK_ASSIGN_OR_RETURN(d.location, SourceLocationFromJson(*location, path + ".location"));
  RK_ASSIGN_OR_RETURN(d.message, StringMember(j, path, "message"));
  return d;
}

// Reads one image's metadata and checks it against the bytes of its section.
absl::StatusOr<ArchImage> ReadImage(const json& meta, const std::string& path, std::string_view bytes) {
  if (!meta.is_object()) return SchemaError(path, absl::StrCat("expected an object, got ", meta.type_name()));
  ArchImage image;
  RK_ASSIGN_OR_RETURN(image.arch, StringMember(meta, path, "arch"));
  RK_ASSIGN_OR_RETURN(std::string kind, StringMember(meta, path, "kind"));
  if (kind == "cubin") {
    image.kind = ImageKind::kCubin;
  } else if (kind == "ptx") {
    image.kind = ImageKind::kPtx;
  } else {
    return SchemaError(path + ".kind", absl::StrCat("expected \"cubin\" or \"ptx\", got \"", kind, "\""));
  }
  // A cubin is built for a real architecture (sm_NN), PTX for a virtual one
  // (compute_NN); capability() is 0 for anything else.
  const std::string_view prefix = image.kind == ImageKind::kCubin ? "sm_" : "compute_";
  if (image.arch.rfind(prefix, 0) != 0 || image.capability() == 0) {
    return SchemaError(path + ".arch", absl::StrCat("'", image.arch, "' is not an architecture for a ", kind,
                                                    " image (expected ", std::string(prefix), "NN)"));
  }
  RK_ASSIGN_OR_RETURN(const json* resources, Member(meta, path, "resources"));
  RK_RETURN_IF_ERROR(CheckResources(*resources, path + ".resources"));
  image.resources = ResourceUsageFromJson(*resources);
  RK_ASSIGN_OR_RETURN(image.log, StringMember(meta, path, "log"));
  RK_ASSIGN_OR_RETURN(uint64_t size, UintMember(meta, path, "size"));
  RK_ASSIGN_OR_RETURN(std::string hash, StringMember(meta, path, "xxh64"));
  if (size != bytes.size()) {
    return absl::DataLossError(absl::StrCat(path, ".size: the manifest says ", size, " bytes but the image section holds ",
                                            bytes.size()));
  }
  if (hash != Hex64(Hash64(bytes))) {
    return absl::DataLossError(absl::StrCat(path, ".xxh64: ", hash, " does not match the image section (",
                                            Hex64(Hash64(bytes)), ")"));
  }
  if (bytes.empty()) return SchemaError(path, "the image is empty");
  if (image.kind == ImageKind::kCubin && bytes.substr(0, 4) != std::string_view("\x7f" "ELF", 4)) {
    return SchemaError(path, absl::StrCat("the ", image.arch, " cubin is not an ELF file"));
  }
  if (image.kind == ImageKind::kPtx && bytes.find('\0') != std::string_view::npos) {
    return SchemaError(path, absl::StrCat("the ", image.arch, " PTX contains a NUL byte"));
  }
  image.bytes = std::string(bytes);
  return image;
}

struct Section {
  uint32_t kind;
  uint64_t offset;
  uint64_t size;
  uint64_t hash;
};

std::string SectionName(size_t index, uint32_t kind) {
  if (kind == kSectionManifest) return absl::StrCat("section ", index, " (manifest)");
  if (kind == kSectionImage) return absl::StrCat("section ", index, " (image ", index - 1, ")");
  return absl::StrCat("section ", index);
}

absl::StatusOr<std::string> ReadWholeFile(const std::string& path, std::string_view what) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    return absl::Status(absl::ErrnoToStatusCode(err), absl::StrCat("cannot open ", std::string(what), " ", path, ": ",
                                                                   ErrnoText(err)));
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return absl::FailedPreconditionError(absl::StrCat("cannot read ", std::string(what), " ", path,
                                                      ": not a regular file"));
  }
  if (static_cast<uint64_t>(st.st_size) > kMaxPackageBytes) {
    close(fd);
    return absl::FailedPreconditionError(absl::StrCat(path, " is ", st.st_size, " bytes, too large to be a ",
                                                      std::string(what)));
  }
  std::string data(static_cast<size_t>(st.st_size), '\0');
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = read(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      close(fd);
      return absl::Status(absl::ErrnoToStatusCode(err), absl::StrCat("cannot read ", std::string(what), " ", path,
                                                                     ": ", ErrnoText(err)));
    }
    if (n == 0) break;  // shrank while we read: parse what is there, the size check will tell
    done += static_cast<size_t>(n);
  }
  data.resize(done);
  close(fd);
  return data;
}

}  // namespace

// --- BuildOptions and Toolchain.

json BuildOptions::ToJson() const {
  return json{{"archs", archs},           {"ptx", ptx},         {"max_payload", max_payload},
              {"line_info", line_info},   {"defines", defines}, {"include_dirs", include_dirs}};
}

absl::StatusOr<BuildOptions> BuildOptions::FromJson(const json& j) {
  const std::string path = "options";
  if (!j.is_object()) return SchemaError(path, absl::StrCat("expected an object, got ", j.type_name()));
  BuildOptions o;
  RK_ASSIGN_OR_RETURN(o.archs, StringsMember(j, path, "archs"));
  for (size_t i = 0; i < o.archs.size(); ++i) {
    // Well-formed is enough here: a newer actorc may build for architectures
    // this one does not know, and its images are checked on their own.
    if (o.archs[i].rfind("sm_", 0) != 0 || ArchImage{.arch = o.archs[i]}.capability() == 0) {
      return SchemaError(absl::StrCat(path, ".archs[", i, "]"),
                         absl::StrCat("'", o.archs[i], "' is not an architecture (expected sm_NN)"));
    }
  }
  RK_ASSIGN_OR_RETURN(o.ptx, BoolMember(j, path, "ptx"));
  RK_ASSIGN_OR_RETURN(uint64_t max_payload, UintMember(j, path, "max_payload", std::numeric_limits<uint32_t>::max()));
  if (max_payload == 0) return SchemaError(path + ".max_payload", "must be at least 1");
  o.max_payload = static_cast<uint32_t>(max_payload);
  RK_ASSIGN_OR_RETURN(o.line_info, BoolMember(j, path, "line_info"));
  RK_ASSIGN_OR_RETURN(o.defines, StringsMember(j, path, "defines"));
  RK_ASSIGN_OR_RETURN(o.include_dirs, StringsMember(j, path, "include_dirs"));
  return o;
}

json Toolchain::ToJson() const {
  return json{{"ringkernel", ringkernel}, {"abi", abi}, {"nvrtc", nvrtc}, {"libclang", libclang}};
}

absl::StatusOr<Toolchain> Toolchain::FromJson(const json& j) {
  const std::string path = "toolchain";
  if (!j.is_object()) return SchemaError(path, absl::StrCat("expected an object, got ", j.type_name()));
  Toolchain t;
  RK_ASSIGN_OR_RETURN(t.ringkernel, StringMember(j, path, "ringkernel"));
  RK_ASSIGN_OR_RETURN(uint64_t abi, UintMember(j, path, "abi", std::numeric_limits<uint32_t>::max()));
  t.abi = static_cast<uint32_t>(abi);
  RK_ASSIGN_OR_RETURN(t.nvrtc, StringMember(j, path, "nvrtc"));
  RK_ASSIGN_OR_RETURN(t.libclang, StringMember(j, path, "libclang"));
  return t;
}

// --- The container.

std::string SerializePackage(const Package& package) {
  json images = json::array();
  for (const ArchImage& image : package.images) images.push_back(ImageMetadata(image));
  json warnings = json::array();
  for (const Diagnostic& d : package.warnings) warnings.push_back(WarningJson(d));
  const json manifest{{"format_version", kPackageFormatVersion},
                      {"toolchain", package.toolchain.ToJson()},
                      {"options", package.options.ToJson()},
                      {"model", package.model.ToJson()},
                      {"generated_source", package.generated_source},
                      {"images", std::move(images)},
                      {"warnings", std::move(warnings)}};
  // nlohmann objects are sorted maps, so the text is deterministic. Text that
  // is not UTF-8 can't be written as a JSON string: such bytes become U+FFFD
  // rather than failing the build (sources and logs are informational).
  const std::string manifest_text = manifest.dump(-1, ' ', false, json::error_handler_t::replace);

  std::vector<std::string_view> bodies;
  std::vector<uint32_t> kinds;
  bodies.push_back(manifest_text);
  kinds.push_back(kSectionManifest);
  for (const ArchImage& image : package.images) {
    bodies.push_back(image.bytes);
    kinds.push_back(kSectionImage);
  }

  std::string table;
  uint64_t offset = kHeaderBytes + kSectionEntryBytes * bodies.size();
  for (size_t i = 0; i < bodies.size(); ++i) {
    PutU32(&table, kinds[i]);
    PutU32(&table, 0);
    PutU64(&table, offset);
    PutU64(&table, bodies[i].size());
    PutU64(&table, Hash64(bodies[i]));
    offset += bodies[i].size();
  }

  std::string out;
  out.reserve(offset);
  out.append(kMagic, sizeof(kMagic));
  PutU32(&out, kPackageFormatVersion);
  PutU32(&out, static_cast<uint32_t>(bodies.size()));
  PutU64(&out, offset);
  PutU64(&out, Hash64(table));
  out += table;
  for (std::string_view body : bodies) out.append(body.data(), body.size());
  return out;
}

absl::StatusOr<Package> ParsePackage(std::string_view bytes, std::string_view name_view) {
  const std::string name(name_view);
  auto data_loss = [&name](auto&&... parts) {
    return absl::DataLossError(absl::StrCat(name, ": ", parts...));
  };

  // Header.
  if (bytes.empty()) return data_loss("the file is empty, not a RingKernel package");
  const size_t magic_len = std::min(bytes.size(), sizeof(kMagic));
  if (std::memcmp(bytes.data(), kMagic, magic_len) != 0) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": not a RingKernel package (wrong magic bytes)"));
  }
  if (bytes.size() < kHeaderBytes) {
    return data_loss("truncated: ", bytes.size(), " bytes, shorter than the ", kHeaderBytes, "-byte header");
  }
  const uint32_t version = GetU32(bytes, 8);
  if (version != kPackageFormatVersion) {
    return absl::FailedPreconditionError(
        absl::StrCat(name, ": package format version ", version, " is not supported (this RingKernel reads version ",
                     kPackageFormatVersion, "); rebuild the package with this actorc"));
  }
  const uint32_t count = GetU32(bytes, 12);
  const uint64_t total = GetU64(bytes, 16);
  const uint64_t table_hash = GetU64(bytes, 24);
  if (total != bytes.size()) {
    if (total > bytes.size()) {
      return data_loss("truncated: the header says ", total, " bytes but there are only ", bytes.size());
    }
    return data_loss("the header says ", total, " bytes but there are ", bytes.size(), " (trailing data)");
  }

  // Section table.
  if (count == 0) return data_loss("the section table is empty");
  if (count > (bytes.size() - kHeaderBytes) / kSectionEntryBytes) {
    return data_loss("the section table (", count, " entries) extends past the end of the file");
  }
  const std::string_view table = bytes.substr(kHeaderBytes, size_t{count} * kSectionEntryBytes);
  if (Hash64(table) != table_hash) return data_loss("checksum mismatch in the section table");

  // Sections tile the rest of the file in table order, with no gaps and no
  // overlap, so every byte of the file is covered by some check.
  std::vector<Section> sections;
  uint64_t expected_offset = kHeaderBytes + table.size();
  for (size_t i = 0; i < count; ++i) {
    const size_t at = kHeaderBytes + i * kSectionEntryBytes;
    Section s{GetU32(bytes, at), GetU64(bytes, at + 8), GetU64(bytes, at + 16), GetU64(bytes, at + 24)};
    const std::string what = SectionName(i, s.kind);
    if (s.kind != kSectionManifest && s.kind != kSectionImage) return data_loss(what, " has unknown kind ", s.kind);
    if ((s.kind == kSectionManifest) != (i == 0)) {
      return data_loss(what, ": the manifest must be the first section and the only one");
    }
    if (GetU32(bytes, at + 4) != 0) return data_loss(what, " has a non-zero reserved field");
    if (s.offset > bytes.size() || s.size > bytes.size() - s.offset) {
      return data_loss(what, " (offset ", s.offset, ", ", s.size, " bytes) lies outside the file (", bytes.size(),
                       " bytes)");
    }
    if (s.offset < expected_offset) {
      return data_loss(what, " at offset ", s.offset, " overlaps what precedes it (which ends at ", expected_offset,
                       ")");
    }
    if (s.offset > expected_offset) {
      return data_loss(what, " at offset ", s.offset, " leaves a gap after offset ", expected_offset);
    }
    expected_offset = s.offset + s.size;
    sections.push_back(s);
  }
  if (expected_offset != bytes.size()) {
    return data_loss("the sections end at offset ", expected_offset, " but the file has ", bytes.size(), " bytes");
  }
  for (size_t i = 0; i < sections.size(); ++i) {
    if (Hash64(bytes.substr(sections[i].offset, sections[i].size)) != sections[i].hash) {
      return data_loss("checksum mismatch in ", SectionName(i, sections[i].kind));
    }
  }

  // Manifest.
  auto schema = [&name](const absl::Status& s) {
    return absl::Status(s.code(), absl::StrCat(name, ": manifest.", std::string(s.message())));
  };
  const std::string_view manifest_text = bytes.substr(sections[0].offset, sections[0].size);
  const json manifest = json::parse(manifest_text, nullptr, /*allow_exceptions=*/false);
  if (manifest.is_discarded()) return absl::InvalidArgumentError(absl::StrCat(name, ": the manifest is not valid JSON"));
  if (!manifest.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": the manifest is not a JSON object"));
  }
  auto member = [&](const char* key) -> absl::StatusOr<const json*> {
    auto it = manifest.find(key);
    if (it == manifest.end()) return absl::InvalidArgumentError(absl::StrCat(name, ": manifest.", key, ": missing"));
    return &*it;
  };
  {
    RK_ASSIGN_OR_RETURN(const json* v, member("format_version"));
    if (!v->is_number_integer() || v->get<int64_t>() != static_cast<int64_t>(version)) {
      return absl::InvalidArgumentError(absl::StrCat(name, ": manifest.format_version: ", v->dump(),
                                                     " does not match the header's version ", version));
    }
  }
  Package package;
  {
    RK_ASSIGN_OR_RETURN(const json* j, member("toolchain"));
    absl::StatusOr<Toolchain> t = Toolchain::FromJson(*j);
    if (!t.ok()) return schema(t.status());
    package.toolchain = *std::move(t);
  }
  if (package.toolchain.abi != kAbiVersion) {
    return absl::FailedPreconditionError(
        absl::StrCat(name, ": built for device ABI version ", package.toolchain.abi, " (RingKernel ",
                     package.toolchain.ringkernel, "), but this RingKernel uses ABI version ", kAbiVersion,
                     ": rebuild the package with this actorc"));
  }
  {
    RK_ASSIGN_OR_RETURN(const json* j, member("options"));
    absl::StatusOr<BuildOptions> o = BuildOptions::FromJson(*j);
    if (!o.ok()) return schema(o.status());
    package.options = *std::move(o);
  }
  {
    RK_ASSIGN_OR_RETURN(const json* j, member("model"));
    absl::StatusOr<HandlerModel> m = HandlerModel::FromJson(*j);
    if (!m.ok()) return schema(m.status());
    package.model = *std::move(m);
  }
  {
    RK_ASSIGN_OR_RETURN(const json* j, member("generated_source"));
    if (!j->is_string()) {
      return schema(absl::InvalidArgumentError(
          absl::StrCat("generated_source: expected a string, got ", j->type_name())));
    }
    package.generated_source = j->get<std::string>();
  }
  // Absent in packages written before builds kept their warnings.
  if (auto it = manifest.find("warnings"); it != manifest.end()) {
    if (!it->is_array()) {
      return schema(absl::InvalidArgumentError(absl::StrCat("warnings: expected an array, got ", it->type_name())));
    }
    for (size_t i = 0; i < it->size(); ++i) {
      absl::StatusOr<Diagnostic> d = ReadWarning((*it)[i], absl::StrCat("warnings[", i, "]"));
      if (!d.ok()) return schema(d.status());
      package.warnings.push_back(*std::move(d));
    }
  }

  // Images: the manifest's list and the image sections correspond one to one.
  RK_ASSIGN_OR_RETURN(const json* images_json, member("images"));
  if (!images_json->is_array()) {
    return schema(
        absl::InvalidArgumentError(absl::StrCat("images: expected an array, got ", images_json->type_name())));
  }
  const json& images = *images_json;
  const size_t image_sections = sections.size() - 1;
  if (images.size() != image_sections) {
    return data_loss("the manifest lists ", images.size(), " images but the file holds ", image_sections,
                     " image sections");
  }
  if (images.empty()) return absl::InvalidArgumentError(absl::StrCat(name, ": the package holds no images"));
  std::map<std::string, size_t> archs;
  for (size_t i = 0; i < images.size(); ++i) {
    const std::string path = absl::StrCat("images[", i, "]");
    const Section& s = sections[i + 1];
    absl::StatusOr<ArchImage> image = ReadImage(images[i], path, bytes.substr(s.offset, s.size));
    if (!image.ok()) return schema(image.status());
    auto [it, inserted] = archs.emplace(image->arch, i);
    if (!inserted) {
      return schema(absl::InvalidArgumentError(absl::StrCat(path, ".arch: '", image->arch,
                                                            "' appears twice (also images[", it->second, "])")));
    }
    package.images.push_back(*std::move(image));
  }
  return package;
}

absl::Status WritePackage(const Package& package, const std::string& path) {
  const std::string bytes = SerializePackage(package);
  // A temporary name in the same folder, so that rename() is atomic; O_EXCL
  // and a per-process counter keep concurrent writers apart. Mode 0666 lets
  // the umask decide, as for any file a build writes.
  static std::atomic<uint64_t> counter{0};
  std::string tmp;
  int fd = -1;
  for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
    tmp = absl::StrCat(path, ".tmp.", getpid(), ".", counter.fetch_add(1));
    fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) {
    const int err = errno;
    return absl::Status(absl::ErrnoToStatusCode(err),
                        absl::StrCat("cannot write package ", path, ": cannot create ", tmp, ": ", ErrnoText(err)));
  }
  auto fail = [&](int err, std::string_view step) {
    close(fd);
    unlink(tmp.c_str());
    return absl::Status(absl::ErrnoToStatusCode(err), absl::StrCat("cannot write package ", path, ": ",
                                                                   std::string(step), " failed: ", ErrnoText(err)));
  };
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail(errno, "write");
    done += static_cast<size_t>(n);
  }
  if (fsync(fd) != 0) return fail(errno, "fsync");
  if (close(fd) != 0) {
    const int err = errno;
    unlink(tmp.c_str());
    return absl::Status(absl::ErrnoToStatusCode(err),
                        absl::StrCat("cannot write package ", path, ": close failed: ", ErrnoText(err)));
  }
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    unlink(tmp.c_str());
    return absl::Status(absl::ErrnoToStatusCode(err),
                        absl::StrCat("cannot write package ", path, ": rename failed: ", ErrnoText(err)));
  }
  return absl::OkStatus();
}

absl::StatusOr<Package> ReadPackage(const std::string& path) {
  RK_ASSIGN_OR_RETURN(std::string bytes, ReadWholeFile(path, "package"));
  return ParsePackage(bytes, path);
}

const ArchImage* SelectImage(const Package& package, int capability) {
  for (const ArchImage& image : package.images) {
    if (image.kind == ImageKind::kCubin && image.capability() == capability) return &image;
  }
  const ArchImage* best = nullptr;
  for (const ArchImage& image : package.images) {
    if (image.kind != ImageKind::kPtx || image.capability() == 0 || image.capability() > capability) continue;
    if (best == nullptr || image.capability() > best->capability()) best = &image;
  }
  return best;
}

std::string DescribeImages(const Package& package) {
  if (package.images.empty()) return "no images";
  std::vector<std::string> parts;
  for (const ArchImage& image : package.images) {
    parts.push_back(image.kind == ImageKind::kPtx ? absl::StrCat(image.arch, " (PTX)") : image.arch);
  }
  return absl::StrJoin(parts, ", ");
}

}  // namespace rk::jit
