// Actors for the runtime's GPU tests (tests/system_gpu_test.cc): each one
// makes a property of the runtime observable from the host.
#include <ringkernel/actor.cuh>

// ---- FIFO and nothing lost: a sequencer checks per-sender order. ----
struct Seq { int producer; int n; };           // n counts 1, 2, 3, ... per producer
struct SeqQuery { int producer; };
struct SeqReport { long long received; long long violations; int last; int distinct_senders; };

struct RK_ACTOR Sequencer {
  int last[64];
  long long received;
  long long violations;
  unsigned seen_senders[64];

  RK_HANDLER void on(const Seq& s, rk::Ctx& ctx) {
    const int p = s.producer & 63;
    if (s.n != last[p] + 1) ++violations;
    last[p] = s.n;
    ++received;
    const unsigned sender = ctx.sender().value;
    for (int i = 0; i < 64; ++i) {
      if (seen_senders[i] == sender + 1) break;
      if (seen_senders[i] == 0) { seen_senders[i] = sender + 1; break; }
    }
  }
  RK_HANDLER void on(const SeqQuery& q, rk::Ctx& ctx) {
    int distinct = 0;
    for (int i = 0; i < 64; ++i) distinct += seen_senders[i] != 0;
    ctx.reply(SeqReport{received, violations, last[q.producer & 63], distinct});
  }
};

// ---- K2K producers: send `count` sequenced messages to `to`. ----
struct Produce { rk::ActorId to; int producer; int count; };
struct Produced { int producer; int sent; int full; int no_actor; };
struct ProduceMore { int unused; };

// On kFull a producer does not spin in its handler: the receiver may share its
// worker and would never run. It sends itself ProduceMore, which frees the
// worker, and carries on when that message is handled.
struct RK_ACTOR Producer {
  Produce job;
  int next;
  int sent;
  int full;
  int no_actor;

  RK_HANDLER void on(const Produce& p, rk::Ctx& ctx) {
    job = p;
    next = 1;
    sent = full = no_actor = 0;
    Pump(ctx);
  }
  RK_HANDLER void on(const ProduceMore& m, rk::Ctx& ctx) { Pump(ctx); }

  void Pump(rk::Ctx& ctx) {
    while (next <= job.count) {
      const rk::SendStatus s = ctx.send(job.to, Seq{job.producer, next});
      if (s == rk::SendStatus::kOk) {
        ++sent;
        ++next;
      } else if (s == rk::SendStatus::kFull) {
        ++full;
        if (ctx.send(ctx.self(), ProduceMore{0}) == rk::SendStatus::kOk) return;
      } else {
        ++no_actor;
        ++next;
      }
    }
    ctx.send(rk::host(), Produced{job.producer, sent, full, no_actor});
  }
};

// ---- A slow consumer, so that mailboxes fill. ----
struct Slow { int n; };
struct SlowCount { long long handled; };
struct RK_ACTOR Sloth {
  long long handled;
  RK_HANDLER void on(const Slow& s, rk::Ctx& ctx) {
    // About a millisecond: slower than any sender, even one slowed down by
    // compute-sanitizer.
    const unsigned long long start = clock64();
    while (clock64() - start < 2000000) {}
    ++handled;
  }
  RK_HANDLER void on(const SlowCount& q, rk::Ctx& ctx) { ctx.reply(SlowCount{handled}); }
};

// A burst of sends with no retry: how many were refused with kFull.
struct Burst { rk::ActorId to; int count; };
struct BurstResult { int ok; int full; };
struct RK_ACTOR Burster {
  RK_HANDLER void on(const Burst& b, rk::Ctx& ctx) {
    int ok = 0, full = 0;
    for (int i = 0; i < b.count; ++i) {
      const rk::SendStatus s = ctx.send(b.to, Slow{i});
      if (s == rk::SendStatus::kOk) ++ok; else if (s == rk::SendStatus::kFull) ++full;
    }
    ctx.reply(BurstResult{ok, full});
  }
};

