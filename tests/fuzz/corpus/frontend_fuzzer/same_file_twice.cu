struct RK_ACTOR A { int n; RK_HANDLER void on(const int& m, rk::Ctx&) {} };
// file: fuzz.cu
struct Ping { int n; };
