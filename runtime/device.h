// Copyright 2026 The RingKernel Authors.
//
// device.h: a CUDA device and the properties RingKernel sizes itself by.
//
// `Device::Create(ordinal)` loads the driver if needed, checks the ordinal
// and reads the device's properties once: its name, compute capability,
// multiprocessor count, memory, clocks, shared-memory limits, cooperative
// launch support, UUID and PCI location. The benchmark records them with
// every result; the runtime uses them to size its launch and to pick the
// image that fits the GPU.
//
// Example:
//   RK_ASSIGN_OR_RETURN(rk::cuda::Device device, rk::cuda::Device::Create(0));
//   if (!device.properties().cooperative_launch) ...;
//   std::string arch = device.properties().Arch();   // "sm_90"
//
// A Device owns no driver resource (a CUdevice is an ordinal, not a handle),
// so it is a plain copyable value; no context needs to be current to create
// or use one; it is immutable and safe to share between threads.
#ifndef RINGKERNEL_RUNTIME_DEVICE_H_
#define RINGKERNEL_RUNTIME_DEVICE_H_

#include <cuda.h>

#include <cstdint>
#include <string>
#include <utility>

#include "absl/status/statusor.h"

namespace rk::cuda {

struct DeviceProperties {
  int ordinal = -1;
  std::string name;                    // "NVIDIA H100 80GB HBM3"
  int compute_major = 0;               // 9 for sm_90
  int compute_minor = 0;
  int sm_count = 0;                    // multiprocessors
  uint64_t total_memory_bytes = 0;
  int clock_khz = 0;                   // typical SM clock, as the driver reports it
  int memory_clock_khz = 0;            // peak memory clock
  int memory_bus_width_bits = 0;
  int l2_cache_bytes = 0;
  int warp_size = 0;
  int max_threads_per_block = 0;
  int max_threads_per_sm = 0;
  int max_blocks_per_sm = 0;
  int max_registers_per_block = 0;
  int max_registers_per_sm = 0;
  int max_shared_per_block = 0;        // without opting in (48 KiB)
  int max_shared_per_block_optin = 0;  // with CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES raised
  int max_shared_per_sm = 0;
  int reserved_shared_per_block = 0;   // taken by the driver from every block
  int async_engine_count = 0;
  bool ecc_enabled = false;
  bool cooperative_launch = false;     // cuLaunchCooperativeKernel is supported
  bool can_map_host_memory = false;    // mapped (zero-copy) pinned memory
  bool unified_addressing = false;     // host and device share one address space
  bool integrated = false;             // shares memory with the host (Jetson, ...)
  bool kernel_exec_timeout = false;    // a display watchdog limits kernel run time
  bool host_native_atomics = false;    // the link supports native atomics on host memory
  std::string uuid;                    // "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", as nvidia-smi prints it
  int pci_domain = 0;
  int pci_bus = 0;
  int pci_device = 0;

  // major * 10 + minor: 90 for sm_90.
  int compute_capability() const { return compute_major * 10 + compute_minor; }
  // "sm_90".
  std::string Arch() const;
  // "0000:17:00.0", as nvidia-smi prints it (the function is always 0).
  std::string PciBusId() const;
};

class Device {
 public:
  // The number of devices the driver sees (after CUDA_VISIBLE_DEVICES).
  // Fails like Driver() when there is no driver or no device.
  static absl::StatusOr<int> Count();

  // Device `ordinal` (0-based). InvalidArgument names the number of visible
  // devices when the ordinal is out of range; fails like Driver() without a
  // driver or device.
  static absl::StatusOr<Device> Create(int ordinal);

  // Reads one attribute now (for attributes not cached in properties()).
  absl::StatusOr<int> Attribute(CUdevice_attribute attribute) const;

  CUdevice handle() const { return handle_; }
  int ordinal() const { return properties_.ordinal; }
  const DeviceProperties& properties() const { return properties_; }

 private:
  Device(CUdevice handle, DeviceProperties properties) : handle_(handle), properties_(std::move(properties)) {}

  CUdevice handle_ = 0;
  DeviceProperties properties_;
};

}  // namespace rk::cuda

#endif  // RINGKERNEL_RUNTIME_DEVICE_H_