// ---- Routes: send through "audit" and report the SendStatus. ----
struct Notify { int value; };
struct NotifyResult { unsigned status; };
struct Noted { int value; };
struct RK_ACTOR Notifier {
  RK_HANDLER void on(const Notify& n, rk::Ctx& ctx) {
    const rk::SendStatus s = ctx.send(rk::route("audit"), Noted{n.value});
    ctx.reply(NotifyResult{static_cast<unsigned>(s)});
  }
};
struct RK_ACTOR Recorder {
  long long total;
  long long count;
  RK_HANDLER void on(const Noted& n, rk::Ctx& ctx) {
    total += n.value;
    ++count;
    ctx.send(rk::host(), n);
  }
};

// ---- Failure: fail with the given code; report otherwise. ----
struct Poke { int fail_code; };
struct Poked { int pokes; };
struct RK_ACTOR Fragile {
  int pokes;
  RK_HANDLER void on(const Poke& p, rk::Ctx& ctx) {
    if (p.fail_code != 0) {
      ctx.fail(static_cast<unsigned>(p.fail_code));
      return;
    }
    // The reply first: one that meets a full ring back (dead letters may
    // fill it) is retried, with nothing counted yet.
    if (ctx.reply(Poked{pokes + 1}) == rk::SendStatus::kFull) {
      ctx.retry_later();
      return;
    }
    ++pokes;
  }
};

// ---- Fails with messages queued: its owner dead-letters each of them. ----
struct Crumble { int count; };
struct RK_ACTOR Brittle {
  // Sends itself Seq 1..count (stopping at the first refusal), then fails:
  // every one of them is already in its mailbox, for its owner to
  // dead-letter.
  RK_HANDLER void on(const Crumble& c, rk::Ctx& ctx) {
    for (int n = 1; n <= c.count; ++n) {
      if (ctx.send(ctx.self(), Seq{0, n}) != rk::SendStatus::kOk) break;
    }
    ctx.fail(7);
  }
  RK_HANDLER void on(const Seq& s, rk::Ctx& ctx) {}
};

// ---- Clocks: report ctx.now() and a sender's stamp. ----
struct Tick { unsigned long long sender_stamp; };
struct Tock { unsigned long long now; unsigned long long sender_stamp; };
struct Relay { rk::ActorId to; };
struct RK_ACTOR Clock {
  RK_HANDLER void on(const Tick& t, rk::Ctx& ctx) { ctx.reply(Tock{ctx.now(), t.sender_stamp}); }
  // Stamps a Tick with this invocation's clock and sends it on; the
  // receiver's reply comes back here and is forwarded to the host.
  RK_HANDLER void on(const Relay& r, rk::Ctx& ctx) { ctx.send(r.to, Tick{ctx.now()}); }
  RK_HANDLER void on(const Tock& t, rk::Ctx& ctx) { ctx.send(rk::host(), t); }
};

// ---- Faults: spin forever, touch an illegal address, or trap. ----
struct Spin { int forever; };
struct RK_ACTOR Spinner {
  RK_HANDLER void on(const Spin& s, rk::Ctx& ctx) {
    // The sleep is a side effect the compiler must keep: a loop without one
    // may be assumed to end (C++ forward progress) and be removed.
    while (s.forever != 0) __nanosleep(1000);
  }
};
struct Crash { unsigned long long address; };
struct RK_ACTOR Crasher {
  RK_HANDLER void on(const Crash& c, rk::Ctx& ctx) {
    *reinterpret_cast<volatile int*>(c.address) = 42;
  }
};
// A trap instruction (what a failed device-side assert ends in) when `code`
// is not 0; otherwise it counts the message.
struct Trap { int code; };
struct RK_ACTOR Trapper {
  long long calm;
  RK_HANDLER void on(const Trap& t, rk::Ctx& ctx) {
    if (t.code != 0) __trap();
    ++calm;
  }
};

