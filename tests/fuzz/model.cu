// The fixed program that script_fuzzer and message_codec_fuzzer check their
// inputs against (fuzz_model.cc parses it with the front-end once, at
// start-up). Its messages hold every kind of field the codec knows: each
// integer width, floats, bool, char and char arrays, enums, nested structs,
// multi-dimensional arrays and rk::ActorId. The corpora's scripts and
// messages name these actors, types and fields.
#include <ringkernel/actor.cuh>

namespace market {
enum class Side : unsigned char { kBuy = 0, kSell = 1 };
}  // namespace market
enum Level : long long { kLow = -1, kHigh = 1000000000000 };

struct Vec2 {
  float x;
  float y;
};

struct Box {
  Vec2 corners[2];
  rk::ActorId owner;
};

struct Order {
  market::Side side;
  Level level;
  bool urgent;
  char tag;
  signed char i8;
  unsigned char u8;
  short i16;
  unsigned short u16;
  int i32;
  unsigned int u32;
  long long i64;
  unsigned long long u64;
  float f32;
  double f64;
  rk::ActorId who;
  Vec2 pos;
};

struct Arrays {
  short grid[2][3];
  char name[8];
  char names[2][4];
  Vec2 path[2];
  rk::ActorId peers[2];
  unsigned char raw[3];
};

struct Nested {
  signed char tag;
  Vec2 at;
  Box box;
};

struct Ping {
  int n;
};

struct RK_ACTOR Book {
  long long orders;

  RK_HANDLER void on(const Order& o, rk::Ctx& ctx) {
    ++orders;
    if (o.urgent) ctx.send(rk::route("audit"), Ping{o.i32});
  }
  RK_HANDLER void on(const Arrays& a, rk::Ctx& ctx) { ctx.reply(Ping{a.grid[1][2]}); }
  RK_HANDLER void on(const Nested& n, rk::Ctx& ctx) { ctx.send(n.box.owner, Ping{n.tag}); }
};

struct RK_ACTOR Auditor {
  int pings;

  RK_HANDLER void on(const Ping& p, rk::Ctx& ctx) {
    pings += p.n;
    ctx.send(rk::host(), p);
  }
};
