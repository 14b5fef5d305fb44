// Copyright 2026 The RingKernel Authors.
//
// The compile cache. Its entries become code that runs on the GPU, so the
// directory is treated as a trust boundary: it must belong to the user and
// be closed to everyone else (a cache others can write could feed us
// cubins), and each entry is verified — magic, format version, key, size and
// checksum — before its payload is returned.
//
// Entry file, little-endian:
//   magic "RKCACHE\x1a" (8) | u32 format version | u32 key length
//   | u64 payload size | u64 XXH3-64 of the payload | key bytes | payload
// The file is named "<key>.v<version>.rkc", so a future entry format sits
// beside this one instead of failing verification.
#include "jit/cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <bit>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "ringkernel/status_macros.h"
#include "xxhash.h"

namespace rk::jit {
namespace {

static_assert(std::endian::native == std::endian::little, "cache entries are little-endian, written with memcpy");

constexpr char kEntryMagic[8] = {'R', 'K', 'C', 'A', 'C', 'H', 'E', '\x1a'};
constexpr uint32_t kEntryVersion = 1;
constexpr size_t kEntryHeaderBytes = 32;
// Keys become file names: this keeps them short and free of path syntax.
constexpr size_t kMaxKeyBytes = 128;

std::string ErrnoText(int err) { return std::strerror(err); }

std::string ModeString(mode_t mode) { return absl::StrFormat("%04o", mode & 07777); }

absl::Status CheckKey(const std::string& key) {
  bool ok = !key.empty() && key.size() <= kMaxKeyBytes && key[0] != '.';
  for (char c : key) {
    ok = ok && ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
                c == '-' || c == '.');
  }
  if (!ok) {
    return absl::InvalidArgumentError(absl::StrCat("invalid cache key '", key,
                                                   "': expected up to ", kMaxKeyBytes,
                                                   " letters, digits, '_', '-' or '.' (see CacheKeyBuilder)"));
  }
  return absl::OkStatus();
}

std::string Getenv(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? std::string() : std::string(v);
}

// mkdir -p for the parents of `dir` (mode 0755 less the umask), then `dir`
// itself with mode 0700.
absl::Status MakeDirectories(const std::string& dir) {
  for (size_t pos = dir.find('/', 1); pos != std::string::npos; pos = dir.find('/', pos + 1)) {
    const std::string parent = dir.substr(0, pos);
    if (mkdir(parent.c_str(), 0755) != 0 && errno != EEXIST) {
      const int err = errno;
      return absl::FailedPreconditionError(absl::StrCat("cannot create the cache directory ", dir, ": mkdir ",
                                                        parent, ": ", ErrnoText(err),
                                                        "; set RINGKERNEL_CACHE_DIR to a writable directory"));
    }
  }
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    const int err = errno;
    return absl::FailedPreconditionError(absl::StrCat("cannot create the cache directory ", dir, ": ",
                                                      ErrnoText(err),
                                                      "; set RINGKERNEL_CACHE_DIR to a writable directory"));
  }
  return absl::OkStatus();
}

// A name no other writer uses at the same time: process, thread and a
// per-process counter.
std::string TempName(const std::string& dir, std::string_view what) {
  static std::atomic<uint64_t> counter{0};
  const size_t thread = std::hash<std::thread::id>()(std::this_thread::get_id());
  return absl::StrCat(dir, "/.tmp.", std::string(what), ".", getpid(), ".", absl::Hex(thread), ".",
                      counter.fetch_add(1));
}

