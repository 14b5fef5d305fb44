// Copyright 2026 The RingKernel Authors.
#include "runtime/stream.h"

#include <utility>

#include "absl/status/status.h"
#include "ringkernel/status_macros.h"
#include "runtime/cuda_driver.h"
#include "runtime/cuda_status.h"

namespace rk::cuda {

absl::StatusOr<Stream> Stream::Create(StreamOptions options) {
  RK_ASSIGN_OR_RETURN(const DriverApi* cu, Driver());
  RK_ASSIGN_OR_RETURN(BoundContext context, BoundContext::Current(*cu, "a stream"));
  const unsigned int flags = options.non_blocking ? CU_STREAM_NON_BLOCKING : CU_STREAM_DEFAULT;
  CUstream stream = nullptr;
  RK_CU_RETURN_IF_ERROR(cu->cuStreamCreate(&stream, flags), "cuStreamCreate(",
                        options.non_blocking ? "non-blocking" : "blocking", ")");
  return Stream(std::move(context), stream);
}

Stream::Stream(Stream&& other) noexcept
    : context_(std::move(other.context_)), stream_(std::exchange(other.stream_, nullptr)) {}

Stream& Stream::operator=(Stream&& other) noexcept {
  if (this != &other) {
    Release();
    context_ = std::move(other.context_);
    stream_ = std::exchange(other.stream_, nullptr);
  }
  return *this;
}

Stream::~Stream() { Release(); }

void Stream::Release() {
  if (stream_ != nullptr && context_.ActivateForRelease()) context_.api()->cuStreamDestroy(stream_);
  stream_ = nullptr;
}

absl::StatusOr<bool> Stream::Query() const {
  RK_RETURN_IF_ERROR(context_.CheckAlive("the stream"));
  const CUresult result = context_.api()->cuStreamQuery(stream_);
  if (result == CUDA_SUCCESS) return true;
  if (result == CUDA_ERROR_NOT_READY) return false;
  return CuStatus(result, "cuStreamQuery()");
}

absl::Status Stream::Synchronize() const {
  RK_RETURN_IF_ERROR(context_.CheckAlive("the stream"));
  RK_CU_RETURN_IF_ERROR(context_.api()->cuStreamSynchronize(stream_), "cuStreamSynchronize()");
  return absl::OkStatus();
}

}  // namespace rk::cuda
