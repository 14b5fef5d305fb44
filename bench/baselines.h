// Copyright 2026 The RingKernel Authors.
//
// baselines.h: the ways to run GPU work that RingKernel is compared with,
// in the same process and on the same device:
//   * traditional — copy 64 bytes in, launch, synchronise, copy 64 bytes out;
//   * launch + synchronise of an equivalent (empty-bodied) kernel;
//   * CUDA graph launch + synchronise of the same kernel;
//   * a CuPer-style persistent kernel: one block spins on a mailbox word in
//     mapped memory (startCuda), does the work and raises a done word the
//     host spins on (waitForCuda) — the floor of a host round trip.
// Each is compiled with NVRTC and driven through the driver table.
#ifndef RINGKERNEL_BENCH_BASELINES_H_
#define RINGKERNEL_BENCH_BASELINES_H_

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"

namespace rk::bench {

class Baselines {
 public:
  // Compiles and loads the baseline kernels on the current context.
  static absl::StatusOr<std::unique_ptr<Baselines>> Create(int capability);
  ~Baselines();

  // One command each; the durations are measured by the caller.
  absl::Status Traditional();    // H2D 64 B + launch + sync + D2H 64 B
  absl::Status LaunchSync();     // launch + sync
  absl::Status GraphLaunchSync();  // graph launch + sync

  // The CuPer-style persistent kernel: Start launches it, Command is one
  // startCuda/waitForCuda pair, Stop ends it.
  absl::Status StartPersistent();
  absl::Status PersistentCommand();
  absl::Status StopPersistent();

 private:
  struct State;
  explicit Baselines(std::unique_ptr<State> state);
  std::unique_ptr<State> s_;
};

}  // namespace rk::bench

#endif  // RINGKERNEL_BENCH_BASELINES_H_
