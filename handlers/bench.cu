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
// between two Rallier actors; each round trip's time (%globaltimer, from
// the starter's send call to the start of its handler of the reply, as the
// flag floor times its round trips) lands in the starter's state, and the
// summary comes back to the host. Each volley
// also carries the time its sender called ctx.send, so the starter also
// records, per round trip, how long each direction took from the send call
// to the start of the receiver's handler, and how long its own send call
// took to return. ----
struct Rally { rk::ActorId partner; int rounds; };
struct Volley { int remaining; unsigned partner_arrive_ns; unsigned long long send_ns; };
struct RallyDone { int rounds; unsigned long long total_ns; unsigned long long min_ns; unsigned long long max_ns; };
struct RallySample {
  int index;
  // The starter's send call → its handler of the reply: a round trip timed
  // as the flag floor times its own (from the store to the reply seen), so
  // the starter's bookkeeping between two sends is not in it.
  unsigned long long round_trip_ns[32];
  unsigned handler_to_handler_ns[32];  // the starter's handler → its next (its bookkeeping included)
  unsigned arrive_here_ns[32];     // the partner's send call → the starter's handler
  unsigned arrive_partner_ns[32];  // the starter's send call → the partner's handler
  unsigned send_call_ns[32];       // the starter's ctx.send, call to return
};

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
  unsigned long long last_send_ns;  // the last send call's start
  unsigned long long samples[32];
  unsigned cycles[32];
  unsigned arrive_here[32];
  unsigned arrive_partner[32];
  unsigned send_call[32];
  unsigned last_send_call;
  int filled;

  RK_HANDLER void on(const Rally& r, rk::Ctx& ctx) {
    rounds = r.rounds;
    done = 0;
    filled = 0;
    min_ns = ~0ull;
    max_ns = 0;
    start_ns = GlobalNs();
    last_ns = start_ns;
    const unsigned long long t = GlobalNs();
    last_send_ns = t;
    ctx.send(r.partner, Volley{r.rounds, 0, t});
    last_send_call = static_cast<unsigned>(GlobalNs() - t);
  }
  RK_HANDLER void on(const Volley& v, rk::Ctx& ctx) {
    const unsigned long long now = GlobalNs();
    if (v.remaining < 0) return;
    if (rounds == 0) {  // the partner: send it straight back
      const unsigned arrived = static_cast<unsigned>(now - v.send_ns);
      ctx.reply(Volley{v.remaining, arrived, GlobalNs()});
      return;
    }
    const unsigned long long rt = now - last_send_ns;
    const unsigned cycle = static_cast<unsigned>(now - last_ns);
    last_ns = now;
    if (rt < min_ns) min_ns = rt;
    if (rt > max_ns) max_ns = rt;
    samples[filled & 31] = rt;
    cycles[filled & 31] = cycle;
    arrive_here[filled & 31] = static_cast<unsigned>(now - v.send_ns);
    arrive_partner[filled & 31] = v.partner_arrive_ns;
    send_call[filled & 31] = last_send_call;
    ++filled;
    ++done;
    if ((filled & 31) == 0) {
      RallySample s;
      s.index = filled / 32 - 1;
      for (int i = 0; i < 32; ++i) {
        s.round_trip_ns[i] = samples[i];
        s.handler_to_handler_ns[i] = cycles[i];
        s.arrive_here_ns[i] = arrive_here[i];
        s.arrive_partner_ns[i] = arrive_partner[i];
        s.send_call_ns[i] = send_call[i];
      }
      ctx.send(rk::host(), s);
    }
    if (done >= rounds) {
      ctx.send(rk::host(), RallyDone{done, now - start_ns, min_ns, max_ns});
      rounds = 0;
      return;
    }
    const unsigned long long t = GlobalNs();
    last_send_ns = t;
    ctx.reply(Volley{v.remaining - 1, 0, t});
    last_send_call = static_cast<unsigned>(GlobalNs() - t);
  }
};

