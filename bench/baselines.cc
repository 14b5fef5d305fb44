// Copyright 2026 The RingKernel Authors.
#include "bench/baselines.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <optional>
#include <string>
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

// The floor of a K2K hop: thread 0 of each of two blocks ping-pongs a 4-byte
// flag through global memory, each on its own 128-byte line (block b writes
// flags[32 * b]). A store is followed by __threadfence(), as a message's
// publication would be; a wait is a volatile load (L2, never a stale L1
// line). Block 0 times each of the last `rounds` round trips with clock64,
// and first calibrates clock64 against %globaltimer over 200 us (the
// timer's own tick may be as coarse as 1 us, too coarse for one round
// trip). The dynamic shared memory is never used: the host sizes it so that
// the two blocks cannot share an SM.
__device__ __forceinline__ unsigned long long RkBenchGlobalNs() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__device__ __forceinline__ bool RkBenchWaitFlag(volatile unsigned* flag, unsigned value,
                                                unsigned long long timeout_ns) {
  unsigned spins = 0;
  unsigned long long since = 0;
  while (*flag != value) {
    // The clock is read every 1024 polls only, so a wait that ends soon
    // pays nothing for the time-out.
    if ((++spins & 1023u) == 0) {
      const unsigned long long now = RkBenchGlobalNs();
      if (since == 0) {
        since = now;
      } else if (now - since > timeout_ns) {
        return false;
      }
    }
  }
  return true;
}

// out[0] calibration ns, out[1] calibration cycles, out[2] round trips
// completed (warm-up included), out[3 + b] block b's %smid, out[5 + b] 1 if
// block b gave up waiting.
extern "C" __global__ void rk_bench_flag_pingpong(unsigned* flags, unsigned warmup, unsigned rounds,
                                                  unsigned long long timeout_ns, unsigned* cycles,
                                                  unsigned long long* out) {
  if (threadIdx.x != 0) return;
  const unsigned me = blockIdx.x;
  volatile unsigned* mine = flags + 32u * me;
  volatile unsigned* theirs = flags + 32u * (me ^ 1u);
  unsigned smid;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
  out[3 + me] = smid;
  if (me == 0) {
    const unsigned long long g0 = RkBenchGlobalNs();
    const long long c0 = clock64();
    unsigned long long g1 = g0;
    while (g1 - g0 < 200000ull) g1 = RkBenchGlobalNs();
    const long long c1 = clock64();
    out[0] = g1 - g0;
    out[1] = static_cast<unsigned long long>(c1 - c0);
  }
  const unsigned total = warmup + rounds;
  unsigned done = 0;
  for (unsigned r = 1; r <= total; ++r) {
    if (me == 0) {
      const long long t0 = clock64();
      *mine = r;
      __threadfence();
      if (!RkBenchWaitFlag(theirs, r, timeout_ns)) break;
      const long long t1 = clock64();
      if (r > warmup) cycles[r - warmup - 1] = static_cast<unsigned>(t1 - t0);
    } else {
      if (!RkBenchWaitFlag(theirs, r, timeout_ns)) break;
      *mine = r;
      __threadfence();
    }
    done = r;
  }
  out[5 + me] = done == total ? 0ull : 1ull;
  if (me == 0) out[2] = done;
}
)";

constexpr uint64_t kFlagTimeoutNs = 2000000000ull;

}  // namespace

std::string BaselineKernelSource() { return kSource; }

// The graph API, which only the baselines use: resolved here rather than in
// the runtime's driver table. cuStreamBeginCapture is the _v2 variant of
// CUDA 10.1 (with a capture mode), as cuda.h maps it. cuGraphInstantiate
// changed its prototype in CUDA 12.0 (the 10.0 and 11.0 variants took an
// error node and a log buffer; from 12.0 the name means
// cuGraphInstantiateWithFlags), so it is resolved by the name
// "cuGraphInstantiateWithFlags", which has had one prototype since 11.4.
struct GraphApi {
  PFN_cuStreamBeginCapture_v10010 cuStreamBeginCapture = nullptr;
  PFN_cuStreamEndCapture_v10000 cuStreamEndCapture = nullptr;
  PFN_cuGraphInstantiateWithFlags_v11040 cuGraphInstantiate = nullptr;
  PFN_cuGraphLaunch_v10000 cuGraphLaunch = nullptr;
  PFN_cuGraphExecDestroy_v10000 cuGraphExecDestroy = nullptr;
  PFN_cuGraphDestroy_v10000 cuGraphDestroy = nullptr;

  absl::Status Resolve(const cuda::DriverApi& api) {
    for (absl::Status s : {cuda::ResolveDriverEntryPoint(api, "cuStreamBeginCapture", &cuStreamBeginCapture),
                           cuda::ResolveDriverEntryPoint(api, "cuStreamEndCapture", &cuStreamEndCapture),
                           cuda::ResolveDriverEntryPoint(api, "cuGraphInstantiateWithFlags", &cuGraphInstantiate),
                           cuda::ResolveDriverEntryPoint(api, "cuGraphLaunch", &cuGraphLaunch),
                           cuda::ResolveDriverEntryPoint(api, "cuGraphExecDestroy", &cuGraphExecDestroy),
                           cuda::ResolveDriverEntryPoint(api, "cuGraphDestroy", &cuGraphDestroy)}) {
      if (!s.ok()) return s;
    }
    return absl::OkStatus();
  }
};

