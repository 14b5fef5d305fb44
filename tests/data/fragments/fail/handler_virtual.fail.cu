struct Ping { int n; };

struct RK_ACTOR Echo {
  int count;
  RK_HANDLER virtual void on(const Ping& p, rk::Ctx&) { count += p.n; }  // expected-error:27: handler 'on' must not be virtual
};
