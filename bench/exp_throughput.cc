// Copyright 2026 The RingKernel Authors.
//
// Experiments 2 and 3: message throughput, timed on the GPU.
//
// exp2_k2k_throughput — a Streamer actor sends N messages of P bytes to a
// Drain actor (K2K, retrying kFull), or the host sends the same N messages
// to the same Drain (System::Send with a deadline). The Drain reads every
// payload word and stamps its first and last receipt with %globaltimer.
//   * path=k2k:  duration = Drain's last receipt − the Streamer's stamp
//     before its first send (first send → last receive, one clock);
//     msgs_per_s = N / duration.
//   * path=host: the host's sends are not on the GPU's clock, so the rate is
//     the Drain's: (N − 1) / (last receipt − first receipt).
//   bytes_per_s = msgs_per_s × P (P is the whole message).
//   queue_full_fraction = messages whose send found the sender's queue full
//   (at the first attempt) / N — the Drain's mailbox for K2K, the host→GPU
//   ring for the host; full_retries = every kFull return for K2K, the same
//   count as the numerator for the host (the runtime counts a Send that
//   waited once). Every burst is checked: count, bytes, the XOR of every
//   payload word, and FIFO order. Each queue depth (mailbox slots) is its
//   own System.
//
// exp3_scaling — A identical Looper actors, each generating its own stream
// by self-sends (a window of messages in flight), so the actors are the
// bottleneck, not the host: the host sends one LoopStart, which fans out
// along a binary tree of K2K sends. Weak: each actor handles
// --exp3-weak-messages; strong: --exp3-strong-total split evenly. Each
// actor reports its first and last handling time (%globaltimer);
// aggregate = Σ handled / (latest last − earliest first); per actor =
// aggregate / A; efficiency = per-actor rate / per-actor rate at A = 1 (for
// strong scaling the same ratio is speedup / A).
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "bench/exp_common.h"
#include "ringkernel/status_macros.h"