struct Baselines::State {
  const cuda::DriverApi* cu = nullptr;
  GraphApi graphs;
  int ordinal = 0;
  std::optional<cuda::Module> module;
  CUfunction empty = nullptr;
  CUfunction persistent = nullptr;
  CUfunction flag_pingpong = nullptr;
  std::optional<cuda::Stream> stream;
  std::optional<cuda::Stream> persistent_stream;
  std::optional<cuda::DeviceBuffer> data;
  std::optional<cuda::MappedBuffer> mailbox;  // [0] command, [16] done
  // The traditional path's 64 bytes in ([0, 64)) and out ([64, 128)):
  // pinned, as an application that cares about copy latency would have
  // them; pageable memory would add a staging copy through a driver buffer.
  std::optional<cuda::MappedBuffer> host_io;
  CUgraph graph = nullptr;
  CUgraphExec graph_exec = nullptr;
  uint64_t seq = 0;
  bool persistent_running = false;
};

Baselines::Baselines(std::unique_ptr<State> state) : s_(std::move(state)) {}

Baselines::~Baselines() {
  if (s_ == nullptr) return;
  if (s_->persistent_running) (void)StopPersistent();
  if (s_->graph_exec != nullptr) s_->graphs.cuGraphExecDestroy(s_->graph_exec);
  if (s_->graph != nullptr) s_->graphs.cuGraphDestroy(s_->graph);
}

absl::StatusOr<std::unique_ptr<Baselines>> Baselines::Create(int ordinal, int capability) {
  auto s = std::make_unique<State>();
  s->ordinal = ordinal;
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
  RK_ASSIGN_OR_RETURN(s->flag_pingpong, s->module->GetFunction("rk_bench_flag_pingpong"));
  RK_ASSIGN_OR_RETURN(cuda::Stream stream, cuda::Stream::Create());
  s->stream = std::move(stream);
  RK_ASSIGN_OR_RETURN(cuda::Stream pstream, cuda::Stream::Create());
  s->persistent_stream = std::move(pstream);
  RK_ASSIGN_OR_RETURN(cuda::DeviceBuffer data, cuda::DeviceBuffer::Create(256, {.zero = true}));
  s->data = std::move(data);
  RK_ASSIGN_OR_RETURN(cuda::MappedBuffer mailbox, cuda::MappedBuffer::Create(256));
  s->mailbox = std::move(mailbox);
  RK_ASSIGN_OR_RETURN(cuda::MappedBuffer host_io, cuda::MappedBuffer::Create(128));
  s->host_io = std::move(host_io);
  std::memset(s->host_io->host(), 1, 64);

  // The graph: one launch of the same kernel, captured once.
  const cuda::DriverApi* cu = s->cu;
  RK_RETURN_IF_ERROR(s->graphs.Resolve(*cu));
  const GraphApi& g = s->graphs;
  CUstream st = s->stream->get();
  CUdeviceptr d = s->data->get();
  void* args[] = {&d};
  RK_CU_RETURN_IF_ERROR(g.cuStreamBeginCapture(st, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), "cuStreamBeginCapture");
  RK_CU_RETURN_IF_ERROR(cu->cuLaunchKernel(s->empty, 1, 1, 1, 32, 1, 1, 0, st, args, nullptr), "cuLaunchKernel");
  RK_CU_RETURN_IF_ERROR(g.cuStreamEndCapture(st, &s->graph), "cuStreamEndCapture");
  RK_CU_RETURN_IF_ERROR(g.cuGraphInstantiate(&s->graph_exec, s->graph, 0), "cuGraphInstantiate");
  return std::unique_ptr<Baselines>(new Baselines(std::move(s)));
}

absl::Status Baselines::Traditional() {
  const cuda::DriverApi* cu = s_->cu;
  CUstream st = s_->stream->get();
  CUdeviceptr d = s_->data->get();
  void* args[] = {&d};
  auto* io = static_cast<uint8_t*>(s_->host_io->host());
  RK_CU_RETURN_IF_ERROR(cu->cuMemcpyHtoDAsync(d + 64, io, 64, st), "cuMemcpyHtoDAsync");
  RK_CU_RETURN_IF_ERROR(cu->cuLaunchKernel(s_->empty, 1, 1, 1, 32, 1, 1, 0, st, args, nullptr), "cuLaunchKernel");
  RK_CU_RETURN_IF_ERROR(cu->cuMemcpyDtoHAsync(io + 64, d + 128, 64, st), "cuMemcpyDtoHAsync");
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
  RK_CU_RETURN_IF_ERROR(s_->graphs.cuGraphLaunch(s_->graph_exec, st), "cuGraphLaunch");
  RK_CU_RETURN_IF_ERROR(cu->cuStreamSynchronize(st), "cuStreamSynchronize");
  return absl::OkStatus();
}

