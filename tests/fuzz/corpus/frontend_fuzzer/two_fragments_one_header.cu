// Two fragments include one header (after tests/data/fragments/ok/shared).
#include "messages.h"

struct RK_ACTOR Ledger {
  long long balances[16];
  RK_HANDLER void on(const ledger::Credit& c, rk::Ctx&) { balances[c.account & 15] += c.amount.value; }
};
// file: second.cu
#include "messages.h"
#include "units.h"

struct RK_ACTOR Auditor {
  Cents total;
  int seen;
  RK_HANDLER void on(const ledger::Credit& c, rk::Ctx& ctx) {
    total.value += c.amount.value;
    ++seen;
    ctx.send(rk::host(), ledger::Report{seen, total});
  }
};
// file: messages.h
#pragma once
#include "units.h"
namespace ledger {
struct Credit {
  int account;
  Cents amount;
};
struct Report {
  int accounts;
  Cents total;
};
}  // namespace ledger
// file: units.h
#pragma once
struct Cents {
  long long value;
};
