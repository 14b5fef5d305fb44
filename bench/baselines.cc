// Copyright 2026 The RingKernel Authors.
#include "bench/baselines.h"

#include <atomic>
#include <vector>

#include "absl/strings/str_cat.h"
#include "jit/codegen.h"
#include "jit/nvrtc_compiler.h"
#include "ringkernel/status_macros.h"
#include "runtime/cuda_driver.h"
#include "runtime/cuda_status.h"
#include "runtime/device_buffer.h"
#include "runtime/mapped_buffer.h"
#include "runtime/module.h"
#include "runtime/stream.h"

namespace rk::bench {
namespace {

// The same trivial work everywhere: bump a counter in device memory.
constexpr char kSource[] = R"(
extern "C" __global__ void rk_bench_empty(unsigned* data) {
  if (threadIdx.x == 0) data[0] += 1;
}

// CuPer-style: one thread spins on a mailbox word in mapped memory; a new
// value is a command, ~0 ends the kernel.
extern "C" __global__ void rk_bench_persistent(unsigned long long* mailbox, unsigned long long* done,
                                               unsigned* data) {
  if (threadIdx.x != 0) return;
  unsigned long long seen = 0;
  for (;;) {
    unsigned long long v;
    asm volatile("ld.relaxed.sys.u64 %0, [%1];" : "=l"(v) : "l"(mailbox) : "memory");
    if (v == seen) continue;
    if (v == ~0ull) break;
    data[0] += 1;
    asm volatile("st.relaxed.sys.u64 [%0], %1;" ::"l"(done), "l"(v) : "memory");
    seen = v;
  }
}
)";

}  // namespace

struct Baselines::State {
  const cuda::DriverApi* cu = nullptr;
  std::optional<cuda::Module> module;
  CUfunction empty = nullptr;
  CUfunction persistent = nullptr;
  std::optional<cuda::Stream> stream;
  std::optional<cuda::Stream> persistent_stream;
  std::optional<cuda::DeviceBuffer> data;
  std::optional<cuda::MappedBuffer> mailbox;  // [0] command, [16] done
  std::vector<uint8_t> host_in = std::vector<uint8_t>(64, 1);
  std::vector<uint8_t> host_out = std::vector<uint8_t>(64, 0);
  CUgraph graph = nullptr;
  CUgraphExec graph_exec = nullptr;
  uint64_t seq = 0;
  bool persistent_running = false;
};

Baselines::Baselines(std::unique_ptr<State> state) : s_(std::move(state)) {}

Baselines::~Baselines() {
  if (s_ == nullptr) return;
  if (s_->persistent_running) (void)StopPersistent();
  if (s_->graph_exec != nullptr) s_->cu->cuGraphExecDestroy(s_->graph_exec);
  if (s_->graph != nullptr) s_->cu->cuGraphDestroy(s_->graph);
}

absl::StatusOr<std::unique_ptr<Baselines>> Baselines::Create(int capability) {
  auto s = std::make_unique<State>();
  RK_ASSIGN_OR_RETURN(s->cu, cuda::Driver());
  jit::GeneratedUnit unit;
  unit.name = "rk_bench_baselines.cu";
  unit.source = kSource;
  std::vector<jit::Diagnostic> diags;
  RK_ASSIGN_OR_RETURN(jit::NvrtcOutput out, jit::CompileForArch(unit, absl::StrCat("sm_", capability), false, &diags));
  RK_ASSIGN_OR_RETURN(cuda::Module module, cuda::Module::Create(out.cubin.bytes, "baselines"));
  s->module = std::move(module);
  RK_ASSIGN_OR_RETURN(s->empty, s->module->GetFunction("rk_bench_empty"));
  RK_ASSIGN_OR_RETURN(s->persistent, s->module->GetFunction("rk_bench_persistent"));
  RK_ASSIGN_OR_RETURN(cuda::Stream stream, cuda::Stream::Create());
  s->stream = std::move(stream);
  RK_ASSIGN_OR_RETURN(cuda::Stream pstream, cuda::Stream::Create());
  s->persistent_stream = std::move(pstream);
  RK_ASSIGN_OR_RETURN(cuda::DeviceBuffer data, cuda::DeviceBuffer::Create(256, {.zero = true}));
  s->data = std::move(data);
  RK_ASSIGN_OR_RETURN(cuda::MappedBuffer mailbox, cuda::MappedBuffer::Create(256));
  s->mailbox = std::move(mailbox);

  // The graph: one launch of the same kernel, captured once.
  const cuda::DriverApi* cu = s->cu;
  CUstream st = s->stream->get();
  CUdeviceptr d = s->data->get();
  void* args[] = {&d};
  RK_CU_RETURN_IF_ERROR(cu->cuStreamBeginCapture(st, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), "cuStreamBeginCapture");
  RK_CU_RETURN_IF_ERROR(cu->cuLaunchKernel(s->empty, 1, 1, 1, 32, 1, 1, 0, st, args, nullptr), "cuLaunchKernel");
  RK_CU_RETURN_IF_ERROR(cu->cuStreamEndCapture(st, &s->graph), "cuStreamEndCapture");
  RK_CU_RETURN_IF_ERROR(cu->cuGraphInstantiate(&s->graph_exec, s->graph, 0), "cuGraphInstantiate");
  return std::unique_ptr<Baselines>(new Baselines(std::move(s)));
}

