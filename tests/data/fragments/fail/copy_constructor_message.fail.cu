// A user-provided copy constructor makes a message not trivially copyable.
struct Order {
  int id;
  Order() = default;
  Order(const Order& other) : id(other.id + 0) {}  // expected-error: message 'Order' is not trivially copyable: it has a user-provided copy constructor
};

struct RK_ACTOR Shop {
  int last;
  RK_HANDLER void on(const Order& o, rk::Ctx&) { last = o.id; }
};
