// A field whose type is not trivially copyable.
struct Handle {
  int fd;
  ~Handle() { fd = -1; }
};

struct Open {
  int flags;
  Handle handle;  // expected-error: message 'Open' is not trivially copyable: field 'handle' of type 'Handle' is not trivially copyable (it has a user-provided destructor)
};

struct RK_ACTOR Files {
  int opened;
  RK_HANDLER void on(const Open& o, rk::Ctx&) { opened += o.flags; }
};
