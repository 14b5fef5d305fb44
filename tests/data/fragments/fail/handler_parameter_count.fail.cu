struct Ping { int n; };

struct RK_ACTOR Echo {
  int count;
  RK_HANDLER void on(const Ping& p) { count += p.n; }  // expected-error: a handler takes exactly two parameters, (const M&, rk::Ctx&), but 'on' has 1
};