// ---- K2K throughput: a producer streams `count` messages of one size to
// a consumer, rescheduling itself on kFull; the consumer reads every payload
// word and reports when it has them all. ----
struct P64 { unsigned long long seq; unsigned char pad[56]; };
struct P256 { unsigned long long seq; unsigned char pad[248]; };
struct P1K { unsigned long long seq; unsigned char pad[1016]; };
struct P4K { unsigned long long seq; unsigned char pad[4088]; };
// In StreamDone, `count` is how many were sent (fewer than asked only if
// the consumer took nothing for a second: the producer then gives up),
// `full` how many of them found the mailbox full at their first attempt,
// and `retries` how many kFull returns there were in all.
// `start_ns`: the %globaltimer time at which to begin (0: at once), so that
// many pairs started by the host one after another stream together.
struct Stream { rk::ActorId to; int size; int count; unsigned long long start_ns; };
struct StreamDone {
  int size;
  int count;
  unsigned long long full;
  unsigned long long start_ns;
  unsigned long long end_ns;
  unsigned long long retries;
};

struct StreamMore { int unused; };
// The GPU's clock (%globaltimer), for the host to schedule a Stream's start.
struct ClockQuery { int unused; };
struct ClockNow { unsigned long long ns; };

// On kFull the streamer does not retry inside its handler: the consumer may
// share its worker (its warp, even) and could then never run. It sends
// itself StreamMore, which gives the worker back, and carries on when that
// message is handled. It gives up if no message got through for a second.
struct RK_ACTOR Streamer {
  // The messages being sent live in the actor's state (device memory), not
  // in the handler's stack frame.
  P64 p64;
  P256 p256;
  P1K p1k;
  P4K p4k;
  Stream job;
  int waiting;       // the job's start time has not come yet
  int reporting;     // `report` found the ring to the host full: send it again
  StreamDone report;
  int next;          // the seq of the next message to send
  int retrying;      // the message `next` found the mailbox full
  int fresh;         // the payload of this job's size is not filled yet
  unsigned long long full;
  unsigned long long retries;
  unsigned long long start_ns;
  unsigned long long stalled_since;

  RK_HANDLER void on(const Stream& s, rk::Ctx& ctx) {
    job = s;
    next = 0;
    retrying = 0;
    full = retries = 0;
    stalled_since = 0;
    fresh = 1;
    waiting = 1;
    reporting = 0;
    Pump(ctx);
  }
  RK_HANDLER void on(const StreamMore& m, rk::Ctx& ctx) { Pump(ctx); }
  RK_HANDLER void on(const ClockQuery& q, rk::Ctx& ctx) { ctx.reply(ClockNow{GlobalNs()}); }

