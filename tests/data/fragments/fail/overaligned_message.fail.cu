struct alignas(32) Line {  // expected-error:20: message 'Line' is aligned to 32 bytes; messages may be aligned to at most 16 bytes
  float values[8];
};

struct RK_ACTOR Cache {
  float first;
  RK_HANDLER void on(const Line& l, rk::Ctx&) { first = l.values[0]; }
};
