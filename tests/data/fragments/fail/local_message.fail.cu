struct Ping { int n; };

struct RK_ACTOR Echo {
  int count;
  RK_HANDLER void on(const Ping& p, rk::Ctx& ctx) {
    struct Pong { int n; };  // expected-error:12: message 'Echo::on::Pong' is declared inside the function 'on'
    ctx.reply(Pong{p.n});  // expected-note: used as a message: replied here
  }
};