  template <class P>
  __device__ static void Fill(P& p) {
    for (unsigned i = 0; i < sizeof(p.pad); ++i) p.pad[i] = static_cast<unsigned char>(i);
  }
  __device__ void Pump(rk::Ctx& ctx) {
    if (reporting) {
      Report(ctx);
      return;
    }
    if (waiting) {
      // Until the start time, look again after the worker's other actors
      // had their turn (a handler that spun here could hold up the actors
      // it shares a warp with).
      const unsigned long long now = GlobalNs();
      if (now < job.start_ns && ctx.send(ctx.self(), StreamMore{0}) == rk::SendStatus::kOk) return;
      waiting = 0;
      start_ns = now;
    }
    switch (job.size) {
      case 64: PumpWith(ctx, p64); break;
      case 256: PumpWith(ctx, p256); break;
      case 1024: PumpWith(ctx, p1k); break;
      default: PumpWith(ctx, p4k); break;
    }
  }
  template <class P>
  __device__ void PumpWith(rk::Ctx& ctx, P& p) {
    if (fresh) {
      Fill(p);
      fresh = 0;
    }
    // A message of up to 64 bytes is built in registers once and only its
    // seq changes per send; a larger one is sent from the state (device
    // memory, which the send's bulk copy reads).
    if constexpr (sizeof(P) <= 64) {
      P m = p;
      if (SendLoop(ctx, m)) return;
    } else {
      if (SendLoop(ctx, p)) return;
    }
    report = StreamDone{job.size, next, full, start_ns, GlobalNs(), retries};
    Report(ctx);
  }
  // Sends messages `next`.. of the job; true when it stopped on kFull and
  // rescheduled itself (StreamMore). The loop's counters live in registers
  // and go back to the state when it stops: the state is device memory that
  // the compiler must otherwise reload after every send's stores.
  template <class P>
  __device__ bool SendLoop(rk::Ctx& ctx, P& m) {
    int n = next;
    const int count = job.count;
    const rk::ActorId to = job.to;
    bool rescheduled = false;
    while (n < count) {
      m.seq = static_cast<unsigned long long>(n);
      const rk::SendStatus s = ctx.send(to, m);
      if (s == rk::SendStatus::kFull) {
        ++retries;
        if (!retrying) {
          retrying = 1;
          ++full;
        }
        const unsigned long long now = GlobalNs();
        if (stalled_since == 0) {
          stalled_since = now;
        } else if (now - stalled_since > 1000000000ull) {
          break;
        }
        if (ctx.send(ctx.self(), StreamMore{0}) == rk::SendStatus::kOk) {
          rescheduled = true;
          break;
        }
        continue;  // could not even reschedule: try again here
      }
      if (s != rk::SendStatus::kOk) break;
      if (retrying) {
        retrying = 0;
        stalled_since = 0;
      }
      ++n;
    }
    next = n;
    return rescheduled;
  }
  // The GPU -> host ring of this worker may be full (many actors report at
  // once): then try again after the worker's other actors had their turn,
  // rather than lose the report (the host would wait for it forever).
  __device__ void Report(rk::Ctx& ctx) {
    reporting = ctx.send(rk::host(), report) == rk::SendStatus::kFull &&
                ctx.send(ctx.self(), StreamMore{0}) == rk::SendStatus::kOk;
  }
};

// `words` is the XOR of every 8-byte word of every payload received (the
// host checks it: the bytes arrived, not just the count); `disorder` counts
// messages whose seq was not the next one (FIFO per sender). Expect is
// acknowledged, so that a burst from another sender starts after it.
struct Expect { int count; };
struct Expected { int count; };
struct DrainReport { int unused; };
struct Drained {
  unsigned long long received;
  unsigned long long bytes;
  unsigned long long first_ns;
  unsigned long long last_ns;
  unsigned long long words;
  unsigned long long disorder;
};
struct RK_ACTOR Drain {
  unsigned long long received;
  unsigned long long bytes;
  unsigned long long first_ns;
  unsigned long long last_ns;
  unsigned long long words;
  unsigned long long disorder;
  long long expect;
  RK_HANDLER void on(const DrainReport& r, rk::Ctx& ctx) { Report(ctx); }
  // As the Streamer's report: sent again later while the ring to the host
  // is full.
  __device__ void Report(rk::Ctx& ctx) {
    if (ctx.send(rk::host(), Drained{received, bytes, first_ns, last_ns, words, disorder}) == rk::SendStatus::kFull) {
      ctx.send(ctx.self(), DrainReport{0});
    }
  }
  RK_HANDLER void on(const Expect& e, rk::Ctx& ctx) {
    received = 0;
    bytes = 0;
    words = 0;
    disorder = 0;
    expect = e.count;
    ctx.reply(Expected{e.count});
  }
  template <class P>
  __device__ void Take(const P& p, rk::Ctx& ctx) {
    const unsigned long long now = GlobalNs();
    if (received == 0) first_ns = now;
    last_ns = now;
    // Payloads start 16-byte aligned in the mailbox slot; every size here
    // is a multiple of 16.
    const uint4* v = reinterpret_cast<const uint4*>(&p);
    unsigned long long x = 0;
    // 16 loads in flight: the 4 KiB stream was bound by these reads
    // (bench/NOTES.md, session 12).
#pragma unroll 16
    for (unsigned i = 0; i < sizeof(P) / 16; ++i) {
      const uint4 q = v[i];
      x ^= (static_cast<unsigned long long>(q.y) << 32 | q.x) ^ (static_cast<unsigned long long>(q.w) << 32 | q.z);
    }
    words ^= x;
    if (p.seq != received) ++disorder;
    ++received;
    bytes += sizeof(P);
    if (static_cast<long long>(received) == expect) Report(ctx);
  }
  RK_HANDLER void on(const P64& p, rk::Ctx& ctx) { Take(p, ctx); }
  RK_HANDLER void on(const P256& p, rk::Ctx& ctx) { Take(p, ctx); }
  RK_HANDLER void on(const P1K& p, rk::Ctx& ctx) { Take(p, ctx); }
  RK_HANDLER void on(const P4K& p, rk::Ctx& ctx) { Take(p, ctx); }
};

