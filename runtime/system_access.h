// Copyright 2026 The RingKernel Authors.
//
// system_access.h: fault injection into a running System, for RingKernel's
// own tests. Not part of the installed API.
#ifndef RINGKERNEL_RUNTIME_SYSTEM_ACCESS_H_
#define RINGKERNEL_RUNTIME_SYSTEM_ACCESS_H_

#include <functional>
#include <utility>

#include "ringkernel/system.h"
#include "runtime/system_impl.h"

namespace rk::internal {

struct SystemAccess {
  // The next wait for the GPU to apply a control record (a spawn, a route
  // binding, a flush) gives up at once as if it had timed out, while the
  // record stays in the ring and the GPU applies it later: what a slow GPU
  // does to a host with a short deadline.
  static void TimeOutNextControlWait(System& system) { system.impl_->TimeOutNextControlWait(); }
  // The next Send (or Ask) calls `pause` once it has been admitted — past
  // its check that the system accepts messages — and before it writes its
  // record, on the sending thread: `pause` may block, so that a test can
  // run Stop meanwhile. Stop waits for it; nothing else does.
  static void PauseNextSend(System& system, std::function<void()> pause) {
    system.impl_->PauseNextSend(std::move(pause));
  }
  // The next record a Send writes into a worker's ring is written in two
  // parts, the first before `pause` and the rest after: a writer preempted
  // in the middle of its record. The first part is `words_first` words of
  // the record (its claim, the size word, is always there first), or half
  // of them when negative. `pause` runs on the sending thread and may block.
  static void PauseNextRecordMidway(System& system, std::function<void()> pause, int words_first = -1) {
    system.impl_->PauseNextRecordMidway(std::move(pause), words_first);
  }
  // The next record that a ring's owner streams (runtime/ring_owner.h) stops
  // after the owner saw it still owns the ring, before any of its stores:
  // `stop` runs on the sending thread and may block (an owner preempted
  // mid-record). A thread that sends to that worker meanwhile takes the ring.
  static void StopNextOwnedRecord(System& system, std::function<void()> stop) {
    system.impl_->StopNextOwnedRecord(std::move(stop));
  }
  // The state of worker `w`'s host ring: the tag of the thread that alone
  // writes it, or RingOwners::kFree / kShared (ring_owner.h).
  static uint32_t RingOwnerOf(const System& system, uint32_t w) { return system.impl_->RingOwnerOf(w); }
  // Copies `bytes` of the program's __device__ variable `name` into `dst`:
  // how rkbench reads what a measurement build recorded on the GPU.
  static absl::Status ReadDeviceGlobal(System& system, std::string_view name, void* dst, size_t bytes) {
    return system.impl_->ReadDeviceGlobal(name, dst, bytes);
  }
  // While `paused`, the background reader leaves the trace rings alone (a
  // running trace then loses events once a ring fills; StopTrace still
  // drains what is there).
  static void PauseTraceDrain(System& system, bool paused) { system.impl_->PauseTraceDrain(paused); }
  // The worker whose ring carries the host's messages to `id`.
  static uint32_t WorkerOf(const System& system, ActorId id) { return system.impl_->WorkerOf(id); }
  // Whether Sends are admitted: false once Stop has begun (or a fault).
  static bool Accepting(const System& system) { return system.impl_->accepting(); }
  // What a measurement build (RK_ASK_HOST_STAMPS) stamped of the process's
  // Asks since the last call: rkbench prints the steps of its quiet Asks.
  static AskHostStepLog TakeAskHostSteps() { return ::rk::TakeAskHostSteps(); }
};

}  // namespace rk::internal

#endif  // RINGKERNEL_RUNTIME_SYSTEM_ACCESS_H_
