struct Ping { int n; };

struct RK_ACTOR Account {  // expected-error:17: actor 'Account' must be default-constructible, but 'Account' has constructors but no default constructor
  long long balance;
  explicit Account(long long opening) : balance(opening) {}
  RK_HANDLER void on(const Ping& p, rk::Ctx&) { balance += p.n; }
};
