// Named routes: ids follow the sorted names; every use is recorded.
struct Event { int code; };

struct RK_ACTOR Router {
  int seen;
  RK_HANDLER void on(const Event& e, rk::Ctx& ctx) {
    ++seen;
    if (e.code > 0) ctx.send(rk::route("zeta"), e);
    ctx.send(rk::route("audit"), e);
    ctx.send(rk::route("audit"), Event{e.code + 1});
    ctx.send(rk::route(("metrics")), e);
  }
};
