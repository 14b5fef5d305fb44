// Copyright 2026 The RingKernel Authors.
//
// exp_common.h: what rkbench's experiments share — the options, the CSV
// recorder, host mirrors of handlers/bench.cu's messages, small helpers, and
// the entry point of each experiment (one per file: exp_throughput.cc for
// experiments 2 and 3, exp_sustained.cc, exp_mixed.cc, exp_memory.cc,
// exp_fault.cc, hopper.cc for experiment 8).
//
// Every measurement is one CSV row
//   experiment,configuration,trial,iteration,metric,value,unit,timestamp
// with configurations written as `key=value` pairs joined by ';'.
#ifndef RINGKERNEL_BENCH_EXP_COMMON_H_
#define RINGKERNEL_BENCH_EXP_COMMON_H_

#include <chrono>
#include <cstdint>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "ringkernel/runtime.h"

namespace rk::cuda {
class Module;
}

namespace rk::bench {

using Clock = std::chrono::steady_clock;

struct Options {
  std::vector<std::string> experiments;
  int trial = 1;
  int warmup = 100;
  int iterations = 1000;
  std::string csv = "raw.csv";
  int device = 0;
  int track_running = 1;
  bool skip_baselines = false;
  int jit_cold = 5;
  int idle_backoff_ns = 256;
  // exp2: messages per burst.
  int exp2_messages = 20000;
  // exp3: messages per actor (weak), messages in all (strong), LCG steps per
  // message, self-sends in flight per actor, and the largest actor count.
  int exp3_weak_messages = 20000;
  int exp3_strong_total = 1 << 18;
  int exp3_work = 64;
  int exp3_window = 8;
  int exp3_max_actors = 1024;
  // exp4: length of the sustained run, of the peak measurement before it,
  // and the pause between sampled Asks.
  int sustain_seconds = 60;
  int exp4_peak_ms = 1000;
  int exp4_ask_interval_us = 100;
  // exp5: LCG steps per element in a compute op; ops per ops_per_s sample.
  int exp5_rounds = 128;
  int exp5_batch = 100;
  // exp6: actors and state bytes per actor of the workload.
  int exp6_actors = 256;
  // exp7: healthy actors, phase length, fault kinds.
  int exp7_actors = 32;
  int exp7_phase_ms = 2000;
  std::string exp7_faults = "nan,hang";
  // exp8: round trips per launch.
  int exp8_rounds = 10000;
};

// Appends rows to the CSV (a header first if the file is empty) and keeps
// every value for the printed summary.
class Recorder {
 public:
  Recorder(const std::string& path, int trial);
  void Add(const std::string& experiment, const std::string& config, int iteration, const std::string& metric,
           double value, const std::string& unit);
  void Flush() { out_.flush(); }
  void PrintSummary() const;

