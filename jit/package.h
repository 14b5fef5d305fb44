// Copyright 2026 The RingKernel Authors.
//
// package.h: the `.rkpkg` file — a program built ahead of time.
//
// A package holds the HandlerModel (actors, handlers and their ids, message
// layouts, routes, sources), the build options, the toolchain versions and
// one image per architecture. It is versioned and every part is checksummed:
// ReadPackage refuses a truncated, corrupted or foreign file with an error
// that says which check failed, and never crashes on one.
//
// File format (little-endian):
//   magic "RKPKG\r\n\x1a" (8 bytes) | u32 format version | u32 section count
//   | u64 total file size | u64 xxh64 of the section table       (32 bytes)
//   | section table: count × {u32 kind, u32 reserved (0), u64 offset,
//                              u64 size, u64 xxh64 of the section} (32 bytes each)
//   | section bytes...
// Section kinds: 1 = manifest (JSON), 2 = image. The manifest is section 0
// and the only one; image sections follow in the order of the manifest's
// "images" array. Sections are laid out back to back in table order, with
// no gaps, and the last ends at the end of the file: every byte of a package
// is covered by a check.
//
// The manifest is a JSON object (compact, keys sorted, so equal packages
// serialise to equal bytes):
//   {"format_version": 1, "toolchain": Toolchain::ToJson(),
//    "options": BuildOptions::ToJson(), "model": HandlerModel::ToJson(),
//    "generated_source": "...",
//    "warnings": [{"severity": "warning" | "note",
//                  "location": {"file": "...", "line": N, "column": N},
//                  "message": "..."}, ...],
//    "images": [{"arch": "sm_90", "kind": "cubin" | "ptx",
//                "resources": ResourceUsageToJson(), "log": "...",
//                "size": N, "xxh64": "<16 hex digits>"}, ...]}
// "warnings" may be absent (packages written before it was added): none.
// Text that is not valid UTF-8 (in sources, logs, generated code) is written
// with U+FFFD in place of the bad bytes: JSON strings can't hold them.
//
// ParsePackage's errors, each prefixed with the package's name:
//   * DataLoss: empty, truncated or oversized files, a section table or a
//     section out of bounds, overlapping or with gaps, checksum mismatches
//     (naming the section), images missing or extra, image metadata that does
//     not match the image's bytes;
//   * InvalidArgument: not a package (wrong magic), a manifest that is not
//     JSON or does not match the schema (with the path of the bad value, e.g.
//     "manifest.model.records[2].fields[0].offset: ..."), an architecture
//     listed twice, a cubin that is not ELF;
//   * FailedPrecondition: another format version, or images built for
//     another device ABI (rk::kAbiVersion): rebuild with this actorc.
//
// Example:
//   RK_RETURN_IF_ERROR(rk::jit::WritePackage(pkg, "bank.rkpkg"));
//   RK_ASSIGN_OR_RETURN(rk::jit::Package p, rk::jit::ReadPackage("bank.rkpkg"));
//   const rk::jit::ArchImage* img = rk::jit::SelectImage(p, 90);
#ifndef RINGKERNEL_JIT_PACKAGE_H_
#define RINGKERNEL_JIT_PACKAGE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "jit/compiled_image.h"
#include "jit/handler_model.h"
#include "nlohmann/json.hpp"

namespace rk::jit {

inline constexpr uint32_t kPackageFormatVersion = 1;

// How the program was built.
struct BuildOptions {
  std::vector<std::string> archs = {"sm_89", "sm_90"};  // cubins; PTX is added for the newest
  bool ptx = true;                      // also carry PTX for newer GPUs
  uint32_t max_payload = 4096;          // bytes
  bool line_info = true;                // -lineinfo, for compute-sanitizer and profilers
  std::vector<std::string> defines;     // -D for the fragments
  std::vector<std::string> include_dirs;

  nlohmann::json ToJson() const;
  static absl::StatusOr<BuildOptions> FromJson(const nlohmann::json& json);
  friend bool operator==(const BuildOptions&, const BuildOptions&) = default;
};

// Versions of what produced a package.
struct Toolchain {
  std::string ringkernel;   // project version
  uint32_t abi = 0;         // rk::kAbiVersion of the device headers
  std::string nvrtc;        // "13.0"
  std::string libclang;     // clang_getClangVersion()

  nlohmann::json ToJson() const;
  static absl::StatusOr<Toolchain> FromJson(const nlohmann::json& json);
  friend bool operator==(const Toolchain&, const Toolchain&) = default;
};

struct Package {
  HandlerModel model;
  BuildOptions options;
  Toolchain toolchain;
  std::vector<ArchImage> images;
  std::string generated_source;  // the CUDA unit codegen produced (for inspect and debugging)
  // What the build warned of (the front-end's and NVRTC's warnings and
  // notes, and a warning for each architecture whose kernel spills): a build
  // that hits the compile cache reports them again, and `actorc inspect`
  // and Program::warnings() show them. Never errors: a build with errors
  // makes no package.
  std::vector<Diagnostic> warnings;

  friend bool operator==(const Package&, const Package&) = default;
};

// Serialises `package`; the bytes are deterministic for equal packages.
std::string SerializePackage(const Package& package);
// Validates and parses package bytes; `name` is used in error messages.
absl::StatusOr<Package> ParsePackage(std::string_view bytes, std::string_view name = "package");

// Writes atomically (temporary file + rename). Errors name the path.
absl::Status WritePackage(const Package& package, const std::string& path);
absl::StatusOr<Package> ReadPackage(const std::string& path);

// The image for a device of compute capability `capability` (major*10+minor):
// its exact cubin, else the newest PTX not newer than the device, else null.
const ArchImage* SelectImage(const Package& package, int capability);

// "sm_89, sm_90, compute_90 (PTX)": what a package can run on, for errors.
std::string DescribeImages(const Package& package);

}  // namespace rk::jit

#endif  // RINGKERNEL_JIT_PACKAGE_H_
