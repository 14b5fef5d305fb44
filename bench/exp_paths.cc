// Copyright 2026 The RingKernel Authors.
//
// The message paths of issue 8 ("Messages at the hardware floor"): every
// path the issue sets a target for, measured in one process together with
// the floor the latency targets are divided by. CSV experiment
// `message_paths`; each configuration says what was measured — the path,
// the payload in bytes, whether the receiver is another actor, how many
// pairs or host threads:
//
//   path=power;system=none
//       power_w: the board's power (NVML, every 100 ms for
//       --paths-power-seconds after 2 s of settling) with no actor system
//       running; the process holds its CUDA context, nothing else.
//   path=host_roundtrip_floor
//       latency_us: the CuPer-style persistent kernel's host round trip
//       (bench/baselines.h), host clock: the floor the Ask figures below are
//       compared with, measured in this process before any system starts.
//   path=power;system=one_idle_actor
//       power_w as above, with a started system holding one Echo actor and
//       no traffic; power_delta_w (one per trial) = the median of these
//       samples − the median of system=none.
//   path=quiet_roundtrip_floor;quiet_ms=Q
//       the floor's round trip after a Q ms sleep (Q from --paths-quiet-ms,
//       1000 by default), --paths-quiet-asks of them, each recorded: what a
//       pause costs without RingKernel.
//   path=send;quiet_ms=Q
//       latency_us: a Send to that Echo (returning) after Q ms of quiet: the
//       host's part of the first message after a pause.
//   path=ask;quiet_ms=Q
//       latency_us: an Ask to that Echo after Q ms in which nothing was sent,
//       each of --paths-quiet-asks recorded (no warm-up: the first Ask after
//       quiet is the measurement).
//   path=ask_gpu_quiet;quiet_ms=Q
//       latency_us: an Ask to that Echo after Q ms in which the same host
//       thread kept Asking a second Echo on another worker: the GPU side of
//       the first Echo was quiet, the host's code and data were not.
//   path=ask_after_spin;quiet_ms=Q
//       latency_us: an Ask to that Echo after a Q ms sleep and then 200 µs
//       of the thread spinning on the clock (a core awake and at speed,
//       with none of the Ask's code or data touched).
//   path=ask_neighbour_busy;quiet_ms=Q
//       latency_us: an Ask to that Echo after a Q ms sleep of this thread
//       while another host thread kept Asking the second Echo, up to just
//       before this Ask: the code, the system's shared structures and the
//       last-level cache warm from another core, this thread's own caches
//       and translations not (what a host thread of the runtime's own
//       could keep warm for a caller that slept).
//   path=ask_host_steps;quiet_ms=Q;step=S   (a build with RK_ASK_HOST_STAMPS)
//       step_ns: how long each path=ask;quiet_ms=Q Ask spent on the host
//       between step S-1 and step S (runtime/system_impl.h's AskStep: S is
//       entered, prefetched, claimed, sent, answer_prefetched, locked,
//       drained, returned, out); iteration i is the i-th quiet Ask.
//   path=host_to_gpu;payload=64;threads=T;receivers=T   (T = 1 and 4)
//       msgs_per_s: T host threads, started together, each Sends
//       --paths-messages 64-byte messages to its own Sink64 actor (retrying
//       when the ring is full: full_retries counts the retries) and then Asks
//       that Sink64 for its totals; the Ask's reply proves every message
//       arrived, in order, with the right bytes. Rate = T × messages / (host
//       time from the first thread's first Send to the last thread's reply).
//       One actor's handler takes each thread's every message here.
//   path=host_to_gpu;payload=64;threads=T;receivers=T×R   (T = 1 and 4)
//       the same with R = --paths-host-receivers Sink64s per thread (32 by
//       default; 1 skips these), in a system of their own, one per worker
//       while workers last: each thread sends its messages to its R sinks in
//       turn and Asks each of them for its totals at the end (inside the
//       timed span). The host path's capacity when no single actor's
//       handler bounds it.
//   path=k2k;payload=P;pairs=1;receiver=other;spread=one_pair   (P = 64, 4096)
//       msgs_per_s, bytes_per_s (= msgs_per_s × P), full_retries: a Streamer
//       actor sends --paths-messages messages to a Drain actor (K2K,
//       retrying kFull); timed on the GPU (%globaltimer) from the Streamer's
//       first send to the Drain's last receipt; the Drain checks the count,
//       FIFO order and the XOR of every payload word.
//   path=k2k_block_handler;payload=P;pairs=1;receiver=other;spread=one_pair
//       (P = --paths-block-pair-sizes, 4096 by default) the same Streamer
//       to a BlockDrain, which takes the payloads with block handlers: every
//       thread of its worker block folds a share, the leader counts and
//       checks as the Drain does. After the Asks, on the worker the
//       BlockDrain is spawned to last.
//   path=ask;background_pairs=0
//       latency_us: Asks to an Echo actor with no other traffic (the same
//       system as the next line, for comparison).
//   path=ask;background_pairs=B;background_payload=64
//       latency_us: the same Asks while B Pump actors each stream 64-byte
//       messages to their own Sink64 (K2K, another actor);
//       background_msgs_per_s (one per trial) = Σ over pumps of (messages
//       sent between a query just before the first timed Ask and one just
//       after the last) / (the GPU time between the two queries). Afterwards
//       every Sink64 is checked against its pump's final count, FIFO and
//       payload XOR.
//   path=k2k;payload=64;pairs=N;receiver=other;spread=all_workers
//       msgs_per_s (aggregate), bytes_per_s, full_retries, start_skew_us: N
//       Streamer → Drain pairs (N = --paths-pairs, or by default as many as
//       fill every worker's owner threads with one actor each: the whole
//       GPU), each pair's Streamer sending --paths-aggregate-messages to the
//       Drain of the next pair, all at once: every Stream command names one
//       start time on the GPU's clock, after the host has sent them all.
//       Rate = Σ messages / (latest Drain receipt − earliest Streamer
//       start), %globaltimer; every Drain checked as above. start_skew_us =
//       latest − earliest Streamer start.
//
// Throughput configurations record one row per burst (--paths-bursts, after
// --paths-warmup-bursts discarded); Ask latencies --warmup then
// --iterations rows. Power is skipped, with a message, without NVML.
#include <x86intrin.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <functional>
#include <iterator>
#include <limits>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "bench/baselines.h"
#include "bench/exp_common.h"
#include "bench/nvml_power.h"
#include "runtime/system_access.h"
#include "ringkernel/device/mailbox.h"
#include "ringkernel/status_macros.h"

