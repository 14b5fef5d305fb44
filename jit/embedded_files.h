// Copyright 2026 The RingKernel Authors.
//
// embedded_files.h: files compiled into the binaries — the device headers
// that NVRTC and the clang front-end read instead of any include path.
#ifndef RINGKERNEL_JIT_EMBEDDED_FILES_H_
#define RINGKERNEL_JIT_EMBEDDED_FILES_H_

#include <string_view>

#include "absl/types/span.h"

namespace rk::jit {

struct EmbeddedFile {
  std::string_view path;      // relative to include/, e.g. "ringkernel/actor.cuh"
  std::string_view contents;
};

// `include/ringkernel/actor.cuh` and `include/ringkernel/device/*`, as the
// build embedded them.
absl::Span<const EmbeddedFile> EmbeddedDeviceHeaders();

}  // namespace rk::jit

#endif  // RINGKERNEL_JIT_EMBEDDED_FILES_H_
