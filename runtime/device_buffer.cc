// Copyright 2026 The RingKernel Authors.
#include "runtime/device_buffer.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "ringkernel/status_macros.h"
#include "runtime/cuda_driver.h"
#include "runtime/cuda_status.h"

namespace rk::cuda {

absl::StatusOr<DeviceBuffer> DeviceBuffer::Create(size_t bytes, DeviceBufferOptions options) {
  RK_ASSIGN_OR_RETURN(const DriverApi* cu, Driver());
  if (bytes == 0) return absl::InvalidArgumentError("cannot allocate an empty device buffer");
  RK_ASSIGN_OR_RETURN(BoundContext context, BoundContext::Current(*cu, "a device buffer"));
  CUdeviceptr address = 0;
  RK_CU_RETURN_IF_ERROR(cu->cuMemAlloc(&address, bytes), "cuMemAlloc(", bytes, " bytes)");
  DeviceBuffer buffer(std::move(context), address, bytes);
  if (options.zero) RK_RETURN_IF_ERROR(buffer.Zero());
  return buffer;
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : context_(std::move(other.context_)),
      address_(std::exchange(other.address_, 0)),
      size_(std::exchange(other.size_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    Release();
    context_ = std::move(other.context_);
    address_ = std::exchange(other.address_, 0);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

DeviceBuffer::~DeviceBuffer() { Release(); }

void DeviceBuffer::Release() {
  if (address_ != 0 && context_.ActivateForRelease()) context_.api()->cuMemFree(address_);
  address_ = 0;
}

absl::Status DeviceBuffer::CheckRange(const char* what, size_t offset, size_t bytes) const {
  RK_RETURN_IF_ERROR(context_.CheckAlive("the device buffer"));
  // Written so that it cannot overflow: offset + bytes might.
  if (offset > size_ || bytes > size_ - offset) {
    return absl::InvalidArgumentError(absl::StrCat(what, " of ", bytes, " bytes at offset ", offset,
                                                   " does not fit in a device buffer of ", size_, " bytes"));
  }
  return absl::OkStatus();
}

absl::Status DeviceBuffer::Upload(const void* src, size_t bytes, size_t offset) {
  RK_RETURN_IF_ERROR(CheckRange("upload", offset, bytes));
  if (bytes == 0) return absl::OkStatus();
  RK_CU_RETURN_IF_ERROR(context_.api()->cuMemcpyHtoD(address_ + offset, src, bytes), "cuMemcpyHtoD(", bytes, " bytes)");
  return absl::OkStatus();
}

absl::Status DeviceBuffer::Download(void* dst, size_t bytes, size_t offset) const {
  RK_RETURN_IF_ERROR(CheckRange("download", offset, bytes));
  if (bytes == 0) return absl::OkStatus();
  RK_CU_RETURN_IF_ERROR(context_.api()->cuMemcpyDtoH(dst, address_ + offset, bytes), "cuMemcpyDtoH(", bytes, " bytes)");
  return absl::OkStatus();
}

absl::Status DeviceBuffer::CopyFrom(const DeviceBuffer& src, size_t bytes, size_t dst_offset, size_t src_offset) {
  RK_RETURN_IF_ERROR(CheckRange("copy destination", dst_offset, bytes));
  RK_RETURN_IF_ERROR(src.CheckRange("copy source", src_offset, bytes));
  if (bytes == 0) return absl::OkStatus();
  RK_CU_RETURN_IF_ERROR(context_.api()->cuMemcpyDtoD(address_ + dst_offset, src.address_ + src_offset, bytes),
                        "cuMemcpyDtoD(", bytes, " bytes)");
  return absl::OkStatus();
}

absl::Status DeviceBuffer::Zero() {
  RK_RETURN_IF_ERROR(CheckRange("zero fill", 0, size_));
  RK_CU_RETURN_IF_ERROR(context_.api()->cuMemsetD8(address_, 0, size_), "cuMemsetD8(", size_, " bytes)");
  return absl::OkStatus();
}

absl::Status DeviceBuffer::UploadAsync(const Stream& stream, const void* src, size_t bytes, size_t offset) {
  RK_RETURN_IF_ERROR(CheckRange("upload", offset, bytes));
  if (bytes == 0) return absl::OkStatus();
  RK_CU_RETURN_IF_ERROR(context_.api()->cuMemcpyHtoDAsync(address_ + offset, src, bytes, stream.get()),
                        "cuMemcpyHtoDAsync(", bytes, " bytes)");
  return absl::OkStatus();
}

absl::Status DeviceBuffer::DownloadAsync(const Stream& stream, void* dst, size_t bytes, size_t offset) const {
  RK_RETURN_IF_ERROR(CheckRange("download", offset, bytes));
  if (bytes == 0) return absl::OkStatus();
  RK_CU_RETURN_IF_ERROR(context_.api()->cuMemcpyDtoHAsync(dst, address_ + offset, bytes, stream.get()),
                        "cuMemcpyDtoHAsync(", bytes, " bytes)");
  return absl::OkStatus();
}

absl::Status DeviceBuffer::ZeroAsync(const Stream& stream) {
  RK_RETURN_IF_ERROR(CheckRange("zero fill", 0, size_));
  RK_CU_RETURN_IF_ERROR(context_.api()->cuMemsetD8Async(address_, 0, size_, stream.get()), "cuMemsetD8Async(", size_,
                        " bytes)");
  return absl::OkStatus();
}

}  // namespace rk::cuda
