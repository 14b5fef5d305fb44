// fault_store.cu: does a thread's store to mapped host memory, made just
// before the same thread faults, reach the host when no fence stands
// between them?
//
// RingKernel names the handlers that were running when the kernel faulted
// from its running table (mapped memory): a thread writes its entry before
// it runs a handler of another actor or message type, and then fences at
// system scope (MarkRunning, rt_dispatch.cuh), so that a fault in that
// handler finds the entry there. The fence costs the first handler after
// an idle spell some 1 µs (bench/NOTES.md, sessions 16, 45, 49). Nothing in
// the PTX memory model says what a fault does to stores that were issued
// and not yet visible, so this probe looks: a kernel in which one thread
// stores a tag to mapped memory and faults right after, in a fresh context
// each round, and the host reads the tag once the fault has been reported
// (as the runtime does: the stream's error first, then the table).
//
// Per round, one of:
//   fault: the thread's next instruction after the store is an illegal
//          load (an unmapped address), an illegal store, or a trap
//          (what a handler's assert does);
//   traffic: none, or every other block streaming 16-byte stores to
//          mapped memory while it happens (the store queued behind them);
//   gap: the store and the fault back to back, or with a fence.acq_rel.sys
//          between them (the runtime's way: the control).
// The tag is the round's number; the host counts the rounds whose tag it
// found, and, for the rounds without a fence, the ones it did not.
//
//   nvcc -O2 -arch=sm_90 -o fault_store bench/probes/fault_store.cu
//   ./fault_store [ROUNDS_PER_CONFIGURATION]      (default 20)
#include "probe_common.h"

#include <cstdint>
#include <cstring>

namespace {

enum Fault : int { kIllegalLoad = 0, kIllegalStore = 1, kTrap = 2 };
const char* const kFaultName[] = {"illegal load", "illegal store", "trap"};

// Block 0, thread 0 stores the tag and faults; with traffic, the other
// blocks stream stores into `sink` until the kernel dies. `start` holds the
// moment (globaltimer) at which thread 0 faults, so that the stream is in
// full flow by then.
__global__ void StoreThenFault(unsigned long long* tag_slot, unsigned long long tag, int fault, int fence,
                               int traffic, uint4* sink, unsigned sink_words, unsigned long long* bad) {
  if (blockIdx.x != 0) {
    if (!traffic) return;
    // Each thread its own 16-byte words, round and round.
    unsigned i = (blockIdx.x * blockDim.x + threadIdx.x) % sink_words;
    const unsigned step = gridDim.x * blockDim.x;
    for (unsigned n = 0;; ++n) {
      const uint4 v = make_uint4(n, i, blockIdx.x, threadIdx.x);
      asm volatile("st.relaxed.sys.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(sink + i), "r"(v.x), "r"(v.y), "r"(v.z),
                   "r"(v.w)
                   : "memory");
      i += step;
      if (i >= sink_words) i -= sink_words;
    }
  }
  if (threadIdx.x != 0) return;
  if (traffic) {
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do {
      asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    } while (t - t0 < 200000);  // 200 µs of traffic first
  }
  asm volatile("st.relaxed.sys.u64 [%0], %1;" ::"l"(tag_slot), "l"(tag) : "memory");
  if (fence) asm volatile("fence.acq_rel.sys;" ::: "memory");
  if (fault == kIllegalLoad) {
    unsigned long long v;
    asm volatile("ld.relaxed.gpu.u64 %0, [%1];" : "=l"(v) : "l"(bad) : "memory");
    // Use the value, so the load is not dead.
    asm volatile("st.relaxed.sys.u64 [%0], %1;" ::"l"(tag_slot + 1), "l"(v) : "memory");
  } else if (fault == kIllegalStore) {
    asm volatile("st.relaxed.gpu.u64 [%0], %1;" ::"l"(bad), "l"(tag) : "memory");
  } else {
    asm volatile("trap;");
  }
  // Not reached in a round that faulted: spin so that the kernel cannot end
  // without its fault.
  for (;;) asm volatile("nanosleep.u32 1000;");
}

struct Counts {
  int rounds = 0;
  int found = 0;     // the tag was there
  int no_fault = 0;  // the kernel did not fault (the round is not counted)
};

// One round in a fresh context. True when the kernel faulted.
bool Round(unsigned long long tag, int fault, int fence, int traffic, int sms, bool* found, char* error,
           size_t error_size) {
  CK(cudaSetDevice(0));
  unsigned long long* host = nullptr;
  CK(cudaHostAlloc(reinterpret_cast<void**>(&host), 4096, cudaHostAllocMapped));
  std::memset(host, 0, 4096);
  const unsigned sink_words = 1u << 20;  // 16 MiB
  uint4* sink = nullptr;
  CK(cudaHostAlloc(reinterpret_cast<void**>(&sink), size_t{sink_words} * 16, cudaHostAllocMapped));
  unsigned long long* dev_tag = nullptr;
  uint4* dev_sink = nullptr;
  CK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&dev_tag), host, 0));
  CK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&dev_sink), sink, 0));
  // An address no allocation covers: the first page.
  unsigned long long* bad = reinterpret_cast<unsigned long long*>(uintptr_t{0x100});
  StoreThenFault<<<traffic ? sms : 1, 128>>>(dev_tag, tag, fault, fence, traffic, dev_sink, sink_words, bad);
  const cudaError_t e = cudaDeviceSynchronize();
  // Read as the runtime does, after the error has been reported.
  *found = __atomic_load_n(host, __ATOMIC_ACQUIRE) == tag;
  std::snprintf(error, error_size, "%s", cudaGetErrorString(e));
  cudaDeviceReset();  // frees both buffers with the context
  return e != cudaSuccess;
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 20;
  int sms = 0;
  {
    ProbeDevice d = OpenProbeDevice();
    sms = d.prop.multiProcessorCount;
    cudaDeviceReset();
  }
  printf("%d rounds a configuration, each in a fresh context; tag found / rounds that faulted\n", rounds);
  printf("%-14s %-8s %-10s %8s %8s   %s\n", "fault", "traffic", "between", "found", "faulted", "error");
  unsigned long long tag = 1;
  int lost_without_fence = 0;
  for (int fault = 0; fault < 3; ++fault) {
    for (int traffic = 0; traffic < 2; ++traffic) {
      for (int fence = 0; fence < 2; ++fence) {
        Counts c;
        char error[160] = "";
        for (int r = 0; r < rounds; ++r, ++tag) {
          bool found = false;
          if (!Round(tag, fault, fence, traffic, sms, &found, error, sizeof error)) {
            ++c.no_fault;
            continue;
          }
          ++c.rounds;
          if (found) ++c.found;
        }
        if (!fence) lost_without_fence += c.rounds - c.found;
        printf("%-14s %-8s %-10s %8d %8d   %s%s\n", kFaultName[fault], traffic ? "streams" : "none",
               fence ? "fence.sys" : "nothing", c.found, c.rounds, error,
               c.no_fault ? " (some rounds did not fault)" : "");
        fflush(stdout);
      }
    }
  }
  printf("tags lost without a fence: %d\n", lost_without_fence);
  return 0;
}