namespace rk::bench {
namespace {

const char kExp[] = "message_paths";
constexpr absl::Duration kBurstTimeout = absl::Seconds(60);
constexpr absl::Duration kAskTimeout = absl::Seconds(10);
// Messages a Pump sends per tick before it lets its next tick (and the
// host's queries) through.
constexpr int kPumpBatch = 32;
// The background the Ask-under-load target asks for.
constexpr double kBackgroundTarget = 1e6;

P64 Payload64(uint64_t seq) {
  P64 p;
  p.seq = seq;
  for (size_t i = 0; i < sizeof(p.pad); ++i) p.pad[i] = static_cast<unsigned char>(i);
  return p;
}

double Median(std::vector<double> v) { return Quantile(v, 0.5); }

// Checks a Sink64's running totals against what was sent to it: messages
// with seq 0 … sent-1, in order.
absl::Status CheckSink(const SinkReport& r, uint64_t sent, const std::string& what) {
  if (r.received != sent || r.disorder != 0 || r.words != PayloadXor(64, sent)) {
    return absl::InternalError(absl::StrCat(what, ": the Sink64 got ", r.received, " of ", sent, " messages, ",
                                            r.disorder, " out of order, payload XOR ", r.words, " (expected ",
                                            PayloadXor(64, sent), ")"));
  }
  return absl::OkStatus();
}

// ---- The host's steps of an Ask (a build with RK_ASK_HOST_STAMPS). ----

// Records and prints the steps of the Asks since the last take that came
// after a pause of at least half of `quiet_ms` (the quiet Asks; the Pongs'
// drains in between are not Asks). Nothing in other builds.
void RecordAskHostSteps(const Bench& b, int quiet_ms) {
  static constexpr const char* kNames[] = {"called",  "entered", "prefetched", "claimed", "sent",
                                           "answer_prefetched", "locked", "drained", "returned", "out"};
  static_assert(std::size(kNames) == static_cast<size_t>(rk::AskStep::kCount), "a name per step");
  const rk::AskHostStepLog log = rk::internal::SystemAccess::TakeAskHostSteps();
  if (log.asks.empty() || log.ticks_per_us <= 0) return;
  const double ns_per_tick = 1000.0 / log.ticks_per_us;
  int iteration = 0;
  for (const rk::AskHostSteps& a : log.asks) {
    if (static_cast<double>(a.gap_ticks) * ns_per_tick < quiet_ms * 5e5) continue;
    ++iteration;
    std::string line = absl::StrCat("paths ask_host_steps quiet_ms=", quiet_ms, " #", iteration, " (ns):");
    uint64_t prev = 0;
    for (size_t k = 1; k < std::size(kNames); ++k) {
      if (a.ticks[k] == 0) continue;  // a step this Ask did not pass
      const double ns = static_cast<double>(a.ticks[k] - prev) * ns_per_tick;
      prev = a.ticks[k];
      b.rec.Add(kExp, absl::StrCat("path=ask_host_steps;quiet_ms=", quiet_ms, ";step=", kNames[k]), iteration,
                "step_ns", ns, "nanoseconds");
      absl::StrAppend(&line, " ", kNames[k], " ", static_cast<int64_t>(ns));
    }
    std::printf("%s\n", line.c_str());
  }
}

// ---- Power. ----

// Waits for the reading to reflect the current state (NVML's figure is an
// average over about a second on recent boards), then samples it.
absl::StatusOr<std::vector<double>> SettleAndSample(const PowerMeter& meter, const Options& o) {
  absl::SleepFor(absl::Seconds(2));
  return SamplePower(meter, absl::Seconds(std::max(1, o.paths_power_seconds)), absl::Milliseconds(100));
}

void RecordPower(const Bench& b, const std::string& config, const std::vector<double>& watts) {
  for (size_t i = 0; i < watts.size(); ++i) {
    b.rec.Add(kExp, config, static_cast<int>(i) + 1, "power_w", watts[i], "watts");
  }
}

// ---- Host → GPU injection. ----

// One host thread's receivers: the thread sends its messages to them in
// turn (message i to sinks[i % size]).
struct HostSender {
  std::vector<ActorId> sinks;
  std::vector<uint64_t> sent;  // per sink, over the system's life: its expected total
};

// The host threads of one configuration: the caller is thread 0, and the
// others live through all of the configuration's bursts, as an
// application's sending threads do. (A ring that one thread alone writes is
// that thread's, and its Sends stream their records — runtime/ring_owner.h;
// a fresh thread for every burst would find its rings taken by the last
// burst's threads, and shared.)
class SenderThreads {
 public:
  explicit SenderThreads(size_t n) {
    for (size_t t = 1; t < n; ++t) threads_.emplace_back([this, t] { Serve(t); });
  }
  ~SenderThreads() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      quit_ = true;
    }
    start_.notify_all();
    for (std::thread& th : threads_) th.join();
  }
  // Runs job(t) on every thread t and returns once all have finished.
  void Run(const std::function<void(size_t)>& job) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      job_ = &job;
      done_ = 0;
      ++generation_;
    }
    start_.notify_all();
    job(0);
    std::unique_lock<std::mutex> lock(mu_);
    finished_.wait(lock, [&] { return done_ == threads_.size(); });
    job_ = nullptr;
  }

 private:
  void Serve(size_t t) {
    uint64_t seen = 0;
    for (;;) {
      const std::function<void(size_t)>* job;
      {
        std::unique_lock<std::mutex> lock(mu_);
        start_.wait(lock, [&] { return quit_ || generation_ != seen; });
        if (quit_) return;
        seen = generation_;
        job = job_;
      }
      (*job)(t);
      {
        std::lock_guard<std::mutex> lock(mu_);
        ++done_;
      }
      finished_.notify_one();
    }
  }
  std::mutex mu_;
  std::condition_variable start_, finished_;
  const std::function<void(size_t)>* job_ = nullptr;
  uint64_t generation_ = 0;
  size_t done_ = 0;
  bool quit_ = false;
  std::vector<std::thread> threads_;
};

