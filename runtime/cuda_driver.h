// Copyright 2026 The RingKernel Authors.
//
// cuda_driver.h: the CUDA driver library, opened at run time.
//
// RingKernel never links against `libcuda.so.1`: machines without an NVIDIA
// GPU (CI among them) have no such library, and a binary linked against it
// would not even start there. Instead, the first call to `Driver()` opens the
// library with `dlopen`, looks up `cuGetProcAddress_v2` with `dlsym` and
// resolves every other entry point through it at one pinned API version
// (`kPinnedApiVersion`, CUDA 12.0). Pinning the version pins the ABI: a newer
// driver hands out the 12.0 variant of each function, whose prototype is the
// one declared in `DriverApi` below, whatever `cuda.h` the program was built
// with. (cuDriverGetVersion, which has only ever had one variant, is asked
// for first at its own version, so that a driver older than 12.0 is reported
// as such.)
//
// Loading happens once per process and is thread-safe; the table, or the
// error, is cached and returned by every later call. The library is never
// closed: driver handles may outlive any object of ours.
//
// Example:
//   RK_ASSIGN_OR_RETURN(const rk::cuda::DriverApi* cu, rk::cuda::Driver());
//   int count = 0;
//   RK_CU_RETURN_IF_ERROR(cu->cuDeviceGetCount(&count), "cuDeviceGetCount()");
//
// Without a driver, `Driver()` returns FailedPrecondition("no CUDA driver:
// libcuda.so.1 could not be loaded (...)"); with a driver but no device,
// FailedPrecondition("no CUDA device found ..."). The environment variable
// RINGKERNEL_LIBCUDA names another library to open instead (tests use it).
//
// The names of the members are the driver's function names, so that call
// sites read like CUDA code. Some of these names are macros in cuda.h
// (`cuMemAlloc` expands to `cuMemAlloc_v2`); the preprocessor renames the
// member consistently wherever this header is included, which is harmless.
#ifndef RINGKERNEL_RUNTIME_CUDA_DRIVER_H_
#define RINGKERNEL_RUNTIME_CUDA_DRIVER_H_

#include <cuda.h>
#include <cudaTypedefs.h>

#include <string>

#include "absl/status/statusor.h"

