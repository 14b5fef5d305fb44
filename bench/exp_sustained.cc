// Copyright 2026 The RingKernel Authors.
//
// Experiment 4: sustained load.
//
// First the peak host injection rate: the host sends Count messages to a
// Sink back to back (Send waits while the host→GPU ring is full) for
// --exp4-peak-ms, then asks the Sink for its count; peak = messages /
// (first send → the reply), i.e. what the GPU actually took in. This phase
// is also the warm-up (--warmup is not used here).
//
// Then --sustain-seconds at 90 % of that rate, paced by the host's steady
// clock, while a second host thread asks an Echo actor round trips every
// --exp4-ask-interval-us (the Asks share the loaded ring and ingress). Per
// 1-second window (iteration = window index):
//   window_msgs_per_s      Counts the Sink handled (device counters from the
//                          control blocks, ≤ the flush interval old) / window
//   window_offered_per_s   Counts the host sent / window
//   window_p50_us, window_p99_us, window_asks
//                          Ask round trips completed in the window (host clock)
//   window_mailbox_depth   the Sink's accepted-but-unhandled messages at the end
//   window_ring_backlog    host records not yet moved out of the host→GPU ring
//   window_ring_full       Sends that found the host→GPU ring full
// At the end every Count must have reached the Sink.
#include <atomic>
#include <cstdio>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "bench/exp_common.h"
#include "ringkernel/status_macros.h"
#include "runtime/cuda_driver.h"
#include "runtime/cuda_status.h"

