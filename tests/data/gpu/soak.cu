// Actors of the soak test (tests/soak_gpu_test.cc): sinks that count what
// they handle per source and check each source's order, and producers that
// keep K2K traffic flowing into them — by id, and through the route "soak"
// that the host rebinds — waiting for room with ctx.retry_later.
//
// Every message a sink or a producer handles starts with the same header:
// its source (a small number the host assigns: a host thread, the chaos
// thread, a producer), its kind, and its sequence number in its source's
// stream, which rises with every message the source got accepted. So each
// message can be accounted for exactly once: handled (counted here, per
// source and per kind), dead-lettered (the dead letter carries the bytes,
// header included) or refused at its send (counted by its sender).
#include <ringkernel/actor.cuh>

namespace soak {

constexpr int kSources = 16;  // host threads 0-3, chaos 4, the main thread 5, producers 8-15
constexpr int kKinds = 8;
constexpr int kSlots = 16;  // sink slots a producer sends to

enum class Kind : int {
  kTally = 0,     // TallyQuery: the main thread asks a sink for its counts
  kHostSend = 1,  // Work: host thread -> sink (Send)
  kHostAsk = 2,   // Query: host thread -> sink (Ask)
  kK2k = 3,       // Work: producer -> sink, by id
  kRoute = 4,     // Work: producer -> sink, through the route "soak"
  kDie = 5,       // Die: chaos thread -> sink
  kPump = 6,      // Pump: producer -> itself
  kControl = 7,   // Start, Retarget, Halt, ProducerQuery: host -> producer
};

struct Work { int src; Kind kind; long long seq; };
// mode 0: the sink replies Answer; mode 1: it never replies.
struct Query { int src; Kind kind; long long seq; int mode; int pad; };
struct Answer { long long seq; unsigned sink; int pad; };
struct Die { int src; Kind kind; long long seq; unsigned code; int pad; };
struct TallyQuery { int src; Kind kind; long long seq; };

// What a sink handled: per source, how many messages and the sum of their
// sequence numbers; per kind, how many.
struct Tally {
  unsigned sink;
  int died;              // 1: sent to the host by Die, just before ctx.fail
  long long handled;     // every message it handled (the runtime counts the same)
  long long violations;  // messages whose sequence number was not above the last from their source
  long long replied;     // Queries of mode 0 answered
  long long reply_full;  // replies and tallies that met kFull (and were retried)
  long long kinds[kKinds];
  long long count[kSources];
  unsigned long long sum[kSources];
};

struct RK_ACTOR Sink {
  long long last[kSources];
  Tally tally;

  // Adds one message to `t` (the tally, or a copy about to be sent).
  __device__ void Add(Tally& t, int src, Kind kind, long long seq) const {
    const int s = src & (kSources - 1);
    if (seq <= last[s]) ++t.violations;
    ++t.count[s];
    t.sum[s] += static_cast<unsigned long long>(seq);
    ++t.kinds[static_cast<int>(kind) & (kKinds - 1)];
    ++t.handled;
  }
  __device__ void Count(int src, Kind kind, long long seq) {
    Add(tally, src, kind, seq);
    last[src & (kSources - 1)] = seq;
  }

  RK_HANDLER void on(const Work& m, rk::Ctx& ctx) { Count(m.src, m.kind, m.seq); }

  // A reply that meets a full ring back is retried (ctx.retry_later), and
  // the message counted only once it went out.
  RK_HANDLER void on(const Query& q, rk::Ctx& ctx) {
    if (q.mode == 0) {
      if (ctx.reply(Answer{q.seq, ctx.self().value, 0}) == rk::SendStatus::kFull) {
        ++tally.reply_full;
        ctx.retry_later();
        return;
      }
      ++tally.replied;
    }
    Count(q.src, q.kind, q.seq);
  }

  // Tells the host what it handled, this message included, then fails.
  RK_HANDLER void on(const Die& d, rk::Ctx& ctx) {
    Tally out = tally;
    Add(out, d.src, d.kind, d.seq);
    out.sink = ctx.self().value;
    out.died = 1;
    if (ctx.send(rk::host(), out) == rk::SendStatus::kFull) {
      ++tally.reply_full;
      ctx.retry_later();
      return;
    }
    Count(d.src, d.kind, d.seq);
    ctx.fail(d.code);
  }

