struct Ping { int n; };
RK_MESSAGE int MakePing();  // expected-error:16: RK_MESSAGE marks the function 'MakePing': only a struct or class can be a message

struct RK_ACTOR Echo {
  int count;
  RK_HANDLER void on(const Ping& p, rk::Ctx&) { count += p.n; }
};
