// Copyright 2026 The RingKernel Authors.
//
// runtime.h: the entry point of the host API — a device, the programs built
// for it, and the systems started from them.
//
//   auto runtime = rk::Runtime::Create({.device = 0});                    // absl::StatusOr<...>
//   auto program = (*runtime)->CompileFiles({"bank.cu"});                 // parse + codegen + NVRTC, cached
//   //   or        (*runtime)->LoadPackage("bank.rkpkg");                 // built ahead of time by actorc
//   auto system  = (*runtime)->Start(*program, rk::SystemOptions{});      // the one cooperative launch
//
// Without a CUDA driver or device, Create returns FailedPrecondition saying
// so; compiling needs no GPU (see jit/builder.h or `actorc build`).
//
// A Runtime owns the device's primary context for its lifetime. It is
// thread-safe; Systems must be destroyed before it.
#ifndef RINGKERNEL_RUNTIME_H_
#define RINGKERNEL_RUNTIME_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ringkernel/system.h"

namespace rk {

namespace jit {
struct Package;
struct SourceFile;
}
class RuntimeImpl;
namespace internal {
struct ProgramAccess;  // runtime/program_access.h: the package inside a Program, for actorc
}

struct RuntimeOptions {
  int device = 0;
  bool use_cache = true;
  std::string cache_dir;  // empty: $RINGKERNEL_CACHE_DIR, $XDG_CACHE_HOME/ringkernel, ~/.cache/ringkernel
};

// A handler program with the image for the runtime's device: a built
// package. Cheap to copy (shared, immutable).
class Program {
 public:
  std::vector<std::string> ActorTypes() const;
  std::vector<std::string> MessageTypes() const;
  std::vector<std::string> Routes() const;
  // What its build warned of, one line each ("file:line:col: warning: ...",
  // as actorc prints them): the front-end's and NVRTC's warnings, and a
  // warning for each architecture whose kernel spills registers. The same
  // whether the build hit the compile cache or not, and for a package, what
  // the build that made it warned of.
  std::vector<std::string> warnings() const;
  // Whether building it was a cache hit, and how long it took (ms).
  bool cache_hit() const { return cache_hit_; }
  double build_ms() const { return build_ms_; }

 private:
  friend class Runtime;
  friend struct internal::ProgramAccess;
  std::shared_ptr<const jit::Package> package_;
  bool cache_hit_ = false;
  double build_ms_ = 0;
};

// A handler source for runtime registration.
struct Source {
  std::string name;      // used in diagnostics and by #include between sources
  std::string contents;
};

struct CompileOptions {
  uint32_t max_payload = 4096;
  std::vector<std::string> defines;
  // Record the device timeline (System::StartTrace): defines RK_TRACE.
  // Costs nothing when false; when true, a little on every handler and send
  // while a trace runs, and a test of a shared-memory flag otherwise.
  bool trace = false;
  std::vector<std::string> include_dirs;
  bool line_info = true;
};

struct DeviceInfo {
  int ordinal = 0;
  std::string name;
  int capability = 0;  // major*10+minor
  int multiprocessors = 0;
  uint64_t total_memory = 0;
  int driver_version = 0;  // e.g. 13000
  std::string arch() const;  // "sm_90"
};

class Runtime {
 public:
  static absl::StatusOr<std::unique_ptr<Runtime>> Create(const RuntimeOptions& options = {});
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  // Compiles handler fragments for this device's architecture (and PTX),
  // through the cache. Diagnostics are in the error's message
  // (file:line:col: error: ...).
  absl::StatusOr<Program> CompileFiles(const std::vector<std::string>& paths, const CompileOptions& options = {});
  absl::StatusOr<Program> CompileSources(const std::vector<Source>& sources, const CompileOptions& options = {});
  // Loads a package built by `actorc build`; FailedPrecondition if it has no
  // image this device can run.
  absl::StatusOr<Program> LoadPackage(const std::string& path);

  // Launches the program's persistent kernel. One system runs on a device
  // at a time in a process (every Runtime of the device shares its
  // context, and setting up a system there waits for a running kernel): while
  // one runs, Start returns FailedPrecondition at once; once that system's
  // Stop has returned, Start works again. The System may outlive this
  // Runtime.
  absl::StatusOr<std::unique_ptr<System>> Start(const Program& program, const SystemOptions& options = {});

  const DeviceInfo& device() const;

 private:
  friend struct internal::ProgramAccess;
  explicit Runtime(std::shared_ptr<RuntimeImpl> impl);
  // A package already in memory (jit::Builder's output; ProgramAccess).
  absl::StatusOr<Program> LoadPackage(jit::Package package);
  absl::StatusOr<Program> Compile(const std::vector<jit::SourceFile>& files, const CompileOptions& options);
  // Shared with every System it started: a System may outlive its Runtime
  // (the device context stays until the last of them is gone).
  std::shared_ptr<RuntimeImpl> impl_;
};

}  // namespace rk

#endif  // RINGKERNEL_RUNTIME_H_
