struct Precise {
  long double value;  // expected-error:15: field 'value' of 'Precise' has type 'long double', which a message cannot hold
};

struct RK_ACTOR Lab {
  double last;
  RK_HANDLER void on(const Precise& p, rk::Ctx&) { last = static_cast<double>(p.value); }
};