 private:
  std::ofstream out_;
  int trial_;
  std::string stamp_;
  std::map<std::string, std::vector<double>> summary_;
};

// What every experiment gets.
struct Bench {
  Runtime& runtime;
  const Program& program;  // handlers/bench.cu
  Recorder& rec;
  const Options& o;
};

// SystemOptions with rkbench's common settings (--track-running,
// --idle-backoff-ns).
SystemOptions BaseSystemOptions(const Options& o);

// The p-quantile (0..1) of `v` (sorted in place); 0 for an empty vector.
double Quantile(std::vector<double>& v, double p);

// Seconds between two steady-clock points.
inline double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// The next message of type `type` sent to the host, waiting up to
// `timeout`; messages of other types are dropped (counted in `*dropped`).
absl::StatusOr<Message> ReceiveType(System& sys, const std::string& type, absl::Duration timeout,
                                    int* dropped = nullptr);

// Stops `sys` and returns an error if the stop did not drain or left
// messages unhandled (a benchmark that loses messages measured nothing).
absl::Status StopCleanly(System& sys, const std::string& what);

// Compiles `source` (CUDA C++ with extern "C" kernels, no includes) with
// NVRTC for `arch` ("sm_90"). Fails on errors; warnings go to stderr.
absl::StatusOr<std::string> CompileKernels(const std::string& name, const std::string& source,
                                           const std::string& arch);
// The same, loaded into the current context.
absl::StatusOr<std::unique_ptr<cuda::Module>> LoadKernels(const std::string& name, const std::string& source,
                                                          int capability);

// ---- The experiments (each records its rows and prints its notes). ----
absl::Status Exp2K2kThroughput(const Bench& b);
absl::Status Exp3Scaling(const Bench& b);
absl::Status Exp4Sustained(const Bench& b);
absl::Status Exp5Mixed(const Bench& b);
absl::Status Exp6Memory(const Bench& b);
// Leaves the process's GPU unusable when a stuck handler is among the
// faults: run it last. Sets *abandoned when a system had to be abandoned.
absl::Status Exp7FaultIsolation(const Bench& b, bool* abandoned);
// (Experiment 8 is in hopper.h.)

// Compiles rkbench's stand-alone kernels (exp5's traditional model for
// sm_89 and sm_90, exp8's for sm_90) with NVRTC; needs no GPU.
absl::Status CheckKernels();
// exp5's traditional-model kernels.
std::string MixedKernelSource();

// ---- Host mirrors of handlers/bench.cu's messages. ----
struct Ping { unsigned long long seq; };
struct Pong { unsigned long long seq; };
struct Count { unsigned long long seq; };
struct CountQuery { int unused; };
struct Counted { unsigned long long count; unsigned long long last_seq; };
struct Rally { ActorId partner; int rounds; };
struct RallyDone { int rounds; unsigned long long total_ns; unsigned long long min_ns; unsigned long long max_ns; };
struct RallySample { int index; unsigned long long round_trip_ns[32]; };
struct P64 { unsigned long long seq; unsigned char pad[56]; };
struct P256 { unsigned long long seq; unsigned char pad[248]; };
struct P1K { unsigned long long seq; unsigned char pad[1016]; };
struct P4K { unsigned long long seq; unsigned char pad[4088]; };
struct Stream { ActorId to; int size; int count; };
struct StreamDone {
  int size;
  int count;
  unsigned long long full;
  unsigned long long start_ns;
  unsigned long long end_ns;
  unsigned long long retries;
};
struct Expect { int count; };
struct Expected { int count; };
struct Drained {
  unsigned long long received;
  unsigned long long bytes;
  unsigned long long first_ns;
  unsigned long long last_ns;
  unsigned long long words;
  unsigned long long disorder;
};
struct LoopStart { ActorId first; int actors; int position; int messages; int work; int window; };
struct LoopDone {
  int position;
  int full;
  unsigned long long handled;
  unsigned long long first_ns;
  unsigned long long last_ns;
  unsigned int acc;
  int failed_children;
};
struct MixStep { int rounds; };
struct MixInject { int offset; unsigned int values[64]; };
struct MixQuery { int offset; };
struct MixAck { unsigned long long ops; };
struct MixValue { unsigned long long sum; };
struct BeatStart { int window; };
struct BeatStop { int unused; };
struct Poison { int unused; };
struct Hang { int forever; };
struct BeatCheck { int unused; };
struct BeatState { unsigned long long beats; unsigned long long full; float level; unsigned int data[64]; };

}  // namespace rk::bench

RK_HOST_MESSAGE(rk::bench::Ping, "Ping");
RK_HOST_MESSAGE(rk::bench::Pong, "Pong");
RK_HOST_MESSAGE(rk::bench::Count, "Count");
RK_HOST_MESSAGE(rk::bench::CountQuery, "CountQuery");
RK_HOST_MESSAGE(rk::bench::Counted, "Counted");
RK_HOST_MESSAGE(rk::bench::Rally, "Rally");
RK_HOST_MESSAGE(rk::bench::RallyDone, "RallyDone");
RK_HOST_MESSAGE(rk::bench::RallySample, "RallySample");
RK_HOST_MESSAGE(rk::bench::P64, "P64");
RK_HOST_MESSAGE(rk::bench::P256, "P256");
RK_HOST_MESSAGE(rk::bench::P1K, "P1K");
RK_HOST_MESSAGE(rk::bench::P4K, "P4K");
RK_HOST_MESSAGE(rk::bench::Stream, "Stream");
RK_HOST_MESSAGE(rk::bench::StreamDone, "StreamDone");
RK_HOST_MESSAGE(rk::bench::Expect, "Expect");
RK_HOST_MESSAGE(rk::bench::Expected, "Expected");
RK_HOST_MESSAGE(rk::bench::Drained, "Drained");
RK_HOST_MESSAGE(rk::bench::LoopStart, "LoopStart");
RK_HOST_MESSAGE(rk::bench::LoopDone, "LoopDone");
RK_HOST_MESSAGE(rk::bench::MixStep, "MixStep");
RK_HOST_MESSAGE(rk::bench::MixInject, "MixInject");
RK_HOST_MESSAGE(rk::bench::MixQuery, "MixQuery");
RK_HOST_MESSAGE(rk::bench::MixAck, "MixAck");
RK_HOST_MESSAGE(rk::bench::MixValue, "MixValue");
RK_HOST_MESSAGE(rk::bench::BeatStart, "BeatStart");
RK_HOST_MESSAGE(rk::bench::BeatStop, "BeatStop");
RK_HOST_MESSAGE(rk::bench::Poison, "Poison");
RK_HOST_MESSAGE(rk::bench::Hang, "Hang");
RK_HOST_MESSAGE(rk::bench::BeatCheck, "BeatCheck");
RK_HOST_MESSAGE(rk::bench::BeatState, "BeatState");

#endif  // RINGKERNEL_BENCH_EXP_COMMON_H_
