// Copyright 2026 The RingKernel Authors.
//
// rkbench: RingKernel's benchmarks, after the seed methodology
// (shared/seeds/000_…): warm-up iterations discarded, measured iterations
// recorded one by one, one trial per process (the driver script starts a
// fresh process per trial), baselines in the same process and run.
//
//   rkbench --experiment NAME [--experiment NAME...] [--trial N] [--warmup 100]
//           [--iterations 1000] [--csv FILE] [--device N]
//
// Every measurement is a CSV row:
//   experiment,configuration,trial,iteration,metric,value,unit,timestamp
// and a summary (p50/p99/mean per configuration) is printed at the end.
#include <x86intrin.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "bench/baselines.h"
#include "jit/builder.h"
#include "ringkernel/runtime.h"
#include "ringkernel/status_macros.h"

namespace rk::bench {

// Host mirrors of handlers/bench.cu's messages.
struct Ping { unsigned long long seq; };
struct Pong { unsigned long long seq; };
struct Count { unsigned long long seq; };
struct CountQuery { int unused; };
struct Counted { unsigned long long count; unsigned long long last_seq; };
struct Rally { ActorId partner; int rounds; };
struct RallyDone { int rounds; unsigned long long total_ns; unsigned long long min_ns; unsigned long long max_ns; };
struct RallySample { int index; unsigned long long round_trip_ns[32]; };

}  // namespace rk::bench

RK_HOST_MESSAGE(rk::bench::Ping, "Ping");
RK_HOST_MESSAGE(rk::bench::Pong, "Pong");
RK_HOST_MESSAGE(rk::bench::Count, "Count");
RK_HOST_MESSAGE(rk::bench::CountQuery, "CountQuery");
RK_HOST_MESSAGE(rk::bench::Counted, "Counted");
RK_HOST_MESSAGE(rk::bench::Rally, "Rally");
RK_HOST_MESSAGE(rk::bench::RallyDone, "RallyDone");
RK_HOST_MESSAGE(rk::bench::RallySample, "RallySample");

namespace rk::bench {
namespace {

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
  std::string tag;  // appended to configuration names
};

SystemOptions SystemOptionsFor(const Options& o) {
  SystemOptions so;
  so.track_running = o.track_running != 0;
  so.idle_backoff = absl::Nanoseconds(o.idle_backoff_ns);
  return so;
}

// The time-stamp counter, calibrated against the steady clock: a Send takes
// tens of nanoseconds, so the timer must cost less than that.
class Tsc {
 public:
  Tsc() {
    const auto t0 = Clock::now();
    const uint64_t c0 = __rdtsc();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const uint64_t c1 = __rdtsc();
    const auto t1 = Clock::now();
    ns_per_tick_ = std::chrono::duration<double, std::nano>(t1 - t0).count() / static_cast<double>(c1 - c0);
  }
  static uint64_t Now() {
    unsigned aux;
    return __rdtscp(&aux);
  }
  double ToUs(uint64_t ticks) const { return static_cast<double>(ticks) * ns_per_tick_ / 1000.0; }

 private:
  double ns_per_tick_ = 1.0;
};

class Recorder {
 public:
  Recorder(const std::string& path, int trial) : out_(path, std::ios::app), trial_(trial) {
    out_.seekp(0, std::ios::end);
    if (out_.tellp() == 0) out_ << "experiment,configuration,trial,iteration,metric,value,unit,timestamp\n";
    stamp_ = absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", absl::Now(), absl::UTCTimeZone());
  }
  void Add(const std::string& experiment, const std::string& config, int iteration, const std::string& metric,
           double value, const std::string& unit) {
    out_ << experiment << "," << config << "," << trial_ << "," << iteration << "," << metric << ","
         << absl::StrFormat("%.6g", value) << "," << unit << "," << stamp_ << "\n";
    summary_[experiment + " " + config + " " + metric + " (" + unit + ")"].push_back(value);
  }
  void PrintSummary() const {
    std::printf("%-64s %8s %10s %10s %10s\n", "measurement", "n", "p50", "p99", "mean");
    for (const auto& [key, values] : summary_) {
      std::vector<double> v = values;
      std::sort(v.begin(), v.end());
      double mean = 0;
      for (double x : v) mean += x;
      mean /= static_cast<double>(v.size());
      auto pct = [&](double p) { return v[std::min(v.size() - 1, static_cast<size_t>(p * (v.size() - 1) + 0.5))]; };
      std::printf("%-64s %8zu %10.4g %10.4g %10.4g\n", key.c_str(), v.size(), pct(0.5), pct(0.99), mean);
    }
  }

