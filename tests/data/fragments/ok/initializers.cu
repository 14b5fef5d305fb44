// Actor state that needs more than zeroing, and state that does not.
struct Tick { int n; };

struct Stats {
  long long count = 0;
  float mean;
};

struct Seeded {
  unsigned seed;
  Seeded() : seed(42) {}
};

// A default member initialiser of its own.
struct RK_ACTOR Counter {
  int step = 1;
  long long total;
  RK_HANDLER void on(const Tick& t, rk::Ctx&) { total += t.n * step; }
};

// An initialiser in the type of an array field.
struct RK_ACTOR Averager {
  Stats stats[4];
  RK_HANDLER void on(const Tick& t, rk::Ctx&) { stats[0].count += t.n; }
};

// A field whose type has a user-provided default constructor.
struct RK_ACTOR Random {
  Seeded rng;
  RK_HANDLER void on(const Tick& t, rk::Ctx&) { rng.seed ^= t.n; }
};

// Brace initialisers count too.
struct RK_ACTOR Braced {
  int window[3]{};
  RK_HANDLER void on(const Tick& t, rk::Ctx&) { window[0] = t.n; }
};

// Nothing to run: zeroing is enough (a defaulted constructor, pointers and
// bit-fields are fine in actor state).
struct RK_ACTOR Plain {
  int a;
  Stats* p;
  unsigned flag : 1;
  Plain() = default;
  RK_HANDLER void on(const Tick& t, rk::Ctx&) { a += t.n; }
};
