// Copyright 2026 The RingKernel Authors.
//
// Test goals: faults on a real device never hang the host and are
// attributed.
//   * A handler that touches an illegal address faults the kernel: the next
//     host call returns Aborted naming the CUDA error and the actor that was
//     running (its handler and message type).
//   * A handler that never returns occupies only its own worker: actors on
//     other workers keep answering; Stop returns by its deadline naming the
//     stuck actor; once the system is destroyed the runtime starts a new one.
// Each test runs in its own process under ctest (a fault poisons the CUDA
// context for the rest of the process).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <thread>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ringkernel/runtime.h"
#include "tests/gpu_test_support.h"
#include "tests/test_support.h"

// The message types of semantics.cu, generated at build time from it by
// ringkernel_add_program (tests/CMakeLists.txt): Spin, Crash, Poke, Poked, ...
#include "semantics_program.h"

namespace rk {
namespace {

using ::rk::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;

class FaultGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RK_GPU_TEST_SETUP(runtime_);
    absl::StatusOr<Program> p = runtime_->CompileFiles({::rk::testing::TestDataDir() + "/gpu/semantics.cu"});
    ASSERT_TRUE(p.ok()) << p.status();
    program_ = *p;
  }
  std::unique_ptr<Runtime> runtime_;
  Program program_;
};

TEST_F(FaultGpuTest, IllegalAddressIsAttributedToTheRunningActor) {
  absl::StatusOr<std::unique_ptr<System>> sys = runtime_->Start(program_);
  ASSERT_TRUE(sys.ok()) << sys.status();
  absl::StatusOr<ActorId> crasher = (*sys)->Spawn("Crasher", "crasher");
  ASSERT_TRUE(crasher.ok());
  ASSERT_TRUE((*sys)->Send(*crasher, Crash{0x10}).ok());
  const auto start = std::chrono::steady_clock::now();
  absl::Status health;
  while (std::chrono::steady_clock::now() - start < std::chrono::seconds(20)) {
    health = (*sys)->Health();
    if (!health.ok()) break;
  }
  EXPECT_THAT(health, StatusIs(absl::StatusCode::kAborted,
                               AllOf(HasSubstr("the GPU kernel faulted"), HasSubstr("actor 'crasher' (Crasher)"),
                                     HasSubstr("handling 'Crash'"))));
  EXPECT_EQ((*sys)->phase(), KernelPhase::kFaulted);
  // Every later call reports the same fault instead of hanging.
  EXPECT_THAT((*sys)->Send(*crasher, Crash{0}), StatusIs(absl::StatusCode::kAborted, HasSubstr("crasher")));
  EXPECT_THAT((*sys)->Stop(absl::Seconds(2)), StatusIs(absl::StatusCode::kAborted, HasSubstr("crasher")));
}

// A fault found while Spawn waited for the GPU used to deadlock the host:
// Spawn held the actor table's lock across the wait, and the fault check
// takes it to name the actors that were running.
TEST_F(FaultGpuTest, AFaultFoundWhileSpawnWaitsIsReportedNotADeadlock) {
  absl::StatusOr<std::unique_ptr<System>> sys = runtime_->Start(program_);
  ASSERT_TRUE(sys.ok()) << sys.status();
  absl::StatusOr<ActorId> crasher = (*sys)->Spawn("Crasher", "crasher");
  ASSERT_TRUE(crasher.ok());
  ASSERT_TRUE((*sys)->Send(*crasher, Crash{0x10}).ok());
  // The kernel faults within microseconds; nothing looks at it before the
  // Spawn below, which then writes its record and waits for an
  // acknowledgement that never comes.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  auto spawn = std::async(std::launch::async, [&] { return (*sys)->Spawn("Crasher", "late"); });
  if (spawn.wait_for(std::chrono::seconds(30)) != std::future_status::ready) {
    // The future cannot be abandoned: leave the process (the case fails).
    std::fprintf(stderr, "FAILED: Spawn did not return within 30 s of a kernel fault (deadlock)\n");
    std::_Exit(1);
  }
  EXPECT_THAT(spawn.get(), StatusIs(absl::StatusCode::kAborted,
                                    AllOf(HasSubstr("the GPU kernel faulted"), HasSubstr("actor 'crasher' (Crasher)"))));
  // Later calls report the same fault.
  EXPECT_THAT((*sys)->Spawn("Crasher", "later"), StatusIs(absl::StatusCode::kAborted, HasSubstr("crasher")));
  EXPECT_THAT((*sys)->Stop(absl::Seconds(2)), StatusIs(absl::StatusCode::kAborted, HasSubstr("crasher")));
}

