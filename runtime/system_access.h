// Copyright 2026 The RingKernel Authors.
//
// system_access.h: fault injection into a running System, for RingKernel's
// own tests. Not part of the installed API.
#ifndef RINGKERNEL_RUNTIME_SYSTEM_ACCESS_H_
#define RINGKERNEL_RUNTIME_SYSTEM_ACCESS_H_

#include "ringkernel/system.h"
#include "runtime/system_impl.h"

namespace rk::internal {

struct SystemAccess {
  // The next wait for the GPU to apply a control record (a spawn, a route
  // binding, a flush) gives up at once as if it had timed out, while the
  // record stays in the ring and the GPU applies it later: what a slow GPU
  // does to a host with a short deadline.
  static void TimeOutNextControlWait(System& system) { system.impl_->TimeOutNextControlWait(); }
};

}  // namespace rk::internal

#endif  // RINGKERNEL_RUNTIME_SYSTEM_ACCESS_H_
