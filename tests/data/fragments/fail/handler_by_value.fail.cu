struct Ping { int n; };

struct RK_ACTOR Echo {
  int count;
  RK_HANDLER void on(Ping p, rk::Ctx&) { count += p.n; }  // expected-error:22: the message parameter of a handler must be 'const M&', but 'on' takes 'Ping'
};
