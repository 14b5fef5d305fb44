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
// file: layout_types.h
// Message types with every kind of field. Included by layouts.cu and, with
// the host compiler, by frontend_test.cc, which checks the front-end's
// layouts against the host's offsetof and sizeof (the same on LP64 Linux and
// nvptx64 for these types).
#ifndef RINGKERNEL_TESTS_LAYOUT_TYPES_H_
#define RINGKERNEL_TESTS_LAYOUT_TYPES_H_

namespace geo {

enum class Quadrant : unsigned char { kNE, kNW, kSW, kSE };
enum Color { kRed, kGreen, kBlue };

struct Point {
  float x;
  float y;
};

struct Span {
  int lo;
  int hi;
};

// A message although no handler takes it.
struct RK_MESSAGE Shape {
  Point corners[4];
  Quadrant quadrant;
  Color color;
  char label[16];
  double grid[2][3];
  rk::ActorId owner;
  bool filled;
  short layer;
  unsigned short flags;
  signed char bias;
  unsigned char alpha;
  unsigned int id;
  long big;
  unsigned long long ubig;
  rk::ActorId watchers[2];
  Span range;
};

}  // namespace geo

class Envelope {
 public:
  geo::Point from;
  int hops;
  float weights[3][2][2];
};

#endif  // RINGKERNEL_TESTS_LAYOUT_TYPES_H_