absl::Status Baselines::Traditional() {
  const cuda::DriverApi* cu = s_->cu;
  CUstream st = s_->stream->get();
  CUdeviceptr d = s_->data->get();
  void* args[] = {&d};
  RK_CU_RETURN_IF_ERROR(cu->cuMemcpyHtoDAsync(d + 64, s_->host_in.data(), 64, st), "cuMemcpyHtoDAsync");
  RK_CU_RETURN_IF_ERROR(cu->cuLaunchKernel(s_->empty, 1, 1, 1, 32, 1, 1, 0, st, args, nullptr), "cuLaunchKernel");
  RK_CU_RETURN_IF_ERROR(cu->cuMemcpyDtoHAsync(s_->host_out.data(), d + 128, 64, st), "cuMemcpyDtoHAsync");
  RK_CU_RETURN_IF_ERROR(cu->cuStreamSynchronize(st), "cuStreamSynchronize");
  return absl::OkStatus();
}

absl::Status Baselines::LaunchSync() {
  const cuda::DriverApi* cu = s_->cu;
  CUstream st = s_->stream->get();
  CUdeviceptr d = s_->data->get();
  void* args[] = {&d};
  RK_CU_RETURN_IF_ERROR(cu->cuLaunchKernel(s_->empty, 1, 1, 1, 32, 1, 1, 0, st, args, nullptr), "cuLaunchKernel");
  RK_CU_RETURN_IF_ERROR(cu->cuStreamSynchronize(st), "cuStreamSynchronize");
  return absl::OkStatus();
}

absl::Status Baselines::GraphLaunchSync() {
  const cuda::DriverApi* cu = s_->cu;
  CUstream st = s_->stream->get();
  RK_CU_RETURN_IF_ERROR(cu->cuGraphLaunch(s_->graph_exec, st), "cuGraphLaunch");
  RK_CU_RETURN_IF_ERROR(cu->cuStreamSynchronize(st), "cuStreamSynchronize");
  return absl::OkStatus();
}

absl::Status Baselines::StartPersistent() {
  auto* words = static_cast<uint64_t*>(s_->mailbox->host());
  __atomic_store_n(&words[0], uint64_t{0}, __ATOMIC_RELEASE);
  __atomic_store_n(&words[16], uint64_t{0}, __ATOMIC_RELEASE);
  s_->seq = 0;
  CUdeviceptr mb = s_->mailbox->device();
  CUdeviceptr done = mb + 128;
  CUdeviceptr d = s_->data->get();
  void* args[] = {&mb, &done, &d};
  RK_CU_RETURN_IF_ERROR(
      s_->cu->cuLaunchKernel(s_->persistent, 1, 1, 1, 32, 1, 1, 0, s_->persistent_stream->get(), args, nullptr),
      "cuLaunchKernel");
  s_->persistent_running = true;
  return absl::OkStatus();
}

absl::Status Baselines::PersistentCommand() {
  auto* words = static_cast<uint64_t*>(s_->mailbox->host());
  const uint64_t seq = ++s_->seq;
  __atomic_store_n(&words[0], seq, __ATOMIC_RELEASE);  // startCuda
  uint64_t spins = 0;
  while (__atomic_load_n(&words[16], __ATOMIC_ACQUIRE) != seq) {  // waitForCuda
    if (++spins > (uint64_t{1} << 32)) return absl::DeadlineExceededError("the persistent baseline stopped answering");
  }
  return absl::OkStatus();
}

absl::Status Baselines::StopPersistent() {
  auto* words = static_cast<uint64_t*>(s_->mailbox->host());
  __atomic_store_n(&words[0], ~uint64_t{0}, __ATOMIC_RELEASE);
  s_->persistent_running = false;
  return s_->persistent_stream->Synchronize();
}

}  // namespace rk::bench
