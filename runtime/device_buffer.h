// Copyright 2026 The RingKernel Authors.
//
// device_buffer.h: device memory (cuMemAlloc) — actor state, mailboxes, the
// routing table and everything else only the GPU touches while it runs.
//
// Example (a context is current on this thread):
//   RK_ASSIGN_OR_RETURN(rk::cuda::DeviceBuffer table,
//                       rk::cuda::DeviceBuffer::Create(bytes, {.zero = true}));
//   RK_RETURN_IF_ERROR(table.Upload(host_copy.data(), host_copy.size()));
#ifndef RINGKERNEL_RUNTIME_DEVICE_BUFFER_H_
#define RINGKERNEL_RUNTIME_DEVICE_BUFFER_H_

#include <cuda.h>

#include <cstddef>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runtime/primary_context.h"
#include "runtime/stream.h"

namespace rk::cuda {

struct DeviceBufferOptions {
  // Fill with zeros before returning (synchronously, cuMemsetD8).
  bool zero = false;
};

// Owns a cuMemAlloc allocation in the context that was current when it was
// created, freed on destruction unless that context was reset meanwhile.
// Move-only. The copy methods check their ranges against size() and return
// InvalidArgument (naming offset, length and size) for one that does not
// fit; they may be called from any thread, ordering is the caller's.
class DeviceBuffer {
 public:
  // Allocates `bytes` (> 0). ResourceExhausted when device memory runs out.
  static absl::StatusOr<DeviceBuffer> Create(size_t bytes, DeviceBufferOptions options = {});

  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer();

  // Synchronous copies, through the legacy default stream: they wait for
  // earlier work on blocking streams, but not for streams made non-blocking
  // (Stream's default), so a running persistent kernel does not stall them.
  absl::Status Upload(const void* src, size_t bytes, size_t offset = 0);
  absl::Status Download(void* dst, size_t bytes, size_t offset = 0) const;
  absl::Status CopyFrom(const DeviceBuffer& src, size_t bytes, size_t dst_offset = 0, size_t src_offset = 0);
  absl::Status Zero();

  // Asynchronous versions, queued on `stream`; `src`/`dst` must stay valid
  // (and, for true asynchrony, be pinned) until the stream reaches them.
  absl::Status UploadAsync(const Stream& stream, const void* src, size_t bytes, size_t offset = 0);
  absl::Status DownloadAsync(const Stream& stream, void* dst, size_t bytes, size_t offset = 0) const;
  absl::Status ZeroAsync(const Stream& stream);

  CUdeviceptr get() const { return address_; }
  size_t size() const { return size_; }

 private:
  DeviceBuffer(BoundContext context, CUdeviceptr address, size_t size)
      : context_(std::move(context)), address_(address), size_(size) {}
  void Release();
  absl::Status CheckRange(const char* what, size_t offset, size_t bytes) const;

  BoundContext context_;
  CUdeviceptr address_ = 0;  // 0 once moved from
  size_t size_ = 0;
};

}  // namespace rk::cuda

#endif  // RINGKERNEL_RUNTIME_DEVICE_BUFFER_H_
