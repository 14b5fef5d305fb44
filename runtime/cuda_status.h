// Copyright 2026 The RingKernel Authors.
//
// cuda_status.h: CUresult → absl::Status.
//
// Every driver call's result goes through one table that gives each CUresult
// a precise status code (out of memory is ResourceExhausted, a missing device
// or an image the GPU cannot run is FailedPrecondition, a bad argument is
// InvalidArgument, a fault inside a kernel is Aborted, ...) and a message of
// one fixed form:
//
//   cuMemAlloc(1048576 bytes) failed: CUDA_ERROR_OUT_OF_MEMORY (2): out of memory
//
// The name and description come from the driver (cuGetErrorName /
// cuGetErrorString) when it is loaded, else from RingKernel's own table, so
// that errors read the same with or without a driver.
//
// Call sites stay one line long with RK_CU_RETURN_IF_ERROR, whose remaining
// arguments (concatenated with absl::StrCat only on failure) describe the
// call:
//   RK_CU_RETURN_IF_ERROR(cu->cuMemAlloc(&ptr, bytes), "cuMemAlloc(", bytes, " bytes)");
//
// Sticky errors (a fault inside a kernel: illegal address, trap, ...) leave
// the context unusable; their messages say so, and IsSticky() tells callers.
#ifndef RINGKERNEL_RUNTIME_CUDA_STATUS_H_
#define RINGKERNEL_RUNTIME_CUDA_STATUS_H_

#include <cuda.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace rk::cuda {

struct DriverApi;

// The status code for `result` (kOk for CUDA_SUCCESS, kUnknown for a code
// the table does not know).
absl::StatusCode CuResultCode(CUresult result);

// RingKernel's own name for `result` ("CUDA_ERROR_OUT_OF_MEMORY"), or null
// for a code it does not know. Covers every code of cuda.h's CUresult.
const char* CuResultName(CUresult result);

// RingKernel's own one-line description of `result`, or null for a code it
// does not know.
const char* CuResultDescription(CUresult result);

// True for errors that leave the CUDA context unusable: every later call in
// the process returns the same error. The CUDA documentation says that only
// a new process recovers.
bool IsSticky(CUresult result);

// OK for CUDA_SUCCESS; otherwise a status with CuResultCode(result) and the
// message "<call> failed: <NAME> (<code>): <description>", where `call`
// describes the call ("cuMemAlloc(1048576 bytes)"). Uses the driver's names
// and descriptions if Driver() has loaded it; never loads it.
absl::Status CuStatus(CUresult result, absl::string_view call);

// As CuStatus, with the names and descriptions of `api` (when it is non-null
// and its cuGetErrorName / cuGetErrorString know the code) instead of the
// loaded driver's.
absl::Status CuStatusWith(const DriverApi* api, CUresult result, absl::string_view call);

}  // namespace rk::cuda

// Evaluates `expr` (a CUresult); unless it is CUDA_SUCCESS, returns
// CuStatus(result, StrCat(...)) from the enclosing function. The arguments
// after `expr` describe the call and are evaluated only on failure.
#define RK_CU_RETURN_IF_ERROR(expr, ...)                                       \
  do {                                                                         \
    const CUresult rk_cu_result_ = (expr);                                     \
    if (rk_cu_result_ != CUDA_SUCCESS) {                                       \
      return ::rk::cuda::CuStatus(rk_cu_result_, ::absl::StrCat(__VA_ARGS__)); \
    }                                                                          \
  } while (false)

#endif  // RINGKERNEL_RUNTIME_CUDA_STATUS_H_
