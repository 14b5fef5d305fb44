// Copyright 2026 The RingKernel Authors.
//
// The files of a parse: where libclang finds each input, what the user calls
// it, and which headers the fragments include.
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "jit/embedded_files.h"
#include "jit/frontend_internal.h"

namespace rk::jit::frontend_internal {
namespace {

// A root no real file system has, so that the generated main file and the
// embedded headers never shadow (or are shadowed by) a user's file.
constexpr char kVirtualRoot[] = "/ringkernel-virtual";

std::string Normalize(const std::string& path) { return std::filesystem::path(path).lexically_normal().string(); }

std::string WorkingDirectory() {
  std::string cwd = "/";
  char buf[4096];
  if (getcwd(buf, sizeof(buf)) != nullptr) cwd = buf;
  if (cwd.empty() || cwd.back() != '/') cwd += '/';
  return cwd;
}

}  // namespace

absl::StatusOr<VirtualFiles> VirtualFiles::Create(const std::vector<SourceFile>& inputs) {
  VirtualFiles vf;
  vf.cwd_ = WorkingDirectory();
  vf.main_path_ = absl::StrCat(kVirtualRoot, "/main.cu");
  vf.embedded_root_ = absl::StrCat(kVirtualRoot, "/include");

  bool any_fragment = false;
  std::string main = "#include <ringkernel/actor.cuh>\n";
  std::vector<File> inputs_laid_out;
  absl::flat_hash_map<std::string, std::string> names_by_path;
  for (const SourceFile& input : inputs) {
    if (input.name.empty()) return absl::InvalidArgumentError("a handler source has an empty name");
    // The name goes into an #include directive of the main file, which has
    // no escapes.
    if (input.name.find_first_of("\"\n\r", 0) != std::string::npos || input.name.find('\0') != std::string::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("handler source name '", input.name, "' contains a quote or a line break"));
    }
    const std::string path = Normalize(input.name.front() == '/' ? input.name : absl::StrCat(vf.cwd_, input.name));
    if (absl::StartsWith(path, absl::StrCat(kVirtualRoot, "/"))) {
      return absl::InvalidArgumentError(absl::StrCat("handler source name '", input.name, "' is under ", kVirtualRoot,
                                                     ", which RingKernel reserves"));
    }
    auto [it, inserted] = names_by_path.try_emplace(path, input.name);
    if (!inserted) {
      return absl::InvalidArgumentError(absl::StrCat("handler sources '", it->second, "' and '", input.name,
                                                     "' are the same file; pass each file once"));
    }
    if (input.fragment) {
      any_fragment = true;
      vf.fragment_names_[path] = input.name;
      absl::StrAppend(&main, "#include \"", path, "\"\n");
    }
    inputs_laid_out.push_back(File{path, input.contents});
  }
  if (!any_fragment) return absl::InvalidArgumentError("no handler fragments to parse");

  vf.files_.push_back(File{vf.main_path_, std::move(main)});
  for (const EmbeddedFile& f : EmbeddedDeviceHeaders()) {
    vf.files_.push_back(File{absl::StrCat(vf.embedded_root_, "/", std::string(f.path)), std::string(f.contents)});
  }
  for (File& f : inputs_laid_out) vf.files_.push_back(std::move(f));
  return vf;
}

std::vector<CXUnsavedFile> VirtualFiles::UnsavedFiles() const {
  std::vector<CXUnsavedFile> unsaved;
  unsaved.reserve(files_.size());
  for (const File& f : files_) {
    unsaved.push_back(CXUnsavedFile{f.path.c_str(), f.contents.data(), static_cast<unsigned long>(f.contents.size())});
  }
  return unsaved;
}

FileKind VirtualFiles::Classify(const std::string& raw_path) const {
  if (raw_path.empty()) return FileKind::kUnknown;
  const std::string path = Normalize(raw_path);
  if (path == main_path_) return FileKind::kMain;
  if (absl::StartsWith(path, absl::StrCat(embedded_root_, "/"))) return FileKind::kEmbedded;
  if (fragment_names_.contains(path)) return FileKind::kFragment;
  return FileKind::kHeader;
}

