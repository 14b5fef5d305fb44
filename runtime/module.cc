// Copyright 2026 The RingKernel Authors.
#include "runtime/module.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "ringkernel/status_macros.h"
#include "runtime/cuda_driver.h"
#include "runtime/cuda_status.h"

namespace rk::cuda {
namespace {

// Room for the JIT's logs; ptxas errors for a whole program fit easily.
constexpr unsigned int kLogBytes = 64 * 1024;

// A log buffer after the load: the text up to its first NUL, without
// trailing newlines.
std::string TrimLog(const std::string& buffer) {
  std::string log(buffer.data(), strnlen(buffer.data(), buffer.size()));
  while (!log.empty() && (log.back() == '\n' || log.back() == '\r' || log.back() == ' ')) log.pop_back();
  return log;
}

}  // namespace

const char* ImageKindName(absl::string_view image) {
  if (image.size() >= 4 && image.substr(0, 4) == absl::string_view("\x7f"
                                                                   "ELF",
                                                                   4))
    return "cubin";
  // A fatbin starts with the little-endian magic 0xBA55ED50.
  if (image.size() >= 4 && image.substr(0, 4) == absl::string_view("\x50\xed\x55\xba", 4)) return "fatbin";
  return "PTX";
}

absl::StatusOr<Module> Module::Create(absl::string_view image, absl::string_view name) {
  RK_ASSIGN_OR_RETURN(const DriverApi* cu, Driver());
  const std::string module_name(name);
  if (image.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("cannot load module ", module_name, ": the image is empty"));
  }
  RK_ASSIGN_OR_RETURN(BoundContext context, BoundContext::Current(*cu, absl::StrCat("module ", module_name)));

  // The driver reads PTX up to its terminating NUL, which a string_view need
  // not have; a std::string copy always has one (and cubins ignore it).
  const std::string bytes(image);
  std::string error_log(kLogBytes, '\0');
  std::string info_log(kLogBytes, '\0');
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_INFO_LOG_BUFFER,
                            CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES};
  void* values[] = {error_log.data(), reinterpret_cast<void*>(static_cast<uintptr_t>(kLogBytes)), info_log.data(),
                    reinterpret_cast<void*>(static_cast<uintptr_t>(kLogBytes))};
  CUmodule module = nullptr;
  const CUresult result =
      cu->cuModuleLoadDataEx(&module, bytes.c_str(), sizeof(options) / sizeof(options[0]), options, values);
  if (result != CUDA_SUCCESS) {
    const absl::Status status =
        CuStatus(result, absl::StrCat("cuModuleLoadDataEx(", module_name, ": ", ImageKindName(image), " image of ",
                                      image.size(), " bytes)"));
    const std::string log = TrimLog(error_log);
    return absl::Status(status.code(),
                        absl::StrCat(status.message(), log.empty() ? "; the JIT error log is empty"
                                                                   : absl::StrCat("; JIT error log:\n", log)));
  }
  return Module(std::move(context), module, module_name, TrimLog(info_log));
}

Module::Module(Module&& other) noexcept
    : context_(std::move(other.context_)),
      module_(std::exchange(other.module_, nullptr)),
      name_(std::move(other.name_)),
      info_log_(std::move(other.info_log_)) {}

Module& Module::operator=(Module&& other) noexcept {
  if (this != &other) {
    Release();
    context_ = std::move(other.context_);
    module_ = std::exchange(other.module_, nullptr);
    name_ = std::move(other.name_);
    info_log_ = std::move(other.info_log_);
  }
  return *this;
}

Module::~Module() { Release(); }

void Module::Release() {
  // Errors are ignored: a destructor cannot report them, and a failed unload
  // leaks only until the context goes.
  if (module_ != nullptr && context_.ActivateForRelease()) context_.api()->cuModuleUnload(module_);
  module_ = nullptr;
}

absl::StatusOr<CUfunction> Module::GetFunction(absl::string_view name) const {
  RK_RETURN_IF_ERROR(context_.CheckAlive(absl::StrCat("module ", name_)));
  const std::string function_name(name);
  CUfunction function = nullptr;
  RK_CU_RETURN_IF_ERROR(context_.api()->cuModuleGetFunction(&function, module_, function_name.c_str()),
                        "cuModuleGetFunction(\"", function_name, "\" in module ", name_, ")");
  return function;
}

absl::StatusOr<Module::Global> Module::GetGlobal(absl::string_view name) const {
  RK_RETURN_IF_ERROR(context_.CheckAlive(absl::StrCat("module ", name_)));
  const std::string global_name(name);
  Global global;
  RK_CU_RETURN_IF_ERROR(context_.api()->cuModuleGetGlobal(&global.address, &global.bytes, module_, global_name.c_str()),
                        "cuModuleGetGlobal(\"", global_name, "\" in module ", name_, ")");
  return global;
}

}  // namespace rk::cuda
