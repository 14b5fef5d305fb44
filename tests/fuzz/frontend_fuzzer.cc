// Copyright 2026 The RingKernel Authors.
//
// The clang front-end (jit/frontend.h) on arbitrary handler sources. The
// input is one fragment, "fuzz.cu", or several files: a line
// "// file: NAME" (NAME of letters, digits, '_', '.' and '-') starts a new
// file, a header when NAME ends in ".h" (found by the fragments' quoted
// includes) and a fragment otherwise. Properties:
//   * a source the front-end rejects gives InvalidArgument with at least
//     one error diagnostic, the errors formatted into the status (or
//     Internal, should libclang itself crash on it);
//   * a model the front-end accepts has a layout signature for every
//     record, and survives the package manifest's JSON form: FromJson of
//     its ToJson is the same model.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "jit/frontend.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

constexpr std::string_view kFileMarker = "// file: ";

bool IsFileName(std::string_view name) {
  if (name.empty() || name.size() > 32) return false;
  for (char c : name) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.' && c != '-') return false;
  }
  return true;
}

std::vector<rk::jit::SourceFile> Files(std::string_view input) {
  std::vector<rk::jit::SourceFile> files = {{"fuzz.cu", "", true}};
  while (!input.empty()) {
    const size_t end = std::min(input.find('\n'), input.size());
    const std::string_view line = input.substr(0, end);
    input.remove_prefix(std::min(end + 1, input.size()));
    if (line.starts_with(kFileMarker) && IsFileName(line.substr(kFileMarker.size()))) {
      const std::string name(line.substr(kFileMarker.size()));
      files.push_back({name, "", !name.ends_with(".h")});
      continue;
    }
    files.back().contents.append(line.data(), line.size());
    files.back().contents.push_back('\n');
  }
  return files;
}

}  // namespace

// Some inputs crash libclang itself (clang bugs; clang++-16 crashes on them
// too, e.g. corpus/frontend_fuzzer/libclang_crash_annotated_struct.cu).
// libclang recovers, ParseFragments returns Internal "(it crashed)", but the
// crashed parse's memory is never freed, by libclang's design. Those leaks
// are libclang's and LLVM's: LeakSanitizer ignores allocations made there.
// That RingKernel disposes of every libclang object it gets (strings,
// translation units, indexes) is leak-checked by the unit tests under
// scripts/sanitize.sh, which suppress nothing.
extern "C" const char* __lsan_default_suppressions() { return "leak:libclang\nleak:libLLVM\n"; }

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // Loads libclang once, and fails at once where there is none.
  rk::fuzz::FuzzModel();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::vector<rk::jit::SourceFile> files = Files(std::string_view(reinterpret_cast<const char*>(data), size));
  std::vector<rk::jit::Diagnostic> diagnostics;
  absl::StatusOr<rk::jit::HandlerModel> model = rk::jit::ParseFragments(files, {}, &diagnostics);
  if (!model.ok()) {
    const absl::StatusCode code = model.status().code();
    const std::string message(model.status().message());
    FUZZ_CHECK(code == absl::StatusCode::kInvalidArgument || code == absl::StatusCode::kInternal, "code %d: %s",
               static_cast<int>(code), message.c_str());
    FUZZ_CHECK(!message.empty(), "an error without a message");
    // Errors about the set of files come before any parse; the rest are
    // diagnostics.
    FUZZ_CHECK(code != absl::StatusCode::kInvalidArgument || rk::jit::HasErrors(diagnostics) ||
                   absl::StrContains(message, "handler source") || absl::StrContains(message, "handler fragments"),
               "rejected without an error diagnostic: %s", message.c_str());
    return 0;
  }
  FUZZ_CHECK(!rk::jit::HasErrors(diagnostics), "accepted with errors: %s",
             rk::jit::FormatDiagnostics(diagnostics).c_str());
  for (const rk::jit::RecordLayout& record : model->records) {
    absl::StatusOr<std::string> signature = rk::jit::LayoutSignature(*model, record);
    FUZZ_CHECK(signature.ok(), "%s: %s", record.name.c_str(), std::string(signature.status().message()).c_str());
  }
  const nlohmann::json json = model->ToJson();
  absl::StatusOr<rk::jit::HandlerModel> again = rk::jit::HandlerModel::FromJson(json);
  FUZZ_CHECK(again.ok(), "the manifest form of an accepted model is refused: %s",
             std::string(again.status().message()).c_str());
  FUZZ_CHECK(*again == *model, "the manifest form of an accepted model reads back differently");
  return 0;
}
