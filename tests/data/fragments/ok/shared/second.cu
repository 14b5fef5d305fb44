#include "messages.h"
#include "sub/units.h"

struct RK_ACTOR Auditor {
  Cents total;
  int seen;
  RK_HANDLER void on(const ledger::Credit& c, rk::Ctx& ctx) {
    total.value += c.amount.value;
    ++seen;
    ctx.send(rk::host(), ledger::Report{seen, total});
  }
};
