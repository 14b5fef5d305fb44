// Copyright 2026 The RingKernel Authors.
//
// rkbench: RingKernel's benchmarks, after the seed methodology
// (shared/seeds/000_…): warm-up iterations discarded, measured iterations
// recorded one by one, one trial per process (the driver script starts a
// fresh process per trial), baselines in the same process and run.
//
//   rkbench --experiment NAME [--experiment NAME...] [--trial N] [--warmup 100]
//           [--iterations 1000] [--csv FILE] [--device N] [experiment flags]
//
// Experiments: exp1 (launch overhead), hop (one K2K hop), paths (the message
// paths of issue 8), exp2 … exp8 (see exp_common.h for where each lives), jit
// (compile times; no GPU), kernels (compile rkbench's own kernels; no GPU),
// all (exp1, hop, paths, exp2 … exp8).
// exp8 and exp7 run after the others whatever the order given: exp8's
// kernels need SMs no actor system holds, and a stuck handler (exp7) leaves
// the GPU unusable for the rest of the process.
//
// Every measurement is a CSV row:
//   experiment,configuration,trial,iteration,metric,value,unit,timestamp
// and a summary (p50/p99/mean per configuration) is printed at the end.
#include <pthread.h>
#include <sched.h>
#include <unistd.h>
#include <x86intrin.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "bench/baselines.h"
#include "bench/build_info.h"  // generated at build time: RK_BENCH_GIT_COMMIT, RK_BENCH_GIT_STATE
#include "bench/exp_common.h"
#include "bench/hopper.h"
#include "bench/pc_sampling.h"
#include "cuda.h"
#include "jit/builder.h"
#include "jit/nvrtc_compiler.h"
#include "ringkernel/runtime.h"
#include "ringkernel/status_macros.h"
#include "runtime/system_access.h"

namespace rk::bench {
namespace {

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

// exp1's timed host calls run on one CPU (--host-cpu). The virtual CPUs of
// the machine the standard runs use do not run at one speed: the same pair of
// `rdtscp`s costs 1.2-1.7 times more on some of them than on others, and so
// does every host call (bench/NOTES.md, session 29), so a process measured
// whatever its scheduler gave it. "auto" takes the CPU whose pair of `rdtscp`s
// is cheapest (the median of kCpuProbePairs on each CPU the process may run
// on), "none" leaves the thread where the scheduler puts it, a number names
// the CPU. Only the timed calls' thread is pinned, and only while they run:
// threads started meanwhile (the runtime's, the driver's) keep the process's
// mask.
class HostCpuPin {
 public:
  // Pins the calling thread to `cpu` until destroyed (-1: leaves it).
  explicit HostCpuPin(int cpu) {
    if (cpu < 0 || pthread_getaffinity_np(pthread_self(), sizeof(saved_), &saved_) != 0) return;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    pinned_ = pthread_setaffinity_np(pthread_self(), sizeof(one), &one) == 0;
  }
  ~HostCpuPin() {
    if (pinned_) pthread_setaffinity_np(pthread_self(), sizeof(saved_), &saved_);
  }
  HostCpuPin(const HostCpuPin&) = delete;
  HostCpuPin& operator=(const HostCpuPin&) = delete;
  bool pinned() const { return pinned_; }

 private:
  cpu_set_t saved_{};
  bool pinned_ = false;
};

constexpr int kCpuProbePairs = 20000;

// The median cost in ticks of a pair of `rdtscp`s on the calling thread.
uint64_t TimerPairMedian() {
  std::vector<uint64_t> d(kCpuProbePairs);
  for (int i = 0; i < kCpuProbePairs / 10; ++i) (void)Tsc::Now();
  for (uint64_t& x : d) {
    const uint64_t t0 = Tsc::Now();
    const uint64_t t1 = Tsc::Now();
    x = t1 - t0;
  }
  std::nth_element(d.begin(), d.begin() + d.size() / 2, d.end());
  return d[d.size() / 2];
}

// The CPU exp1's timed calls run on (-1: none), from --host-cpu; says which
// and why on stderr.
absl::StatusOr<int> HostCpu(const Options& o) {
  if (o.host_cpu == "none") return -1;
  cpu_set_t allowed;
  if (pthread_getaffinity_np(pthread_self(), sizeof(allowed), &allowed) != 0) {
    return absl::InternalError("--host-cpu: cannot read this thread's CPU mask");
  }
  if (o.host_cpu != "auto") {
    int cpu = -1;
    if (!absl::SimpleAtoi(o.host_cpu, &cpu) || cpu < 0 || cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &allowed)) {
      return absl::InvalidArgumentError(absl::StrCat("--host-cpu: '", o.host_cpu,
                                                     "' is not auto, none or a CPU this process may run on"));
    }
    std::fprintf(stderr, "rkbench: exp1's host calls on CPU %d (--host-cpu)\n", cpu);
    return cpu;
  }
  int best = -1;
  uint64_t best_ticks = 0;
  std::string each;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &allowed)) continue;
    HostCpuPin pin(cpu);
    if (!pin.pinned()) continue;
    const uint64_t ticks = TimerPairMedian();
    absl::StrAppend(&each, each.empty() ? "" : " ", cpu, ":", ticks);
    if (best < 0 || ticks < best_ticks) {
      best = cpu;
      best_ticks = ticks;
    }
  }
  if (best < 0) {
    std::fprintf(stderr, "rkbench: exp1's host calls not pinned (--host-cpu auto): no CPU of this process's mask "
                         "could be pinned\n");
    return -1;
  }
  std::fprintf(stderr, "rkbench: exp1's host calls on CPU %d, the cheapest pair of rdtscp (median ticks per CPU: %s)\n",
               best, each.c_str());
  return best;
}

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

