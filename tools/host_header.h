// Copyright 2026 The RingKernel Authors.
//
// host_header.h: `actorc header` — a typed host header for a package: the
// message structs with the layouts the front-end extracted, their
// RK_HOST_MESSAGE names, the actor type and route names, and static_asserts
// that fail the host build if the host compiler lays a struct out
// differently.
#ifndef RINGKERNEL_TOOLS_HOST_HEADER_H_
#define RINGKERNEL_TOOLS_HOST_HEADER_H_

#include <string>

#include "absl/status/statusor.h"
#include "jit/package.h"

namespace rk::tools {

// `guard` names the include guard; `origin` is quoted in the header comment.
absl::StatusOr<std::string> GenerateHostHeader(const jit::Package& package, const std::string& guard,
                                               const std::string& origin);

}  // namespace rk::tools

#endif  // RINGKERNEL_TOOLS_HOST_HEADER_H_
