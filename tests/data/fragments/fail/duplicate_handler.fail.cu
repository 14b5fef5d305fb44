struct Ping { int n; };

struct RK_ACTOR Echo {
  int count;
  RK_HANDLER void on(const Ping& p, rk::Ctx&) { count += p.n; }  // expected-note: the first handler for 'Ping' is here
  RK_HANDLER void again(const Ping& p, rk::Ctx&) { count -= p.n; }  // expected-error:19: actor 'Echo' has two handlers for message 'Ping'
};