 private:
  std::ofstream out_;
  int trial_;
  std::string stamp_;
  std::map<std::string, std::vector<double>> summary_;
};

// Times `op` warmup + iterations times with the host clock and records the
// measured ones in microseconds.
absl::Status TimeHost(Recorder& rec, const Options& o, const std::string& exp, const std::string& config,
                      const std::string& metric, const std::function<absl::Status()>& op) {
  for (int i = 0; i < o.warmup; ++i) RK_RETURN_IF_ERROR(op());
  for (int i = 0; i < o.iterations; ++i) {
    const auto t0 = Clock::now();
    RK_RETURN_IF_ERROR(op());
    const auto t1 = Clock::now();
    rec.Add(exp, config, i + 1, metric, std::chrono::duration<double, std::micro>(t1 - t0).count(), "microseconds");
  }
  return absl::OkStatus();
}

// Experiment 1: what it costs to get one command to the GPU.
absl::Status Exp1(Runtime& runtime, const Program& program, Recorder& rec, const Options& o) {
  const std::string exp = "exp1_launch_overhead";
  if (!o.skip_baselines) {
    RK_ASSIGN_OR_RETURN(std::unique_ptr<Baselines> base, Baselines::Create(runtime.device().capability));
    RK_RETURN_IF_ERROR(TimeHost(rec, o, exp, "traditional", "latency_us", [&] { return base->Traditional(); }));
    RK_RETURN_IF_ERROR(TimeHost(rec, o, exp, "launch_sync", "latency_us", [&] { return base->LaunchSync(); }));
    RK_RETURN_IF_ERROR(
        TimeHost(rec, o, exp, "graph_launch_sync", "latency_us", [&] { return base->GraphLaunchSync(); }));
    RK_RETURN_IF_ERROR(base->StartPersistent());
    RK_RETURN_IF_ERROR(
        TimeHost(rec, o, exp, "cuper_persistent_roundtrip", "latency_us", [&] { return base->PersistentCommand(); }));
    RK_RETURN_IF_ERROR(base->StopPersistent());
  }

  SystemOptions so = SystemOptionsFor(o);
  so.host_ring_capacity = 8192;  // room for a whole trial of Sends without waiting
  RK_ASSIGN_OR_RETURN(std::unique_ptr<System> sys, runtime.Start(program, so));
  RK_ASSIGN_OR_RETURN(ActorId sink, sys->Spawn("Sink", "sink"));
  RK_ASSIGN_OR_RETURN(ActorId echo, sys->Spawn("Echo", "echo"));
  // Send: the host's injection, one message into mapped memory.
  Tsc tsc;
  unsigned long long seq = 0;
  for (int i = 0; i < o.warmup; ++i) RK_RETURN_IF_ERROR(sys->Send(sink, Count{++seq}));
  RK_RETURN_IF_ERROR(sys->Ask<Counted>(sink, CountQuery{0}, absl::Seconds(5)).status());
  std::vector<uint64_t> ticks(o.iterations);
  for (int i = 0; i < o.iterations; ++i) {
    const uint64_t t0 = Tsc::Now();
    absl::Status s = sys->Send(sink, Count{++seq});
    const uint64_t t1 = Tsc::Now();
    if (!s.ok()) return s;
    ticks[i] = t1 - t0;
  }
  for (int i = 0; i < o.iterations; ++i) rec.Add(exp, "persistent_send", i + 1, "latency_us", tsc.ToUs(ticks[i]), "microseconds");
  // Delivery: every Send arrived (the claim is about delivery, not the store).
  RK_ASSIGN_OR_RETURN(Counted c, sys->Ask<Counted>(sink, CountQuery{0}, absl::Seconds(5)));
  if (c.count != seq) {
    return absl::InternalError(absl::StrCat("the sink got ", c.count, " of ", seq, " messages"));
  }
  // The timer's own cost, for the record.
  for (int i = 0; i < o.iterations; ++i) {
    const uint64_t t0 = Tsc::Now();
    const uint64_t t1 = Tsc::Now();
    rec.Add(exp, "timer_overhead", i + 1, "latency_us", tsc.ToUs(t1 - t0), "microseconds");
  }
  // Ask: host → actor → host.
  RK_RETURN_IF_ERROR(TimeHost(rec, o, exp, "persistent_ask_roundtrip", "latency_us", [&]() -> absl::Status {
    absl::StatusOr<Pong> p = sys->Ask<Pong>(echo, Ping{++seq}, absl::Seconds(1));
    if (!p.ok()) return p.status();
    return p->seq == seq ? absl::OkStatus() : absl::InternalError("wrong pong");
  }));
  RK_ASSIGN_OR_RETURN(StopReport r, sys->Stop());
  (void)r;
  return absl::OkStatus();
}

// One K2K hop, timed on the GPU with %globaltimer: half of each round trip of
// a rally between two actors on different workers.
absl::Status K2kHop(Runtime& runtime, const Program& program, Recorder& rec, const Options& o) {
  const std::string exp = "k2k_hop";
  RK_ASSIGN_OR_RETURN(std::unique_ptr<System> sys, runtime.Start(program, SystemOptionsFor(o)));
  RK_ASSIGN_OR_RETURN(ActorId a, sys->Spawn("Rallier", "a"));
  RK_ASSIGN_OR_RETURN(ActorId b, sys->Spawn("Rallier", "b"));
  const int rounds = ((o.warmup + o.iterations) + 31) / 32 * 32;
  RK_RETURN_IF_ERROR(sys->Send(a, Rally{b, rounds}));
  std::vector<double> one_hop;
  bool done = false;
  while (!done) {
    RK_ASSIGN_OR_RETURN(std::optional<Message> m, sys->Receive(absl::Seconds(10)));
    if (!m.has_value()) return absl::DeadlineExceededError("the rally stopped");
    if (m->type == "RallySample") {
      RK_ASSIGN_OR_RETURN(RallySample s, m->As<RallySample>());
      for (unsigned long long rt : s.round_trip_ns) one_hop.push_back(static_cast<double>(rt) / 2000.0);
    } else if (m->type == "RallyDone") {
      done = true;
    }
  }
  int it = 0;
  for (size_t i = static_cast<size_t>(o.warmup); i < one_hop.size() && it < o.iterations; ++i) {
    rec.Add(exp, "global_memory_mailbox", ++it, "one_hop_us", one_hop[i], "microseconds");
  }
  RK_RETURN_IF_ERROR(sys->Stop().status());
  return absl::OkStatus();
}

// The JIT's speed: cold builds of a ten-handler program for sm_89 and sm_90
// (a fresh cache each time), then builds of the same program from the cache.
// Needs no GPU.
absl::Status Jit(Recorder& rec, const Options& o) {
  const std::string exp = "jit_compile";
  std::string source = std::string(RK_SOURCE_DIR) + "/handlers/compile_bench.cu";
  if (FILE* f = std::fopen(source.c_str(), "r")) {
    std::fclose(f);
  } else {
    source = "handlers/compile_bench.cu";
  }
  jit::BuildOptions bo;
  bo.archs = {"sm_89", "sm_90"};
  for (int trial = 0; trial < o.jit_cold; ++trial) {
    char dir_template[] = "/tmp/rkbench_cache_XXXXXX";
    if (mkdtemp(dir_template) == nullptr) return absl::InternalError("mkdtemp failed");
    const std::string dir = dir_template;
    jit::Builder::Options opts;
    opts.cache_dir = dir;
    RK_ASSIGN_OR_RETURN(jit::Builder builder, jit::Builder::Create(opts));
    std::vector<jit::Diagnostic> diags;
    RK_ASSIGN_OR_RETURN(jit::BuildResult cold, builder.BuildFiles({source}, bo, &diags));
    if (cold.cache_hit) return absl::InternalError("a fresh cache had a hit");
    rec.Add(exp, "cold_two_archs", trial + 1, "build_ms", cold.timings.total_ms, "milliseconds");
    rec.Add(exp, "cold_two_archs", trial + 1, "parse_ms", cold.timings.parse_ms, "milliseconds");
    rec.Add(exp, "cold_two_archs", trial + 1, "nvrtc_wall_ms", cold.timings.compile_ms, "milliseconds");
    for (const auto& [arch, ms] : cold.timings.arch_ms) rec.Add(exp, "cold_" + arch, trial + 1, "nvrtc_ms", ms, "milliseconds");
    if (trial == 0) {
      for (int i = 0; i < o.iterations; ++i) {
        RK_ASSIGN_OR_RETURN(jit::BuildResult warm, builder.BuildFiles({source}, bo, &diags));
        if (!warm.cache_hit) return absl::InternalError("the cached build missed");
        rec.Add(exp, "cached_two_archs", i + 1, "build_ms", warm.timings.total_ms, "milliseconds");
      }
    }
    std::filesystem::remove_all(dir);
  }
  return absl::OkStatus();
}

int Main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--experiment") o.experiments.push_back(next());
    else if (a == "--trial") o.trial = std::atoi(next().c_str());
    else if (a == "--warmup") o.warmup = std::atoi(next().c_str());
    else if (a == "--iterations") o.iterations = std::atoi(next().c_str());
    else if (a == "--csv") o.csv = next();
    else if (a == "--device") o.device = std::atoi(next().c_str());
    else if (a == "--track-running") o.track_running = std::atoi(next().c_str());
    else if (a == "--idle-backoff-ns") o.idle_backoff_ns = std::atoi(next().c_str());
    else if (a == "--skip-baselines") o.skip_baselines = true;
    else if (a == "--jit-cold") o.jit_cold = std::atoi(next().c_str());
    else {
      std::fprintf(stderr, "rkbench: unknown argument '%s'\n", a.c_str());
      return 2;
    }
  }
  if (o.experiments.empty()) o.experiments = {"exp1", "hop"};
  Recorder rec(o.csv, o.trial);
  bool needs_gpu = false;
  for (const std::string& e : o.experiments) {
    if (e == "jit") {
      if (absl::Status s = Jit(rec, o); !s.ok()) {
        std::fprintf(stderr, "rkbench: jit: %s\n", std::string(s.message()).c_str());
        return 1;
      }
    } else {
      needs_gpu = true;
    }
  }
  if (!needs_gpu) {
    rec.PrintSummary();
    return 0;
  }
  absl::StatusOr<std::unique_ptr<Runtime>> runtime = Runtime::Create({.device = o.device});
  if (!runtime.ok()) {
    std::fprintf(stderr, "rkbench: %s\n", std::string(runtime.status().message()).c_str());
    return 2;
  }
  absl::StatusOr<Program> program = (*runtime)->CompileFiles({std::string(RK_SOURCE_DIR) + "/handlers/bench.cu"});
  if (!program.ok()) {
    // The sources may have moved with the binary (a GPU machine's copy).
    program = (*runtime)->CompileFiles({"handlers/bench.cu"});
  }
  if (!program.ok()) {
    std::fprintf(stderr, "rkbench: %s\n", std::string(program.status().message()).c_str());
    return 2;
  }
  for (const std::string& e : o.experiments) {
    absl::Status s;
    if (e == "jit") continue;
    if (e == "exp1") s = Exp1(**runtime, *program, rec, o);
    else if (e == "hop") s = K2kHop(**runtime, *program, rec, o);
    else s = absl::InvalidArgumentError(absl::StrCat("unknown experiment '", e, "'"));
    if (!s.ok()) {
      std::fprintf(stderr, "rkbench: %s: %s\n", e.c_str(), std::string(s.message()).c_str());
      return 1;
    }
  }
  std::printf("device: %s (%s), trial %d\n", (*runtime)->device().name.c_str(), (*runtime)->device().arch().c_str(),
              o.trial);
  rec.PrintSummary();
  return 0;
}

}  // namespace
}  // namespace rk::bench

int main(int argc, char** argv) { return rk::bench::Main(argc, argv); }
