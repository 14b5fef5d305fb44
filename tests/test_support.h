// Copyright 2026 The RingKernel Authors.
//
// test_support.h: helpers shared by the tests — the StatusIs matcher,
// fixtures on disk, temporary directories and running a command.
#ifndef RINGKERNEL_TESTS_TEST_SUPPORT_H_
#define RINGKERNEL_TESTS_TEST_SUPPORT_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace rk::testing {

// Matches an absl::Status or absl::StatusOr<T> whose code is `code` and whose
// message matches `message_matcher`:
//   EXPECT_THAT(s, StatusIs(absl::StatusCode::kNotFound, HasSubstr("bank.cu")));
MATCHER_P2(StatusIs, code, message_matcher, "") {
  const absl::Status& status = [&]() -> const absl::Status& {
    if constexpr (std::is_same_v<std::decay_t<arg_type>, absl::Status>) {
      return arg;
    } else {
      return arg.status();
    }
  }();
  *result_listener << "status is " << status;
  return status.code() == code &&
         ::testing::ExplainMatchResult(message_matcher, std::string(status.message()), result_listener);
}

// The repository root and tests/data.
std::string SourceDir();
std::string TestDataDir();

// Reads a whole file; fails the test (and returns "") if it can't.
std::string ReadFileOrDie(const std::string& path);
void WriteFileOrDie(const std::string& path, const std::string& contents);

// A fresh directory under $TMPDIR, removed with everything in it on
// destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string Join(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

struct CommandResult {
  int exit_code = -1;  // -1 if it did not exit normally
  std::string out;     // stdout
  std::string err;     // stderr
};

// Runs `argv` (argv[0] is a path) with `env` added to the environment and
// `stdin_data` on its standard input; waits for it at most `timeout_s`.
CommandResult RunCommand(const std::vector<std::string>& argv, const std::vector<std::string>& env = {},
                         const std::string& stdin_data = "", int timeout_s = 120);

// The actorc binary of this build.
std::string ActorcPath();

}  // namespace rk::testing

#endif  // RINGKERNEL_TESTS_TEST_SUPPORT_H_
