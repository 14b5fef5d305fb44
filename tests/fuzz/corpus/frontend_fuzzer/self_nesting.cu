struct Node;
struct Node { Node* next; int v[0]; char tail[]; };
struct RK_ACTOR Walker {
  int n;
  RK_HANDLER void on(const Node& m, rk::Ctx& ctx) { ctx.send(ctx.self(), m); }
};
