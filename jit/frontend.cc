// Copyright 2026 The RingKernel Authors.
//
// ReadFragments and ParseFragments: sets up the one translation unit,
// parses it with libclang and runs the passes of frontend_internal.h.
#include "jit/frontend.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "jit/clang_api.h"
#include "jit/frontend_internal.h"
#include "ringkernel/status_macros.h"

namespace rk::jit {
namespace {

using frontend_internal::ParseSession;
using frontend_internal::VirtualFiles;

absl::Status ReadError(const std::string& path, int error) {
  const std::string what = absl::StrCat("cannot read handler fragment '", path, "': ", std::strerror(error));
  switch (error) {
    case ENOENT:
    case ENOTDIR:
      return absl::NotFoundError(what);
    case EACCES:
    case EPERM:
      return absl::PermissionDeniedError(what);
    default:
      return absl::UnavailableError(what);
  }
}

absl::StatusOr<std::string> ReadWholeFile(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ReadError(path, errno);
  struct stat st;
  if (fstat(fd, &st) != 0) {
    const int error = errno;
    close(fd);
    return ReadError(path, error);
  }
  if (S_ISDIR(st.st_mode)) {
    close(fd);
    return absl::InvalidArgumentError(
        absl::StrCat("cannot read handler fragment '", path, "': it is a directory, not a file"));
  }
  std::string contents;
  char buf[65536];
  for (;;) {
    const ssize_t n = read(fd, buf, sizeof(buf));
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      const int error = errno;
      close(fd);
      // EISDIR when a directory slipped past fstat (it cannot, but a read
      // error must still say which file).
      return error == EISDIR ? absl::InvalidArgumentError(absl::StrCat("cannot read handler fragment '", path,
                                                                       "': it is a directory, not a file"))
                             : ReadError(path, error);
    }
    contents.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return contents;
}

// "NAME" or "NAME=VALUE" where NAME is an identifier.
bool IsValidDefine(const std::string& define) {
  const size_t end = define.find('=');
  const std::string name = define.substr(0, end);
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return define.find('\n') == std::string::npos;
}

std::vector<std::string> ClangArguments(const VirtualFiles& files, const FrontendOptions& options) {
  std::vector<std::string> args = {
      "-x",
      "c++",
      "-std=c++17",
      // The device's data layout: long is 64 bits, as are pointers.
      "-target",
      "nvptx64-nvidia-cuda",
      // No system, C++ or clang built-in headers: fragments see what NVRTC
      // gives them and nothing else (the shim declares its built-ins).
      "-nostdinc",
      "-nostdinc++",
      "-nogpulib",
      // Keeps the driver from looking for a CUDA installation (and warning
      // about its version): parsing needs none.
      "--cuda-path=/ringkernel-virtual/no-cuda",
      "-fsyntax-only",
      "-Wno-unknown-cuda-version",
      "-Wno-unused-command-line-argument",
      // NVRTC defines these when it compiles the fragments.
      "-D__CUDACC__",
      "-D__CUDACC_RTC__",
      "-D__CUDA_ARCH__=900",
      "-DRK_PARSE_ONLY=1",
      absl::StrCat("-DRK_MAX_PAYLOAD=", options.max_payload),
      absl::StrCat("-I", files.embedded_root()),
  };
  for (const std::string& define : options.defines) args.push_back(absl::StrCat("-D", define));
  // Quoted includes only: an angle include names a system header, which
  // fragments cannot have.
  for (const std::string& dir : options.include_dirs) {
    args.push_back("-iquote");
    args.push_back(dir);
  }
  return args;
}

// The error diagnostics appended since `first`, each with the notes that
// follow it, for the status message.
std::string FormatErrors(const std::vector<Diagnostic>& diagnostics, size_t first) {
  std::vector<Diagnostic> errors;
  bool in_error = false;
  for (size_t i = first; i < diagnostics.size(); ++i) {
    const Diagnostic& d = diagnostics[i];
    if (d.severity == DiagnosticSeverity::kError) {
      in_error = true;
    } else if (d.severity != DiagnosticSeverity::kNote) {
      in_error = false;
    }
    if (in_error) errors.push_back(d);
  }
  std::string text = FormatDiagnostics(errors);
  if (!text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

}  // namespace

absl::StatusOr<std::vector<SourceFile>> ReadFragments(const std::vector<std::string>& paths) {
  std::vector<SourceFile> fragments;
  fragments.reserve(paths.size());
  for (const std::string& path : paths) {
    RK_ASSIGN_OR_RETURN(std::string contents, ReadWholeFile(path));
    fragments.push_back(SourceFile{path, std::move(contents), true});
  }
  return fragments;
}

absl::StatusOr<HandlerModel> ParseFragments(const std::vector<SourceFile>& fragments, const FrontendOptions& options,
                                            std::vector<Diagnostic>* diagnostics) {
  std::vector<Diagnostic> local;
  if (diagnostics == nullptr) diagnostics = &local;
  const size_t first = diagnostics->size();

  for (const std::string& define : options.defines) {
    if (!IsValidDefine(define)) {
      return absl::InvalidArgumentError(
          absl::StrCat("bad define '", define, "': expected NAME or NAME=VALUE, NAME an identifier"));
    }
  }
  for (const std::string& dir : options.include_dirs) {
    if (dir.empty()) return absl::InvalidArgumentError("an include directory is empty");
  }
  RK_ASSIGN_OR_RETURN(const ClangApi* api, GetClangApi());
  RK_ASSIGN_OR_RETURN(VirtualFiles files, VirtualFiles::Create(fragments));

  const std::vector<std::string> args = ClangArguments(files, options);
  std::vector<const char*> argv;
  argv.reserve(args.size());
  for (const std::string& a : args) argv.push_back(a.c_str());
  std::vector<CXUnsavedFile> unsaved = files.UnsavedFiles();

  // One index per parse: libclang is thread-safe as long as threads do not
  // share an index or a translation unit.
  CXIndex index = api->clang_createIndex(/*excludeDeclarationsFromPCH=*/0, /*displayDiagnostics=*/0);
  if (index == nullptr) return absl::InternalError("clang_createIndex failed");
  CXTranslationUnit tu = nullptr;
  const CXErrorCode code = api->clang_parseTranslationUnit2(
      index, files.main_path().c_str(), argv.data(), static_cast<int>(argv.size()), unsaved.data(),
      static_cast<unsigned>(unsaved.size()),
      // Keep going after a fatal error (a missing include) so that the user
      // sees every problem at once; the preprocessing record holds the
      // #include directives, from which the headers are collected.
      CXTranslationUnit_KeepGoing | CXTranslationUnit_DetailedPreprocessingRecord, &tu);
  if (code != CXError_Success || tu == nullptr) {
    api->clang_disposeIndex(index);
    return absl::InternalError(absl::StrCat("libclang (", api->info.version,
                                            ") failed to parse the handler fragments (",
                                            code == CXError_Crashed ? "it crashed" : "error code ",
                                            code == CXError_Crashed ? "" : std::to_string(code), ")"));
  }

  ParseSession session(*api, files, tu, diagnostics);
  frontend_internal::ConvertClangDiagnostics(session);
  std::vector<SourceFile> sources;
  for (const SourceFile& f : fragments) {
    if (f.fragment) sources.push_back(f);
  }
  frontend_internal::CollectHeaders(session, &sources);
  HandlerModel model = frontend_internal::BuildModel(session, options);
  model.sources = std::move(sources);

  api->clang_disposeTranslationUnit(tu);
  api->clang_disposeIndex(index);

  if (session.has_errors()) return absl::InvalidArgumentError(FormatErrors(*diagnostics, first));
  return model;
}

}  // namespace rk::jit
