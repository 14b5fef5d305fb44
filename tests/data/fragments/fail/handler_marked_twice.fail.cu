struct Ping { int n; };

struct RK_ACTOR Echo {
  int count;
  RK_HANDLER RK_BLOCK_HANDLER void on(const Ping& p, rk::Ctx&) { count += p.n; }  // expected-error:36: 'on' is marked both RK_HANDLER and RK_BLOCK_HANDLER
};