namespace rk::bench {
namespace {

constexpr int kPayloads[] = {64, 256, 1024, 4096};
constexpr uint32_t kDepths[] = {256, 1024, 4096};
constexpr absl::Duration kBurstTimeout = absl::Seconds(60);

// A message as the Streamer fills it: pad byte i holds i mod 256.
template <class P>
P MakePayload() {
  P p;
  p.seq = 0;
  for (size_t i = 0; i < sizeof(p.pad); ++i) p.pad[i] = static_cast<unsigned char>(i);
  return p;
}

template <class P>
absl::Status HostSendAll(System& sys, ActorId to, int n) {
  P p = MakePayload<P>();
  const absl::Time deadline = absl::Now() + kBurstTimeout;
  for (int i = 0; i < n; ++i) {
    p.seq = static_cast<unsigned long long>(i);
    RK_RETURN_IF_ERROR(sys.Send(to, p, deadline));
  }
  return absl::OkStatus();
}

absl::Status HostSend(System& sys, ActorId to, int size, int n) {
  switch (size) {
    case 64: return HostSendAll<P64>(sys, to, n);
    case 256: return HostSendAll<P256>(sys, to, n);
    case 1024: return HostSendAll<P1K>(sys, to, n);
    default: return HostSendAll<P4K>(sys, to, n);
  }
}

struct BurstResult {
  double seconds = 0;
  uint64_t full = 0;     // messages that found the queue full
  uint64_t retries = 0;  // kFull returns in all
};

// One burst of `n` messages of `size` bytes to the Drain, by the Streamer
// (k2k) or the host; checked and timed on the GPU.
absl::StatusOr<BurstResult> Burst(System& sys, ActorId streamer, ActorId drain, bool k2k, int size, int n) {
  RK_ASSIGN_OR_RETURN(SystemStats before, sys.Stats(false));
  // Acknowledged: the Streamer's messages (another sender) must not reach
  // the Drain before it (FIFO holds per sender only).
  RK_RETURN_IF_ERROR(sys.Ask<Expected>(drain, Expect{n}, absl::Seconds(5)).status());
  if (k2k) {
    RK_RETURN_IF_ERROR(sys.Send(streamer, Stream{drain, size, n, 0}));
  } else {
    RK_RETURN_IF_ERROR(HostSend(sys, drain, size, n));
  }
  std::optional<Drained> drained;
  std::optional<StreamDone> done;
  while (!drained.has_value() || (k2k && !done.has_value())) {
    RK_ASSIGN_OR_RETURN(std::optional<Message> m, sys.Receive(kBurstTimeout));
    if (!m.has_value()) {
      return absl::DeadlineExceededError(absl::StrCat("a burst of ", n, " messages of ", size,
                                                      " bytes did not finish within ",
                                                      absl::FormatDuration(kBurstTimeout)));
    }
    if (m->type == "Drained") {
      RK_ASSIGN_OR_RETURN(drained, m->As<Drained>());
    } else if (m->type == "StreamDone") {
      RK_ASSIGN_OR_RETURN(done, m->As<StreamDone>());
    }
  }
  if (k2k && done->count != n) {
    return absl::InternalError(absl::StrCat("the Streamer sent ", done->count, " of ", n,
                                            " messages (the Drain stopped taking them)"));
  }
  if (drained->received != static_cast<uint64_t>(n) || drained->bytes != static_cast<uint64_t>(n) * size ||
      drained->words != PayloadXor(size, static_cast<uint64_t>(n)) || drained->disorder != 0) {
    return absl::InternalError(absl::StrCat("the Drain's burst is wrong: received ", drained->received, " of ", n,
                                            ", ", drained->bytes, " bytes, ", drained->disorder,
                                            " out of order, payload XOR ", drained->words, " (expected ",
                                            PayloadXor(size, static_cast<uint64_t>(n)), ")"));
  }
  BurstResult r;
  if (k2k) {
    r.seconds = static_cast<double>(drained->last_ns - done->start_ns) * 1e-9;
    r.full = done->full;
    r.retries = done->retries;
  } else {
    if (n < 2) return absl::InvalidArgumentError("the host path needs bursts of at least 2 messages");
    r.seconds = static_cast<double>(drained->last_ns - drained->first_ns) * 1e-9 * n / (n - 1);
    RK_ASSIGN_OR_RETURN(SystemStats after, sys.Stats(false));
    r.full = after.host_ring_full - before.host_ring_full;
    r.retries = r.full;
  }
  if (r.seconds <= 0) return absl::InternalError("a burst took no time on %globaltimer");
  return r;
}

}  // namespace

absl::Status Exp2K2kThroughput(const Bench& b) {
  const std::string exp = "exp2_k2k_throughput";
  const int n = b.o.exp2_messages;
  if (n < 2) return absl::InvalidArgumentError("--exp2-messages must be at least 2");
  for (uint32_t depth : kDepths) {
    SystemOptions so = BaseSystemOptions(b.o);
    so.mailbox_capacity = depth;
    // The host path must never lose a message to a full mailbox.
    so.ingress_full_timeout = absl::Seconds(5);
    // The Drain's mailbox (4 KiB slots) and the rest, in one chunk.
    so.arena_bytes = uint64_t{depth} * 4200 + (8ull << 20);
    RK_ASSIGN_OR_RETURN(std::unique_ptr<System> sys, b.runtime.Start(b.program, so));
    RK_ASSIGN_OR_RETURN(ActorId drain, sys->Spawn("Drain", "drain"));
    RK_ASSIGN_OR_RETURN(ActorId streamer, sys->Spawn("Streamer", "streamer"));
    for (int size : kPayloads) {
      for (bool k2k : {true, false}) {
        const std::string config = absl::StrCat("path=", k2k ? "k2k" : "host", ";payload=", size, ";depth=", depth);
        double sum = 0;
        for (int i = 0; i < b.o.warmup + b.o.iterations; ++i) {
          RK_ASSIGN_OR_RETURN(BurstResult r, Burst(*sys, streamer, drain, k2k, size, n));
          if (i < b.o.warmup) continue;
          const int it = i - b.o.warmup + 1;
          const double rate = n / r.seconds;
          sum += rate;
          b.rec.Add(exp, config, it, "msgs_per_s", rate, "messages/second");
          b.rec.Add(exp, config, it, "bytes_per_s", rate * size, "bytes/second");
          b.rec.Add(exp, config, it, "queue_full_fraction", static_cast<double>(r.full) / n, "fraction");
          b.rec.Add(exp, config, it, "full_retries", static_cast<double>(r.retries), "count");
        }
        std::printf("exp2 %-36s %12.4g msgs/s (mean of %d bursts of %d)\n", config.c_str(),
                    b.o.iterations > 0 ? sum / b.o.iterations : 0.0, b.o.iterations, n);
      }
    }
    RK_RETURN_IF_ERROR(StopCleanly(*sys, absl::StrCat(exp, " depth ", depth)));
  }
  return absl::OkStatus();
}

absl::Status Exp3Scaling(const Bench& b) {
  const std::string exp = "exp3_scaling";
  const Options& o = b.o;
  if (o.exp3_max_actors < 1 || o.exp3_window < 1 || o.exp3_weak_messages < 1 || o.exp3_strong_total < 1) {
    return absl::InvalidArgumentError("the --exp3-* counts must be at least 1");
  }
  SystemOptions so = BaseSystemOptions(o);
  so.max_actors = static_cast<uint32_t>(o.exp3_max_actors);
  // Self-sends never find the mailbox full: at most `window` in flight plus
  // a batch handled but not yet released.
  while (so.mailbox_capacity < static_cast<uint32_t>(o.exp3_window) + so.batch_max) so.mailbox_capacity *= 2;
  RK_ASSIGN_OR_RETURN(std::unique_ptr<System> sys, b.runtime.Start(b.program, so));
  const uint32_t workers = sys->workers();
  std::vector<ActorId> actors;
  for (int i = 0; i < o.exp3_max_actors; ++i) {
    RK_ASSIGN_OR_RETURN(ActorId id, sys->Spawn("Looper", absl::StrCat("loop", i)));
    if (!actors.empty() && id.value != actors[0].value + static_cast<uint32_t>(i)) {
      return absl::InternalError("the Loopers' ids are not consecutive; the start's fan-out relies on it");
    }
    actors.push_back(id);
  }
  std::vector<int> counts;
  for (int a = 1; a < o.exp3_max_actors; a *= 2) counts.push_back(a);
  counts.push_back(o.exp3_max_actors);
  std::printf("exp3: %u worker blocks of %u threads; actors beyond %u share a worker (one thread each)\n", workers,
              sys->threads_per_block(), workers);

  for (const bool weak : {true, false}) {
    double base_per_actor = 0;  // mean per-actor rate at A = 1
    for (int a : counts) {
      const int messages = weak ? o.exp3_weak_messages : std::max(1, o.exp3_strong_total / a);
      const std::string config = absl::StrCat("mode=", weak ? "weak" : "strong", ";actors=", a);
      b.rec.Add(exp, config, 1, "actors_per_worker", static_cast<double>((a + workers - 1) / workers), "count");
      std::vector<double> per_actor_rates;
      for (int i = 0; i < o.warmup + o.iterations; ++i) {
        RK_RETURN_IF_ERROR(sys->Send(actors[0], LoopStart{actors[0], a, 0, messages, o.exp3_work, o.exp3_window}));
        uint64_t handled = 0;
        uint64_t first = std::numeric_limits<uint64_t>::max(), last_first = 0, last = 0;
        for (int got = 0; got < a;) {
          RK_ASSIGN_OR_RETURN(Message m, ReceiveType(*sys, "LoopDone", kBurstTimeout));
          RK_ASSIGN_OR_RETURN(LoopDone d, m.As<LoopDone>());
          if (d.full != 0 || d.failed_children != 0 || d.handled != static_cast<uint64_t>(messages)) {
            return absl::InternalError(absl::StrCat("Looper ", d.position, " handled ", d.handled, " of ", messages,
                                                    " (", d.full, " self-sends refused, ", d.failed_children,
                                                    " children not started)"));
          }
          handled += d.handled;
          first = std::min<uint64_t>(first, d.first_ns);
          last_first = std::max<uint64_t>(last_first, d.first_ns);
          last = std::max<uint64_t>(last, d.last_ns);
          ++got;
        }
        if (last <= first) return absl::InternalError("a scaling burst took no time on %globaltimer");
        if (i < o.warmup) continue;
        const int it = i - o.warmup + 1;
        const double aggregate = static_cast<double>(handled) / (static_cast<double>(last - first) * 1e-9);
        per_actor_rates.push_back(aggregate / a);
        b.rec.Add(exp, config, it, "aggregate_msgs_per_s", aggregate, "messages/second");
        b.rec.Add(exp, config, it, "per_actor_msgs_per_s", aggregate / a, "messages/second");
        b.rec.Add(exp, config, it, "start_skew_us", static_cast<double>(last_first - first) * 1e-3, "microseconds");
      }
      double mean = 0;
      for (double r : per_actor_rates) mean += r;
      if (!per_actor_rates.empty()) mean /= static_cast<double>(per_actor_rates.size());
      if (a == 1) base_per_actor = mean;
      for (size_t k = 0; k < per_actor_rates.size() && base_per_actor > 0; ++k) {
        b.rec.Add(exp, config, static_cast<int>(k) + 1, "efficiency", per_actor_rates[k] / base_per_actor, "ratio");
      }
      std::printf("exp3 %-28s %12.4g msgs/s per actor, %12.4g aggregate, efficiency %.3f\n", config.c_str(), mean,
                  mean * a, base_per_actor > 0 ? mean / base_per_actor : 0.0);
    }
  }
  return StopCleanly(*sys, exp);
}

}  // namespace rk::bench
