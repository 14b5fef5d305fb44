// Copyright 2026 The RingKernel Authors.
//
// module.h: a loaded CUDA module (cuModuleLoadDataEx) — the cubin, fatbin or
// PTX of a compiled program, with its kernels and globals.
//
// Loading asks the driver for its JIT error and info logs: PTX is compiled
// by the driver at load time, and when that fails the error carries the
// compiler's log (file positions, the offending instruction), which a bare
// CUDA_ERROR_INVALID_PTX does not.
//
// Example (a context is current on this thread):
//   RK_ASSIGN_OR_RETURN(rk::cuda::Module module, rk::cuda::Module::Create(image.bytes, "bank sm_90"));
//   RK_ASSIGN_OR_RETURN(CUfunction kernel, module.GetFunction("rk_system_kernel"));
//   RK_ASSIGN_OR_RETURN(rk::cuda::Module::Global g, module.GetGlobal("rk_config"));
#ifndef RINGKERNEL_RUNTIME_MODULE_H_
#define RINGKERNEL_RUNTIME_MODULE_H_

#include <cuda.h>

#include <cstddef>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "runtime/primary_context.h"

namespace rk::cuda {

// Owns a CUmodule in the context that was current when it was created,
// unloaded on destruction (unless that context was reset meanwhile).
// Move-only. Functions and globals taken from it are valid while it lives.
// Its const methods may be called from several threads at once.
class Module {
 public:
  // A __device__ variable of the module.
  struct Global {
    CUdeviceptr address = 0;
    size_t bytes = 0;
  };

  // Loads `image` — a cubin or fatbin (ELF / fatbin magic), or PTX text —
  // into the context current on the calling thread. `name` describes the
  // image in messages ("bank.rkpkg sm_90"). A failed load returns the
  // driver's status (FailedPrecondition for PTX the JIT rejects or an image
  // with no code for this GPU, InvalidArgument for a malformed image) with
  // the JIT error log appended.
  static absl::StatusOr<Module> Create(absl::string_view image, absl::string_view name = "module");

  Module(Module&& other) noexcept;
  Module& operator=(Module&& other) noexcept;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
  ~Module();

  // The kernel named `name` (its mangled name unless it is extern "C").
  // NotFound names the function and the module.
  absl::StatusOr<CUfunction> GetFunction(absl::string_view name) const;

  // The __device__ variable named `name`. NotFound names it and the module.
  absl::StatusOr<Global> GetGlobal(absl::string_view name) const;

  // What the JIT reported while loading (empty for most cubins).
  const std::string& info_log() const { return info_log_; }
  const std::string& name() const { return name_; }
  CUmodule get() const { return module_; }

 private:
  Module(BoundContext context, CUmodule module, std::string name, std::string info_log)
      : context_(std::move(context)), module_(module), name_(std::move(name)), info_log_(std::move(info_log)) {}
  void Release();

  BoundContext context_;
  CUmodule module_ = nullptr;  // null once moved from
  std::string name_;
  std::string info_log_;
};

// "cubin", "fatbin" or "PTX", from the image's first bytes.
const char* ImageKindName(absl::string_view image);

}  // namespace rk::cuda

#endif  // RINGKERNEL_RUNTIME_MODULE_H_
