// Copyright 2026 The RingKernel Authors.
//
// Experiment 8 (see hopper.h). Each launch runs two blocks of 128 threads
// that ping-pong a P-byte message 16 + --exp8-rounds times; block 0 times
// the last --exp8-rounds round trips with %globaltimer (the first 16 absorb
// the second block's start). latency_us = that time / (2 × rounds): half a
// round trip, one message's delivery; bytes_per_s = P / latency (the
// ping-pong's rate, latency-bound, not a streaming bandwidth). Every word
// of every message is checked by its receiver against the pattern its
// sender wrote (a lost fence would show as errors, and the sample is
// refused). Each block asks for more than half of an SM's shared memory,
// so the two never share an SM (the cluster's two blocks then sit on two
// SMs of one GPC). A wait gives up after 2 s, so a broken run ends with an
// error rather than a hang. iteration = launch; --warmup launches first.
// SM utilisation per method needs a profiler (Nsight Compute); not measured.
#include "bench/hopper.h"

#include <algorithm>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "ringkernel/status_macros.h"
#include "runtime/cuda_driver.h"
#include "runtime/cuda_status.h"
#include "runtime/device_buffer.h"
#include "runtime/module.h"
#include "runtime/stream.h"

namespace rk::bench {
namespace {

constexpr char kHopperSource[] = R"(
// rkbench exp8: block-to-block message passing on sm_90.
typedef unsigned int u32;
typedef unsigned long long u64;

struct HopResult {
  u64 start_ns;     // block 0, after the warm-up round trips
  u64 end_ns;
  u32 errors;       // payload words that did not match, both blocks
  u32 timeouts;     // blocks that gave up waiting
  u32 sm[2];        // %smid of each block
  u32 cluster_ok;   // dsmem: the launch formed one cluster of two
  u32 rounds_done;  // round trips block 0 completed, warm-up included
};

#define HOP_WARM_ROUNDS 16u

__device__ __forceinline__ u64 GlobalNs() {
  u64 t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
__device__ __forceinline__ u32 SmId() {
  u32 s;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
  return s;
}
// Word i of the message of round `round` from block `from`.
__device__ __forceinline__ uint4 Pattern(u32 round, u32 from, u32 i) {
  const u32 a = round * 0x9E3779B1u ^ (from + 1u) * 0x7F4A7C15u ^ i * 0x85EBCA77u;
  return make_uint4(a, a + 1u, a ^ 0xA5A5A5A5u, ~a);
}
__device__ __forceinline__ u32 Mismatch(uint4 v, uint4 e) {
  return (v.x != e.x) | (v.y != e.y) | (v.z != e.z) | (v.w != e.w);
}

// ---- Global memory, gpu scope. ----
__device__ __forceinline__ u32 LdAcquireGpu(const u32* p) {
  u32 v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ void StReleaseGpu(u32* p, u32 v) {
  asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
__device__ __forceinline__ void FenceProxyAsyncGlobal() { asm volatile("fence.proxy.async.global;" ::: "memory"); }
__device__ __forceinline__ void FenceProxyAsyncShared() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }

// ---- Shared memory, cluster scope. ----
__device__ __forceinline__ u32 SmemAddr(const void* p) { return static_cast<u32>(__cvta_generic_to_shared(p)); }
__device__ __forceinline__ u32 ClusterRank() {
  u32 r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}
__device__ __forceinline__ u32 ClusterSize() {
  u32 r;
  asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(r));
  return r;
}
// The address of the same shared variable in block `rank` of the cluster.
__device__ __forceinline__ u32 MapShared(u32 addr, u32 rank) {
  u32 r;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(addr), "r"(rank));
  return r;
}
__device__ __forceinline__ void StCluster(u32 addr, uint4 v) {
  asm volatile("st.shared::cluster.v4.u32 [%0], {%1, %2, %3, %4};" ::"r"(addr), "r"(v.x), "r"(v.y), "r"(v.z),
               "r"(v.w)
               : "memory");
}
__device__ __forceinline__ void StReleaseCluster(u32 addr, u32 v) {
  asm volatile("st.release.cluster.shared::cluster.u32 [%0], %1;" ::"r"(addr), "r"(v) : "memory");
}
__device__ __forceinline__ u32 LdAcquireClusterLocal(u32 addr) {
  u32 v;
  asm volatile("ld.acquire.cluster.shared::cta.u32 %0, [%1];" : "=r"(v) : "r"(addr) : "memory");
  return v;
}
// Every thread of both blocks: what was written before is visible after,
// and both blocks' shared memory exists from the first to the last.
__device__ __forceinline__ void ClusterSync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}

// ---- mbarrier and bulk copies. ----
__device__ __forceinline__ void MbarInit(u32 bar, u32 count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void FenceMbarInit() { asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory"); }
__device__ __forceinline__ void MbarArriveExpectTx(u32 bar, u32 bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ u32 MbarTryWait(u32 bar, u32 parity) {
  u32 done;
  asm volatile(
      "{\n\t.reg .pred p;\n\tmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\tselp.u32 %0, 1, 0, p;\n\t}"
      : "=r"(done)
      : "r"(bar), "r"(parity)
      : "memory");
  return done;
}
__device__ __forceinline__ void BulkCopyToShared(u32 dst, const void* src, u32 bytes, u32 bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(dst),
               "l"(__cvta_generic_to_global(src)), "r"(bytes), "r"(bar)
               : "memory");
}

// ---- The message steps. Each ends with a barrier of the block; s_abort
// is written by thread 0 only between two barriers and read by all after
// one, so every thread leaves the loop at the same round. ----

// Writes round `round`'s message from block `from` into `buf`, then raises
// `flag` (release: the block's writes, ordered before by the barrier, are
// visible to whoever acquires the flag). With `for_async`, a proxy fence
// orders the writes before a reader's bulk copy (the async proxy).
__device__ __forceinline__ void SendGlobal(uint4* buf, u32* flag, u32 words4, u32 round, u32 from, bool for_async) {
  for (u32 i = threadIdx.x; i < words4; i += blockDim.x) __stcg(&buf[i], Pattern(round, from, i));
  if (for_async) FenceProxyAsyncGlobal();
  __syncthreads();
  if (threadIdx.x == 0) StReleaseGpu(flag, round);
}

// Thread 0 waits for `flag` to reach `round`; false if it gave up.
__device__ __forceinline__ bool WaitGlobal(const u32* flag, u32 round, u64 timeout_ns, volatile u32* s_abort) {
  if (threadIdx.x == 0) {
    const u64 start = GlobalNs();
    u32 spins = 0;
    while (LdAcquireGpu(flag) < round) {
      if ((++spins & 255) == 0 && GlobalNs() - start > timeout_ns) {
        *s_abort = 1;
        break;
      }
    }
  }
  __syncthreads();
  return *s_abort == 0;
}

// Reads and checks the message (L2, never a stale L1 line).
__device__ __forceinline__ u32 CheckGlobal(const uint4* buf, u32 words4, u32 round, u32 from) {
  u32 errors = 0;
  for (u32 i = threadIdx.x; i < words4; i += blockDim.x) errors += Mismatch(__ldcg(&buf[i]), Pattern(round, from, i));
  return errors;
}

// Block 0 pings and times; block 1 pongs. `receive` waits for and checks
// round r's message from the other block; `send` sends round r's.
template <class Receive, class Send>
__device__ __forceinline__ void PingPong(u32 me, u32 rounds, volatile u32* s_abort, u32* errors, HopResult* out,
                                         Receive receive, Send send) {
  const u32 total = rounds + HOP_WARM_ROUNDS;
  u64 start = 0;
  u32 r = 1;
  for (; r <= total; ++r) {
    if (me == 0 && r == HOP_WARM_ROUNDS + 1) start = GlobalNs();
    if (me == 0) {
      send(r);
      if (!receive(r)) break;
    } else {
      if (!receive(r)) break;
      send(r);
    }
  }
  const u64 end = GlobalNs();
  if (*errors != 0) atomicAdd(&out->errors, *errors);
  if (threadIdx.x == 0) {
    if (*s_abort != 0) atomicAdd(&out->timeouts, 1u);
    if (me == 0) {
      out->start_ns = start;
      out->end_ns = end;
      out->rounds_done = r - 1;
    }
  }
}

extern "C" __global__ void __launch_bounds__(128) hop_global(uint4* ping, uint4* pong, u32* flags, u32 words4,
                                                             u32 rounds, u64 timeout_ns, HopResult* out) {
  __shared__ u32 s_abort;
  const u32 me = blockIdx.x;
  uint4* mine = me == 0 ? ping : pong;
  const uint4* theirs = me == 0 ? pong : ping;
  u32* my_flag = flags + 32 * me;              // own 128-byte line
  const u32* their_flag = flags + 32 * (me ^ 1u);
  if (threadIdx.x == 0) {
    s_abort = 0;
    out->sm[me] = SmId();
  }
  __syncthreads();
  u32 errors = 0;
  PingPong(
      me, rounds, &s_abort, &errors, out,
      [&](u32 r) {
        if (!WaitGlobal(their_flag, r, timeout_ns, &s_abort)) return false;
        errors += CheckGlobal(theirs, words4, r, me ^ 1u);
        return true;
      },
      [&](u32 r) { SendGlobal(mine, my_flag, words4, r, me, false); });
}

extern "C" __global__ void __launch_bounds__(128) hop_tma(uint4* ping, uint4* pong, u32* flags, u32 words4,
                                                          u32 rounds, u64 timeout_ns, HopResult* out) {
  extern __shared__ __align__(128) unsigned char smem[];
  __shared__ u32 s_abort;
  const u32 bar = SmemAddr(smem);             // the mbarrier, 8 bytes at offset 0
  const uint4* stage = reinterpret_cast<const uint4*>(smem + 128);
  const u32 stage_addr = SmemAddr(smem + 128);
  const u32 me = blockIdx.x;
  uint4* mine = me == 0 ? ping : pong;
  const uint4* theirs = me == 0 ? pong : ping;
  u32* my_flag = flags + 32 * me;
  const u32* their_flag = flags + 32 * (me ^ 1u);
  if (threadIdx.x == 0) {
    s_abort = 0;
    out->sm[me] = SmId();
    MbarInit(bar, 1);
    FenceMbarInit();
  }
  __syncthreads();
  u32 errors = 0;
  u32 phase = 0;  // parity of the mbarrier phase the next copy completes (thread 0)
  PingPong(
      me, rounds, &s_abort, &errors, out,
      [&](u32 r) {
        if (threadIdx.x == 0) {
          const u64 start = GlobalNs();
          u32 spins = 0;
          while (LdAcquireGpu(their_flag) < r) {
            if ((++spins & 255) == 0 && GlobalNs() - start > timeout_ns) {
              s_abort = 1;
              break;
            }
          }
          if (s_abort == 0) {
            // The sender's writes (generic proxy) before this copy (async
            // proxy); the block's reads of the stage (ordered before by the
            // last barrier) before the copy overwrites it.
            FenceProxyAsyncGlobal();
            FenceProxyAsyncShared();
            MbarArriveExpectTx(bar, words4 * 16);
            BulkCopyToShared(stage_addr, theirs, words4 * 16, bar);
            spins = 0;
            while (!MbarTryWait(bar, phase)) {
              if ((++spins & 255) == 0 && GlobalNs() - start > timeout_ns) {
                s_abort = 1;
                break;
              }
            }
            phase ^= 1u;
          }
        }
        __syncthreads();
        if (s_abort != 0) return false;
        for (u32 i = threadIdx.x; i < words4; i += blockDim.x) errors += Mismatch(stage[i], Pattern(r, me ^ 1u, i));
        return true;
      },
      [&](u32 r) { SendGlobal(mine, my_flag, words4, r, me, true); });
}

extern "C" __global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(128)
    hop_dsmem(u32 words4, u32 rounds, u64 timeout_ns, HopResult* out) {
  extern __shared__ __align__(128) unsigned char smem[];
  __shared__ u32 s_abort;
  // This block's inbox: the flag (offset 0) and the payload (offset 128),
  // both written by the other block.
  volatile u32* flag = reinterpret_cast<volatile u32*>(smem);
  const uint4* inbox = reinterpret_cast<const uint4*>(smem + 128);
  const u32 me = ClusterRank();
  const u32 ok = ClusterSize() == 2;
  if (threadIdx.x == 0) {
    *flag = 0;
    s_abort = 0;
    out->sm[me & 1u] = SmId();
    if (me == 0) out->cluster_ok = ok;
  }
  // Both blocks have started and cleared their flags before either writes
  // into the other.
  ClusterSync();
  if (ok) {
    const u32 peer = me ^ 1u;
    const u32 my_flag = SmemAddr(smem);
    const u32 peer_flag = MapShared(SmemAddr(smem), peer);
    const u32 peer_inbox = MapShared(SmemAddr(smem + 128), peer);
    u32 errors = 0;
    PingPong(
        me, rounds, &s_abort, &errors, out,
        [&](u32 r) {
          if (threadIdx.x == 0) {
            const u64 start = GlobalNs();
            u32 spins = 0;
            while (LdAcquireClusterLocal(my_flag) < r) {
              if ((++spins & 255) == 0 && GlobalNs() - start > timeout_ns) {
                s_abort = 1;
                break;
              }
            }
          }
          __syncthreads();
          if (s_abort != 0) return false;
          for (u32 i = threadIdx.x; i < words4; i += blockDim.x) errors += Mismatch(inbox[i], Pattern(r, peer, i));
          return true;
        },
        [&](u32 r) {
          for (u32 i = threadIdx.x; i < words4; i += blockDim.x) StCluster(peer_inbox + 16 * i, Pattern(r, me, i));
          __syncthreads();
          if (threadIdx.x == 0) StReleaseCluster(peer_flag, r);
        });
  }
  // Neither block leaves while the other may still write into its shared
  // memory.
  ClusterSync();
}
)";

constexpr int kPayloads[] = {64, 256, 1024, 4096};
constexpr uint64_t kTimeoutNs = 2000000000ull;

struct HopResult {
  uint64_t start_ns;
  uint64_t end_ns;
  uint32_t errors;
  uint32_t timeouts;
  uint32_t sm[2];
  uint32_t cluster_ok;
  uint32_t rounds_done;
};
static_assert(sizeof(HopResult) == 40, "HopResult mirrors the kernel's");

}  // namespace

std::string HopperKernelSource() { return kHopperSource; }

absl::Status Exp8Hopper(const Bench& b) {
  const std::string exp = "exp8_hopper";
  const DeviceInfo& dev = b.runtime.device();
  if (dev.capability < 90) {
    std::printf("exp8 skipped: thread-block clusters, distributed shared memory and TMA need sm_90; %s is %s\n",
                dev.name.c_str(), dev.arch().c_str());
    return absl::OkStatus();
  }
  if (b.o.exp8_rounds < 1) return absl::InvalidArgumentError("--exp8-rounds must be at least 1");
  RK_ASSIGN_OR_RETURN(const cuda::DriverApi* cu, cuda::Driver());
  CUdevice device;
  RK_CU_RETURN_IF_ERROR(cu->cuDeviceGet(&device, dev.ordinal), "cuDeviceGet");
  int per_sm = 0, optin = 0, cluster_launch = 0;
  RK_CU_RETURN_IF_ERROR(
      cu->cuDeviceGetAttribute(&per_sm, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, device),
      "cuDeviceGetAttribute");
  RK_CU_RETURN_IF_ERROR(
      cu->cuDeviceGetAttribute(&optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, device),
      "cuDeviceGetAttribute");
  RK_CU_RETURN_IF_ERROR(cu->cuDeviceGetAttribute(&cluster_launch, CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH, device),
                        "cuDeviceGetAttribute");
  if (cluster_launch == 0) {
    std::printf("exp8 skipped: %s does not support cluster launches\n", dev.name.c_str());
    return absl::OkStatus();
  }
  // More than half an SM's shared memory per block: one block per SM.
  const int needed = 128 + 4096;
  int dyn = std::min(optin - 1024, per_sm / 2 + 1024);
  if (dyn < needed) {
    dyn = needed;
    std::printf("exp8: cannot keep the two blocks on separate SMs (%d B of shared memory per SM)\n", per_sm);
  }

  RK_ASSIGN_OR_RETURN(std::unique_ptr<cuda::Module> module, LoadKernels("rk_bench_hopper.cu", kHopperSource,
                                                                        dev.capability));
  RK_ASSIGN_OR_RETURN(CUfunction f_global, module->GetFunction("hop_global"));
  RK_ASSIGN_OR_RETURN(CUfunction f_dsmem, module->GetFunction("hop_dsmem"));
  RK_ASSIGN_OR_RETURN(CUfunction f_tma, module->GetFunction("hop_tma"));
  for (CUfunction f : {f_global, f_dsmem, f_tma}) {
    RK_CU_RETURN_IF_ERROR(cu->cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, dyn),
                          "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES, ", dyn, ")");
  }
  RK_ASSIGN_OR_RETURN(cuda::Stream stream, cuda::Stream::Create());
  RK_ASSIGN_OR_RETURN(cuda::DeviceBuffer ping, cuda::DeviceBuffer::Create(4096));
  RK_ASSIGN_OR_RETURN(cuda::DeviceBuffer pong, cuda::DeviceBuffer::Create(4096));
  RK_ASSIGN_OR_RETURN(cuda::DeviceBuffer flags, cuda::DeviceBuffer::Create(256));
  RK_ASSIGN_OR_RETURN(cuda::DeviceBuffer result, cuda::DeviceBuffer::Create(sizeof(HopResult)));
  CUstream st = stream.get();

