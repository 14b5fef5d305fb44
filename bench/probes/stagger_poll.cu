// stagger_poll.cu: how soon a GPU thread polling mapped host memory sees a
// host write, with one poll at a time (the floor, `cuper_persistent_roundtrip`)
// and with several polls in flight, issued a fixed time apart.
//
// A poll of mapped memory is a read over the bus (about 1.2 us on an H100);
// a write that lands just after a poll was answered waits for the whole next
// one. With K polls in flight, S ns apart, a write waits on average for
// about S / 2 before a poll takes it, plus the poll's way back.
//
// The host ping-pongs a sequence number with one warp of a one-block kernel,
// as the floor does: it stores seq into line 0 of a mapped buffer, and spins
// until the GPU stores seq into line 2. Each configuration:
//   * K polls in flight (1 = the floor's loop), issued at least S ns apart
//     (clock64, from the SM clock the device reports);
//   * a poll is 8 bytes from one lane (the floor's), or 16 bytes from each of
//     1-32 lanes (256 bytes from 16 lanes: RingKernel's quiet poll of a host
//     ring, which holds a small record whole);
//   * stage i of K polls word i * stride (the host writes every stage's
//     word), to find whether polls of one word or one line overlap;
//   * the host writes as soon as it saw the last answer, or after a random
//     pause of 0-4 us (a request arriving at no particular time).
// Prints the round trip's p50 / p99 (host steady_clock) and how many polls
// the GPU issued per microsecond (the bus reads a waiting system costs).
//
// Build and run on a GPU machine:
//   nvcc -O2 -arch=sm_90 -o stagger bench/probes/stagger_poll.cu && ./stagger
#include <algorithm>
#include <chrono>
#include <random>
#include <vector>

#include "probe_common.h"

using u64 = unsigned long long;

constexpr u64 kStop = ~0ull;

__device__ __forceinline__ void LoadPoll(const u64* p, int bytes, u64* a, u64* b) {
  // 16 bytes from each of bytes / 16 lanes; 8 bytes: lane 0 alone.
  const unsigned lane = threadIdx.x & 31;
  if (bytes >= 16) {
    if (lane < static_cast<unsigned>(bytes / 16)) {
      asm volatile("ld.relaxed.sys.v2.u64 {%0, %1}, [%2];" : "=l"(*a), "=l"(*b) : "l"(p + 2 * lane) : "memory");
    } else {
      *a = *b = 0;
    }
  } else {
    if (lane == 0) {
      asm volatile("ld.relaxed.sys.u64 %0, [%1];" : "=l"(*a) : "l"(p) : "memory");
    } else {
      *a = 0;
    }
    *b = 0;
  }
}

// One warp. cmd: line 0 (and the 256 bytes from it); done: line 2 of the
// second 256 bytes. polls[0]: the polls issued, polls[1]: the cycles run.
template <int K>
__global__ void Poller(const u64* cmd, u64* done, long long spacing_cycles, int bytes, int stride_words, u64* polls) {
  u64 a[K], b[K];
  long long issued = clock64();
  u64 n = 0;
  const long long start = issued;
#pragma unroll
  for (int i = 0; i < K; ++i) {
    if (i != 0) {
      while (clock64() - issued < spacing_cycles) {
      }
    }
    issued = clock64();
    LoadPoll(cmd + i * stride_words, bytes, &a[i], &b[i]);
    ++n;
  }
  u64 seen = 0;
  bool stop = false;
  while (!stop) {
#pragma unroll
    for (int i = 0; i < K; ++i) {
      const u64 v = __shfl_sync(0xFFFFFFFFu, a[i], 0);
      (void)b[i];
      if (v == kStop) {
        stop = true;
        break;
      }
      if (v > seen) {  // polls are looked at in the order they were issued
        seen = v;
        if ((threadIdx.x & 31) == 0) asm volatile("st.relaxed.sys.u64 [%0], %1;" ::"l"(done), "l"(v) : "memory");
      }
      while (clock64() - issued < spacing_cycles) {
      }
      issued = clock64();
      LoadPoll(cmd + i * stride_words, bytes, &a[i], &b[i]);
      ++n;
    }
  }
  if (threadIdx.x == 0) {
    polls[0] = n;
    polls[1] = static_cast<u64>(clock64() - start);
  }
}

struct Result {
  double p50, p99, polls_per_us;
};

