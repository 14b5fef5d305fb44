// Copyright 2026 The RingKernel Authors.
//
// nvtx.h: NVTX ranges around the host API, so that an Nsight Systems capture
// of an application (`nsys profile --trace=cuda,nvtx ./app`) shows
// RingKernel's calls — Send, Ask, Spawn, Stop, Runtime::Start, ... — in their
// own domain, "RingKernel", on the thread that made them, next to the
// application's kernels and its own ranges.
//
//   absl::Status System::Unbind(std::string_view route) {
//     internal::nvtx::Range range(internal::nvtx::Call::kUnbind);
//     ...
//   }
//
// NVTX v3 is header-only (the CUDA toolkit's nvtx3/; it needs only -ldl). A
// tool such as nsys injects itself when the process first calls NVTX; until
// then and without one, every NVTX call is a load of a null function pointer
// and a branch. The domain and the call names are registered once, at the
// first range (a function-local static): a range then costs a guard check,
// and without a tool nothing more, since the domain is null. No lock and no
// allocation, so it may sit on the Send path.
//
// Internal: not installed, and the public headers do not include it.
#ifndef RINGKERNEL_RUNTIME_NVTX_H_
#define RINGKERNEL_RUNTIME_NVTX_H_

#include <cstddef>
#include <cstdint>

#include "nvtx3/nvToolsExt.h"

namespace rk::internal::nvtx {

// The domain's name: what Nsight Systems shows as the row of these ranges.
inline constexpr char kDomainName[] = "RingKernel";

// The host API calls that get a range. Each has a registered string: its
// name as the application writes it ("System::Send").
enum class Call : uint8_t {
  kRuntimeCreate,
  kRuntimeCompileFiles,
  kRuntimeCompileSources,
  kRuntimeLoadPackage,
  kRuntimeStart,
  kSpawn,
  kBind,
  kUnbind,
  kSend,  // Send<M> and SendBytes
  kAsk,   // Ask<R> and AskBytes
  kReceive,
  kTakeDeadLetters,
  kTakeFailures,
  kStats,
  kStop,
};
inline constexpr size_t kCallCount = static_cast<size_t>(Call::kStop) + 1;

// "System::Send", ...
const char* CallName(Call call);

// The domain and the calls' strings, registered with the tool at the first
// use. Without a tool (or with one that has no domains) all are null.
struct Registry {
  nvtxDomainHandle_t domain = nullptr;
  nvtxStringHandle_t names[kCallCount] = {};
};
// Registers the domain and the strings (the first NVTX call: a tool
// attaches here, or never); Registered calls it once.
Registry Register();
inline const Registry& Registered() {
  // Trivially destructible: a range that runs during static destruction
  // (a System destroyed at exit) still finds it.
  static const Registry registry = Register();
  return registry;
}

// A range from construction to destruction, on the constructing thread
// (NVTX push/pop ranges nest per thread: destroy in reverse order, on the
// same thread, as a scoped object does).
class Range {
 public:
  // Inline: without a tool attached, a range is a guard's load and a test.
  __attribute__((always_inline)) explicit Range(Call call) {
    const Registry& r = Registered();
    domain_ = r.domain;
    if (domain_ == nullptr) return;
    nvtxEventAttributes_t a{};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    a.message.registered = r.names[static_cast<size_t>(call)];
    nvtxDomainRangePushEx(domain_, &a);
  }
  __attribute__((always_inline)) ~Range() {
    if (domain_ != nullptr) nvtxDomainRangePop(domain_);
  }
  Range(const Range&) = delete;
  Range& operator=(const Range&) = delete;

 private:
  nvtxDomainHandle_t domain_ = nullptr;
};

}  // namespace rk::internal::nvtx

#endif  // RINGKERNEL_RUNTIME_NVTX_H_
