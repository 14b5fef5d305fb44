// Copyright 2026 The RingKernel Authors.
//
// builder.h: the whole compile pipeline, with the cache —
//   Sources → HandlerModel → GeneratedUnit → images → Package.
//
// One entry point for `actorc build`, `Runtime::CompileFiles/CompileSources`
// and the tests. The NVRTC compiles of the architectures run concurrently.
//
// Caching: a build is keyed by everything that determines its output — the
// fragments' names and contents, the build options, the versions of
// RingKernel, of its device headers (their contents), of NVRTC — and the
// cached entry is the finished package. A hit is checked before use: the
// headers the fragments included must still have the contents the package
// recorded, and codegen run on the cached model must reproduce the cached
// generated unit; otherwise the build runs again and replaces the entry. So a
// cached build costs reading the fragments and one cache file, not a parse.
//
// Example:
//   RK_ASSIGN_OR_RETURN(rk::jit::Builder builder, rk::jit::Builder::Create({}));
//   std::vector<rk::jit::Diagnostic> diags;
//   auto result = builder.BuildFiles({"bank.cu"}, rk::jit::BuildOptions{}, &diags);
#ifndef RINGKERNEL_JIT_BUILDER_H_
#define RINGKERNEL_JIT_BUILDER_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "jit/cache.h"
#include "jit/handler_model.h"
#include "jit/package.h"

namespace rk::jit {

// Where the time of one build went, in milliseconds.
struct BuildTimings {
  double read_ms = 0;      // reading fragments
  double lookup_ms = 0;    // cache lookup (and verification of a hit)
  double parse_ms = 0;     // clang front-end
  double codegen_ms = 0;
  double compile_ms = 0;   // NVRTC, all architectures (wall clock, concurrent)
  std::map<std::string, double> arch_ms;  // NVRTC per architecture
  double store_ms = 0;     // writing the cache entry
  double total_ms = 0;
};

struct BuildResult {
  Package package;
  bool cache_hit = false;
  BuildTimings timings;
};

class Builder {
 public:
  struct Options {
    bool use_cache = true;
    std::string cache_dir;  // empty: the environment's choice (cache.h)
  };

  // Opens the cache unless `use_cache` is false; its errors (an unwritable
  // directory) are returned here, before any work.
  static absl::StatusOr<Builder> Create(const Options& options);

  // Reads and builds fragments from disk.
  absl::StatusOr<BuildResult> BuildFiles(const std::vector<std::string>& paths, const BuildOptions& options,
                                         std::vector<Diagnostic>* diagnostics) const;

  // Builds in-memory fragments (runtime registration).
  absl::StatusOr<BuildResult> BuildSources(const std::vector<SourceFile>& fragments, const BuildOptions& options,
                                           std::vector<Diagnostic>* diagnostics) const;

  const std::optional<CompileCache>& cache() const { return cache_; }

 private:
  explicit Builder(std::optional<CompileCache> cache) : cache_(std::move(cache)) {}
  std::optional<CompileCache> cache_;
};

// Validates build options: known architectures (ParseArch), a max payload in
// [16, 64 KiB]. InvalidArgument naming the bad option.
absl::Status ValidateBuildOptions(const BuildOptions& options);
// Validated options with the architectures written "sm_XY", sorted, once
// each (so "90,sm_90" and "sm_90" build — and cache — the same).
absl::StatusOr<BuildOptions> NormalizeBuildOptions(const BuildOptions& options);

}  // namespace rk::jit

#endif  // RINGKERNEL_JIT_BUILDER_H_
