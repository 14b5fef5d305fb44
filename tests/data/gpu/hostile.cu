// Actors that misbehave on purpose, for the fault tests
// (tests/fault_gpu_test.cc), beside well-behaved actors whose results the
// tests check exactly: PID controllers fed NaN, infinities and denormals at
// a high rate, and an actor that fills every mailbox it can reach.
#include <ringkernel/actor.cuh>

namespace hostile {

__device__ __forceinline__ unsigned long long NowNs() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// NVRTC has no INFINITY or NAN macros.
__device__ __forceinline__ float Infinity() { return __int_as_float(0x7F800000); }
__device__ __forceinline__ float QuietNan() { return __int_as_float(0x7FC00000); }

// Waits `ns` nanoseconds of wall time (a slow handler).
__device__ __forceinline__ void Work(unsigned long long ns) {
  const unsigned long long t0 = NowNs();
  while (NowNs() - t0 < ns) __nanosleep(500);
}

// ---- A bystander: answers a Ping with how many it had. ----
struct Ping { int unused; };
struct Pong { long long pings; };
struct RK_ACTOR Bystander {
  long long pings;
  // A reply that meets a full ring back is retried (ctx.retry_later), as
  // every reply below is.
  RK_HANDLER void on(const Ping& p, rk::Ctx& ctx) {
    if (ctx.reply(Pong{pings + 1}) == rk::SendStatus::kFull) {
      ctx.retry_later();
      return;
    }
    ++pings;
  }
};

// ---- A NaN storm. ----
// A PID controller: each Sample gives one Actuate to its mixer. With the
// gains 2, 1/4 and 1/2 and whole-number inputs of a few units, every product
// and sum below is exact in float (with or without fused multiply-adds), so
// the host can check a clean controller's state bit for bit. A dirty one is
// fed NaN, infinities, denormals and the largest floats, and also feeds them
// through the math library, conversions and comparisons.
struct Wire { rk::ActorId mixer; int src; };
struct Sample { int seq; float setpoint; float measured; };
struct Actuate { int src; int seq; float u; };
struct PidQuery { int unused; };
struct PidState {
  long long samples;
  long long nonfinite_u;    // outputs that were NaN or infinite
  long long nonfinite_any;  // ... or whose side computations were
  long long retries;        // Actuates that met kFull and were retried
  float integral;
  float prev_error;
  float last_u;
  int last_seq;
  int histogram[8];
  long long out_of_order;  // Samples that arrived other than right after the last one handled
  int first_bad_seq;       // the first such, and the last seq handled before it
  int first_bad_last;
};
struct RK_ACTOR Pid {
  rk::ActorId mixer;
  int src;
  PidState s;

