// Several problems in one fragment are all reported.
struct Ping { int n; };
struct Bad { int* p; };  // expected-error:19: field 'p' of 'Bad' has type 'int *'

struct RK_ACTOR Echo {
  int count;
  RK_HANDLER void on(const Ping& p, rk::Ctx& ctx) {
    count += p.n + missing;  // expected-error:20: use of undeclared identifier 'missing'
    ctx.reply(Bad{nullptr});
  }
  RK_HANDLER int again(const Ping& p, rk::Ctx&) { return 0; }  // expected-error:18: a handler must return void
};
