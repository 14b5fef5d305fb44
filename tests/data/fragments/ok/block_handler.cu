// A block handler: every thread of the worker block runs it.
struct Samples {
  float values[256];
  unsigned count;
};
struct Sum { float total; };

struct RK_ACTOR Reducer {
  float last;

  RK_BLOCK_HANDLER void on(const Samples& s, rk::Ctx& ctx) {
    float* partial = ctx.scratch<float>();
    float acc = 0.0f;
    for (unsigned i = ctx.rank(); i < s.count; i += ctx.width()) acc += s.values[i];
    partial[ctx.rank()] = acc;
    ctx.sync();
    if (ctx.leader()) {
      float total = 0.0f;
      for (unsigned i = 0; i < ctx.width(); ++i) total += partial[i];
      last = total;
      ctx.reply(Sum{total});
    }
  }

  RK_HANDLER void on(const Sum& s, rk::Ctx&) { last = s.total; }
};
