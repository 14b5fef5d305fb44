// Pointers mean nothing to the receiver.
struct Buffer {
  int length;
  const char* data;  // expected-error: field 'data' of 'Buffer' has type 'const char *', which a message cannot hold
};

struct RK_ACTOR Sink {
  int bytes;
  RK_HANDLER void on(const Buffer& b, rk::Ctx&) { bytes += b.length; }
};