namespace rk::cuda {

// The CUDA version (1000 * major + 10 * minor) whose ABI every entry point is
// resolved at. Drivers older than this are refused with a clear error.
inline constexpr int kPinnedApiVersion = 12000;

// The environment variable that names the driver library to open instead of
// "libcuda.so.1". Read once, at the first call to Driver().
inline constexpr char kLibcudaEnvVar[] = "RINGKERNEL_LIBCUDA";

// The library opened when RINGKERNEL_LIBCUDA is not set.
inline constexpr char kDefaultLibcuda[] = "libcuda.so.1";

// Every driver entry point the runtime uses, typed with the prototype of the
// variant that `cuGetProcAddress` returns for `kPinnedApiVersion`. Each type
// is cudaTypedefs.h's `PFN_<name>_v<version>`, where <version> is the CUDA
// version that introduced that variant; a newer variant (if any) is named in
// the comment and is deliberately not used.
//
// All members are non-null in a table returned by Driver(). The table is
// immutable and lives until the process exits; it may be used from any
// thread.
// Every driver entry point the runtime calls, listed once: X(member, the
// PFN type of the variant RingKernel is written against, the name resolved).
// Notes on the variants:
//   * cuDeviceTotalMem and cuDeviceGetUuid are the _v2 variants (size_t
//     bytes, CUDA 3.2; UUID, CUDA 11.4); cuda.h maps the plain names to them.
//   * cuDevicePrimaryCtxRelease and Reset are the _v2 variants of CUDA 11.0
//     (the same prototypes as the CUDA 7.0 originals).
//   * cuCtxSynchronize is the CUDA 2.0 variant, without arguments: it
//     synchronises the current context (CUDA 13.0 added
//     cuCtxSynchronize_v2(CUcontext); not used).
//   * Launches are the legacy default-stream variants; RingKernel always
//     passes its own streams.
//   * Memory functions are the _v2 variants of CUDA 3.2 (64-bit CUdeviceptr
//     and size_t).
//   * cuStreamDestroy and cuEventDestroy are the _v2 variants of CUDA 4.0;
//     cuEventElapsedTime is the CUDA 2.0 variant (CUDA 12.8 added a _v2 with
//     the same prototype; cuGetProcAddress hands it out only for 12080+).
// cuDriverGetVersion is resolved first and on its own (see Load()), and
// entry points only the benchmarks use are resolved there, with
// ResolveDriverEntryPoint.
#define RK_CUDA_DRIVER_ENTRY_POINTS(X)                                                                  \
  X(cuGetErrorName, PFN_cuGetErrorName_v6000, "cuGetErrorName")                                         \
  X(cuGetErrorString, PFN_cuGetErrorString_v6000, "cuGetErrorString")                                   \
  X(cuInit, PFN_cuInit_v2000, "cuInit")                                                                 \
  X(cuDeviceGetCount, PFN_cuDeviceGetCount_v2000, "cuDeviceGetCount")                                   \
  X(cuDeviceGet, PFN_cuDeviceGet_v2000, "cuDeviceGet")                                                  \
  X(cuDeviceGetName, PFN_cuDeviceGetName_v2000, "cuDeviceGetName")                                      \
  X(cuDeviceGetAttribute, PFN_cuDeviceGetAttribute_v2000, "cuDeviceGetAttribute")                       \
  X(cuDeviceTotalMem, PFN_cuDeviceTotalMem_v3020, "cuDeviceTotalMem")                                   \
  X(cuDeviceGetUuid, PFN_cuDeviceGetUuid_v11040, "cuDeviceGetUuid")                                     \
  X(cuDevicePrimaryCtxRetain, PFN_cuDevicePrimaryCtxRetain_v7000, "cuDevicePrimaryCtxRetain")           \
  X(cuDevicePrimaryCtxRelease, PFN_cuDevicePrimaryCtxRelease_v11000, "cuDevicePrimaryCtxRelease")       \
  X(cuDevicePrimaryCtxReset, PFN_cuDevicePrimaryCtxReset_v11000, "cuDevicePrimaryCtxReset")             \
  X(cuCtxSetCurrent, PFN_cuCtxSetCurrent_v4000, "cuCtxSetCurrent")                                      \
  X(cuCtxGetCurrent, PFN_cuCtxGetCurrent_v4000, "cuCtxGetCurrent")                                      \
  X(cuCtxSynchronize, PFN_cuCtxSynchronize_v2000, "cuCtxSynchronize")                                   \
  X(cuModuleLoadDataEx, PFN_cuModuleLoadDataEx_v2010, "cuModuleLoadDataEx")                             \
  X(cuModuleUnload, PFN_cuModuleUnload_v2000, "cuModuleUnload")                                         \
  X(cuModuleGetFunction, PFN_cuModuleGetFunction_v2000, "cuModuleGetFunction")                          \
  X(cuModuleGetGlobal, PFN_cuModuleGetGlobal_v3020, "cuModuleGetGlobal")                                \
  X(cuFuncGetAttribute, PFN_cuFuncGetAttribute_v2020, "cuFuncGetAttribute")                             \
  X(cuFuncSetAttribute, PFN_cuFuncSetAttribute_v9000, "cuFuncSetAttribute")                             \
  X(cuOccupancyMaxActiveBlocksPerMultiprocessor, PFN_cuOccupancyMaxActiveBlocksPerMultiprocessor_v6050, \
    "cuOccupancyMaxActiveBlocksPerMultiprocessor")                                                      \
  X(cuLaunchKernel, PFN_cuLaunchKernel_v4000, "cuLaunchKernel")                                         \
  X(cuLaunchCooperativeKernel, PFN_cuLaunchCooperativeKernel_v9000, "cuLaunchCooperativeKernel")        \
  X(cuMemAlloc, PFN_cuMemAlloc_v3020, "cuMemAlloc")                                                     \
  X(cuMemFree, PFN_cuMemFree_v3020, "cuMemFree")                                                        \
  X(cuMemGetInfo, PFN_cuMemGetInfo_v3020, "cuMemGetInfo")                                               \
  X(cuMemsetD8, PFN_cuMemsetD8_v3020, "cuMemsetD8")                                                     \
  X(cuMemsetD8Async, PFN_cuMemsetD8Async_v3020, "cuMemsetD8Async")                                      \
  X(cuMemcpyHtoD, PFN_cuMemcpyHtoD_v3020, "cuMemcpyHtoD")                                               \
  X(cuMemcpyDtoH, PFN_cuMemcpyDtoH_v3020, "cuMemcpyDtoH")                                               \
  X(cuMemcpyHtoDAsync, PFN_cuMemcpyHtoDAsync_v3020, "cuMemcpyHtoDAsync")                                \
  X(cuMemcpyDtoHAsync, PFN_cuMemcpyDtoHAsync_v3020, "cuMemcpyDtoHAsync")                                \
  X(cuMemcpyDtoD, PFN_cuMemcpyDtoD_v3020, "cuMemcpyDtoD")                                               \
  X(cuMemHostAlloc, PFN_cuMemHostAlloc_v2020, "cuMemHostAlloc")                                         \
  X(cuMemFreeHost, PFN_cuMemFreeHost_v2000, "cuMemFreeHost")                                            \
  X(cuMemHostGetDevicePointer, PFN_cuMemHostGetDevicePointer_v3020, "cuMemHostGetDevicePointer")        \
  X(cuStreamCreate, PFN_cuStreamCreate_v2000, "cuStreamCreate")                                         \
  X(cuStreamDestroy, PFN_cuStreamDestroy_v4000, "cuStreamDestroy")                                      \
  X(cuStreamQuery, PFN_cuStreamQuery_v2000, "cuStreamQuery")                                            \
  X(cuStreamSynchronize, PFN_cuStreamSynchronize_v2000, "cuStreamSynchronize")                          \
  X(cuEventCreate, PFN_cuEventCreate_v2000, "cuEventCreate")                                            \
  X(cuEventDestroy, PFN_cuEventDestroy_v4000, "cuEventDestroy")                                         \
  X(cuEventRecord, PFN_cuEventRecord_v2000, "cuEventRecord")                                            \
  X(cuEventSynchronize, PFN_cuEventSynchronize_v2000, "cuEventSynchronize")                             \
  X(cuEventQuery, PFN_cuEventQuery_v2000, "cuEventQuery")                                               \
  X(cuEventElapsedTime, PFN_cuEventElapsedTime_v2000, "cuEventElapsedTime")

struct DriverApi {
  // The version cuDriverGetVersion reported (e.g. 13000 for CUDA 13.0), and
  // the library that was opened.
  int driver_version = 0;
  std::string library;
  // cuGetProcAddress_v2, which resolved everything else (and resolves the
  // benchmarks' extra entry points: ResolveDriverEntryPoint).
  PFN_cuGetProcAddress_v12000 cuGetProcAddress = nullptr;
  PFN_cuDriverGetVersion_v2020 cuDriverGetVersion = nullptr;
#define RK_CUDA_DRIVER_MEMBER(member, type, name) type member = nullptr;
  RK_CUDA_DRIVER_ENTRY_POINTS(RK_CUDA_DRIVER_MEMBER)
#undef RK_CUDA_DRIVER_MEMBER
};

// Opens the driver (on the first call) and returns its table, or the error
// that every call returns if it could not be loaded:
//   * FailedPrecondition("no CUDA driver: ...") when the library cannot be
//     opened, is not a CUDA driver, or predates CUDA 12.0;
//   * FailedPrecondition naming the entry point and the driver version when
//     the driver lacks one of the entry points above;
//   * FailedPrecondition("no CUDA device found ...") when cuInit reports no
//     device, and FailedPrecondition with the CUDA error for any other cuInit
//     failure.
// Thread-safe; the result is computed once per process.
absl::StatusOr<const DriverApi*> Driver();

// Resolves an entry point outside the table (the benchmarks' graph API) from
// the loaded driver at the pinned ABI version, with the same errors as the
// table's. Needs Driver() to have succeeded.
absl::Status ResolveDriverEntryPoint(const DriverApi& api, const char* symbol, void** fn);
template <typename Fn>
absl::Status ResolveDriverEntryPoint(const DriverApi& api, const char* symbol, Fn* slot) {
  void* fn = nullptr;
  absl::Status s = ResolveDriverEntryPoint(api, symbol, &fn);
  if (s.ok()) *slot = reinterpret_cast<Fn>(fn);
  return s;
}

// The table if Driver() has already loaded the driver successfully, else
// null. Never loads anything; for code (such as error formatting) that must
// not trigger a load.
const DriverApi* LoadedDriver();

// "12.2" for 12020.
std::string FormatCudaVersion(int version);

}  // namespace rk::cuda

#endif  // RINGKERNEL_RUNTIME_CUDA_DRIVER_H_
