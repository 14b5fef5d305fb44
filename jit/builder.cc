// Copyright 2026 The RingKernel Authors.
#include "jit/builder.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "jit/codegen.h"
#include "jit/embedded_files.h"
#include "jit/frontend.h"
#include "jit/nvrtc_compiler.h"
#include "ringkernel/device/system_layout.h"
#include "ringkernel/status_macros.h"

#ifndef RK_VERSION
#define RK_VERSION "0.0.0"
#endif

namespace rk::jit {
namespace {

using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

// Bump when the front-end's or codegen's output changes for the same input
// in a way the other checks of a cache hit would not notice. 2: the model
// describes enums (a cached model without them would give host headers
// with plain integers for enum fields). 3: packages keep the build's
// warnings (a cached package without them would hit and report none).
constexpr uint64_t kPipelineRevision = 3;

// A kernel that spills keeps some of its values in local memory; where
// those are the worker loop's, every message of every actor pays for the
// trips. A warning per architecture that spills, from ptxas's figures.
std::vector<Diagnostic> SpillWarnings(const std::vector<ArchImage>& images) {
  std::vector<Diagnostic> out;
  for (const ArchImage& image : images) {
    const ResourceUsage& r = image.resources;
    if (image.kind != ImageKind::kCubin || (r.spill_store_bytes <= 0 && r.spill_load_bytes <= 0)) continue;
    Diagnostic d;
    d.severity = DiagnosticSeverity::kWarning;
    d.message = absl::StrCat(
        image.arch, ": the system kernel spills registers to local memory (", r.registers, " registers, ",
        std::max(r.spill_store_bytes, 0), " B of spill stores, ", std::max(r.spill_load_bytes, 0),
        " B of spill loads); the worker loop that runs every actor may be slower for it on this architecture. "
        "Handlers that keep many values live at once (large unrolled loops, big structs copied by value) are the "
        "usual cause; `actorc inspect` shows each architecture's registers and spills");
    out.push_back(std::move(d));
  }
  return out;
}

std::string BuildKey(const std::vector<SourceFile>& fragments, const BuildOptions& options) {
  CacheKeyBuilder key;
  key.Add("pipeline", "ringkernel-build")
      .Add("revision", kPipelineRevision)
      .Add("version", RK_VERSION)
      .Add("abi", static_cast<uint64_t>(rk::kAbiVersion))
      .Add("nvrtc", NvrtcVersion())
      .Add("options", options.ToJson().dump());
  for (const EmbeddedFile& f : EmbeddedDeviceHeaders()) {
    key.Add("device-header", f.path).Add("contents", f.contents);
  }
  for (const SourceFile& f : fragments) key.Add("fragment", f.name).Add("contents", f.contents);
  return key.Finish();
}

// Finds a header the way the front-end does — next to a fragment, then in the
// include directories — and compares its contents with the recorded ones.
bool HeaderUnchanged(const SourceFile& header, const std::vector<SourceFile>& fragments, const BuildOptions& options) {
  std::vector<std::string> dirs;
  for (const SourceFile& f : fragments) {
    dirs.push_back(std::filesystem::path(f.name).parent_path().string());
  }
  for (const std::string& d : options.include_dirs) dirs.push_back(d);
  for (const SourceFile& f : fragments) {
    // In-memory fragments may include one another by name.
    if (f.name == header.name) return f.contents == header.contents;
  }
  for (const std::string& dir : dirs) {
    const std::filesystem::path p = dir.empty() ? std::filesystem::path(header.name) : std::filesystem::path(dir) / header.name;
    std::ifstream in(p, std::ios::binary);
    if (!in) continue;
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str() == header.contents;
  }
  return false;
}

Toolchain CurrentToolchain() {
  Toolchain t;
  t.ringkernel = RK_VERSION;
  t.abi = rk::kAbiVersion;
  t.nvrtc = NvrtcVersion();
  absl::StatusOr<std::string> clang = LibclangVersion();
  t.libclang = clang.ok() ? *clang : "unavailable";
  return t;
}

}  // namespace

absl::Status ValidateBuildOptions(const BuildOptions& options) {
  if (options.archs.empty()) {
    return absl::InvalidArgumentError("no architecture to build for: give at least one, e.g. --arch sm_90");
  }
  for (const std::string& a : options.archs) {
    RK_ASSIGN_OR_RETURN(int cc, ParseArch(a));
    (void)cc;
  }
  if (options.max_payload < 16 || options.max_payload > 65536) {
    return absl::InvalidArgumentError(
        absl::StrCat("max payload ", options.max_payload, " bytes is out of range: it must be between 16 and 65536"));
  }
  return absl::OkStatus();
}

absl::StatusOr<BuildOptions> NormalizeBuildOptions(const BuildOptions& options) {
  RK_RETURN_IF_ERROR(ValidateBuildOptions(options));
  BuildOptions out = options;
  std::vector<int> caps;
  for (const std::string& a : options.archs) {
    RK_ASSIGN_OR_RETURN(int cc, ParseArch(a));
    if (std::find(caps.begin(), caps.end(), cc) == caps.end()) caps.push_back(cc);
  }
  std::sort(caps.begin(), caps.end());
  out.archs.clear();
  for (int cc : caps) out.archs.push_back(absl::StrCat("sm_", cc));
  return out;
}

absl::StatusOr<Builder> Builder::Create(const Options& options) {
  if (!options.use_cache) return Builder(std::nullopt);
  RK_ASSIGN_OR_RETURN(CompileCache cache, CompileCache::Open(options.cache_dir));
  return Builder(std::move(cache));
}

absl::StatusOr<BuildResult> Builder::BuildFiles(const std::vector<std::string>& paths, const BuildOptions& options,
                                                std::vector<Diagnostic>* diagnostics) const {
  const Clock::time_point start = Clock::now();
  RK_ASSIGN_OR_RETURN(std::vector<SourceFile> fragments, ReadFragments(paths));
  const double read_ms = MsSince(start);
  RK_ASSIGN_OR_RETURN(BuildResult result, BuildSources(fragments, options, diagnostics));
  result.timings.read_ms = read_ms;
  result.timings.total_ms = MsSince(start);
  return result;
}

absl::StatusOr<BuildResult> Builder::BuildSources(const std::vector<SourceFile>& fragments,
                                                  const BuildOptions& requested,
                                                  std::vector<Diagnostic>* diagnostics) const {
  const Clock::time_point start = Clock::now();
  RK_ASSIGN_OR_RETURN(const BuildOptions options, NormalizeBuildOptions(requested));
  if (fragments.empty()) return absl::InvalidArgumentError("no handler fragments to build");
  std::vector<Diagnostic> local_diags;
  if (diagnostics == nullptr) diagnostics = &local_diags;
  // This build's diagnostics start here (the caller's list may hold others).
  const size_t first_diagnostic = diagnostics->size();
  BuildResult result;

  // The cache, first.
  std::string key;
  if (cache_.has_value()) {
    const Clock::time_point t = Clock::now();
    key = BuildKey(fragments, options);
    absl::StatusOr<std::optional<std::string>> lookup = cache_->Lookup(key);
    if (!lookup.ok()) {
      // A damaged cache is the environment's problem, not the fragments'.
      return absl::FailedPreconditionError(absl::StrCat("the compile cache is unusable: ", lookup.status().message()));
    }
    std::optional<std::string>& hit = *lookup;
    if (hit.has_value()) {
      absl::StatusOr<Package> cached = ParsePackage(*hit, cache_->EntryPath(key));
      bool valid = cached.ok();
      if (valid) {
        for (const SourceFile& s : cached->model.sources) {
          if (!s.fragment && !HeaderUnchanged(s, fragments, options)) {
            valid = false;
            break;
          }
        }
      }
      if (valid) {
        absl::StatusOr<GeneratedUnit> unit = GenerateUnit(cached->model, options);
        valid = unit.ok() && unit->source == cached->generated_source;
      }
      result.timings.lookup_ms = MsSince(t);
      if (valid) {
        result.package = *std::move(cached);
        result.cache_hit = true;
        // What the build warned of, again: a hit says what a build would.
        diagnostics->insert(diagnostics->end(), result.package.warnings.begin(), result.package.warnings.end());
        result.timings.total_ms = MsSince(start);
        return result;
      }
    }
    result.timings.lookup_ms = MsSince(t);
  }

  // Parse.
  Clock::time_point t = Clock::now();
  FrontendOptions fe;
  fe.include_dirs = options.include_dirs;
  fe.defines = options.defines;
  fe.max_payload = options.max_payload;
  RK_ASSIGN_OR_RETURN(HandlerModel model, ParseFragments(fragments, fe, diagnostics));
  result.timings.parse_ms = MsSince(t);

  // Codegen.
  t = Clock::now();
  RK_ASSIGN_OR_RETURN(GeneratedUnit unit, GenerateUnit(model, options));
  result.timings.codegen_ms = MsSince(t);

  // NVRTC, one thread per architecture.
  t = Clock::now();
  const size_t n = options.archs.size();
  std::vector<absl::StatusOr<NvrtcOutput>> outputs(n, absl::UnknownError("not compiled"));
  std::vector<std::vector<Diagnostic>> arch_diags(n);
  std::vector<double> arch_ms(n);
  {
    std::vector<std::thread> threads;
    for (size_t i = 0; i < n; ++i) {
      threads.emplace_back([&, i] {
        const Clock::time_point ta = Clock::now();
        outputs[i] = CompileForArch(unit, options.archs[i], options.line_info, &arch_diags[i]);
        arch_ms[i] = MsSince(ta);
      });
    }
    for (std::thread& th : threads) th.join();
  }
  result.timings.compile_ms = MsSince(t);
  // The same warning appears once per architecture; report it once.
  for (const Diagnostic& d : arch_diags[0]) diagnostics->push_back(d);
  for (size_t i = 0; i < n; ++i) {
    result.timings.arch_ms[options.archs[i]] = arch_ms[i];
    if (!outputs[i].ok()) return outputs[i].status();
  }

  Package& pkg = result.package;
  pkg.model = std::move(model);
  pkg.options = options;
  pkg.toolchain = CurrentToolchain();
  pkg.generated_source = unit.source;
  int newest = -1;
  size_t newest_index = 0;
  for (size_t i = 0; i < n; ++i) {
    pkg.images.push_back(outputs[i]->cubin);
    const int cc = pkg.images.back().capability();
    if (cc > newest) {
      newest = cc;
      newest_index = i;
    }
  }
  if (options.ptx) pkg.images.push_back(outputs[newest_index]->ptx);
  for (Diagnostic& d : SpillWarnings(pkg.images)) diagnostics->push_back(std::move(d));
  for (size_t i = first_diagnostic; i < diagnostics->size(); ++i) {
    if ((*diagnostics)[i].severity != DiagnosticSeverity::kError) pkg.warnings.push_back((*diagnostics)[i]);
  }

  if (cache_.has_value()) {
    t = Clock::now();
    RK_RETURN_IF_ERROR(cache_->Store(key, SerializePackage(pkg)));
    result.timings.store_ms = MsSince(t);
  }
  result.timings.total_ms = MsSince(start);
  return result;
}

}  // namespace rk::jit
