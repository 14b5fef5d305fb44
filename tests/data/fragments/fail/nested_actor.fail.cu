struct Ping { int n; };

struct Outer {
  struct RK_ACTOR Inner {  // expected-error:19: actor 'Outer::Inner' is declared inside 'Outer'
    int count;
    RK_HANDLER void on(const Ping& p, rk::Ctx&) { count += p.n; }
  };
};
