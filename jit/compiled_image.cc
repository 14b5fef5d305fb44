// Copyright 2026 The RingKernel Authors.
#include "jit/compiled_image.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace rk::jit {
namespace {

// The capability encoded in "sm_90", "compute_90" or "90", whatever its
// value; nullopt when the string has another shape. ParseArch adds the check
// against the supported list, while ArchImage::capability() must also work
// for images of architectures this build does not produce itself (a PTX image
// is selected by comparing capabilities).
std::optional<int> ArchNumber(std::string_view arch) {
  for (std::string_view prefix : {std::string_view("sm_"), std::string_view("compute_")}) {
    if (arch.substr(0, prefix.size()) == prefix) {
      arch.remove_prefix(prefix.size());
      break;
    }
  }
  // Two or three digits cover every capability NVIDIA has used (sm_20 ..
  // sm_120); anything longer is not an architecture and could overflow.
  if (arch.size() < 2 || arch.size() > 3) return std::nullopt;
  int value = 0;
  for (char c : arch) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + (c - '0');
  }
  if (arch[0] == '0') return std::nullopt;
  return value;
}

}  // namespace

int ArchImage::capability() const { return ArchNumber(arch).value_or(0); }

const std::vector<std::string>& SupportedArchs() {
  static const std::vector<std::string>* const kArchs = new std::vector<std::string>{"sm_89", "sm_90"};
  return *kArchs;
}

absl::StatusOr<int> ParseArch(const std::string& arch) {
  if (std::optional<int> number = ArchNumber(arch)) {
    for (const std::string& supported : SupportedArchs()) {
      if (ArchNumber(supported) == number) return *number;
    }
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown architecture '", arch, "': supported are ",
                                                 absl::StrJoin(SupportedArchs(), ", ")));
}

nlohmann::json ResourceUsageToJson(const ResourceUsage& r) {
  return nlohmann::json{
      {"registers", r.registers},           {"spill_store_bytes", r.spill_store_bytes},
      {"spill_load_bytes", r.spill_load_bytes}, {"shared_bytes", r.shared_bytes},
      {"stack_bytes", r.stack_bytes},       {"constant_bytes", r.constant_bytes},
  };
}

ResourceUsage ResourceUsageFromJson(const nlohmann::json& j) {
  // Lenient by design: resource numbers are informational, so a missing or
  // odd value reads as "unknown" (-1). ParsePackage validates them strictly
  // before calling this.
  auto get = [&j](const char* key) -> int32_t {
    if (!j.is_object()) return -1;
    auto it = j.find(key);
    if (it == j.end() || !it->is_number_integer()) return -1;
    if (it->is_number_unsigned()) {
      const uint64_t v = it->get<uint64_t>();
      return v <= static_cast<uint64_t>(std::numeric_limits<int32_t>::max()) ? static_cast<int32_t>(v) : -1;
    }
    const int64_t v = it->get<int64_t>();
    return v >= -1 && v <= std::numeric_limits<int32_t>::max() ? static_cast<int32_t>(v) : -1;
  };
  ResourceUsage r;
  r.registers = get("registers");
  r.spill_store_bytes = get("spill_store_bytes");
  r.spill_load_bytes = get("spill_load_bytes");
  r.shared_bytes = get("shared_bytes");
  r.stack_bytes = get("stack_bytes");
  r.constant_bytes = get("constant_bytes");
  return r;
}

}  // namespace rk::jit
