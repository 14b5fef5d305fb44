// Copyright 2026 The RingKernel Authors.
//
// The fragment fixtures under tests/data/fragments:
//   ok/*.cu         must parse with no diagnostic at all;
//   fail/*.fail.cu  must be rejected, with each expected diagnostic where the
//                   fixture says, written on the offending line:
//
//     total += m.cents * rate;  // expected-error:24: use of undeclared identifier 'rate'
//
//   "expected-error: TEXT" asserts an error on that line whose message
//   contains TEXT; "expected-error:COL: TEXT" also asserts the column;
//   "expected-note: TEXT" asserts a note on that line. Every error reported
//   must be expected. A line "// options: --max-payload N" sets the option.
#include <algorithm>
#include <filesystem>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/frontend.h"
#include "tests/test_support.h"

namespace rk::jit {
namespace {

using ::rk::testing::StatusIs;
using ::testing::HasSubstr;

struct Expectation {
  DiagnosticSeverity severity = DiagnosticSeverity::kError;
  uint32_t line = 0;
  uint32_t column = 0;  // 0: any
  std::string text;
};

struct Fixture {
  std::string path;
  FrontendOptions options;
  std::vector<Expectation> expectations;
};

Fixture LoadFixture(const std::string& path) {
  Fixture fixture;
  fixture.path = path;
  const std::string contents = rk::testing::ReadFileOrDie(path);
  static const std::regex kExpect(R"(// expected-(error|note)(?::(\d+))?: (.*)$)");
  static const std::regex kOptions(R"(^// options: --max-payload (\d+))");
  std::istringstream in(contents);
  std::string line;
  for (uint32_t number = 1; std::getline(in, line); ++number) {
    std::smatch m;
    if (std::regex_search(line, m, kExpect)) {
      Expectation e;
      e.severity = m[1] == "error" ? DiagnosticSeverity::kError : DiagnosticSeverity::kNote;
      e.line = number;
      e.column = m[2].matched ? static_cast<uint32_t>(std::stoul(m[2])) : 0;
      e.text = m[3];
      fixture.expectations.push_back(e);
    }
    if (std::regex_search(line, m, kOptions)) fixture.options.max_payload = static_cast<uint32_t>(std::stoul(m[1]));
  }
  return fixture;
}

bool Matches(const Diagnostic& d, const Fixture& fixture, const Expectation& e) {
  return d.severity == e.severity && d.location.file == fixture.path && d.location.line == e.line &&
         (e.column == 0 || d.location.column == e.column) && d.message.find(e.text) != std::string::npos;
}

std::vector<std::string> FixturePaths(const std::string& folder, const std::string& suffix) {
  std::vector<std::string> paths;
  for (const auto& entry : std::filesystem::directory_iterator(rk::testing::TestDataDir() + "/fragments/" + folder)) {
    const std::string p = entry.path().string();
    if (entry.is_regular_file() && p.size() > suffix.size() &&
        p.compare(p.size() - suffix.size(), suffix.size(), suffix) == 0) {
      paths.push_back(p);
    }
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

std::string FixtureName(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = std::filesystem::path(info.param).filename().string();
  name = name.substr(0, name.find('.'));
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

class FailFixtureTest : public ::testing::TestWithParam<std::string> {};

TEST_P(FailFixtureTest, IsRejectedWithTheExpectedDiagnostics) {
  const Fixture fixture = LoadFixture(GetParam());
  ASSERT_FALSE(fixture.expectations.empty()) << fixture.path << " has no expected-error comment";
  absl::StatusOr<std::vector<SourceFile>> sources = ReadFragments({fixture.path});
  ASSERT_TRUE(sources.ok()) << sources.status();

  std::vector<Diagnostic> diagnostics;
  absl::StatusOr<HandlerModel> model = ParseFragments(*sources, fixture.options, &diagnostics);
  const std::string all = FormatDiagnostics(diagnostics);
  EXPECT_THAT(model, StatusIs(absl::StatusCode::kInvalidArgument, ::testing::_)) << all;

  for (const Expectation& e : fixture.expectations) {
    const bool found = std::any_of(diagnostics.begin(), diagnostics.end(),
                                   [&](const Diagnostic& d) { return Matches(d, fixture, e); });
    EXPECT_TRUE(found) << "expected " << (e.severity == DiagnosticSeverity::kError ? "an error" : "a note") << " at "
                       << fixture.path << ":" << e.line << (e.column != 0 ? ":" + std::to_string(e.column) : "")
                       << " containing \"" << e.text << "\"; got:\n"
                       << all;
    if (e.severity == DiagnosticSeverity::kError && !model.ok()) {
      EXPECT_THAT(std::string(model.status().message()), HasSubstr(e.text));
    }
  }
  // No error the fixture does not expect: a cascade of follow-on errors
  // would bury the real one.
  for (const Diagnostic& d : diagnostics) {
    if (d.severity != DiagnosticSeverity::kError) continue;
    const bool expected = std::any_of(fixture.expectations.begin(), fixture.expectations.end(),
                                      [&](const Expectation& e) { return Matches(d, fixture, e); });
    EXPECT_TRUE(expected) << "unexpected error: " << d.ToString();
  }
  // Users are never pointed into RingKernel's headers.
  for (const Diagnostic& d : diagnostics) {
    EXPECT_EQ(d.location.file.find("ringkernel"), std::string::npos) << d.ToString();
  }
}

INSTANTIATE_TEST_SUITE_P(Fragments, FailFixtureTest, ::testing::ValuesIn(FixturePaths("fail", ".fail.cu")),
                         FixtureName);

class OkFixtureTest : public ::testing::TestWithParam<std::string> {};

TEST_P(OkFixtureTest, ParsesWithoutDiagnostics) {
  absl::StatusOr<std::vector<SourceFile>> sources = ReadFragments({GetParam()});
  ASSERT_TRUE(sources.ok()) << sources.status();
  std::vector<Diagnostic> diagnostics;
  absl::StatusOr<HandlerModel> model = ParseFragments(*sources, {}, &diagnostics);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_TRUE(diagnostics.empty()) << FormatDiagnostics(diagnostics);
  EXPECT_FALSE(model->actors.empty());
  for (const ActorInfo& actor : model->actors) EXPECT_FALSE(actor.handlers.empty()) << actor.name;
}

INSTANTIATE_TEST_SUITE_P(Fragments, OkFixtureTest, ::testing::ValuesIn(FixturePaths("ok", ".cu")), FixtureName);

TEST(FixtureSetTest, HasTheFixturesTheFrontEndPromises) {
  // A renamed or deleted fixture must not silently shrink the suites above.
  EXPECT_GE(FixturePaths("fail", ".fail.cu").size(), 40u);
  EXPECT_GE(FixturePaths("ok", ".cu").size(), 7u);
}

}  // namespace
}  // namespace rk::jit
