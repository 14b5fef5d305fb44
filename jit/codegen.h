// Copyright 2026 The RingKernel Authors.
//
// codegen.h: HandlerModel → GeneratedUnit, the CUDA translation unit NVRTC
// compiles.
//
// The unit is laid out so that NVRTC reports every problem in the user's own
// files and lines:
//   1. <ringkernel/actor.cuh>, then a forward declaration and the id of each
//      message type (`rk_message_id`, found by argument-dependent lookup from
//      rk::Ctx::send), so that every send in a fragment sees the ids;
//   2. the fragments, each `#include`d under its own name (NVRTC gets them as
//      named headers, with the headers they include);
//   3. the device runtime (<ringkernel/device/runtime.cuh>);
//   4. the generated functions the runtime calls — HandlerKindOf,
//      DispatchThread, DispatchBlock, ConstructActor, RouteIndexOf — with a
//      `#line` before each handler call and each layout assertion pointing at
//      the handler or type it concerns;
//   5. the kernel entry, `rk_system_kernel`.
#ifndef RINGKERNEL_JIT_CODEGEN_H_
#define RINGKERNEL_JIT_CODEGEN_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "jit/handler_model.h"
#include "jit/package.h"

namespace rk::jit {

struct GeneratedUnit {
  std::string name = "rk_program.cu";  // the main file's name, as NVRTC reports it
  std::string source;                  // the main file
  // Every file NVRTC may include, by the name it is included under: the
  // user's sources (fragments and headers) and the embedded device headers.
  std::vector<SourceFile> headers;
  // -D options for the fragments (RK_MAX_PAYLOAD and the user's defines).
  std::vector<std::string> defines;

  friend bool operator==(const GeneratedUnit&, const GeneratedUnit&) = default;
};

// Generates the unit for `model`. InvalidArgument if the model cannot be
// expressed (a name that is not a C++ identifier path, say); the model comes
// from the front-end, so that is a bug report, not a user error.
absl::StatusOr<GeneratedUnit> GenerateUnit(const HandlerModel& model, const BuildOptions& options);

}  // namespace rk::jit

#endif  // RINGKERNEL_JIT_CODEGEN_H_
