struct Header { int kind; };
struct Packet : Header {  // expected-error:17: 'Packet' derives from 'Header': messages and the structs in them may not have base classes
  int length;
};

struct RK_ACTOR Nic {
  int bytes;
  RK_HANDLER void on(const Packet& p, rk::Ctx&) { bytes += p.length; }
};
