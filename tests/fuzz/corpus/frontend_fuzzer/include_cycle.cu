#include "a.h"
struct RK_ACTOR Loop { int n; RK_HANDLER void on(const A& m, rk::Ctx&) { n += m.x; } };
// file: a.h
#include "b.h"
struct A { int x; };
// file: b.h
#include "a.h"
