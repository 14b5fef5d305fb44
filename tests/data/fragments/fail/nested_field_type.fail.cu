struct Order {
  struct Item { int sku; int quantity; };
  Item items[4];  // expected-error:8: field 'items' of 'Order' has type 'Order::Item', which is declared inside 'Order'
};

struct RK_ACTOR Warehouse {
  int orders;
  RK_HANDLER void on(const Order& o, rk::Ctx& ctx) { orders += o.items[0].quantity; }
};