// ---- Defaults: default member initialisers run at spawn. ----
struct Peek { int unused; };
struct Defaults { int seven; long long zero; float half; };
struct RK_ACTOR Initialised {
  int seven = 7;
  long long zero;
  float half = 0.5f;
  RK_HANDLER void on(const Peek& p, rk::Ctx& ctx) { ctx.reply(Defaults{seven, zero, half}); }
};

// ---- An actor that keeps its own mailbox busy still answers the host. ----
struct Loop { int unused; };
struct LoopQuery { int stop; };
struct LoopCount { long long loops; };
struct RK_ACTOR Looper {
  long long loops;
  int stopped;
  RK_HANDLER void on(const Loop& l, rk::Ctx& ctx) {
    ++loops;
    if (!stopped) ctx.send(ctx.self(), l);
  }
  RK_HANDLER void on(const LoopQuery& q, rk::Ctx& ctx) {
    if (q.stop) stopped = 1;
    ctx.reply(LoopCount{loops});
  }
};

// ---- Host messages of many sizes, checked word by word. ----
// `n` counts 1, 2, 3, ... across both types; byte i of a payload is
// (n * 7 + i) & 0xFF. Small ones are handed over in shared memory, large
// ones go through the mailbox; their sizes make the host ring wrap with skips.
struct Little { int n; unsigned char bytes[20]; };
struct Large { int n; int len; unsigned char bytes[400]; };
struct Huge { int n; int len; unsigned char bytes[4088]; };  // 4096 bytes
// Either side of the largest hand-over (112 bytes): Edge112 is handed over,
// its last 16 bytes in the entry's last piece; Edge120 goes by the mailbox.
struct Edge112 { int n; unsigned char bytes[108]; };
struct Edge120 { int n; unsigned char bytes[116]; };
struct MixQuery { int unused; };
struct MixReport { long long received; long long out_of_order; long long bad_bytes; int last; };
struct RK_ACTOR MixChecker {
  long long received;
  long long out_of_order;
  long long bad_bytes;
  int last;

  __device__ void Check(int n, const unsigned char* bytes, int len) {
    if (n != last + 1) ++out_of_order;
    last = n;
    ++received;
    for (int i = 0; i < len; ++i) {
      if (bytes[i] != static_cast<unsigned char>(n * 7 + i)) ++bad_bytes;
    }
  }
  RK_HANDLER void on(const Little& m, rk::Ctx& ctx) { Check(m.n, m.bytes, 20); }
  RK_HANDLER void on(const Large& m, rk::Ctx& ctx) { Check(m.n, m.bytes, m.len > 400 ? 400 : m.len); }
  RK_HANDLER void on(const Huge& m, rk::Ctx& ctx) { Check(m.n, m.bytes, m.len > 4088 ? 4088 : m.len); }
  RK_HANDLER void on(const Edge112& m, rk::Ctx& ctx) { Check(m.n, m.bytes, 108); }
  RK_HANDLER void on(const Edge120& m, rk::Ctx& ctx) { Check(m.n, m.bytes, 116); }
  RK_HANDLER void on(const MixQuery& q, rk::Ctx& ctx) {
    ctx.reply(MixReport{received, out_of_order, bad_bytes, last});
  }
};

