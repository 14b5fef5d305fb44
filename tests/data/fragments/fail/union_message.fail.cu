union Value {  // expected-error:7: message type 'Value' is a union
  int i;
  float f;
};

struct RK_ACTOR Store {
  int last;
  RK_HANDLER void on(const Value& v, rk::Ctx&) { last = v.i; }
};
