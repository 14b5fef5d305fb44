// Copyright 2026 The RingKernel Authors.
#include "runtime/nvtx.h"

namespace rk::internal::nvtx {
namespace {

// In the order of Call.
constexpr const char* kCallNames[kCallCount] = {
    "Runtime::Create",     "Runtime::CompileFiles", "Runtime::CompileSources", "Runtime::LoadPackage",
    "Runtime::Start",      "System::Spawn",         "System::Bind",            "System::Unbind",
    "System::Send",        "System::Ask",           "System::Receive",         "System::TakeDeadLetters",
    "System::TakeFailures", "System::Stats",        "System::Stop",
};

}  // namespace

Registry Register() {
  Registry r;
  // The first NVTX call of the process: a tool attaches here, or never.
  r.domain = nvtxDomainCreateA(kDomainName);
  if (r.domain == nullptr) return r;
  for (size_t i = 0; i < kCallCount; ++i) r.names[i] = nvtxDomainRegisterStringA(r.domain, kCallNames[i]);
  return r;
}

const char* CallName(Call call) { return kCallNames[static_cast<size_t>(call)]; }

}  // namespace rk::internal::nvtx
