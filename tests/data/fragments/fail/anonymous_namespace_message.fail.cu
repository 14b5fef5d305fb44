namespace {
struct Secret { int code; };  // expected-error:8: message '(anonymous namespace)::Secret' is declared in an anonymous namespace
}  // namespace

struct RK_ACTOR Vault {
  int last;
  RK_HANDLER void on(const Secret& s, rk::Ctx&) { last = s.code; }
};