  for (const char* method : {"global", "dsmem", "tma"}) {
    const std::string m = method;
    const CUfunction f = m == "global" ? f_global : m == "dsmem" ? f_dsmem : f_tma;
    for (int size : kPayloads) {
      const std::string config = absl::StrCat("method=", m, ";payload=", size);
      double sum_us = 0;
      bool shared_sm = false;
      for (int i = 0; i < b.o.warmup + b.o.iterations; ++i) {
        RK_CU_RETURN_IF_ERROR(cu->cuMemsetD8Async(flags.get(), 0, flags.size(), st), "cuMemsetD8Async");
        RK_CU_RETURN_IF_ERROR(cu->cuMemsetD8Async(result.get(), 0, result.size(), st), "cuMemsetD8Async");
        CUdeviceptr p0 = ping.get(), p1 = pong.get(), fl = flags.get(), res = result.get();
        uint32_t words4 = static_cast<uint32_t>(size / 16);
        uint32_t rounds = static_cast<uint32_t>(b.o.exp8_rounds);
        uint64_t timeout = kTimeoutNs;
        void* global_args[] = {&p0, &p1, &fl, &words4, &rounds, &timeout, &res};
        void* dsmem_args[] = {&words4, &rounds, &timeout, &res};
        RK_CU_RETURN_IF_ERROR(cu->cuLaunchKernel(f, 2, 1, 1, 128, 1, 1, static_cast<unsigned>(dyn), st,
                                                 m == "dsmem" ? dsmem_args : global_args, nullptr),
                              "cuLaunchKernel(hop_", m, ")");
        HopResult r{};
        RK_RETURN_IF_ERROR(result.DownloadAsync(stream, &r, sizeof(r)));
        RK_RETURN_IF_ERROR(stream.Synchronize());
        if (m == "dsmem" && r.cluster_ok != 1) {
          return absl::InternalError("exp8: hop_dsmem did not run as one cluster of two blocks");
        }
        if (r.timeouts != 0 || r.errors != 0 || r.rounds_done != rounds + 16 || r.end_ns <= r.start_ns) {
          return absl::InternalError(absl::StrCat("exp8 ", config, ": ", r.timeouts, " block(s) timed out, ", r.errors,
                                                  " payload words wrong, ", r.rounds_done, " of ", rounds + 16,
                                                  " round trips"));
        }
        shared_sm = shared_sm || r.sm[0] == r.sm[1];
        if (i < b.o.warmup) continue;
        const double us = static_cast<double>(r.end_ns - r.start_ns) / 1000.0 / (2.0 * rounds);
        sum_us += us;
        const int it = i - b.o.warmup + 1;
        b.rec.Add(exp, config, it, "latency_us", us, "microseconds");
        b.rec.Add(exp, config, it, "bytes_per_s", size / (us * 1e-6), "bytes/second");
      }
      std::printf("exp8 %-28s %8.4f us one way%s\n", config.c_str(),
                  b.o.iterations > 0 ? sum_us / b.o.iterations : 0.0, shared_sm ? " (the blocks shared an SM)" : "");
    }
  }
  return absl::OkStatus();
}

}  // namespace rk::bench