std::string VirtualFiles::DisplayName(const std::string& raw_path) const {
  const std::string path = Normalize(raw_path);
  if (const std::string* name = FragmentName(path)) return *name;
  if (absl::StartsWith(path, cwd_)) return path.substr(cwd_.size());
  return path;
}

const std::string* VirtualFiles::FragmentName(const std::string& path) const {
  auto it = fragment_names_.find(Normalize(path));
  return it == fragment_names_.end() ? nullptr : &it->second;
}

std::string VirtualFiles::Humanize(std::string text) const {
  if (text.find('/') == std::string::npos) return text;
  auto replace_all = [&text](const std::string& from, const std::string& to) {
    for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
      text.replace(at, from.size(), to);
    }
  };
  // Longest paths first, so that no path is replaced inside a longer one.
  std::vector<std::pair<std::string, std::string>> names(fragment_names_.begin(), fragment_names_.end());
  std::sort(names.begin(), names.end(), [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
  for (const auto& [path, name] : names) replace_all(path, name);
  replace_all(embedded_root_ + "/", "");
  replace_all(main_path_, "<generated>");
  return text;
}

// ---------------------------------------------------------------------------

std::string ParseSession::FilePath(CXFile file) const {
  if (file == nullptr) return "";
  return Str(api_.clang_getFileName(file));
}

const ParseSession::FileInfo& ParseSession::Info(CXFile file) const {
  auto it = file_cache_.find(file);
  if (it != file_cache_.end()) return it->second;
  FileInfo info;
  const std::string path = FilePath(file);
  info.kind = files_.Classify(path);
  if (IsUserFile(info.kind)) info.display = files_.DisplayName(path);
  return file_cache_.emplace(file, std::move(info)).first->second;
}

SourceLocation ParseSession::Locate(CXSourceLocation loc, FileKind* kind) const {
  CXFile file = nullptr;
  unsigned line = 0, column = 0, offset = 0;
  api_.clang_getExpansionLocation(loc, &file, &line, &column, &offset);
  if (file == nullptr) {
    if (kind != nullptr) *kind = FileKind::kUnknown;
    return {};
  }
  const FileInfo& info = Info(file);
  if (kind != nullptr) *kind = info.kind;
  if (!IsUserFile(info.kind)) return {};
  return SourceLocation{info.display, line, column};
}

SourceLocation ParseSession::LocateCursor(CXCursor cursor, FileKind* kind) const {
  return Locate(api_.clang_getCursorLocation(cursor), kind);
}

FileKind ParseSession::CursorFileKind(CXCursor cursor) const {
  FileKind kind = FileKind::kUnknown;
  LocateCursor(cursor, &kind);
  return kind;
}

void ParseSession::Report(DiagnosticSeverity severity, SourceLocation location, std::string message) {
  if (severity == DiagnosticSeverity::kError) ++errors_;
  diagnostics_->push_back(Diagnostic{severity, std::move(location), files_.Humanize(std::move(message))});
}

SourceLocation ParseSession::IncludedFrom(CXFile file) {
  if (!inclusions_loaded_) {
    inclusions_loaded_ = true;
    struct Walk {
      ParseSession* session;
    } walk{this};
    // For every file of the unit, libclang gives the chain of #include
    // locations that led to it, innermost first.
    api_.clang_getInclusions(
        tu_,
        [](CXFile included, CXSourceLocation* stack, unsigned depth, CXClientData data) {
          ParseSession* self = static_cast<Walk*>(data)->session;
          for (unsigned i = 0; i < depth; ++i) {
            FileKind kind = FileKind::kUnknown;
            SourceLocation at = self->Locate(stack[i], &kind);
            if (IsUserFile(kind)) {
              self->included_from_.emplace(included, std::move(at));
              return;
            }
          }
        },
        &walk);
  }
  auto it = included_from_.find(file);
  return it == included_from_.end() ? SourceLocation{} : it->second;
}

// ---------------------------------------------------------------------------

namespace {

struct IncludeScan {
  ParseSession* session;
  std::vector<CXCursor> directives;
};

CXChildVisitResult CollectDirectives(CXCursor cursor, CXCursor, CXClientData data) {
  auto* scan = static_cast<IncludeScan*>(data);
  if (scan->session->api().clang_getCursorKind(cursor) == CXCursor_InclusionDirective) {
    scan->directives.push_back(cursor);
  }
  return CXChildVisit_Continue;
}

// Where the file name of an #include directive starts: diagnostics about
// the included file point there, as clang's own "file not found" does.
SourceLocation FileNameLocation(ParseSession& session, CXCursor directive) {
  const ClangApi& api = session.api();
  CXToken* tokens = nullptr;
  unsigned count = 0;
  api.clang_tokenize(session.tu(), api.clang_getCursorExtent(directive), &tokens, &count);
  SourceLocation where = session.LocateCursor(directive);
  for (unsigned i = 0; i + 1 < count; ++i) {
    const std::string spelling = session.Str(api.clang_getTokenSpelling(session.tu(), tokens[i]));
    if (spelling == "include" || spelling == "include_next" || spelling == "import") {
      where = session.Locate(api.clang_getTokenLocation(session.tu(), tokens[i + 1]));
      break;
    }
  }
  api.clang_disposeTokens(session.tu(), tokens, count);
  return where;
}

}  // namespace

void CollectHeaders(ParseSession& session, std::vector<SourceFile>* sources) {
  const ClangApi& api = session.api();
  IncludeScan scan{&session, {}};
  api.clang_visitChildren(api.clang_getTranslationUnitCursor(session.tu()), CollectDirectives, &scan);

  struct FirstUse {
    std::string path;  // normalised
    SourceLocation where;
  };
  absl::flat_hash_map<std::string, FirstUse> by_spelling;
  for (CXCursor directive : scan.directives) {
    FileKind from_kind = FileKind::kUnknown;
    session.LocateCursor(directive, &from_kind);
    if (!IsUserFile(from_kind)) continue;
    CXFile included = api.clang_getIncludedFile(directive);
    if (included == nullptr) continue;  // not found: clang has reported it
    const std::string path = session.FilePath(included);
    const FileKind kind = session.files().Classify(path);
    if (kind != FileKind::kHeader) continue;  // RingKernel's own, or a fragment including another
    const SourceLocation where = FileNameLocation(session, directive);

    const std::string spelling = session.Str(api.clang_getCursorSpelling(directive));
    const std::string normal = std::filesystem::path(path).lexically_normal().string();
    const std::string shown = session.files().DisplayName(path);
    // NVRTC gets every header under the name it is included by, so one name
    // can only ever mean one file, and must not be a fragment's name either.
    bool clashes_with_fragment = false;
    for (const SourceFile& s : *sources) {
      if (s.fragment && s.name == spelling) clashes_with_fragment = true;
    }
    if (clashes_with_fragment) {
      session.Error(where, absl::StrCat("'", spelling, "' names both the fragment '", spelling, "' and the header '",
                                        shown, "'; every file of a program needs its own name: rename the header"));
      continue;
    }
    auto [it, inserted] = by_spelling.try_emplace(spelling, FirstUse{normal, where});
    if (!inserted) {
      if (it->second.path != normal) {
        session.Error(where, absl::StrCat("'", spelling, "' names two different headers, '",
                                          session.files().DisplayName(it->second.path), "' and '", shown,
                                          "'; headers are compiled under the name they are included by, so "
                                          "rename one of them or include it by a longer path"));
        session.Note(it->second.where, absl::StrCat("'", spelling, "' is first included here"));
      }
      continue;
    }
    size_t size = 0;
    const char* contents = api.clang_getFileContents(session.tu(), included, &size);
    sources->push_back(SourceFile{spelling, contents != nullptr ? std::string(contents, size) : std::string(), false});
  }
}

}  // namespace rk::jit::frontend_internal
