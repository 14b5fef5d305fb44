// Copyright 2026 The RingKernel Authors.
//
// CUresult → absl::Status: the code table, the message format with and
// without the driver's strings, IsSticky and RK_CU_RETURN_IF_ERROR. Runs
// without a GPU: the "driver" is a DriverApi whose error-string entry
// points are functions of this file.
#include "runtime/cuda_status.h"

#include <cuda.h>

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/cuda_driver.h"
#include "tests/test_support.h"

namespace rk::cuda {
namespace {

using ::rk::testing::StatusIs;
using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::Not;
using Code = absl::StatusCode;

// A CUresult of any value in the enum's range, 0..1023 (its enumerators, up
// to 999, need 10 bits): a value outside it is undefined behaviour in C++
// (UBSan's -fsanitize=enum, in scripts/sanitize.sh, stops at its first load).
// 1000 stands for a code of a newer driver that this build does not know.
CUresult R(int value) { return static_cast<CUresult>(value); }
constexpr int kNewerCode = 1000;

TEST(CuResultCodeTest, ResourceExhaustion) {
  EXPECT_EQ(CuResultCode(CUDA_ERROR_OUT_OF_MEMORY), Code::kResourceExhausted);
  EXPECT_EQ(CuResultCode(CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE), Code::kResourceExhausted);
  EXPECT_EQ(CuResultCode(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES), Code::kResourceExhausted);
}

TEST(CuResultCodeTest, Preconditions) {
  for (CUresult r : {CUDA_ERROR_NO_DEVICE, CUDA_ERROR_NO_BINARY_FOR_GPU, CUDA_ERROR_INVALID_PTX,
                     CUDA_ERROR_UNSUPPORTED_PTX_VERSION, CUDA_ERROR_JIT_COMPILER_NOT_FOUND, CUDA_ERROR_NOT_SUPPORTED,
                     CUDA_ERROR_NOT_INITIALIZED, CUDA_ERROR_DEINITIALIZED, CUDA_ERROR_INVALID_CONTEXT,
                     CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, CUDA_ERROR_STUB_LIBRARY}) {
    EXPECT_EQ(CuResultCode(r), Code::kFailedPrecondition) << CuResultName(r);
  }
}

TEST(CuResultCodeTest, InvalidArguments) {
  for (CUresult r :
       {CUDA_ERROR_INVALID_VALUE, CUDA_ERROR_INVALID_HANDLE, CUDA_ERROR_INVALID_IMAGE, CUDA_ERROR_INVALID_DEVICE}) {
    EXPECT_EQ(CuResultCode(r), Code::kInvalidArgument) << CuResultName(r);
  }
}

// Faults inside kernels: all Aborted, all sticky.
const std::vector<CUresult>& StickyResults() {
  static const std::vector<CUresult> results = {
      CUDA_ERROR_ILLEGAL_ADDRESS,
      CUDA_ERROR_ILLEGAL_INSTRUCTION,
      CUDA_ERROR_MISALIGNED_ADDRESS,
      CUDA_ERROR_INVALID_ADDRESS_SPACE,
      CUDA_ERROR_INVALID_PC,
      CUDA_ERROR_LAUNCH_FAILED,
      CUDA_ERROR_HARDWARE_STACK_ERROR,
      CUDA_ERROR_ASSERT,
      CUDA_ERROR_ECC_UNCORRECTABLE,
      CUDA_ERROR_LAUNCH_TIMEOUT,
      CUDA_ERROR_MPS_CLIENT_TERMINATED,
      CUDA_ERROR_EXTERNAL_DEVICE,
  };
  return results;
}

TEST(CuResultCodeTest, StickyFaultsAreAborted) {
  for (CUresult r : StickyResults()) {
    EXPECT_EQ(CuResultCode(r), Code::kAborted) << CuResultName(r);
    EXPECT_TRUE(IsSticky(r)) << CuResultName(r);
  }
}

TEST(CuResultCodeTest, OtherCodes) {
  EXPECT_EQ(CuResultCode(CUDA_SUCCESS), Code::kOk);
  EXPECT_EQ(CuResultCode(CUDA_ERROR_NOT_FOUND), Code::kNotFound);
  EXPECT_EQ(CuResultCode(CUDA_ERROR_NOT_READY), Code::kUnavailable);
  EXPECT_EQ(CuResultCode(CUDA_ERROR_NOT_PERMITTED), Code::kPermissionDenied);
  EXPECT_EQ(CuResultCode(CUDA_ERROR_TIMEOUT), Code::kDeadlineExceeded);
  EXPECT_EQ(CuResultCode(CUDA_ERROR_UNKNOWN), Code::kUnknown);
  EXPECT_EQ(CuResultCode(R(kNewerCode)), Code::kUnknown);
  EXPECT_EQ(CuResultCode(R(1023)), Code::kUnknown);
}

TEST(IsStickyTest, RecoverableErrorsAreNotSticky) {
  for (CUresult r :
       {CUDA_SUCCESS, CUDA_ERROR_OUT_OF_MEMORY, CUDA_ERROR_NOT_READY, CUDA_ERROR_INVALID_VALUE, CUDA_ERROR_INVALID_PTX,
        CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE, CUDA_ERROR_NOT_FOUND, CUDA_ERROR_UNKNOWN, R(kNewerCode)}) {
    EXPECT_FALSE(IsSticky(r)) << static_cast<int>(r);
  }
}

// Every CUresult of cuda.h, spelled through its enumerator, so that the
// table's numbers are checked against the header's.
#define RK_RESULT(name) \
  { name, #name }
const std::vector<std::pair<CUresult, std::string>>& HeaderResults() {
  static const std::vector<std::pair<CUresult, std::string>> results = {
    RK_RESULT(CUDA_SUCCESS),
    RK_RESULT(CUDA_ERROR_INVALID_VALUE),
    RK_RESULT(CUDA_ERROR_OUT_OF_MEMORY),
    RK_RESULT(CUDA_ERROR_NOT_INITIALIZED),
    RK_RESULT(CUDA_ERROR_DEINITIALIZED),
    RK_RESULT(CUDA_ERROR_PROFILER_DISABLED),
    RK_RESULT(CUDA_ERROR_PROFILER_NOT_INITIALIZED),
    RK_RESULT(CUDA_ERROR_PROFILER_ALREADY_STARTED),
    RK_RESULT(CUDA_ERROR_PROFILER_ALREADY_STOPPED),
    RK_RESULT(CUDA_ERROR_STUB_LIBRARY),
    RK_RESULT(CUDA_ERROR_DEVICE_UNAVAILABLE),
    RK_RESULT(CUDA_ERROR_NO_DEVICE),
    RK_RESULT(CUDA_ERROR_INVALID_DEVICE),
    RK_RESULT(CUDA_ERROR_DEVICE_NOT_LICENSED),
    RK_RESULT(CUDA_ERROR_INVALID_IMAGE),
    RK_RESULT(CUDA_ERROR_INVALID_CONTEXT),
    RK_RESULT(CUDA_ERROR_CONTEXT_ALREADY_CURRENT),
    RK_RESULT(CUDA_ERROR_MAP_FAILED),
    RK_RESULT(CUDA_ERROR_UNMAP_FAILED),
    RK_RESULT(CUDA_ERROR_ARRAY_IS_MAPPED),
    RK_RESULT(CUDA_ERROR_ALREADY_MAPPED),
    RK_RESULT(CUDA_ERROR_NO_BINARY_FOR_GPU),
    RK_RESULT(CUDA_ERROR_ALREADY_ACQUIRED),
    RK_RESULT(CUDA_ERROR_NOT_MAPPED),
    RK_RESULT(CUDA_ERROR_NOT_MAPPED_AS_ARRAY),
    RK_RESULT(CUDA_ERROR_NOT_MAPPED_AS_POINTER),
    RK_RESULT(CUDA_ERROR_ECC_UNCORRECTABLE),
    RK_RESULT(CUDA_ERROR_UNSUPPORTED_LIMIT),
    RK_RESULT(CUDA_ERROR_CONTEXT_ALREADY_IN_USE),
    RK_RESULT(CUDA_ERROR_PEER_ACCESS_UNSUPPORTED),
    RK_RESULT(CUDA_ERROR_INVALID_PTX),
    RK_RESULT(CUDA_ERROR_INVALID_GRAPHICS_CONTEXT),
    RK_RESULT(CUDA_ERROR_NVLINK_UNCORRECTABLE),
    RK_RESULT(CUDA_ERROR_JIT_COMPILER_NOT_FOUND),
    RK_RESULT(CUDA_ERROR_UNSUPPORTED_PTX_VERSION),
    RK_RESULT(CUDA_ERROR_JIT_COMPILATION_DISABLED),
    RK_RESULT(CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY),
    RK_RESULT(CUDA_ERROR_INVALID_SOURCE),
    RK_RESULT(CUDA_ERROR_FILE_NOT_FOUND),
    RK_RESULT(CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND),
    RK_RESULT(CUDA_ERROR_SHARED_OBJECT_INIT_FAILED),
    RK_RESULT(CUDA_ERROR_OPERATING_SYSTEM),
    RK_RESULT(CUDA_ERROR_INVALID_HANDLE),
    RK_RESULT(CUDA_ERROR_ILLEGAL_STATE),
    RK_RESULT(CUDA_ERROR_NOT_FOUND),
    RK_RESULT(CUDA_ERROR_NOT_READY),
    RK_RESULT(CUDA_ERROR_ILLEGAL_ADDRESS),
    RK_RESULT(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES),
    RK_RESULT(CUDA_ERROR_LAUNCH_TIMEOUT),
    RK_RESULT(CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING),
    RK_RESULT(CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED),
    RK_RESULT(CUDA_ERROR_PEER_ACCESS_NOT_ENABLED),
    RK_RESULT(CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE),
    RK_RESULT(CUDA_ERROR_CONTEXT_IS_DESTROYED),
    RK_RESULT(CUDA_ERROR_ASSERT),
    RK_RESULT(CUDA_ERROR_TOO_MANY_PEERS),
    RK_RESULT(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED),
    RK_RESULT(CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED),
    RK_RESULT(CUDA_ERROR_HARDWARE_STACK_ERROR),
    RK_RESULT(CUDA_ERROR_ILLEGAL_INSTRUCTION),
    RK_RESULT(CUDA_ERROR_MISALIGNED_ADDRESS),
    RK_RESULT(CUDA_ERROR_INVALID_ADDRESS_SPACE),
    RK_RESULT(CUDA_ERROR_INVALID_PC),
    RK_RESULT(CUDA_ERROR_LAUNCH_FAILED),
    RK_RESULT(CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE),
    RK_RESULT(CUDA_ERROR_NOT_PERMITTED),
    RK_RESULT(CUDA_ERROR_NOT_SUPPORTED),
    RK_RESULT(CUDA_ERROR_SYSTEM_NOT_READY),
    RK_RESULT(CUDA_ERROR_SYSTEM_DRIVER_MISMATCH),
    RK_RESULT(CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE),
    RK_RESULT(CUDA_ERROR_MPS_CONNECTION_FAILED),
    RK_RESULT(CUDA_ERROR_MPS_RPC_FAILURE),
    RK_RESULT(CUDA_ERROR_MPS_SERVER_NOT_READY),
    RK_RESULT(CUDA_ERROR_MPS_MAX_CLIENTS_REACHED),
    RK_RESULT(CUDA_ERROR_MPS_MAX_CONNECTIONS_REACHED),
    RK_RESULT(CUDA_ERROR_MPS_CLIENT_TERMINATED),
    RK_RESULT(CUDA_ERROR_CDP_NOT_SUPPORTED),
    RK_RESULT(CUDA_ERROR_CDP_VERSION_MISMATCH),
    RK_RESULT(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED),
    RK_RESULT(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED),
    RK_RESULT(CUDA_ERROR_STREAM_CAPTURE_MERGE),
    RK_RESULT(CUDA_ERROR_STREAM_CAPTURE_UNMATCHED),
    RK_RESULT(CUDA_ERROR_STREAM_CAPTURE_UNJOINED),
    RK_RESULT(CUDA_ERROR_STREAM_CAPTURE_ISOLATION),
    RK_RESULT(CUDA_ERROR_STREAM_CAPTURE_IMPLICIT),
    RK_RESULT(CUDA_ERROR_CAPTURED_EVENT),
    RK_RESULT(CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD),
    RK_RESULT(CUDA_ERROR_TIMEOUT),
    RK_RESULT(CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE),
    RK_RESULT(CUDA_ERROR_EXTERNAL_DEVICE),
    RK_RESULT(CUDA_ERROR_INVALID_CLUSTER_SIZE),
    RK_RESULT(CUDA_ERROR_UNKNOWN),
  // Codes added during CUDA 12; the full set is checked with 13.0 headers.
#if CUDA_VERSION >= 13000
    RK_RESULT(CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER),
    RK_RESULT(CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC),
    RK_RESULT(CUDA_ERROR_CONTAINED),
    RK_RESULT(CUDA_ERROR_LOSSY_QUERY),
    RK_RESULT(CUDA_ERROR_TENSOR_MEMORY_LEAK),
    RK_RESULT(CUDA_ERROR_FUNCTION_NOT_LOADED),
    RK_RESULT(CUDA_ERROR_INVALID_RESOURCE_TYPE),
    RK_RESULT(CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION),
    RK_RESULT(CUDA_ERROR_KEY_ROTATION),
#endif
  };
  return results;
}
#undef RK_RESULT

TEST(CuResultNameTest, EveryHeaderCodeHasItsOwnName) {
  for (const auto& [result, name] : HeaderResults()) {
    ASSERT_NE(CuResultName(result), nullptr) << name;
    EXPECT_EQ(CuResultName(result), name);
    ASSERT_NE(CuResultDescription(result), nullptr) << name;
    EXPECT_STRNE(CuResultDescription(result), "") << name;
  }
}

TEST(CuResultNameTest, TableHoldsNothingButHeaderCodes) {
#if CUDA_VERSION >= 13000
  std::set<int> header;
  for (const auto& [result, name] : HeaderResults()) header.insert(static_cast<int>(result));
  std::set<int> table;
  for (int value = 0; value < 1024; ++value) {
    if (CuResultName(R(value)) != nullptr) table.insert(value);
  }
  EXPECT_EQ(table, header);
#else
  GTEST_SKIP() << "the complete list of codes is checked with CUDA 13.0 headers";
#endif
}

TEST(CuResultNameTest, UnknownCodes) {
  EXPECT_EQ(CuResultName(R(kNewerCode)), nullptr);
  EXPECT_EQ(CuResultDescription(R(kNewerCode)), nullptr);
}

TEST(CuStatusTest, SuccessIsOk) {
  EXPECT_TRUE(CuStatus(CUDA_SUCCESS, "cuInit(0)").ok());
  EXPECT_TRUE(CuStatusWith(nullptr, CUDA_SUCCESS, "cuInit(0)").ok());
}

TEST(CuStatusTest, MessageWithoutDriverUsesOwnTable) {
  // Nothing in this test binary loads the driver.
  ASSERT_EQ(LoadedDriver(), nullptr);
  const absl::Status status = CuStatus(CUDA_ERROR_OUT_OF_MEMORY, "cuMemAlloc(1048576 bytes)");
  EXPECT_EQ(status.code(), Code::kResourceExhausted);
  EXPECT_EQ(status.message(), "cuMemAlloc(1048576 bytes) failed: CUDA_ERROR_OUT_OF_MEMORY (2): out of memory");
  EXPECT_EQ(status, CuStatusWith(nullptr, CUDA_ERROR_OUT_OF_MEMORY, "cuMemAlloc(1048576 bytes)"));

  EXPECT_THAT(CuStatus(CUDA_ERROR_INVALID_PTX, "cuModuleLoadDataEx(bank)"),
              StatusIs(Code::kFailedPrecondition,
                       "cuModuleLoadDataEx(bank) failed: CUDA_ERROR_INVALID_PTX (218): the PTX could not be "
                       "compiled"));
}

TEST(CuStatusTest, UnknownCodeIsStillReported) {
  EXPECT_THAT(CuStatusWith(nullptr, R(kNewerCode), "cuFoo()"),
              StatusIs(Code::kUnknown,
                       "cuFoo() failed: CUDA_ERROR_UNRECOGNIZED (1000): a CUDA error code this "
                       "build of RingKernel does not know"));
}

TEST(CuStatusTest, StickyErrorsSayTheContextIsLost) {
  const absl::Status status = CuStatusWith(nullptr, CUDA_ERROR_ILLEGAL_ADDRESS, "cuStreamSynchronize()");
  EXPECT_THAT(status, StatusIs(Code::kAborted,
                               HasSubstr("cuStreamSynchronize() failed: CUDA_ERROR_ILLEGAL_ADDRESS (700): a kernel "
                                         "accessed an illegal memory address. This error is sticky")));
  EXPECT_THAT(std::string(status.message()), EndsWith("restart the process"));
  EXPECT_THAT(CuStatusWith(nullptr, CUDA_ERROR_OUT_OF_MEMORY, "x").message(), Not(HasSubstr("sticky")));
}

// A "driver" whose strings differ from RingKernel's own for two codes and
// that knows no others, like an older driver meeting a newer code.
CUresult TestErrorName(CUresult error, const char** out) {
  switch (error) {
    case CUDA_ERROR_OUT_OF_MEMORY:
      *out = "CUDA_ERROR_OUT_OF_MEMORY";
      return CUDA_SUCCESS;
    case CUDA_ERROR_LAUNCH_FAILED:
      *out = "CUDA_ERROR_LAUNCH_FAILED";
      return CUDA_SUCCESS;
    default:
      *out = nullptr;
      return CUDA_ERROR_INVALID_VALUE;
  }
}
CUresult TestErrorString(CUresult error, const char** out) {
  switch (error) {
    case CUDA_ERROR_OUT_OF_MEMORY:
      *out = "driver text: out of memory";
      return CUDA_SUCCESS;
    case CUDA_ERROR_LAUNCH_FAILED:
      *out = "driver text: unspecified launch failure";
      return CUDA_SUCCESS;
    default:
      *out = nullptr;
      return CUDA_ERROR_INVALID_VALUE;
  }
}

TEST(CuStatusTest, MessageWithDriverUsesDriverStrings) {
  DriverApi api;
  api.cuGetErrorName = &TestErrorName;
  api.cuGetErrorString = &TestErrorString;
  EXPECT_THAT(CuStatusWith(&api, CUDA_ERROR_OUT_OF_MEMORY, "cuMemHostAlloc(64 bytes, mapped)"),
              StatusIs(Code::kResourceExhausted,
                       "cuMemHostAlloc(64 bytes, mapped) failed: CUDA_ERROR_OUT_OF_MEMORY (2): driver text: out of "
                       "memory"));
  EXPECT_THAT(CuStatusWith(&api, CUDA_ERROR_LAUNCH_FAILED, "cuStreamQuery()"),
              StatusIs(Code::kAborted, HasSubstr("cuStreamQuery() failed: CUDA_ERROR_LAUNCH_FAILED (719): driver "
                                                 "text: unspecified launch failure. This error is sticky")));
  // A code the driver does not know falls back to the table.
  EXPECT_THAT(CuStatusWith(&api, CUDA_ERROR_NOT_READY, "cuEventQuery()"),
              StatusIs(Code::kUnavailable,
                       "cuEventQuery() failed: CUDA_ERROR_NOT_READY (600): the asynchronous work "
                       "has not completed yet"));
}

TEST(CuStatusTest, DriverWithoutErrorStringsFallsBackToTable) {
  DriverApi api;  // all entry points null
  EXPECT_EQ(CuStatusWith(&api, CUDA_ERROR_OUT_OF_MEMORY, "cuMemAlloc(1 bytes)"),
            CuStatusWith(nullptr, CUDA_ERROR_OUT_OF_MEMORY, "cuMemAlloc(1 bytes)"));
}

int g_described = 0;
std::string Describe(int n) {
  ++g_described;
  return std::to_string(n);
}

absl::Status CallThatReturns(CUresult result, int arg) {
  RK_CU_RETURN_IF_ERROR(result, "cuFoo(", Describe(arg), " bytes)");
  return absl::OkStatus();
}

TEST(ReturnIfErrorTest, ReturnsTheFormattedStatusOnlyOnFailure) {
  g_described = 0;
  EXPECT_TRUE(CallThatReturns(CUDA_SUCCESS, 7).ok());
  EXPECT_EQ(g_described, 0) << "the call description must not be built on success";
  EXPECT_THAT(CallThatReturns(CUDA_ERROR_INVALID_VALUE, 42),
              StatusIs(Code::kInvalidArgument,
                       "cuFoo(42 bytes) failed: CUDA_ERROR_INVALID_VALUE (1): an argument is "
                       "out of range or otherwise invalid"));
  EXPECT_EQ(g_described, 1);
}

}  // namespace
}  // namespace rk::cuda
