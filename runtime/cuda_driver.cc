// Copyright 2026 The RingKernel Authors.
#include "runtime/cuda_driver.h"

#include <dlfcn.h>

#include <atomic>
#include <cstdlib>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "ringkernel/status_macros.h"
#include "runtime/cuda_status.h"

namespace rk::cuda {
namespace {

std::atomic<const DriverApi*> g_loaded{nullptr};

constexpr char kNeedDriver[] = "RingKernel needs an NVIDIA GPU and an NVIDIA driver for CUDA 12.0 or newer";

// How a driver is described in messages: "libcuda.so.1 (CUDA 12.4 driver)".
std::string DescribeDriver(const std::string& library, int version) {
  if (version <= 0) return library;
  return absl::StrCat(library, " (CUDA ", FormatCudaVersion(version), " driver)");
}

// Resolves driver entry points through cuGetProcAddress at the pinned
// version and remembers the first failure.
class Resolver {
 public:
  Resolver(PFN_cuGetProcAddress_v12000 get_proc, const DriverApi* api) : get_proc_(get_proc), api_(api) {}

  // Resolves `symbol` into `*slot` at `version` (the pinned one, except
  // for cuDriverGetVersion; see Load()).
  template <typename Fn>
  void operator()(const char* symbol, Fn* slot, int version = kPinnedApiVersion) {
    if (!status_.ok()) return;
    void* fn = nullptr;
    CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    // LEGACY_STREAM: never the per-thread-default-stream (_ptsz) variants;
    // every call RingKernel makes names its stream.
    const CUresult result = get_proc_(symbol, &fn, version, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &found);
    if (result != CUDA_SUCCESS) {
      status_ = absl::FailedPreconditionError(absl::StrCat(
          "the CUDA driver ", DescribeDriver(api_->library, api_->driver_version), " could not resolve ", symbol,
          " at the CUDA ", FormatCudaVersion(version), " ABI: ",
          CuStatusWith(api_, result, absl::StrCat("cuGetProcAddress(\"", symbol, "\")")).message(), ". ", kNeedDriver));
      return;
    }
    if (fn == nullptr || found != CU_GET_PROC_ADDRESS_SUCCESS) {
      status_ = absl::FailedPreconditionError(absl::StrCat(
          "the CUDA driver ", DescribeDriver(api_->library, api_->driver_version), " lacks the entry point ", symbol,
          " (CUDA ", FormatCudaVersion(version), " ABI)",
          found == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT ? ", which it offers only for newer CUDA versions" : "",
          ". ", kNeedDriver, "; update the NVIDIA driver"));
      return;
    }
    *slot = reinterpret_cast<Fn>(fn);
  }

  const absl::Status& status() const { return status_; }

