// tally.cu — the handlers of examples/embed: counters that add what they are
// sent and answer with their totals, and a relay that forwards to one of
// them from inside the GPU (K2K).
#include <ringkernel/actor.cuh>

struct Add { long long amount; };
struct Total { int unused; };
struct Totals { long long sum; long long count; };
struct Forward { rk::ActorId to; long long amount; };

struct RK_ACTOR Counter {
  long long sum = 0;
  long long count = 0;
  RK_HANDLER void on(const Add& m, rk::Ctx& ctx) {
    sum += m.amount;
    ++count;
  }
  RK_HANDLER void on(const Total& q, rk::Ctx& ctx) { ctx.reply(Totals{sum, count}); }
};

struct RK_ACTOR Relay {
  RK_HANDLER void on(const Forward& f, rk::Ctx& ctx) { ctx.send(f.to, Add{f.amount}); }
};