bool WriteAll(int fd, const char* data, size_t size) {
  while (size > 0) {
    const ssize_t n = write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

// Reads exactly `size` bytes unless the file ends first; returns the count.
ssize_t ReadAll(int fd, char* data, size_t size) {
  size_t done = 0;
  while (done < size) {
    const ssize_t n = read(fd, data + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return -1;
    if (n == 0) break;
    done += static_cast<size_t>(n);
  }
  return static_cast<ssize_t>(done);
}

}  // namespace

// --- Keys.

// Each part is framed as: u64 name length, name, a type byte, u64 value
// length, value. Lengths make the framing unambiguous, so ("ab", "c") and
// ("a", "bc") hash differently, and the type byte keeps Add("n", 7) apart
// from Add("n", <the same 8 bytes as a string>).
CacheKeyBuilder& CacheKeyBuilder::Add(std::string_view name, std::string_view value) {
  char len[8];
  const uint64_t name_size = name.size();
  std::memcpy(len, &name_size, 8);
  data_.append(len, 8);
  data_.append(name.data(), name.size());
  data_.push_back('s');
  const uint64_t value_size = value.size();
  std::memcpy(len, &value_size, 8);
  data_.append(len, 8);
  data_.append(value.data(), value.size());
  return *this;
}

CacheKeyBuilder& CacheKeyBuilder::Add(std::string_view name, uint64_t value) {
  char buf[8];
  const uint64_t name_size = name.size();
  std::memcpy(buf, &name_size, 8);
  data_.append(buf, 8);
  data_.append(name.data(), name.size());
  data_.push_back('u');
  std::memcpy(buf, &value, 8);
  data_.append(buf, 8);
  return *this;
}

std::string CacheKeyBuilder::Finish() const {
  const XXH128_hash_t h = XXH3_128bits(data_.data(), data_.size());
  return absl::StrFormat("%016x%016x", h.high64, h.low64);
}

// --- The directory.

absl::StatusOr<std::string> CompileCache::DefaultDirectory() {
  if (std::string dir = Getenv("RINGKERNEL_CACHE_DIR"); !dir.empty()) return dir;
  // The XDG base directory spec says relative values are to be ignored.
  if (std::string xdg = Getenv("XDG_CACHE_HOME"); !xdg.empty() && xdg[0] == '/') return xdg + "/ringkernel";
  if (std::string home = Getenv("HOME"); !home.empty()) return home + "/.cache/ringkernel";
  return absl::FailedPreconditionError(
      "cannot choose a compile cache directory: HOME is not set; set RINGKERNEL_CACHE_DIR to a directory");
}

absl::StatusOr<CompileCache> CompileCache::Open(const std::string& dir_arg) {
  std::string dir = dir_arg;
  if (dir.empty()) {
    RK_ASSIGN_OR_RETURN(dir, DefaultDirectory());
  }
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  if (dir[0] != '/') {
    // Relative directories are resolved now so that the cache means the same
    // place if the process changes its working directory later.
    char cwd[4096];
    if (getcwd(cwd, sizeof(cwd)) != nullptr) dir = absl::StrCat(cwd, "/", dir);
  }
  RK_RETURN_IF_ERROR(MakeDirectories(dir));

  struct stat st;
  if (stat(dir.c_str(), &st) != 0) {
    const int err = errno;
    return absl::FailedPreconditionError(absl::StrCat("cannot use the cache directory ", dir, ": ", ErrnoText(err),
                                                      "; set RINGKERNEL_CACHE_DIR to a writable directory"));
  }
  if (!S_ISDIR(st.st_mode)) {
    return absl::FailedPreconditionError(absl::StrCat("the cache directory ", dir,
                                                      " exists but is not a directory; set RINGKERNEL_CACHE_DIR "
                                                      "to a writable directory"));
  }
  const uid_t me = geteuid();
  if (st.st_uid != me) {
    return absl::FailedPreconditionError(absl::StrCat(
        "refusing the cache directory ", dir, ": it is owned by uid ", st.st_uid, " (mode ", ModeString(st.st_mode),
        "), not by this user (uid ", me, "); a cache another user controls could supply the code we run. Set "
        "RINGKERNEL_CACHE_DIR to a directory of your own"));
  }
  if ((st.st_mode & 077) != 0 && chmod(dir.c_str(), 0700) != 0) {
    const int err = errno;
    return absl::FailedPreconditionError(absl::StrCat("the cache directory ", dir, " has mode ",
                                                      ModeString(st.st_mode), " and cannot be restricted to 0700: ",
                                                      ErrnoText(err)));
  }

  // Probe: fail now, with a clear message, rather than at the first Store.
  const std::string probe = TempName(dir, "probe");
  const int fd = open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    const int err = errno;
    return absl::FailedPreconditionError(absl::StrCat("the cache directory ", dir, " is not writable: ",
                                                      ErrnoText(err),
                                                      "; set RINGKERNEL_CACHE_DIR to a writable directory"));
  }
  close(fd);
  unlink(probe.c_str());
  return CompileCache(std::move(dir));
}

std::string CompileCache::EntryPath(const std::string& key) const {
  return absl::StrCat(dir_, "/", key, ".v", kEntryVersion, ".rkc");
}

// --- Entries.

absl::StatusOr<std::optional<std::string>> CompileCache::Lookup(const std::string& key) const {
  RK_RETURN_IF_ERROR(CheckKey(key));
  const std::string path = EntryPath(key);
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT) return std::optional<std::string>();
    return absl::Status(absl::ErrnoToStatusCode(err),
                        absl::StrCat("cannot read cache entry ", path, ": ", ErrnoText(err)));
  }
  auto corrupt = [&](std::string_view why) {
    close(fd);
    return absl::DataLossError(absl::StrCat("cache entry ", path, " failed verification (", std::string(why),
                                            "); delete it to rebuild"));
  };
  struct stat st;
  if (fstat(fd, &st) != 0) {
    const int err = errno;
    close(fd);
    return absl::Status(absl::ErrnoToStatusCode(err),
                        absl::StrCat("cannot read cache entry ", path, ": ", ErrnoText(err)));
  }
  const uint64_t file_size = static_cast<uint64_t>(st.st_size);
  char header[kEntryHeaderBytes];
  if (file_size < kEntryHeaderBytes || ReadAll(fd, header, sizeof(header)) != sizeof(header)) {
    return corrupt("truncated header");
  }
  if (std::memcmp(header, kEntryMagic, sizeof(kEntryMagic)) != 0) return corrupt("bad magic");
  uint32_t version, key_size;
  uint64_t payload_size, checksum;
  std::memcpy(&version, header + 8, 4);
  std::memcpy(&key_size, header + 12, 4);
  std::memcpy(&payload_size, header + 16, 8);
  std::memcpy(&checksum, header + 24, 8);
  if (version != kEntryVersion) return corrupt(absl::StrCat("format version ", version));
  if (key_size != key.size()) return corrupt("key mismatch");
  // The size of the file is known, so a corrupted size field can't make us
  // allocate more than the file holds.
  if (file_size - kEntryHeaderBytes < key_size || payload_size != file_size - kEntryHeaderBytes - key_size) {
    return corrupt(absl::StrCat("size mismatch: the header says ", payload_size, " payload bytes, the file has ",
                                file_size));
  }
  std::string stored_key(key_size, '\0');
  if (ReadAll(fd, stored_key.data(), key_size) != static_cast<ssize_t>(key_size)) return corrupt("truncated key");
  if (stored_key != key) return corrupt("key mismatch");
  std::string payload(payload_size, '\0');
  if (ReadAll(fd, payload.data(), payload_size) != static_cast<ssize_t>(payload_size)) {
    return corrupt("truncated payload");
  }
  if (XXH3_64bits(payload.data(), payload.size()) != checksum) return corrupt("checksum mismatch");
  close(fd);
  return std::optional<std::string>(std::move(payload));
}

