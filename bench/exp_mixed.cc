// Copyright 2026 The RingKernel Authors.
//
// Experiment 5: a mixed workload of compute (a block-wide step over 16 KiB
// of state: --exp5-rounds LCG steps per word), inject (write 64 words: a
// 260-byte message) and query (read 64 words back), in the ratios
// compute/inject/query 90/5/5, 33/33/33 and 10/45/45, run two ways on the
// same sequence of operations (a fixed pseudo-random order):
//   * model=persistent — a Mixer actor; every operation is an Ask, so it is
//     timed to its completion (the reply), not to the host's store;
//   * model=traditional — each operation is its own launch of an equivalent
//     NVRTC-compiled kernel (same code, same block width), with the copies it
//     needs (256 B host→device for inject, 8 B back for query, pinned host
//     memory), then a stream synchronize.
// Both start from zeroed state and must give the same answer to every
// query (checked). The traditional runs come after the actor system has
// stopped: its persistent kernel holds the SMs, so a launch made while it
// runs may wait for it to exit. Host clock: latency_us per operation (configuration
// + ";op=compute|inject|query"; iteration = the operation's index among
// its type) and ops_per_s per batch of --exp5-batch operations (iteration =
// batch index). --warmup operations run first, unrecorded;
// --iterations operations are measured.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>

#include "absl/strings/str_cat.h"
#include "bench/exp_common.h"
#include "ringkernel/status_macros.h"
#include "runtime/cuda_driver.h"
#include "runtime/cuda_status.h"
#include "runtime/device_buffer.h"
#include "runtime/mapped_buffer.h"
#include "runtime/module.h"
#include "runtime/stream.h"

namespace rk::bench {
namespace {

constexpr char kMixedSource[] = R"(
// rkbench exp5, model=traditional: the Mixer actor's three operations as
// kernels (handlers/bench.cu has the actor).
__device__ __forceinline__ unsigned Churn(unsigned x, int work) {
  for (int i = 0; i < work; ++i) x = x * 1664525u + 1013904223u;
  return x;
}
extern "C" __global__ void mix_step(unsigned* data, int rounds) {
  for (unsigned i = threadIdx.x; i < 4096; i += blockDim.x) data[i] = Churn(data[i], rounds);
}
extern "C" __global__ void mix_inject(unsigned* data, const unsigned* values, int offset) {
  if (threadIdx.x == 0) {
    for (int k = 0; k < 64; ++k) data[(offset + k) & 4095] = values[k];
  }
}
extern "C" __global__ void mix_query(const unsigned* data, int offset, unsigned long long* out) {
  if (threadIdx.x == 0) {
    unsigned long long sum = 0;
    for (int k = 0; k < 64; ++k) sum += data[(offset + k) & 4095];
    *out = sum;
  }
}
)";

enum class OpKind { kCompute = 0, kInject = 1, kQuery = 2 };
constexpr const char* kOpNames[] = {"compute", "inject", "query"};

struct Op {
  OpKind kind;
  int offset;
  unsigned int values[64];
};

struct Mix {
  const char* name;
  int compute_permille;
  int inject_permille;
};
constexpr Mix kMixes[] = {{"compute_heavy", 900, 50}, {"balanced", 334, 333}, {"comm_heavy", 100, 450}};

std::vector<Op> MakeOps(const Mix& mix, int n) {
  uint64_t state = 0x9E3779B97F4A7C15ull ^ static_cast<uint64_t>(mix.compute_permille);
  auto next = [&state] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<uint32_t>(state >> 33);
  };
  std::vector<Op> ops(static_cast<size_t>(n));
  for (Op& op : ops) {
    const int r = static_cast<int>(next() % 1000);
    op.kind = r < mix.compute_permille                         ? OpKind::kCompute
              : r < mix.compute_permille + mix.inject_permille ? OpKind::kInject
                                                               : OpKind::kQuery;
    op.offset = static_cast<int>(next() % 4096);
    for (unsigned int& v : op.values) v = next();
  }
  return ops;
}

// One model's way of running an operation; returns the query's answer (0
// for the others).
using Runner = std::function<absl::StatusOr<uint64_t>(const Op&)>;