// What one burst measured: the aggregate rate (the Asks inside the timed
// span: every message handled), and the rate of the sending loops alone
// (from the first thread's start to the last thread's last Send): where the
// two differ, the GPU was still taking messages when the host had sent them.
struct BurstRates {
  double delivered;
  double sent;
};

// One burst: `senders.size()` threads, each sending `n` messages to its own
// Sink64s in turn and then Asking each for its totals.
absl::StatusOr<BurstRates> HostBurst(System& sys, SenderThreads& pool, std::vector<HostSender>& senders, int n,
                                     uint64_t* retries) {
  const size_t threads = senders.size();
  std::vector<absl::Status> status(threads);
  std::vector<Clock::time_point> start(threads), sent(threads), end(threads);
  std::vector<uint64_t> tries(threads, 0);
  std::atomic<size_t> ready{0};
  auto run = [&](size_t t) {
    HostSender& s = senders[t];
    const size_t receivers = s.sinks.size();
    P64 p = Payload64(0);
    // The threads start together: the aggregate is their rate at once, not
    // one after another.
    ready.fetch_add(1);
    while (ready.load() < threads) _mm_pause();
    const Clock::time_point deadline = Clock::now() + std::chrono::seconds(60);
    start[t] = Clock::now();
    std::vector<uint64_t> next = s.sent;
    size_t k = 0;
    for (int i = 0; i < n; ++i) {
      p.seq = next[k];
      for (;;) {
        absl::Status st = sys.Send(s.sinks[k], p);
        if (st.ok()) break;
        if (!absl::IsResourceExhausted(st)) {
          status[t] = st;
          return;
        }
        // The ring is full: the GPU has not taken the earlier messages yet.
        ++tries[t];
        if ((tries[t] & 4095) == 0 && Clock::now() > deadline) {
          status[t] = absl::DeadlineExceededError("the host → GPU ring stayed full for 60 s");
          return;
        }
        _mm_pause();
      }
      ++next[k];
      if (++k == receivers) k = 0;
    }
    sent[t] = Clock::now();
    std::vector<SinkReport> reports(receivers);
    for (size_t j = 0; j < receivers; ++j) {
      absl::StatusOr<SinkReport> r = sys.Ask<SinkReport>(s.sinks[j], SinkQuery{0}, kAskTimeout);
      if (!r.ok()) {
        status[t] = r.status();
        return;
      }
      reports[j] = *r;
    }
    end[t] = Clock::now();
    s.sent = next;
    for (size_t j = 0; j < receivers && status[t].ok(); ++j) {
      status[t] = CheckSink(reports[j], s.sent[j], absl::StrCat("host thread ", t, ", receiver ", j));
    }
  };
  pool.Run(run);
  for (const absl::Status& s : status) RK_RETURN_IF_ERROR(s);
  for (uint64_t r : tries) *retries += r;
  const Clock::time_point first = *std::min_element(start.begin(), start.end());
  const double seconds = Seconds(first, *std::max_element(end.begin(), end.end()));
  const double sending = Seconds(first, *std::max_element(sent.begin(), sent.end()));
  if (seconds <= 0 || sending <= 0) return absl::InternalError("a host burst took no time");
  const double messages = static_cast<double>(threads) * n;
  return BurstRates{messages / seconds, messages / sending};
}

// Bursts of one host configuration: `senders.size()` threads, each with its
// receivers (path=host_to_gpu;payload=64;threads=T;receivers=T×R).
absl::Status HostConfig(const Bench& b, System& sys, std::vector<HostSender>& senders, const Options& o) {
  size_t receivers = 0;
  for (const HostSender& s : senders) receivers += s.sinks.size();
  const std::string config =
      absl::StrCat("path=host_to_gpu;payload=64;threads=", senders.size(), ";receivers=", receivers);
  std::vector<double> rates, send_rates;
  SenderThreads pool(senders.size());
  // Records the workers passed over while not whole (host_holes): each is a
  // record that stayed incomplete for 100 us, and the ring is then read a
  // record per poll until it is whole.
  auto holes = [&sys]() -> absl::StatusOr<uint64_t> {
    RK_ASSIGN_OR_RETURN(SystemStats st, sys.Stats(true));
    return st.host_holes;
  };
  uint64_t holes_in_all = 0;
  for (int i = 0; i < o.paths_warmup_bursts + o.paths_bursts; ++i) {
    uint64_t retries = 0;
    RK_ASSIGN_OR_RETURN(const uint64_t holes_before, holes());
    RK_ASSIGN_OR_RETURN(const BurstRates rate, HostBurst(sys, pool, senders, o.paths_messages, &retries));
    RK_ASSIGN_OR_RETURN(const uint64_t holes_after, holes());
    if (i < o.paths_warmup_bursts) continue;
    const int it = i - o.paths_warmup_bursts + 1;
    rates.push_back(rate.delivered);
    send_rates.push_back(rate.sent);
    holes_in_all += holes_after - holes_before;
    b.rec.Add(kExp, config, it, "msgs_per_s", rate.delivered, "messages/second");
    b.rec.Add(kExp, config, it, "send_loop_msgs_per_s", rate.sent, "messages/second");
    b.rec.Add(kExp, config, it, "full_retries", static_cast<double>(retries), "count");
    b.rec.Add(kExp, config, it, "host_holes", static_cast<double>(holes_after - holes_before), "count");
  }
  std::printf(
      "paths %-48s %12.4g msgs/s (median of %d bursts; the sending loops alone %.4g msgs/s; %llu records "
      "stalled 100 us mid-write)\n",
      config.c_str(), Median(rates), o.paths_bursts, Median(send_rates), static_cast<unsigned long long>(holes_in_all));
  return absl::OkStatus();
}

// ---- K2K streams (Streamer → Drain). ----

struct StreamPair {
  ActorId streamer;
  ActorId drain;
};

struct StreamResult {
  double msgs_per_s = 0;
  uint64_t retries = 0;
  double start_skew_us = 0;
};

