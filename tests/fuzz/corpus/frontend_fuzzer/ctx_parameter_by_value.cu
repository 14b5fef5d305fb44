struct M { int n; };
struct RK_ACTOR A {
  int n;
  RK_HANDLER void on(const M& m, rk::Ctx ctx) {}
};
