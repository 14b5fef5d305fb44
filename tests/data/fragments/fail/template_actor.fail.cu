struct Ping { int n; };

template <class T>
struct RK_ACTOR Accumulator {  // expected-error:17: actor 'Accumulator' is a template
  T total;
  RK_HANDLER void on(const Ping& p, rk::Ctx&) { total += p.n; }
};
