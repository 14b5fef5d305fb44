struct Lamp {
  enum { kOff, kOn } state;  // expected-error:22: field 'state' of 'Lamp' has an enum type without a name
};

struct RK_ACTOR Switchboard {
  int lit;
  RK_HANDLER void on(const Lamp& l, rk::Ctx& ctx) { lit += l.state; }
};
