struct Ping { int n; };

struct RK_ACTOR Echo {
  int count;
  template <class M>
  RK_HANDLER void on(const M& m, rk::Ctx&) { count += m.n; }  // expected-error:19: handler 'on' is a template
  RK_HANDLER void on(const Ping& p, rk::Ctx&) { count -= p.n; }
};
