// Copyright 2026 The RingKernel Authors.
//
// The compile cache: where it lives, who may own it, and that an entry is
// either returned exactly as stored or refused with an error naming its
// file.
#include "jit/cache.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_support.h"

namespace rk::jit {
namespace {

using ::rk::testing::StatusIs;
using ::rk::testing::TempDir;
using ::testing::AllOf;
using ::testing::HasSubstr;

// Sets or unsets environment variables for one test and restores them.
class ScopedEnv {
 public:
  ScopedEnv() = default;
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;
  ~ScopedEnv() {
    for (const auto& [name, old] : saved_) {
      if (old.has_value()) {
        setenv(name.c_str(), old->c_str(), 1);
      } else {
        unsetenv(name.c_str());
      }
    }
  }
  void Set(const std::string& name, const std::string& value) {
    Save(name);
    setenv(name.c_str(), value.c_str(), 1);
  }
  void Unset(const std::string& name) {
    Save(name);
    unsetenv(name.c_str());
  }

 private:
  void Save(const std::string& name) {
    if (saved_.count(name) != 0) return;
    const char* v = std::getenv(name.c_str());
    saved_[name] = v == nullptr ? std::nullopt : std::optional<std::string>(v);
  }
  std::map<std::string, std::optional<std::string>> saved_;
};

mode_t ModeOf(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return 0;
  return st.st_mode & 07777;
}

std::string Key(const std::string& what) { return CacheKeyBuilder().Add("what", what).Finish(); }

TEST(CacheDirectoryTest, ResolvesFromTheEnvironment) {
  ScopedEnv env;
  env.Set("RINGKERNEL_CACHE_DIR", "/somewhere/rk");
  env.Set("XDG_CACHE_HOME", "/xdg");
  env.Set("HOME", "/home/user");
  EXPECT_EQ(CompileCache::DefaultDirectory().value(), "/somewhere/rk");
  env.Unset("RINGKERNEL_CACHE_DIR");
  EXPECT_EQ(CompileCache::DefaultDirectory().value(), "/xdg/ringkernel");
  env.Set("XDG_CACHE_HOME", "relative/dir");  // the XDG spec says to ignore it
  EXPECT_EQ(CompileCache::DefaultDirectory().value(), "/home/user/.cache/ringkernel");
  env.Unset("XDG_CACHE_HOME");
  EXPECT_EQ(CompileCache::DefaultDirectory().value(), "/home/user/.cache/ringkernel");
  env.Set("RINGKERNEL_CACHE_DIR", "");  // empty counts as unset
  EXPECT_EQ(CompileCache::DefaultDirectory().value(), "/home/user/.cache/ringkernel");
  env.Unset("HOME");
  EXPECT_THAT(CompileCache::DefaultDirectory(),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       AllOf(HasSubstr("HOME is not set"), HasSubstr("set RINGKERNEL_CACHE_DIR"))));
  EXPECT_THAT(CompileCache::Open(), StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("HOME is not set")));
}

TEST(CacheDirectoryTest, OpenCreatesTheDirectoryWithMode0700) {
  TempDir tmp;
  ScopedEnv env;
  const std::string dir = tmp.Join("a/b/cache");
  env.Set("RINGKERNEL_CACHE_DIR", dir);
  absl::StatusOr<CompileCache> cache = CompileCache::Open();
  ASSERT_TRUE(cache.ok()) << cache.status();
  EXPECT_EQ(cache->directory(), dir);
  EXPECT_TRUE(std::filesystem::is_directory(dir));
  EXPECT_EQ(ModeOf(dir), 0700u);
  // The probe file is gone.
  EXPECT_TRUE(std::filesystem::is_empty(dir));

  // XDG_CACHE_HOME and HOME lead to their own folders.
  env.Unset("RINGKERNEL_CACHE_DIR");
  env.Set("XDG_CACHE_HOME", tmp.Join("xdg"));
  cache = CompileCache::Open();
  ASSERT_TRUE(cache.ok()) << cache.status();
  EXPECT_EQ(cache->directory(), tmp.Join("xdg/ringkernel"));
  EXPECT_EQ(ModeOf(tmp.Join("xdg/ringkernel")), 0700u);
  env.Unset("XDG_CACHE_HOME");
  env.Set("HOME", tmp.Join("home"));
  cache = CompileCache::Open();
  ASSERT_TRUE(cache.ok()) << cache.status();
  EXPECT_EQ(cache->directory(), tmp.Join("home/.cache/ringkernel"));
  EXPECT_EQ(ModeOf(tmp.Join("home/.cache/ringkernel")), 0700u);
  // An explicit directory wins over the environment.
  cache = CompileCache::Open(tmp.Join("explicit/"));
  ASSERT_TRUE(cache.ok()) << cache.status();
  EXPECT_EQ(cache->directory(), tmp.Join("explicit"));
}

