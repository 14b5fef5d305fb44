// pingpong.cu — two actors of one type rally a ball back and forth, actor to
// actor on the GPU (K2K), and tell the host when the rally is over.
#include <ringkernel/actor.cuh>

// From the host: start a rally of `exchanges` hits (the serve included)
// with `partner`.
struct Serve { rk::ActorId partner; int exchanges; };
// Between the players: hits still to come, hits so far.
struct Ball { int remaining; int hits; unsigned long long served_at; };
// To the host, from the player who made the last hit.
struct RallyOver {
  rk::ActorId last_hitter;
  int hits;
  unsigned long long served_at;  // HLC of the serve
  unsigned long long ended_at;   // HLC of the last hit: later than served_at
};

struct RK_ACTOR Player {
  int hits;

  RK_HANDLER void on(const Serve& s, rk::Ctx& ctx) {
    ++hits;  // the serve is the rally's first hit
    if (s.exchanges <= 1) {
      ctx.send(rk::host(), RallyOver{ctx.self(), 1, ctx.now(), ctx.now()});
      return;
    }
    ctx.send(s.partner, Ball{s.exchanges - 1, 1, ctx.now()});
  }

  RK_HANDLER void on(const Ball& b, rk::Ctx& ctx) {
    ++hits;
    if (b.remaining <= 1) {
      ctx.send(rk::host(), RallyOver{ctx.self(), b.hits + 1, b.served_at, ctx.now()});
    } else {
      ctx.reply(Ball{b.remaining - 1, b.hits + 1, b.served_at});
    }
  }
};
