// Copyright 2026 The RingKernel Authors.
//
// The `.rkpkg` reader (jit/package.h) on arbitrary bytes. Two ways in, so
// that mutations get past the checksums to the manifest's schema:
//   * input that starts with 'R' (as the magic does) is a whole file;
//   * anything else is a manifest's text: the target wraps it in a valid
//     container, with one small image section for each entry of its
//     "images" array (a PTX text or an ELF stub, by the entry's "kind") and
//     that entry's "size" and "xxh64" set to match, so that every check up
//     to the manifest's schema passes.
// Properties: every error is DataLoss, InvalidArgument or FailedPrecondition
// and names the package; a package that parses serialises to bytes that
// parse to an equal package.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "jit/package.h"
#include "tests/fuzz/fuzz_support.h"
#include "xxhash.h"

namespace {

using nlohmann::json;

constexpr char kName[] = "fuzz.rkpkg";

void PutU32(std::string* out, uint32_t v) { out->append(reinterpret_cast<const char*>(&v), 4); }
void PutU64(std::string* out, uint64_t v) { out->append(reinterpret_cast<const char*>(&v), 8); }
uint64_t Hash64(std::string_view bytes) { return XXH64(bytes.data(), bytes.size(), 0); }

// The container of package.h around a manifest and image sections.
std::string Container(const std::string& manifest, const std::vector<std::string>& images) {
  std::vector<std::string_view> bodies = {manifest};
  for (const std::string& image : images) bodies.push_back(image);
  std::string table;
  uint64_t offset = 32 + 32 * bodies.size();
  for (size_t i = 0; i < bodies.size(); ++i) {
    PutU32(&table, i == 0 ? 1 : 2);
    PutU32(&table, 0);
    PutU64(&table, offset);
    PutU64(&table, bodies[i].size());
    PutU64(&table, Hash64(bodies[i]));
    offset += bodies[i].size();
  }
  std::string out("RKPKG\r\n\x1a", 8);
  PutU32(&out, rk::jit::kPackageFormatVersion);
  PutU32(&out, static_cast<uint32_t>(bodies.size()));
  PutU64(&out, offset);
  PutU64(&out, Hash64(table));
  out += table;
  for (std::string_view body : bodies) out.append(body.data(), body.size());
  return out;
}

std::string Wrap(std::string_view text) {
  json manifest = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (manifest.is_discarded() || !manifest.is_object() || !manifest.contains("images") ||
      !manifest["images"].is_array()) {
    return Container(std::string(text), {});
  }
  std::vector<std::string> images;
  json& list = manifest["images"];
  for (size_t i = 0; i < list.size(); ++i) {
    json& meta = list[i];
    const bool ptx = meta.is_object() && meta.contains("kind") && meta["kind"] == "ptx";
    images.push_back(ptx ? absl::StrCat("// image ", i, "\n.version 9.0\n.target sm_90\n")
                         : absl::StrCat("\x7f" "ELF image ", i));
    if (meta.is_object()) {
      meta["size"] = images.back().size();
      meta["xxh64"] = absl::StrFormat("%016x", Hash64(images.back()));
    }
  }
  return Container(manifest.dump(-1, ' ', false, json::error_handler_t::replace), images);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::string bytes = !input.empty() && input[0] == 'R' ? std::string(input) : Wrap(input);
  absl::StatusOr<rk::jit::Package> package = rk::jit::ParsePackage(bytes, kName);
  if (!package.ok()) {
    const absl::StatusCode code = package.status().code();
    const std::string message(package.status().message());
    FUZZ_CHECK(code == absl::StatusCode::kDataLoss || code == absl::StatusCode::kInvalidArgument ||
                   code == absl::StatusCode::kFailedPrecondition,
               "code %d: %s", static_cast<int>(code), message.c_str());
    FUZZ_CHECK(absl::StartsWith(message, absl::StrCat(kName, ": ")), "%s", message.c_str());
    return 0;
  }
  rk::jit::SelectImage(*package, 89);
  rk::jit::SelectImage(*package, 120);
  rk::jit::DescribeImages(*package);
  const std::string again = rk::jit::SerializePackage(*package);
  absl::StatusOr<rk::jit::Package> reparsed = rk::jit::ParsePackage(again, kName);
  FUZZ_CHECK(reparsed.ok(), "a parsed package, serialised, does not parse: %s",
             std::string(reparsed.status().message()).c_str());
  FUZZ_CHECK(*reparsed == *package, "a parsed package, serialised and parsed again, differs");
  return 0;
}
