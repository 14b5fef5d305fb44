struct Flags {
  unsigned ready : 1;  // expected-error:12: field 'ready' of 'Flags' is a bit-field
  unsigned count;
};

struct RK_ACTOR Board {
  unsigned seen;
  RK_HANDLER void on(const Flags& f, rk::Ctx&) { seen += f.count; }
};
