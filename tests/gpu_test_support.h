// Copyright 2026 The RingKernel Authors.
//
// gpu_test_support.h: how GPU tests get a runtime. Without a CUDA driver or
// device they skip with the reason; with RINGKERNEL_REQUIRE_GPU=1 in the
// environment (the GPU test script sets it) a missing device fails them
// instead, so that a GPU run can never pass by skipping.
#ifndef RINGKERNEL_TESTS_GPU_TEST_SUPPORT_H_
#define RINGKERNEL_TESTS_GPU_TEST_SUPPORT_H_

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "gtest/gtest.h"
#include "ringkernel/runtime.h"

namespace rk::testing {
// RINGKERNEL_TEST_SCALE (default 1; sanitizer runs set it below 1).
inline double TestScale() {
  const char* v = std::getenv("RINGKERNEL_TEST_SCALE");
  const double scale = v != nullptr ? std::atof(v) : 1.0;
  return scale > 0 ? scale : 1.0;
}
// `n` scaled by RINGKERNEL_TEST_SCALE, at least 1: sanitizer runs shrink the
// message counts of the tests, not what they assert.
inline int Scaled(int n) {
  const int scaled = static_cast<int>(n * TestScale());
  return scaled < 1 ? 1 : scaled;
}
// Sanitizer runs (scale < 1) slow the GPU down by orders of magnitude: the
// waits that bound a step grow by this factor, not what the step must achieve.
inline int SlowFactor() { return TestScale() < 1.0 ? 20 : 1; }
// `n` workers, or fewer where RINGKERNEL_TEST_WORKERS asks for fewer.
inline uint32_t CappedWorkers(uint32_t n) {
  const char* v = std::getenv("RINGKERNEL_TEST_WORKERS");
  const int cap = v != nullptr ? std::atoi(v) : 0;
  return cap > 0 && static_cast<uint32_t>(cap) < n ? static_cast<uint32_t>(cap) : n;
}
// SystemOptions for tests: RINGKERNEL_TEST_WORKERS caps the worker blocks
// (sanitizer runs instrument every spinning block, so they use few).
inline ::rk::SystemOptions TestOptions(::rk::SystemOptions o = {}) {
  const char* v = std::getenv("RINGKERNEL_TEST_WORKERS");
  if (v != nullptr && o.workers == 0) o.workers = static_cast<uint32_t>(std::atoi(v));
  return o;
}
inline bool GpuRequired() {
  const char* v = std::getenv("RINGKERNEL_REQUIRE_GPU");
  return v != nullptr && std::strcmp(v, "1") == 0;
}
}  // namespace rk::testing

// Sets `runtime_var` (a std::unique_ptr<rk::Runtime>) or skips the test.
#define RK_GPU_TEST_SETUP(runtime_var)                                                        \
  do {                                                                                        \
    absl::StatusOr<std::unique_ptr<::rk::Runtime>> rk_runtime_ = ::rk::Runtime::Create();     \
    if (!rk_runtime_.ok()) {                                                                  \
      if (rk_runtime_.status().code() == absl::StatusCode::kFailedPrecondition &&             \
          !::rk::testing::GpuRequired()) {                                                    \
        GTEST_SKIP() << "needs a CUDA device: " << rk_runtime_.status().message();            \
      }                                                                                       \
      FAIL() << rk_runtime_.status();                                                         \
    }                                                                                         \
    runtime_var = std::move(*rk_runtime_);                                                    \
  } while (false)

#endif  // RINGKERNEL_TESTS_GPU_TEST_SUPPORT_H_
