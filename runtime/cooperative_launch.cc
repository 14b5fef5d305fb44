// Copyright 2026 The RingKernel Authors.
#include "runtime/cooperative_launch.h"

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "ringkernel/status_macros.h"
#include "runtime/cuda_driver.h"
#include "runtime/cuda_status.h"

namespace rk::cuda {
namespace {

absl::StatusOr<int> FunctionAttribute(const DriverApi& cu, CUfunction function, CUfunction_attribute attribute,
                                      const char* name) {
  int value = 0;
  RK_CU_RETURN_IF_ERROR(cu.cuFuncGetAttribute(&value, attribute, function), "cuFuncGetAttribute(", name, ")");
  return value;
}

std::string DescribeShape(const CooperativeShape& shape) {
  return absl::StrCat(shape.threads_per_block, " threads and ", shape.dynamic_shared_bytes,
                      " B of dynamic shared memory");
}

}  // namespace

std::string CooperativeCapacity::Explain(const CooperativeShape& shape) const {
  return absl::StrCat(
      blocks_per_sm, " block", blocks_per_sm == 1 ? "" : "s", " per SM × ", sm_count,
      " SMs; each block: ", shape.threads_per_block, " threads × ", registers_per_thread, " registers, ",
      static_shared_bytes, " B static + ", shape.dynamic_shared_bytes, " B dynamic shared memory",
      local_bytes_per_thread > 0 ? absl::StrCat(", ", local_bytes_per_thread, " B local memory per thread") : "");
}

absl::StatusOr<CooperativeCapacity> CooperativeLaunch::MaxGrid(const Device& device, CUfunction function,
                                                               const CooperativeShape& shape) {
  RK_ASSIGN_OR_RETURN(const DriverApi* cu, Driver());
  const DeviceProperties& props = device.properties();
  if (!props.cooperative_launch) {
    return absl::FailedPreconditionError(absl::StrCat("device ", props.ordinal, " (", props.name,
                                                      ") does not support cooperative launches, which the "
                                                      "persistent kernel needs"));
  }
  if (function == nullptr) return absl::InvalidArgumentError("cooperative launch of a null function");

  CooperativeCapacity c;
  c.sm_count = props.sm_count;
  RK_ASSIGN_OR_RETURN(c.registers_per_thread, FunctionAttribute(*cu, function, CU_FUNC_ATTRIBUTE_NUM_REGS, "NUM_REGS"));
  RK_ASSIGN_OR_RETURN(c.static_shared_bytes,
                      FunctionAttribute(*cu, function, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, "SHARED_SIZE_BYTES"));
  RK_ASSIGN_OR_RETURN(c.local_bytes_per_thread,
                      FunctionAttribute(*cu, function, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, "LOCAL_SIZE_BYTES"));
  RK_ASSIGN_OR_RETURN(c.max_threads_per_block, FunctionAttribute(*cu, function, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
                                                                 "MAX_THREADS_PER_BLOCK"));

  if (shape.threads_per_block == 0 || shape.threads_per_block > static_cast<unsigned>(c.max_threads_per_block)) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot launch blocks of ", shape.threads_per_block, " threads: this kernel allows 1 to ",
                     c.max_threads_per_block, " threads per block (it uses ", c.registers_per_thread,
                     " registers per thread; the device has ", props.max_registers_per_block, " per block)"));
  }

  // A block's shared memory is its static part plus the dynamic part; beyond
  // the default limit (48 KiB) the function must opt in, up to the device's
  // opt-in maximum.
  const size_t shared_limit = props.max_shared_per_block_optin > c.static_shared_bytes
                                  ? static_cast<size_t>(props.max_shared_per_block_optin - c.static_shared_bytes)
                                  : 0;
  if (shape.dynamic_shared_bytes > shared_limit) {
    return absl::ResourceExhaustedError(
        absl::StrCat("a block cannot have ", shape.dynamic_shared_bytes, " B of dynamic shared memory on device ",
                     props.ordinal, " (", props.name, "): blocks may have at most ", props.max_shared_per_block_optin,
                     " B of shared memory, and this kernel already uses ", c.static_shared_bytes,
                     " B statically, leaving ", shared_limit, " B"));
  }
  RK_ASSIGN_OR_RETURN(int dynamic_limit,
                      FunctionAttribute(*cu, function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                        "MAX_DYNAMIC_SHARED_SIZE_BYTES"));
  if (shape.dynamic_shared_bytes > static_cast<size_t>(dynamic_limit)) {
    RK_CU_RETURN_IF_ERROR(cu->cuFuncSetAttribute(function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                                 static_cast<int>(shape.dynamic_shared_bytes)),
                          "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES, ", shape.dynamic_shared_bytes, ")");
  }

  RK_CU_RETURN_IF_ERROR(
      cu->cuOccupancyMaxActiveBlocksPerMultiprocessor(
          &c.blocks_per_sm, function, static_cast<int>(shape.threads_per_block), shape.dynamic_shared_bytes),
      "cuOccupancyMaxActiveBlocksPerMultiprocessor(", DescribeShape(shape), ")");
  c.max_blocks = c.blocks_per_sm * c.sm_count;
  if (c.blocks_per_sm == 0) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "a block of ", DescribeShape(shape), " does not fit on an SM of device ", props.ordinal, " (", props.name,
        "): ", c.Explain(shape), "; an SM has ", props.max_registers_per_sm, " registers and ", props.max_shared_per_sm,
        " B of shared memory. Use fewer threads, registers or shared memory per block"));
  }
  return c;
}

absl::StatusOr<CooperativeLaunch> CooperativeLaunch::Create(const Device& device, CUfunction function,
                                                            const CooperativeShape& shape, int blocks) {
  if (blocks < 0) {
    return absl::InvalidArgumentError(absl::StrCat("a cooperative launch needs a positive block count, not ", blocks));
  }
  RK_ASSIGN_OR_RETURN(CooperativeCapacity capacity, MaxGrid(device, function, shape));
  if (blocks > capacity.max_blocks) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "a cooperative launch of ", blocks, " blocks of ", DescribeShape(shape), " does not fit on device ",
        device.ordinal(), " (", device.properties().name, "): at most ", capacity.max_blocks,
        " such blocks can be resident at once (", capacity.Explain(shape), "). Ask for at most ", capacity.max_blocks,
        " blocks, or use fewer threads, registers or shared memory per block"));
  }
  return CooperativeLaunch(function, shape, capacity, blocks == 0 ? capacity.max_blocks : blocks);
}

absl::Status CooperativeLaunch::Launch(const Stream& stream, void** params) const {
  RK_ASSIGN_OR_RETURN(const DriverApi* cu, Driver());
  RK_CU_RETURN_IF_ERROR(
      cu->cuLaunchCooperativeKernel(function_, static_cast<unsigned int>(blocks_), 1, 1, shape_.threads_per_block, 1, 1,
                                    static_cast<unsigned int>(shape_.dynamic_shared_bytes), stream.get(), params),
      "cuLaunchCooperativeKernel(", blocks_, " blocks of ", DescribeShape(shape_), ")");
  return absl::OkStatus();
}

}  // namespace rk::cuda
