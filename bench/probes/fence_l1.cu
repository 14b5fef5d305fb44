// fence_l1.cu: what an acquire fence (fence.acquire.gpu, which every thread
// of a block run executes when it takes a record with a plain payload)
// costs the loads that follow it: a dependent chain of loads from local
// memory (a thread's stack frame: where the runtime keeps what does not fit
// its registers) and from a small global array (an actor's state), each
// resident in L1 before the chain starts, with and without a fence before
// every load. If the fence drops those lines from L1, every load after it
// is a trip to L2 (about 550 cycles on an H100, bench/probes/costs.cu)
// instead of an L1 hit.
//
// One thread, clock64, 4,000 loads a configuration, three repetitions.
//
// Measured on an H200 (bench/NOTES.md, session 26): local memory 35.9
// cycles a load, 38.1 with the fence before each; global memory 40.9, and
// 324-540 with the fence before each (186-210 with it before every 8th):
// the fence drops the SM's L1 lines of global memory, not of local memory.
//
// Build and run on a GPU machine:
//   nvcc -O2 -arch=sm_90 -o fence_l1 bench/probes/fence_l1.cu && ./fence_l1
#include "probe_common.h"

constexpr int kLoads = 4000;
constexpr int kWords = 64;

enum Fence : int { kNone = 0, kAcquire = 1, kAcquireEvery8 = 2 };

__device__ __forceinline__ void FenceAcquire() { asm volatile("fence.acquire.gpu;" ::: "memory"); }

// out[0]: cycles a load from local memory; out[1]: from global memory.
__global__ void Chains(int fence, unsigned* global_words, unsigned seed, double* out, unsigned* sink) {
  unsigned local_words[kWords];  // indexed at run time: in local memory
  for (int i = 0; i < kWords; ++i) local_words[i] = (i * 7 + seed) & (kWords - 1);
  unsigned x = seed & (kWords - 1);
  // Touch both arrays once so they are in L1.
  for (int i = 0; i < kWords; ++i) x ^= local_words[(x + i) & (kWords - 1)] ^ global_words[(x + i) & (kWords - 1)];
  x &= kWords - 1;
  long long t0 = clock64();
  for (int i = 0; i < kLoads; ++i) {
    if (fence == kAcquire || (fence == kAcquireEvery8 && (i & 7) == 0)) FenceAcquire();
    x = local_words[x];
  }
  long long t1 = clock64();
  out[0] = static_cast<double>(t1 - t0) / kLoads;
  t0 = clock64();
  for (int i = 0; i < kLoads; ++i) {
    if (fence == kAcquire || (fence == kAcquireEvery8 && (i & 7) == 0)) FenceAcquire();
    x = global_words[x];
  }
  t1 = clock64();
  out[1] = static_cast<double>(t1 - t0) / kLoads;
  // Keep the local array written through run-time indices (so it stays in
  // local memory) and the chains' results live.
  local_words[x] = x;
  *sink = x + local_words[(x + 1) & (kWords - 1)];
}

int main() {
  const ProbeDevice d = OpenProbeDevice();
  unsigned* global_words = nullptr;
  double* out = nullptr;
  unsigned* sink = nullptr;
  CK(cudaMalloc(&global_words, kWords * sizeof(unsigned)));
  CK(cudaMallocManaged(&out, 2 * sizeof(double)));
  CK(cudaMallocManaged(&sink, sizeof(unsigned)));
  unsigned host[kWords];
  for (int i = 0; i < kWords; ++i) host[i] = (i * 13 + 5) & (kWords - 1);
  CK(cudaMemcpy(global_words, host, sizeof(host), cudaMemcpyHostToDevice));
  const char* names[] = {"no fence", "fence.acquire.gpu before every load", "fence.acquire.gpu before every 8th load"};
  for (int rep = 0; rep < 3; ++rep) {
    for (int f = kNone; f <= kAcquireEvery8; ++f) {
      Chains<<<1, 1>>>(f, global_words, 3 + rep, out, sink);
      CK(cudaDeviceSynchronize());
      printf("rep %d, %-40s local %7.1f cycles (%6.1f ns), global %7.1f cycles (%6.1f ns) a load\n", rep, names[f],
             out[0], out[0] / d.ghz, out[1], out[1] / d.ghz);
    }
  }
  CK(cudaFree(global_words));
  CK(cudaFree(out));
  CK(cudaFree(sink));
  return 0;
}