TEST(CacheDirectoryTest, LooseModeIsTightened) {
  TempDir tmp;
  const std::string dir = tmp.Join("loose");
  ASSERT_EQ(mkdir(dir.c_str(), 0700), 0);
  ASSERT_EQ(chmod(dir.c_str(), 0777), 0);
  ASSERT_EQ(ModeOf(dir), 0777u);
  ASSERT_TRUE(CompileCache::Open(dir).ok());
  EXPECT_EQ(ModeOf(dir), 0700u);
}

TEST(CacheDirectoryTest, RefusesADirectoryOwnedBySomeoneElse) {
  if (geteuid() != 0) GTEST_SKIP() << "giving a directory to another user needs root";
  TempDir tmp;
  const std::string dir = tmp.Join("theirs");
  ASSERT_EQ(mkdir(dir.c_str(), 0700), 0);
  ASSERT_EQ(chmod(dir.c_str(), 0777), 0);
  ASSERT_EQ(chown(dir.c_str(), 4242, 4242), 0);
  EXPECT_THAT(CompileCache::Open(dir),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       AllOf(HasSubstr("refusing the cache directory " + dir), HasSubstr("owned by uid 4242"),
                             HasSubstr("mode 0777"), HasSubstr("RINGKERNEL_CACHE_DIR"))));
  EXPECT_EQ(ModeOf(dir), 0777u);  // not ours to change
}

TEST(CacheDirectoryTest, UnusableDirectoriesFailEarlyNamingThePath) {
  TempDir tmp;
  ScopedEnv env;
  const std::string file = tmp.Join("plain");
  rk::testing::WriteFileOrDie(file, "x");
  // The directory is a regular file.
  env.Set("RINGKERNEL_CACHE_DIR", file);
  EXPECT_THAT(CompileCache::Open(),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       AllOf(HasSubstr("the cache directory " + file + " exists but is not a directory"),
                             HasSubstr("RINGKERNEL_CACHE_DIR"))));
  // The directory would be below a regular file.
  env.Set("RINGKERNEL_CACHE_DIR", file + "/cache");
  EXPECT_THAT(CompileCache::Open(),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       AllOf(HasSubstr("cannot create the cache directory " + file + "/cache"),
                             HasSubstr("Not a directory"), HasSubstr("RINGKERNEL_CACHE_DIR"))));
}

TEST(CacheDirectoryTest, ReadOnlyDirectoryFailsAtOpen) {
  if (geteuid() == 0) GTEST_SKIP() << "root writes through mode bits";
  TempDir tmp;
  const std::string dir = tmp.Join("ro");
  ASSERT_EQ(mkdir(dir.c_str(), 0500), 0);
  EXPECT_THAT(CompileCache::Open(dir),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       AllOf(HasSubstr("the cache directory " + dir + " is not writable"),
                             HasSubstr("RINGKERNEL_CACHE_DIR"))));
}

TEST(CacheTest, StoreThenLookup) {
  TempDir tmp;
  absl::StatusOr<CompileCache> cache = CompileCache::Open(tmp.Join("c"));
  ASSERT_TRUE(cache.ok()) << cache.status();
  const std::string key = Key("one");
  absl::StatusOr<std::optional<std::string>> miss = cache->Lookup(key);
  ASSERT_TRUE(miss.ok()) << miss.status();
  EXPECT_FALSE(miss->has_value());

  std::string payload = "cubin bytes";
  payload.push_back('\0');
  payload += "\xff\x7f" "ELF";
  ASSERT_TRUE(cache->Store(key, payload).ok());
  absl::StatusOr<std::optional<std::string>> hit = cache->Lookup(key);
  ASSERT_TRUE(hit.ok()) << hit.status();
  ASSERT_TRUE(hit->has_value());
  EXPECT_EQ(**hit, payload);
  EXPECT_TRUE(std::filesystem::exists(cache->EntryPath(key)));
  EXPECT_EQ(cache->EntryPath(key).rfind(cache->directory() + "/" + key, 0), 0u);

  // An empty payload, and overwriting an entry.
  ASSERT_TRUE(cache->Store(Key("empty"), "").ok());
  EXPECT_EQ(cache->Lookup(Key("empty")).value(), std::optional<std::string>(""));
  ASSERT_TRUE(cache->Store(key, "new").ok());
  EXPECT_EQ(cache->Lookup(key).value(), std::optional<std::string>("new"));
  // Another key is still a miss.
  EXPECT_FALSE(cache->Lookup(Key("two")).value().has_value());
}