absl::Status Baselines::LaunchReturn() {
  CUdeviceptr d = s_->data->get();
  void* args[] = {&d};
  RK_CU_RETURN_IF_ERROR(s_->cu->cuLaunchKernel(s_->empty, 1, 1, 1, 32, 1, 1, 0, s_->stream->get(), args, nullptr),
                        "cuLaunchKernel");
  return absl::OkStatus();
}

absl::Status Baselines::GraphLaunchReturn() {
  RK_CU_RETURN_IF_ERROR(s_->graphs.cuGraphLaunch(s_->graph_exec, s_->stream->get()), "cuGraphLaunch");
  return absl::OkStatus();
}

absl::Status Baselines::Synchronize() { return s_->stream->Synchronize(); }

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

absl::StatusOr<FlagPingPongResult> Baselines::FlagPingPong(int warmup, int rounds) {
  if (warmup < 0 || rounds < 1) return absl::InvalidArgumentError("the flag ping-pong needs at least one round");
  const cuda::DriverApi* cu = s_->cu;
  // More than half an SM's shared memory per block: the two blocks cannot
  // share an SM, so the flag crosses between SMs as a K2K message does.
  CUdevice device;
  RK_CU_RETURN_IF_ERROR(cu->cuDeviceGet(&device, s_->ordinal), "cuDeviceGet");
  int per_sm = 0, optin = 0;
  RK_CU_RETURN_IF_ERROR(
      cu->cuDeviceGetAttribute(&per_sm, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, device),
      "cuDeviceGetAttribute");
  RK_CU_RETURN_IF_ERROR(
      cu->cuDeviceGetAttribute(&optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, device),
      "cuDeviceGetAttribute");
  const int dyn = std::max(0, std::min(optin, per_sm / 2 + 1024));
  RK_CU_RETURN_IF_ERROR(
      cu->cuFuncSetAttribute(s_->flag_pingpong, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, dyn),
      "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES, ", dyn, ")");

  const cuda::Stream& stream = *s_->stream;
  RK_ASSIGN_OR_RETURN(cuda::DeviceBuffer flags, cuda::DeviceBuffer::Create(256, {.zero = true}));
  RK_ASSIGN_OR_RETURN(cuda::DeviceBuffer cycles, cuda::DeviceBuffer::Create(sizeof(uint32_t) * rounds, {.zero = true}));
  RK_ASSIGN_OR_RETURN(cuda::DeviceBuffer out, cuda::DeviceBuffer::Create(8 * sizeof(uint64_t), {.zero = true}));
  CUdeviceptr f = flags.get(), c = cycles.get(), o = out.get();
  unsigned w = static_cast<unsigned>(warmup), r = static_cast<unsigned>(rounds);
  unsigned long long timeout = kFlagTimeoutNs;
  void* args[] = {&f, &w, &r, &timeout, &c, &o};
  RK_CU_RETURN_IF_ERROR(cu->cuLaunchKernel(s_->flag_pingpong, 2, 1, 1, 1, 1, 1, static_cast<unsigned>(dyn),
                                           stream.get(), args, nullptr),
                        "cuLaunchKernel(rk_bench_flag_pingpong)");
  uint64_t res[8] = {};
  std::vector<uint32_t> rt(static_cast<size_t>(rounds));
  RK_RETURN_IF_ERROR(out.DownloadAsync(stream, res, sizeof(res)));
  RK_RETURN_IF_ERROR(cycles.DownloadAsync(stream, rt.data(), sizeof(uint32_t) * rt.size()));
  RK_RETURN_IF_ERROR(stream.Synchronize());
  const uint64_t total = static_cast<uint64_t>(warmup) + static_cast<uint64_t>(rounds);
  if (res[5] != 0 || res[6] != 0 || res[2] != total) {
    return absl::InternalError(absl::StrCat("the flag ping-pong stopped after ", res[2], " of ", total,
                                            " round trips (a block waited more than 2 s)"));
  }
  if (res[3] == res[4]) {
    return absl::InternalError(absl::StrCat("the flag ping-pong's two blocks ran on one SM (", res[3],
                                            "); the floor must cross between SMs"));
  }
  if (res[0] == 0 || res[1] == 0) return absl::InternalError("the flag ping-pong's clock calibration failed");
  FlagPingPongResult result;
  result.sm[0] = static_cast<uint32_t>(res[3]);
  result.sm[1] = static_cast<uint32_t>(res[4]);
  result.ns_per_cycle = static_cast<double>(res[0]) / static_cast<double>(res[1]);
  result.one_way_us.reserve(rt.size());
  for (uint32_t cyc : rt) result.one_way_us.push_back(cyc * result.ns_per_cycle / 2000.0);
  return result;
}

}  // namespace rk::bench
