// Copyright 2026 The RingKernel Authors.
//
// Loading libclang at run time: the happy path, and the errors a machine
// without a usable libclang gets instead of a crash.
#include <limits.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/frontend.h"
#include "jit/libclang.h"
#include "tests/test_support.h"

namespace rk::jit {
namespace {

using ::rk::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;

TEST(ClangApiTest, LoadsLibclang16OrNewer) {
  absl::StatusOr<LibclangInfo> info = Libclang();
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_GE(info->major_version, 16);
  EXPECT_THAT(info->version, HasSubstr("clang version"));
  absl::StatusOr<std::string> version = LibclangVersion();
  ASSERT_TRUE(version.ok());
  EXPECT_EQ(*version, info->version);
  EXPECT_EQ(ParseClangMajorVersion(*version), info->major_version);
  // The same library a fresh probe of the candidates finds first.
  absl::StatusOr<LibclangInfo> probed = ProbeLibclang(LibclangCandidates());
  ASSERT_TRUE(probed.ok()) << probed.status();
  EXPECT_EQ(probed->library, info->library);
}

TEST(ClangApiTest, ParsesVersionStrings) {
  EXPECT_EQ(ParseClangMajorVersion("Debian clang version 16.0.6 (15~deb12u1)"), 16);
  EXPECT_EQ(ParseClangMajorVersion("clang version 18.1.3"), 18);
  EXPECT_EQ(ParseClangMajorVersion("Ubuntu clang version 14.0.0-1ubuntu1"), 14);
  EXPECT_EQ(ParseClangMajorVersion("no version here"), 0);
  EXPECT_EQ(ParseClangMajorVersion("clang version "), 0);
  EXPECT_EQ(ParseClangMajorVersion(""), 0);
}

TEST(ClangApiTest, MissingLibraryIsAFailedPreconditionThatSaysWhatToDo) {
  const std::vector<std::string> candidates = {"/nonexistent/libclang-16.so.1", "libclang-does-not-exist.so.1"};
  EXPECT_THAT(ProbeLibclang(candidates),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       AllOf(HasSubstr("cannot load libclang"), HasSubstr("/nonexistent/libclang-16.so.1: "),
                             HasSubstr("libclang-does-not-exist.so.1: "), HasSubstr("No such file"),
                             HasSubstr("apt install libclang1-16"), HasSubstr("RINGKERNEL_LIBCLANG"))));
  EXPECT_THAT(ProbeLibclang({}), StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("Tried:")));
}

TEST(ClangApiTest, LibraryWithoutTheEntryPointsIsRejected) {
  // The C math library opens fine but is no libclang.
  EXPECT_THAT(ProbeLibclang({"libm.so.6"}),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       AllOf(HasSubstr("libm.so.6: it lacks clang_getClangVersion"), HasSubstr("not libclang"))));
}

TEST(ClangApiTest, OlderLibclangIsRejected) {
  const std::string old_libclang = "/usr/lib/x86_64-linux-gnu/libclang-14.so.1";
  if (!std::filesystem::exists(old_libclang)) GTEST_SKIP() << "no libclang 14 on this machine to try";
  EXPECT_THAT(ProbeLibclang({old_libclang}), StatusIs(absl::StatusCode::kFailedPrecondition,
                                                      AllOf(HasSubstr("libclang-14.so.1: it is '"), HasSubstr("14."),
                                                            HasSubstr("older than libclang 16"))));
}

TEST(ClangApiTest, FirstUsableCandidateWins) {
  const std::string good = Libclang()->library;
  absl::StatusOr<LibclangInfo> info = ProbeLibclang({"/nonexistent/libclang.so", "libm.so.6", good});
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->library, good);
}

TEST(ClangApiTest, EnvironmentOverrideIsTheOnlyCandidate) {
  const char* saved = std::getenv("RINGKERNEL_LIBCLANG");
  const std::string restore = saved != nullptr ? saved : "";
  setenv("RINGKERNEL_LIBCLANG", "/opt/custom/libclang.so", 1);
  EXPECT_EQ(LibclangCandidates(), std::vector<std::string>{"/opt/custom/libclang.so"});
  setenv("RINGKERNEL_LIBCLANG", "", 1);
  EXPECT_GT(LibclangCandidates().size(), 1u);
  EXPECT_EQ(LibclangCandidates()[0], "libclang-16.so.1");
  if (saved != nullptr) {
    setenv("RINGKERNEL_LIBCLANG", restore.c_str(), 1);
  } else {
    unsetenv("RINGKERNEL_LIBCLANG");
  }
}

// Runs in a child process (see below), where RINGKERNEL_LIBCLANG points at a
// file that does not exist: the front-end reports it, nothing crashes.
TEST(ClangApiChildTest, ParseWithoutLibclang) {
  if (std::getenv("RK_CLANG_API_CHILD") == nullptr) GTEST_SKIP() << "runs only as the child of WithoutLibclang";
  const std::vector<SourceFile> fragments = {{"a.cu", "struct P { int n; };", true}};
  std::vector<Diagnostic> diagnostics;
  EXPECT_THAT(ParseFragments(fragments, {}, &diagnostics),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       AllOf(HasSubstr("/nonexistent/libclang.so"), HasSubstr("libclang1-16"))));
  EXPECT_THAT(LibclangVersion(), StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("cannot load libclang")));
  EXPECT_TRUE(diagnostics.empty());
}

TEST(ClangApiTest, WithoutLibclang) {
  char self[PATH_MAX] = {};
  const ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  ASSERT_GT(n, 0);
  const rk::testing::CommandResult result =
      rk::testing::RunCommand({self, "--gtest_filter=ClangApiChildTest.ParseWithoutLibclang"},
                              {"RINGKERNEL_LIBCLANG=/nonexistent/libclang.so", "RK_CLANG_API_CHILD=1"});
  EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
  EXPECT_THAT(result.out, HasSubstr("[  PASSED  ] 1 test"));
  EXPECT_THAT(result.out, ::testing::Not(HasSubstr("SKIPPED")));
}

}  // namespace
}  // namespace rk::jit
