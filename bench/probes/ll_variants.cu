// ll_variants.cu: one LL record of 12 words (8 header + 4 payload, as a
// 16-byte K2K message in mailbox.h) ping-ponged between two blocks on two
// SMs, written and read four ways, to find what makes the bare mailbox
// probe (mailbox_pingpong.cu) slower than the LL reference:
//   0  one thread, 16-byte relaxed.gpu stores and loads into registers
//      (no arrays), all six loads issued before any check;
//   1  the same with volatile 16-byte stores and loads;
//   2  one warp, lane L < 6 stores and loads words 2L and 2L+1 (16 bytes),
//      __all_sync to agree the record is complete;
//   3  one thread, 8-byte relaxed.gpu accesses (12 stores, 12 loads).
// Each variant also runs a raw fenced flag in the same process. Build and
// run on a GPU machine:
//   nvcc -O2 -arch=sm_90 -o llv bench/probes/ll_variants.cu && ./llv
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("error %s at line %d\n", cudaGetErrorString(e), __LINE__); exit(1); } } while (0)

using u32 = unsigned;
using u64 = unsigned long long;
constexpr int kRounds = 20000;
constexpr int kSlots = 64;     // ring of slots per direction
constexpr int kWords = 16;     // words per slot (12 used)

__device__ __forceinline__ u64 Word(u32 data, u32 flag) { return (u64(flag) << 32) | data; }

