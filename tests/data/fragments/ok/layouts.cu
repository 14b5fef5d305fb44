// Messages with nested structs, arrays, multi-dimensional arrays, enums,
// rk::ActorId fields and char arrays, in a namespace and not.
#include "layout_types.h"

struct RK_ACTOR Plotter {
  int shapes;
  RK_HANDLER void on(const Envelope& e, rk::Ctx& ctx) {
    shapes += e.hops;
    ctx.send(ctx.sender(), geo::Point{e.from.x * 2, e.from.y * 2});
  }
};
