// Copyright 2026 The RingKernel Authors.
//
// cache.h: the content-addressed compile cache.
//
// Entries are keyed by a 128-bit hash of everything that determines an image
// (generated source, headers, options, NVRTC version, architecture, ABI
// version; see CacheKeyBuilder) and stored one file per entry in a per-user
// directory: $RINGKERNEL_CACHE_DIR, else $XDG_CACHE_HOME/ringkernel, else
// ~/.cache/ringkernel, created with mode 0700. Each entry carries a header
// with the key and a checksum of its payload, verified before use: a
// tampered or truncated entry is an error that names the file, never a
// silently wrong image. Writes go to a temporary file and are renamed into
// place, so concurrent builds never see half an entry.
//
// The directory is the cache's own: Open tightens a directory we own to
// 0700 and refuses one that another user owns (a cache others can write
// could feed us cubins). Keys become file names, so Lookup and Store refuse
// (InvalidArgument) keys other than up to 128 letters, digits, '_', '-' and
// '.', not starting with '.'; CacheKeyBuilder's keys always qualify.
//
// Example:
//   RK_ASSIGN_OR_RETURN(rk::jit::CompileCache cache, rk::jit::CompileCache::Open());
//   std::string key = rk::jit::CacheKeyBuilder().Add("source", src).Add("arch", "sm_90").Finish();
//   RK_ASSIGN_OR_RETURN(std::optional<std::string> hit, cache.Lookup(key));
#ifndef RINGKERNEL_JIT_CACHE_H_
#define RINGKERNEL_JIT_CACHE_H_

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace rk::jit {

// Builds a cache key from named parts; the names keep ("ab","c") and
// ("a","bc") apart.
class CacheKeyBuilder {
 public:
  CacheKeyBuilder& Add(std::string_view name, std::string_view value);
  CacheKeyBuilder& Add(std::string_view name, uint64_t value);
  // 32 lowercase hex digits (XXH3-128 of everything added).
  std::string Finish() const;

 private:
  std::string data_;
};

class CompileCache {
 public:
  // Opens (creating if needed, mode 0700) the cache directory: `dir` if not
  // empty, else the environment's choice described above. FailedPrecondition
  // naming the directory when it can't be created or written.
  static absl::StatusOr<CompileCache> Open(const std::string& dir = "");

  // The directory the environment selects (without creating it).
  static absl::StatusOr<std::string> DefaultDirectory();

  // The payload stored under `key`, nullopt on a miss. DataLoss naming the
  // entry's file when it exists but fails verification.
  absl::StatusOr<std::optional<std::string>> Lookup(const std::string& key) const;

  // Stores `payload` under `key` atomically.
  absl::Status Store(const std::string& key, std::string_view payload) const;

  // The file that holds (or would hold) `key`.
  std::string EntryPath(const std::string& key) const;
  const std::string& directory() const { return dir_; }

 private:
  explicit CompileCache(std::string dir) : dir_(std::move(dir)) {}
  std::string dir_;
};

}  // namespace rk::jit

#endif  // RINGKERNEL_JIT_CACHE_H_
