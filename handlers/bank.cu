// bank.cu — the README's example: a bank that keeps 64 balances, answers
// balance queries, and reports overdrafts through the named route "audit".
#include <ringkernel/actor.cuh>

struct Deposit { int account; long long cents; };
struct Withdraw { int account; long long cents; };
struct Query { int account; };
struct Balance { int account; long long cents; };
struct Overdraft { int account; long long requested; long long available; };

struct RK_ACTOR Bank {
  long long cents[64];
  long long operations = 0;  // default member initialisers run at spawn

  RK_HANDLER void on(const Deposit& m, rk::Ctx& ctx) {
    cents[m.account & 63] += m.cents;
    ++operations;
  }

  RK_HANDLER void on(const Withdraw& m, rk::Ctx& ctx) {
    long long& balance = cents[m.account & 63];
    if (balance < m.cents) {
      ctx.send(rk::route("audit"), Overdraft{m.account, m.cents, balance});
    } else {
      balance -= m.cents;
    }
    ++operations;
  }

  RK_HANDLER void on(const Query& q, rk::Ctx& ctx) { ctx.reply(Balance{q.account, cents[q.account & 63]}); }
};

// Counts overdrafts and forwards each one to the host.
struct RK_ACTOR Auditor {
  long long overdrafts;

  RK_HANDLER void on(const Overdraft& o, rk::Ctx& ctx) {
    ++overdrafts;
    ctx.send(rk::host(), o);
  }
};
