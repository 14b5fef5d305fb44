template <int N> struct Deep { Deep<N + 1> next; };
struct RK_MESSAGE Start { Deep<0> d; };
struct RK_ACTOR Recurse { int n; RK_HANDLER void on(const Start&, rk::Ctx&) {} };
