// Copyright 2026 The RingKernel Authors.
//
// frontend.h: the clang front-end — Sources → HandlerModel.
//
// Parses handler fragments with libclang 16 (opened at run time, see
// clang_api.h) as C++17 for the nvptx64 target, so that layouts are the
// device's. Device builtins (threadIdx, atomics, math, ...) come from
// `ringkernel/device/parse_shim.h`, the RingKernel headers from the embedded
// copies: no CUDA or C++ include path is needed.
//
// It finds `RK_ACTOR` types, their `RK_HANDLER` / `RK_BLOCK_HANDLER`
// methods, the message types (handler parameters, `ctx.send`/`ctx.reply`
// arguments and `RK_MESSAGE` types) with their exact layouts, the routes
// used (`rk::route("name")`) and whether an actor's state needs more than
// zeroing. Whatever breaks the fragment contract is reported as a
// `file:line:col: error: ...` diagnostic at the user's line.
//
// Example:
//   std::vector<rk::jit::Diagnostic> diags;
//   auto model = rk::jit::ParseFragments({{"bank.cu", source}}, {}, &diags);
//   if (!model.ok()) std::cerr << rk::jit::FormatDiagnostics(diags);
#ifndef RINGKERNEL_JIT_FRONTEND_H_
#define RINGKERNEL_JIT_FRONTEND_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "jit/handler_model.h"

namespace rk::jit {

struct FrontendOptions {
  std::vector<std::string> include_dirs;  // searched for `#include "..."` after the fragment's folder
  std::vector<std::string> defines;       // "NAME" or "NAME=VALUE", for fragments and NVRTC alike
  uint32_t max_payload = 4096;            // messages larger than this are rejected
};

// Reads fragments from disk. Errors name the file and the reason (NotFound,
// PermissionDenied, ...). Each SourceFile's name is the path as given.
absl::StatusOr<std::vector<SourceFile>> ReadFragments(const std::vector<std::string>& paths);

// Parses `fragments` (in-memory; their `fragment` flag is true) and returns
// the model. Every problem found is appended to `*diagnostics` (warnings
// too); with any error, the result is an InvalidArgument status whose message
// is the formatted error diagnostics. Headers the fragments include are read
// from the fragments' folders, then `include_dirs`, and are returned in the
// model's `sources` with `fragment == false`, named as they are spelled in
// the #include. Entries of `fragments` with `fragment == false` are in-memory
// headers: not compiled on their own, but found by quoted includes as if
// they were files of that name. Diagnostics name a fragment as given and a
// header by its path (relative to the working directory when below it). A
// FailedPrecondition status means libclang could not be loaded.
absl::StatusOr<HandlerModel> ParseFragments(const std::vector<SourceFile>& fragments,
                                            const FrontendOptions& options,
                                            std::vector<Diagnostic>* diagnostics);

// The version of the libclang the front-end uses ("... clang version
// 16.0.6 ..."), loading it if needed; FailedPrecondition without one.
absl::StatusOr<std::string> LibclangVersion();

}  // namespace rk::jit

#endif  // RINGKERNEL_JIT_FRONTEND_H_
