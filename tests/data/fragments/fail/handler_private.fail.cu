struct Ping { int n; };

class RK_ACTOR Echo {
  int count;
  RK_HANDLER void on(const Ping& p, rk::Ctx&) { count += p.n; }  // expected-error:19: handler 'on' must be public
};
