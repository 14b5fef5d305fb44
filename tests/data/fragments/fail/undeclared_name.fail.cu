// A name nobody declared, reported at its line and column.
struct Deposit { int account; long long cents; };

struct RK_ACTOR Bank {
  long long total;
  RK_HANDLER void on(const Deposit& m, rk::Ctx& ctx) {
    total += m.cents * exchange_rate;  // expected-error:24: use of undeclared identifier 'exchange_rate'
  }
};