// Times `op` warmup + iterations times with the time-stamp counter and
// records the measured ones in microseconds, calling `sync` (untimed) before
// every `per_sync`-th call and after the last: for calls that only enqueue
// work, so that the queue behind them never fills and makes one wait.
absl::Status TimeReturns(Recorder& rec, const Options& o, const Tsc& tsc, const std::string& exp,
                         const std::string& config, int per_sync, const std::function<absl::Status()>& op,
                         const std::function<absl::Status()>& sync) {
  std::vector<uint64_t> ticks(static_cast<size_t>(o.iterations));
  for (int i = 0; i < o.warmup + o.iterations; ++i) {
    if (i % per_sync == 0) RK_RETURN_IF_ERROR(sync());
    const uint64_t t0 = Tsc::Now();
    const absl::Status s = op();
    const uint64_t t1 = Tsc::Now();
    RK_RETURN_IF_ERROR(s);
    if (i >= o.warmup) ticks[static_cast<size_t>(i - o.warmup)] = t1 - t0;
  }
  RK_RETURN_IF_ERROR(sync());
  for (int i = 0; i < o.iterations; ++i) {
    rec.Add(exp, config, i + 1, "latency_us", tsc.ToUs(ticks[static_cast<size_t>(i)]), "microseconds");
  }
  return absl::OkStatus();
}

// Launches between two synchronisations in launch_return and
// graph_launch_return: far below the depth of a stream's launch queue (on
// the order of a thousand launches), so a launch never waits for room.
constexpr int kLaunchesPerSync = 32;

// The floor of a host round trip, CuPer-style: a persistent kernel polling
// mapped memory answers each command (`cuper_persistent_roundtrip`).
absl::Status TimeFloorRoundTrip(Baselines& base, Recorder& rec, const Options& o, const std::string& exp) {
  RK_RETURN_IF_ERROR(base.StartPersistent());
  RK_RETURN_IF_ERROR(
      TimeHost(rec, o, exp, "cuper_persistent_roundtrip", "latency_us", [&] { return base.PersistentCommand(); }));
  return base.StopPersistent();
}

// RingKernel's round trip: Asks of the Echo actor, each checked
// (`persistent_ask_roundtrip`). `*seq` numbers the pings.
absl::Status TimeEchoAsks(System& sys, ActorId echo, Recorder& rec, const Options& o, const std::string& exp,
                          uint64_t* seq, const std::string& config = "persistent_ask_roundtrip") {
  return TimeHost(rec, o, exp, config, "latency_us", [&]() -> absl::Status {
    const uint64_t n = ++*seq;
    absl::StatusOr<Pong> p = sys.Ask<Pong>(echo, Ping{n}, absl::Seconds(1));
    if (!p.ok()) return p.status();
    return p->seq == n ? absl::OkStatus() : absl::InternalError("wrong pong");
  });
}