template <int K>
Result Run(u64* host, const u64* cmd_d, u64* done_d, u64* polls_d, u64* polls_h, double clock_ghz, int spacing_ns,
           int bytes, int stride_words, int gap_max_ns, int rounds) {
  volatile u64* cmd = host;
  volatile u64* done = host + 64 * 1024;
  for (int i = 0; i < K; ++i) cmd[i * stride_words] = 0;
  done[0] = 0;
  const long long spacing_cycles = static_cast<long long>(spacing_ns * clock_ghz);
  Poller<K><<<1, 32>>>(cmd_d, done_d, spacing_cycles, bytes, stride_words, polls_d);
  CK(cudaGetLastError());
  std::mt19937 rng(12345);
  std::uniform_int_distribution<int> gap(0, gap_max_ns);
  std::vector<double> t;
  t.reserve(rounds);
  using Clock = std::chrono::steady_clock;
  for (int r = 1; r <= rounds + 1000; ++r) {
    if (gap_max_ns > 0) {
      const auto until = Clock::now() + std::chrono::nanoseconds(gap(rng));
      while (Clock::now() < until) {
      }
    }
    const auto t0 = Clock::now();
    for (int i = K - 1; i >= 0; --i) {
      __atomic_store_n(const_cast<u64*>(&cmd[i * stride_words]), static_cast<u64>(r), __ATOMIC_RELEASE);
    }
    while (__atomic_load_n(const_cast<u64*>(&done[0]), __ATOMIC_ACQUIRE) != static_cast<u64>(r)) {
    }
    const auto t1 = Clock::now();
    if (r > 1000) t.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
  }
  for (int i = 0; i < K; ++i) __atomic_store_n(const_cast<u64*>(&cmd[i * stride_words]), kStop, __ATOMIC_RELEASE);
  CK(cudaDeviceSynchronize());
  std::sort(t.begin(), t.end());
  Result res;
  res.p50 = t[t.size() / 2];
  res.p99 = t[t.size() * 99 / 100];
  res.polls_per_us = static_cast<double>(polls_h[0]) / (static_cast<double>(polls_h[1]) / (clock_ghz * 1000.0));
  return res;
}

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? atoi(argv[1]) : 20000;
  const double clock_ghz = OpenProbeDevice().ghz;
  u64* host = nullptr;
  CK(cudaHostAlloc(&host, (64 * 1024 + 64) * 8, cudaHostAllocMapped));
  u64* host_d = nullptr;
  CK(cudaHostGetDevicePointer(&host_d, host, 0));
  u64* polls_h = nullptr;
  CK(cudaHostAlloc(&polls_h, 64, cudaHostAllocMapped));
  u64* polls_d = nullptr;
  CK(cudaHostGetDevicePointer(&polls_d, polls_h, 0));
  const u64* cmd_d = host_d;
  u64* done_d = host_d + 64 * 1024;
  printf("%-6s %-3s %-9s %-8s %-8s %8s %8s %12s\n", "poll", "K", "spacing", "stride_B", "host_gap", "p50_us", "p99_us",
         "polls_per_us");
  struct Cfg {
    int bytes, k, s, stride;
  };
  std::vector<Cfg> cfgs;
  // Polls in flight: stage i polls cmd + i * stride words (the host writes
  // every stage's word): the same word, the same 128-byte line, other lines,
  // other pages.
  for (int bytes : {8, 256}) {
    for (int stride : {0, 2, 16, 32, 512}) {
      if (bytes == 256 && stride != 0 && stride < 32) continue;
      for (Cfg c : {Cfg{0, 2, 300, 0}, Cfg{0, 2, 600, 0}, Cfg{0, 4, 150, 0}, Cfg{0, 8, 150, 0}}) {
        cfgs.push_back(Cfg{bytes, c.k, c.s, stride});
      }
    }
  }
  // One poll at a time, by its width: what a wider read costs.
  for (int bytes : {8, 16, 64, 128, 256, 512}) cfgs.push_back(Cfg{bytes, 1, 0, 0});
  for (int gap : {0, 4000}) {
    for (const Cfg& c : cfgs) {
      Result r;
      switch (c.k) {
        case 1: r = Run<1>(host, cmd_d, done_d, polls_d, polls_h, clock_ghz, c.s, c.bytes, c.stride, gap, rounds); break;
        case 2: r = Run<2>(host, cmd_d, done_d, polls_d, polls_h, clock_ghz, c.s, c.bytes, c.stride, gap, rounds); break;
        case 4: r = Run<4>(host, cmd_d, done_d, polls_d, polls_h, clock_ghz, c.s, c.bytes, c.stride, gap, rounds); break;
        default: r = Run<8>(host, cmd_d, done_d, polls_d, polls_h, clock_ghz, c.s, c.bytes, c.stride, gap, rounds); break;
      }
      printf("%-6d %-3d %-9d %-8d %-8d %8.3f %8.3f %12.3f\n", c.bytes, c.k, c.s, c.stride * 8, gap, r.p50, r.p99,
             r.polls_per_us);
      fflush(stdout);
    }
  }
  return 0;
}
