// costs.cu: what the device side of RingKernel's message paths pays per
// operation, measured with clock64 on one thread (or one warp) of a
// spinning kernel. Build and run on a GPU machine:
//   nvcc -O2 -arch=sm_90 -o costs bench/probes/costs.cu && ./costs
// Prints cycles and nanoseconds (at the SM clock) per operation:
//   * reading %globaltimer;
//   * a dependent chain of ld.relaxed.gpu loads (L2 round trip);
//   * a dependent chain of atom.cas on one word (L2 atomic round trip);
//   * ld.relaxed.sys of mapped host memory: 16 bytes by one lane, and a
//     warp's 1 KiB window (64 16-byte loads in flight);
//   * fence.acquire.gpu, fence.acq_rel.gpu and fence.acq_rel.sys after a store;
//   * a dependent chain of loads through a generic pointer into a
//     __grid_constant__ kernel parameter, into shared memory and into local
//     memory (what reading the runtime's SystemParams through `sys` costs).
#include <cstdio>
#include <cstdlib>

#include "probe_common.h"


constexpr int kN = 2000;

__device__ __forceinline__ unsigned long long Timer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
__device__ __forceinline__ unsigned long long LdGpu(const unsigned long long* p) {
  unsigned long long v;
  asm volatile("ld.relaxed.gpu.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ unsigned long long LdSys(const unsigned long long* p) {
  unsigned long long v;
  asm volatile("ld.relaxed.sys.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ void LdSys2(const unsigned long long* p, unsigned long long* a, unsigned long long* b) {
  asm volatile("ld.relaxed.sys.v2.u64 {%0, %1}, [%2];" : "=l"(*a), "=l"(*b) : "l"(p) : "memory");
}

// out[i]: cycles per operation of test i.
__global__ void Probe(unsigned long long* chain, unsigned long long* word, const unsigned long long* host,
                      double* out) {
  const int lane = threadIdx.x;
  unsigned long long sink = 0;
  // 0: %globaltimer
  long long t0 = clock64();
  for (int i = 0; i < kN; ++i) sink += Timer();
  long long t1 = clock64();
  if (lane == 0) out[0] = double(t1 - t0) / kN;
  // 1: dependent L2 loads (chain[i] holds the index of the next)
  unsigned long long idx = 0;
  t0 = clock64();
  for (int i = 0; i < kN; ++i) idx = LdGpu(&chain[idx]);
  t1 = clock64();
  sink += idx;
  if (lane == 0) out[1] = double(t1 - t0) / kN;
  // 2: dependent CAS on one word
  unsigned long long v = 0;
  if (lane == 0) {
    t0 = clock64();
    for (int i = 0; i < kN; ++i) {
      unsigned long long old;
      asm volatile("atom.relaxed.gpu.cas.b64 %0, [%1], %2, %3;" : "=l"(old) : "l"(word), "l"(v), "l"(v + 1) : "memory");
      v = old + 1;
    }
    t1 = clock64();
    out[2] = double(t1 - t0) / kN;
  }
  __syncwarp();
  // 3: one lane, 16 bytes of mapped memory, dependent
  if (lane == 0) {
    unsigned long long a = 0, b = 0, off = 0;
    t0 = clock64();
    for (int i = 0; i < kN / 10; ++i) {
      LdSys2(host + (off & 7) * 2, &a, &b);
      off += a + 1;
    }
    t1 = clock64();
    out[3] = double(t1 - t0) / (kN / 10);
    sink += off;
  }
  __syncwarp();
  // 4: the warp, 1 KiB window (two 16-byte loads a lane), dependent rounds
  {
    unsigned long long a = 0, b = 0, c = 0, d = 0, off = 0;
    t0 = clock64();
    for (int i = 0; i < kN / 10; ++i) {
      LdSys2(host + (off & 1) * 128 + 2 * lane, &a, &b);
      LdSys2(host + (off & 1) * 128 + 64 + 2 * lane, &c, &d);
      off += __any_sync(0xFFFFFFFFu, (a | b | c | d) == 12345) + 1;
    }
    t1 = clock64();
    if (lane == 0) out[4] = double(t1 - t0) / (kN / 10);
    sink += off;
  }
  // 5-7: fences after a store
  if (lane == 0) {
    t0 = clock64();
    for (int i = 0; i < kN; ++i) {
      asm volatile("st.relaxed.gpu.u64 [%0], %1;" ::"l"(word + 16), "l"((unsigned long long)i) : "memory");
      asm volatile("fence.acquire.gpu;" ::: "memory");
    }
    t1 = clock64();
    out[5] = double(t1 - t0) / kN;
    t0 = clock64();
    for (int i = 0; i < kN; ++i) {
      asm volatile("st.relaxed.gpu.u64 [%0], %1;" ::"l"(word + 16), "l"((unsigned long long)i) : "memory");
      asm volatile("fence.acq_rel.gpu;" ::: "memory");
    }
    t1 = clock64();
    out[6] = double(t1 - t0) / kN;
    t0 = clock64();
    for (int i = 0; i < kN / 10; ++i) {
      asm volatile("st.relaxed.gpu.u64 [%0], %1;" ::"l"(word + 16), "l"((unsigned long long)i) : "memory");
      asm volatile("fence.acq_rel.sys;" ::: "memory");
    }
    t1 = clock64();
    out[7] = double(t1 - t0) / (kN / 10);
  }
  if (sink == 42) out[8] = 1;
}

// A chain of indices, passed by value.
struct Chain {
  unsigned next[32];
};

__device__ unsigned Follow(const unsigned* table, int n) {
  unsigned idx = 0;
  for (int i = 0; i < n; ++i) idx = table[idx];
  return idx;
}

// out[0..2]: cycles per dependent load through a generic pointer into the
// parameter, into shared memory, into local memory.
__global__ void PointerProbe(const __grid_constant__ Chain c, double* out, unsigned* sink) {
  __shared__ Chain s;
  Chain local;
  for (int i = 0; i < 32; ++i) {
    s.next[i] = c.next[i];
    local.next[i] = c.next[i];
  }
  __syncthreads();
  // Hide where each pointer points, as a structure in local memory does.
  const unsigned* volatile where[3] = {c.next, s.next, local.next};
  unsigned acc = 0;
  for (int k = 0; k < 3; ++k) {
    const unsigned* table = where[k];
    acc += Follow(table, 16);  // warm
    const long long t0 = clock64();
    acc += Follow(table, kN);
    const long long t1 = clock64();
    out[k] = double(t1 - t0) / kN;
  }
  *sink = acc;
}

int main() {
  CK(cudaSetDeviceFlags(cudaDeviceMapHost));
  int khz = 0;
  CK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0));
  const size_t n = 1 << 20;
  unsigned long long* chain_h = static_cast<unsigned long long*>(malloc(n * 8));
  // A random cycle through 1M words, so no two consecutive loads share a line.
  for (size_t i = 0; i < n; ++i) chain_h[i] = (i * 7919 + 104729) % n;
  unsigned long long *chain, *word, *host, *host_d;
  double* out;
  CK(cudaMalloc(&chain, n * 8));
  CK(cudaMemcpy(chain, chain_h, n * 8, cudaMemcpyHostToDevice));
  CK(cudaMalloc(&word, 4096));
  CK(cudaMemset(word, 0, 4096));
  CK(cudaHostAlloc(&host, 4096, cudaHostAllocMapped));
  for (int i = 0; i < 512; ++i) host[i] = 0;
  CK(cudaHostGetDevicePointer(&host_d, host, 0));
  CK(cudaMallocManaged(&out, 16 * sizeof(double)));
  Probe<<<1, 32>>>(chain, word, host_d, out);
  CK(cudaDeviceSynchronize());
  const char* names[] = {"%globaltimer read", "L2 load, dependent", "atom.cas, dependent", "mapped 16 B load (one lane)",
                         "mapped 1 KiB window (warp)", "store + fence.acquire.gpu", "store + fence.acq_rel.gpu",
                         "store + fence.acq_rel.sys"};
  const double ns_per_cycle = 1e6 / khz;
  for (int i = 0; i < 8; ++i) printf("%-32s %8.0f cycles %8.1f ns\n", names[i], out[i], out[i] * ns_per_cycle);
  Chain c;
  for (int i = 0; i < 32; ++i) c.next[i] = (i * 7 + 3) % 32;
  unsigned* sink;
  CK(cudaMalloc(&sink, 4));
  PointerProbe<<<1, 1>>>(c, out, sink);
  CK(cudaDeviceSynchronize());
  const char* where[] = {"generic load into the parameter", "generic load into shared memory",
                         "generic load into local memory"};
  for (int i = 0; i < 3; ++i) printf("%-32s %8.0f cycles %8.1f ns\n", where[i], out[i], out[i] * ns_per_cycle);
  return 0;
}
