// Messages found through ctx.send are checked like handler parameters.
struct Ping { int n; };
struct Log {
  int level;
  Log& operator=(const Log& other) { level = other.level; return *this; }  // expected-error: message 'Log' is not trivially copyable: it has a user-provided copy assignment operator
};

struct RK_ACTOR Logger {
  int count;
  RK_HANDLER void on(const Ping& p, rk::Ctx& ctx) {
    ctx.send(rk::host(), Log{p.n});  // expected-note: used as a message: sent here
  }
};