// Experiment 1: what it costs to get one command to the GPU. Host clock
// (steady_clock) for the round trips — traditional (pinned 64 B in, launch,
// sync, 64 B out), launch_sync, graph_launch_sync, the CuPer-style floor
// cuper_persistent_roundtrip and RingKernel's persistent_ask_roundtrip —
// and the time-stamp counter for the calls that only enqueue:
// launch_return and graph_launch_return (the driver call returning) against
// persistent_send (`Send` returning), with timer_overhead for the record.
absl::Status Exp1(Runtime& runtime, const Program& program, Recorder& rec, const Options& o) {
  const std::string exp = "exp1_launch_overhead";
  const Tsc tsc;
  RK_ASSIGN_OR_RETURN(const int cpu, HostCpu(o));
  if (!o.skip_baselines) {
    RK_ASSIGN_OR_RETURN(std::unique_ptr<Baselines> base,
                        Baselines::Create(runtime.device().ordinal, runtime.device().capability));
    const HostCpuPin pin(cpu);
    RK_RETURN_IF_ERROR(TimeHost(rec, o, exp, "traditional", "latency_us", [&] { return base->Traditional(); }));
    RK_RETURN_IF_ERROR(TimeHost(rec, o, exp, "launch_sync", "latency_us", [&] { return base->LaunchSync(); }));
    RK_RETURN_IF_ERROR(
        TimeHost(rec, o, exp, "graph_launch_sync", "latency_us", [&] { return base->GraphLaunchSync(); }));
    // What `Send` is compared with: the enqueue calls returning.
    RK_RETURN_IF_ERROR(TimeReturns(rec, o, tsc, exp, "launch_return", kLaunchesPerSync,
                                   [&] { return base->LaunchReturn(); }, [&] { return base->Synchronize(); }));
    RK_RETURN_IF_ERROR(TimeReturns(rec, o, tsc, exp, "graph_launch_return", kLaunchesPerSync,
                                   [&] { return base->GraphLaunchReturn(); }, [&] { return base->Synchronize(); }));
    RK_RETURN_IF_ERROR(TimeFloorRoundTrip(*base, rec, o, exp));
  }

  SystemOptions so = BaseSystemOptions(o);
  RK_ASSIGN_OR_RETURN(std::unique_ptr<System> sys, runtime.Start(program, so));
  RK_ASSIGN_OR_RETURN(ActorId sink, sys->Spawn("Sink", "sink"));
  RK_ASSIGN_OR_RETURN(ActorId echo, sys->Spawn("Echo", "echo"));
  // (After the system started: its threads keep the process's mask.)
  const HostCpuPin pin(cpu);
  // Send: the host's injection, one message into mapped memory. The ring
  // of a worker holds fewer records than a trial sends (it is sized in
  // bytes, and this program's largest message is 4 KiB), so every
  // kSendsPerDrain Sends an untimed Ask lets the sink catch up, exactly as
  // the launch configurations synchronise between their timed calls.
  constexpr int kSendsPerDrain = 32;
  uint64_t seq = 0;
  for (int i = 0; i < o.warmup; ++i) {
    if (i % kSendsPerDrain == 0) {
      RK_RETURN_IF_ERROR(sys->Ask<Counted>(sink, CountQuery{0}, absl::Seconds(5)).status());
    }
    RK_RETURN_IF_ERROR(sys->Send(sink, Count{++seq}));
  }
  RK_RETURN_IF_ERROR(sys->Ask<Counted>(sink, CountQuery{0}, absl::Seconds(5)).status());
  std::vector<uint64_t> ticks(o.iterations);
  for (int i = 0; i < o.iterations; ++i) {
    if (i % kSendsPerDrain == 0) {
      RK_RETURN_IF_ERROR(sys->Ask<Counted>(sink, CountQuery{0}, absl::Seconds(5)).status());
    }
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
  RK_RETURN_IF_ERROR(TimeEchoAsks(*sys, echo, rec, o, exp, &seq));
  RK_ASSIGN_OR_RETURN(StopReport r, sys->Stop());
  (void)r;
  PrintOwnerCycles(*sys, exp);
  return absl::OkStatus();
}

// A step between two stamps of one row of a measurement build's table
// (stamps in nanoseconds of %globaltimer).
struct StampStep {
  const char* name;
  int from, to;
};

// Records each step of `row` (`prefix` before its name) as one value of
// `iteration`, in microseconds.
void AddStampSteps(Recorder& rec, const std::string& exp, const std::string& prefix, int iteration,
                   const uint64_t* row, const std::vector<StampStep>& steps) {
  for (const StampStep& x : steps) {
    rec.Add(exp, absl::StrCat(prefix, x.name), iteration, "latency_us",
            (static_cast<double>(row[x.to]) - static_cast<double>(row[x.from])) / 1000.0, "microseconds");
  }
}

// Where an Ask's time goes, from a measurement build of the program
// (`actorc build handlers/bench.cu -D RK_ASK_STAMPS`, run with --package):
// the device runtime stamps each step of a host request with %globaltimer
// (rt_base.cuh, AskStamp), read back after Stop. The host times each Ask and
// the floor's round trip in the same process. Per Ask, on the GPU, the steps
// below (`steps`): the poller's read and parse, the hand-over, the owner
// finding and taking it, the handler's call, the reply's reservation and
// stores, the entry freed. The host's share (its Send, the two trips over
// the bus, its drain) is the Ask minus the GPU's span. Then the same for
// --paths-quiet-asks Asks after a pause each (quiet_ask, quiet_*).
absl::Status AskStamps(Runtime& runtime, const Program& program, Recorder& rec, const Options& o) {
  const std::string exp = "ask_stamps";
  if (!o.skip_baselines) {
    RK_ASSIGN_OR_RETURN(std::unique_ptr<Baselines> base,
                        Baselines::Create(runtime.device().ordinal, runtime.device().capability));
    RK_RETURN_IF_ERROR(TimeFloorRoundTrip(*base, rec, o, exp));
  }
  SystemOptions so = BaseSystemOptions(o);
  RK_ASSIGN_OR_RETURN(std::unique_ptr<System> sys, runtime.Start(program, so));
  RK_ASSIGN_OR_RETURN(ActorId echo, sys->Spawn("Echo", "echo"));
  uint64_t seq = 0;
  RK_RETURN_IF_ERROR(TimeEchoAsks(*sys, echo, rec, o, exp, &seq));
  // Then --paths-quiet-asks Asks, each after a pause of the first of
  // --paths-quiet-ms: their steps are reported apart (quiet_*), to show
  // where the first Ask after a pause spends its time on the GPU.
  int quiet_ms = 0;
  if (!absl::SimpleAtoi(std::string(o.paths_quiet_ms.substr(0, o.paths_quiet_ms.find(','))), &quiet_ms) ||
      quiet_ms < 0) {
    return absl::InvalidArgumentError(absl::StrCat("--paths-quiet-ms: '", o.paths_quiet_ms, "'"));
  }
  const int quiet_asks = std::max(o.paths_quiet_asks, 0);
  for (int i = 0; i < quiet_asks; ++i) {
    absl::SleepFor(absl::Milliseconds(quiet_ms));
    RK_ASSIGN_OR_RETURN(const double us, TimeEchoAsk(*sys, echo, &seq, absl::Seconds(1)));
    rec.Add(exp, absl::StrCat("quiet_ask;quiet_ms=", quiet_ms), i + 1, "latency_us", us, "microseconds");
  }
  RK_ASSIGN_OR_RETURN(StopReport r, sys->Stop());
  (void)r;
  constexpr size_t kSlots = 4096, kStamps = 16;
  std::vector<uint64_t> st(kSlots * kStamps);
  RK_RETURN_IF_ERROR(rk::internal::SystemAccess::ReadDeviceGlobal(*sys, "rk_ask_stamps", st.data(),
                                                                  st.size() * sizeof(uint64_t)));
  // Steps between stamps (rt_base.cuh, AskStamp), in the order they happen.
  const std::vector<StampStep> steps = {{"gpu_a_poll_to_header", 0, 6},      {"gpu_b_header_to_record", 6, 9},
                        {"gpu_c_record_to_checked", 9, 10},  {"gpu_d_checked_to_put", 10, 11},
                        {"gpu_e_put_to_handover", 11, 1},    {"gpu_f1_handover_to_seen", 1, 13},
                        {"gpu_f2_seen_to_taken", 13, 2},
                        {"gpu_g_taken_to_call", 2, 12},      {"gpu_h_call_to_handler", 12, 3},
                        {"gpu_i_handler_to_out_write", 3, 7}, {"gpu_j_out_reserve", 7, 8},
                        {"gpu_k_out_write", 8, 4},           {"gpu_l_handler_to_freed", 4, 5},
                        {"gpu_poll_to_handler_out", 0, 4}};
  // The complete rows, oldest first (by the GPU time their poll began):
  // the last quiet_asks of them are the quiet Asks.
  std::vector<const uint64_t*> rows;
  for (size_t i = 0; i < kSlots; ++i) {
    const uint64_t* s = &st[i * kStamps];
    bool all = true;
    for (size_t k = 0; k < 14; ++k) all = all && s[k] != 0;
    if (all) rows.push_back(s);
  }
  std::sort(rows.begin(), rows.end(), [](const uint64_t* a, const uint64_t* b) { return a[0] < b[0]; });
  const size_t warm_rows = rows.size() > static_cast<size_t>(quiet_asks) ? rows.size() - quiet_asks : 0;
  int n = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    const uint64_t* s = rows[i];
    const bool quiet = i >= warm_rows;
    const int iteration = quiet ? static_cast<int>(i - warm_rows) + 1 : ++n;
    AddStampSteps(rec, exp, quiet ? "quiet_" : "", iteration, s, steps);
    // The hand-over's wait, split: seen in a mailbox spin (the spin's end
    // after the entry was published and before it was seen), from its
    // publication to the spin's end and from there to ServeDirect; or not
    // (the owner was elsewhere in its loop).
    const std::string pre = quiet ? "quiet_" : "";
    if (s[14] >= s[1] && s[14] <= s[13]) {
      AddStampSteps(rec, exp, pre, iteration, s,
                    {{"gpu_f1_spin_handover_to_cut", 1, 14}, {"gpu_f1_spin_cut_to_seen", 14, 13}});
      // The spin's last poll: from its start to the end of the spin, and
      // where in it the entry was published (from the poll's start;
      // negative: before it began).
      if (s[15] != 0 && s[15] <= s[14]) {
        AddStampSteps(rec, exp, pre, iteration, s,
                      {{"gpu_f1_spin_last_poll_to_cut", 15, 14}, {"gpu_f1_spin_last_poll_to_handover", 15, 1}});
      }
    } else {
      AddStampSteps(rec, exp, pre, iteration, s, {{"gpu_f1_loop_handover_to_seen", 1, 13}});
    }
  }
  if (n == 0) return absl::InternalError("no complete stamps: is the package a build with -D RK_ASK_STAMPS?");
  return absl::OkStatus();
}

