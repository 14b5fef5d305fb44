// Messages shared by first.cu and second.cu.
#ifndef RINGKERNEL_TESTS_SHARED_MESSAGES_H_
#define RINGKERNEL_TESTS_SHARED_MESSAGES_H_

#include "sub/units.h"

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

#endif  // RINGKERNEL_TESTS_SHARED_MESSAGES_H_
