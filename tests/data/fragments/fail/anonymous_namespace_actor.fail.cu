struct Ping { int n; };

namespace {
struct RK_ACTOR Hidden {  // expected-error:17: actor '(anonymous namespace)::Hidden' is declared in an anonymous namespace
  int count;
  RK_HANDLER void on(const Ping& p, rk::Ctx&) { count += p.n; }
};
}  // namespace