  RK_HANDLER void on(const Wire& w, rk::Ctx& ctx) {
    mixer = w.mixer;
    src = w.src;
  }
  RK_HANDLER void on(const Sample& m, rk::Ctx& ctx) {
    // The host sends each controller's samples in order (a retried one
    // comes again before the next).
    if (m.seq != s.last_seq + 1) {
      if (s.out_of_order == 0) {
        s.first_bad_seq = m.seq;
        s.first_bad_last = s.last_seq;
      }
      ++s.out_of_order;
    }
    const float e = m.setpoint - m.measured;
    const float integral = s.integral + e;
    const float d = e - s.prev_error;
    const float u = 2.0f * e + 0.25f * integral + 0.5f * d;
    // Nothing is committed until the Actuate is accepted: a retry computes
    // the same again.
    if (ctx.send(mixer, Actuate{src, m.seq, u}) == rk::SendStatus::kFull) {
      ++s.retries;
      ctx.retry_later();
      return;
    }
    const float side = sqrtf(u) + logf(e) + 1.0f / d + (u - u) * Infinity() + fmaxf(u, QuietNan()) + __fdividef(e, d);
    // A conversion of NaN or infinity is defined in PTX (saturating, NaN to
    // zero): use it as an index.
    ++s.histogram[__float2int_rz(u * 0.125f) & 7];
    if (!isfinite(u)) ++s.nonfinite_u;
    if (!isfinite(u) || !isfinite(side) || side != side || u > Infinity()) ++s.nonfinite_any;
    s.integral = integral;
    s.prev_error = e;
    s.last_u = u;
    s.last_seq = m.seq;
    ++s.samples;
  }
  RK_HANDLER void on(const PidQuery& q, rk::Ctx& ctx) {
    if (ctx.reply(s) == rk::SendStatus::kFull) ctx.retry_later();
  }
};

// Sums what its controllers send, in double, and checks each one's order.
struct MixQuery { int unused; };
struct MixState {
  double sum;
  long long received;
  long long nonfinite;
  long long violations;  // an Actuate whose seq was not its controller's last + 1
  int first_src;         // the first such: its controller, seq and the last seq before it
  int first_seq;
  int first_last;
  long long duplicates;  // ... of which a seq equal to the last (sent twice)
};
struct RK_ACTOR Mixer {
  int last[64];
  MixState s;
  RK_HANDLER void on(const Actuate& a, rk::Ctx& ctx) {
    const int i = a.src & 63;
    if (a.seq != last[i] + 1) {
      if (s.violations == 0) {
        s.first_src = a.src;
        s.first_seq = a.seq;
        s.first_last = last[i];
      }
      ++s.violations;
      if (a.seq == last[i]) ++s.duplicates;
    }
    last[i] = a.seq;
    s.sum += static_cast<double>(a.u);
    if (!isfinite(a.u)) ++s.nonfinite;
    ++s.received;
  }
  RK_HANDLER void on(const MixQuery& q, rk::Ctx& ctx) {
    if (ctx.reply(s) == rk::SendStatus::kFull) ctx.retry_later();
  }
};

// ---- A flood: one actor fills every mailbox it is given. ----
// Victims are slow (each Drop takes `work_ns`); per source (0: the flooder,
// 1: the host) they count what they handle and check the order. A BigDrop
// is a Drop too large for the hand-over in shared memory (112 bytes): the
// host's go through the victim's mailbox, where they meet the flood.
struct Drop { int src; int seq; };
struct BigDrop { int src; int seq; unsigned char pad[128]; };
struct Pace { long long work_ns; };
struct VictimQuery { int unused; };
struct VictimReport {
  long long handled[2];
  long long sum[2];
  int last[2];
  long long violations;  // a seq not above the last from its source
};
struct RK_ACTOR Victim {
  long long work_ns;
  VictimReport r;
  RK_HANDLER void on(const Pace& p, rk::Ctx& ctx) { work_ns = p.work_ns; }
  __device__ void Count(int src, int seq) {
    Work(static_cast<unsigned long long>(work_ns));
    const int s = src & 1;
    if (seq <= r.last[s]) ++r.violations;
    r.last[s] = seq;
    ++r.handled[s];
    r.sum[s] += seq;
  }
  RK_HANDLER void on(const Drop& d, rk::Ctx& ctx) { Count(d.src, d.seq); }
  RK_HANDLER void on(const BigDrop& d, rk::Ctx& ctx) { Count(d.src, d.seq); }
  RK_HANDLER void on(const VictimQuery& q, rk::Ctx& ctx) {
    if (ctx.reply(r) == rk::SendStatus::kFull) ctx.retry_later();
  }
};

// Fills each target's mailbox until kFull, one after the other; once every
// one is full it hands its message back (ctx.retry_later) so that the
// victims, and everyone else on its worker, run; then fills them again,
// until `duration_ns` has passed. Larger than a hand-over entry (112 bytes),
// so the host forwards it to the flooder's mailbox, where its retries keep
// it at the head.
struct Flood {
  long long duration_ns;
  int n;
  int per_pass;  // sends to one target per pass, at most
  rk::ActorId targets[32];
};
struct FloodQuery { int unused; };
struct FloodReport {
  long long passes;
  long long other;  // refusals other than kFull (none expected)
  int done;
  int n;
  long long sent[32];  // accepted, per target: Drops 1..sent[t]
  long long full[32];  // kFull, per target
};
struct RK_ACTOR Flooder {
  int started;
  int per_pass;
  unsigned long long until;
  rk::ActorId targets[32];
  FloodReport r;

  RK_HANDLER void on(const Flood& f, rk::Ctx& ctx) {
    if (!started) {
      started = 1;
      r.n = f.n < 0 ? 0 : (f.n > 32 ? 32 : f.n);
      per_pass = f.per_pass;
      for (int t = 0; t < 32; ++t) targets[t] = f.targets[t];
      until = NowNs() + static_cast<unsigned long long>(f.duration_ns);
    }
    for (int t = 0; t < r.n; ++t) {
      for (int k = 0; k < per_pass; ++k) {
        const rk::SendStatus s = ctx.send(targets[t], Drop{0, static_cast<int>(r.sent[t]) + 1});
        if (s == rk::SendStatus::kOk) {
          ++r.sent[t];
          continue;
        }
        if (s == rk::SendStatus::kFull) {
          ++r.full[t];
        } else {
          ++r.other;
        }
        break;
      }
    }
    ++r.passes;
    if (NowNs() < until) {
      ctx.retry_later();
      return;
    }
    r.done = 1;
  }
  // Queued behind the Flood (FIFO from the host): answered once it is done.
  RK_HANDLER void on(const FloodQuery& q, rk::Ctx& ctx) {
    if (ctx.reply(r) == rk::SendStatus::kFull) ctx.retry_later();
  }
};

}  // namespace hostile
