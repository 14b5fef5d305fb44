// cold_pages.cu: after a quiet second, how much of the host's cost is the
// translation of addresses (TLB misses), and do 2 MiB pages take it away?
//
// The first `Ask` after 1 s of quiet spends some 4 µs more on the host than
// one whose host side is warm (bench/NOTES.md, sessions 49 and 50), spread
// over every step: the prefetch of its path, the claim of an answer slot,
// the request's stores, the drain of the reply. It touches a dozen or more
// 4 KiB pages (its code, its host structures, three or four mapped
// buffers), and on a virtual machine a TLB miss walks two sets of page
// tables. This probe separates that from the caches' misses:
//
//   walk  a chain of 16 dependent loads, one cache line each, timed by the
//         TSC right after a quiet spell and again at once (warm):
//           pinned4k   lines on 16 pages of a cuMemHostAlloc'd buffer
//                      (how RingKernel's mapped buffers are allocated);
//           huge       the same offsets in a 2 MiB-aligned anonymous
//                      mapping with MADV_HUGEPAGE, registered with
//                      cudaHostRegister (mapped): one 2 MiB page if the
//                      kernel gave one (the smaps line below says);
//           onepage    16 lines of one page of the pinned buffer (one
//                      translation, the same count of cache misses);
//         the quiet spell is a sleep (the CPU may idle) or, for `-spin`,
//         a busy wait of the same length (the CPU stays awake).
//   floor the persistent mapped round trip (one GPU thread echoes a word the
//         host writes; the host spins for the echo), first after a quiet
//         sleep and then warm (median of 20), with both words in the pinned
//         buffer or both in the 2 MiB page.
//
// Run on an H100 machine in session 52 (bench/NOTES.md): a cold 4 KiB page
// cost its host some 80 ns beyond a 2 MiB page, and the GPU's round trip
// through the registered page was 0.3 µs slower than through cuMemHostAlloc's.
//
//   nvcc -O2 -arch=sm_90 -I include -o cold_pages bench/probes/cold_pages.cu
//   ./cold_pages [ROUNDS] [QUIET_MS]        (default 5 rounds, 1000 ms)
#include <sys/mman.h>
#include <time.h>
#include <x86intrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "probe_common.h"

namespace {

constexpr int kLines = 16;
constexpr size_t kPage = 4096;
constexpr size_t kHuge = size_t{2} << 20;
constexpr size_t kRegion = size_t{4} << 20;
constexpr unsigned long long kStop = ~0ull;

double NowNs() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}

// The TSC, ordered: every load before it has completed, none after it has
// begun.
inline unsigned long long Ticks() {
  _mm_lfence();
  const unsigned long long t = __rdtsc();
  _mm_lfence();
  return t;
}

// TSC ticks per ns, against CLOCK_MONOTONIC over 50 ms.
double TicksPerNs() {
  const double n0 = NowNs();
  const unsigned long long t0 = __rdtsc();
  while (NowNs() - n0 < 5e7) {
  }
  return (__rdtsc() - t0) / (NowNs() - n0);
}

void SleepMs(int ms) {
  timespec t{ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&t, nullptr);
}

void SpinMs(int ms, double tpn) {
  const unsigned long long end = __rdtsc() + static_cast<unsigned long long>(ms * 1e6 * tpn);
  while (__rdtsc() < end) _mm_pause();
}

// Links kLines lines of `base` at `offsets` into a chain (each holds the
// next one's offset); the last holds 0.
void Link(char* base, const size_t* offsets) {
  for (int i = 0; i < kLines; ++i) {
    *reinterpret_cast<volatile size_t*>(base + offsets[i]) = i + 1 < kLines ? offsets[i + 1] : 0;
  }
}

// Follows the chain from offsets[0]: each load waits for the one before.
__attribute__((noinline)) size_t Walk(const char* base, size_t first) {
  size_t at = first, sum = 0;
  for (int i = 0; i < kLines; ++i) {
    at = *reinterpret_cast<const volatile size_t*>(base + at);
    sum += at;
  }
  return sum;
}

