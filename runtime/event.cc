// Copyright 2026 The RingKernel Authors.
#include "runtime/event.h"

#include <utility>

#include "absl/status/status.h"
#include "ringkernel/status_macros.h"
#include "runtime/cuda_driver.h"
#include "runtime/cuda_status.h"

namespace rk::cuda {

absl::StatusOr<Event> Event::Create(EventOptions options) {
  RK_ASSIGN_OR_RETURN(const DriverApi* cu, Driver());
  RK_ASSIGN_OR_RETURN(BoundContext context, BoundContext::Current(*cu, "an event"));
  unsigned int flags = CU_EVENT_DEFAULT;
  if (!options.timing) flags |= CU_EVENT_DISABLE_TIMING;
  if (options.blocking_sync) flags |= CU_EVENT_BLOCKING_SYNC;
  CUevent event = nullptr;
  RK_CU_RETURN_IF_ERROR(cu->cuEventCreate(&event, flags), "cuEventCreate(flags ", flags, ")");
  return Event(std::move(context), event, options.timing);
}

Event::Event(Event&& other) noexcept
    : context_(std::move(other.context_)), event_(std::exchange(other.event_, nullptr)), timing_(other.timing_) {}

Event& Event::operator=(Event&& other) noexcept {
  if (this != &other) {
    Release();
    context_ = std::move(other.context_);
    event_ = std::exchange(other.event_, nullptr);
    timing_ = other.timing_;
  }
  return *this;
}

Event::~Event() { Release(); }

void Event::Release() {
  if (event_ != nullptr && context_.ActivateForRelease()) context_.api()->cuEventDestroy(event_);
  event_ = nullptr;
}

absl::Status Event::Record(const Stream& stream) {
  RK_RETURN_IF_ERROR(context_.CheckAlive("the event"));
  RK_CU_RETURN_IF_ERROR(context_.api()->cuEventRecord(event_, stream.get()), "cuEventRecord()");
  return absl::OkStatus();
}

absl::Status Event::Synchronize() const {
  RK_RETURN_IF_ERROR(context_.CheckAlive("the event"));
  RK_CU_RETURN_IF_ERROR(context_.api()->cuEventSynchronize(event_), "cuEventSynchronize()");
  return absl::OkStatus();
}

absl::StatusOr<bool> Event::Query() const {
  RK_RETURN_IF_ERROR(context_.CheckAlive("the event"));
  const CUresult result = context_.api()->cuEventQuery(event_);
  if (result == CUDA_SUCCESS) return true;
  if (result == CUDA_ERROR_NOT_READY) return false;
  return CuStatus(result, "cuEventQuery()");
}

absl::StatusOr<float> Event::ElapsedMs(const Event& start, const Event& end) {
  RK_RETURN_IF_ERROR(start.context_.CheckAlive("the start event"));
  RK_RETURN_IF_ERROR(end.context_.CheckAlive("the end event"));
  // The driver answers INVALID_HANDLE for an event without timing, which
  // would read like a bug of ours; say what is wrong instead.
  if (!start.timing_ || !end.timing_) {
    return absl::FailedPreconditionError(
        "Event::ElapsedMs needs two events created with timing (EventOptions::timing = true)");
  }
  float ms = 0;
  RK_CU_RETURN_IF_ERROR(start.context_.api()->cuEventElapsedTime(&ms, start.event_, end.event_),
                        "cuEventElapsedTime()");
  return ms;
}

}  // namespace rk::cuda
