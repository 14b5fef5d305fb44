// Copyright 2026 The RingKernel Authors.
//
// fuzz_support.h: what the fuzz targets share — the fixed program they check
// inputs against, and how a target reports a broken invariant.
//
// A fuzz target must never crash, hang or trip a sanitizer on any input: bad
// input comes back as a status. FUZZ_CHECK states the properties that must
// hold beyond that (an encoded message decodes and encodes to the same
// bytes, a package that parses serialises to one that parses the same, ...);
// a failure aborts, which libFuzzer reports as a crash with the input saved.
#ifndef RINGKERNEL_TESTS_FUZZ_FUZZ_SUPPORT_H_
#define RINGKERNEL_TESTS_FUZZ_FUZZ_SUPPORT_H_

#include <cstdio>
#include <cstdlib>

#include "jit/handler_model.h"

#define FUZZ_CHECK(condition, ...)                                                        \
  do {                                                                                    \
    if (!(condition)) {                                                                   \
      std::fprintf(stderr, "%s:%d: FUZZ_CHECK(%s) failed: ", __FILE__, __LINE__, #condition); \
      std::fprintf(stderr, __VA_ARGS__);                                                  \
      std::fprintf(stderr, "\n");                                                         \
      std::abort();                                                                       \
    }                                                                                     \
  } while (0)

namespace rk::fuzz {

// The model of tests/fuzz/model.cu, parsed with the front-end on first use
// (aborts if it does not parse: the fuzz targets need libclang 16).
const jit::HandlerModel& FuzzModel();

}  // namespace rk::fuzz

#endif  // RINGKERNEL_TESTS_FUZZ_FUZZ_SUPPORT_H_