// ---- Delegation: a Front forwards a request to its Back (ctx.forward),
// whose reply answers the original sender (a host Ask, or an actor). ----
struct Wire { rk::ActorId back; };
struct Request { int x; int want_slow_ns; };
struct Response { int y; unsigned replier; unsigned seen_sender; };
struct Ask2 { rk::ActorId front; int x; };  // an actor asks a front (K2K)
struct RK_ACTOR Front {
  rk::ActorId back;
  RK_HANDLER void on(const Wire& w, rk::Ctx& ctx) { back = w.back; }
  RK_HANDLER void on(const Request& r, rk::Ctx& ctx) { ctx.forward(back, r); }
};
struct RK_ACTOR Back {
  RK_HANDLER void on(const Request& r, rk::Ctx& ctx) {
    if (r.want_slow_ns > 0) {
      unsigned long long t0, t;
      asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
      do {
        __nanosleep(1000);
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
      } while (t - t0 < static_cast<unsigned long long>(r.want_slow_ns));
    }
    ctx.reply(Response{2 * r.x, ctx.self().value, ctx.sender().value});
  }
};
// Asks a front on behalf of the host and reports the reply it gets.
struct RK_ACTOR Client {
  RK_HANDLER void on(const Ask2& a, rk::Ctx& ctx) { ctx.send(a.front, Request{a.x, 0}); }
  RK_HANDLER void on(const Response& r, rk::Ctx& ctx) {
    ctx.send(rk::host(), Response{r.y, r.replier, ctx.sender().value});
  }
};

// ---- Waiting for room without a deadlock: a producer whose consumer can
// only run after it (same worker thread) re-delivers its job with
// ctx.retry_later on kFull. ----
struct Pour { rk::ActorId to; int count; };
struct Poured { int sent; int retries; };
struct Drop { int n; };
struct DropQuery { int unused; };
struct DropCount { long long received; long long out_of_order; };
struct RK_ACTOR Pourer {
  int started;
  rk::ActorId to;
  int count;
  int next;
  int retries;
  RK_HANDLER void on(const Pour& p, rk::Ctx& ctx) {
    if (!started) {  // the first delivery; a retry resumes at `next`
      started = 1;
      to = p.to;
      count = p.count;
    }
    while (next < count) {
      if (ctx.send(to, Drop{next}) == rk::SendStatus::kFull) {
        ++retries;
        ctx.retry_later();
        return;
      }
      ++next;
    }
    ctx.send(rk::host(), Poured{next, retries});
  }
};
struct RK_ACTOR Bucket {
  long long received;
  long long out_of_order;
  RK_HANDLER void on(const Drop& d, rk::Ctx& ctx) {
    if (d.n != received) ++out_of_order;
    ++received;
  }
  RK_HANDLER void on(const DropQuery& q, rk::Ctx& ctx) { ctx.reply(DropCount{received, out_of_order}); }
};

// ---- A stream's consumer that hands some messages back and may fail:
// Seq messages from one Producer, in order. Every `retry_every`-th message
// is handed back (ctx.retry_later) the first time it arrives; message
// `fail_at` fails the actor (code 77). With a stream in its mailbox these
// happen inside runs (RK_STREAM_RUNS, rt_worker.cuh), where the records after
// them must stay for later or go to the dead letters. ----
struct PickyConfig { int retry_every; int fail_at; };
struct PickyQuery { int unused; };
struct PickyReport { long long handled; long long violations; long long retries; int last; };
struct RK_ACTOR Picky {
  int retry_every;
  int fail_at;
  int last;
  int retried;  // the message handed back last
  long long handled;
  long long violations;
  long long retries;
  RK_HANDLER void on(const PickyConfig& c, rk::Ctx& ctx) {
    retry_every = c.retry_every;
    fail_at = c.fail_at;
    ctx.reply(PickyReport{handled, violations, retries, last});
  }
  RK_HANDLER void on(const Seq& s, rk::Ctx& ctx) {
    if (retry_every != 0 && s.n % retry_every == 0 && retried != s.n) {
      retried = s.n;
      ++retries;
      ctx.retry_later();
      return;
    }
    if (s.n != last + 1) ++violations;
    last = s.n;
    ++handled;
    if (s.n == fail_at) ctx.fail(77);
  }
  RK_HANDLER void on(const PickyQuery& q, rk::Ctx& ctx) { ctx.reply(PickyReport{handled, violations, retries, last}); }
};

