// cta_fence.cu: what a block-scope fence costs one thread, by what the
// thread did just before it. RingKernel's poller hands a host message to an
// owner thread through shared memory (the entry's stores, a fence, the
// tail's store), and the owner takes it (the tail's read, a fence, the
// entry's reads) and frees the entry after the handler (a fence, the head's
// store) — right after the reply's stores to mapped host memory. Those
// fences were __threadfence_block(), which is fence.sc.cta (MEMBAR.SC.CTA);
// a release or an acquire needs only fence.acq_rel.cta (MEMBAR.ALL.CTA),
// and an acquire read of shared memory at block scope needs no fence at all
// (atom.acquire.cta.shared compiles to the bare ATOMS).
//
// One thread, clock64, 2,000 rounds a configuration: a round is what came
// before the fence, the fence, and a 32-bit exchange in shared memory (the
// publication). Before the fence, one of:
//   * nothing;
//   * four 8-byte exchanges in shared memory (a hand-over entry's stores);
//   * four 8-byte relaxed stores to device memory (an actor's counters);
//   * six 16-byte relaxed stores to mapped host memory (a reply's record);
//   * a 16-byte load of device memory whose value is used only after the
//     publication (a mailbox poll in flight).
// Fences: none, fence.acq_rel.cta, fence.sc.cta, and the exchange itself
// as atom.release.cta (no separate fence). Cycles a round; each line also
// less the same round without a fence.
//
// Measured on an H200 (bench/NOTES.md, session 36; three repetitions
// agreed within 1 cycle but for one first round): a fence costs one thread
// 8-15 cycles after nothing, after shared-memory stores, after device-memory
// stores and after six mapped 16-byte stores, either form — except that
// fence.acq_rel.cta waits for a load still in flight (+189 cycles) and
// fence.sc.cta does not (+5.5); atom.release.cta costs what its fence does.
// So the hand-over's block fences are not where its time goes, and the
// weaker fence would be the slower one on a path with a poll in flight.
//
// Build and run on a GPU machine:
//   nvcc -O2 -arch=sm_90 -o cta_fence bench/probes/cta_fence.cu && ./cta_fence
#include "probe_common.h"

constexpr int kRounds = 2000;
constexpr int kBefore = 5;
constexpr int kFences = 4;

typedef unsigned long long u64;

