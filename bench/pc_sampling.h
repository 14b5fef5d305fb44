// Copyright 2026 The RingKernel Authors.
//
// pc_sampling.h: where the persistent kernel's warps spend their time, from
// CUPTI's continuous PC sampling (kernels are not serialized, so the actor
// system runs as it always does). `rkbench --pc-sampling FILE` enables it on
// the device's primary context before the experiments and, after them,
// writes one CSV row per sampled instruction and stall reason:
//
//   cubin_crc,function,pc_offset,stall_reason,samples
//
// bench/analysis/pcsamples.py joins the rows with the cubin's disassembly
// (and its line table) to rank source lines and instructions.
//
// CUPTI is opened at run time (libcupti.so.13 or libcupti.so, as the driver
// is), so rkbench runs, and says why, where it is missing.
#ifndef RINGKERNEL_BENCH_PC_SAMPLING_H_
#define RINGKERNEL_BENCH_PC_SAMPLING_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace rk::bench {

class PcSampler {
 public:
  // Enables sampling on device `ordinal`'s primary context, every
  // 2^period_log2 SM cycles (5..31).
  static absl::StatusOr<std::unique_ptr<PcSampler>> Start(int ordinal, int period_log2);
  ~PcSampler();

  // Collects what was sampled, disables sampling and writes the CSV. Also
  // returns a one-line summary (samples, dropped, PCs).
  absl::StatusOr<std::string> StopAndWrite(const std::string& path);

  struct State;

 private:
  explicit PcSampler(std::unique_ptr<State> s);
  std::unique_ptr<State> s_;
};

}  // namespace rk::bench

#endif  // RINGKERNEL_BENCH_PC_SAMPLING_H_