// The Drain's counterpart with block handlers for the payloads: every
// thread of the worker block folds a share of the payload's 16-byte pieces,
// each warp's first lane leaves its warp's fold in the block's scratch (8
// bytes a warp: SystemOptions::scratch_bytes), and the leader folds those
// into `words` and counts, as the Drain does. Its report and its Expect are
// thread handlers (the same messages as the Drain's).
struct RK_ACTOR BlockDrain {
  unsigned long long received;
  unsigned long long bytes;
  unsigned long long first_ns;
  unsigned long long last_ns;
  unsigned long long words;
  unsigned long long disorder;
  long long expect;
  RK_HANDLER void on(const DrainReport& r, rk::Ctx& ctx) { Report(ctx); }
  __device__ void Report(rk::Ctx& ctx) {
    if (ctx.send(rk::host(), Drained{received, bytes, first_ns, last_ns, words, disorder}) == rk::SendStatus::kFull) {
      ctx.send(ctx.self(), DrainReport{0});
    }
  }
  RK_HANDLER void on(const Expect& e, rk::Ctx& ctx) {
    received = 0;
    bytes = 0;
    words = 0;
    disorder = 0;
    expect = e.count;
    ctx.reply(Expected{e.count});
  }
  static __device__ unsigned long long Fold(const uint4& q) {
    return (static_cast<unsigned long long>(q.y) << 32 | q.x) ^ (static_cast<unsigned long long>(q.w) << 32 | q.z);
  }
  template <class P>
  __device__ void Take(const P& p, rk::Ctx& ctx) {
    const uint4* v = reinterpret_cast<const uint4*>(&p);
    constexpr unsigned kPieces = sizeof(P) / 16;
    const unsigned width = ctx.width();
    const bool lead = ctx.leader();
    // The leader's reads of the state and of the payload's sequence number,
    // issued before the fold: their trip to memory overlaps the payload's,
    // where reading them after the block's barrier waited a trip more.
    unsigned long long n = 0, b = 0, w = 0, wrong = 0, seq = 0;
    long long until = 0;
    if (lead) {
      n = received;
      b = bytes;
      w = words;
      wrong = disorder;
      until = expect;
      seq = p.seq;
    }
    unsigned long long x = 0;
    // Two of this thread's pieces loaded before either is folded: a loop
    // that folds each piece as it comes waits one trip to memory per piece
    // (4 KiB over 128 threads is two pieces each).
    unsigned i = ctx.rank();
    for (; i + width < kPieces; i += 2 * width) x ^= Fold(v[i]) ^ Fold(v[i + width]);
    if (i < kPieces) x ^= Fold(v[i]);
    // Every thread of the block runs this: each warp is whole here.
    for (int d = 16; d > 0; d /= 2) x ^= __shfl_xor_sync(0xFFFFFFFFu, x, d);
    unsigned long long* part = ctx.scratch<unsigned long long>();
    if ((threadIdx.x & 31) == 0) part[threadIdx.x / 32] = x;
    ctx.sync();
    if (lead) {
      const unsigned long long now = GlobalNs();
      if (n == 0) first_ns = now;
      last_ns = now;
      for (unsigned k = 0; k < width / 32; ++k) w ^= part[k];
      words = w;
      if (seq != n) disorder = wrong + 1;
      received = n + 1;
      bytes = b + sizeof(P);
      if (static_cast<long long>(n + 1) == until) Report(ctx);
    }
  }
  RK_BLOCK_HANDLER void on(const P64& p, rk::Ctx& ctx) { Take(p, ctx); }
  RK_BLOCK_HANDLER void on(const P256& p, rk::Ctx& ctx) { Take(p, ctx); }
  RK_BLOCK_HANDLER void on(const P1K& p, rk::Ctx& ctx) { Take(p, ctx); }
  RK_BLOCK_HANDLER void on(const P4K& p, rk::Ctx& ctx) { Take(p, ctx); }
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

// Sends, retrying while the receiver's mailbox (or the host ring) is full,
// for at most a second; the last status is returned.
template <class M>
__device__ inline rk::SendStatus SendPatiently(rk::Ctx& ctx, rk::ActorId to, const M& m) {
  const unsigned long long start = GlobalNs();
  rk::SendStatus s;
  while ((s = ctx.send(to, m)) == rk::SendStatus::kFull && GlobalNs() - start < 1000000000ull) __nanosleep(256);
  return s;
}

// `work` steps of a linear congruential generator: a dependent chain the
// compiler cannot shorten.
__device__ inline unsigned int Churn(unsigned int x, int work) {
  for (int i = 0; i < work; ++i) x = x * 1664525u + 1013904223u;
  return x;
}

// ---- Scaling (exp3): identical actors, each working through `messages`
// messages that it generates itself — `window` self-sends in flight — so the
// actors, not the host, are the bottleneck. The host starts actor 0; the
// start fans out along a binary tree of positions (actor `first` + p starts
// 2p+1 and 2p+2), so every actor starts within log2(actors) K2K hops. Each
// actor reports its first and last handling time (%globaltimer). ----
struct LoopStart { rk::ActorId first; int actors; int position; int messages; int work; int window; };
struct LoopTick { unsigned int n; };
struct RK_MESSAGE LoopDone {
  int position;
  int full;  // self-sends refused (never expected: window + batch < capacity)
  unsigned long long handled;
  unsigned long long first_ns;
  unsigned long long last_ns;
  unsigned int acc;
  int failed_children;
};
struct RK_ACTOR Looper {
  unsigned long long target;
  unsigned long long handled;
  unsigned long long sent;
  unsigned long long first_ns;
  unsigned int acc;
  int work;
  int position;
  int full;
  int failed_children;

