// Copyright 2026 The RingKernel Authors.
//
// program_access.h: what RingKernel's own tools reach inside a Program and
// a Runtime that applications do not: the built package (its handler model,
// for actorc's scripts) and loading a package already in memory. Not part
// of the installed API: the public header names no jit:: type.
#ifndef RINGKERNEL_RUNTIME_PROGRAM_ACCESS_H_
#define RINGKERNEL_RUNTIME_PROGRAM_ACCESS_H_

#include <memory>
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
  // A Program around `package` without a Runtime (no device needed): what
  // a Program reports of its package, tested without a GPU.
  static Program Wrap(jit::Package package) {
    Program p;
    p.package_ = std::make_shared<const jit::Package>(std::move(package));
    return p;
  }
};

}  // namespace rk::internal

#endif  // RINGKERNEL_RUNTIME_PROGRAM_ACCESS_H_
