struct Ping { int n; };

struct RK_ACTOR Echo {
  int count;
  RK_HANDLER int on(const Ping& p, rk::Ctx&) { return count += p.n; }  // expected-error:18: a handler must return void, but 'on' returns 'int'
};
