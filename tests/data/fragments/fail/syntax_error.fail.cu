// A missing semicolon.
struct Deposit { int account; long long cents; };

struct RK_ACTOR Bank {
  long long total;
  RK_HANDLER void on(const Deposit& m, rk::Ctx& ctx) {
    total += m.cents  // expected-error:21: expected ';' after expression
  }
};
