// Copyright 2026 The RingKernel Authors.
//
// rk::Program without a GPU: what it reports of the package inside it (its
// actor types, message types, routes and the warnings of its build), and
// that a Program nothing compiled or loaded reports nothing instead of
// crashing.
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/package.h"
#include "ringkernel/runtime.h"
#include "runtime/program_access.h"

namespace rk {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(ProgramTest, AnEmptyProgramReportsNothing) {
  const Program p;
  EXPECT_THAT(p.ActorTypes(), IsEmpty());
  EXPECT_THAT(p.MessageTypes(), IsEmpty());
  EXPECT_THAT(p.Routes(), IsEmpty());
  EXPECT_THAT(p.warnings(), IsEmpty());
  EXPECT_FALSE(p.cache_hit());
}

TEST(ProgramTest, ReportsItsPackagesTypesRoutesAndWarnings) {
  jit::Package pkg;
  jit::ActorInfo bank;
  bank.name = "Bank";
  pkg.model.actors = {bank};
  jit::RecordLayout deposit;
  deposit.name = "Deposit";
  deposit.message_id = 1;
  jit::RecordLayout nested;  // a record that is not a message
  nested.name = "Money";
  pkg.model.records = {deposit, nested};
  pkg.model.routes = {{"audit", 0, {}}};
  jit::Diagnostic unused;
  unused.severity = jit::DiagnosticSeverity::kWarning;
  unused.location = {"bank.cu", 7, 9};
  unused.message = "variable \"spare\" was declared but never referenced";
  jit::Diagnostic spills;
  spills.severity = jit::DiagnosticSeverity::kWarning;
  spills.message = "sm_90: the system kernel spills registers to local memory";
  jit::Diagnostic note;
  note.severity = jit::DiagnosticSeverity::kNote;
  note.location = {"bank.cu", 2, 0};
  note.message = "declared here";
  pkg.warnings = {unused, spills, note};

  const Program p = internal::ProgramAccess::Wrap(pkg);
  EXPECT_THAT(p.ActorTypes(), ElementsAre("Bank"));
  EXPECT_THAT(p.MessageTypes(), ElementsAre("Deposit"));
  EXPECT_THAT(p.Routes(), ElementsAre("audit"));
  EXPECT_THAT(p.warnings(),
              ElementsAre("bank.cu:7:9: warning: variable \"spare\" was declared but never referenced",
                          "warning: sm_90: the system kernel spills registers to local memory",
                          "bank.cu:2: note: declared here"));
}

}  // namespace
}  // namespace rk
