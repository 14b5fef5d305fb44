// An enum nested in a struct cannot be declared by the host header as the
// program spells it; like nested structs, it is refused.
struct Order {
  enum class Side { kBuy, kSell };
  Side side;  // expected-error:8: field 'side' of 'Order' has type 'Order::Side', an enum which is declared inside 'Order'
  int quantity;
};

struct RK_ACTOR Desk {
  int orders;
  RK_HANDLER void on(const Order& o, rk::Ctx& ctx) { orders += o.quantity; }
};