// What the actors of the first few pairs that did not report say about
// themselves (for a burst that did not finish).
std::string DescribeStuckPairs(System& sys, const std::vector<StreamPair>& pairs,
                               const std::vector<std::optional<Drained>>& drained,
                               const std::vector<std::optional<StreamDone>>& done) {
  absl::StatusOr<SystemStats> stats = sys.Stats();
  if (!stats.ok()) return absl::StrCat("no stats: ", stats.status().message());
  std::string out = absl::StrCat("outbound_full ", stats->outbound_full, ", received_by_host ",
                                 stats->received_by_host);
  const auto describe = [&](ActorId id) {
    for (const ActorStats& a : stats->actors) {
      if (a.id.value != id.value) continue;
      return absl::StrCat(a.name, " received ", a.received, " handled ", a.handled, " depth ", a.depth, " sent ",
                          a.sent, " send_full ", a.send_full, " dead_lettered ", a.dead_lettered);
    }
    return absl::StrCat("actor ", id.value, " not in the stats");
  };
  int shown = 0;
  for (size_t i = 0; i < pairs.size() && shown < 4; ++i) {
    if (drained[i].has_value() && done[i].has_value()) continue;
    ++shown;
    absl::StrAppend(&out, "; pair ", i, (done[i].has_value() ? "" : " (no StreamDone)"),
                    (drained[i].has_value() ? "" : " (no Drained)"), ": ", describe(pairs[i].streamer), " / ",
                    describe(pairs[i].drain));
  }
  return out;
}

// One burst of `n` messages of `size` bytes on every pair at once; checked,
// timed on the GPU from the earliest Streamer start to the latest Drain
// receipt. Several pairs start together: the host sends their Stream
// commands one after another, each naming the same start time on the GPU's
// clock, `*lead_ns` after the clock read before the first is sent; the lead
// is then set for the next burst from how long sending them took.
absl::StatusOr<StreamResult> StreamBurst(System& sys, const std::vector<StreamPair>& pairs, int size, int n,
                                         uint64_t* lead_ns) {
  // Acknowledged: a Drain counts from its Expect on.
  for (const StreamPair& p : pairs) {
    RK_RETURN_IF_ERROR(sys.Ask<Expected>(p.drain, Expect{n}, kAskTimeout).status());
  }
  uint64_t start_ns = 0;
  if (pairs.size() > 1) {
    RK_ASSIGN_OR_RETURN(ClockNow now, sys.Ask<ClockNow>(pairs[0].streamer, ClockQuery{0}, kAskTimeout));
    start_ns = now.ns + *lead_ns;
  }
  const absl::Time deadline = absl::Now() + kBurstTimeout;
  const Clock::time_point sending = Clock::now();
  for (const StreamPair& p : pairs) {
    RK_RETURN_IF_ERROR(sys.Send(p.streamer, Stream{p.drain, size, n, start_ns}, deadline));
  }
  const double send_ns = std::chrono::duration<double, std::nano>(Clock::now() - sending).count();
  *lead_ns = static_cast<uint64_t>(2 * send_ns) + 1000000;
  std::unordered_map<uint32_t, size_t> drain_of, streamer_of;
  for (size_t i = 0; i < pairs.size(); ++i) {
    drain_of[pairs[i].drain.value] = i;
    streamer_of[pairs[i].streamer.value] = i;
  }
  std::vector<std::optional<Drained>> drained(pairs.size());
  std::vector<std::optional<StreamDone>> done(pairs.size());
  size_t outstanding = 2 * pairs.size();
  while (outstanding > 0) {
    const absl::Duration left = deadline - absl::Now();
    RK_ASSIGN_OR_RETURN(std::optional<Message> m, sys.Receive(std::max(left, absl::ZeroDuration())));
    if (!m.has_value()) {
      return absl::DeadlineExceededError(absl::StrCat(
          "a burst of ", n, " messages of ", size, " bytes on ", pairs.size(), " pair(s) did not finish within ",
          absl::FormatDuration(kBurstTimeout), ": ", outstanding, " of ", 2 * pairs.size(),
          " reports missing; ", DescribeStuckPairs(sys, pairs, drained, done)));
    }
    if (m->type == "Drained" && drain_of.count(m->from.value) != 0) {
      auto& slot = drained[drain_of[m->from.value]];
      if (slot.has_value()) return absl::InternalError("a Drain reported twice");
      RK_ASSIGN_OR_RETURN(slot, m->As<Drained>());
      --outstanding;
    } else if (m->type == "StreamDone" && streamer_of.count(m->from.value) != 0) {
      auto& slot = done[streamer_of[m->from.value]];
      if (slot.has_value()) return absl::InternalError("a Streamer reported twice");
      RK_ASSIGN_OR_RETURN(slot, m->As<StreamDone>());
      --outstanding;
    }
  }
  StreamResult r;
  uint64_t first_start = std::numeric_limits<uint64_t>::max(), last_start = 0, last_end = 0;
  for (size_t i = 0; i < pairs.size(); ++i) {
    const Drained& d = *drained[i];
    const StreamDone& s = *done[i];
    if (s.count != n) {
      return absl::InternalError(absl::StrCat("pair ", i, ": the Streamer sent ", s.count, " of ", n,
                                              " messages (the Drain stopped taking them)"));
    }
    const uint64_t expected_words = PayloadXor(size, static_cast<uint64_t>(n));
    if (d.received != static_cast<uint64_t>(n) || d.bytes != static_cast<uint64_t>(n) * size ||
        d.words != expected_words || d.disorder != 0) {
      return absl::InternalError(absl::StrCat("pair ", i, ": the Drain received ", d.received, " of ", n, ", ",
                                              d.bytes, " bytes, ", d.disorder, " out of order, payload XOR ", d.words,
                                              " (expected ", expected_words, ")"));
    }
    first_start = std::min<uint64_t>(first_start, s.start_ns);
    last_start = std::max<uint64_t>(last_start, s.start_ns);
    last_end = std::max<uint64_t>(last_end, d.last_ns);
    r.retries += s.retries;
  }
  if (last_end <= first_start) return absl::InternalError("a K2K burst took no time on %globaltimer");
  r.msgs_per_s = static_cast<double>(pairs.size()) * n / (static_cast<double>(last_end - first_start) * 1e-9);
  r.start_skew_us = static_cast<double>(last_start - first_start) * 1e-3;
  return r;
}

