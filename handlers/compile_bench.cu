// compile_bench.cu — a ten-handler program for rkbench's compile-time
// experiment (`rkbench --experiment jit`): a small order book with enough
// variety (loops, sends, replies, routes, a block handler) to be typical.
#include <ringkernel/actor.cuh>

struct Order { int id; int side; long long price; long long quantity; };
struct Cancel { int id; };
struct Fill { int id; long long price; long long quantity; };
struct Snapshot { int levels; };
struct Book { int bids; int asks; long long best_bid; long long best_ask; };
struct Tick { long long price; };
struct Stats { int unused; };
struct StatsReply { long long orders; long long fills; long long cancels; double vwap; };
struct Reset { int unused; };
struct Audit { int id; long long price; };
struct Batch { long long prices[32]; int n; };
struct BatchSum { long long total; };

struct RK_ACTOR OrderBook {
  long long bid_price[64];
  long long bid_qty[64];
  long long ask_price[64];
  long long ask_qty[64];
  int bids;
  int asks;
  long long orders;
  long long fills;
  long long cancels;
  double notional = 0.0;
  double volume = 0.0;

  RK_HANDLER void on(const Order& o, rk::Ctx& ctx) {
    ++orders;
    if (o.side == 0) {
      for (int i = 0; i < asks; ++i) {
        if (ask_price[i] <= o.price && ask_qty[i] > 0) {
          const long long q = ask_qty[i] < o.quantity ? ask_qty[i] : o.quantity;
          ask_qty[i] -= q;
          ++fills;
          notional += static_cast<double>(q) * static_cast<double>(ask_price[i]);
          volume += static_cast<double>(q);
          ctx.reply(Fill{o.id, ask_price[i], q});
          return;
        }
      }
      if (bids < 64) { bid_price[bids] = o.price; bid_qty[bids] = o.quantity; ++bids; }
    } else {
      for (int i = 0; i < bids; ++i) {
        if (bid_price[i] >= o.price && bid_qty[i] > 0) {
          const long long q = bid_qty[i] < o.quantity ? bid_qty[i] : o.quantity;
          bid_qty[i] -= q;
          ++fills;
          ctx.reply(Fill{o.id, bid_price[i], q});
          return;
        }
      }
      if (asks < 64) { ask_price[asks] = o.price; ask_qty[asks] = o.quantity; ++asks; }
    }
  }
  RK_HANDLER void on(const Cancel& c, rk::Ctx& ctx) {
    ++cancels;
    ctx.send(rk::route("audit"), Audit{c.id, 0});
  }
  RK_HANDLER void on(const Snapshot& s, rk::Ctx& ctx) {
    long long bb = 0, ba = 0;
    for (int i = 0; i < bids; ++i) bb = bid_price[i] > bb ? bid_price[i] : bb;
    for (int i = 0; i < asks; ++i) ba = (ba == 0 || ask_price[i] < ba) ? ask_price[i] : ba;
    ctx.reply(Book{bids, asks, bb, ba});
  }
  RK_HANDLER void on(const Stats& s, rk::Ctx& ctx) {
    ctx.reply(StatsReply{orders, fills, cancels, volume > 0 ? notional / volume : 0.0});
  }
  RK_HANDLER void on(const Reset& r, rk::Ctx& ctx) {
    bids = asks = 0;
    orders = fills = cancels = 0;
    notional = volume = 0.0;
  }
};

struct RK_ACTOR Ticker {
  long long last;
  long long high;
  long long low;
  RK_HANDLER void on(const Tick& t, rk::Ctx& ctx) {
    last = t.price;
    if (t.price > high) high = t.price;
    if (low == 0 || t.price < low) low = t.price;
  }
  RK_HANDLER void on(const Fill& f, rk::Ctx& ctx) { ctx.send(rk::host(), Tick{f.price}); }
  RK_HANDLER void on(const Reset& r, rk::Ctx& ctx) { last = high = low = 0; }
};

struct RK_ACTOR Auditor {
  long long audits;
  RK_HANDLER void on(const Audit& a, rk::Ctx& ctx) {
    ++audits;
    ctx.send(rk::host(), a);
  }
};

struct RK_ACTOR Summer {
  RK_BLOCK_HANDLER void on(const Batch& b, rk::Ctx& ctx) {
    long long* part = ctx.scratch<long long>();
    long long v = 0;
    for (int i = static_cast<int>(ctx.rank()); i < b.n && i < 32; i += static_cast<int>(ctx.width())) v += b.prices[i];
    part[ctx.rank()] = v;
    ctx.sync();
    if (ctx.leader()) {
      long long t = 0;
      for (unsigned i = 0; i < ctx.width(); ++i) t += part[i];
      ctx.reply(BatchSum{t});
    }
  }
};
