struct Ping { int n; };

struct RK_ACTOR Relay {
  const char* names[2];
  RK_HANDLER void on(const Ping& p, rk::Ctx& ctx) {
    ctx.send(rk::route(names[p.n & 1]), p);  // expected-error:24: route names must be string literals
  }
};
