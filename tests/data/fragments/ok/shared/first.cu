// Two fragments include one header; it is parsed once and returned once.
#include "messages.h"

struct RK_ACTOR Ledger {
  long long balances[16];
  RK_HANDLER void on(const ledger::Credit& c, rk::Ctx&) { balances[c.account & 15] += c.amount.value; }
};
