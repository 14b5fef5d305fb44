// Copyright 2026 The RingKernel Authors.
#include "bench/nvml_power.h"

#include <dlfcn.h>

#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "ringkernel/status_macros.h"
#include "runtime/cuda_driver.h"

namespace rk::bench {

// The few NVML entry points used, with their documented prototypes (nvml.h
// is not needed at build time: NVML is the driver's, not the toolkit's).
// nvmlReturn_t is an enum whose success value is 0; nvmlDevice_t an opaque
// pointer.
struct PowerMeter::Api {
  using Init = int (*)();
  using Shutdown = int (*)();
  using ByIndex = int (*)(unsigned int, void**);
  using ByUuid = int (*)(const char*, void**);
  using PowerUsage = int (*)(void*, unsigned int*);
  using ErrorString = const char* (*)(int);

  void* library = nullptr;
  bool initialised = false;
  Init init = nullptr;
  Shutdown shutdown = nullptr;
  ByIndex by_index = nullptr;
  ByUuid by_uuid = nullptr;
  PowerUsage power_usage = nullptr;
  ErrorString error_string = nullptr;

  std::string Describe(int rc) const {
    const char* text = error_string != nullptr ? error_string(rc) : nullptr;
    return absl::StrCat(text != nullptr ? text : "unknown NVML error", " (", rc, ")");
  }
  ~Api() {
    if (initialised) shutdown();
    if (library != nullptr) dlclose(library);
  }
};

namespace {

// NVML's spelling of a device UUID: "GPU-" and the 16 bytes as 8-4-4-4-12
// hexadecimal digits.
std::string NvmlUuid(const unsigned char (&b)[16]) {
  std::string s = "GPU-";
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) s += '-';
    s += absl::StrFormat("%02x", b[i]);
  }
  return s;
}

template <class F>
bool Resolve(void* library, const char* name, F* out) {
  *out = reinterpret_cast<F>(dlsym(library, name));
  return *out != nullptr;
}

}  // namespace

PowerMeter::PowerMeter(std::unique_ptr<Api> api, void* device, std::string found)
    : api_(std::move(api)), device_(device), found_(std::move(found)) {}

PowerMeter::~PowerMeter() = default;

absl::StatusOr<std::unique_ptr<PowerMeter>> PowerMeter::Open(int ordinal) {
  auto api = std::make_unique<Api>();
  api->library = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (api->library == nullptr) {
    const char* why = dlerror();
    return absl::FailedPreconditionError(
        absl::StrCat("NVML is not available: dlopen(libnvidia-ml.so.1) failed: ", why != nullptr ? why : "?"));
  }
  if (!Resolve(api->library, "nvmlInit_v2", &api->init) || !Resolve(api->library, "nvmlShutdown", &api->shutdown) ||
      !Resolve(api->library, "nvmlDeviceGetHandleByIndex_v2", &api->by_index) ||
      !Resolve(api->library, "nvmlDeviceGetPowerUsage", &api->power_usage)) {
    return absl::FailedPreconditionError("libnvidia-ml.so.1 lacks nvmlInit_v2, nvmlShutdown, "
                                         "nvmlDeviceGetHandleByIndex_v2 or nvmlDeviceGetPowerUsage");
  }
  // Optional: better errors, and finding the device by UUID.
  Resolve(api->library, "nvmlErrorString", &api->error_string);
  Resolve(api->library, "nvmlDeviceGetHandleByUUID", &api->by_uuid);
  if (const int rc = api->init(); rc != 0) {
    return absl::FailedPreconditionError(absl::StrCat("nvmlInit_v2 failed: ", api->Describe(rc)));
  }
  api->initialised = true;

  void* device = nullptr;
  std::string found;
  std::string uuid_problem = "nvmlDeviceGetHandleByUUID is missing";
  if (api->by_uuid != nullptr) {
    absl::StatusOr<const cuda::DriverApi*> cu = cuda::Driver();
    CUdevice dev;
    CUuuid uuid;
    if (!cu.ok()) {
      uuid_problem = std::string(cu.status().message());
    } else if ((*cu)->cuDeviceGet(&dev, ordinal) != CUDA_SUCCESS ||
               (*cu)->cuDeviceGetUuid(&uuid, dev) != CUDA_SUCCESS) {
      uuid_problem = "cuDeviceGetUuid failed";
    } else {
      unsigned char bytes[16];
      for (int i = 0; i < 16; ++i) bytes[i] = static_cast<unsigned char>(uuid.bytes[i]);
      const std::string text = NvmlUuid(bytes);
      if (const int rc = api->by_uuid(text.c_str(), &device); rc == 0) {
        found = absl::StrCat("by UUID ", text);
      } else {
        uuid_problem = absl::StrCat("NVML does not know ", text, ": ", api->Describe(rc));
        device = nullptr;
      }
    }
  }
  if (device == nullptr) {
    if (const int rc = api->by_index(static_cast<unsigned>(ordinal), &device); rc != 0) {
      return absl::FailedPreconditionError(absl::StrCat("NVML has no device ", ordinal, ": ", api->Describe(rc),
                                                        " (and by UUID: ", uuid_problem, ")"));
    }
    found = absl::StrCat("by index ", ordinal, " (not by UUID: ", uuid_problem, ")");
  }
  unsigned int mw = 0;
  if (const int rc = api->power_usage(device, &mw); rc != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("nvmlDeviceGetPowerUsage cannot read this device: ", api->Describe(rc)));
  }
  return std::unique_ptr<PowerMeter>(new PowerMeter(std::move(api), device, std::move(found)));
}

absl::StatusOr<double> PowerMeter::Watts() const {
  unsigned int mw = 0;
  if (const int rc = api_->power_usage(device_, &mw); rc != 0) {
    return absl::UnavailableError(absl::StrCat("nvmlDeviceGetPowerUsage failed: ", api_->Describe(rc)));
  }
  return mw / 1000.0;
}

absl::StatusOr<std::vector<double>> SamplePower(const PowerMeter& meter, absl::Duration span, absl::Duration every) {
  std::vector<double> watts;
  const absl::Time start = absl::Now();
  absl::Time next = start;
  do {
    RK_ASSIGN_OR_RETURN(double w, meter.Watts());
    watts.push_back(w);
    next += every;
    absl::SleepFor(next - absl::Now());
  } while (next - start < span);
  return watts;
}

}  // namespace rk::bench
