// The bank example of DESIGN.md.
#include <ringkernel/actor.cuh>

struct Deposit { int account; long long cents; };
struct Query   { int account; };
struct Balance { int account; long long cents; };

struct RK_ACTOR Bank {              // an actor type; its fields are the actor's state
  long long cents[64];

  RK_HANDLER void on(const Deposit& m, rk::Ctx& ctx) { cents[m.account & 63] += m.cents; }
  RK_HANDLER void on(const Query& q, rk::Ctx& ctx) {
    ctx.reply(Balance{q.account, cents[q.account & 63]});
  }
};
