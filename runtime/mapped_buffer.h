// Copyright 2026 The RingKernel Authors.
//
// mapped_buffer.h: pinned host memory mapped into the GPU's address space
// (zero-copy), the medium of the host ↔ GPU rings and the control blocks.
//
// The host reads and writes it through `host()`, kernels through
// `device()`; neither side copies. Every access the GPU makes crosses the
// bus, which is why the protocol keeps GPU polls of it few and single-word.
//
// Example (a context is current on this thread):
//   RK_ASSIGN_OR_RETURN(rk::cuda::MappedBuffer ring, rk::cuda::MappedBuffer::Create(1 << 20));
//   auto* header = ring.host_as<rk::LlRingHeader>();     // zero-filled
//   params.inbound = reinterpret_cast<rk::LlRingHeader*>(ring.device());
#ifndef RINGKERNEL_RUNTIME_MAPPED_BUFFER_H_
#define RINGKERNEL_RUNTIME_MAPPED_BUFFER_H_

#include <cuda.h>

#include <cstddef>
#include <utility>

#include "absl/status/statusor.h"
#include "runtime/primary_context.h"

namespace rk::cuda {

struct MappedBufferOptions {
  // CU_MEMHOSTALLOC_WRITECOMBINED: faster for the GPU to read and for the
  // host to write, but host reads are uncached and very slow. Only for
  // memory the host writes and never reads (the host → GPU ring).
  bool write_combined = false;
};

// Owns a cuMemHostAlloc allocation (DEVICEMAP | PORTABLE, so that every
// context can use it), freed on destruction unless the context that made it
// was reset meanwhile. Move-only. The memory is zero-filled on creation;
// concurrent access to it is the caller's protocol (the ring and control
// block code), not this class's concern.
class MappedBuffer {
 public:
  // Allocates `bytes` (> 0) in the context current on the calling thread.
  // ResourceExhausted when pinned memory runs out; FailedPrecondition when
  // the device cannot map host memory.
  static absl::StatusOr<MappedBuffer> Create(size_t bytes, MappedBufferOptions options = {});

  MappedBuffer(MappedBuffer&& other) noexcept;
  MappedBuffer& operator=(MappedBuffer&& other) noexcept;
  MappedBuffer(const MappedBuffer&) = delete;
  MappedBuffer& operator=(const MappedBuffer&) = delete;
  ~MappedBuffer();

  void* host() const { return host_; }
  template <typename T>
  T* host_as() const {
    return static_cast<T*>(host_);
  }
  // The same memory as seen by kernels.
  CUdeviceptr device() const { return device_; }
  size_t size() const { return size_; }
  bool write_combined() const { return write_combined_; }

 private:
  MappedBuffer(BoundContext context, void* host, CUdeviceptr device, size_t size, bool write_combined)
      : context_(std::move(context)), host_(host), device_(device), size_(size), write_combined_(write_combined) {}
  void Release();

  BoundContext context_;
  void* host_ = nullptr;  // null once moved from
  CUdeviceptr device_ = 0;
  size_t size_ = 0;
  bool write_combined_ = false;
};

}  // namespace rk::cuda

#endif  // RINGKERNEL_RUNTIME_MAPPED_BUFFER_H_