 private:
  PFN_cuGetProcAddress_v12000 get_proc_;
  const DriverApi* api_;
  absl::Status status_;
};

absl::StatusOr<std::unique_ptr<DriverApi>> Load() {
  auto api = std::make_unique<DriverApi>();
  const char* override_path = std::getenv(kLibcudaEnvVar);
  api->library = override_path != nullptr && *override_path != '\0' ? override_path : kDefaultLibcuda;

  dlerror();  // clear any stale error
  void* handle = dlopen(api->library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return absl::FailedPreconditionError(absl::StrCat("no CUDA driver: ", api->library, " could not be loaded (",
                                                      why != nullptr ? why : "unknown error", "); ", kNeedDriver,
                                                      ". On a GPU machine, install the NVIDIA driver or point ",
                                                      kLibcudaEnvVar, " at its libcuda.so.1"));
  }

  // cuGetProcAddress_v2 (the CUDA 12.0 prototype, with a query result) is the
  // only symbol looked up by name: everything else comes through it, at the
  // pinned version. Drivers before 12.0 do not export it.
  auto get_proc = reinterpret_cast<PFN_cuGetProcAddress_v12000>(dlsym(handle, "cuGetProcAddress_v2"));
  if (get_proc == nullptr) {
    // An old driver still exports cuDriverGetVersion; name its version so
    // the user knows what to update.
    std::string found_version;
    if (auto get_version = reinterpret_cast<PFN_cuDriverGetVersion_v2020>(dlsym(handle, "cuDriverGetVersion"))) {
      int version = 0;
      if (get_version(&version) == CUDA_SUCCESS && version > 0) {
        found_version = absl::StrCat(" (it is a CUDA ", FormatCudaVersion(version), " driver)");
      }
    }
    dlclose(handle);
    return absl::FailedPreconditionError(
        absl::StrCat("no CUDA driver: ", api->library, " does not export cuGetProcAddress_v2", found_version,
                     ", so it is not a CUDA driver or is older than CUDA 12.0; ", kNeedDriver));
  }
  // The library stays open for the life of the process: handles from it may
  // outlive every RingKernel object, and unloading a driver is never safe.

  api->cuGetProcAddress = get_proc;
  Resolver resolve(get_proc, api.get());
  // The driver's version first: cuGetProcAddress refuses a version newer
  // than the driver with a bare INVALID_VALUE, so ask for cuDriverGetVersion
  // at the version that introduced it (its only variant) and check.
  resolve("cuDriverGetVersion", &api->cuDriverGetVersion, 2020);
  RK_RETURN_IF_ERROR(resolve.status());
  if (CUresult r = api->cuDriverGetVersion(&api->driver_version); r != CUDA_SUCCESS) {
    return absl::FailedPreconditionError(absl::StrCat("the CUDA driver ", api->library, " did not report its version: ",
                                                      CuStatusWith(nullptr, r, "cuDriverGetVersion()").message()));
  }
  if (api->driver_version < kPinnedApiVersion) {
    return absl::FailedPreconditionError(absl::StrCat("the CUDA driver ",
                                                      DescribeDriver(api->library, api->driver_version),
                                                      " is too old: ", kNeedDriver, "; update the NVIDIA driver"));
  }
  // Then the table, the error-message functions first (the other look-ups'
  // messages use them).
#define RK_CUDA_DRIVER_RESOLVE(member, type, name) resolve(name, &api->member);
  RK_CUDA_DRIVER_ENTRY_POINTS(RK_CUDA_DRIVER_RESOLVE)
#undef RK_CUDA_DRIVER_RESOLVE
  RK_RETURN_IF_ERROR(resolve.status());

  const CUresult init = api->cuInit(0);
  if (init == CUDA_ERROR_NO_DEVICE) {
    return absl::FailedPreconditionError(absl::StrCat(
        "no CUDA device found: ", CuStatusWith(api.get(), init, "cuInit(0)").message(),
        ". RingKernel needs an NVIDIA GPU: check that nvidia-smi lists one and that CUDA_VISIBLE_DEVICES does not "
        "hide it"));
  }
  if (init != CUDA_SUCCESS) {
    return absl::FailedPreconditionError(
        absl::StrCat("the CUDA driver ", DescribeDriver(api->library, api->driver_version),
                     " could not be initialised: ", CuStatusWith(api.get(), init, "cuInit(0)").message()));
  }
  return api;
}

}  // namespace

std::string FormatCudaVersion(int version) { return absl::StrCat(version / 1000, ".", (version % 1000) / 10); }

absl::StatusOr<const DriverApi*> Driver() {
  // A function-local static: initialised exactly once, and other threads
  // asking meanwhile wait for it. Never destroyed, so that objects released
  // during static destruction can still reach the driver.
  static const absl::StatusOr<const DriverApi*>* const kResult = [] {
    absl::StatusOr<std::unique_ptr<DriverApi>> api = Load();
    if (!api.ok()) return new absl::StatusOr<const DriverApi*>(api.status());
    const DriverApi* table = api->release();
    g_loaded.store(table, std::memory_order_release);
    return new absl::StatusOr<const DriverApi*>(table);
  }();
  return *kResult;
}

const DriverApi* LoadedDriver() { return g_loaded.load(std::memory_order_acquire); }

absl::Status ResolveDriverEntryPoint(const DriverApi& api, const char* symbol, void** fn) {
  if (api.cuGetProcAddress == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat("cannot resolve ", symbol, ": the CUDA driver is not loaded"));
  }
  Resolver resolve(api.cuGetProcAddress, &api);
  resolve(symbol, fn);
  return resolve.status();
}

}  // namespace rk::cuda
