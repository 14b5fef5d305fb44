// Copyright 2026 The RingKernel Authors.
//
// stream.h: a CUDA stream — the queue the persistent kernel is launched on,
// and the way the host learns that it has exited or faulted.
//
// The persistent kernel never returns while the system runs, so the host
// does not wait on its stream; it polls it: `Query()` says whether the work
// is done, still running, or failed (a fault inside the kernel shows up here
// as an Aborted status naming the CUDA error).
//
// Example (a context is current on this thread):
//   RK_ASSIGN_OR_RETURN(rk::cuda::Stream stream, rk::cuda::Stream::Create());
//   ...launch on stream.get()...
//   RK_ASSIGN_OR_RETURN(bool done, stream.Query());
#ifndef RINGKERNEL_RUNTIME_STREAM_H_
#define RINGKERNEL_RUNTIME_STREAM_H_

#include <cuda.h>

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runtime/primary_context.h"

namespace rk::cuda {

struct StreamOptions {
  // CU_STREAM_NON_BLOCKING: the stream does not synchronise with the legacy
  // default stream. The default, because work that other code puts on the
  // default stream must never wait behind a kernel that runs forever.
  bool non_blocking = true;
};

// Owns a CUstream in the context that was current when it was created,
// destroyed on destruction unless that context was reset meanwhile (the
// driver lets work already queued finish). Move-only. Query and Synchronize
// may be called from any thread; the CUDA driver serialises them.
class Stream {
 public:
  static absl::StatusOr<Stream> Create(StreamOptions options = {});

  Stream(Stream&& other) noexcept;
  Stream& operator=(Stream&& other) noexcept;
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  ~Stream();

  // true when all work queued so far has finished, false while some is
  // still running; the work's error otherwise (e.g. Aborted for a kernel
  // that faulted, with the CUDA error's name in the message).
  absl::StatusOr<bool> Query() const;

  // Waits for all work queued so far; returns its error, if any.
  absl::Status Synchronize() const;

  CUstream get() const { return stream_; }

 private:
  Stream(BoundContext context, CUstream stream) : context_(std::move(context)), stream_(stream) {}
  void Release();

  BoundContext context_;
  CUstream stream_ = nullptr;  // null once moved from
};

}  // namespace rk::cuda

#endif  // RINGKERNEL_RUNTIME_STREAM_H_
