// Copyright 2026 The RingKernel Authors.
//
// nvml_power.h: the board's power draw, read through NVML in-process, so that
// an experiment can compare the GPU's power with and without an actor system
// running at moments it chooses (the suite's nvidia-smi sampling only sees
// whole processes).
//
// NVML (libnvidia-ml.so.1, part of the driver) is opened at run time with
// dlopen, never linked, like the CUDA driver: rkbench starts without it and
// says why power was not measured.
//
//   RK_ASSIGN_OR_RETURN(std::unique_ptr<PowerMeter> meter, PowerMeter::Open(0));
//   RK_ASSIGN_OR_RETURN(std::vector<double> watts, SamplePower(*meter, absl::Seconds(3), absl::Milliseconds(100)));
#ifndef RINGKERNEL_BENCH_NVML_POWER_H_
#define RINGKERNEL_BENCH_NVML_POWER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace rk::bench {

// One device's power reading through NVML. Not thread-safe; owns its NVML
// initialisation (shut down, and the library closed, on destruction).
class PowerMeter {
 public:
  // Opens NVML and finds CUDA device `ordinal` by its UUID (NVML numbers
  // devices in its own order, and CUDA_VISIBLE_DEVICES renumbers CUDA's),
  // or by index when the UUID cannot be had. FailedPrecondition, saying
  // why, when NVML is missing or cannot read this device's power.
  static absl::StatusOr<std::unique_ptr<PowerMeter>> Open(int ordinal);
  ~PowerMeter();
  PowerMeter(const PowerMeter&) = delete;
  PowerMeter& operator=(const PowerMeter&) = delete;

  // The board's power now, in watts (NVML reports milliwatts; on recent
  // GPUs an average over the last second or so).
  absl::StatusOr<double> Watts() const;
  // How the device was found ("by UUID GPU-…" or "by index N").
  const std::string& found() const { return found_; }

 private:
  struct Api;
  PowerMeter(std::unique_ptr<Api> api, void* device, std::string found);
  std::unique_ptr<Api> api_;
  void* device_;  // nvmlDevice_t
  std::string found_;
};

// Reads `meter` every `every` for `span` (at least one sample) and returns
// the watts of each sample.
absl::StatusOr<std::vector<double>> SamplePower(const PowerMeter& meter, absl::Duration span, absl::Duration every);

}  // namespace rk::bench

#endif  // RINGKERNEL_BENCH_NVML_POWER_H_
