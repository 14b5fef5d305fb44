// Copyright 2026 The RingKernel Authors.
//
// nvrtc_compiler.h: GeneratedUnit → ArchImage, with NVRTC.
//
// Each architecture is one NVRTC program; a cubin compile also yields the
// PTX it went through, which the package carries for GPUs newer than any of
// its cubins. NVRTC's log is fetched before the result is checked, and its
// diagnostics — `file(line): error: ...` followed by the source line and a
// caret — become Diagnostics at file:line:col in the user's files.
//
// Thread-safe: independent programs compile concurrently.
#ifndef RINGKERNEL_JIT_NVRTC_COMPILER_H_
#define RINGKERNEL_JIT_NVRTC_COMPILER_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "jit/codegen.h"
#include "jit/compiled_image.h"
#include "jit/handler_model.h"

namespace rk::jit {

struct NvrtcOutput {
  ArchImage cubin;  // kind kCubin, arch "sm_XY"
  ArchImage ptx;    // kind kPtx, arch "compute_XY"
};

// Compiles `unit` for `arch` ("sm_89", "sm_90"). On a compile error returns
// InvalidArgument carrying the formatted diagnostics (which are also
// appended to `*diagnostics`); warnings are appended either way.
absl::StatusOr<NvrtcOutput> CompileForArch(const GeneratedUnit& unit, const std::string& arch, bool line_info,
                                           std::vector<Diagnostic>* diagnostics);

// "13.0".
std::string NvrtcVersion();

// Parses an NVRTC log into diagnostics (exposed for tests).
std::vector<Diagnostic> ParseNvrtcLog(const std::string& log);

// Reads ptxas's `-v` report for `entry` from an NVRTC log.
ResourceUsage ParsePtxasResources(const std::string& log, const std::string& entry);

}  // namespace rk::jit

#endif  // RINGKERNEL_JIT_NVRTC_COMPILER_H_