// The kB of 2 MiB pages in the mapping that holds p (/proc/self/smaps).
long HugeKb(const void* p) {
  FILE* f = fopen("/proc/self/smaps", "r");
  if (f == nullptr) return -1;
  char line[512];
  bool in = false;
  long kb = -1;
  const auto a = reinterpret_cast<uintptr_t>(p);
  while (fgets(line, sizeof line, f) != nullptr) {
    unsigned long lo = 0, hi = 0;
    if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2) {  // a mapping's first line
      in = a >= lo && a < hi;
      continue;
    }
    if (in && strncmp(line, "AnonHugePages:", 14) == 0) {
      kb = strtol(line + 14, nullptr, 10);
      break;
    }
  }
  fclose(f);
  return kb;
}

std::string ReadFirstLine(const char* path) {
  FILE* f = fopen(path, "r");
  if (f == nullptr) return "(unreadable)";
  char line[256] = {0};
  if (fgets(line, sizeof line, f) == nullptr) line[0] = 0;
  fclose(f);
  std::string s(line);
  while (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

// One thread per block echoes its pair's `in` word into its `out` word
// until it reads kStop.
__global__ void Echo(unsigned long long* const* ins, unsigned long long* const* outs) {
  if (threadIdx.x != 0) return;
  volatile unsigned long long* in = ins[blockIdx.x];
  volatile unsigned long long* out = outs[blockIdx.x];
  unsigned long long last = 0;
  for (;;) {
    const unsigned long long v = *in;
    if (v == last) continue;
    if (v == kStop) return;
    *out = v;
    last = v;
  }
}

double RoundTripNs(volatile unsigned long long* in, volatile unsigned long long* out, unsigned long long seq,
                   double tpn) {
  const unsigned long long t0 = Ticks();
  *in = seq;
  while (*out != seq) {
  }
  return (Ticks() - t0) / tpn;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? atoi(argv[1]) : 5;
  const int quiet_ms = argc > 2 ? atoi(argv[2]) : 1000;
  OpenProbeDevice();
  const double tpn = TicksPerNs();
  printf("TSC %.3f ticks/ns; THP enabled: %s; defrag: %s\n", tpn,
         ReadFirstLine("/sys/kernel/mm/transparent_hugepage/enabled").c_str(),
         ReadFirstLine("/sys/kernel/mm/transparent_hugepage/defrag").c_str());

  // The pinned buffer, as MappedBuffer allocates.
  void* pinned_v = nullptr;
  CK(cudaHostAlloc(&pinned_v, kRegion, cudaHostAllocMapped | cudaHostAllocPortable));
  char* pinned = static_cast<char*>(pinned_v);
  memset(pinned, 0, kRegion);
  // The 2 MiB-aligned anonymous mapping, registered.
  void* raw = mmap(nullptr, kRegion + kHuge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) {
    printf("mmap failed\n");
    return 1;
  }
  char* huge = reinterpret_cast<char*>((reinterpret_cast<uintptr_t>(raw) + kHuge - 1) & ~(kHuge - 1));
  const int advise = madvise(huge, kRegion, MADV_HUGEPAGE);
  memset(huge, 0, kRegion);
  CK(cudaHostRegister(huge, kRegion, cudaHostRegisterMapped | cudaHostRegisterPortable));
  printf("madvise(MADV_HUGEPAGE) %s; AnonHugePages of the registered mapping: %ld kB of %zu; of the "
         "cuMemHostAlloc'd one's mapping: %ld kB\n",
         advise == 0 ? "ok" : "failed", HugeKb(huge), kRegion >> 10, HugeKb(pinned));

  // Offsets: 16 pages 7 pages apart (within the first 2 MiB), a line each
  // at a different place in its page; and 16 lines of one page.
  size_t spread[kLines], one[kLines];
  for (int i = 0; i < kLines; ++i) {
    spread[i] = i * 7 * kPage + (i * 5 % 64) * 64;
    one[i] = 64 * kPage + (i * 5 % 64) * 64;
  }
  Link(pinned, spread);
  Link(pinned, one);
  Link(huge, spread);

  // The echo kernel: pair 0 in the pinned buffer, pair 1 in the 2 MiB page
  // (far from the walks' lines).
  unsigned long long* host_ins[2] = {reinterpret_cast<unsigned long long*>(pinned + kHuge + 8 * kPage),
                                     reinterpret_cast<unsigned long long*>(huge + kHuge - 2 * kPage)};
  unsigned long long* host_outs[2] = {host_ins[0] + 16, host_ins[1] + 16};
  unsigned long long *dev_ins[2], *dev_outs[2];
  for (int i = 0; i < 2; ++i) {
    CK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&dev_ins[i]), host_ins[i], 0));
    CK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&dev_outs[i]), host_outs[i], 0));
  }
  unsigned long long** args = nullptr;
  CK(cudaMalloc(&args, 4 * sizeof(void*)));
  CK(cudaMemcpy(args, dev_ins, sizeof dev_ins, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(args + 2, dev_outs, sizeof dev_outs, cudaMemcpyHostToDevice));
  Echo<<<2, 32>>>(args, args + 2);
  CK(cudaGetLastError());

  struct Config {
    const char* name;
    const char* base;
    const size_t* offsets;
    bool spin;
  };
  const Config walks[] = {{"pinned4k", pinned, spread, false}, {"huge", huge, spread, false},
                          {"onepage", pinned, one, false},     {"pinned4k-spin", pinned, spread, true},
                          {"huge-spin", huge, spread, true}};
  constexpr int kWalks = sizeof walks / sizeof walks[0];
  std::vector<double> cold[kWalks], warm[kWalks], fcold[2], fwarm[2];
  unsigned long long seq[2] = {0, 0};
  size_t sink = 0;
  for (int p = 0; p < 2; ++p) {  // the echo is up before the first timed trip
    for (int k = 0; k < 1000; ++k) RoundTripNs(host_ins[p], host_outs[p], ++seq[p], tpn);
  }
  for (int r = 0; r < rounds; ++r) {
    for (int k = 0; k < kWalks; ++k) {
      const int i = (k + r) % kWalks;  // each round starts one configuration later
      const Config& c = walks[i];
      if (c.spin) {
        SpinMs(quiet_ms, tpn);
      } else {
        SleepMs(quiet_ms);
      }
      const unsigned long long t0 = Ticks();
      sink += Walk(c.base, c.offsets[0]);
      const unsigned long long t1 = Ticks();
      sink += Walk(c.base, c.offsets[0]);
      const unsigned long long t2 = Ticks();
      cold[i].push_back((t1 - t0) / tpn);
      warm[i].push_back((t2 - t1) / tpn);
    }
    for (int q = 0; q < 2; ++q) {
      const int p = (q + r) % 2;
      SleepMs(quiet_ms);
      fcold[p].push_back(RoundTripNs(host_ins[p], host_outs[p], ++seq[p], tpn));
      std::vector<double> w;
      for (int k = 0; k < 20; ++k) w.push_back(RoundTripNs(host_ins[p], host_outs[p], ++seq[p], tpn));
      fwarm[p].push_back(Median(w));
    }
  }
  *host_ins[0] = kStop;
  *host_ins[1] = kStop;
  CK(cudaDeviceSynchronize());

  printf("%d rounds, quiet %d ms; medians (min-max) in ns; walk: %d dependent lines\n", rounds, quiet_ms, kLines);
  auto line = [](const char* what, const char* name, const std::vector<double>& c, const std::vector<double>& w) {
    printf("%-6s %-14s cold %8.0f (%.0f-%.0f)   warm %7.0f\n", what, name, Median(c),
           *std::min_element(c.begin(), c.end()), *std::max_element(c.begin(), c.end()), Median(w));
  };
  for (int i = 0; i < kWalks; ++i) line("walk", walks[i].name, cold[i], warm[i]);
  line("floor", "pinned4k", fcold[0], fwarm[0]);
  line("floor", "huge", fcold[1], fwarm[1]);
  printf("(checksum %zu)\n", sink);
  return 0;
}
