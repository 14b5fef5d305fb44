struct Ping { int n; };

struct RK_ACTOR Directory {
  int asked;
  RK_HANDLER void on(const Ping& p, rk::Ctx& ctx) {
    ctx.reply(ctx.self());  // expected-error:15: 'rk::ActorId' is declared by RingKernel, not by the program, and cannot be a message
  }
};
