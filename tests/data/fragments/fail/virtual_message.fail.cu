// A message with a virtual function is not trivially copyable.
struct Shape {
  float size;
  virtual float Area() const { return size * size; }  // expected-error: message 'Shape' is not trivially copyable: it has a virtual function 'Area'
};

struct RK_ACTOR Canvas {
  float total;
  RK_HANDLER void on(const Shape& s, rk::Ctx&) { total += s.size; }  // expected-note: used as a message: handled by 'Canvas::on' here
};