// `spread` labels the aggregate (every worker's pair at once) apart from a
// single pair, whatever the pair count.
absl::Status StreamConfig(const Bench& b, System& sys, const std::vector<StreamPair>& pairs, int size, int n,
                          const std::string& spread, const std::string& path = "k2k") {
  const std::string config =
      absl::StrCat("path=", path, ";payload=", size, ";pairs=", pairs.size(), ";receiver=other;spread=", spread);
  std::vector<double> rates;
  // The first burst's lead: generous (2 ms and 5 µs a pair).
  uint64_t lead_ns = 2000000 + 5000 * pairs.size();
  for (int i = 0; i < b.o.paths_warmup_bursts + b.o.paths_bursts; ++i) {
    RK_ASSIGN_OR_RETURN(StreamResult r, StreamBurst(sys, pairs, size, n, &lead_ns));
    if (i < b.o.paths_warmup_bursts) continue;
    const int it = i - b.o.paths_warmup_bursts + 1;
    rates.push_back(r.msgs_per_s);
    b.rec.Add(kExp, config, it, "msgs_per_s", r.msgs_per_s, "messages/second");
    b.rec.Add(kExp, config, it, "bytes_per_s", r.msgs_per_s * size, "bytes/second");
    b.rec.Add(kExp, config, it, "full_retries", static_cast<double>(r.retries), "count");
    if (pairs.size() > 1) b.rec.Add(kExp, config, it, "start_skew_us", r.start_skew_us, "microseconds");
  }
  std::printf("paths %-48s %12.4g msgs/s (median of %d bursts)\n", config.c_str(), Median(rates), b.o.paths_bursts);
  return absl::OkStatus();
}

// ---- Asks. ----

// warmup + iterations Asks to `echo`, the measured ones recorded.
absl::Status TimeAsks(const Bench& b, System& sys, ActorId echo, const std::string& config, uint64_t* seq) {
  std::vector<double> us;
  for (int i = 0; i < b.o.warmup + b.o.iterations; ++i) {
    const uint64_t want = ++*seq;
    const Clock::time_point t0 = Clock::now();
    absl::StatusOr<Pong> p = sys.Ask<Pong>(echo, Ping{want}, kAskTimeout);
    const Clock::time_point t1 = Clock::now();
    if (!p.ok()) return p.status();
    if (p->seq != want) return absl::InternalError("an Echo answered another Ping");
    if (i < b.o.warmup) continue;
    us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
    b.rec.Add(kExp, config, static_cast<int>(us.size()), "latency_us", us.back(), "microseconds");
  }
  std::vector<double> sorted = us;
  std::printf("paths %-48s p50 %8.3f us, p99 %8.3f us\n", config.c_str(), Quantile(sorted, 0.5),
              Quantile(sorted, 0.99));
  return absl::OkStatus();
}

struct BackgroundPair {
  ActorId pump;
  ActorId sink;
};

absl::StatusOr<std::vector<PumpState>> QueryPumps(System& sys, const std::vector<BackgroundPair>& pairs) {
  std::vector<PumpState> states;
  for (const BackgroundPair& p : pairs) {
    RK_ASSIGN_OR_RETURN(PumpState s, sys.Ask<PumpState>(p.pump, PumpQuery{0}, kAskTimeout));
    if (s.running != 1 || s.lost != 0) {
      return absl::InternalError(absl::StrCat("a background Pump stopped by itself (lost ", s.lost, ")"));
    }
    states.push_back(s);
  }
  return states;
}

