// bench.cu — the actors rkbench measures (bench/). Each one does as little
// as its measurement allows, so the numbers are the runtime's.
#include <ringkernel/actor.cuh>

// ---- Round trips and injection. ----
struct Ping { unsigned long long seq; };
struct Pong { unsigned long long seq; };
// Replies to every Ping: the host → actor → host round trip (Ask).
struct RK_ACTOR Echo {
  RK_HANDLER void on(const Ping& p, rk::Ctx& ctx) { ctx.reply(Pong{p.seq}); }
};

// Counts what it gets: host injection throughput.
struct Count { unsigned long long seq; };
struct CountQuery { int unused; };
struct Counted { unsigned long long count; unsigned long long last_seq; };
struct RK_ACTOR Sink {
  unsigned long long count;
  unsigned long long last_seq;
  RK_HANDLER void on(const Count& c, rk::Ctx& ctx) {
    ++count;
    last_seq = c.seq;
  }
  RK_HANDLER void on(const CountQuery& q, rk::Ctx& ctx) { ctx.reply(Counted{count, last_seq}); }
};

// ---- One K2K hop, timed on the GPU: a rally of `rounds` round trips
// between two Rallier actors; each round trip's time (%globaltimer) lands in
// the starter's state, and the summary comes back to the host. ----
struct Rally { rk::ActorId partner; int rounds; };
struct Volley { int remaining; unsigned long long sent_at; };
struct RallyDone { int rounds; unsigned long long total_ns; unsigned long long min_ns; unsigned long long max_ns; };
struct RallySample { int index; unsigned long long round_trip_ns[32]; };

__device__ inline unsigned long long GlobalNs() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

struct RK_ACTOR Rallier {
  int rounds;
  int done;
  unsigned long long start_ns;
  unsigned long long last_ns;
  unsigned long long min_ns;
  unsigned long long max_ns;
  unsigned long long samples[32];
  int filled;

  RK_HANDLER void on(const Rally& r, rk::Ctx& ctx) {
    rounds = r.rounds;
    done = 0;
    filled = 0;
    min_ns = ~0ull;
    max_ns = 0;
    start_ns = GlobalNs();
    last_ns = start_ns;
    ctx.send(r.partner, Volley{r.rounds, start_ns});
  }
  RK_HANDLER void on(const Volley& v, rk::Ctx& ctx) {
    if (v.remaining < 0) return;
    if (rounds == 0) {  // the partner: send it straight back
      ctx.reply(Volley{v.remaining, v.sent_at});
      return;
    }
    const unsigned long long now = GlobalNs();
    const unsigned long long rt = now - last_ns;
    last_ns = now;
    if (rt < min_ns) min_ns = rt;
    if (rt > max_ns) max_ns = rt;
    samples[filled & 31] = rt;
    ++filled;
    ++done;
    if ((filled & 31) == 0) {
      RallySample s;
      s.index = filled / 32 - 1;
      for (int i = 0; i < 32; ++i) s.round_trip_ns[i] = samples[i];
      ctx.send(rk::host(), s);
    }
    if (done >= rounds) {
      ctx.send(rk::host(), RallyDone{done, now - start_ns, min_ns, max_ns});
      rounds = 0;
      return;
    }
    ctx.reply(Volley{v.remaining - 1, now});
  }
};

// ---- K2K throughput: a producer streams `count` messages of one size to
// a consumer, retrying on kFull; the consumer reports when it has them. ----
struct P64 { unsigned long long seq; unsigned char pad[56]; };
struct P256 { unsigned long long seq; unsigned char pad[248]; };
struct P1K { unsigned long long seq; unsigned char pad[1016]; };
struct P4K { unsigned long long seq; unsigned char pad[4088]; };
struct Stream { rk::ActorId to; int size; int count; };
struct StreamDone { int size; int count; unsigned long long full; unsigned long long start_ns; unsigned long long end_ns; };

template <class P>
__device__ inline unsigned long long StreamTo(rk::Ctx& ctx, rk::ActorId to, int count) {
  unsigned long long full = 0;
  P p;
  for (unsigned i = 0; i < sizeof(p.pad); ++i) p.pad[i] = static_cast<unsigned char>(i);
  for (int n = 0; n < count; ++n) {
    p.seq = static_cast<unsigned long long>(n);
    while (ctx.send(to, p) == rk::SendStatus::kFull) ++full;
  }
  return full;
}

struct RK_ACTOR Streamer {
  RK_HANDLER void on(const Stream& s, rk::Ctx& ctx) {
    const unsigned long long start = GlobalNs();
    unsigned long long full = 0;
    switch (s.size) {
      case 64: full = StreamTo<P64>(ctx, s.to, s.count); break;
      case 256: full = StreamTo<P256>(ctx, s.to, s.count); break;
      case 1024: full = StreamTo<P1K>(ctx, s.to, s.count); break;
      default: full = StreamTo<P4K>(ctx, s.to, s.count); break;
    }
    ctx.reply(StreamDone{s.size, s.count, full, start, GlobalNs()});
  }
};

struct Expect { int count; };
struct Drained { unsigned long long received; unsigned long long bytes; unsigned long long first_ns; unsigned long long last_ns; };
struct RK_ACTOR Drain {
  unsigned long long received;
  unsigned long long bytes;
  unsigned long long first_ns;
  unsigned long long last_ns;
  long long expect;
  RK_HANDLER void on(const Expect& e, rk::Ctx& ctx) {
    received = 0;
    bytes = 0;
    expect = e.count;
  }
  template <class P>
  __device__ void Take(const P& p, rk::Ctx& ctx) {
    const unsigned long long now = GlobalNs();
    if (received == 0) first_ns = now;
    last_ns = now;
    ++received;
    bytes += sizeof(P);
    if (static_cast<long long>(received) == expect) ctx.send(rk::host(), Drained{received, bytes, first_ns, last_ns});
  }
  RK_HANDLER void on(const P64& p, rk::Ctx& ctx) { Take(p, ctx); }
  RK_HANDLER void on(const P256& p, rk::Ctx& ctx) { Take(p, ctx); }
  RK_HANDLER void on(const P1K& p, rk::Ctx& ctx) { Take(p, ctx); }
  RK_HANDLER void on(const P4K& p, rk::Ctx& ctx) { Take(p, ctx); }
};

// ---- Compute: a fixed amount of arithmetic per message (scaling). ----
struct Work { int iterations; float seed; };
struct WorkQuery { int unused; };
struct WorkDone { unsigned long long handled; float checksum; };
struct RK_ACTOR Worker {
  unsigned long long handled;
  float acc;
  RK_HANDLER void on(const Work& w, rk::Ctx& ctx) {
    float x = w.seed;
    for (int i = 0; i < w.iterations; ++i) x = x * 0.9999f + 0.0001f;
    acc += x;
    ++handled;
  }
  RK_HANDLER void on(const WorkQuery& q, rk::Ctx& ctx) { ctx.reply(WorkDone{handled, acc}); }
};
