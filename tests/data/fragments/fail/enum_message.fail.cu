enum class Command { kStart, kStop };

struct RK_ACTOR Machine {
  int running;
  RK_HANDLER void on(const Command& c, rk::Ctx&) { running = c == Command::kStart; }  // expected-error:22: message type 'Command' is an enum
};