// Runs `ops` through `run`, records the measured ones, and returns every
// query's answer in order.
absl::StatusOr<std::vector<uint64_t>> RunMix(const Bench& b, const std::string& config, const std::vector<Op>& ops,
                                             const Runner& run) {
  const std::string exp = "exp5_mixed";
  std::vector<uint64_t> answers;
  int per_kind[3] = {0, 0, 0};
  int in_batch = 0, batch = 0;
  const int batch_size = std::max(1, std::min(b.o.exp5_batch, b.o.iterations));
  Clock::time_point batch_start;
  for (size_t i = 0; i < ops.size(); ++i) {
    const bool measured = static_cast<int>(i) >= b.o.warmup;
    if (measured && in_batch == 0) batch_start = Clock::now();
    const auto t0 = Clock::now();
    RK_ASSIGN_OR_RETURN(uint64_t answer, run(ops[i]));
    const auto t1 = Clock::now();
    if (ops[i].kind == OpKind::kQuery) answers.push_back(answer);
    if (!measured) continue;
    const int k = static_cast<int>(ops[i].kind);
    b.rec.Add(exp, absl::StrCat(config, ";op=", kOpNames[k]), ++per_kind[k], "latency_us",
              std::chrono::duration<double, std::micro>(t1 - t0).count(), "microseconds");
    if (++in_batch == batch_size) {
      b.rec.Add(exp, config, ++batch, "ops_per_s", batch_size / Seconds(batch_start, t1), "operations/second");
      in_batch = 0;
    }
  }
  return answers;
}

// The traditional model's buffers and kernels.
struct Traditional {
  const cuda::DriverApi* cu = nullptr;
  std::unique_ptr<cuda::Module> module;
  CUfunction step = nullptr, inject = nullptr, query = nullptr;
  std::optional<cuda::Stream> stream;
  std::optional<cuda::DeviceBuffer> data, values, out;
  std::optional<cuda::MappedBuffer> pinned;  // [0, 256) values to send, [256, 264) the query's answer
  uint32_t threads = 128;
  int rounds = 0;

  static absl::StatusOr<std::unique_ptr<Traditional>> Create(int capability, uint32_t threads, int rounds) {
    auto t = std::make_unique<Traditional>();
    RK_ASSIGN_OR_RETURN(t->cu, cuda::Driver());
    RK_ASSIGN_OR_RETURN(t->module, LoadKernels("rk_bench_mixed.cu", kMixedSource, capability));
    RK_ASSIGN_OR_RETURN(t->step, t->module->GetFunction("mix_step"));
    RK_ASSIGN_OR_RETURN(t->inject, t->module->GetFunction("mix_inject"));
    RK_ASSIGN_OR_RETURN(t->query, t->module->GetFunction("mix_query"));
    RK_ASSIGN_OR_RETURN(cuda::Stream stream, cuda::Stream::Create());
    t->stream = std::move(stream);
    RK_ASSIGN_OR_RETURN(cuda::DeviceBuffer data, cuda::DeviceBuffer::Create(4096 * 4));
    RK_ASSIGN_OR_RETURN(cuda::DeviceBuffer values, cuda::DeviceBuffer::Create(256));
    RK_ASSIGN_OR_RETURN(cuda::DeviceBuffer out, cuda::DeviceBuffer::Create(8));
    RK_ASSIGN_OR_RETURN(cuda::MappedBuffer pinned, cuda::MappedBuffer::Create(512));
    t->data = std::move(data);
    t->values = std::move(values);
    t->out = std::move(out);
    t->pinned = std::move(pinned);
    t->threads = threads;
    t->rounds = rounds;
    return t;
  }

  absl::Status Reset() {
    RK_RETURN_IF_ERROR(data->ZeroAsync(*stream));
    return stream->Synchronize();
  }

  absl::StatusOr<uint64_t> Run(const Op& op) {
    CUstream st = stream->get();
    CUdeviceptr d = data->get();
    int offset = op.offset;
    switch (op.kind) {
      case OpKind::kCompute: {
        int rounds_arg = rounds;
        void* args[] = {&d, &rounds_arg};
        RK_CU_RETURN_IF_ERROR(cu->cuLaunchKernel(step, 1, 1, 1, threads, 1, 1, 0, st, args, nullptr), "mix_step");
        break;
      }
      case OpKind::kInject: {
        std::memcpy(pinned->host(), op.values, sizeof(op.values));
        CUdeviceptr v = values->get();
        RK_CU_RETURN_IF_ERROR(cu->cuMemcpyHtoDAsync(v, pinned->host(), sizeof(op.values), st), "cuMemcpyHtoDAsync");
        void* args[] = {&d, &v, &offset};
        RK_CU_RETURN_IF_ERROR(cu->cuLaunchKernel(inject, 1, 1, 1, 32, 1, 1, 0, st, args, nullptr), "mix_inject");
        break;
      }
      case OpKind::kQuery: {
        CUdeviceptr o = out->get();
        void* args[] = {&d, &offset, &o};
        RK_CU_RETURN_IF_ERROR(cu->cuLaunchKernel(query, 1, 1, 1, 32, 1, 1, 0, st, args, nullptr), "mix_query");
        RK_CU_RETURN_IF_ERROR(
            cu->cuMemcpyDtoHAsync(static_cast<uint8_t*>(pinned->host()) + 256, o, 8, st), "cuMemcpyDtoHAsync");
        break;
      }
    }
    RK_CU_RETURN_IF_ERROR(cu->cuStreamSynchronize(st), "cuStreamSynchronize");
    if (op.kind != OpKind::kQuery) return uint64_t{0};
    uint64_t sum;
    std::memcpy(&sum, static_cast<uint8_t*>(pinned->host()) + 256, 8);
    return sum;
  }
};

}  // namespace

