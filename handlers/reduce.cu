// reduce.cu — a block collective: every thread of the actor's worker block
// sums part of a chunk, the block combines the parts in shared memory, and
// one thread replies. Needs SystemOptions::scratch_bytes >= 4 × threads per
// block (actorc run: "scratch_bytes" in the script's options line).
#include <ringkernel/actor.cuh>

struct Chunk { int n; float values[64]; };
struct Sum { int n; float total; double running_total; };

struct RK_ACTOR Reducer {
  double running_total;
  long long chunks;

  RK_BLOCK_HANDLER void on(const Chunk& c, rk::Ctx& ctx) {
    float* partial = ctx.scratch<float>();
    const int n = c.n < 64 ? c.n : 64;
    float v = 0.0f;
    for (int i = static_cast<int>(ctx.rank()); i < n; i += static_cast<int>(ctx.width())) v += c.values[i];
    partial[ctx.rank()] = v;
    ctx.sync();
    // Tree reduction over the block (its width is a power of two).
    for (unsigned stride = ctx.width() / 2; stride > 0; stride /= 2) {
      if (ctx.rank() < stride) partial[ctx.rank()] += partial[ctx.rank() + stride];
      ctx.sync();
    }
    if (ctx.leader()) {
      running_total += partial[0];
      ++chunks;
      ctx.reply(Sum{n, partial[0], running_total});
    }
  }
};
