#include "no_such_header.h"  // expected-error:10: 'no_such_header.h' file not found

struct Ping { int n; };

struct RK_ACTOR Echo {
  int count;
  RK_HANDLER void on(const Ping& p, rk::Ctx&) { count += p.n; }
};
