// Copyright 2026 The RingKernel Authors.
//
// fake_libcuda.c: a stand-in for libcuda.so.1, for the CPU tests of the
// driver loader (tests/cuda_driver_test.cc compiles it into a shared library
// at run time and points RINGKERNEL_LIBCUDA at it).
//
// It exports cuGetProcAddress_v2 and cuDriverGetVersion, as a real driver
// does, and hands out a few working entry points plus a stub for every
// other name the runtime asks for. Its behaviour is set by environment
// variables:
//   FAKE_CUDA_VERSION   the driver version it reports (default 12080)
//   FAKE_CUDA_MISSING   an entry point it pretends not to have
//   FAKE_CUDA_INIT      the CUresult cuInit returns (default 0)
//   FAKE_CUDA_DEVICES   the device count it reports (default 0)
//   FAKE_CUDA_LOG       a file to which every lookup is appended as
//                       "name version flags\n"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int Result;  // CUresult

static int EnvInt(const char* name, int fallback) {
  const char* v = getenv(name);
  return v != NULL && *v != '\0' ? atoi(v) : fallback;
}

Result cuDriverGetVersion(int* version) {
  if (version == NULL) return 1;
  *version = EnvInt("FAKE_CUDA_VERSION", 12080);
  return 0;
}

static Result FakeInit(unsigned int flags) {
  (void)flags;
  return EnvInt("FAKE_CUDA_INIT", 0);
}

static Result FakeDeviceGetCount(int* count) {
  *count = EnvInt("FAKE_CUDA_DEVICES", 0);
  return 0;
}

// No context is ever current.
static Result FakeCtxGetCurrent(void** context) {
  *context = NULL;
  return 0;
}

// Names and descriptions for two codes only, worded so that a test can tell
// them from RingKernel's own table; other codes are unknown to this
// "driver", as newer codes are to an older real one.
static Result FakeGetErrorName(Result error, const char** out) {
  switch (error) {
    case 2: *out = "CUDA_ERROR_OUT_OF_MEMORY"; return 0;
    case 100: *out = "CUDA_ERROR_NO_DEVICE"; return 0;
    default: *out = NULL; return 1;
  }
}

static Result FakeGetErrorString(Result error, const char** out) {
  switch (error) {
    case 2: *out = "fake driver: out of memory"; return 0;
    case 100: *out = "fake driver: no CUDA-capable device is detected"; return 0;
    default: *out = NULL; return 1;
  }
}

// Every other entry point: "not supported".
static Result FakeStub(void) { return 801; }

struct Entry {
  const char* name;
  void* fn;
};

static const struct Entry kEntries[] = {
    {"cuInit", (void*)FakeInit},
    {"cuDriverGetVersion", (void*)cuDriverGetVersion},
    {"cuGetErrorName", (void*)FakeGetErrorName},
    {"cuGetErrorString", (void*)FakeGetErrorString},
    {"cuDeviceGetCount", (void*)FakeDeviceGetCount},
    {"cuCtxGetCurrent", (void*)FakeCtxGetCurrent},
};

static const char* const kStubbed[] = {
    "cuDeviceGet", "cuDeviceGetName", "cuDeviceGetAttribute", "cuDeviceTotalMem", "cuDeviceGetUuid",
    "cuDevicePrimaryCtxRetain", "cuDevicePrimaryCtxRelease", "cuDevicePrimaryCtxReset", "cuCtxSetCurrent",
    "cuCtxSynchronize", "cuModuleLoadDataEx", "cuModuleUnload", "cuModuleGetFunction", "cuModuleGetGlobal",
    "cuFuncGetAttribute", "cuFuncSetAttribute", "cuOccupancyMaxActiveBlocksPerMultiprocessor", "cuLaunchKernel",
    "cuLaunchCooperativeKernel", "cuMemAlloc", "cuMemFree", "cuMemGetInfo", "cuMemsetD8", "cuMemsetD8Async",
    "cuMemcpyHtoD", "cuMemcpyDtoH", "cuMemcpyHtoDAsync", "cuMemcpyDtoHAsync", "cuMemcpyDtoD", "cuMemHostAlloc",
    "cuMemFreeHost", "cuMemHostGetDevicePointer", "cuStreamCreate", "cuStreamDestroy", "cuStreamQuery",
    "cuStreamSynchronize", "cuEventCreate", "cuEventDestroy", "cuEventRecord", "cuEventSynchronize",
    "cuEventQuery", "cuEventElapsedTime", "cuStreamBeginCapture", "cuStreamEndCapture",
    "cuGraphInstantiateWithFlags", "cuGraphLaunch", "cuGraphExecDestroy", "cuGraphDestroy",
};

// The CUDA 12.0 prototype: (symbol, pfn, cudaVersion, flags, symbolStatus).
Result cuGetProcAddress_v2(const char* symbol, void** pfn, int cuda_version, unsigned long long flags,
                           int* symbol_status) {
  const char* log_path = getenv("FAKE_CUDA_LOG");
  if (log_path != NULL && *log_path != '\0') {
    FILE* log = fopen(log_path, "a");
    if (log != NULL) {
      fprintf(log, "%s %d %llu\n", symbol, cuda_version, flags);
      fclose(log);
    }
  }
  *pfn = NULL;
  if (symbol_status != NULL) *symbol_status = 1;  // CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND
  // A real driver refuses versions newer than itself.
  if (cuda_version > EnvInt("FAKE_CUDA_VERSION", 12080)) return 1;  // CUDA_ERROR_INVALID_VALUE
  const char* missing = getenv("FAKE_CUDA_MISSING");
  if (missing != NULL && strcmp(missing, symbol) == 0) return 0;
  for (size_t i = 0; i < sizeof(kEntries) / sizeof(kEntries[0]); ++i) {
    if (strcmp(kEntries[i].name, symbol) == 0) {
      *pfn = kEntries[i].fn;
      if (symbol_status != NULL) *symbol_status = 0;
      return 0;
    }
  }
  for (size_t i = 0; i < sizeof(kStubbed) / sizeof(kStubbed[0]); ++i) {
    if (strcmp(kStubbed[i], symbol) == 0) {
      *pfn = (void*)FakeStub;
      if (symbol_status != NULL) *symbol_status = 0;
      return 0;
    }
  }
  return 0;
}