  RK_HANDLER void on(const TallyQuery& q, rk::Ctx& ctx) {
    Tally out = tally;
    Add(out, q.src, q.kind, q.seq);
    out.sink = ctx.self().value;
    out.died = 0;
    if (ctx.reply(out) == rk::SendStatus::kFull) {
      ++tally.reply_full;
      ctx.retry_later();
      return;
    }
    Count(q.src, q.kind, q.seq);
  }
};

// ---- Producers. ----
struct Start {
  int src;
  Kind kind;
  long long seq;
  int id;     // its source number
  int burst;  // sends per Pump
  int slots;  // targets in use
  int pad;
  rk::ActorId targets[kSlots];
};
struct Retarget { int src; Kind kind; long long seq; int slot; rk::ActorId to; };
struct Pump { int src; Kind kind; long long seq; };
struct Halt { int src; Kind kind; long long seq; };
struct ProducerQuery { int src; Kind kind; long long seq; };
struct Produced {
  unsigned producer;
  int running;
  long long handled;        // every message it handled (the runtime counts the same)
  long long seq;            // its Work accepted so far, numbered 1..seq
  long long sent[kKinds];   // sends accepted, per kind (kK2k, kRoute, kPump)
  long long kinds[kKinds];  // messages handled, per kind
  long long full;           // sends that met kFull, each followed by ctx.retry_later
  long long no_actor;       // sends that met kNoActor: a failed sink, the route unbound
  long long other;          // any other refusal (none expected)
};

// Sends `burst` Works per Pump, three by id (round robin over its slots)
// and every fourth through the route, then a Pump to itself to go on.
// kFull hands the Pump back (ctx.retry_later): it resumes where it stopped
// once the worker's other actors had their turn — with the sends of its
// burst that went out already counted (`in_burst`), so a Pump ends after
// `burst` sends in all. (A retried Pump that began its burst again would
// need `burst` sends in a row without kFull: while every producer keeps
// the sinks full, that can take longer than any deadline, and a host
// message — a Halt — waits behind the Pump at the head of the mailbox.)
struct RK_ACTOR Producer {
  int id;
  int running;
  int burst;
  int slots;
  int in_burst;  // sends of the current Pump's burst that went out (kOk or refused for good)
  unsigned attempt;
  unsigned rr;
  rk::ActorId targets[kSlots];
  Produced p;

  __device__ void Handled(Kind kind) {
    ++p.kinds[static_cast<int>(kind) & (kKinds - 1)];
    ++p.handled;
  }
  // A reply of its counters, this message included; false when it must be
  // retried.
  __device__ bool Report(rk::Ctx& ctx, Kind kind) {
    Produced out = p;
    ++out.kinds[static_cast<int>(kind) & (kKinds - 1)];
    ++out.handled;
    out.producer = ctx.self().value;
    out.running = running;
    if (ctx.reply(out) == rk::SendStatus::kFull) {
      ++p.full;
      ctx.retry_later();
      return false;
    }
    Handled(kind);
    return true;
  }

  // Queues the next Pump to itself; on kFull asks for the current message
  // again (false: the handler returns with nothing more done).
  __device__ bool PumpAgain(rk::Ctx& ctx) {
    if (ctx.send(ctx.self(), Pump{id, Kind::kPump, p.sent[static_cast<int>(Kind::kPump)] + 1}) !=
        rk::SendStatus::kOk) {
      ++p.full;
      ctx.retry_later();
      return false;
    }
    ++p.sent[static_cast<int>(Kind::kPump)];
    return true;
  }

  RK_HANDLER void on(const Start& s, rk::Ctx& ctx) {
    id = s.id;
    burst = s.burst;
    slots = s.slots < 1 ? 1 : (s.slots > kSlots ? kSlots : s.slots);
    for (int i = 0; i < kSlots; ++i) targets[i] = s.targets[i];
    if (!PumpAgain(ctx)) return;
    running = 1;
    Handled(s.kind);
  }

  RK_HANDLER void on(const Retarget& r, rk::Ctx& ctx) {
    targets[r.slot & (kSlots - 1)] = r.to;
    Handled(r.kind);
  }

  RK_HANDLER void on(const Pump& m, rk::Ctx& ctx) {
    if (running) {
      for (; in_burst < burst; ++in_burst) {
        const bool via_route = attempt % 4 == 3;
        const Work w{id, via_route ? Kind::kRoute : Kind::kK2k, p.seq + 1};
        const rk::SendStatus s =
            via_route ? ctx.send(rk::route("soak"), w) : ctx.send(targets[rr % static_cast<unsigned>(slots)], w);
        if (s == rk::SendStatus::kFull) {
          ++p.full;
          ctx.retry_later();
          return;
        }
        ++attempt;
        if (!via_route) ++rr;
        if (s == rk::SendStatus::kOk) {
          ++p.seq;
          ++p.sent[static_cast<int>(w.kind)];
        } else if (s == rk::SendStatus::kNoActor) {
          ++p.no_actor;
        } else {
          ++p.other;
        }
      }
      // (A PumpAgain met with kFull retries only the Pump: the burst is
      // done.)
      if (!PumpAgain(ctx)) return;
      in_burst = 0;
    }
    Handled(m.kind);
  }

  // Stops pumping (the Pump already queued is still handled, and sends
  // nothing) and replies its counters.
  RK_HANDLER void on(const Halt& h, rk::Ctx& ctx) {
    running = 0;
    Report(ctx, h.kind);
  }

  RK_HANDLER void on(const ProducerQuery& q, rk::Ctx& ctx) { Report(ctx, q.kind); }
};

}  // namespace soak
