// Copyright 2026 The RingKernel Authors.
//
// primary_context.h: a device's primary CUDA context, retained for as long
// as the object lives.
//
// RingKernel uses the primary context (the one the CUDA runtime uses too)
// rather than creating its own, so that it shares memory and modules with
// any CUDA runtime code in the same process, the benchmark's baselines among
// them. The other wrappers of this folder (Module, MappedBuffer,
// DeviceBuffer, Stream, Event) create their handles in the context current
// on the calling thread: make it current first.
//
// Example:
//   RK_ASSIGN_OR_RETURN(rk::cuda::Device device, rk::cuda::Device::Create(0));
//   RK_ASSIGN_OR_RETURN(rk::cuda::PrimaryContext context, rk::cuda::PrimaryContext::Create(device));
//   RK_RETURN_IF_ERROR(context.MakeCurrent());
//   RK_ASSIGN_OR_RETURN(rk::cuda::Stream stream, rk::cuda::Stream::Create());
//
// `BoundContext` is what every other wrapper remembers of the context its
// handle was made in; after PrimaryContext::Reset() it tells them that their
// handle died with the context, so that they neither use nor release it
// (the driver may hand the same handle value to a new object).
#ifndef RINGKERNEL_RUNTIME_PRIMARY_CONTEXT_H_
#define RINGKERNEL_RUNTIME_PRIMARY_CONTEXT_H_

#include <cuda.h>

#include <atomic>
#include <cstdint>
#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "runtime/device.h"

namespace rk::cuda {

struct DriverApi;

// Owns one retain of a device's primary context (cuDevicePrimaryCtxRetain),
// released on destruction; the context itself lives while anyone in the
// process retains it. Move-only. Creating one does not make the context
// current. Its methods may be called from any thread, but Reset() must not
// race with any other use of the device.
class PrimaryContext {
 public:
  struct MemoryInfo {
    uint64_t free_bytes = 0;
    uint64_t total_bytes = 0;
  };

  // Retains the primary context of `device`. Fails like Driver() without a
  // driver; creating the context can fail with ResourceExhausted (out of
  // memory) or FailedPrecondition (device busy in exclusive mode).
  static absl::StatusOr<PrimaryContext> Create(const Device& device);
  // The same for device `ordinal` (Device::Create(ordinal) first).
  static absl::StatusOr<PrimaryContext> Create(int ordinal);

  PrimaryContext(PrimaryContext&& other) noexcept;
  PrimaryContext& operator=(PrimaryContext&& other) noexcept;
  PrimaryContext(const PrimaryContext&) = delete;
  PrimaryContext& operator=(const PrimaryContext&) = delete;
  ~PrimaryContext();

  // Makes the context current on the calling thread (cuCtxSetCurrent). Each
  // thread that creates or uses CUDA objects must do this once.
  absl::Status MakeCurrent() const;

  // Makes the context current and waits for all its work (cuCtxSynchronize).
  // Reports the first error of any work in the context, sticky ones included.
  absl::Status Synchronize() const;

  // Free and total device memory (cuMemGetInfo); makes the context current.
  absl::StatusOr<MemoryInfo> GetMemoryInfo() const;

  // Tears the primary context down (cuDevicePrimaryCtxReset) and re-creates
  // it empty. This is the way out of a kernel that never returns: it
  // destroys EVERYTHING in the context, for every user in the process (the
  // CUDA runtime's allocations too): all device and mapped allocations,
  // modules, streams, events and graphs, and any kernel still running. The
  // wrappers that held such handles notice it (BoundContext::alive()) and
  // neither use nor release them afterwards. Not a cure for sticky errors:
  // the CUDA documentation says only a new process recovers from those, and
  // indeed after a trap (CUDA 13.0, driver 580) the context cannot be
  // retained again: Reset returns the sticky error.
  // After a successful Reset the context is current on the calling thread.
  absl::Status Reset();

  CUcontext get() const { return context_; }
  CUdevice device() const { return device_; }
  int ordinal() const { return ordinal_; }

 private:
  PrimaryContext(const DriverApi* api, CUdevice device, int ordinal, CUcontext context)
      : api_(api), device_(device), ordinal_(ordinal), context_(context) {}

  const DriverApi* api_ = nullptr;
  CUdevice device_ = 0;
  int ordinal_ = -1;
  CUcontext context_ = nullptr;  // null once moved from
};

// What a driver-handle wrapper remembers of the context its handle belongs
// to: the table, the context and the context's reset count at creation.
// Copyable; thread-safe.
class BoundContext {
 public:
  BoundContext() = default;

  // The context current on the calling thread. FailedPrecondition, naming
  // `what` (e.g. "a stream"), when there is none.
  static absl::StatusOr<BoundContext> Current(const DriverApi& api, absl::string_view what);

  // False once the context has been reset after the handle was made: the
  // handle is gone and must be neither used nor released.
  bool alive() const;

  // OK while alive(); otherwise FailedPrecondition saying that `what` was
  // destroyed by a reset of its context.
  absl::Status CheckAlive(absl::string_view what) const;

  // For destructors: makes the context current on the calling thread unless
  // it already is. Returns false (do not release) when the context is not
  // alive or cannot be made current.
  bool ActivateForRelease() const;

  const DriverApi* api() const { return api_; }
  CUcontext context() const { return context_; }

 private:
  friend class PrimaryContext;

  // The reset counter of `context`, shared by everyone bound to it.
  static std::shared_ptr<std::atomic<uint64_t>> ResetCounter(CUcontext context);

  const DriverApi* api_ = nullptr;
  CUcontext context_ = nullptr;
  std::shared_ptr<std::atomic<uint64_t>> resets_;
  uint64_t resets_at_creation_ = 0;
};

}  // namespace rk::cuda

#endif  // RINGKERNEL_RUNTIME_PRIMARY_CONTEXT_H_
