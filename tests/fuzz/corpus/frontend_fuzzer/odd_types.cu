#include <ringkernel/actor.cuh>
typedef struct { int a; } Anonymous;
enum : long long { kBig = 0x7fffffffffffffffLL };
enum class Wide : unsigned long long { kMax = 18446744073709551615ull };
struct __attribute__((packed)) Packed { char c; long long v; };
struct alignas(16) Aligned { char c; };
struct Message { Wide w; Anonymous a; Packed p; Aligned al[3]; bool flags[2][2]; rk::ActorId ids[1]; };
struct RK_ACTOR Odd {
  Aligned state[4] = {};
  RK_HANDLER void on(const Message& m, rk::Ctx& ctx) { ctx.reply(m); }
  RK_BLOCK_HANDLER void on(const Aligned& a, rk::Ctx& ctx) { ctx.sync(); }
};