// ---- A rally between two actors, each waiting for the other's ball (a
// conversation: the owner's handler call then waits for the next ball
// itself, rt_dispatch.cuh, ConvRun), where a player hands some balls back
// with retry_later or fails at one. Each player checks that its balls come
// in order (odd numbers to the server, even ones to the receiver). ----
struct RallyBall { int n; };
struct RallyPlay { rk::ActorId partner; int count; int retry_every; int fail_at; int serve; };
struct RallyQuery { int unused; };
struct RallyResult { long long handled; long long violations; long long retries; int last; };
struct RK_ACTOR Rallyer {
  rk::ActorId partner;
  int count;
  int retry_every;
  int fail_at;
  int last;
  int retried;  // the ball handed back last
  long long handled;
  long long violations;
  long long retries;
  RK_HANDLER void on(const RallyPlay& p, rk::Ctx& ctx) {
    partner = p.partner;
    count = p.count;
    retry_every = p.retry_every;
    fail_at = p.fail_at;
    ctx.reply(RallyResult{handled, violations, retries, last});
    if (p.serve) ctx.send(partner, RallyBall{1});
  }
  RK_HANDLER void on(const RallyBall& b, rk::Ctx& ctx) {
    if (retry_every != 0 && b.n % retry_every == 0 && retried != b.n) {
      retried = b.n;
      ++retries;
      ctx.retry_later();
      return;
    }
    if (last != 0 && b.n != last + 2) ++violations;
    last = b.n;
    ++handled;
    if (b.n == fail_at) {
      ctx.fail(78);
      return;
    }
    if (b.n >= count) {
      ctx.send(rk::host(), RallyResult{handled, violations, retries, last});
      return;
    }
    ctx.send(partner, RallyBall{b.n + 1});
  }
  RK_HANDLER void on(const RallyQuery& q, rk::Ctx& ctx) { ctx.reply(RallyResult{handled, violations, retries, last}); }
};

// ---- A handler that takes as long as it is told, for the handler-time
// histograms (handler_times.h). ----
struct Wait { unsigned ns; };
struct RK_ACTOR Waiter {
  long long handled;
  RK_HANDLER void on(const Wait& w, rk::Ctx& ctx) {
    unsigned long long start;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    unsigned long long now = start;
    while (now - start < w.ns) asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    ++handled;
  }
};

// ---- A block handler whose sends come from a rank other than the leader
// (the timeline must record each of them). ----
struct Scatter { rk::ActorId to; int count; };
struct RK_ACTOR Scatterer {
  RK_BLOCK_HANDLER void on(const Scatter& s, rk::Ctx& ctx) {
    if (ctx.rank() == 1) {
      for (int i = 0; i < s.count; ++i) ctx.send(s.to, Drop{i});
    }
  }
};

// ---- An actor whose thread handler and block handler both send to one
// receiver, alternately (each step sends the next Seq, then asks itself for
// the next step by the other kind of handler): its sends stay in order
// whichever kind sent them. ----
struct AltStart { rk::ActorId to; int producer; int count; };
struct AltByThread { int unused; };
struct AltByBlock { int unused; };
struct RK_ACTOR Alternator {
  rk::ActorId to;
  int producer;
  int count;
  int next;
  int full;
  __device__ void Step(rk::Ctx& ctx) {
    if (next > count) {
      ctx.send(rk::host(), Produced{producer, count, full, 0});
      return;
    }
    if (ctx.send(to, Seq{producer, next}) == rk::SendStatus::kOk) {
      ++next;
    } else {
      ++full;
    }
    if (next % 2 == 0) {
      ctx.send(ctx.self(), AltByBlock{0});
    } else {
      ctx.send(ctx.self(), AltByThread{0});
    }
  }
  RK_HANDLER void on(const AltStart& s, rk::Ctx& ctx) {
    to = s.to;
    producer = s.producer;
    count = s.count;
    next = 1;
    Step(ctx);
  }
  RK_HANDLER void on(const AltByThread& m, rk::Ctx& ctx) { Step(ctx); }
  RK_BLOCK_HANDLER void on(const AltByBlock& m, rk::Ctx& ctx) {
    if (ctx.leader()) Step(ctx);
  }
};