namespace rk::bench {
namespace {

struct Snapshot {
  double t = 0;  // seconds since the sustained phase began
  uint64_t handled = 0, depth = 0, backlog = 0, ring_full = 0, offered = 0;
};

absl::StatusOr<Snapshot> Take(System& sys, double t, uint64_t offered) {
  RK_ASSIGN_OR_RETURN(SystemStats st, sys.Stats(false));
  const ActorStats* sink = st.Find("sink");
  if (sink == nullptr) return absl::InternalError("no sink in the stats");
  Snapshot s;
  s.t = t;
  s.handled = sink->handled;
  s.depth = sink->depth;
  const uint64_t moved = st.ingress_delivered + st.ingress_dead;
  s.backlog = st.host_sent > moved ? st.host_sent - moved : 0;
  s.ring_full = st.host_ring_full;
  s.offered = offered;
  return s;
}

}  // namespace

absl::Status Exp4Sustained(const Bench& b) {
  const std::string exp = "exp4_sustained";
  const std::string config = "rate=90pct";
  const Options& o = b.o;
  if (o.sustain_seconds < 1 || o.exp4_peak_ms < 10) {
    return absl::InvalidArgumentError("--sustain-seconds must be ≥ 1 and --exp4-peak-ms ≥ 10");
  }
  RK_ASSIGN_OR_RETURN(std::unique_ptr<System> sys, b.runtime.Start(b.program, BaseSystemOptions(o)));
  RK_ASSIGN_OR_RETURN(ActorId sink, sys->Spawn("Sink", "sink"));
  RK_ASSIGN_OR_RETURN(ActorId echo, sys->Spawn("Echo", "echo"));

  // Peak: as fast as the GPU takes them in.
  unsigned long long seq = 0;
  {
    const auto t0 = Clock::now();
    const auto until = t0 + std::chrono::milliseconds(o.exp4_peak_ms);
    const absl::Time deadline = absl::Now() + absl::Seconds(10) + absl::Milliseconds(o.exp4_peak_ms);
    while (Clock::now() < until) {
      for (int k = 0; k < 64; ++k) RK_RETURN_IF_ERROR(sys->Send(sink, Count{++seq}, deadline));
    }
    RK_ASSIGN_OR_RETURN(Counted c, sys->Ask<Counted>(sink, CountQuery{0}, absl::Seconds(10)));
    const double seconds = Seconds(t0, Clock::now());
    if (c.count != seq) return absl::InternalError(absl::StrCat("the sink got ", c.count, " of ", seq, " messages"));
    const double peak = static_cast<double>(seq) / seconds;
    b.rec.Add(exp, "phase=peak", 1, "peak_msgs_per_s", peak, "messages/second");
    std::printf("exp4: peak host injection %.4g msgs/s (delivered, %llu in %.3f s); sustaining %.4g for %d s\n", peak,
                seq, seconds, 0.9 * peak, o.sustain_seconds);
    const double rate = 0.9 * peak;

    // The Ask sampler, on its own thread (with the runtime's context).
    RK_ASSIGN_OR_RETURN(const cuda::DriverApi* cu, cuda::Driver());
    CUcontext ctx = nullptr;
    RK_CU_RETURN_IF_ERROR(cu->cuCtxGetCurrent(&ctx), "cuCtxGetCurrent");
    struct Sample {
      double t;
      double us;
    };
    std::vector<Sample> samples;
    samples.reserve(static_cast<size_t>(o.sustain_seconds) * 1000000 / std::max(1, o.exp4_ask_interval_us) + 1024);
    absl::Status ask_status;
    std::atomic<bool> stop{false};
    const auto start = Clock::now();
    std::thread asker([&] {
      if (CUresult r = cu->cuCtxSetCurrent(ctx); r != CUDA_SUCCESS) {
        ask_status = cuda::CuStatus(r, "cuCtxSetCurrent");
        return;
      }
      unsigned long long n = 0;
      while (!stop.load(std::memory_order_relaxed)) {
        const auto t0 = Clock::now();
        absl::StatusOr<Pong> p = sys->Ask<Pong>(echo, Ping{++n}, absl::Seconds(5));
        const auto t1 = Clock::now();
        if (!p.ok()) {
          ask_status = p.status();
          return;
        }
        if (p->seq != n) {
          ask_status = absl::InternalError("an Ask got another Ask's reply");
          return;
        }
        samples.push_back({Seconds(start, t1), std::chrono::duration<double, std::micro>(t1 - t0).count()});
        const auto next = t0 + std::chrono::microseconds(o.exp4_ask_interval_us);
        while (Clock::now() < next && !stop.load(std::memory_order_relaxed)) {
        }
      }
    });

    // The paced sender; a snapshot of the device counters at each second.
    std::vector<Snapshot> snaps;
    absl::Status send_status;
    uint64_t offered = 0;
    const unsigned long long seq0 = seq;
    absl::StatusOr<Snapshot> first = Take(*sys, 0, 0);
    if (!first.ok()) send_status = first.status();
    if (send_status.ok()) snaps.push_back(*first);
    for (int w = 1; send_status.ok() && w <= o.sustain_seconds; ++w) {
      const auto window_end = start + std::chrono::seconds(w);
      for (auto now = Clock::now(); now < window_end; now = Clock::now()) {
        const uint64_t due = static_cast<uint64_t>(Seconds(start, now) * rate);
        const absl::Time deadline = absl::Now() + absl::Seconds(5);
        for (int k = 0; k < 256 && offered < due && send_status.ok(); ++k, ++offered) {
          send_status = sys->Send(sink, Count{++seq}, deadline);
        }
        if (!send_status.ok()) break;
      }
      if (!send_status.ok()) break;
      absl::StatusOr<Snapshot> s = Take(*sys, Seconds(start, Clock::now()), offered);
      if (!s.ok()) {
        send_status = s.status();
        break;
      }
      snaps.push_back(*s);
    }
    stop = true;
    asker.join();
    RK_RETURN_IF_ERROR(send_status);
    RK_RETURN_IF_ERROR(ask_status);

    for (size_t w = 1; w < snaps.size(); ++w) {
      const Snapshot& a = snaps[w - 1];
      const Snapshot& s = snaps[w];
      const double dt = s.t - a.t;
      const int it = static_cast<int>(w);
      std::vector<double> lat;
      for (const Sample& x : samples) {
        if (x.t >= a.t && x.t < s.t) lat.push_back(x.us);
      }
      b.rec.Add(exp, config, it, "window_msgs_per_s", static_cast<double>(s.handled - a.handled) / dt,
                "messages/second");
      b.rec.Add(exp, config, it, "window_offered_per_s", static_cast<double>(s.offered - a.offered) / dt,
                "messages/second");
      b.rec.Add(exp, config, it, "window_asks", static_cast<double>(lat.size()), "count");
      if (!lat.empty()) {
        b.rec.Add(exp, config, it, "window_p50_us", Quantile(lat, 0.5), "microseconds");
        b.rec.Add(exp, config, it, "window_p99_us", Quantile(lat, 0.99), "microseconds");
      }
      b.rec.Add(exp, config, it, "window_mailbox_depth", static_cast<double>(s.depth), "messages");
      b.rec.Add(exp, config, it, "window_ring_backlog", static_cast<double>(s.backlog), "messages");
      b.rec.Add(exp, config, it, "window_ring_full", static_cast<double>(s.ring_full - a.ring_full), "count");
    }
    // Delivery: every Count arrived (FIFO: the reply comes after them all).
    RK_ASSIGN_OR_RETURN(Counted c2, sys->Ask<Counted>(sink, CountQuery{0}, absl::Seconds(30)));
    if (c2.count != seq) {
      return absl::InternalError(absl::StrCat("the sink got ", c2.count, " of ", seq, " messages"));
    }
    std::printf("exp4: sent %llu messages in %d s (%.4g/s), %zu Asks sampled\n", seq - seq0, o.sustain_seconds,
                static_cast<double>(seq - seq0) / o.sustain_seconds, samples.size());
  }
  return StopCleanly(*sys, exp);
}

}  // namespace rk::bench
