// Copyright 2026 The RingKernel Authors.
//
// Experiment 7: fault isolation. --exp7-actors healthy Ticker actors and one
// more that will fault, each on its own worker block, keep themselves busy
// with self-sent Beats (a steady stream with no host in the loop). The host
// samples the healthy actors' handled counters (device counters in the
// control blocks, flushed every 100 µs) every 5 ms for three phases of
// --exp7-phase-ms each: before the fault, during (the first phase after
// it) and after (the second). The faults (--exp7-faults):
//   * nan  — Poison puts a NaN into the actor's state; its next Beat sees
//     it and calls ctx.fail. detection_ms: Poison sent → the failure report
//     reaches the host.
//   * hang — the actor's handler never returns. It holds its worker block
//     for good; CUDA cannot end a running kernel, so nothing recovers it:
//     Stop returns DeadlineExceeded naming it (stop_ms: how long that took)
//     and the process cannot use the GPU again. Run it last.
// Rows: healthy_msgs_per_s per 100 ms window (configuration
// fault=F;phase=P, iteration = window index); recovery_ms — the end of the
// last 20 ms window after the fault whose healthy rate was below 90 % of
// the mean before it (0: never below; the stuck actor itself is never
// recovered, so for hang this is the healthy actors' recovery only);
// corruption_events — healthy actors whose state, read back with an Ask
// after the phases and checked word by word against what their beat count
// implies, is wrong.
#include <algorithm>
#include <cstdio>
#include <functional>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "bench/exp_common.h"
#include "ringkernel/status_macros.h"