// ---- Streams of block messages (block runs, rt_block.cuh): each
// TickSender sends its receiver ticks numbered 1, 2, ... as fast as the
// receiver's mailbox takes them: a TickMark (a thread handler) for every 8th
// number, and block-handler ticks of each shape a record can have for the
// others (the receiver's mailbox takes payloads over 256 bytes, so up to
// 128 bytes go inline and larger ones in the slot's plain area): a BTickTiny
// (inline, within the words read with the header), a BTickSmall (inline,
// past them), and plain ones: a BTickLarge (400 bytes), a BTick (248), a
// BTickHuge (1 KiB: a size that a block run copies into the block's inbox
// ahead of its round on sm_90) and a BTickOdd (532: large enough, but not
// whole 16-byte pieces, so read where it lies). The BlockTally checks each
// sender's numbers across the kinds; every rank checks its share of each
// block tick's words and counts its visit. ----
struct TickStart { rk::ActorId to; int producer; int count; };
struct TickMore { int unused; };
struct BTick { int producer; int n; unsigned words[60]; };
struct BTickTiny { int producer; int n; unsigned words[4]; };
struct BTickSmall { int producer; int n; unsigned words[20]; };
struct BTickLarge { int producer; int n; unsigned words[100]; };
struct BTickHuge { int producer; int n; unsigned words[254]; };
struct BTickOdd { int producer; int n; unsigned words[131]; };
struct TickMark { int producer; int n; };
struct TallyQuery { int unused; };
struct TallyReport {
  long long ticks;
  long long marks;
  long long rank_visits;
  long long violations;
  long long words_bad;
  int width;
};
__device__ inline unsigned TickWord(int n, unsigned i) { return static_cast<unsigned>(n) * 61u + i; }
// Fills the block tick of type T numbered n from `producer` and sends it.
template <class T>
__device__ rk::SendStatus SendTick(rk::Ctx& ctx, rk::ActorId to, T& t, int producer, int n) {
  t.producer = producer;
  t.n = n;
  for (unsigned i = 0; i < sizeof(t.words) / sizeof(t.words[0]); ++i) t.words[i] = TickWord(n, i);
  return ctx.send(to, t);
}
struct RK_ACTOR TickSender {
  // Sent from the state.
  BTick tick;
  BTickTiny tiny;
  BTickSmall small;
  BTickLarge large;
  BTickHuge huge;
  BTickOdd odd;
  rk::ActorId to;
  int producer;
  int count;
  int next;
  int full;
  __device__ void Pump(rk::Ctx& ctx) {
    while (next <= count) {
      rk::SendStatus s;
      switch (next % 8) {
        case 0: s = ctx.send(to, TickMark{producer, next}); break;
        case 2: s = SendTick(ctx, to, tiny, producer, next); break;
        case 4: s = SendTick(ctx, to, small, producer, next); break;
        case 6: s = SendTick(ctx, to, large, producer, next); break;
        case 3: s = SendTick(ctx, to, huge, producer, next); break;
        case 7: s = SendTick(ctx, to, odd, producer, next); break;
        default: s = SendTick(ctx, to, tick, producer, next); break;
      }
      if (s == rk::SendStatus::kFull) {
        ++full;
        ctx.send(ctx.self(), TickMore{0});
        return;
      }
      if (s != rk::SendStatus::kOk) {
        ctx.fail(81);
        return;
      }
      ++next;
    }
    ctx.send(rk::host(), Produced{producer, count, full, 0});
  }
  RK_HANDLER void on(const TickStart& s, rk::Ctx& ctx) {
    to = s.to;
    producer = s.producer;
    count = s.count;
    next = 1;
    Pump(ctx);
  }
  RK_HANDLER void on(const TickMore& m, rk::Ctx& ctx) { Pump(ctx); }
};
struct RK_ACTOR BlockTally {
  int last[8];
  long long ticks;
  long long marks;
  long long rank_visits;
  long long violations;
  long long words_bad;
  int width;
  __device__ void Check(int producer, int n) {
    if (producer < 0 || producer >= 8 || n != last[producer] + 1) {
      ++violations;
    } else {
      last[producer] = n;
    }
  }
  template <class T>
  __device__ void Tick(const T& t, rk::Ctx& ctx) {
    constexpr unsigned kWords = sizeof(t.words) / sizeof(t.words[0]);
    atomicAdd(reinterpret_cast<unsigned long long*>(&rank_visits), 1ull);
    unsigned long long bad = 0;
    for (unsigned i = ctx.rank(); i < kWords; i += ctx.width()) bad += t.words[i] != TickWord(t.n, i);
    if (bad != 0) atomicAdd(reinterpret_cast<unsigned long long*>(&words_bad), bad);
    if (ctx.leader()) {
      Check(t.producer, t.n);
      ++ticks;
      width = static_cast<int>(ctx.width());
    }
  }
  RK_BLOCK_HANDLER void on(const BTick& t, rk::Ctx& ctx) { Tick(t, ctx); }
  RK_BLOCK_HANDLER void on(const BTickTiny& t, rk::Ctx& ctx) { Tick(t, ctx); }
  RK_BLOCK_HANDLER void on(const BTickSmall& t, rk::Ctx& ctx) { Tick(t, ctx); }
  RK_BLOCK_HANDLER void on(const BTickLarge& t, rk::Ctx& ctx) { Tick(t, ctx); }
  RK_BLOCK_HANDLER void on(const BTickHuge& t, rk::Ctx& ctx) { Tick(t, ctx); }
  RK_BLOCK_HANDLER void on(const BTickOdd& t, rk::Ctx& ctx) { Tick(t, ctx); }
  RK_HANDLER void on(const TickMark& m, rk::Ctx& ctx) {
    Check(m.producer, m.n);
    ++marks;
  }
  RK_HANDLER void on(const TallyQuery& q, rk::Ctx& ctx) {
    ctx.reply(TallyReport{ticks, marks, rank_visits, violations, words_bad, width});
  }
};