__device__ __forceinline__ unsigned SharedAddr(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

template <int kFence>
__device__ __forceinline__ void Publish(unsigned* word, unsigned v) {
  unsigned old;
  if (kFence == 1) asm volatile("fence.acq_rel.cta;" ::: "memory");
  if (kFence == 2) asm volatile("fence.sc.cta;" ::: "memory");
  if (kFence == 3) {
    asm volatile("atom.release.cta.shared.exch.b32 %0, [%1], %2;" : "=r"(old) : "r"(SharedAddr(word)), "r"(v) : "memory");
  } else {
    asm volatile("atom.relaxed.cta.shared.exch.b32 %0, [%1], %2;" : "=r"(old) : "r"(SharedAddr(word)), "r"(v) : "memory");
  }
}

template <int kBeforeKind, int kFence>
__device__ double Rounds(u64* entry, unsigned* tail, u64* device_words, u64* host_words, const u64* poll_words) {
  u64 acc = 0;
  const long long t0 = clock64();
  for (int i = 0; i < kRounds; ++i) {
    const u64 v = static_cast<u64>(i);
    u64 a = 0, b = 0;
    if (kBeforeKind == 1) {
      for (int k = 0; k < 4; ++k) {
        u64 old;
        asm volatile("atom.relaxed.cta.shared.exch.b64 %0, [%1], %2;"
                     : "=l"(old) : "r"(SharedAddr(entry + k)), "l"(v + k) : "memory");
      }
    } else if (kBeforeKind == 2) {
      for (int k = 0; k < 4; ++k) {
        asm volatile("st.relaxed.gpu.u64 [%0], %1;" ::"l"(device_words + 16 * k), "l"(v + k) : "memory");
      }
    } else if (kBeforeKind == 3) {
      for (int k = 0; k < 6; ++k) {
        asm volatile("st.relaxed.sys.v2.u64 [%0], {%1, %2};" ::"l"(host_words + 2 * k), "l"(v + k), "l"(v)
                     : "memory");
      }
    } else if (kBeforeKind == 4) {
      asm volatile("ld.relaxed.gpu.v2.u64 {%0, %1}, [%2];" : "=l"(a), "=l"(b) : "l"(poll_words + 16 * (i & 7)) : "memory");
    }
    Publish<kFence>(tail, static_cast<unsigned>(i));
    acc += a + b;  // the poll's value, used after the publication
  }
  const long long t1 = clock64();
  if (acc == 42) device_words[1000] = acc;
  return double(t1 - t0) / kRounds;
}

template <int kBeforeKind>
__device__ void Row(u64* entry, unsigned* tail, u64* device_words, u64* host_words, const u64* poll_words,
                    double* out) {
  out[kBeforeKind * kFences + 0] = Rounds<kBeforeKind, 0>(entry, tail, device_words, host_words, poll_words);
  out[kBeforeKind * kFences + 1] = Rounds<kBeforeKind, 1>(entry, tail, device_words, host_words, poll_words);
  out[kBeforeKind * kFences + 2] = Rounds<kBeforeKind, 2>(entry, tail, device_words, host_words, poll_words);
  out[kBeforeKind * kFences + 3] = Rounds<kBeforeKind, 3>(entry, tail, device_words, host_words, poll_words);
}

__global__ void Probe(u64* device_words, u64* host_words, const u64* poll_words, double* out) {
  __shared__ u64 entry[4];
  __shared__ unsigned tail;
  if (threadIdx.x != 0) return;
  Row<0>(entry, &tail, device_words, host_words, poll_words, out);
  Row<1>(entry, &tail, device_words, host_words, poll_words, out);
  Row<2>(entry, &tail, device_words, host_words, poll_words, out);
  Row<3>(entry, &tail, device_words, host_words, poll_words, out);
  Row<4>(entry, &tail, device_words, host_words, poll_words, out);
}

int main() {
  CK(cudaSetDeviceFlags(cudaDeviceMapHost));
  const ProbeDevice dev = OpenProbeDevice();
  u64 *device_words, *poll_words, *host_words, *host_d;
  double* out;
  CK(cudaMalloc(&device_words, 16384));
  CK(cudaMemset(device_words, 0, 16384));
  CK(cudaMalloc(&poll_words, 16384));
  CK(cudaMemset(poll_words, 0, 16384));
  CK(cudaHostAlloc(&host_words, 4096, cudaHostAllocMapped));
  for (int i = 0; i < 512; ++i) host_words[i] = 0;
  CK(cudaHostGetDevicePointer(&host_d, host_words, 0));
  CK(cudaMallocManaged(&out, kBefore * kFences * sizeof(double)));
  const char* before[kBefore] = {"nothing", "4 shared 8-byte exchanges", "4 device-memory stores",
                                 "6 mapped 16-byte stores", "a device load in flight"};
  const char* fences[kFences] = {"none", "fence.acq_rel.cta", "fence.sc.cta", "atom.release.cta"};
  for (int rep = 0; rep < 3; ++rep) {
    Probe<<<1, 32>>>(device_words, host_d, poll_words, out);
    CK(cudaDeviceSynchronize());
    printf("repetition %d (cycles a round; in brackets, less the round without a fence)\n", rep + 1);
    printf("%-28s", "before the fence");
    for (int f = 0; f < kFences; ++f) printf(" %24s", fences[f]);
    printf("\n");
    for (int b = 0; b < kBefore; ++b) {
      printf("%-28s", before[b]);
      for (int f = 0; f < kFences; ++f) {
        const double c = out[b * kFences + f];
        printf(" %11.1f (%+9.1f)", c, c - out[b * kFences]);
      }
      printf("\n");
    }
  }
  printf("(%.3f ns a cycle at the reported clock)\n", 1.0 / dev.ghz);
  return 0;
}
