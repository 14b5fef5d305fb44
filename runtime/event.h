// Copyright 2026 The RingKernel Authors.
//
// event.h: a CUDA event — a marker recorded into a stream, for waiting on
// and for GPU-side timing.
//
// Example (a context is current on this thread):
//   RK_ASSIGN_OR_RETURN(rk::cuda::Event start, rk::cuda::Event::Create());
//   RK_ASSIGN_OR_RETURN(rk::cuda::Event stop, rk::cuda::Event::Create());
//   RK_RETURN_IF_ERROR(start.Record(stream));
//   ...work on stream...
//   RK_RETURN_IF_ERROR(stop.Record(stream));
//   RK_RETURN_IF_ERROR(stop.Synchronize());
//   RK_ASSIGN_OR_RETURN(float ms, rk::cuda::Event::ElapsedMs(start, stop));
#ifndef RINGKERNEL_RUNTIME_EVENT_H_
#define RINGKERNEL_RUNTIME_EVENT_H_

#include <cuda.h>

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runtime/primary_context.h"
#include "runtime/stream.h"

namespace rk::cuda {

struct EventOptions {
  // Without timing (CU_EVENT_DISABLE_TIMING) an event is cheaper to record
  // and to wait on, but ElapsedMs refuses it.
  bool timing = true;
  // CU_EVENT_BLOCKING_SYNC: Synchronize() sleeps instead of spinning.
  bool blocking_sync = false;
};

// Owns a CUevent in the context that was current when it was created,
// destroyed on destruction unless that context was reset meanwhile.
// Move-only. Record must not race with Query/Synchronize on the same event;
// otherwise the methods may be called from any thread.
class Event {
 public:
  static absl::StatusOr<Event> Create(EventOptions options = {});

  Event(Event&& other) noexcept;
  Event& operator=(Event&& other) noexcept;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  ~Event();

  // Records the event at the current end of `stream`.
  absl::Status Record(const Stream& stream);

  // Waits until the work before the last Record has finished.
  absl::Status Synchronize() const;

  // true when the work before the last Record has finished, false while it
  // runs; its error otherwise.
  absl::StatusOr<bool> Query() const;

  // Milliseconds between two recorded, completed events (resolution about
  // half a microsecond). FailedPrecondition if either was created without
  // timing; Unavailable if either has not completed.
  static absl::StatusOr<float> ElapsedMs(const Event& start, const Event& end);

  CUevent get() const { return event_; }
  bool timing() const { return timing_; }

 private:
  Event(BoundContext context, CUevent event, bool timing)
      : context_(std::move(context)), event_(event), timing_(timing) {}
  void Release();

  BoundContext context_;
  CUevent event_ = nullptr;  // null once moved from
  bool timing_ = true;
};

}  // namespace rk::cuda

#endif  // RINGKERNEL_RUNTIME_EVENT_H_
