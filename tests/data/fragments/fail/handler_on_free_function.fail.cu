struct Ping { int n; };

RK_HANDLER void on(const Ping& p, rk::Ctx&) {}  // expected-error:17: RK_HANDLER marks the function 'on', but only a method of an RK_ACTOR struct can be a handler
