// fault_store.cu: does a thread's store to mapped host memory, made just
// before the same thread faults, reach the host when no fence stands
// between them?
//
// RingKernel names the handlers that were running when the kernel faulted
// from its running table (mapped memory): a thread writes its entry before
// it runs a handler of another actor or message type (MarkRunning,
// rt_dispatch.cuh). Until session 50 it then fenced at system scope, so
// that a fault in that handler was sure to find the entry there; the fence
// cost the first handler after an idle spell some 1 µs (bench/NOTES.md,
// sessions 16, 45, 49, 50), and the entry is now a posted store alone.
// Nothing in the PTX memory model says what a fault does to stores that
// were issued and not yet visible, so this probe looks: a kernel in which
// one thread stores a tag to mapped memory and faults right after, in a
// process of its own each round, and the host reads the tag once the fault
// has been reported (as the runtime does: the stream's error first, then
// the table). The runtime's own check is FaultRightAfterEntryGpuTest.
//
// Status: run to the end in session 53 (H100, 3 rounds a configuration):
// the host found the tag in all 36 rounds, fence or none (bench/NOTES.md).
// Its first form (session 50, H200) re-created a context in one process
// after each fault, which that machine refused ("busy or unavailable");
// each round runs in a child process since.
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

#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>

namespace {

enum Fault : int { kIllegalLoad = 0, kIllegalStore = 1, kTrap = 2 };
const char* const kFaultName[] = {"illegal load", "illegal store", "trap"};

// Block 0, thread 0 stores the tag and faults; with traffic, the other
// blocks stream stores into `sink` until the kernel dies, and thread 0
// waits 200 µs first, so that the stream is in full flow by then.
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

// One round, in a child process of its own (a fault poisons the process's
// context, and re-creating one in the same process is refused on some
// machines). The child's exit status: 0 the tag was found, 1 it was not,
// 2 the kernel did not fault, 3 the round could not be set up.
enum RoundResult : int { kFound = 0, kLost = 1, kNoFault = 2, kSetupFailed = 3 };

[[noreturn]] void RoundInChild(unsigned long long tag, int fault, int fence, int traffic) {
  auto fail = [](const char* what, cudaError_t e) {
    printf("  round setup: %s: %s\n", what, cudaGetErrorString(e));
    fflush(stdout);
    _exit(kSetupFailed);
  };
  cudaError_t e = cudaSetDevice(0);
  if (e != cudaSuccess) fail("cudaSetDevice", e);
  int sms = 0;
  e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  if (e != cudaSuccess) fail("cudaDeviceGetAttribute", e);
  unsigned long long* host = nullptr;
  e = cudaHostAlloc(reinterpret_cast<void**>(&host), 4096, cudaHostAllocMapped);
  if (e != cudaSuccess) fail("cudaHostAlloc", e);
  std::memset(host, 0, 4096);
  const unsigned sink_words = 1u << 20;  // 16 MiB
  uint4* sink = nullptr;
  e = cudaHostAlloc(reinterpret_cast<void**>(&sink), size_t{sink_words} * 16, cudaHostAllocMapped);
  if (e != cudaSuccess) fail("cudaHostAlloc", e);
  unsigned long long* dev_tag = nullptr;
  uint4* dev_sink = nullptr;
  if ((e = cudaHostGetDevicePointer(reinterpret_cast<void**>(&dev_tag), host, 0)) != cudaSuccess ||
      (e = cudaHostGetDevicePointer(reinterpret_cast<void**>(&dev_sink), sink, 0)) != cudaSuccess) {
    fail("cudaHostGetDevicePointer", e);
  }
  // An address no allocation covers: the first page.
  unsigned long long* bad = reinterpret_cast<unsigned long long*>(uintptr_t{0x100});
  StoreThenFault<<<traffic ? sms : 1, 128>>>(dev_tag, tag, fault, fence, traffic, dev_sink, sink_words, bad);
  e = cudaDeviceSynchronize();
  // Read as the runtime does, after the error has been reported.
  const bool found = __atomic_load_n(host, __ATOMIC_ACQUIRE) == tag;
  if (e == cudaSuccess) _exit(kNoFault);
  if (tag == 1 || !found) printf("  tag %llu: %s, tag %s\n", tag, cudaGetErrorString(e), found ? "found" : "LOST");
  fflush(stdout);
  _exit(found ? kFound : kLost);
}

int RunRound(unsigned long long tag, int fault, int fence, int traffic) {
  fflush(stdout);
  const pid_t pid = fork();
  if (pid < 0) return kSetupFailed;
  if (pid == 0) RoundInChild(tag, fault, fence, traffic);
  int status = 0;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return kSetupFailed;
  return WEXITSTATUS(status);
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 20;
  // The parent makes no CUDA call: each round's child has the device alone.
  printf("%d rounds a configuration, each in a process of its own; tag found / rounds that faulted\n", rounds);
  printf("%-14s %-8s %-10s %8s %8s %8s\n", "fault", "traffic", "between", "found", "faulted", "other");
  unsigned long long tag = 1;
  int lost_without_fence = 0;
  int setup_failures = 0;
  for (int fault = 0; fault < 3; ++fault) {
    for (int traffic = 0; traffic < 2; ++traffic) {
      for (int fence = 0; fence < 2; ++fence) {
        Counts c;
        int other = 0;
        for (int r = 0; r < rounds; ++r, ++tag) {
          const int result = RunRound(tag, fault, fence, traffic);
          if (result == kFound || result == kLost) {
            ++c.rounds;
            if (result == kFound) ++c.found;
          } else {
            ++other;
            if (result == kNoFault) ++c.no_fault;
            if (result == kSetupFailed) ++setup_failures;
          }
        }
        if (!fence) lost_without_fence += c.rounds - c.found;
        printf("%-14s %-8s %-10s %8d %8d %8d%s\n", kFaultName[fault], traffic ? "streams" : "none",
               fence ? "fence.sys" : "nothing", c.found, c.rounds, other,
               c.no_fault ? " (some rounds did not fault)" : "");
        fflush(stdout);
      }
    }
  }
  printf("tags lost without a fence: %d; rounds that could not be set up: %d\n", lost_without_fence, setup_failures);
  return setup_failures == 0 ? 0 : 1;
}
