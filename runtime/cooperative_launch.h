// Copyright 2026 The RingKernel Authors.
//
// cooperative_launch.h: sizing and issuing the one cooperative launch of the
// persistent kernel.
//
// A cooperative launch (cuLaunchCooperativeKernel) guarantees that all its
// blocks are resident at once, which is what lets blocks of a persistent
// kernel wait on each other without deadlock. The driver refuses a grid
// larger than what fits; this class computes that limit up front, from the
// occupancy calculator and the SM count, so that the error names the limit
// and the reason instead of CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE alone.
//
// Example (the module's context is current on this thread):
//   rk::cuda::CooperativeShape shape{.threads_per_block = 256, .dynamic_shared_bytes = 64 * 1024};
//   RK_ASSIGN_OR_RETURN(rk::cuda::CooperativeLaunch launch,
//                       rk::cuda::CooperativeLaunch::Create(device, kernel, shape));  // the largest grid
//   void* params[] = {&system_params_address};
//   RK_RETURN_IF_ERROR(launch.Launch(stream, params));
#ifndef RINGKERNEL_RUNTIME_COOPERATIVE_LAUNCH_H_
#define RINGKERNEL_RUNTIME_COOPERATIVE_LAUNCH_H_

#include <cuda.h>

#include <cstddef>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runtime/device.h"
#include "runtime/stream.h"

namespace rk::cuda {

// The block shape of a launch (one-dimensional).
struct CooperativeShape {
  unsigned int threads_per_block = 256;
  size_t dynamic_shared_bytes = 0;
};

// How many blocks of one shape can be co-resident, and what limits them.
struct CooperativeCapacity {
  int blocks_per_sm = 0;  // from cuOccupancyMaxActiveBlocksPerMultiprocessor
  int sm_count = 0;
  int max_blocks = 0;  // blocks_per_sm * sm_count: the largest cooperative grid
  // The function's resources (cuFuncGetAttribute), for the explanation.
  int registers_per_thread = 0;
  int static_shared_bytes = 0;
  int local_bytes_per_thread = 0;
  int max_threads_per_block = 0;  // the most this function can be launched with

  // "2 blocks per SM × 132 SMs; each block: 256 threads × 64 registers,
  // 1024 B static + 65536 B dynamic shared memory".
  std::string Explain(const CooperativeShape& shape) const;
};

// A sized cooperative launch of one function: a value that can be launched
// any number of times. It does not own the function (the Module does). The
// context of the function's module must be current on the thread that
// creates or launches it. Immutable and thread-safe once created.
class CooperativeLaunch {
 public:
  // The largest cooperative grid of `function` with `shape` on `device`.
  // Raises the function's dynamic shared memory limit
  // (CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) when the shape asks
  // for more than it allows (48 KiB by default). FailedPrecondition if the
  // device does not support cooperative launches; InvalidArgument for more
  // threads per block than the function allows; ResourceExhausted if a
  // block of this shape does not fit on an SM, or asks for more shared
  // memory than a block may have.
  static absl::StatusOr<CooperativeCapacity> MaxGrid(const Device& device, CUfunction function,
                                                     const CooperativeShape& shape);

  // Sizes a launch of `blocks` blocks (0: the largest grid MaxGrid allows).
  // A request above that maximum is ResourceExhausted, saying how many
  // blocks of the shape fit and why.
  static absl::StatusOr<CooperativeLaunch> Create(const Device& device, CUfunction function,
                                                  const CooperativeShape& shape, int blocks = 0);

  // Launches on `stream` with the kernel's parameters (`params[i]` points
  // at the value of parameter i, as for cuLaunchCooperativeKernel).
  absl::Status Launch(const Stream& stream, void** params) const;

  int blocks() const { return blocks_; }
  const CooperativeShape& shape() const { return shape_; }
  const CooperativeCapacity& capacity() const { return capacity_; }
  CUfunction function() const { return function_; }

 private:
  CooperativeLaunch(CUfunction function, CooperativeShape shape, CooperativeCapacity capacity, int blocks)
      : function_(function), shape_(shape), capacity_(capacity), blocks_(blocks) {}

  CUfunction function_ = nullptr;
  CooperativeShape shape_;
  CooperativeCapacity capacity_;
  int blocks_ = 0;
};

}  // namespace rk::cuda

#endif  // RINGKERNEL_RUNTIME_COOPERATIVE_LAUNCH_H_