TEST(CacheTest, KeysThatAreNotFileNamesAreRejected) {
  TempDir tmp;
  CompileCache cache = CompileCache::Open(tmp.Join("c")).value();
  for (const std::string& bad : std::vector<std::string>{"", "../escape", "a/b", ".hidden", std::string(200, 'a')}) {
    EXPECT_THAT(cache.Lookup(bad), StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("invalid cache key")));
    EXPECT_THAT(cache.Store(bad, "x"), StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("invalid cache key")));
  }
}

TEST(CacheTest, TamperedEntryIsDataLossNamingTheFile) {
  TempDir tmp;
  CompileCache cache = CompileCache::Open(tmp.Join("c")).value();
  const std::string key = Key("tamper");
  ASSERT_TRUE(cache.Store(key, std::string(1000, 'p')).ok());
  const std::string path = cache.EntryPath(key);
  std::string bytes = rk::testing::ReadFileOrDie(path);
  bytes[bytes.size() - 10] ^= 1;  // a payload byte
  rk::testing::WriteFileOrDie(path, bytes);
  EXPECT_THAT(cache.Lookup(key), StatusIs(absl::StatusCode::kDataLoss,
                                          ::testing::Eq("cache entry " + path +
                                                        " failed verification (checksum mismatch); delete it to "
                                                        "rebuild")));
  bytes[0] = 'X';  // the magic
  rk::testing::WriteFileOrDie(path, bytes);
  EXPECT_THAT(cache.Lookup(key), StatusIs(absl::StatusCode::kDataLoss,
                                          HasSubstr("cache entry " + path + " failed verification (bad magic)")));
}

TEST(CacheTest, TruncatedEntryIsDataLoss) {
  TempDir tmp;
  CompileCache cache = CompileCache::Open(tmp.Join("c")).value();
  const std::string key = Key("truncate");
  ASSERT_TRUE(cache.Store(key, std::string(1000, 'p')).ok());
  const std::string path = cache.EntryPath(key);
  const std::string bytes = rk::testing::ReadFileOrDie(path);
  rk::testing::WriteFileOrDie(path, bytes.substr(0, bytes.size() - 1));
  EXPECT_THAT(cache.Lookup(key), StatusIs(absl::StatusCode::kDataLoss,
                                          AllOf(HasSubstr("cache entry " + path), HasSubstr("size mismatch"),
                                                HasSubstr("delete it to rebuild"))));
  rk::testing::WriteFileOrDie(path, bytes.substr(0, 10));
  EXPECT_THAT(cache.Lookup(key), StatusIs(absl::StatusCode::kDataLoss,
                                          HasSubstr(path + " failed verification (truncated header)")));
  rk::testing::WriteFileOrDie(path, "");
  EXPECT_THAT(cache.Lookup(key), StatusIs(absl::StatusCode::kDataLoss, HasSubstr("truncated header")));
  // Every truncation of a small entry is refused.
  ASSERT_TRUE(cache.Store(key, "0123456789").ok());
  const std::string small = rk::testing::ReadFileOrDie(path);
  for (size_t len = 0; len < small.size(); ++len) {
    rk::testing::WriteFileOrDie(path, small.substr(0, len));
    EXPECT_THAT(cache.Lookup(key), StatusIs(absl::StatusCode::kDataLoss, HasSubstr(path))) << "length " << len;
  }
}

