// Copyright 2026 The RingKernel Authors.
//
// hopper.h: experiment 8 — message passing between two thread blocks on
// Hopper (sm_90), three ways, as stand-alone NVRTC-compiled kernels:
//   method=global  the payload and a flag in global memory (what RingKernel's
//                  K2K mailboxes do), ping-pong;
//   method=dsmem   two blocks of one thread-block cluster, each writing the
//                  payload and the flag straight into the other's shared
//                  memory (distributed shared memory), ping-pong;
//   method=tma     as global, but the receiver fetches the payload with one
//                  bulk asynchronous copy (cp.async.bulk, completion on an
//                  mbarrier) into its shared memory.
// Skipped, with the reason printed, on devices before sm_90.
#ifndef RINGKERNEL_BENCH_HOPPER_H_
#define RINGKERNEL_BENCH_HOPPER_H_

#include <string>

#include "absl/status/status.h"
#include "bench/exp_common.h"

namespace rk::bench {

absl::Status Exp8Hopper(const Bench& b);

// The kernels' source (for the compile check).
std::string HopperKernelSource();

}  // namespace rk::bench

#endif  // RINGKERNEL_BENCH_HOPPER_H_
