struct Ping { int n; };

struct Echo {
  int count;
  RK_HANDLER void on(const Ping& p, rk::Ctx&) { count += p.n; }  // expected-error:19: RK_HANDLER marks 'Echo::on', but 'Echo' is not an actor: mark it RK_ACTOR
};