  RK_HANDLER void on(const LoopStart& s, rk::Ctx& ctx) {
    failed_children = 0;
    for (int c = 2 * s.position + 1; c <= 2 * s.position + 2 && c < s.actors; ++c) {
      LoopStart child = s;
      child.position = c;
      if (SendPatiently(ctx, rk::ActorId{s.first.value + static_cast<unsigned>(c)}, child) != rk::SendStatus::kOk) {
        ++failed_children;
      }
    }
    target = s.messages > 0 ? static_cast<unsigned long long>(s.messages) : 0;
    handled = 0;
    sent = 0;
    full = 0;
    work = s.work;
    position = s.position;
    acc = static_cast<unsigned int>(s.position);
    first_ns = GlobalNs();
    for (int i = 0; i < s.window && sent < target; ++i) Next(ctx);
    if (handled == target) Report(ctx, first_ns);
  }
  RK_HANDLER void on(const LoopTick& t, rk::Ctx& ctx) {
    acc = Churn(acc ^ t.n, work);
    ++handled;
    if (sent < target) Next(ctx);
    if (handled == target) Report(ctx, GlobalNs());
  }
  __device__ void Next(rk::Ctx& ctx) {
    if (ctx.send(ctx.self(), LoopTick{static_cast<unsigned int>(sent)}) == rk::SendStatus::kOk) {
      ++sent;
    } else {
      ++full;
      --target;  // one message fewer; the host sees `full` and refuses the sample
    }
  }
  __device__ void Report(rk::Ctx& ctx, unsigned long long last_ns) {
    SendPatiently(ctx, rk::host(), LoopDone{position, full, handled, first_ns, last_ns, acc, failed_children});
  }
};

// ---- Mixed workload (exp5): one actor with 16 KiB of state and three
// operations — compute (a block-wide step over all of it), inject (write 64
// words) and query (read 64 words back). Every operation replies, so the
// host times each to its completion. ----
struct MixStep { int rounds; };
struct MixInject { int offset; unsigned int values[64]; };
struct MixQuery { int offset; };
struct MixAck { unsigned long long ops; };
struct MixValue { unsigned long long sum; };
struct RK_ACTOR Mixer {
  unsigned int data[4096];
  unsigned long long ops;
  RK_BLOCK_HANDLER void on(const MixStep& s, rk::Ctx& ctx) {
    for (unsigned i = ctx.rank(); i < 4096; i += ctx.width()) data[i] = Churn(data[i], s.rounds);
    ctx.sync();
    if (ctx.leader()) {
      ++ops;
      ctx.reply(MixAck{ops});
    }
  }
  RK_HANDLER void on(const MixInject& m, rk::Ctx& ctx) {
    for (int k = 0; k < 64; ++k) data[(m.offset + k) & 4095] = m.values[k];
    ++ops;
    ctx.reply(MixAck{ops});
  }
  RK_HANDLER void on(const MixQuery& q, rk::Ctx& ctx) {
    unsigned long long sum = 0;
    for (int k = 0; k < 64; ++k) sum += data[(q.offset + k) & 4095];
    ++ops;
    ctx.reply(MixValue{sum});
  }
};

// ---- Fault isolation (exp7): Tickers keep themselves busy with
// self-sent Beats (`window` in flight). A Beat adds k+1 to data[k] for
// k = beats % 64 and 1 to `level`, so the host can check a healthy actor's
// whole state from its beat count. Poison puts a NaN into `level`; the next
// Beat notices and fails the actor. Hang never returns. ----
struct BeatStart { int window; };
struct Beat { unsigned int n; };
struct BeatStop { int unused; };
struct Poison { int unused; };
struct Hang { int forever; };
struct BeatCheck { int unused; };
struct BeatState { unsigned long long beats; unsigned long long full; float level; unsigned int data[64]; };
struct RK_ACTOR Ticker {
  unsigned long long beats;
  unsigned long long full;
  float level;
  int stopped;
  unsigned int data[64];
  RK_HANDLER void on(const BeatStart& s, rk::Ctx& ctx) {
    stopped = 0;
    for (int i = 0; i < s.window; ++i) {
      if (ctx.send(ctx.self(), Beat{static_cast<unsigned int>(i)}) != rk::SendStatus::kOk) ++full;
    }
  }
  RK_HANDLER void on(const Beat& b, rk::Ctx& ctx) {
    if (level != level) {  // NaN: this actor's state is corrupt
      ctx.fail(0x4E614E);  // "NaN"
      return;
    }
    const unsigned int k = static_cast<unsigned int>(beats & 63);
    data[k] += k + 1;
    level += 1.0f;
    ++beats;
    if (stopped == 0 && ctx.send(ctx.self(), Beat{b.n + 1}) != rk::SendStatus::kOk) ++full;
  }
  RK_HANDLER void on(const BeatStop& s, rk::Ctx& ctx) { stopped = 1; }
  RK_HANDLER void on(const Poison& p, rk::Ctx& ctx) { level = __int_as_float(0x7FC00000); }
  RK_HANDLER void on(const Hang& h, rk::Ctx& ctx) {
    // The sleep is a side effect: a loop without one may be assumed to end.
    while (h.forever != 0) __nanosleep(1000);
  }
  RK_HANDLER void on(const BeatCheck& c, rk::Ctx& ctx) {
    BeatState s;
    s.beats = beats;
    s.full = full;
    s.level = level;
    for (int k = 0; k < 64; ++k) s.data[k] = data[k];
    ctx.reply(s);
  }
};

// ---- Message paths (rkbench --experiment paths). ----
// The XOR of the eight 8-byte words of a 64-byte message (read as 8-byte
// words: the message's own alignment, whatever the slot layout).
__device__ inline unsigned long long Xor64(const P64& p) {
  const unsigned long long* w = reinterpret_cast<const unsigned long long*>(&p);
  unsigned long long x = 0;
  for (int i = 0; i < 8; ++i) x ^= w[i];
  return x;
}

// Sink64 takes 64-byte messages whose seq counts up from 0 (one sender at a
// time) and keeps what the host needs to check them: how many, how many were
// not the next seq (FIFO), and the XOR of every payload word. It never
// resets: the host checks its running totals after each burst, with an Ask
// that comes after the burst's messages (FIFO from one sender).
struct SinkQuery { int unused; };
struct SinkReport {
  unsigned long long received;
  unsigned long long disorder;
  unsigned long long words;
  unsigned long long at_ns;
};
struct RK_ACTOR Sink64 {
  unsigned long long received;
  unsigned long long next_seq;
  unsigned long long disorder;
  unsigned long long words;
  RK_HANDLER void on(const P64& p, rk::Ctx& ctx) {
    words ^= Xor64(p);
    if (p.seq != next_seq) ++disorder;
    next_seq = p.seq + 1;
    ++received;
  }
  RK_HANDLER void on(const SinkQuery& q, rk::Ctx& ctx) {
    ctx.reply(SinkReport{received, disorder, words, GlobalNs()});
  }
};

// Pump: background traffic that runs until it is told to stop. Each PumpTick
// sends up to `batch` 64-byte messages (seq from 0) to `to`, stops the batch
// at the first kFull, and sends itself the next tick — so the pump handles
// the host's PumpQuery and PumpStop between batches. `lost` is non-zero when
// the pump stopped by itself: 1 a tick could not be sent (its own mailbox
// was full), 2 a send to `to` failed other than kFull.
struct PumpStart { rk::ActorId to; int batch; };
struct PumpTick { int unused; };
struct PumpQuery { int unused; };
struct PumpStop { int unused; };
struct PumpState {
  unsigned long long sent;
  unsigned long long full;
  unsigned long long at_ns;
  int running;
  int lost;
};
struct RK_ACTOR Pump {
  P64 p;
  rk::ActorId to;
  unsigned long long sent;
  unsigned long long full;
  int batch;
  int running;
  int lost;
  RK_HANDLER void on(const PumpStart& s, rk::Ctx& ctx) {
    for (unsigned i = 0; i < sizeof(p.pad); ++i) p.pad[i] = static_cast<unsigned char>(i);
    to = s.to;
    batch = s.batch > 0 ? s.batch : 1;
    sent = 0;
    full = 0;
    lost = 0;
    running = 1;
    if (ctx.send(ctx.self(), PumpTick{0}) != rk::SendStatus::kOk) {
      running = 0;
      lost = 1;
    }
    ctx.reply(PumpState{sent, full, GlobalNs(), running, lost});
  }
  RK_HANDLER void on(const PumpTick& t, rk::Ctx& ctx) {
    if (running == 0) return;
    for (int i = 0; i < batch; ++i) {
      p.seq = sent;
      const rk::SendStatus s = ctx.send(to, p);
      if (s == rk::SendStatus::kFull) {
        ++full;
        break;
      }
      if (s != rk::SendStatus::kOk) {
        running = 0;
        lost = 2;
        return;
      }
      ++sent;
    }
    if (ctx.send(ctx.self(), PumpTick{0}) != rk::SendStatus::kOk) {
      running = 0;
      lost = 1;
    }
  }
  RK_HANDLER void on(const PumpQuery& q, rk::Ctx& ctx) { ctx.reply(PumpState{sent, full, GlobalNs(), running, lost}); }
  // The reply's `running` says whether the pump was still running when the
  // stop came (a tick already queued finds it stopped and does nothing).
  RK_HANDLER void on(const PumpStop& s, rk::Ctx& ctx) {
    const int was_running = running;
    running = 0;
    ctx.reply(PumpState{sent, full, GlobalNs(), was_running, lost});
  }
};
