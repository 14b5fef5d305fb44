struct Ping { int n; };

struct RK_ACTOR Echo {
  int count;
  RK_HANDLER void on(const Ping& p, const rk::Ctx& ctx) { count += p.n; }  // expected-error:37: the second parameter of a handler must be 'rk::Ctx&', but 'on' takes 'const rk::Ctx &'
};
