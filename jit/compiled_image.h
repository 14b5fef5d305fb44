// Copyright 2026 The RingKernel Authors.
//
// compiled_image.h: the output of NVRTC — one image per architecture.
//
// A program is compiled to a cubin for each real architecture asked for
// (sm_89, sm_90) and to PTX for the newest virtual one, which the driver can
// compile for GPUs newer than any cubin. The loader picks the image that fits
// the device (SelectImage in package.h).
#ifndef RINGKERNEL_JIT_COMPILED_IMAGE_H_
#define RINGKERNEL_JIT_COMPILED_IMAGE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace rk::jit {

enum class ImageKind { kCubin, kPtx };

// What ptxas reported for the kernel entry; -1 where unknown (PTX images are
// compiled by the driver at load time, so theirs are unknown).
struct ResourceUsage {
  int32_t registers = -1;
  int32_t spill_store_bytes = -1;
  int32_t spill_load_bytes = -1;
  int32_t shared_bytes = -1;    // static shared memory
  int32_t stack_bytes = -1;     // per-thread stack frame
  int32_t constant_bytes = -1;

  bool known() const { return registers >= 0; }
  friend bool operator==(const ResourceUsage&, const ResourceUsage&) = default;
};

struct ArchImage {
  std::string arch;        // "sm_90" for a cubin, "compute_90" for PTX
  ImageKind kind = ImageKind::kCubin;
  std::string bytes;       // the cubin (ELF) or the PTX text
  ResourceUsage resources;
  std::string log;         // NVRTC's log (warnings; ptxas -v)

  // The compute capability the image targets, as major*10+minor (90 for sm_90).
  int capability() const;
  friend bool operator==(const ArchImage&, const ArchImage&) = default;
};

// Parses "sm_90" / "compute_90" / "90" into 90; InvalidArgument naming the
// string and the supported architectures otherwise.
absl::StatusOr<int> ParseArch(const std::string& arch);

// The architectures RingKernel builds cubins for.
const std::vector<std::string>& SupportedArchs();  // {"sm_89", "sm_90"}

nlohmann::json ResourceUsageToJson(const ResourceUsage& r);
ResourceUsage ResourceUsageFromJson(const nlohmann::json& j);

}  // namespace rk::jit

#endif  // RINGKERNEL_JIT_COMPILED_IMAGE_H_
