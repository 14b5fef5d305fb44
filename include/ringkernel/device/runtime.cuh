// Copyright 2026 The RingKernel Authors.
//
// runtime.cuh: the device half of the runtime — the persistent kernel's
// roles and the implementation of rk::Ctx. Compiled by NVRTC only, in the one
// translation unit codegen produces: the user's fragments come first, then
// this file, then the generated dispatch functions (rt_base.cuh declares
// them).
//
// One cooperative launch, `num_workers + 1` blocks, split by role:
//   * rt_service.cuh — block 0: the control ingress (warp 0) and the monitor
//     (warp 1);
//   * rt_worker.cuh  — blocks 1..N: the loop of each role, idling; its parts
//     rt_dispatch.cuh (a thread handler's run), rt_owner.cuh (an actor's
//     queues polled and served, hand-overs taken), rt_poller.cuh (the
//     worker's host ring, warp 0) and rt_block.cuh (block handlers);
//   * rt_send.cuh    — ctx.send / reply / fail: the K2K publication;
//   * rt_outbound.cuh — GPU → host records (replies, dead letters, failures);
//   * mailbox.h, ll_ring.h — the two protocols, shared with the host and the
//     ThreadSanitizer tests.
// ARCHITECTURE.md walks each message path. Nothing in the steady state uses
// a grid-wide barrier, and a worker block meets at a barrier only for block
// handlers and halting.
#ifndef RINGKERNEL_DEVICE_RUNTIME_CUH_
#define RINGKERNEL_DEVICE_RUNTIME_CUH_

#include "ringkernel/device/rt_base.cuh"
#include "ringkernel/device/rt_outbound.cuh"
#include "ringkernel/device/rt_send.cuh"
#include "ringkernel/device/rt_service.cuh"
#include "ringkernel/device/rt_worker.cuh"

namespace rk {

// The kernel's body. `sys` points at the kernel's `__grid_constant__`
// parameter: reads of it are constant-cache hits, never trips to L2.
__device__ __forceinline__ void SystemKernelBody(const SystemParams* sys) {
  extern __shared__ __align__(16) u8 rk_dynamic_smem[];
  if (blockIdx.x == 0) {
    const u32 warp = threadIdx.x / 32;
    if (warp == 0) {
      detail::IngressLoop(sys);
    } else if (warp == 1) {
      detail::MonitorLoop(sys);
    }
    return;
  }
  detail::WorkerLoop(sys, blockIdx.x - 1, rk_dynamic_smem);
}

}  // namespace rk

#endif  // RINGKERNEL_DEVICE_RUNTIME_CUH_
