#include <vector>  // expected-error:10: cannot include <vector>: handler fragments are compiled by NVRTC, without the C++ standard library

struct Ping { int n; };

struct RK_ACTOR Echo {
  int count;
  RK_HANDLER void on(const Ping& p, rk::Ctx&) { count += p.n; }
};
