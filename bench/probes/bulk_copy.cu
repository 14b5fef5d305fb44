// bulk_copy.cu: what one thread pays to copy a large payload from global
// memory to global memory (a K2K send's copy into a mailbox slot's plain
// area), two ways, measured with clock64 on one thread of one block:
//   * registers: 16-byte loads in batches of 8, all loads of a batch issued
//     before its stores (mailbox.h's MailboxCopyPlain, as the runtime does it);
//   * bulk: the Hopper tensor memory accelerator, global -> shared (an
//     mbarrier counts the bytes in) and shared -> global (a bulk group waited
//     for in full), through one 4 KiB stage in shared memory, in chunks of
//     the stage's size; the proxy fences a copy needs around it included.
// Each copy's destination is then checked word by word against its source.
// Build and run on a GPU machine (sm_90):
//   nvcc -O2 -arch=sm_90 -o bulk_copy bench/probes/bulk_copy.cu && ./bulk_copy
#include <cstdio>
#include <cstdlib>

#include "probe_common.h"


constexpr unsigned kStage = 4096;
constexpr int kReps = 200;

struct alignas(16) Chunk { unsigned long long lo, hi; };

__device__ void CopyRegisters(Chunk* to, const Chunk* from, unsigned n) {
  unsigned i = 0;
  for (; i + 8 <= n; i += 8) {
    Chunk v[8];
#pragma unroll
    for (int k = 0; k < 8; ++k) v[k] = from[i + k];
#pragma unroll
    for (int k = 0; k < 8; ++k) to[i + k] = v[k];
  }
  for (; i < n; ++i) to[i] = from[i];
}

__device__ __forceinline__ unsigned SmemAddr(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// One chunk of up to kStage bytes (a multiple of 16, both addresses 16-byte
// aligned) through the stage; `phase` is the mbarrier's current phase.
__device__ void CopyBulkChunk(void* to, const void* from, unsigned bytes, unsigned char* stage,
                              unsigned long long* bar, unsigned* phase) {
  const unsigned s = SmemAddr(stage), b = SmemAddr(bar);
  // The source's earlier writes by the generic proxy, before the async
  // proxy reads it.
  asm volatile("fence.proxy.async.global;" ::: "memory");
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(b), "r"(bytes) : "memory");
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
               ::"r"(s), "l"(from), "r"(bytes), "r"(b) : "memory");
  unsigned done = 0;
  while (!done) {
    asm volatile("{\n\t.reg .pred p;\n\tmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\tselp.u32 %0, 1, 0, p;\n\t}"
                 : "=r"(done) : "r"(b), "r"(*phase) : "memory");
  }
  *phase ^= 1;
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(to), "r"(s), "r"(bytes) : "memory");
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
  asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
  // The async proxy's writes, before this thread's later generic accesses
  // (the release fence and the header that publish the record).
  asm volatile("fence.proxy.async.global;" ::: "memory");
}

__global__ void Probe(unsigned char* src, unsigned char* dst, unsigned bytes, unsigned long long* out,
                      unsigned* errors) {
  __shared__ alignas(128) unsigned char stage[kStage];
  __shared__ alignas(8) unsigned long long bar;
  if (threadIdx.x != 0) return;
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(SmemAddr(&bar)) : "memory");
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  unsigned phase = 0;
  unsigned long long best[2] = {~0ull, ~0ull}, sum[2] = {0, 0};
  for (int rep = 0; rep < kReps; ++rep) {
    for (int way = 0; way < 2; ++way) {
      // A fresh pattern each time, written by this thread (generic proxy).
      for (unsigned i = 0; i < bytes / 8; ++i)
        reinterpret_cast<unsigned long long*>(src)[i] = (static_cast<unsigned long long>(rep * 2 + way) << 32) | i;
      __threadfence();
      const long long t0 = clock64();
      if (way == 0) {
        CopyRegisters(reinterpret_cast<Chunk*>(dst), reinterpret_cast<const Chunk*>(src), bytes / 16);
      } else {
        for (unsigned off = 0; off < bytes; off += kStage) {
          const unsigned n = bytes - off < kStage ? bytes - off : kStage;
          CopyBulkChunk(dst + off, src + off, n, stage, &bar, &phase);
        }
      }
      __threadfence();
      const long long t1 = clock64();
      const unsigned long long c = static_cast<unsigned long long>(t1 - t0);
      if (rep >= 10) {
        sum[way] += c;
        if (c < best[way]) best[way] = c;
      }
      for (unsigned i = 0; i < bytes / 8; ++i) {
        const unsigned long long want = (static_cast<unsigned long long>(rep * 2 + way) << 32) | i;
        if (reinterpret_cast<volatile unsigned long long*>(dst)[i] != want) ++*errors;
      }
    }
  }
  out[0] = sum[0] / (kReps - 10);
  out[1] = best[0];
  out[2] = sum[1] / (kReps - 10);
  out[3] = best[1];
}

int main() {
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  int clock_khz = 0;
  CK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
  printf("%s, SM clock %d MHz (cycles -> ns at that clock)\n", prop.name, clock_khz / 1000);
  unsigned char *src, *dst;
  unsigned long long* out;
  unsigned* errors;
  CK(cudaMalloc(&src, 1 << 16));
  CK(cudaMalloc(&dst, 1 << 16));
  CK(cudaMalloc(&out, 4 * sizeof(unsigned long long)));
  CK(cudaMalloc(&errors, sizeof(unsigned)));
  printf("%8s %22s %22s %8s\n", "bytes", "registers mean/best ns", "bulk mean/best ns", "errors");
  for (unsigned bytes : {256u, 1024u, 4096u, 16384u}) {
    CK(cudaMemset(errors, 0, sizeof(unsigned)));
    Probe<<<1, 32>>>(src, dst, bytes, out, errors);
    CK(cudaDeviceSynchronize());
    unsigned long long h[4];
    unsigned e = 0;
    CK(cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(&e, errors, sizeof e, cudaMemcpyDeviceToHost));
    const double ns = 1e6 / clock_khz;
    printf("%8u %10.0f / %9.0f %10.0f / %9.0f %8u\n", bytes, h[0] * ns, h[1] * ns, h[2] * ns, h[3] * ns, e);
  }
  return 0;
}
