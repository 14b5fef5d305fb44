// Copyright 2026 The RingKernel Authors.
#include "runtime/cuda_status.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "runtime/cuda_driver.h"

namespace rk::cuda {
namespace {

using Code = absl::StatusCode;

struct ResultInfo {
  int value;
  const char* name;
  Code code;
  bool sticky;
  const char* description;
};

// The codes are written as numbers, not cuda.h's enumerators: the numbers
// are the driver's ABI and never change, while the enumerators of recent
// codes are missing from older CUDA 12 headers that RingKernel also builds
// with. The static_asserts below tie a sample to the header.
//
// Status codes:
//   kResourceExhausted   the GPU ran out of something (memory, co-resident
//                        blocks, registers)
//   kFailedPrecondition  the system is not in a state to do it: no device,
//                        no usable driver or image for this GPU, no context
//   kInvalidArgument     a bad value or handle was passed
//   kAborted             a sticky fault inside a kernel: the context is lost
//   kNotFound / kUnavailable / kAlreadyExists / kPermissionDenied /
//   kDeadlineExceeded    as their names say; NOT_READY is kUnavailable
//   kInternal / kUnknown the rest
constexpr ResultInfo kResults[] = {
    {0, "CUDA_SUCCESS", Code::kOk, false, "no error"},
    {1, "CUDA_ERROR_INVALID_VALUE", Code::kInvalidArgument, false, "an argument is out of range or otherwise invalid"},
    {2, "CUDA_ERROR_OUT_OF_MEMORY", Code::kResourceExhausted, false, "out of memory"},
    {3, "CUDA_ERROR_NOT_INITIALIZED", Code::kFailedPrecondition, false, "the driver has not been initialised"},
    {4, "CUDA_ERROR_DEINITIALIZED", Code::kFailedPrecondition, false, "the driver is shutting down"},
    {5, "CUDA_ERROR_PROFILER_DISABLED", Code::kFailedPrecondition, false, "the profiler is disabled"},
    {6, "CUDA_ERROR_PROFILER_NOT_INITIALIZED", Code::kFailedPrecondition, false, "the profiler is not initialised"},
    {7, "CUDA_ERROR_PROFILER_ALREADY_STARTED", Code::kFailedPrecondition, false, "the profiler is already started"},
    {8, "CUDA_ERROR_PROFILER_ALREADY_STOPPED", Code::kFailedPrecondition, false, "the profiler is already stopped"},
    {34, "CUDA_ERROR_STUB_LIBRARY", Code::kFailedPrecondition, false,
     "the loaded libcuda is the toolkit's stub, not a real driver"},
    {36, "CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER", Code::kFailedPrecondition, false,
     "the call needs a newer NVIDIA driver"},
    {46, "CUDA_ERROR_DEVICE_UNAVAILABLE", Code::kUnavailable, false,
     "the device is busy or unavailable (exclusive or prohibited compute mode)"},
    {100, "CUDA_ERROR_NO_DEVICE", Code::kFailedPrecondition, false, "no CUDA-capable device was detected"},
    {101, "CUDA_ERROR_INVALID_DEVICE", Code::kInvalidArgument, false, "invalid device ordinal"},
    {102, "CUDA_ERROR_DEVICE_NOT_LICENSED", Code::kFailedPrecondition, false,
     "the device lacks a license for this operation"},
    {200, "CUDA_ERROR_INVALID_IMAGE", Code::kInvalidArgument, false, "the module image is invalid"},
    {201, "CUDA_ERROR_INVALID_CONTEXT", Code::kFailedPrecondition, false, "no valid context is current on this thread"},
    {202, "CUDA_ERROR_CONTEXT_ALREADY_CURRENT", Code::kFailedPrecondition, false, "the context is already current"},
    {205, "CUDA_ERROR_MAP_FAILED", Code::kInternal, false, "a map or register operation failed"},
    {206, "CUDA_ERROR_UNMAP_FAILED", Code::kInternal, false, "an unmap or unregister operation failed"},
    {207, "CUDA_ERROR_ARRAY_IS_MAPPED", Code::kFailedPrecondition, false, "the array is mapped"},
    {208, "CUDA_ERROR_ALREADY_MAPPED", Code::kFailedPrecondition, false, "the resource is already mapped"},
    {209, "CUDA_ERROR_NO_BINARY_FOR_GPU", Code::kFailedPrecondition, false, "the image has no code this GPU can run"},
    {210, "CUDA_ERROR_ALREADY_ACQUIRED", Code::kFailedPrecondition, false, "the resource is already acquired"},
    {211, "CUDA_ERROR_NOT_MAPPED", Code::kFailedPrecondition, false, "the resource is not mapped"},
    {212, "CUDA_ERROR_NOT_MAPPED_AS_ARRAY", Code::kFailedPrecondition, false, "the resource is not mapped as an array"},
    {213, "CUDA_ERROR_NOT_MAPPED_AS_POINTER", Code::kFailedPrecondition, false,
     "the resource is not mapped as a pointer"},
    {214, "CUDA_ERROR_ECC_UNCORRECTABLE", Code::kAborted, true, "an uncorrectable ECC error was detected"},
    {215, "CUDA_ERROR_UNSUPPORTED_LIMIT", Code::kFailedPrecondition, false, "the device does not support this limit"},
    {216, "CUDA_ERROR_CONTEXT_ALREADY_IN_USE", Code::kFailedPrecondition, false,
     "the context is already in use by another thread"},
    {217, "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED", Code::kFailedPrecondition, false,
     "peer access is not supported between these devices"},
    {218, "CUDA_ERROR_INVALID_PTX", Code::kFailedPrecondition, false, "the PTX could not be compiled"},
    {219, "CUDA_ERROR_INVALID_GRAPHICS_CONTEXT", Code::kInvalidArgument, false, "invalid graphics context"},
    {220, "CUDA_ERROR_NVLINK_UNCORRECTABLE", Code::kAborted, false, "an uncorrectable NVLink error was detected"},
    {221, "CUDA_ERROR_JIT_COMPILER_NOT_FOUND", Code::kFailedPrecondition, false,
     "the driver's PTX JIT compiler is missing"},
    {222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION", Code::kFailedPrecondition, false,
     "the PTX was made by a toolkit newer than the driver supports"},
    {223, "CUDA_ERROR_JIT_COMPILATION_DISABLED", Code::kFailedPrecondition, false, "PTX JIT compilation is disabled"},
    {224, "CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY", Code::kFailedPrecondition, false,
     "the execution affinity type is not supported"},
    {225, "CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC", Code::kFailedPrecondition, false,
     "device-side synchronisation is not supported here"},
    {226, "CUDA_ERROR_CONTAINED", Code::kAborted, true, "a device exception was contained by the GPU"},
    {300, "CUDA_ERROR_INVALID_SOURCE", Code::kInvalidArgument, false, "the kernel source is invalid"},
    {301, "CUDA_ERROR_FILE_NOT_FOUND", Code::kNotFound, false, "file not found"},
    {302, "CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND", Code::kNotFound, false,
     "a shared object symbol could not be resolved"},
    {303, "CUDA_ERROR_SHARED_OBJECT_INIT_FAILED", Code::kInternal, false, "a shared object failed to initialise"},
    {304, "CUDA_ERROR_OPERATING_SYSTEM", Code::kInternal, false, "an operating system call failed"},
    {400, "CUDA_ERROR_INVALID_HANDLE", Code::kInvalidArgument, false, "invalid resource handle"},
    {401, "CUDA_ERROR_ILLEGAL_STATE", Code::kFailedPrecondition, false,
     "a resource is not in a valid state for this operation"},
    {402, "CUDA_ERROR_LOSSY_QUERY", Code::kFailedPrecondition, false, "the query would lose information"},
    {500, "CUDA_ERROR_NOT_FOUND", Code::kNotFound, false, "the named symbol was not found"},
    {600, "CUDA_ERROR_NOT_READY", Code::kUnavailable, false, "the asynchronous work has not completed yet"},
    {700, "CUDA_ERROR_ILLEGAL_ADDRESS", Code::kAborted, true, "a kernel accessed an illegal memory address"},
    {701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", Code::kResourceExhausted, false,
     "the launch needs more resources (registers, threads) than are available"},
    {702, "CUDA_ERROR_LAUNCH_TIMEOUT", Code::kAborted, true, "a kernel ran past the device's time limit"},
    {703, "CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING", Code::kFailedPrecondition, false,
     "the launch uses an incompatible texturing mode"},
    {704, "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED", Code::kAlreadyExists, false, "peer access is already enabled"},
    {705, "CUDA_ERROR_PEER_ACCESS_NOT_ENABLED", Code::kFailedPrecondition, false, "peer access is not enabled"},
    {708, "CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE", Code::kFailedPrecondition, false,
     "the primary context is already active"},
    {709, "CUDA_ERROR_CONTEXT_IS_DESTROYED", Code::kFailedPrecondition, false, "the context has been destroyed"},
    {710, "CUDA_ERROR_ASSERT", Code::kAborted, true, "a device-side assertion failed"},
    {711, "CUDA_ERROR_TOO_MANY_PEERS", Code::kResourceExhausted, false, "too many peer mappings"},
    {712, "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED", Code::kAlreadyExists, false,
     "the host memory is already registered"},
    {713, "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED", Code::kFailedPrecondition, false,
     "the host memory is not registered"},
    {714, "CUDA_ERROR_HARDWARE_STACK_ERROR", Code::kAborted, true, "a kernel corrupted or overflowed its stack"},
    {715, "CUDA_ERROR_ILLEGAL_INSTRUCTION", Code::kAborted, true, "a kernel executed an illegal instruction"},
    {716, "CUDA_ERROR_MISALIGNED_ADDRESS", Code::kAborted, true, "a kernel accessed a misaligned address"},
    {717, "CUDA_ERROR_INVALID_ADDRESS_SPACE", Code::kAborted, true,
     "a kernel used an address outside the instruction's address space"},
    {718, "CUDA_ERROR_INVALID_PC", Code::kAborted, true, "a kernel's program counter became invalid"},
    {719, "CUDA_ERROR_LAUNCH_FAILED", Code::kAborted, true,
     "a kernel faulted (a trap or another unspecified exception)"},
    {720, "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE", Code::kResourceExhausted, false,
     "more blocks than can be co-resident on the device"},
    {721, "CUDA_ERROR_TENSOR_MEMORY_LEAK", Code::kAborted, true, "a kernel exited without freeing tensor memory"},
    {800, "CUDA_ERROR_NOT_PERMITTED", Code::kPermissionDenied, false, "the operation is not permitted"},
    {801, "CUDA_ERROR_NOT_SUPPORTED", Code::kFailedPrecondition, false,
     "the operation is not supported on this system or device"},
    {802, "CUDA_ERROR_SYSTEM_NOT_READY", Code::kFailedPrecondition, false,
     "the system is not ready (is the fabric manager running?)"},
    {803, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH", Code::kFailedPrecondition, false,
     "the driver library and the kernel module have different versions"},
    {804, "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE", Code::kFailedPrecondition, false,
     "the forward-compatibility driver does not support this device"},
    {805, "CUDA_ERROR_MPS_CONNECTION_FAILED", Code::kUnavailable, false, "could not connect to the MPS server"},
    {806, "CUDA_ERROR_MPS_RPC_FAILURE", Code::kUnavailable, false, "a call to the MPS server failed"},
    {807, "CUDA_ERROR_MPS_SERVER_NOT_READY", Code::kUnavailable, false, "the MPS server is not ready"},
    {808, "CUDA_ERROR_MPS_MAX_CLIENTS_REACHED", Code::kResourceExhausted, false,
     "the MPS server has no room for another client"},
    {809, "CUDA_ERROR_MPS_MAX_CONNECTIONS_REACHED", Code::kResourceExhausted, false,
     "the MPS server has no room for another connection"},
    {810, "CUDA_ERROR_MPS_CLIENT_TERMINATED", Code::kAborted, true, "the MPS server terminated this client"},
    {811, "CUDA_ERROR_CDP_NOT_SUPPORTED", Code::kFailedPrecondition, false, "dynamic parallelism is not supported"},
    {812, "CUDA_ERROR_CDP_VERSION_MISMATCH", Code::kFailedPrecondition, false,
     "the dynamic parallelism versions do not match"},
    {900, "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED", Code::kFailedPrecondition, false,
     "the operation is not allowed while the stream is capturing"},
    {901, "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED", Code::kFailedPrecondition, false,
     "the stream capture was invalidated by an earlier error"},
    {902, "CUDA_ERROR_STREAM_CAPTURE_MERGE", Code::kFailedPrecondition, false, "two captures would have been merged"},
    {903, "CUDA_ERROR_STREAM_CAPTURE_UNMATCHED", Code::kFailedPrecondition, false,
     "the capture was not started in this stream"},
    {904, "CUDA_ERROR_STREAM_CAPTURE_UNJOINED", Code::kFailedPrecondition, false,
     "the capture forked a stream that was not joined"},
    {905, "CUDA_ERROR_STREAM_CAPTURE_ISOLATION", Code::kFailedPrecondition, false,
     "a dependency would have crossed the capture boundary"},
    {906, "CUDA_ERROR_STREAM_CAPTURE_IMPLICIT", Code::kFailedPrecondition, false,
     "a capture would have synchronised with the legacy stream"},
    {907, "CUDA_ERROR_CAPTURED_EVENT", Code::kFailedPrecondition, false, "the event was last recorded in a capture"},
    {908, "CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD", Code::kFailedPrecondition, false,
     "the capture was ended from another thread"},
    {909, "CUDA_ERROR_TIMEOUT", Code::kDeadlineExceeded, false, "the wait timed out"},
    {910, "CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE", Code::kFailedPrecondition, false,
     "the graph update violates the executable graph's constraints"},
    {911, "CUDA_ERROR_EXTERNAL_DEVICE", Code::kAborted, true, "a device outside CUDA signalled an error"},
    {912, "CUDA_ERROR_INVALID_CLUSTER_SIZE", Code::kInvalidArgument, false, "invalid thread block cluster size"},
    {913, "CUDA_ERROR_FUNCTION_NOT_LOADED", Code::kFailedPrecondition, false, "the function is not loaded"},
    {914, "CUDA_ERROR_INVALID_RESOURCE_TYPE", Code::kInvalidArgument, false, "invalid resource type"},
    {915, "CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION", Code::kInvalidArgument, false,
     "the resources are insufficient or do not apply"},
    {916, "CUDA_ERROR_KEY_ROTATION", Code::kInternal, false, "an error occurred during key rotation"},
    {999, "CUDA_ERROR_UNKNOWN", Code::kUnknown, false, "unknown error"},
};

static_assert(CUDA_ERROR_OUT_OF_MEMORY == 2 && CUDA_ERROR_NO_DEVICE == 100 && CUDA_ERROR_INVALID_PTX == 218 &&
                  CUDA_ERROR_NOT_READY == 600 && CUDA_ERROR_ILLEGAL_ADDRESS == 700 && CUDA_ERROR_LAUNCH_FAILED == 719 &&
                  CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE == 720 && CUDA_ERROR_NOT_SUPPORTED == 801 &&
                  CUDA_ERROR_UNKNOWN == 999,
              "CUresult values are the driver's ABI");

const ResultInfo* Find(CUresult result) {
  const int value = static_cast<int>(result);
  for (const ResultInfo& info : kResults) {
    if (info.value == value) return &info;
  }
  return nullptr;
}

// The driver's string for `result`, or null. cuGetErrorName/String return
// CUDA_ERROR_INVALID_VALUE (and set null) for codes they do not know, which
// happens when the driver is older than the code.
const char* DriverString(const DriverApi* api, bool name, CUresult result) {
  if (api == nullptr) return nullptr;
  const auto fn = name ? api->cuGetErrorName : api->cuGetErrorString;
  if (fn == nullptr) return nullptr;
  const char* s = nullptr;
  if (fn(result, &s) != CUDA_SUCCESS || s == nullptr || *s == '\0') return nullptr;
  return s;
}

}  // namespace

absl::StatusCode CuResultCode(CUresult result) {
  const ResultInfo* info = Find(result);
  return info != nullptr ? info->code : Code::kUnknown;
}

const char* CuResultName(CUresult result) {
  const ResultInfo* info = Find(result);
  return info != nullptr ? info->name : nullptr;
}

const char* CuResultDescription(CUresult result) {
  const ResultInfo* info = Find(result);
  return info != nullptr ? info->description : nullptr;
}

bool IsSticky(CUresult result) {
  const ResultInfo* info = Find(result);
  return info != nullptr && info->sticky;
}

absl::Status CuStatusWith(const DriverApi* api, CUresult result, absl::string_view call) {
  if (result == CUDA_SUCCESS) return absl::OkStatus();
  const char* name = DriverString(api, /*name=*/true, result);
  if (name == nullptr) name = CuResultName(result);
  const char* description = DriverString(api, /*name=*/false, result);
  if (description == nullptr) description = CuResultDescription(result);
  std::string message = absl::StrCat(
      call, " failed: ", name != nullptr ? name : "CUDA_ERROR_UNRECOGNIZED", " (", static_cast<int>(result),
      "): ", description != nullptr ? description : "a CUDA error code this build of RingKernel does not know");
  if (IsSticky(result)) {
    absl::StrAppend(&message,
                    ". This error is sticky: the CUDA context can no longer be used, and every later CUDA call "
                    "in this process fails; restart the process");
  }
  return absl::Status(CuResultCode(result), message);
}

absl::Status CuStatus(CUresult result, absl::string_view call) {
  if (result == CUDA_SUCCESS) return absl::OkStatus();
  return CuStatusWith(LoadedDriver(), result, call);
}

}  // namespace rk::cuda
