// Copyright 2026 The RingKernel Authors.
//
// clang's diagnostics, restated for the user: every one points into the
// user's files (a problem clang finds inside RingKernel's headers is reported
// where the user's code led to it), and the noise of parsing for a GPU
// target with no toolchain installed is dropped.
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "jit/frontend_internal.h"

namespace rk::jit::frontend_internal {
namespace {

// Warnings about the command line and the (absent) CUDA installation: the
// user did not write them and cannot act on them.
constexpr const char* kNoiseOptions[] = {
    "-Wunknown-cuda-version",
    "-Wunused-command-line-argument",
    "-Wcuda-compat",
};

constexpr char kIncludedFrom[] = "in file included from";

struct Child {
  FileKind kind = FileKind::kUnknown;
  SourceLocation location;
  std::string text;
};

// "'vector' file not found" → "vector".
bool FileNotFound(const std::string& message, std::string* name) {
  constexpr char kSuffix[] = "' file not found";
  if (!absl::StartsWith(message, "'") || !absl::EndsWith(message, kSuffix)) return false;
  *name = message.substr(1, message.size() - 1 - (sizeof(kSuffix) - 1));
  return true;
}

// The character at `loc`, or 0.
char CharAt(const ParseSession& session, CXSourceLocation loc) {
  CXFile file = nullptr;
  unsigned line = 0, column = 0, offset = 0;
  session.api().clang_getExpansionLocation(loc, &file, &line, &column, &offset);
  if (file == nullptr) return 0;
  size_t size = 0;
  const char* contents = session.api().clang_getFileContents(session.tu(), file, &size);
  return contents != nullptr && offset < size ? contents[offset] : 0;
}

std::string NoStandardLibrary(const std::string& name) {
  return absl::StrCat(
      "cannot include <", name,
      ">: handler fragments are compiled by NVRTC, without the C++ standard library or any system header. "
      "Available are the RingKernel headers (<ringkernel/actor.cuh>, included for you), CUDA's built-ins "
      "(threadIdx, atomics, warp intrinsics, math functions, printf, ...) and your own headers, included "
      "with quotes (#include \"my_header.h\")");
}

void ConvertOne(ParseSession& session, CXDiagnostic diagnostic) {
  const ClangApi& api = session.api();
  DiagnosticSeverity severity;
  switch (api.clang_getDiagnosticSeverity(diagnostic)) {
    case CXDiagnostic_Ignored:
      return;
    case CXDiagnostic_Note:
      severity = DiagnosticSeverity::kNote;
      break;
    case CXDiagnostic_Warning:
      severity = DiagnosticSeverity::kWarning;
      break;
    default:
      severity = DiagnosticSeverity::kError;
      break;
  }
  const std::string option = session.Str(api.clang_getDiagnosticOption(diagnostic, nullptr));
  for (const char* noise : kNoiseOptions) {
    if (option == noise) return;
  }
  std::string message = session.Str(api.clang_getDiagnosticSpelling(diagnostic));

  const CXSourceLocation clang_location = api.clang_getDiagnosticLocation(diagnostic);
  FileKind kind = FileKind::kUnknown;
  SourceLocation location = session.Locate(clang_location, &kind);

  std::vector<Child> children;
  CXDiagnosticSet set = api.clang_getChildDiagnostics(diagnostic);
  const unsigned n = set != nullptr ? api.clang_getNumDiagnosticsInSet(set) : 0;
  for (unsigned i = 0; i < n; ++i) {
    // Children belong to the set; they are not disposed of one by one.
    CXDiagnostic child = api.clang_getDiagnosticInSet(set, i);
    Child c;
    c.location = session.Locate(api.clang_getDiagnosticLocation(child), &c.kind);
    c.text = session.Str(api.clang_getDiagnosticSpelling(child));
    children.push_back(std::move(c));
  }

  int anchor = -1;
  if (kind == FileKind::kEmbedded) {
    // Inside RingKernel's headers: report it where the user's code led
    // there — an instantiation or macro expansion in user code, else the
    // user's #include that brought the header in.
    for (size_t i = 0; i < children.size(); ++i) {
      if (IsUserFile(children[i].kind) && !absl::StartsWith(children[i].text, kIncludedFrom)) {
        anchor = static_cast<int>(i);
        break;
      }
    }
    if (anchor >= 0) {
      location = children[anchor].location;
    } else {
      CXFile file = nullptr;
      unsigned line = 0, column = 0, offset = 0;
      api.clang_getExpansionLocation(clang_location, &file, &line, &column, &offset);
      location = session.IncludedFrom(file);
    }
    // A warning about RingKernel's headers that no user code led to is
    // not the user's business.
    if (location.file.empty() && severity != DiagnosticSeverity::kError) return;
  } else if (!IsUserFile(kind)) {
    // The generated main file or no location at all: only an error is
    // worth showing (it would make the parse fail), without a location.
    if (severity != DiagnosticSeverity::kError) return;
  }

  std::string not_found;
  if (IsUserFile(kind) && FileNotFound(message, &not_found) && CharAt(session, clang_location) == '<' &&
      !absl::StartsWith(not_found, "ringkernel/")) {
    message = NoStandardLibrary(not_found);
  }

  session.Report(severity, std::move(location), std::move(message));
  for (size_t i = 0; i < children.size(); ++i) {
    if (static_cast<int>(i) == anchor || !IsUserFile(children[i].kind)) continue;
    if (absl::StartsWith(children[i].text, kIncludedFrom)) {
      // clang's include trail only helps for problems inside a user header;
      // its text repeats the location, with clang's path for the file.
      if (kind == FileKind::kHeader) session.Note(children[i].location, "in a file included from here");
      continue;
    }
    session.Note(children[i].location, children[i].text);
  }
}

}  // namespace

void ConvertClangDiagnostics(ParseSession& session) {
  const ClangApi& api = session.api();
  const unsigned n = api.clang_getNumDiagnostics(session.tu());
  for (unsigned i = 0; i < n; ++i) {
    CXDiagnostic diagnostic = api.clang_getDiagnostic(session.tu(), i);
    ConvertOne(session, diagnostic);
    api.clang_disposeDiagnostic(diagnostic);
  }
}

}  // namespace rk::jit::frontend_internal
