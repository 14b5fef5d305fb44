struct RK_ACTOR Idle {  // expected-error:17: actor 'Idle' has no handlers
  int state;
  void on_nothing() { state = 0; }
};
