struct RK_ACTOR X { RK_HANDLER void on(const ÿþ& m, rk::Ctx&) {} };
#include ""
