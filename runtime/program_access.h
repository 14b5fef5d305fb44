// Copyright 2026 The RingKernel Authors.
//
// program_access.h: what RingKernel's own tools reach inside a Program and
// a Runtime that applications do not: the built package (its handler model,
// for actorc's scripts) and loading a package already in memory. Not part
// of the installed API: the public header names no jit:: type.
#ifndef RINGKERNEL_RUNTIME_PROGRAM_ACCESS_H_
#define RINGKERNEL_RUNTIME_PROGRAM_ACCESS_H_

#include <utility>

#include "absl/status/statusor.h"
#include "jit/package.h"
#include "ringkernel/runtime.h"

namespace rk::internal {

struct ProgramAccess {
  static const jit::Package& Package(const Program& program) { return *program.package_; }
  static absl::StatusOr<Program> Load(Runtime& runtime, jit::Package package) {
    return runtime.LoadPackage(std::move(package));
  }
};

}  // namespace rk::internal

#endif  // RINGKERNEL_RUNTIME_PROGRAM_ACCESS_H_
