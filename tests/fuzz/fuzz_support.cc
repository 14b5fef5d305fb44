// Copyright 2026 The RingKernel Authors.
#include "tests/fuzz/fuzz_support.h"

#include <string>
#include <vector>

#include "jit/frontend.h"

namespace rk::fuzz {

const jit::HandlerModel& FuzzModel() {
  static const jit::HandlerModel* const model = [] {
    absl::StatusOr<std::vector<jit::SourceFile>> fragments = jit::ReadFragments({RK_FUZZ_MODEL_FRAGMENT});
    FUZZ_CHECK(fragments.ok(), "%s", std::string(fragments.status().message()).c_str());
    std::vector<jit::Diagnostic> diagnostics;
    absl::StatusOr<jit::HandlerModel> parsed = jit::ParseFragments(*fragments, {}, &diagnostics);
    FUZZ_CHECK(parsed.ok(), "%s", std::string(parsed.status().message()).c_str());
    FUZZ_CHECK(diagnostics.empty(), "%s", jit::FormatDiagnostics(diagnostics).c_str());
    return new jit::HandlerModel(*std::move(parsed));
  }();
  return *model;
}

}  // namespace rk::fuzz