namespace rk::bench {
namespace {

constexpr int kWindow = 4;          // Beats in flight per actor
constexpr int kSampleMs = 5;        // sampling period
constexpr int kRecoveryWindowMs = 20;  // resolution of recovery_ms
constexpr int kRateWindowMs = 100;  // healthy_msgs_per_s window

struct Sample {
  Clock::time_point at;
  double t = 0;  // seconds since the fault (negative before it), once known
  uint64_t handled = 0;
};
struct Rate {
  double end;  // seconds since the fault
  double rate;
};

absl::StatusOr<uint64_t> HealthyHandled(System& sys, int healthy) {
  RK_ASSIGN_OR_RETURN(SystemStats st, sys.Stats(false));
  if (st.actors.size() < static_cast<size_t>(healthy)) return absl::InternalError("missing actors in the stats");
  uint64_t sum = 0;
  for (int i = 0; i < healthy; ++i) sum += st.actors[static_cast<size_t>(i)].handled;
  return sum;
}

// Samples until `until`, appending to `samples`. `poll` runs after each
// sample (it may take the failure report).
absl::Status SampleUntil(System& sys, int healthy, Clock::time_point until, std::vector<Sample>* samples,
                         const std::function<void()>& poll) {
  while (Clock::now() < until) {
    RK_ASSIGN_OR_RETURN(uint64_t handled, HealthyHandled(sys, healthy));
    Sample s;
    s.at = Clock::now();
    s.handled = handled;
    samples->push_back(s);
    poll();
    std::this_thread::sleep_for(std::chrono::milliseconds(kSampleMs));
  }
  return absl::OkStatus();
}

// The rates over consecutive windows of `window` seconds in [from, to):
// handled between the first and the last sample inside each window.
std::vector<Rate> WindowRates(const std::vector<Sample>& samples, double from, double to, double window) {
  std::vector<Rate> rates;
  size_t i = 0;
  for (double w = from; w + window <= to + 1e-9; w += window) {
    while (i < samples.size() && samples[i].t < w) ++i;
    size_t j = i;
    while (j + 1 < samples.size() && samples[j + 1].t < w + window) ++j;
    if (i < samples.size() && j > i && samples[j].t > samples[i].t) {
      rates.push_back({w + window, static_cast<double>(samples[j].handled - samples[i].handled) /
                                       (samples[j].t - samples[i].t)});
    }
  }
  return rates;
}

// Whether a healthy Ticker's state is what `beats` beats make it.
bool StateIsRight(const BeatState& s) {
  for (unsigned k = 0; k < 64; ++k) {
    const uint64_t times = s.beats / 64 + (k < s.beats % 64 ? 1 : 0);
    if (s.data[k] != static_cast<unsigned int>(times * (k + 1))) return false;
  }
  const float expect = static_cast<float>(std::min<uint64_t>(s.beats, uint64_t{1} << 24));
  return s.level == expect;
}

absl::Status RunFault(const Bench& b, const std::string& fault, bool* abandoned) {
  const std::string exp = "exp7_fault_isolation";
  const Options& o = b.o;
  SystemOptions so = BaseSystemOptions(o);
  so.flush_interval = absl::Microseconds(100);
  so.max_actors = static_cast<uint32_t>(o.exp7_actors + 1);
  RK_ASSIGN_OR_RETURN(std::unique_ptr<System> sys, b.runtime.Start(b.program, so));
  int healthy = o.exp7_actors;
  if (sys->workers() < static_cast<uint32_t>(healthy) + 1) {
    healthy = static_cast<int>(sys->workers()) - 1;
    std::printf("exp7: only %u workers: %d healthy actors (one per worker)\n", sys->workers(), healthy);
  }
  if (healthy < 1) return absl::FailedPreconditionError("exp7 needs at least two worker blocks");
  std::vector<ActorId> actors;
  for (int i = 0; i <= healthy; ++i) {
    RK_ASSIGN_OR_RETURN(ActorId id, sys->Spawn("Ticker", absl::StrCat("tick", i)));
    actors.push_back(id);
  }
  const ActorId faulty = actors.back();
  const std::string faulty_name = absl::StrCat("tick", healthy);
  for (ActorId a : actors) RK_RETURN_IF_ERROR(sys->Send(a, BeatStart{kWindow}));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // settle

  const double phase = o.exp7_phase_ms / 1000.0;
  std::vector<Sample> samples;
  Clock::time_point fault_at;
  bool injected = false;
  double detected = -1;  // seconds from the fault to the failure report
  auto poll = [&] {
    if (fault != "nan" || !injected || detected >= 0) return;
    for (const ActorFailure& f : sys->TakeFailures()) {
      if (f.actor == faulty) detected = Seconds(fault_at, Clock::now());
    }
  };
  const auto phase_len = std::chrono::milliseconds(o.exp7_phase_ms);
  RK_RETURN_IF_ERROR(SampleUntil(*sys, healthy, Clock::now() + phase_len, &samples, poll));
  fault_at = Clock::now();
  if (fault == "nan") {
    RK_RETURN_IF_ERROR(sys->Send(faulty, Poison{0}));
  } else {
    RK_RETURN_IF_ERROR(sys->Send(faulty, Hang{1}));
  }
  injected = true;
  RK_RETURN_IF_ERROR(SampleUntil(*sys, healthy, fault_at + 2 * phase_len, &samples, poll));
  for (Sample& s : samples) s.t = std::chrono::duration<double>(s.at - fault_at).count();

  const std::string config = absl::StrCat("fault=", fault);
  const double w = kRateWindowMs / 1000.0;
  const std::vector<Rate> before = WindowRates(samples, -phase, 0, w);
  const std::vector<Rate> during = WindowRates(samples, 0, phase, w);
  const std::vector<Rate> after = WindowRates(samples, phase, 2 * phase, w);
  if (before.empty()) return absl::InternalError("exp7: no samples before the fault");
  double base = 0;
  for (const Rate& r : before) base += r.rate;
  base /= static_cast<double>(before.size());
  for (const auto& [name, rates] : {std::pair{"before", &before}, {"during", &during}, {"after", &after}}) {
    for (size_t i = 0; i < rates->size(); ++i) {
      b.rec.Add(exp, absl::StrCat(config, ";phase=", name), static_cast<int>(i) + 1, "healthy_msgs_per_s",
                (*rates)[i].rate, "messages/second");
    }
  }
  double recovery_ms = 0;
  for (const Rate& r : WindowRates(samples, 0, 2 * phase, kRecoveryWindowMs / 1000.0)) {
    if (r.rate < 0.9 * base) recovery_ms = r.end * 1000.0;
  }
  b.rec.Add(exp, config, 1, "recovery_ms", recovery_ms, "milliseconds");
  b.rec.Add(exp, config, 1, "healthy_actors", healthy, "count");

  // The healthy actors' state, word by word.
  int corrupt = 0;
  uint64_t refused = 0;
  for (int i = 0; i < healthy; ++i) {
    RK_ASSIGN_OR_RETURN(BeatState s, sys->Ask<BeatState>(actors[static_cast<size_t>(i)], BeatCheck{0}, absl::Seconds(5)));
    if (!StateIsRight(s)) ++corrupt;
    refused += s.full;
  }
  b.rec.Add(exp, config, 1, "corruption_events", corrupt, "count");
  // Self-sends refused (kFull) shrink a stream; never expected with 4 in flight.
  b.rec.Add(exp, config, 1, "self_sends_refused", static_cast<double>(refused), "count");
  for (int i = 0; i < healthy; ++i) RK_RETURN_IF_ERROR(sys->Send(actors[static_cast<size_t>(i)], BeatStop{0}));

  if (fault == "nan") {
    if (detected < 0) {
      for (int k = 0; k < 100 && detected < 0; ++k) {
        poll();
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
    }
    if (detected < 0) return absl::InternalError("exp7: the poisoned actor never reported its failure");
    b.rec.Add(exp, config, 1, "detection_ms", detected * 1000.0, "milliseconds");
    RK_ASSIGN_OR_RETURN(StopReport r, sys->Stop(absl::Seconds(10)));
    // The failed actor's Beats in flight are dead-lettered; nothing else may be.
    for (const DeadLetter& d : r.dead_letters) {
      if (d.to != faulty) return absl::InternalError(absl::StrCat("exp7: unexpected dead letter for ", d.to_name));
    }
    if (!r.drained || r.unhandled != 0) return absl::InternalError(absl::StrCat("exp7: ", r.ToString()));
    std::printf("exp7 fault=nan: healthy %.4g msgs/s before; failure reported after %.2f ms; recovery %.0f ms; "
                "%d corrupted of %d\n", base, detected * 1000.0, recovery_ms, corrupt, healthy);
  } else {
    const auto t0 = Clock::now();
    absl::StatusOr<StopReport> r = sys->Stop(absl::Seconds(3));
    const double stop_ms = Seconds(t0, Clock::now()) * 1000.0;
    *abandoned = sys->phase() == KernelPhase::kAbandoned;
    if (r.ok()) return absl::InternalError("exp7: Stop succeeded with a handler that never returns");
    if (r.status().code() != absl::StatusCode::kDeadlineExceeded ||
        r.status().message().find(absl::StrCat("'", faulty_name, "'")) == std::string_view::npos) {
      return absl::InternalError(absl::StrCat("exp7: Stop did not name the stuck actor: ", r.status().message()));
    }
    b.rec.Add(exp, config, 1, "stop_ms", stop_ms, "milliseconds");
    std::printf("exp7 fault=hang: healthy %.4g msgs/s before; recovery %.0f ms; %d corrupted of %d; Stop returned "
                "after %.0f ms: %s\n", base, recovery_ms, corrupt, healthy, stop_ms,
                std::string(r.status().message()).c_str());
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status Exp7FaultIsolation(const Bench& b, bool* abandoned) {
  *abandoned = false;
  if (b.o.exp7_actors < 1 || b.o.exp7_phase_ms < 2 * kRateWindowMs) {
    return absl::InvalidArgumentError("exp7 needs --exp7-actors ≥ 1 and --exp7-phase-ms ≥ 200");
  }
  std::vector<std::string> faults = absl::StrSplit(b.o.exp7_faults, ',', absl::SkipEmpty());
  // A stuck handler leaves the GPU unusable: it goes last.
  std::stable_partition(faults.begin(), faults.end(), [](const std::string& f) { return f != "hang"; });
  for (const std::string& f : faults) {
    if (f != "nan" && f != "hang") return absl::InvalidArgumentError(absl::StrCat("unknown fault '", f, "'"));
  }
  for (const std::string& f : faults) RK_RETURN_IF_ERROR(RunFault(b, f, abandoned));
  return absl::OkStatus();
}

}  // namespace rk::bench
