struct Ping { int n; };

struct RK_ACTOR Echo {
  int count;
  RK_HANDLER static void on(const Ping& p, rk::Ctx&) {}  // expected-error:26: handler 'on' must not be static
};