// The scenario runs in a child process: a kernel that never returns keeps
// its context busy until the process ends, so the child checks everything,
// reports on stderr and leaves with _exit — which also proves that the
// runtime returns control by its deadline and that the process can end.
void StuckHandlerScenario() {
  auto fail = [](const std::string& why) {
    std::fprintf(stderr, "SCENARIO FAILED: %s\n", why.c_str());
    std::_Exit(1);
  };
  absl::StatusOr<std::unique_ptr<Runtime>> runtime = Runtime::Create();
  if (!runtime.ok()) fail(std::string(runtime.status().message()));
  absl::StatusOr<Program> program = (*runtime)->CompileFiles({::rk::testing::TestDataDir() + "/gpu/semantics.cu"});
  if (!program.ok()) fail(std::string(program.status().message()));
  SystemOptions o;
  o.workers = 4;
  absl::StatusOr<std::unique_ptr<System>> sys = (*runtime)->Start(*program, o);
  if (!sys.ok()) fail(std::string(sys.status().message()));
  absl::StatusOr<ActorId> spinner = (*sys)->Spawn("Spinner", "spinner");
  absl::StatusOr<ActorId> other = (*sys)->Spawn("Fragile", "other");  // placed on another worker
  if (!spinner.ok() || !other.ok()) fail("spawn");
  if (!(*sys)->Send(*spinner, Spin{1}).ok()) fail("send");
  for (int i = 1; i <= 100; ++i) {
    absl::StatusOr<Poked> r = (*sys)->Ask<Poked>(*other, Poke{0}, absl::Seconds(5));
    if (!r.ok()) fail(absl::StrCat("ask ", i, ": ", r.status().message()));
    if (r->pokes != i) fail(absl::StrCat("ask ", i, " got ", r->pokes));
  }
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<StopReport> stop = (*sys)->Stop(absl::Seconds(3));
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (stop.ok()) fail("Stop succeeded: " + stop->ToString());
  if (waited > 4.0) fail(absl::StrCat("Stop took ", waited, " s"));
  if ((*sys)->phase() != KernelPhase::kAbandoned) fail("phase is not abandoned");
  // Destroying the system and the runtime must not wait for the kernel.
  const auto teardown = std::chrono::steady_clock::now();
  sys->reset();
  runtime->reset();
  const double torn = std::chrono::duration<double>(std::chrono::steady_clock::now() - teardown).count();
  if (torn > 2.0) fail(absl::StrCat("teardown took ", torn, " s"));
  std::fprintf(stderr, "STOP: %s [after %.2f s]\n", std::string(stop.status().message()).c_str(), waited);
  std::_Exit(0);
}

TEST_F(FaultGpuTest, StuckHandlerOccupiesOnlyItsWorkerAndStopNamesIt) {
  runtime_.reset();  // the parent keeps no CUDA state for the child to inherit
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(StuckHandlerScenario(), ::testing::ExitedWithCode(0),
              "STOP: Stop: the kernel did not halt within 3s: stuck: actor 'spinner' \\(Spinner\\) handling 'Spin' on "
              "worker [0-9]+");
}

}  // namespace
}  // namespace rk
