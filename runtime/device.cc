// Copyright 2026 The RingKernel Authors.
#include "runtime/device.h"

#include <cstdlib>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "ringkernel/status_macros.h"
#include "runtime/cuda_driver.h"
#include "runtime/cuda_status.h"

namespace rk::cuda {
namespace {

absl::StatusOr<int> GetAttribute(const DriverApi& cu, CUdevice device, CUdevice_attribute attribute, const char* what) {
  int value = 0;
  RK_CU_RETURN_IF_ERROR(cu.cuDeviceGetAttribute(&value, attribute, device), "cuDeviceGetAttribute(", what, ", device ",
                        static_cast<int>(device), ")");
  return value;
}

// nvidia-smi's spelling of a UUID: GPU-8-4-4-4-12 hex digits.
std::string FormatUuid(const CUuuid& uuid) {
  std::string hex;
  for (int i = 0; i < 16; ++i) {
    absl::StrAppendFormat(&hex, "%02x", static_cast<unsigned char>(uuid.bytes[i]));
  }
  return absl::StrCat("GPU-", hex.substr(0, 8), "-", hex.substr(8, 4), "-", hex.substr(12, 4), "-", hex.substr(16, 4),
                      "-", hex.substr(20, 12));
}

}  // namespace

std::string DeviceProperties::Arch() const { return absl::StrCat("sm_", compute_capability()); }

std::string DeviceProperties::PciBusId() const {
  return absl::StrFormat("%04x:%02x:%02x.0", pci_domain, pci_bus, pci_device);
}

absl::StatusOr<int> Device::Count() {
  RK_ASSIGN_OR_RETURN(const DriverApi* cu, Driver());
  int count = 0;
  RK_CU_RETURN_IF_ERROR(cu->cuDeviceGetCount(&count), "cuDeviceGetCount()");
  return count;
}

absl::StatusOr<Device> Device::Create(int ordinal) {
  RK_ASSIGN_OR_RETURN(const DriverApi* cu, Driver());
  RK_ASSIGN_OR_RETURN(int count, Count());
  if (ordinal < 0 || ordinal >= count) {
    const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
    return absl::InvalidArgumentError(
        absl::StrCat("no CUDA device ", ordinal, ": ", count, count == 1 ? " device is" : " devices are", " visible",
                     count > 0 ? absl::StrCat(" (ordinals 0..", count - 1, ")") : "",
                     visible != nullptr ? absl::StrCat("; CUDA_VISIBLE_DEVICES=", visible) : ""));
  }
  CUdevice handle = 0;
  RK_CU_RETURN_IF_ERROR(cu->cuDeviceGet(&handle, ordinal), "cuDeviceGet(", ordinal, ")");

  DeviceProperties p;
  p.ordinal = ordinal;
  char name[256] = {};
  RK_CU_RETURN_IF_ERROR(cu->cuDeviceGetName(name, sizeof(name) - 1, handle), "cuDeviceGetName(device ", ordinal, ")");
  p.name = name;
  size_t total = 0;
  RK_CU_RETURN_IF_ERROR(cu->cuDeviceTotalMem(&total, handle), "cuDeviceTotalMem(device ", ordinal, ")");
  p.total_memory_bytes = total;
  CUuuid uuid = {};
  RK_CU_RETURN_IF_ERROR(cu->cuDeviceGetUuid(&uuid, handle), "cuDeviceGetUuid(device ", ordinal, ")");
  p.uuid = FormatUuid(uuid);

  struct IntAttribute {
    CUdevice_attribute attribute;
    const char* name;
    int* out;
  };
  const IntAttribute ints[] = {
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, "COMPUTE_CAPABILITY_MAJOR", &p.compute_major},
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, "COMPUTE_CAPABILITY_MINOR", &p.compute_minor},
      {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, "MULTIPROCESSOR_COUNT", &p.sm_count},
      {CU_DEVICE_ATTRIBUTE_CLOCK_RATE, "CLOCK_RATE", &p.clock_khz},
      {CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, "MEMORY_CLOCK_RATE", &p.memory_clock_khz},
      {CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, "GLOBAL_MEMORY_BUS_WIDTH", &p.memory_bus_width_bits},
      {CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, "L2_CACHE_SIZE", &p.l2_cache_bytes},
      {CU_DEVICE_ATTRIBUTE_WARP_SIZE, "WARP_SIZE", &p.warp_size},
      {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, "MAX_THREADS_PER_BLOCK", &p.max_threads_per_block},
      {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, "MAX_THREADS_PER_MULTIPROCESSOR", &p.max_threads_per_sm},
      {CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR, "MAX_BLOCKS_PER_MULTIPROCESSOR", &p.max_blocks_per_sm},
      {CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK, "MAX_REGISTERS_PER_BLOCK", &p.max_registers_per_block},
      {CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR, "MAX_REGISTERS_PER_MULTIPROCESSOR",
       &p.max_registers_per_sm},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, "MAX_SHARED_MEMORY_PER_BLOCK", &p.max_shared_per_block},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN",
       &p.max_shared_per_block_optin},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, "MAX_SHARED_MEMORY_PER_MULTIPROCESSOR",
       &p.max_shared_per_sm},
      {CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK, "RESERVED_SHARED_MEMORY_PER_BLOCK",
       &p.reserved_shared_per_block},
      {CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT, "ASYNC_ENGINE_COUNT", &p.async_engine_count},
      {CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, "PCI_DOMAIN_ID", &p.pci_domain},
      {CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, "PCI_BUS_ID", &p.pci_bus},
      {CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, "PCI_DEVICE_ID", &p.pci_device},
  };
  for (const IntAttribute& a : ints) {
    RK_ASSIGN_OR_RETURN(*a.out, GetAttribute(*cu, handle, a.attribute, a.name));
  }
  struct BoolAttribute {
    CUdevice_attribute attribute;
    const char* name;
    bool* out;
  };
  const BoolAttribute bools[] = {
      {CU_DEVICE_ATTRIBUTE_ECC_ENABLED, "ECC_ENABLED", &p.ecc_enabled},
      {CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH, "COOPERATIVE_LAUNCH", &p.cooperative_launch},
      {CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY, "CAN_MAP_HOST_MEMORY", &p.can_map_host_memory},
      {CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, "UNIFIED_ADDRESSING", &p.unified_addressing},
      {CU_DEVICE_ATTRIBUTE_INTEGRATED, "INTEGRATED", &p.integrated},
      {CU_DEVICE_ATTRIBUTE_KERNEL_EXEC_TIMEOUT, "KERNEL_EXEC_TIMEOUT", &p.kernel_exec_timeout},
      {CU_DEVICE_ATTRIBUTE_HOST_NATIVE_ATOMIC_SUPPORTED, "HOST_NATIVE_ATOMIC_SUPPORTED", &p.host_native_atomics},
  };
  for (const BoolAttribute& a : bools) {
    RK_ASSIGN_OR_RETURN(int value, GetAttribute(*cu, handle, a.attribute, a.name));
    *a.out = value != 0;
  }
  return Device(handle, std::move(p));
}

absl::StatusOr<int> Device::Attribute(CUdevice_attribute attribute) const {
  RK_ASSIGN_OR_RETURN(const DriverApi* cu, Driver());
  return GetAttribute(*cu, handle_, attribute, absl::StrCat("attribute ", static_cast<int>(attribute)).c_str());
}

}  // namespace rk::cuda
