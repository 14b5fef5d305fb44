// Copyright 2026 The RingKernel Authors.
#include "runtime/mapped_buffer.h"

#include <cstring>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "ringkernel/status_macros.h"
#include "runtime/cuda_driver.h"
#include "runtime/cuda_status.h"

namespace rk::cuda {

absl::StatusOr<MappedBuffer> MappedBuffer::Create(size_t bytes, MappedBufferOptions options) {
  RK_ASSIGN_OR_RETURN(const DriverApi* cu, Driver());
  if (bytes == 0) return absl::InvalidArgumentError("cannot allocate an empty mapped buffer");
  RK_ASSIGN_OR_RETURN(BoundContext context, BoundContext::Current(*cu, "a mapped buffer"));

  unsigned int flags = CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE;
  if (options.write_combined) flags |= CU_MEMHOSTALLOC_WRITECOMBINED;
  void* host = nullptr;
  RK_CU_RETURN_IF_ERROR(cu->cuMemHostAlloc(&host, bytes, flags), "cuMemHostAlloc(", bytes, " bytes, mapped",
                        options.write_combined ? ", write-combined" : "", ")");
  CUdeviceptr device = 0;
  const CUresult mapped = cu->cuMemHostGetDevicePointer(&device, host, 0);
  if (mapped != CUDA_SUCCESS) {
    cu->cuMemFreeHost(host);
    return CuStatus(mapped, absl::StrCat("cuMemHostGetDevicePointer(", bytes, "-byte mapped buffer)"));
  }
  // The protocol relies on zeroed memory (an LL ring's empty slots must not
  // look written), and cuMemHostAlloc does not promise it.
  std::memset(host, 0, bytes);
  return MappedBuffer(std::move(context), host, device, bytes, options.write_combined);
}

MappedBuffer::MappedBuffer(MappedBuffer&& other) noexcept
    : context_(std::move(other.context_)),
      host_(std::exchange(other.host_, nullptr)),
      device_(std::exchange(other.device_, 0)),
      size_(std::exchange(other.size_, 0)),
      write_combined_(other.write_combined_) {}

MappedBuffer& MappedBuffer::operator=(MappedBuffer&& other) noexcept {
  if (this != &other) {
    Release();
    context_ = std::move(other.context_);
    host_ = std::exchange(other.host_, nullptr);
    device_ = std::exchange(other.device_, 0);
    size_ = std::exchange(other.size_, 0);
    write_combined_ = other.write_combined_;
  }
  return *this;
}

MappedBuffer::~MappedBuffer() { Release(); }

void MappedBuffer::Release() {
  if (host_ != nullptr && context_.ActivateForRelease()) context_.api()->cuMemFreeHost(host_);
  host_ = nullptr;
}

}  // namespace rk::cuda
