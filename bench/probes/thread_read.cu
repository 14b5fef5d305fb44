// thread_read.cu: what it costs one thread to read a 4 KiB payload and fold
// every word of it (as bench.cu's Drain checks what it received), from
// shared memory (where the owner's inbox puts a large payload before its
// handler runs) and from global memory resident in L1/L2. The question it
// answers: whether a thread handler that reads every byte of 4 KiB can keep
// up with the 4 KiB one-pair target (5 GB/s: 1.2 × 10⁶ messages a second,
// some 1,650 cycles each at the receiver, the runtime's own work included).
//
// Each fold: 256 loads of 16 bytes through a generic pointer (as a handler
// reads its message), into one XOR chain (16 loads in flight) or four.
//
// Measured on an H200 (bench/NOTES.md, session 24): from shared memory
// 3,569 cycles with one chain and 4,257 with four; from global memory
// 4,142 and 4,929. So one thread needs about 14 cycles per 16 bytes.
//
// Build and run on a GPU machine:
//   nvcc -O2 -arch=sm_90 -I include -o thread_read bench/probes/thread_read.cu && ./thread_read
#include "probe_common.h"

typedef unsigned long long u64;

constexpr int kPieces = 4096 / 16;

// Folds `n` 16-byte pieces at `v`: into one XOR chain, 16 loads in flight
// (bench.cu's Drain::Take), or into four chains, 4 steps of 4 loads.
template <int kChains>
__device__ __noinline__ u64 Fold(const uint4* v, int n) {
  u64 x = 0, y[4] = {0, 0, 0, 0};
  if constexpr (kChains == 1) {
#pragma unroll 16
    for (int i = 0; i < n; ++i) {
      const uint4 q = v[i];
      x ^= (static_cast<u64>(q.y) << 32 | q.x) ^ (static_cast<u64>(q.w) << 32 | q.z);
    }
    return x;
  } else {
#pragma unroll 4
    for (int i = 0; i < n; i += 4) {
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        const uint4 q = v[i + k];
        y[k] ^= (static_cast<u64>(q.y) << 32 | q.x) ^ (static_cast<u64>(q.w) << 32 | q.z);
      }
    }
    return y[0] ^ y[1] ^ y[2] ^ y[3];
  }
}

// Thread 0 folds the payload 100 times each way; out[k]: the mean cycles of
// shared one chain, shared four, global one, global four.
__global__ void ReadKernel(const uint4* g, long long* out, u64* sink) {
  __shared__ alignas(128) uint4 s[kPieces];
  for (int i = threadIdx.x; i < kPieces; i += blockDim.x) s[i] = g[i];
  __syncthreads();
  if (threadIdx.x != 0) return;
  // Generic pointers the compiler cannot see through (a handler's view).
  const uint4* volatile from_shared = s;
  const uint4* volatile from_global = g;
  u64 acc = 0;
  long long t[4] = {0, 0, 0, 0};
  for (int r = 0; r < 100; ++r) {
    long long a = clock64();
    acc ^= Fold<1>(from_shared, kPieces);
    long long b = clock64();
    t[0] += b - a;
    a = clock64();
    acc ^= Fold<4>(from_shared, kPieces);
    b = clock64();
    t[1] += b - a;
    a = clock64();
    acc ^= Fold<1>(from_global, kPieces);
    b = clock64();
    t[2] += b - a;
    a = clock64();
    acc ^= Fold<4>(from_global, kPieces);
    b = clock64();
    t[3] += b - a;
  }
  for (int k = 0; k < 4; ++k) out[k] = t[k] / 100;
  *sink = acc;
}

int main() {
  OpenProbeDevice();
  uint4* g;
  long long* out;
  u64* sink;
  CK(cudaMalloc(&g, 4096));
  CK(cudaMemset(g, 1, 4096));
  CK(cudaMalloc(&out, 4 * sizeof(long long)));
  CK(cudaMalloc(&sink, sizeof(u64)));
  ReadKernel<<<1, 128>>>(g, out, sink);
  CK(cudaDeviceSynchronize());
  long long h[4];
  CK(cudaMemcpy(h, out, sizeof(h), cudaMemcpyDeviceToHost));
  printf("one thread folds 4 KiB, mean cycles of 100: shared memory %lld (one XOR chain), %lld (four); "
         "global memory %lld (one), %lld (four)\n",
         h[0], h[1], h[2], h[3]);
  return 0;
}
