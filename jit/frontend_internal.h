// Copyright 2026 The RingKernel Authors.
//
// frontend_internal.h: the pieces of the clang front-end, shared by its
// .cc files (frontend*.cc). Private to jit/; see frontend.h for the API.
//
// One parse goes through these steps:
//   1. `VirtualFiles` lays the inputs out as libclang's unsaved files: a
//      generated main file that includes <ringkernel/actor.cuh> and then each
//      fragment, the embedded RingKernel headers under a virtual include
//      root, and each fragment at its absolute path (so that quoted includes
//      search the fragment's own folder, as the user expects).
//   2. libclang parses the translation unit (frontend.cc).
//   3. `ConvertClangDiagnostics` turns clang's diagnostics into RingKernel
//      ones that point into the user's files, never into RingKernel's.
//   4. `CollectHeaders` finds the user headers the fragments include.
//   5. `BuildModel` walks the AST for actors, handlers, messages and routes,
//      checks the fragment contract and computes layouts.
// Steps 3 to 5 share a `ParseSession`: the translation unit, the file map and
// the diagnostics being collected.
#ifndef RINGKERNEL_JIT_FRONTEND_INTERNAL_H_
#define RINGKERNEL_JIT_FRONTEND_INTERNAL_H_

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "jit/clang_api.h"
#include "jit/frontend.h"
#include "jit/handler_model.h"

namespace rk::jit::frontend_internal {

// What a file of the parse is to the user.
enum class FileKind {
  kUnknown,   // no file (command line, built-in) or not ours to show
  kMain,      // the generated main file
  kEmbedded,  // one of RingKernel's embedded headers
  kFragment,  // a fragment the caller passed
  kHeader,    // any other file: a header of the user's, read from disk or passed in memory
};

inline bool IsUserFile(FileKind kind) { return kind == FileKind::kFragment || kind == FileKind::kHeader; }

// The files of one parse and the paths libclang knows them by. Owns the
// contents it hands to libclang as unsaved files.
class VirtualFiles {
 public:
  // Lays out `inputs`: entries with `fragment == true` are included by the
  // main file in order; the others are headers available to `#include` by
  // name. InvalidArgument for an empty list, an empty or duplicate name, or a
  // name that cannot appear in an #include directive.
  static absl::StatusOr<VirtualFiles> Create(const std::vector<SourceFile>& inputs);

  // The path of the generated main file, to pass to libclang as the source.
  const std::string& main_path() const { return main_path_; }
  // The include root under which the embedded headers are served ("-I").
  const std::string& embedded_root() const { return embedded_root_; }

  // Unsaved files for clang_parseTranslationUnit2; they point into this
  // object, which must outlive the parse.
  std::vector<CXUnsavedFile> UnsavedFiles() const;

  FileKind Classify(const std::string& path) const;

  // The name to show for a file: a fragment's name as the caller gave it;
  // for other files the path, relative to the working directory when the file
  // is below it.
  std::string DisplayName(const std::string& path) const;

  // The fragment (by name) served at `path`, or nullptr.
  const std::string* FragmentName(const std::string& path) const;

  // `text` with every virtual path replaced by the name the user knows: a
  // fragment's path by its name, an embedded header's by "ringkernel/...".
  std::string Humanize(std::string text) const;

 private:
  VirtualFiles() = default;

  struct File {
    std::string path;
    std::string contents;
  };
  std::string cwd_;  // with a trailing '/'
  std::string main_path_;
  std::string embedded_root_;
  std::vector<File> files_;                                       // main, embedded headers, then the inputs
  absl::flat_hash_map<std::string, std::string> fragment_names_;  // path -> name
};

// The state the passes after the parse share.
class ParseSession {
 public:
  ParseSession(const ClangApi& api, const VirtualFiles& files, CXTranslationUnit tu,
               std::vector<Diagnostic>* diagnostics)
      : api_(api), files_(files), tu_(tu), diagnostics_(diagnostics) {}

  const ClangApi& api() const { return api_; }
  const VirtualFiles& files() const { return files_; }
  CXTranslationUnit tu() const { return tu_; }

  std::string Str(CXString s) const { return api_.TakeString(s); }
  std::string FilePath(CXFile file) const;

  // Where `loc` is (its expansion location), in the user's terms. `kind`, if
  // not null, receives the kind of file it is in; the location is empty
  // unless that is a user file.
  SourceLocation Locate(CXSourceLocation loc, FileKind* kind = nullptr) const;
  SourceLocation LocateCursor(CXCursor cursor, FileKind* kind = nullptr) const;
  FileKind CursorFileKind(CXCursor cursor) const;

  // Where the user's code includes `file` (directly, or through other
  // RingKernel headers): the #include in a user file nearest to it. Empty
  // when no user file includes it (only the generated main file does).
  SourceLocation IncludedFrom(CXFile file);

  // Records a diagnostic. Virtual paths in `message` are replaced by the
  // names the user knows.
  void Report(DiagnosticSeverity severity, SourceLocation location, std::string message);
  void Error(SourceLocation location, std::string message) {
    Report(DiagnosticSeverity::kError, std::move(location), std::move(message));
  }
  void Note(SourceLocation location, std::string message) {
    Report(DiagnosticSeverity::kNote, std::move(location), std::move(message));
  }
  bool has_errors() const { return errors_ > 0; }

 private:
  struct FileInfo {
    FileKind kind = FileKind::kUnknown;
    std::string display;  // user files only
  };
  // Classifies each file once: locations are looked up for every cursor the
  // walk meets.
  const FileInfo& Info(CXFile file) const;

  const ClangApi& api_;
  const VirtualFiles& files_;
  CXTranslationUnit tu_;
  std::vector<Diagnostic>* diagnostics_;
  int errors_ = 0;
  mutable std::unordered_map<CXFile, FileInfo> file_cache_;
  bool inclusions_loaded_ = false;
  std::unordered_map<CXFile, SourceLocation> included_from_;
};

// Appends clang's diagnostics about the user's code to the session, mapped
// to user locations; drops toolchain noise.
void ConvertClangDiagnostics(ParseSession& session);

// Appends to `sources` one entry (fragment == false) per distinct spelling
// by which the user's files include a header of the user's; reports two
// different headers included under one spelling.
void CollectHeaders(ParseSession& session, std::vector<SourceFile>* sources);

// Walks the translation unit and builds the model (sources excepted),
// reporting every breach of the fragment contract.
HandlerModel BuildModel(ParseSession& session, const FrontendOptions& options);

}  // namespace rk::jit::frontend_internal

#endif  // RINGKERNEL_JIT_FRONTEND_INTERNAL_H_