std::string MixedKernelSource() { return kMixedSource; }

absl::Status Exp5Mixed(const Bench& b) {
  const Options& o = b.o;
  if (o.iterations < 1 || o.warmup < 0) return absl::InvalidArgumentError("exp5 needs --iterations ≥ 1");
  RK_ASSIGN_OR_RETURN(std::unique_ptr<System> sys, b.runtime.Start(b.program, BaseSystemOptions(o)));
  const uint32_t threads = sys->threads_per_block();
  const absl::Duration timeout = absl::Seconds(5);
  std::vector<std::vector<uint64_t>> answers;
  for (const Mix& mix : kMixes) {
    const std::vector<Op> ops = MakeOps(mix, o.warmup + o.iterations);
    RK_ASSIGN_OR_RETURN(ActorId mixer, sys->Spawn("Mixer", absl::StrCat("mixer_", mix.name)));
    const Runner persistent = [&](const Op& op) -> absl::StatusOr<uint64_t> {
      switch (op.kind) {
        case OpKind::kCompute: {
          absl::StatusOr<MixAck> a = sys->Ask<MixAck>(mixer, MixStep{o.exp5_rounds}, timeout);
          if (!a.ok()) return a.status();
          return uint64_t{0};
        }
        case OpKind::kInject: {
          MixInject m;
          m.offset = op.offset;
          std::memcpy(m.values, op.values, sizeof(m.values));
          absl::StatusOr<MixAck> a = sys->Ask<MixAck>(mixer, m, timeout);
          if (!a.ok()) return a.status();
          return uint64_t{0};
        }
        case OpKind::kQuery: {
          absl::StatusOr<MixValue> v = sys->Ask<MixValue>(mixer, MixQuery{op.offset}, timeout);
          if (!v.ok()) return v.status();
          return static_cast<uint64_t>(v->sum);
        }
      }
      return absl::InternalError("unknown operation");
    };
    RK_ASSIGN_OR_RETURN(std::vector<uint64_t> a,
                        RunMix(b, absl::StrCat("mix=", mix.name, ";model=persistent"), ops, persistent));
    answers.push_back(std::move(a));
  }
  RK_RETURN_IF_ERROR(StopCleanly(*sys, "exp5_mixed"));
  sys.reset();

  RK_ASSIGN_OR_RETURN(std::unique_ptr<Traditional> trad,
                      Traditional::Create(b.runtime.device().capability, threads, o.exp5_rounds));
  for (size_t m = 0; m < std::size(kMixes); ++m) {
    const Mix& mix = kMixes[m];
    const std::vector<Op> ops = MakeOps(mix, o.warmup + o.iterations);
    RK_RETURN_IF_ERROR(trad->Reset());
    RK_ASSIGN_OR_RETURN(std::vector<uint64_t> t_answers,
                        RunMix(b, absl::StrCat("mix=", mix.name, ";model=traditional"), ops,
                               [&](const Op& op) { return trad->Run(op); }));
    const std::vector<uint64_t>& p_answers = answers[m];
    if (p_answers != t_answers) {
      size_t k = 0;
      while (k < p_answers.size() && k < t_answers.size() && p_answers[k] == t_answers[k]) ++k;
      return absl::InternalError(absl::StrCat("exp5 ", mix.name, ": the persistent and traditional models disagree "
                                              "at query ", k + 1, " of ", p_answers.size()));
    }
    std::printf("exp5 mix=%s: %zu operations per model; all %zu query answers agree\n", mix.name, ops.size(),
                p_answers.size());
  }
  return absl::OkStatus();
}

}  // namespace rk::bench
