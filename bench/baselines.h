// Copyright 2026 The RingKernel Authors.
//
// baselines.h: the ways to run GPU work that RingKernel is compared with,
// in the same process and on the same device:
//   * traditional — copy 64 bytes in from pinned host memory, launch,
//     synchronise, copy 64 bytes out to pinned host memory;
//   * launch + synchronise of an equivalent (empty-bodied) kernel;
//   * CUDA graph launch + synchronise of the same kernel;
//   * the launch call alone (cuLaunchKernel, cuGraphLaunch) returning, with
//     no synchronisation: what the host pays to enqueue GPU work the
//     traditional way, the counterpart of RingKernel's `Send`;
//   * a CuPer-style persistent kernel: one block spins on a mailbox word in
//     mapped memory (startCuda), does the work and raises a done word the
//     host spins on (waitForCuda) — the floor of a host round trip;
//   * two blocks on two SMs ping-ponging a 4-byte flag through global memory
//     — the floor of one GPU-side hop between actors.
// Each is compiled with NVRTC and driven through the driver table.
#ifndef RINGKERNEL_BENCH_BASELINES_H_
#define RINGKERNEL_BENCH_BASELINES_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace rk::bench {

// What FlagPingPong measured.
struct FlagPingPongResult {
  // Half of each measured round trip, in microseconds, in order.
  std::vector<double> one_way_us;
  // The SM each block ran on, and the SM clock's nanoseconds per cycle as
  // %globaltimer saw it over the whole run (the conversion used).
  uint32_t sm[2] = {0, 0};
  double ns_per_cycle = 0;
};

class Baselines {
 public:
  // Compiles and loads the baseline kernels on the current context, for
  // device `ordinal` of compute capability `capability` (major*10+minor).
  static absl::StatusOr<std::unique_ptr<Baselines>> Create(int ordinal, int capability);
  ~Baselines();

  // One command each; the durations are measured by the caller.
  absl::Status Traditional();      // H2D 64 B (pinned) + launch + sync + D2H 64 B (pinned)
  absl::Status LaunchSync();       // launch + sync
  absl::Status GraphLaunchSync();  // graph launch + sync
  // The enqueue alone: cuLaunchKernel / cuGraphLaunch of the same kernel,
  // returning without waiting. The caller synchronises (Synchronize) every
  // few launches, outside its timed region, so the stream's queue never
  // fills and makes a launch block.
  absl::Status LaunchReturn();
  absl::Status GraphLaunchReturn();
  absl::Status Synchronize();

  // The CuPer-style persistent kernel: Start launches it, Command is one
  // startCuda/waitForCuda pair, Stop ends it.
  absl::Status StartPersistent();
  absl::Status PersistentCommand();
  absl::Status StopPersistent();

  // One launch of two single-thread blocks, kept on two SMs, that ping-pong
  // a 4-byte flag through global memory `warmup` + `rounds` times (each
  // store followed by __threadfence(), each wait a volatile load); block 0
  // times each of the last `rounds` round trips with clock64. Needs SMs no
  // other kernel holds: run it while no actor system is running.
  absl::StatusOr<FlagPingPongResult> FlagPingPong(int warmup, int rounds);

 private:
  struct State;
  explicit Baselines(std::unique_ptr<State> state);
  std::unique_ptr<State> s_;
};

// The baseline kernels' source (for the compile check without a GPU).
std::string BaselineKernelSource();

}  // namespace rk::bench

#endif  // RINGKERNEL_BENCH_BASELINES_H_
