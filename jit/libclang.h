// Copyright 2026 The RingKernel Authors.
//
// libclang.h: what the rest of RingKernel may know about the libclang the
// front-end uses — whether it can be loaded, and its version — without
// seeing any clang header.
//
// The front-end opens libclang 16 (or newer) at run time rather than linking
// it (see clang_api.h, private to the front-end): a machine that only runs
// prebuilt packages needs no libclang. Where it looks, in order: the path in
// the environment variable RINGKERNEL_LIBCLANG (alone, when it is set and not
// empty), then the usual SONAMEs and paths of libclang 16 and newer on Debian
// and Ubuntu.
//
// Example (a package manifest records the parser that built it):
//   absl::StatusOr<std::string> version = rk::jit::LibclangVersion();
//   manifest["libclang"] = version.ok() ? *version : "unavailable";
#ifndef RINGKERNEL_JIT_LIBCLANG_H_
#define RINGKERNEL_JIT_LIBCLANG_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace rk::jit {

struct LibclangInfo {
  std::string library;    // the candidate that was opened, as given to dlopen
  std::string version;    // clang_getClangVersion(), e.g. "Debian clang version 16.0.6 (15~deb12u1)"
  int major_version = 0;  // 16
};

// The process-wide libclang, loaded on first use (thread-safe) and kept for
// the life of the process; the outcome, success or failure, is remembered.
// FailedPrecondition when no candidate can be opened or none is libclang 16
// or newer: the message lists each candidate with the reason it was
// rejected and says how to install libclang.
absl::StatusOr<LibclangInfo> Libclang();

// Libclang()'s version string.
absl::StatusOr<std::string> LibclangVersion();

// The libraries Libclang() tries, in order.
std::vector<std::string> LibclangCandidates();

// Opens the first of `candidates` (names for dlopen, or paths) that loads,
// exports every entry point the front-end uses and reports version 16 or
// newer, independently of Libclang(); for tests and `actorc` diagnostics.
absl::StatusOr<LibclangInfo> ProbeLibclang(const std::vector<std::string>& candidates);

// The major version in a clang version string ("... clang version 16.0.6
// ..." → 16); 0 when there is none.
int ParseClangMajorVersion(const std::string& version);

}  // namespace rk::jit

#endif  // RINGKERNEL_JIT_LIBCLANG_H_