absl::Status TimeRally(System& sys, Recorder& rec, const Options& o, const std::string& exp,
                       const std::string& prefix);

// In a measurement build of the program (`actorc build handlers/bench.cu
// -D RK_HOP_STAMPS`), the steps of each record of the rally's channels, from
// the stamps the device runtime took (rt_base.cuh, HopStamp): the send to its
// stores, the stores to the receiver's poll that took it, that poll, the take
// to the handler's call, the call; the gap between the receiver's poll
// before it and that poll; the owner loop's steps after the handler
// (HopCycleStep) and the record's way to the next record's stores
// (HopPathStep), in cycles. Nothing in other builds (the program has no
// rk_hop_stamps).
void HopStampSteps(System& sys, Recorder& rec, const std::string& exp) {
  constexpr size_t kRows = 4096, kStamps = 48, kCycles = 16, kCycleSteps = 13, kPath = 32;
  std::vector<uint64_t> st(kRows * kStamps);
  if (!rk::internal::SystemAccess::ReadDeviceGlobal(sys, "rk_hop_stamps", st.data(), st.size() * sizeof(uint64_t))
           .ok()) {
    return;
  }
  const std::vector<StampStep> steps = {{"stamp_a_send_to_stored", 0, 1},     {"stamp_b_stored_to_poll", 1, 2},
                        {"stamp_c_poll_that_took", 2, 3},     {"stamp_d_taken_to_handle", 3, 4},
                        {"stamp_e_handle", 4, 7},             {"stamp_send_to_handle", 0, 4},
                        {"stamp_gap_before_that_poll", 6, 2}, {"stamp_poll_before", 5, 6},
                        {"stamp_f_handled_to_serve_out", 7, 8}, {"stamp_g_serve_out_to_loop_end", 8, 9},
                        {"stamp_h_loop_end_to_top", 9, 10},     {"stamp_i_loop_top_to_next_serve", 10, 11}};
  int n = 0;
  for (size_t i = 0; i < kRows; ++i) {
    const uint64_t* s = &st[i * kStamps];
    if (std::any_of(s, s + 12, [](uint64_t v) { return v == 0; })) continue;
    AddStampSteps(rec, exp, "", ++n, s, steps);
  }
  std::printf("hop: %d records stamped\n", n);
  // The steps after a record's handler, in SM cycles (clock64 of the
  // receiver's thread), where all were stamped.
  const char* cyc[kCycleSteps] = {"handle_out", "poll_in",    "poll_out", "serve_out", "served",
                                  "sources",    "hand_overs", "loop_end", "request",   "idle",
                                  "fresh",      "loop_top",   "next_serve"};
  int m = 0;
  for (size_t i = 0; i < kRows; ++i) {
    const uint64_t* s = &st[i * kStamps + kCycles];
    if (std::any_of(s, s + kCycleSteps, [](uint64_t v) { return v == 0; })) continue;
    ++m;
    for (size_t k = 1; k < kCycleSteps; ++k) {
      rec.Add(exp, absl::StrCat("cycles_", k < 10 ? "0" : "", k, "_", cyc[k - 1], "_to_", cyc[k]), m, "cycles",
              static_cast<double>(static_cast<int64_t>(s[k] - s[k - 1])), "cycles");
    }
  }
  std::printf("hop: %d records with every step after the handler stamped\n", m);
  // A record's way through the receiving thread, and on to the stores of
  // the record its handler sent: the partner (index 1) replies with the
  // record at the same position of the other channel, the starter (index
  // 0) sends the next one. Cycles of each thread's SM.
  int p = 0;
  for (size_t k = 0; k + 1 < kRows / 2; ++k) {
    for (size_t receiver = 0; receiver < 2; ++receiver) {
      const uint64_t* x = &st[(receiver << 11 | k) * kStamps + kPath];
      const uint64_t* y = &st[(receiver == 1 ? k : (1u << 11 | (k + 1))) * kStamps + kPath];
      if (std::any_of(x, x + 5, [](uint64_t v) { return v == 0; }) || y[5] == 0 || y[6] == 0) continue;
      ++p;
      const std::pair<const char*, double> steps[] = {
          {"path_1_poll_that_took", static_cast<double>(static_cast<int64_t>(x[1] - x[0]))},
          {"path_2_taken_to_handle_one", static_cast<double>(static_cast<int64_t>(x[2] - x[1]))},
          {"path_3_handle_one_to_call", static_cast<double>(static_cast<int64_t>(x[3] - x[2]))},
          {"path_4_call_to_dispatch", static_cast<double>(static_cast<int64_t>(x[4] - x[3]))},
          {"path_5_dispatch_to_send", static_cast<double>(static_cast<int64_t>(y[5] - x[4]))},
          {"path_6_send_to_stored", static_cast<double>(static_cast<int64_t>(y[6] - y[5]))}};
      for (const auto& [name, cycles] : steps) rec.Add(exp, name, p, "cycles", cycles, "cycles");
    }
  }
  std::printf("hop: %d records followed from the poll to the next record's stores\n", p);
}