TEST(CacheTest, EntryUnderAnotherKeyIsDataLoss) {
  TempDir tmp;
  CompileCache cache = CompileCache::Open(tmp.Join("c")).value();
  const std::string a = Key("a");
  const std::string b = Key("b");
  ASSERT_EQ(a.size(), b.size());
  ASSERT_TRUE(cache.Store(a, "payload of a").ok());
  ASSERT_EQ(rename(cache.EntryPath(a).c_str(), cache.EntryPath(b).c_str()), 0);
  EXPECT_THAT(cache.Lookup(b), StatusIs(absl::StatusCode::kDataLoss,
                                        HasSubstr("cache entry " + cache.EntryPath(b) +
                                                  " failed verification (key mismatch)")));
  EXPECT_FALSE(cache.Lookup(a).value().has_value());
}

TEST(CacheTest, ConcurrentStoresOfOneKey) {
  TempDir tmp;
  CompileCache cache = CompileCache::Open(tmp.Join("c")).value();
  const std::string key = Key("race");
  std::string payload(256 * 1024, '\0');
  for (size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<char>(i * 131 + 7);
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 10; ++i) {
        if (!cache.Store(key, payload).ok()) failures.fetch_add(1);
        absl::StatusOr<std::optional<std::string>> seen = cache.Lookup(key);
        // A reader sees no entry yet or the whole entry, never a part.
        if (!seen.ok() || (seen->has_value() && **seen != payload)) failures.fetch_add(1);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  absl::StatusOr<std::optional<std::string>> hit = cache.Lookup(key);
  ASSERT_TRUE(hit.ok()) << hit.status();
  ASSERT_TRUE(hit->has_value());
  EXPECT_EQ(**hit, payload);
  // Only the entry remains: no temporary files left behind.
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(cache.directory())) names.push_back(e.path().string());
  EXPECT_EQ(names, std::vector<std::string>{cache.EntryPath(key)});
}

TEST(CacheTest, CachedLookupOfOneMegabyteIsFast) {
  TempDir tmp;
  CompileCache cache = CompileCache::Open(tmp.Join("c")).value();
  const std::string key = Key("big");
  std::string payload(1 << 20, '\0');
  for (size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<char>((i * 2654435761u) >> 13);
  ASSERT_TRUE(cache.Store(key, payload).ok());
  std::vector<double> ms;
  for (int i = 0; i < 21; ++i) {
    const auto start = std::chrono::steady_clock::now();
    absl::StatusOr<std::optional<std::string>> hit = cache.Lookup(key);
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    ASSERT_TRUE(hit.ok() && hit->has_value());
    ASSERT_EQ(hit->value().size(), payload.size());
  }
  std::sort(ms.begin(), ms.end());
  std::cout << "cached Lookup of a 1 MiB entry: median " << ms[ms.size() / 2] << " ms, min " << ms.front()
            << " ms, max " << ms.back() << " ms\n";
  ::testing::Test::RecordProperty("lookup_1mib_median_us", static_cast<int>(ms[ms.size() / 2] * 1000));
}

TEST(CacheKeyTest, PartsAreFramed) {
  const std::string ab_c = CacheKeyBuilder().Add("ab", "c").Finish();
  const std::string a_bc = CacheKeyBuilder().Add("a", "bc").Finish();
  EXPECT_NE(ab_c, a_bc);
  // Values split differently across parts differ too.
  EXPECT_NE(CacheKeyBuilder().Add("x", "ab").Add("y", "c").Finish(),
            CacheKeyBuilder().Add("x", "a").Add("y", "bc").Finish());
  // Deterministic, 32 lowercase hex digits.
  EXPECT_EQ(ab_c, CacheKeyBuilder().Add("ab", "c").Finish());
  EXPECT_EQ(ab_c.size(), 32u);
  EXPECT_EQ(ab_c.find_first_not_of("0123456789abcdef"), std::string::npos);
  // Order, names, numbers and strings all count.
  EXPECT_NE(CacheKeyBuilder().Add("a", "1").Add("b", "2").Finish(),
            CacheKeyBuilder().Add("b", "2").Add("a", "1").Finish());
  EXPECT_NE(CacheKeyBuilder().Add("abi", uint64_t{1}).Finish(), CacheKeyBuilder().Add("abi", uint64_t{2}).Finish());
  std::string one_as_bytes(8, '\0');
  one_as_bytes[0] = 1;
  EXPECT_NE(CacheKeyBuilder().Add("abi", uint64_t{1}).Finish(), CacheKeyBuilder().Add("abi", one_as_bytes).Finish());
  EXPECT_NE(CacheKeyBuilder().Finish(), CacheKeyBuilder().Add("", "").Finish());
}

}  // namespace
}  // namespace rk::jit