__device__ __forceinline__ void St2(u64* p, u64 a, u64 b, int mode) {
  if (mode == 1) {
    asm volatile("st.volatile.v2.u64 [%0], {%1, %2};" ::"l"(p), "l"(a), "l"(b) : "memory");
  } else {
    asm volatile("st.relaxed.gpu.v2.u64 [%0], {%1, %2};" ::"l"(p), "l"(a), "l"(b) : "memory");
  }
}
__device__ __forceinline__ void Ld2(const u64* p, u64& a, u64& b, int mode) {
  if (mode == 1) {
    asm volatile("ld.volatile.v2.u64 {%0, %1}, [%2];" : "=l"(a), "=l"(b) : "l"(p) : "memory");
  } else {
    asm volatile("ld.relaxed.gpu.v2.u64 {%0, %1}, [%2];" : "=l"(a), "=l"(b) : "l"(p) : "memory");
  }
}
__device__ __forceinline__ void St1(u64* p, u64 a) { asm volatile("st.relaxed.gpu.u64 [%0], %1;" ::"l"(p), "l"(a) : "memory"); }
__device__ __forceinline__ u64 Ld1(const u64* p) {
  u64 v;
  asm volatile("ld.relaxed.gpu.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}

// Sends value `v` at position `pos` into `ring`.
__device__ void Send(u64* ring, int pos, u32 v, int mode) {
  u64* s = ring + (pos % kSlots) * kWords;
  const u32 flag = 0x80000000u | u32(pos / kSlots + 1);
  const int lane = threadIdx.x;
  if (mode == 2) {
    if (lane < 6) St2(s + 2 * lane, Word(v + 2 * lane, flag), Word(v + 2 * lane + 1, flag), 0);
    return;
  }
  if (mode == 3) {
    for (int w = 0; w < 12; ++w) St1(s + w, Word(v + w, flag));
    return;
  }
  for (int w = 0; w < 12; w += 2) St2(s + w, Word(v + w, flag), Word(v + w + 1, flag), mode);
}

// Waits for position `pos` in `ring`; returns its word 0.
__device__ u32 Take(const u64* ring, int pos, int mode) {
  const u64* s = ring + (pos % kSlots) * kWords;
  const u32 flag = 0x80000000u | u32(pos / kSlots + 1);
  const int lane = threadIdx.x;
  if (mode == 2) {
    for (;;) {
      u64 a = 0, b = 0;
      if (lane < 6) Ld2(s + 2 * lane, a, b, 0);
      const bool ok = lane >= 6 || (u32(a >> 32) == flag && u32(b >> 32) == flag);
      const u32 first = __shfl_sync(0xFFFFFFFFu, u32(a), 0);
      if (__all_sync(0xFFFFFFFFu, ok)) return first;
    }
  }
  if (mode == 3) {
    for (;;) {
      u64 w0 = Ld1(s), w1 = Ld1(s + 1), w2 = Ld1(s + 2), w3 = Ld1(s + 3), w4 = Ld1(s + 4), w5 = Ld1(s + 5);
      u64 w6 = Ld1(s + 6), w7 = Ld1(s + 7), w8 = Ld1(s + 8), w9 = Ld1(s + 9), w10 = Ld1(s + 10), w11 = Ld1(s + 11);
      const u64 all = (w0 >> 32) & (w1 >> 32) & (w2 >> 32) & (w3 >> 32) & (w4 >> 32) & (w5 >> 32) & (w6 >> 32) &
                      (w7 >> 32) & (w8 >> 32) & (w9 >> 32) & (w10 >> 32) & (w11 >> 32);
      const u64 any = (w0 >> 32) | (w1 >> 32) | (w2 >> 32) | (w3 >> 32) | (w4 >> 32) | (w5 >> 32) | (w6 >> 32) |
                      (w7 >> 32) | (w8 >> 32) | (w9 >> 32) | (w10 >> 32) | (w11 >> 32);
      if (all == flag && any == flag) return u32(w0);
    }
  }
  for (;;) {
    u64 a0, b0, a1, b1, a2, b2, a3, b3, a4, b4, a5, b5;
    Ld2(s, a0, b0, mode);
    Ld2(s + 2, a1, b1, mode);
    Ld2(s + 4, a2, b2, mode);
    Ld2(s + 6, a3, b3, mode);
    Ld2(s + 8, a4, b4, mode);
    Ld2(s + 10, a5, b5, mode);
    const u64 all = (a0 >> 32) & (b0 >> 32) & (a1 >> 32) & (b1 >> 32) & (a2 >> 32) & (b2 >> 32) & (a3 >> 32) &
                    (b3 >> 32) & (a4 >> 32) & (b4 >> 32) & (a5 >> 32) & (b5 >> 32);
    const u64 any = (a0 >> 32) | (b0 >> 32) | (a1 >> 32) | (b1 >> 32) | (a2 >> 32) | (b2 >> 32) | (a3 >> 32) |
                    (b3 >> 32) | (a4 >> 32) | (b4 >> 32) | (a5 >> 32) | (b5 >> 32);
    if (all == flag && any == flag) return u32(a0);
  }
}

__global__ void PingPong(u64* ring0, u64* ring1, int mode, long long* cycles, u32* sink) {
  if (mode != 2 && threadIdx.x != 0) return;
  u64* out = blockIdx.x == 0 ? ring1 : ring0;
  const u64* in = blockIdx.x == 0 ? ring0 : ring1;
  u32 acc = 0;
  const long long t0 = clock64();
  for (int i = 0; i < kRounds; ++i) {
    if (blockIdx.x == 0) {
      Send(out, i, i, mode);
      acc += Take(in, i, mode);
    } else {
      acc += Take(in, i, mode);
      Send(out, i, acc, mode);
    }
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) cycles[0] = clock64() - t0;
  if (threadIdx.x == 0) sink[blockIdx.x] = acc;
}

__global__ void Flag(volatile u32* a, volatile u32* b, long long* cycles) {
  if (threadIdx.x != 0) return;
  const long long t0 = clock64();
  for (int i = 1; i <= kRounds; ++i) {
    if (blockIdx.x == 0) {
      a[0] = i;
      __threadfence();
      while (b[0] != u32(i)) {
      }
    } else {
      while (a[0] != u32(i)) {
      }
      b[0] = i;
      __threadfence();
    }
  }
  if (blockIdx.x == 0) cycles[0] = clock64() - t0;
}

int main() {
  int khz = 0;
  CK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0));
  const double ns_per_cycle = 1e6 / khz;
  long long* cycles;
  u32* sink;
  CK(cudaMallocManaged(&cycles, 64));
  CK(cudaMalloc(&sink, 64));
  u32 *a, *b;
  CK(cudaMalloc(&a, 256));
  CK(cudaMalloc(&b, 256));
  CK(cudaMemset(a, 0, 256));
  CK(cudaMemset(b, 0, 256));
  Flag<<<2, 32>>>(a, b, cycles);
  CK(cudaDeviceSynchronize());
  const double flag_ns = cycles[0] * ns_per_cycle / kRounds / 2;
  printf("raw fenced flag, one way                %7.1f ns\n", flag_ns);
  const char* names[] = {"one thread, relaxed.gpu v2, registers", "one thread, volatile v2, registers",
                         "one warp, a 16-byte pair per lane", "one thread, 8-byte relaxed.gpu"};
  const size_t bytes = size_t{kSlots} * kWords * 8;
  for (int mode = 0; mode < 4; ++mode) {
    u64 *r0, *r1;
    CK(cudaMalloc(&r0, bytes));
    CK(cudaMalloc(&r1, bytes));
    CK(cudaMemset(r0, 0, bytes));
    CK(cudaMemset(r1, 0, bytes));
    PingPong<<<2, 32>>>(r0, r1, mode, cycles, sink);
    CK(cudaDeviceSynchronize());
    const double hop = cycles[0] * ns_per_cycle / kRounds / 2;
    printf("%-40s %7.1f ns one way (%.2f x the flag)\n", names[mode], hop, hop / flag_ns);
    CK(cudaFree(r0));
    CK(cudaFree(r1));
  }
  return 0;
}
