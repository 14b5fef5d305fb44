// Copyright 2026 The RingKernel Authors.
#include "ringkernel/runtime.h"

#include <atomic>
#include <map>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "jit/builder.h"
#include "jit/frontend.h"
#include "jit/package.h"
#include "ringkernel/device/system_layout.h"
#include "ringkernel/status_macros.h"
#include "runtime/cuda_driver.h"
#include "runtime/nvtx.h"
#include "runtime/runtime_impl.h"
#include "runtime/system_impl.h"

namespace rk {

namespace detail {
uint32_t NextTypeSlot() {
  static std::atomic<uint32_t> next{0};
  return next.fetch_add(1, std::memory_order_relaxed);
}
}  // namespace detail

std::string DeviceInfo::arch() const { return absl::StrCat("sm_", capability); }

std::vector<std::string> Program::ActorTypes() const {
  std::vector<std::string> out;
  if (package_ == nullptr) return out;  // a Program no compile or load made
  for (const jit::ActorInfo& a : package_->model.actors) out.push_back(a.name);
  return out;
}

std::vector<std::string> Program::MessageTypes() const {
  std::vector<std::string> out;
  if (package_ == nullptr) return out;  // a Program no compile or load made
  for (const jit::RecordLayout& r : package_->model.records) {
    if (r.is_message()) out.push_back(r.name);
  }
  return out;
}

std::vector<std::string> Program::Routes() const {
  std::vector<std::string> out;
  if (package_ == nullptr) return out;  // a Program no compile or load made
  for (const jit::RouteInfo& r : package_->model.routes) out.push_back(r.name);
  return out;
}

std::vector<std::string> Program::warnings() const {
  std::vector<std::string> out;
  if (package_ == nullptr) return out;
  for (const jit::Diagnostic& d : package_->warnings) out.push_back(d.ToString());
  return out;
}

absl::StatusOr<const jit::Builder*> RuntimeImpl::builder() {
  absl::MutexLock lock(&builder_mu_);
  if (!builder_.has_value() && builder_error_.ok()) {
    jit::Builder::Options bo;
    bo.use_cache = options.use_cache;
    bo.cache_dir = options.cache_dir;
    absl::StatusOr<jit::Builder> b = jit::Builder::Create(bo);
    if (b.ok()) {
      builder_ = *std::move(b);
    } else {
      builder_error_ = b.status();
    }
  }
  if (!builder_error_.ok()) return builder_error_;
  return &*builder_;
}

namespace {
// The system running on each device of this process (RuntimeImpl::TakeForSystem).
absl::Mutex systems_mu(absl::kConstInit);
std::map<int, std::string>& RunningSystems() ABSL_EXCLUSIVE_LOCKS_REQUIRED(systems_mu) {
  static auto* running = new std::map<int, std::string>();
  return *running;
}
}  // namespace

bool RuntimeImpl::TakeForSystem(const std::string& who, std::string* holder) {
  absl::MutexLock lock(&systems_mu);
  auto [it, taken] = RunningSystems().emplace(info_.ordinal, who);
  if (!taken) *holder = it->second;
  return taken;
}

void RuntimeImpl::ReturnFromSystem() {
  absl::MutexLock lock(&systems_mu);
  RunningSystems().erase(info_.ordinal);
}

Runtime::Runtime(std::shared_ptr<RuntimeImpl> impl) : impl_(std::move(impl)) {}

Runtime::~Runtime() = default;

RuntimeImpl::~RuntimeImpl() {
  if (poisoned()) {
    // A kernel that never returned still runs in the context; releasing it
    // would wait forever. Leave it (and the device) to the process's exit.
    new cuda::PrimaryContext(std::move(context_));
  }
}

absl::StatusOr<std::unique_ptr<Runtime>> Runtime::Create(const RuntimeOptions& options) {
  internal::nvtx::Range range(internal::nvtx::Call::kRuntimeCreate);
  RK_ASSIGN_OR_RETURN(const cuda::DriverApi* api, cuda::Driver());
  RK_ASSIGN_OR_RETURN(cuda::Device device, cuda::Device::Create(options.device));
  const cuda::DeviceProperties& p = device.properties();
  if (!p.cooperative_launch) {
    return absl::FailedPreconditionError(
        absl::StrCat("device ", options.device, " (", p.name, ") does not support cooperative launches"));
  }
  if (!p.can_map_host_memory || !p.unified_addressing) {
    return absl::FailedPreconditionError(absl::StrCat("device ", options.device, " (", p.name,
                                                      ") cannot map host memory, which RingKernel's rings need"));
  }
  RK_ASSIGN_OR_RETURN(cuda::PrimaryContext context, cuda::PrimaryContext::Create(device));
  RK_RETURN_IF_ERROR(context.MakeCurrent());
  DeviceInfo info;
  info.ordinal = options.device;
  info.name = p.name;
  info.capability = p.compute_capability();
  info.multiprocessors = p.sm_count;
  info.total_memory = p.total_memory_bytes;
  info.driver_version = api->driver_version;
  auto impl = std::make_unique<RuntimeImpl>(std::move(device), std::move(context), std::nullopt, std::move(info));
  impl->options = options;
  return std::unique_ptr<Runtime>(new Runtime(std::move(impl)));
}

const DeviceInfo& Runtime::device() const { return impl_->info(); }

namespace {

jit::BuildOptions BuildOptionsFor(const DeviceInfo& info, const CompileOptions& options) {
  jit::BuildOptions b;
  // This device's cubin, and PTX from it for the driver to fall back on.
  b.archs = {info.arch()};
  b.ptx = true;
  b.max_payload = options.max_payload;
  b.defines = options.defines;
  if (options.trace) b.defines.push_back("RK_TRACE");
  b.include_dirs = options.include_dirs;
  b.line_info = options.line_info;
  return b;
}

absl::Status WithDiagnostics(const absl::Status& s, const std::vector<jit::Diagnostic>& diags) {
  if (s.ok() || !jit::HasErrors(diags)) return s;
  return absl::Status(s.code(), jit::FormatDiagnostics(diags));
}

}  // namespace

absl::StatusOr<Program> Runtime::CompileFiles(const std::vector<std::string>& paths, const CompileOptions& options) {
  internal::nvtx::Range range(internal::nvtx::Call::kRuntimeCompileFiles);
  RK_ASSIGN_OR_RETURN(std::vector<jit::SourceFile> files, jit::ReadFragments(paths));
  return Compile(files, options);
}

absl::StatusOr<Program> Runtime::CompileSources(const std::vector<Source>& sources, const CompileOptions& options) {
  internal::nvtx::Range range(internal::nvtx::Call::kRuntimeCompileSources);
  std::vector<jit::SourceFile> files;
  for (const Source& s : sources) files.push_back(jit::SourceFile{s.name, s.contents, true});
  return Compile(files, options);
}

absl::StatusOr<Program> Runtime::Compile(const std::vector<jit::SourceFile>& files, const CompileOptions& options) {
  RK_ASSIGN_OR_RETURN(const jit::Builder* builder, impl_->builder());
  std::vector<jit::Diagnostic> diags;
  absl::StatusOr<jit::BuildResult> r = builder->BuildSources(files, BuildOptionsFor(impl_->info(), options), &diags);
  if (!r.ok()) return WithDiagnostics(r.status(), diags);
  Program p;
  p.package_ = std::make_shared<const jit::Package>(std::move(r->package));
  p.cache_hit_ = r->cache_hit;
  p.build_ms_ = r->timings.total_ms;
  return p;
}

absl::StatusOr<Program> Runtime::LoadPackage(const std::string& path) {
  internal::nvtx::Range range(internal::nvtx::Call::kRuntimeLoadPackage);
  RK_ASSIGN_OR_RETURN(jit::Package package, jit::ReadPackage(path));
  absl::StatusOr<Program> p = LoadPackage(std::move(package));
  if (!p.ok()) return absl::Status(p.status().code(), absl::StrCat("package ", path, ": ", p.status().message()));
  return p;
}

absl::StatusOr<Program> Runtime::LoadPackage(jit::Package package) {
  if (jit::SelectImage(package, impl_->info().capability) == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat("it has no image for this GPU (",
                                                      impl_->info().name, ", ", impl_->info().arch(),
                                                      "): it holds ", jit::DescribeImages(package),
                                                      "; rebuild it with --arch ", impl_->info().arch()));
  }
  Program p;
  p.package_ = std::make_shared<const jit::Package>(std::move(package));
  return p;
}

absl::StatusOr<std::unique_ptr<System>> Runtime::Start(const Program& program, const SystemOptions& options) {
  internal::nvtx::Range range(internal::nvtx::Call::kRuntimeStart);
  if (program.package_ == nullptr) return absl::InvalidArgumentError("Start: the program is empty");
  RK_ASSIGN_OR_RETURN(std::unique_ptr<SystemImpl> impl, SystemImpl::Start(impl_, program.package_, options));
  return std::unique_ptr<System>(new System(std::move(impl)));
}

}  // namespace rk