// Asks timed while the background pairs stream; their rate over the Asks
// from the pumps' own counters, their deliveries checked afterwards.
absl::Status AsksUnderBackground(const Bench& b, System& sys, ActorId echo, const std::vector<BackgroundPair>& pairs,
                                 uint64_t* seq) {
  const std::string config =
      absl::StrCat("path=ask;background_pairs=", pairs.size(), ";background_payload=64");
  for (const BackgroundPair& p : pairs) {
    RK_ASSIGN_OR_RETURN(PumpState s, sys.Ask<PumpState>(p.pump, PumpStart{p.sink, kPumpBatch}, kAskTimeout));
    if (s.running != 1) return absl::InternalError("a background Pump could not send itself its first tick");
  }
  // Let the streams fill their mailboxes before anything is timed.
  absl::SleepFor(absl::Milliseconds(20));
  RK_ASSIGN_OR_RETURN(std::vector<PumpState> before, QueryPumps(sys, pairs));
  RK_RETURN_IF_ERROR(TimeAsks(b, sys, echo, config, seq));
  RK_ASSIGN_OR_RETURN(std::vector<PumpState> after, QueryPumps(sys, pairs));
  double rate = 0;
  for (size_t i = 0; i < pairs.size(); ++i) {
    if (after[i].at_ns <= before[i].at_ns) return absl::InternalError("a Pump's clock did not advance");
    rate += static_cast<double>(after[i].sent - before[i].sent) /
            (static_cast<double>(after[i].at_ns - before[i].at_ns) * 1e-9);
  }
  b.rec.Add(kExp, config, 1, "background_msgs_per_s", rate, "messages/second");
  std::printf("paths %-48s background %.4g msgs/s%s\n", config.c_str(), rate,
              rate < kBackgroundTarget ? " — BELOW the 1e6 msg/s the Ask-under-load target needs" : "");

  // Stop, then check every delivery (the Sink64 may still be taking the
  // last messages: poll until its count reaches the pump's).
  for (const BackgroundPair& p : pairs) {
    RK_ASSIGN_OR_RETURN(PumpState last, sys.Ask<PumpState>(p.pump, PumpStop{0}, kAskTimeout));
    if (last.running != 1 || last.lost != 0) return absl::InternalError("a background Pump stopped by itself");
    const absl::Time deadline = absl::Now() + kAskTimeout;
    for (;;) {
      RK_ASSIGN_OR_RETURN(SinkReport r, sys.Ask<SinkReport>(p.sink, SinkQuery{0}, kAskTimeout));
      if (r.received < last.sent && absl::Now() < deadline) continue;
      RK_RETURN_IF_ERROR(CheckSink(r, last.sent, "background"));
      break;
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ExpPaths(const Bench& b) {
  const Options& o = b.o;
  if (o.paths_messages < 2 || o.paths_bursts < 1 || o.paths_warmup_bursts < 0 || o.paths_aggregate_messages < 2 ||
      o.paths_pairs < 0 || o.paths_background_pairs < 1 || o.paths_quiet_asks < 1) {
    return absl::InvalidArgumentError(
        "--paths-messages and --paths-aggregate-messages must be at least 2, --paths-bursts, "
        "--paths-background-pairs and --paths-quiet-asks at least 1, the others at least 0");
  }
  // The pauses before the quiet Asks (and the floor's quiet round trips).
  std::vector<int> quiet;
  for (absl::string_view q : absl::StrSplit(o.paths_quiet_ms, ',')) {
    int ms = 0;
    if (!absl::SimpleAtoi(q, &ms) || ms < 0) {
      return absl::InvalidArgumentError(absl::StrCat("--paths-quiet-ms: '", q, "' is not a number of milliseconds"));
    }
    quiet.push_back(ms);
  }
  // The one-pair streams' payload sizes (the Streamer sends these four).
  const auto sizes = [](const std::string& flag, const std::string& list) -> absl::StatusOr<std::vector<int>> {
    std::vector<int> out;
    for (absl::string_view z : absl::StrSplit(list, ',', absl::SkipEmpty())) {
      int size = 0;
      if (!absl::SimpleAtoi(z, &size) || (size != 64 && size != 256 && size != 1024 && size != 4096)) {
        return absl::InvalidArgumentError(
            absl::StrCat(flag, ": '", z, "' is not one of the Streamer's sizes (64, 256, 1024, 4096)"));
      }
      out.push_back(size);
    }
    return out;
  };
  RK_ASSIGN_OR_RETURN(const std::vector<int> pair_sizes, sizes("--paths-pair-sizes", o.paths_pair_sizes));
  RK_ASSIGN_OR_RETURN(const std::vector<int> block_pair_sizes,
                      sizes("--paths-block-pair-sizes", o.paths_block_pair_sizes));
  bool idle = false, inject = false, aggregate = false;
  for (absl::string_view part : absl::StrSplit(o.paths_parts, ',')) {
    if (part == "idle") {
      idle = true;
    } else if (part == "inject") {
      inject = true;
    } else if (part == "aggregate") {
      aggregate = true;
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("--paths-parts: '", part, "' is not a part of paths (idle, inject, aggregate)"));
    }
  }
  const DeviceInfo& dev = b.runtime.device();

  // 1. Power with no system running.
  std::unique_ptr<PowerMeter> meter;
  std::vector<double> idle_watts;
  if (!idle) {
    // Not measured.
  } else if (absl::StatusOr<std::unique_ptr<PowerMeter>> m = PowerMeter::Open(dev.ordinal); m.ok()) {
    meter = *std::move(m);
    std::printf("paths: NVML power of device %d found %s\n", dev.ordinal, meter->found().c_str());
    if (absl::StatusOr<std::vector<double>> w = SettleAndSample(*meter, o); w.ok()) {
      idle_watts = *std::move(w);
      RecordPower(b, "path=power;system=none", idle_watts);
    } else {
      // Power is one figure among many: a reading that fails costs only it.
      std::printf("paths: power skipped: %s\n", std::string(w.status().message()).c_str());
      meter.reset();
    }
  } else {
    std::printf("paths: power skipped: %s\n", std::string(m.status().message()).c_str());
  }

  // 2. The host round-trip floor, in this process, before any system holds
  // the SMs.
  if (idle && !o.skip_baselines) {
    RK_ASSIGN_OR_RETURN(std::unique_ptr<Baselines> base, Baselines::Create(dev.ordinal, dev.capability));
    RK_RETURN_IF_ERROR(base->StartPersistent());
    std::vector<double> floor;
    for (int i = 0; i < o.warmup + o.iterations; ++i) {
      const Clock::time_point t0 = Clock::now();
      RK_RETURN_IF_ERROR(base->PersistentCommand());
      const Clock::time_point t1 = Clock::now();
      if (i < o.warmup) continue;
      floor.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
      b.rec.Add(kExp, "path=host_roundtrip_floor", static_cast<int>(floor.size()), "latency_us", floor.back(),
                "microseconds");
    }
    std::printf("paths %-48s p50 %8.3f us\n", "path=host_roundtrip_floor", Median(floor));
    // The same round trip after each pause: what the host, the bus and the
    // GPU cost the first message after a pause, with a kernel that polls
    // without ever sleeping (the Ask after quiet below is compared with it).
    for (const int quiet_ms : quiet) {
      const std::string quiet_config = absl::StrCat("path=quiet_roundtrip_floor;quiet_ms=", quiet_ms);
      for (int i = 0; i < o.paths_quiet_asks; ++i) {
        absl::SleepFor(absl::Milliseconds(quiet_ms));
        const Clock::time_point t0 = Clock::now();
        RK_RETURN_IF_ERROR(base->PersistentCommand());
        const Clock::time_point t1 = Clock::now();
        const double us = std::chrono::duration<double, std::micro>(t1 - t0).count();
        b.rec.Add(kExp, quiet_config, i + 1, "latency_us", us, "microseconds");
        std::printf("paths %-48s %8.3f us\n", quiet_config.c_str(), us);
      }
    }
    RK_RETURN_IF_ERROR(base->StopPersistent());
  }

  uint64_t seq = 0;
  // 3. One idle actor: its power, then Asks after pauses.
  if (idle) {
    RK_ASSIGN_OR_RETURN(std::unique_ptr<System> sys, b.runtime.Start(b.program, BaseSystemOptions(o)));
    RK_ASSIGN_OR_RETURN(ActorId echo, sys->Spawn("Echo", "echo"));
    // The system is up and the actor answers (not timed).
    RK_RETURN_IF_ERROR(sys->Ask<Pong>(echo, Ping{++seq}, kAskTimeout).status());
    if (meter != nullptr) {
      if (absl::StatusOr<std::vector<double>> watts = SettleAndSample(*meter, o); !watts.ok()) {
        std::printf("paths: power with one idle actor skipped: %s\n", std::string(watts.status().message()).c_str());
      } else {
        const std::string config = "path=power;system=one_idle_actor";
        RecordPower(b, config, *watts);
        const double delta = Median(*watts) - Median(idle_watts);
        b.rec.Add(kExp, config, 1, "power_delta_w", delta, "watts");
        std::printf("paths: power %.1f W without a system, %.1f W with one idle actor (%+.1f W)\n",
                    Median(idle_watts), Median(*watts), delta);
      }
    }
    // One Ask of the Echo, timed and recorded as `iteration` of `config`.
    auto time_ask = [&](const std::string& config, int iteration) -> absl::Status {
      RK_ASSIGN_OR_RETURN(const double us, TimeEchoAsk(*sys, echo, &seq, kAskTimeout));
      b.rec.Add(kExp, config, iteration, "latency_us", us, "microseconds");
      std::printf("paths %-48s %8.3f us\n", config.c_str(), us);
      return absl::OkStatus();
    };
    for (const int quiet_ms : quiet) {
      // The host's share: a Send (to the same Echo, its Pong then drained)
      // timed alone after the same pause.
      const std::string send_config = absl::StrCat("path=send;quiet_ms=", quiet_ms);
      for (int i = 0; i < o.paths_quiet_asks; ++i) {
        absl::SleepFor(absl::Milliseconds(quiet_ms));
        const uint64_t want = ++seq;
        const Clock::time_point t0 = Clock::now();
        RK_RETURN_IF_ERROR(sys->Send(echo, Ping{want}));
        const Clock::time_point t1 = Clock::now();
        RK_ASSIGN_OR_RETURN(std::optional<Message> pong, sys->Receive(kAskTimeout));
        if (!pong.has_value()) return absl::InternalError("the Echo did not answer a Send");
        const double us = std::chrono::duration<double, std::micro>(t1 - t0).count();
        b.rec.Add(kExp, send_config, i + 1, "latency_us", us, "microseconds");
        std::printf("paths %-48s %8.3f us\n", send_config.c_str(), us);
      }
      const std::string config = absl::StrCat("path=ask;quiet_ms=", quiet_ms);
      (void)rk::internal::SystemAccess::TakeAskHostSteps();
      for (int i = 0; i < o.paths_quiet_asks; ++i) {
        absl::SleepFor(absl::Milliseconds(quiet_ms));
        RK_RETURN_IF_ERROR(time_ask(config, i + 1));
      }
      RecordAskHostSteps(b, quiet_ms);
    }
    // What the pause makes slow, taken apart: the GPU side quiet while the
    // host keeps busy with the same calls, and the host awake (spinning) but
    // its Ask path untouched.
    // (Spawn puts it on the least loaded worker: not the first Echo's.)
    RK_ASSIGN_OR_RETURN(ActorId other, sys->Spawn("Echo", "echo_busy"));
    for (const int quiet_ms : quiet) {
      const std::string config = absl::StrCat("path=ask_gpu_quiet;quiet_ms=", quiet_ms);
      for (int i = 0; i < o.paths_quiet_asks; ++i) {
        for (const absl::Time until = absl::Now() + absl::Milliseconds(quiet_ms); absl::Now() < until;) {
          const uint64_t busy = ++seq;
          absl::StatusOr<Pong> p = sys->Ask<Pong>(other, Ping{busy}, kAskTimeout);
          if (!p.ok()) return p.status();
        }
        RK_RETURN_IF_ERROR(time_ask(config, i + 1));
      }
    }
    for (const int quiet_ms : quiet) {
      const std::string config = absl::StrCat("path=ask_after_spin;quiet_ms=", quiet_ms);
      for (int i = 0; i < o.paths_quiet_asks; ++i) {
        absl::SleepFor(absl::Milliseconds(quiet_ms));
        for (const Clock::time_point until = Clock::now() + std::chrono::microseconds(200); Clock::now() < until;) {
        }
        RK_RETURN_IF_ERROR(time_ask(config, i + 1));
      }
    }
    // The helper Asks the second Echo back to back until told to pause;
    // the timed thread waits for the pause to be taken (the helper's last
    // Ask has returned) and Asks at once, then lets it go on.
    {
      std::atomic<int> phase{0};  // 0 Ask, 1 pause asked, 2 paused, 3 end
      absl::Status helper_status = absl::OkStatus();
      std::thread helper([&] {
        uint64_t busy = uint64_t{1} << 40;  // its own seq: the timed thread owns `seq`
        for (;;) {
          const int p = phase.load(std::memory_order_acquire);
          if (p == 3) return;
          if (p == 1) {
            phase.store(2, std::memory_order_release);
            continue;
          }
          if (p == 2 || !helper_status.ok()) continue;
          absl::StatusOr<Pong> r = sys->Ask<Pong>(other, Ping{++busy}, kAskTimeout);
          if (!r.ok()) helper_status = r.status();
        }
      });
      absl::Status timed = absl::OkStatus();
      for (const int quiet_ms : quiet) {
        const std::string config = absl::StrCat("path=ask_neighbour_busy;quiet_ms=", quiet_ms);
        for (int i = 0; i < o.paths_quiet_asks && timed.ok(); ++i) {
          absl::SleepFor(absl::Milliseconds(quiet_ms));
          phase.store(1, std::memory_order_release);
          while (phase.load(std::memory_order_acquire) != 2) {
          }
          timed = time_ask(config, i + 1);
          phase.store(0, std::memory_order_release);
        }
      }
      phase.store(3, std::memory_order_release);
      helper.join();
      RK_RETURN_IF_ERROR(timed);
      RK_RETURN_IF_ERROR(helper_status);
    }
    RK_RETURN_IF_ERROR(StopCleanly(*sys, "paths (one idle actor)"));
  }

  // 4. Host injection, one K2K pair, Asks with and without background.
  if (inject) {
    SystemOptions so = BaseSystemOptions(o);
    // A host message must never be dead-lettered for finding a mailbox
    // full: the injection figures count only delivered messages.
    so.ingress_full_timeout = absl::Seconds(5);
    // The BlockDrain's per-warp folds (8 bytes a warp).
    so.scratch_bytes = 8 * ((so.threads_per_block + 31) / 32);
    RK_ASSIGN_OR_RETURN(std::unique_ptr<System> sys, b.runtime.Start(b.program, so));
    std::vector<HostSender> senders;
    for (int t = 0; t < 4; ++t) {
      RK_ASSIGN_OR_RETURN(ActorId sink, sys->Spawn("Sink64", absl::StrCat("sink", t)));
      senders.push_back(HostSender{{sink}, {0}});
    }
    for (size_t threads : {size_t{1}, size_t{4}}) {
      std::vector<HostSender> mine(senders.begin(), senders.begin() + static_cast<long>(threads));
      RK_RETURN_IF_ERROR(HostConfig(b, *sys, mine, o));
      std::copy(mine.begin(), mine.end(), senders.begin());
    }

    // One Streamer and one Drain for both sizes, on the workers they have
    // had in every committed run (a pair of its own per size, on other
    // workers, measured the 4 KiB stream 15 % lower: bench/NOTES.md,
    // session 13).
    RK_ASSIGN_OR_RETURN(ActorId streamer, sys->Spawn("Streamer", "streamer"));
    RK_ASSIGN_OR_RETURN(ActorId drain, sys->Spawn("Drain", "drain"));
    for (int size : pair_sizes) {
      RK_RETURN_IF_ERROR(StreamConfig(b, *sys, {StreamPair{streamer, drain}}, size, o.paths_messages, "one_pair"));
    }

    RK_ASSIGN_OR_RETURN(ActorId echo, sys->Spawn("Echo", "echo"));
    std::vector<BackgroundPair> background;
    for (int i = 0; i < o.paths_background_pairs; ++i) {
      RK_ASSIGN_OR_RETURN(ActorId pump, sys->Spawn("Pump", absl::StrCat("pump", i)));
      RK_ASSIGN_OR_RETURN(ActorId sink, sys->Spawn("Sink64", absl::StrCat("background_sink", i)));
      background.push_back(BackgroundPair{pump, sink});
    }
    RK_RETURN_IF_ERROR(TimeAsks(b, *sys, echo, "path=ask;background_pairs=0", &seq));
    RK_RETURN_IF_ERROR(AsksUnderBackground(b, *sys, echo, background, &seq));

    // The same Streamer to a BlockDrain, whose payload handlers are block
    // handlers (spawned last, so the actors above keep their workers).
    if (!block_pair_sizes.empty()) {
      RK_ASSIGN_OR_RETURN(ActorId block_drain, sys->Spawn("BlockDrain", "block_drain"));
      for (int size : block_pair_sizes) {
        RK_RETURN_IF_ERROR(StreamConfig(b, *sys, {StreamPair{streamer, block_drain}}, size, o.paths_messages,
                                        "one_pair", "k2k_block_handler"));
      }
    }
    RK_RETURN_IF_ERROR(StopCleanly(*sys, "paths"));
  }

  // 4b. Host injection spread over many receivers, in a system of its own
  // (its actors would move the placement of the ones above): what the host
  // path carries when no single actor's handler is the limit.
  if (inject && o.paths_host_receivers > 1) {
    const uint32_t per_thread = static_cast<uint32_t>(o.paths_host_receivers);
    SystemOptions so = BaseSystemOptions(o);
    so.ingress_full_timeout = absl::Seconds(5);
    so.max_actors = std::max(so.max_actors, 4 * per_thread + 8);
    RK_ASSIGN_OR_RETURN(std::unique_ptr<System> sys, b.runtime.Start(b.program, so));
    std::vector<HostSender> senders(4);
    for (uint32_t i = 0; i < 4 * per_thread; ++i) {
      RK_ASSIGN_OR_RETURN(ActorId sink, sys->Spawn("Sink64", absl::StrCat("wide_sink", i)));
      senders[i / per_thread].sinks.push_back(sink);
      senders[i / per_thread].sent.push_back(0);
    }
    for (size_t threads : {size_t{1}, size_t{4}}) {
      std::vector<HostSender> mine(senders.begin(), senders.begin() + static_cast<long>(threads));
      RK_RETURN_IF_ERROR(HostConfig(b, *sys, mine, o));
      std::copy(mine.begin(), mine.end(), senders.begin());
    }
    RK_RETURN_IF_ERROR(StopCleanly(*sys, "paths (host to many receivers)"));
  }

  // 5. Every pair at once: its own system, sized for 2 × pairs actors.
  if (aggregate) {
    SystemOptions so = BaseSystemOptions(o);
    uint32_t pairs = static_cast<uint32_t>(o.paths_pairs);
    if (pairs == 0) {
      // How many workers a system gets is only known once it runs: ask a
      // small one. One actor per owner thread (every thread of a worker but
      // its host poller warp): the whole GPU busy.
      RK_ASSIGN_OR_RETURN(std::unique_ptr<System> probe, b.runtime.Start(b.program, so));
      pairs = std::max<uint32_t>(1, probe->workers() * (probe->threads_per_block() - 32) / 2);
      RK_RETURN_IF_ERROR(StopCleanly(*probe, "paths (worker count)"));
    }
    so.max_actors = std::max(so.max_actors, 2 * pairs + 8);
    // The reports come back on each worker's ring to the host, which holds
    // fewer of this program's records than a worker has actors: an actor
    // that finds it full sends its report again later (bench.cu).
    // Room for every mailbox and state up front rather than chunk by chunk
    // while the actors are spawned: a Drain's mailbox has slots for 4 KiB
    // payloads (P4K), a Streamer's for its small messages (Stream, at most
    // 256 bytes); each state is at most 16 KiB. More chunks come as needed.
    const uint64_t pair_bytes =
        uint64_t{so.mailbox_capacity} * (MailboxShapeFor(4096).slot_bytes + MailboxShapeFor(256).slot_bytes) +
        2 * 16384;
    so.arena_bytes = std::max<uint64_t>(so.arena_bytes, uint64_t{pairs} * pair_bytes + (16ull << 20));
    RK_ASSIGN_OR_RETURN(std::unique_ptr<System> sys, b.runtime.Start(b.program, so));
    std::vector<ActorId> streamers, drains;
    for (uint32_t i = 0; i < pairs; ++i) {
      RK_ASSIGN_OR_RETURN(ActorId s, sys->Spawn("Streamer", absl::StrCat("streamer", i)));
      streamers.push_back(s);
    }
    for (uint32_t i = 0; i < pairs; ++i) {
      RK_ASSIGN_OR_RETURN(ActorId d, sys->Spawn("Drain", absl::StrCat("drain", i)));
      drains.push_back(d);
    }
    // Streamer i sends to Drain i + 1: never an actor to itself, and where
    // actors are placed round-robin in spawn order, never to its own worker.
    std::vector<StreamPair> all;
    for (uint32_t i = 0; i < pairs; ++i) all.push_back(StreamPair{streamers[i], drains[(i + 1) % pairs]});
    std::printf("paths: %u pairs on %u worker blocks of %u threads\n", pairs, sys->workers(), sys->threads_per_block());
    RK_RETURN_IF_ERROR(StreamConfig(b, *sys, all, 64, o.paths_aggregate_messages, "all_workers"));
    RK_RETURN_IF_ERROR(StopCleanly(*sys, "paths (every pair)"));
  }
  return absl::OkStatus();
}

}  // namespace rk::bench
