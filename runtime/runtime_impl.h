// Copyright 2026 The RingKernel Authors.
//
// runtime_impl.h: the Runtime's internals, shared with the System (internal
// to runtime/).
#ifndef RINGKERNEL_RUNTIME_RUNTIME_IMPL_H_
#define RINGKERNEL_RUNTIME_RUNTIME_IMPL_H_

#include <atomic>
#include <memory>
#include <optional>

#include "absl/synchronization/mutex.h"
#include "jit/builder.h"
#include "ringkernel/runtime.h"
#include "runtime/device.h"
#include "runtime/primary_context.h"

namespace rk {

class RuntimeImpl {
 public:
  RuntimeImpl(cuda::Device device, cuda::PrimaryContext context, std::optional<jit::Builder> builder,
              DeviceInfo info)
      : device_(std::move(device)), context_(std::move(context)), builder_(std::move(builder)), info_(std::move(info)) {}
  // Releases the device context, unless a System's kernel never returned.
  ~RuntimeImpl();

  const cuda::Device& device() const { return device_; }
  cuda::PrimaryContext& context() { return context_; }
  const DeviceInfo& info() const { return info_; }
  // The builder, opened on first use (a runtime that only loads packages
  // never touches the cache directory).
  absl::StatusOr<const jit::Builder*> builder();

  // A System whose kernel never returned (a handler stuck for good) marks
  // the runtime: its context then cannot be released without waiting for
  // that kernel, so the runtime leaves it to the process's exit.
  void MarkPoisoned() { poisoned_.store(true); }
  bool poisoned() const { return poisoned_.load(); }

  // One system at a time per device in a process (every Runtime of a device
  // shares its primary context): while a system's kernel runs, setting up
  // another in that context (loading its module, allocating) waits for the
  // running kernel — measured on an H100: a second Start never reached its
  // launch and had not returned after 60 s. So Start takes the device
  // (TakeForSystem) before any of that, and refuses at once when another
  // system holds it; the system gives it back once its kernel has exited.
  // `holder` describes the running one, for the refusal.
  bool TakeForSystem(const std::string& who, std::string* holder);
  void ReturnFromSystem();

  RuntimeOptions options;

 private:
  cuda::Device device_;
  cuda::PrimaryContext context_;
  absl::Mutex builder_mu_;
  std::optional<jit::Builder> builder_;
  absl::Status builder_error_;
  DeviceInfo info_;
  std::atomic<bool> poisoned_{false};
};

}  // namespace rk

#endif  // RINGKERNEL_RUNTIME_RUNTIME_IMPL_H_
