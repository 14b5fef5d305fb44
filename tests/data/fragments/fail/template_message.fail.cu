template <class T>
struct Box { T value; };

struct RK_ACTOR Shelf {
  int stored;
  RK_HANDLER void on(const Box<int>& b, rk::Ctx&) { stored = b.value; }  // expected-error:22: message type 'Box<int>' is a template specialization
};