// One K2K hop, timed on the GPU with %globaltimer: half of each round trip of
// a rally between two actors on different workers. First, while no actor
// system holds the SMs, its floor in the same process: two blocks
// ping-ponging a fenced flag through global memory (raw_flag_one_way).
absl::Status K2kHop(Runtime& runtime, const Program& program, Recorder& rec, const Options& o) {
  const std::string exp = "k2k_hop";
  if (!o.skip_baselines) {
    RK_ASSIGN_OR_RETURN(std::unique_ptr<Baselines> base,
                        Baselines::Create(runtime.device().ordinal, runtime.device().capability));
    RK_ASSIGN_OR_RETURN(FlagPingPongResult floor, base->FlagPingPong(o.warmup, o.iterations));
    for (size_t i = 0; i < floor.one_way_us.size(); ++i) {
      rec.Add(exp, "raw_flag_one_way", static_cast<int>(i) + 1, "one_hop_us", floor.one_way_us[i], "microseconds");
    }
    std::printf("hop: raw flag ping-pong between SMs %u and %u, %.4f ns per SM cycle\n", floor.sm[0], floor.sm[1],
                floor.ns_per_cycle);
  }
  RK_ASSIGN_OR_RETURN(std::unique_ptr<System> sys, runtime.Start(program, BaseSystemOptions(o)));
  RK_RETURN_IF_ERROR(TimeRally(*sys, rec, o, exp, ""));
  RK_RETURN_IF_ERROR(sys->Stop().status());
  PrintOwnerCycles(*sys, exp);
  HopStampSteps(*sys, rec, exp);
  return absl::OkStatus();
}

// A rally between two Ralliers on different workers of `sys`: per round
// trip, half of it (the hop, `global_memory_mailbox`: from the starter's send
// call to its handler of the reply, as the flag floor is timed from its store
// to the reply seen), half of the starter's handler-to-handler time (the same
// round trip with the starter's own bookkeeping between two sends in it, as
// the hop was timed before), and its parts as the handlers saw them.
// `prefix` goes before each configuration's name.
absl::Status TimeRally(System& sys, Recorder& rec, const Options& o, const std::string& exp,
                       const std::string& prefix) {
  RK_ASSIGN_OR_RETURN(ActorId a, sys.Spawn("Rallier", prefix + "a"));
  RK_ASSIGN_OR_RETURN(ActorId b, sys.Spawn("Rallier", prefix + "b"));
  const int rounds = ((o.warmup + o.iterations) + 31) / 32 * 32;
  RK_RETURN_IF_ERROR(sys.Send(a, Rally{b, rounds}));
  // Per round trip: half of it (the hop), and its parts as the handlers saw
  // them (send call → the receiver's handler, each direction; the send call).
  std::vector<double> one_hop, cycle, arrive, send_call;
  bool done = false;
  while (!done) {
    RK_ASSIGN_OR_RETURN(std::optional<Message> m, sys.Receive(absl::Seconds(10)));
    if (!m.has_value()) return absl::DeadlineExceededError("the rally stopped");
    if (m->type == "RallySample") {
      RK_ASSIGN_OR_RETURN(RallySample s, m->As<RallySample>());
      for (int i = 0; i < 32; ++i) {
        one_hop.push_back(static_cast<double>(s.round_trip_ns[i]) / 2000.0);
        cycle.push_back(static_cast<double>(s.handler_to_handler_ns[i]) / 2000.0);
        arrive.push_back((static_cast<double>(s.arrive_here_ns[i]) + s.arrive_partner_ns[i]) / 2000.0);
        send_call.push_back(static_cast<double>(s.send_call_ns[i]) / 1000.0);
      }
    } else if (m->type == "RallyDone") {
      done = true;
    }
  }
  int it = 0;
  for (size_t i = static_cast<size_t>(o.warmup); i < one_hop.size() && it < o.iterations; ++i) {
    ++it;
    rec.Add(exp, prefix + "global_memory_mailbox", it, "one_hop_us", one_hop[i], "microseconds");
    rec.Add(exp, prefix + "handler_to_handler", it, "one_hop_us", cycle[i], "microseconds");
    rec.Add(exp, prefix + "send_call_to_handler", it, "one_hop_us", arrive[i], "microseconds");
    rec.Add(exp, prefix + "send_call", it, "latency_us", send_call[i], "microseconds");
  }
  return absl::OkStatus();
}

