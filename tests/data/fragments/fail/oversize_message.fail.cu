// options: --max-payload 64
struct Chunk {  // expected-error:8: message 'Chunk' is 132 bytes, larger than the max payload of 64 bytes (raise it with --max-payload)
  int length;
  char data[128];
};

struct RK_ACTOR Store {
  int total;
  RK_HANDLER void on(const Chunk& c, rk::Ctx&) { total += c.length; }
};