// ---- Large payloads between actors, in MixChecker's numbering: from the
// sender's state (device memory, which the tensor memory accelerator copies
// on sm_90, bulk_copy.h) and from its stack (which it cannot: copied by the
// thread), with ctx.retry_later on kFull. ----
struct SendLarge { rk::ActorId to; int count; };
struct LargeSent { int sent; int retries; };
struct RK_ACTOR LargeSender {
  Huge huge;  // first: the state's start is 16-byte aligned
  Large large;
  int started;
  rk::ActorId to;
  int count;
  int next;
  int retries;
  template <class M>
  __device__ static void Fill(M& m, int n, int cap) {
    m.n = n;
    m.len = (n * 37) % (cap + 1);
    for (int i = 0; i < cap; ++i) m.bytes[i] = static_cast<unsigned char>(n * 7 + i);
  }
  RK_HANDLER void on(const SendLarge& p, rk::Ctx& ctx) {
    if (!started) {
      started = 1;
      to = p.to;
      count = p.count;
    }
    while (next < count) {
      const int n = next + 1;
      rk::SendStatus s;
      if (n % 3 == 0) {
        Fill(huge, n, 4088);
        s = ctx.send(to, huge);
      } else if (n % 3 == 1) {
        Fill(large, n, 400);
        s = ctx.send(to, large);
      } else {
        Large local;
        Fill(local, n, 400);
        s = ctx.send(to, local);
      }
      if (s == rk::SendStatus::kFull) {
        ++retries;
        ctx.retry_later();
        return;
      }
      ++next;
    }
    ctx.send(rk::host(), LargeSent{next, retries});
  }
};
