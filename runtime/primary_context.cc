// Copyright 2026 The RingKernel Authors.
#include "runtime/primary_context.h"

#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "ringkernel/status_macros.h"
#include "runtime/cuda_driver.h"
#include "runtime/cuda_status.h"

namespace rk::cuda {

absl::StatusOr<PrimaryContext> PrimaryContext::Create(const Device& device) {
  RK_ASSIGN_OR_RETURN(const DriverApi* cu, Driver());
  CUcontext context = nullptr;
  RK_CU_RETURN_IF_ERROR(cu->cuDevicePrimaryCtxRetain(&context, device.handle()), "cuDevicePrimaryCtxRetain(device ",
                        device.ordinal(), ")");
  return PrimaryContext(cu, device.handle(), device.ordinal(), context);
}

absl::StatusOr<PrimaryContext> PrimaryContext::Create(int ordinal) {
  RK_ASSIGN_OR_RETURN(Device device, Device::Create(ordinal));
  return Create(device);
}

PrimaryContext::PrimaryContext(PrimaryContext&& other) noexcept
    : api_(other.api_),
      device_(other.device_),
      ordinal_(other.ordinal_),
      context_(std::exchange(other.context_, nullptr)) {}

PrimaryContext& PrimaryContext::operator=(PrimaryContext&& other) noexcept {
  if (this != &other) {
    if (context_ != nullptr) api_->cuDevicePrimaryCtxRelease(device_);
    api_ = other.api_;
    device_ = other.device_;
    ordinal_ = other.ordinal_;
    context_ = std::exchange(other.context_, nullptr);
  }
  return *this;
}

PrimaryContext::~PrimaryContext() {
  // Releasing the last retain resets the context, which frees whatever is
  // still allocated in it; so the other wrappers must be gone first (a
  // System owns its PrimaryContext as its first member, destroyed last).
  if (context_ != nullptr) api_->cuDevicePrimaryCtxRelease(device_);
}

absl::Status PrimaryContext::MakeCurrent() const {
  if (context_ == nullptr) return absl::FailedPreconditionError("MakeCurrent() on a moved-from PrimaryContext");
  RK_CU_RETURN_IF_ERROR(api_->cuCtxSetCurrent(context_), "cuCtxSetCurrent(primary context of device ", ordinal_, ")");
  return absl::OkStatus();
}

absl::Status PrimaryContext::Synchronize() const {
  RK_RETURN_IF_ERROR(MakeCurrent());
  RK_CU_RETURN_IF_ERROR(api_->cuCtxSynchronize(), "cuCtxSynchronize(device ", ordinal_, ")");
  return absl::OkStatus();
}

absl::StatusOr<PrimaryContext::MemoryInfo> PrimaryContext::GetMemoryInfo() const {
  RK_RETURN_IF_ERROR(MakeCurrent());
  size_t free_bytes = 0;
  size_t total_bytes = 0;
  RK_CU_RETURN_IF_ERROR(api_->cuMemGetInfo(&free_bytes, &total_bytes), "cuMemGetInfo(device ", ordinal_, ")");
  return MemoryInfo{free_bytes, total_bytes};
}

absl::Status PrimaryContext::Reset() {
  if (context_ == nullptr) return absl::FailedPreconditionError("Reset() on a moved-from PrimaryContext");
  // Mark every handle of the old context dead before it dies, so that no
  // wrapper releases a handle value the driver may already have reused.
  BoundContext::ResetCounter(context_)->fetch_add(1, std::memory_order_acq_rel);
  RK_CU_RETURN_IF_ERROR(api_->cuDevicePrimaryCtxReset(device_), "cuDevicePrimaryCtxReset(device ", ordinal_, ")");
  // A reset does not drop our retain, but the old handle is not promised to
  // stay valid: take the handle afresh (retain + release keeps the count).
  CUcontext fresh = nullptr;
  RK_CU_RETURN_IF_ERROR(api_->cuDevicePrimaryCtxRetain(&fresh, device_), "cuDevicePrimaryCtxRetain(device ", ordinal_,
                        ") after a reset");
  RK_CU_RETURN_IF_ERROR(api_->cuDevicePrimaryCtxRelease(device_), "cuDevicePrimaryCtxRelease(device ", ordinal_,
                        ") after a reset");
  context_ = fresh;
  return MakeCurrent();
}

// ---------------------------------------------------------------------------
// BoundContext

std::shared_ptr<std::atomic<uint64_t>> BoundContext::ResetCounter(CUcontext context) {
  // One counter per context handle for the life of the process: a handful
  // of entries (one per device, plus one per reset that changed a handle).
  static absl::Mutex* const mu = new absl::Mutex;
  static auto* const counters = new absl::flat_hash_map<CUcontext, std::shared_ptr<std::atomic<uint64_t>>>;
  absl::MutexLock lock(mu);
  auto& counter = (*counters)[context];
  if (counter == nullptr) counter = std::make_shared<std::atomic<uint64_t>>(0);
  return counter;
}

absl::StatusOr<BoundContext> BoundContext::Current(const DriverApi& api, absl::string_view what) {
  CUcontext context = nullptr;
  RK_CU_RETURN_IF_ERROR(api.cuCtxGetCurrent(&context), "cuCtxGetCurrent()");
  if (context == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat("cannot create ", what,
                                                      ": no CUDA context is current on this thread; call "
                                                      "PrimaryContext::MakeCurrent() on this thread first"));
  }
  BoundContext bound;
  bound.api_ = &api;
  bound.context_ = context;
  bound.resets_ = ResetCounter(context);
  bound.resets_at_creation_ = bound.resets_->load(std::memory_order_acquire);
  return bound;
}

bool BoundContext::alive() const {
  return resets_ != nullptr && resets_->load(std::memory_order_acquire) == resets_at_creation_;
}

absl::Status BoundContext::CheckAlive(absl::string_view what) const {
  if (alive()) return absl::OkStatus();
  return absl::FailedPreconditionError(
      absl::StrCat(what, " no longer exists: its CUDA context was reset (PrimaryContext::Reset) after it was made"));
}

bool BoundContext::ActivateForRelease() const {
  if (!alive()) return false;
  CUcontext current = nullptr;
  if (api_->cuCtxGetCurrent(&current) != CUDA_SUCCESS) return false;
  if (current == context_) return true;
  return api_->cuCtxSetCurrent(context_) == CUDA_SUCCESS;
}

}  // namespace rk::cuda
