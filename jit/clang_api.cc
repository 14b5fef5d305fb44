// Copyright 2026 The RingKernel Authors.
#include "jit/clang_api.h"

#include <dlfcn.h>

#include <cctype>
#include <cstdlib>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace rk::jit {
namespace {

constexpr int kMinimumMajorVersion = 16;

// Debian and Ubuntu name the library differently (Debian's SONAME is
// libclang-16.so.1, apt.llvm.org's builds also ship libclang-16.so.16), and
// the unversioned names only exist with the -dev package. Version 16 comes
// first because it is the one the front-end is tested with.
constexpr const char* kDefaultCandidates[] = {
    "libclang-16.so.1",
    "libclang-16.so.16",
    "libclang-16.so.16.0.6",
    "libclang-16.so",
    "/usr/lib/llvm-16/lib/libclang-16.so.1",
    "/usr/lib/llvm-16/lib/libclang.so.1",
    "/usr/lib/x86_64-linux-gnu/libclang-16.so.1",
    "/usr/lib/x86_64-linux-gnu/libclang-16.so.16",
    "/usr/lib/aarch64-linux-gnu/libclang-16.so.1",
    "libclang-17.so.1",
    "libclang-17.so.17",
    "libclang-18.so.1",
    "libclang-18.so.18",
    "libclang-19.so.1",
    "libclang-19.so.19",
    "libclang.so.1",
    "libclang.so",
};

std::string DlError() {
  const char* e = dlerror();
  return e != nullptr ? e : "unknown dlopen error";
}

// Opens one candidate; on failure returns why, for the error message.
absl::StatusOr<std::unique_ptr<ClangApi>> TryLoad(const std::string& candidate) {
  dlerror();
  void* handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) return absl::NotFoundError(DlError());

  auto api = std::make_unique<ClangApi>();
  std::vector<std::string> missing;
#define RK_CLANG_API_RESOLVE(name)                                       \
  api->name = reinterpret_cast<decltype(&::name)>(dlsym(handle, #name)); \
  if (api->name == nullptr) missing.push_back(#name);
  RK_CLANG_API_FUNCTIONS(RK_CLANG_API_RESOLVE)
#undef RK_CLANG_API_RESOLVE

  // The version first: an older libclang also lacks newer entry points, and
  // "it is version 14" says more than a list of missing functions.
  if (api->clang_getClangVersion != nullptr && api->clang_getCString != nullptr &&
      api->clang_disposeString != nullptr) {
    api->info.version = api->TakeString(api->clang_getClangVersion());
    api->info.major_version = ParseClangMajorVersion(api->info.version);
    if (api->info.major_version < kMinimumMajorVersion) {
      return absl::FailedPreconditionError(
          absl::StrCat("it is '", api->info.version, "', older than libclang ", kMinimumMajorVersion));
    }
  }
  if (!missing.empty()) {
    // The handle stays open: closing a half-used LLVM library is not worth
    // the risk, and this only happens with an unusual library.
    return absl::FailedPreconditionError(
        absl::StrCat("it lacks ", absl::StrJoin(missing, ", "), " (not libclang, or too old a one)"));
  }
  api->info.library = candidate;
  return api;
}

}  // namespace

std::string ClangApi::TakeString(CXString s) const {
  const char* c = clang_getCString(s);
  std::string out = c != nullptr ? c : "";
  clang_disposeString(s);
  return out;
}

int ParseClangMajorVersion(const std::string& version) {
  const std::string key = "version ";
  const size_t at = version.find(key);
  if (at == std::string::npos) return 0;
  int major = 0;
  bool any = false;
  for (size_t i = at + key.size(); i < version.size() && std::isdigit(static_cast<unsigned char>(version[i])); ++i) {
    major = major * 10 + (version[i] - '0');
    any = true;
    if (major > 100000) return 0;
  }
  return any ? major : 0;
}

std::vector<std::string> LibclangCandidates() {
  const char* override_path = std::getenv("RINGKERNEL_LIBCLANG");
  if (override_path != nullptr && *override_path != 0) return {override_path};
  return std::vector<std::string>(std::begin(kDefaultCandidates), std::end(kDefaultCandidates));
}

absl::StatusOr<std::unique_ptr<ClangApi>> LoadClangApi(const std::vector<std::string>& candidates) {
  std::vector<std::string> tried;
  for (const std::string& candidate : candidates) {
    absl::StatusOr<std::unique_ptr<ClangApi>> api = TryLoad(candidate);
    if (api.ok()) return api;
    tried.push_back(absl::StrCat("  ", candidate, ": ", api.status().message()));
  }
  const char* override_path = std::getenv("RINGKERNEL_LIBCLANG");
  return absl::FailedPreconditionError(absl::StrCat(
      "cannot load libclang (version ", kMinimumMajorVersion,
      " or newer), which RingKernel needs to parse handler fragments. Tried:\n", absl::StrJoin(tried, "\n"),
      "\nInstall libclang ", kMinimumMajorVersion, " (Debian/Ubuntu: apt install libclang1-", kMinimumMajorVersion, ")",
      override_path != nullptr && *override_path != 0 ? ", or fix" : ", or set",
      " RINGKERNEL_LIBCLANG to the path of libclang.so. Prebuilt packages (.rkpkg) load without it."));
}

absl::StatusOr<const ClangApi*> GetClangApi() {
  // Loaded once: a process that lacks libclang keeps the first answer rather
  // than probing the file system on every parse.
  static std::once_flag once;
  static absl::StatusOr<const ClangApi*>* result = nullptr;
  std::call_once(once, [] {
    absl::StatusOr<std::unique_ptr<ClangApi>> api = LoadClangApi(LibclangCandidates());
    if (api.ok()) {
      result = new absl::StatusOr<const ClangApi*>(api->release());
    } else {
      result = new absl::StatusOr<const ClangApi*>(api.status());
    }
  });
  return *result;
}

absl::StatusOr<LibclangInfo> Libclang() {
  absl::StatusOr<const ClangApi*> api = GetClangApi();
  if (!api.ok()) return api.status();
  return (*api)->info;
}

absl::StatusOr<std::string> LibclangVersion() {
  absl::StatusOr<const ClangApi*> api = GetClangApi();
  if (!api.ok()) return api.status();
  return (*api)->info.version;
}

absl::StatusOr<LibclangInfo> ProbeLibclang(const std::vector<std::string>& candidates) {
  absl::StatusOr<std::unique_ptr<ClangApi>> api = LoadClangApi(candidates);
  if (!api.ok()) return api.status();
  return (*api)->info;
}

}  // namespace rk::jit