absl::Status CompileCache::Store(const std::string& key, std::string_view payload) const {
  RK_RETURN_IF_ERROR(CheckKey(key));
  const std::string path = EntryPath(key);
  char header[kEntryHeaderBytes];
  const uint32_t key_size = static_cast<uint32_t>(key.size());
  const uint64_t payload_size = payload.size();
  const uint64_t checksum = XXH3_64bits(payload.data(), payload.size());
  std::memcpy(header, kEntryMagic, 8);
  std::memcpy(header + 8, &kEntryVersion, 4);
  std::memcpy(header + 12, &key_size, 4);
  std::memcpy(header + 16, &payload_size, 8);
  std::memcpy(header + 24, &checksum, 8);

  // Written beside the entry and renamed over it: a reader sees the old
  // entry, no entry or the new one, never a part. Writers of the same key
  // write the same bytes, so whichever rename lands last is as good.
  const std::string tmp = TempName(dir_, key);
  const int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    const int err = errno;
    return absl::Status(absl::ErrnoToStatusCode(err),
                        absl::StrCat("cannot write cache entry ", path, ": cannot create ", tmp, ": ",
                                     ErrnoText(err)));
  }
  bool ok = WriteAll(fd, header, sizeof(header)) && WriteAll(fd, key.data(), key.size()) &&
            WriteAll(fd, payload.data(), payload.size());
  int err = ok ? 0 : errno;
  // fsync before rename: after a crash the entry is whole or absent rather
  // than renamed into place with blocks never written (verification would
  // catch that, but the user would then have to delete it).
  if (ok && fsync(fd) != 0) {
    ok = false;
    err = errno;
  }
  if (close(fd) != 0 && ok) {
    ok = false;
    err = errno;
  }
  if (ok && rename(tmp.c_str(), path.c_str()) != 0) {
    ok = false;
    err = errno;
  }
  if (!ok) {
    unlink(tmp.c_str());
    return absl::Status(absl::ErrnoToStatusCode(err),
                        absl::StrCat("cannot write cache entry ", path, ": ", ErrnoText(err)));
  }
  return absl::OkStatus();
}

}  // namespace rk::jit