// What the device timeline costs (System::StartTrace): the K2K hop and the
// Ask with bench.cu built without tracing (`untraced_`), built with it while
// no trace runs (`trace_off_`), and with a trace running (`trace_on_`), one
// system after another in this process. The trace goes to a temporary file.
absl::Status TraceCost(Runtime& runtime, const Program& plain, Recorder& rec, const Options& o) {
  const std::string exp = "trace_overhead";
  CompileOptions co;
  co.trace = true;
  co.defines = o.trace_defines;
  absl::StatusOr<Program> traced = runtime.CompileFiles({std::string(RK_SOURCE_DIR) + "/handlers/bench.cu"}, co);
  if (!traced.ok()) traced = runtime.CompileFiles({"handlers/bench.cu"}, co);
  if (!traced.ok()) return traced.status();
  struct Config {
    const char* name;
    const Program* program;
    bool on;
  };
  const char* tmp = std::getenv("TMPDIR");
  const std::string path = absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/rkbench_trace_", ::getpid(), ".json");
  for (const Config& c : {Config{"untraced_", &plain, false}, Config{"trace_off_", &*traced, false},
                          Config{"trace_on_", &*traced, true}}) {
    RK_ASSIGN_OR_RETURN(std::unique_ptr<System> sys, runtime.Start(*c.program, BaseSystemOptions(o)));
    if (c.on) RK_RETURN_IF_ERROR(sys->StartTrace(path));
    RK_RETURN_IF_ERROR(TimeRally(*sys, rec, o, exp, c.name));
    RK_ASSIGN_OR_RETURN(ActorId echo, sys->Spawn("Echo", absl::StrCat(c.name, "echo")));
    uint64_t seq = 0;
    RK_RETURN_IF_ERROR(TimeEchoAsks(*sys, echo, rec, o, exp, &seq, absl::StrCat(c.name, "ask_roundtrip")));
    if (c.on) RK_RETURN_IF_ERROR(sys->StopTrace());
    RK_RETURN_IF_ERROR(sys->Stop().status());
  }
  std::remove(path.c_str());
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

int Usage(const std::string& problem) {
  std::fprintf(stderr,
               "rkbench: %s\n"
               "usage: rkbench --experiment NAME [--experiment NAME...] [options]\n"
               "  experiments: exp1 hop paths exp2 exp3 exp4 exp5 exp6 exp7 exp8 all | jit kernels (no GPU)\n"
               "               | ask_stamps (with --package of a build with -D RK_ASK_STAMPS)\n"
               "               | trace_cost (the hop and the Ask untraced, traced off and on)\n"
               "  --trial N --warmup N --iterations N --csv FILE --device N --track-running 0|1\n"
               "  --package FILE               run this actorc build of handlers/bench.cu (same message\n"
               "                               types) instead of compiling it: another runtime build's\n"
               "                               device code, for A/B comparisons\n"
               "  --trace-define NAME[=VAL]    trace_cost: one more define for its traced build\n"
               "  --idle-backoff-ns N --skip-baselines --jit-cold N --version\n"
               "  --host-cpu auto|none|N       the CPU exp1's timed host calls run on (auto: the one\n"
               "                               whose pair of rdtscp is cheapest)\n"
               "  --channel-arena-mib N        device memory for K2K channels (default 256; 0: none, every\n"
               "                               K2K send through the receiver's mailbox)\n"
               "  --workers N --threads-per-block N   worker blocks (0: all that fit) and their threads\n"
               "                               (128) in each system the experiments start\n"
               "  --pc-sampling FILE --pc-sampling-period N   CUPTI PC samples of every kernel, every\n"
               "                               2^N SM cycles (13), as CSV (bench/analysis/pcsamples.py)\n"
               "  --exp2-messages N            messages per burst (20000)\n"
               "  --exp3-weak-messages N       messages per actor, weak scaling (20000)\n"
               "  --exp3-strong-total N        messages in all, strong scaling (262144)\n"
               "  --exp3-work N --exp3-window N --exp3-max-actors N   LCG steps per message (64), self-sends\n"
               "                               in flight (8), largest actor count (1024)\n"
               "  --sustain-seconds N --exp4-peak-ms N --exp4-ask-interval-us N   (60, 1000, 100)\n"
               "  --exp5-rounds N --exp5-batch N   LCG steps per word of a compute op (128), ops per\n"
               "                               ops_per_s sample (100)\n"
               "  --exp6-actors N              actors with 16 KiB of state (256)\n"
               "  --exp7-actors N --exp7-phase-ms N --exp7-faults nan,hang   (32, 2000, nan,hang)\n"
               "  --exp8-rounds N              round trips per launch (10000)\n"
               "  --paths-messages N --paths-bursts N --paths-warmup-bursts N   messages per host or one-pair\n"
               "                               burst (50000), measured bursts (5), discarded bursts (1)\n"
               "  --paths-aggregate-messages N --paths-pairs N   messages per pair when every pair streams\n"
               "                               at once (10000), pairs (0: one actor per owner thread)\n"
               "  --paths-background-pairs N --paths-quiet-asks N --paths-power-seconds N   streaming pairs\n"
               "                               under the Asks (4), Asks after 1 s of quiet (3), seconds of\n"
               "                               power samples per state (3)\n"
               "  --paths-host-receivers N     Sink64s per host thread in the spread host -> GPU bursts\n"
               "                               (32; 1 skips them)\n"
               "  --paths-quiet-ms A,B,...     pauses before the quiet Asks, in ms (1000)\n"
               "  --paths-pair-sizes A,B,...   payload sizes of the one-pair K2K streams (64,4096; each of\n"
               "                               64, 256, 1024, 4096): one size alone for an owner-cycle build\n"
               "  --paths-block-pair-sizes A,...  the same to a BlockDrain, whose payload handlers are block\n"
               "                               handlers (4096; empty skips them)\n"
               "  --paths-parts A,B,...        parts of paths to run (idle,inject,aggregate): idle = power,\n"
               "                               the floors and the quiet Asks; inject = host -> GPU, one\n"
               "                               K2K pair, Asks with background; aggregate = every pair\n",
               problem.c_str());
  return 2;
}

int Main(int argc, char** argv) {
  Options o;
  const std::map<std::string, int*> ints = {
      {"--trial", &o.trial},
      {"--warmup", &o.warmup},
      {"--iterations", &o.iterations},
      {"--device", &o.device},
      {"--pc-sampling-period", &o.pc_sampling_period},
      {"--workers", &o.workers},
      {"--threads-per-block", &o.threads_per_block},
      {"--track-running", &o.track_running},
      {"--idle-backoff-ns", &o.idle_backoff_ns},
      {"--channel-arena-mib", &o.channel_arena_mib},
      {"--jit-cold", &o.jit_cold},
      {"--exp2-messages", &o.exp2_messages},
      {"--exp3-weak-messages", &o.exp3_weak_messages},
      {"--exp3-strong-total", &o.exp3_strong_total},
      {"--exp3-work", &o.exp3_work},
      {"--exp3-window", &o.exp3_window},
      {"--exp3-max-actors", &o.exp3_max_actors},
      {"--sustain-seconds", &o.sustain_seconds},
      {"--exp4-peak-ms", &o.exp4_peak_ms},
      {"--exp4-ask-interval-us", &o.exp4_ask_interval_us},
      {"--exp5-rounds", &o.exp5_rounds},
      {"--exp5-batch", &o.exp5_batch},
      {"--exp6-actors", &o.exp6_actors},
      {"--exp7-actors", &o.exp7_actors},
      {"--exp7-phase-ms", &o.exp7_phase_ms},
      {"--exp8-rounds", &o.exp8_rounds},
      {"--paths-messages", &o.paths_messages},
      {"--paths-bursts", &o.paths_bursts},
      {"--paths-warmup-bursts", &o.paths_warmup_bursts},
      {"--paths-aggregate-messages", &o.paths_aggregate_messages},
      {"--paths-pairs", &o.paths_pairs},
      {"--paths-background-pairs", &o.paths_background_pairs},
      {"--paths-host-receivers", &o.paths_host_receivers},
      {"--paths-quiet-asks", &o.paths_quiet_asks},
      {"--paths-power-seconds", &o.paths_power_seconds},
  };
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--skip-baselines") {
      o.skip_baselines = true;
      continue;
    }
    if (a == "--version") {
      // What a results directory records of the build that produced it.
      std::cout << "rkbench (RingKernel) commit " << RK_BENCH_GIT_COMMIT << " (" << RK_BENCH_GIT_STATE << "), built "
                << __DATE__ << " by g++ " << __VERSION__ << ", CUDA headers "
                << CUDA_VERSION / 1000 << "." << CUDA_VERSION % 1000 / 10 << ", NVRTC " << jit::NvrtcVersion()
                << "\n";
      std::exit(0);
    }
    if (i + 1 >= argc) return Usage(absl::StrCat("'", a, "' needs a value or is unknown"));
    const std::string v = argv[++i];
    if (a == "--experiment") {
      o.experiments.push_back(v);
    } else if (a == "--host-cpu") {
      o.host_cpu = v;
    } else if (a == "--csv") {
      o.csv = v;
    } else if (a == "--package") {
      o.package = v;
    } else if (a == "--trace-define") {
      o.trace_defines.push_back(v);
    } else if (a == "--paths-quiet-ms") {
      o.paths_quiet_ms = v;
    } else if (a == "--paths-parts") {
      o.paths_parts = v;
    } else if (a == "--paths-pair-sizes") {
      o.paths_pair_sizes = v;
    } else if (a == "--paths-block-pair-sizes") {
      o.paths_block_pair_sizes = v;
    } else if (a == "--pc-sampling") {
      o.pc_sampling = v;
    } else if (a == "--exp7-faults") {
      o.exp7_faults = v;
    } else if (auto it = ints.find(a); it != ints.end()) {
      if (!absl::SimpleAtoi(v, it->second)) return Usage(absl::StrCat("'", a, "' needs a number, not '", v, "'"));
    } else {
      return Usage(absl::StrCat("unknown argument '", a, "'"));
    }
  }
  if (o.warmup < 0 || o.iterations < 1) return Usage("--warmup must be ≥ 0 and --iterations ≥ 1");
  if (o.workers < 0) return Usage("--workers must be ≥ 0");
  if (o.experiments.empty()) o.experiments = {"exp1", "hop"};

  // The GPU experiments, in the order given, but exp8 and then exp7 last.
  const std::vector<std::string> known = {"exp1", "hop", "ask_stamps", "trace_cost", "paths", "exp2", "exp3",
                                          "exp4", "exp5", "exp6", "exp8", "exp7"};
  std::vector<std::string> gpu;
  bool jit = false, kernels = false;
  for (const std::string& e : o.experiments) {
    if (e == "jit") {
      jit = true;
    } else if (e == "kernels") {
      kernels = true;
    } else if (e == "all") {
      // ask_stamps needs a measurement build of the program, and
      // trace_cost builds its own: not in "all".
      for (const std::string& k : known) {
        if (k != "ask_stamps" && k != "trace_cost") gpu.push_back(k);
      }
    } else if (std::find(known.begin(), known.end(), e) != known.end()) {
      gpu.push_back(e);
    } else {
      return Usage(absl::StrCat("unknown experiment '", e, "'"));
    }
  }
  std::vector<std::string> order;
  for (const std::string& e : known) {
    if (std::find(gpu.begin(), gpu.end(), e) != gpu.end() && e != "exp8" && e != "exp7") order.push_back(e);
  }
  std::stable_sort(order.begin(), order.end(), [&](const std::string& x, const std::string& y) {
    return std::find(gpu.begin(), gpu.end(), x) < std::find(gpu.begin(), gpu.end(), y);
  });
  for (const char* last : {"exp8", "exp7"}) {
    if (std::find(gpu.begin(), gpu.end(), last) != gpu.end()) order.push_back(last);
  }

  Recorder rec(o.csv, o.trial);
  if (kernels) {
    if (absl::Status s = CheckKernels(); !s.ok()) {
      std::fprintf(stderr, "rkbench: kernels: %s\n", std::string(s.message()).c_str());
      return 1;
    }
  }
  if (jit) {
    if (absl::Status s = Jit(rec, o); !s.ok()) {
      std::fprintf(stderr, "rkbench: jit: %s\n", std::string(s.message()).c_str());
      return 1;
    }
  }
  if (order.empty()) {
    rec.PrintSummary();
    return 0;
  }
  absl::StatusOr<std::unique_ptr<Runtime>> runtime = Runtime::Create({.device = o.device});
  if (!runtime.ok()) {
    std::fprintf(stderr, "rkbench: %s\n", std::string(runtime.status().message()).c_str());
    return 2;
  }
  // A package carries the device runtime it was built with: comparing two
  // builds of the runtime in one process needs only their packages.
  absl::StatusOr<Program> program =
      o.package.empty() ? (*runtime)->CompileFiles({std::string(RK_SOURCE_DIR) + "/handlers/bench.cu"})
                        : (*runtime)->LoadPackage(o.package);
  if (!program.ok() && o.package.empty()) {
    // The sources may have moved with the binary (a GPU machine's copy).
    program = (*runtime)->CompileFiles({"handlers/bench.cu"});
  }
  if (!program.ok()) {
    std::fprintf(stderr, "rkbench: %s\n", std::string(program.status().message()).c_str());
    return 2;
  }
  std::unique_ptr<PcSampler> sampler;
  if (!o.pc_sampling.empty()) {
    absl::StatusOr<std::unique_ptr<PcSampler>> started = PcSampler::Start(o.device, o.pc_sampling_period);
    if (!started.ok()) {
      std::fprintf(stderr, "rkbench: %s\n", std::string(started.status().message()).c_str());
      return 2;
    }
    sampler = std::move(*started);
  }
  const Bench bench{**runtime, *program, rec, o};
  bool abandoned = false;  // a stuck kernel: the process must not touch the GPU again
  int rc = 0;
  for (const std::string& e : order) {
    const auto t0 = Clock::now();
    absl::Status s;
    if (e == "exp1") s = Exp1(**runtime, *program, rec, o);
    else if (e == "hop") s = K2kHop(**runtime, *program, rec, o);
    else if (e == "ask_stamps") s = AskStamps(**runtime, *program, rec, o);
    else if (e == "trace_cost") s = TraceCost(**runtime, *program, rec, o);
    else if (e == "paths") s = ExpPaths(bench);
    else if (e == "exp2") s = Exp2K2kThroughput(bench);
    else if (e == "exp3") s = Exp3Scaling(bench);
    else if (e == "exp4") s = Exp4Sustained(bench);
    else if (e == "exp5") s = Exp5Mixed(bench);
    else if (e == "exp6") s = Exp6Memory(bench);
    else if (e == "exp8") s = Exp8Hopper(bench);
    else if (e == "exp7") s = Exp7FaultIsolation(bench, &abandoned);
    std::printf("rkbench: %s took %.1f s\n", e.c_str(), Seconds(t0, Clock::now()));
    if (!s.ok()) {
      std::fprintf(stderr, "rkbench: %s: %s\n", e.c_str(), std::string(s.message()).c_str());
      rc = 1;
      break;
    }
  }
  if (sampler != nullptr && !abandoned) {
    absl::StatusOr<std::string> written = sampler->StopAndWrite(o.pc_sampling);
    std::printf("%s\n", written.ok() ? written->c_str() : std::string(written.status().message()).c_str());
    if (!written.ok()) rc = 1;
  }
  std::printf("device: %s (%s), trial %d\n", (*runtime)->device().name.c_str(), (*runtime)->device().arch().c_str(),
              o.trial);
  rec.PrintSummary();
  if (abandoned) {
    // A kernel that never returns holds the device: skip every destructor
    // (they would wait on it) and let the process's exit reclaim the GPU.
    rec.Flush();
    std::fflush(stdout);
    std::fflush(stderr);
    std::_Exit(rc);
  }
  return rc;
}

}  // namespace
}  // namespace rk::bench

int main(int argc, char** argv) { return rk::bench::Main(argc, argv); }
