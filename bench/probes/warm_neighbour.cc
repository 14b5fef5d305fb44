// Copyright 2026 The RingKernel Authors.
//
// warm_neighbour.cc: can a thread on another CPU keep warm what a host
// thread finds cold after a quiet second?
//
// The first `Ask` after 1 s of quiet spends some 5 µs more on the host than
// one whose caller kept Asking (bench/NOTES.md, sessions 45-53), and the
// build machine's caches and translations go cold within a second whether
// its CPU sleeps or spins (session 51). If the lines it misses are evicted
// from the shared last-level cache, a runtime thread that touches them now
// and then would help a caller that slept; if it is the caller's own
// caches and TLB, only the caller can. This probe walks a chain of 16
// dependent loads, one line on each of 16 pages (4 KiB pages), on CPU 0,
// timed by the TSC (fenced) right after a quiet second and again at once
// (warm), three ways, rotated:
//   sleep       CPU 0 sleeps 1 s; nothing touches the lines;
//   neighbour   CPU 0 sleeps 1 s while a thread on CPU 1 walks the same
//               chain back to back, stopping (and saying so) just before
//               the timed walk;
//   spin        CPU 0 sleeps 1 s, then spins 200 µs on the TSC (a core
//               awake, none of the lines touched).
// rkbench's `path=ask_neighbour_busy` asks the same of the runtime's own
// path on a GPU machine.
//
// Build (host only; scripts/build_probes.sh builds it too):
//   g++ -O2 -std=c++20 -o warm_neighbour bench/probes/warm_neighbour.cc
// Run: ./warm_neighbour [rounds]   (needs two CPUs)
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>
#include <x86intrin.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

namespace {

constexpr int kPages = 16;
// Past a page and a few lines each step, so that every load is a line and a
// page of its own.
constexpr size_t kStride = 4096 * 7 + 192;

uint64_t Ticks() {
  _mm_lfence();
  const uint64_t t = __rdtsc();
  _mm_lfence();
  return t;
}

bool Pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
}

uintptr_t Walk(const char* base) {
  uintptr_t p = reinterpret_cast<uintptr_t>(base);
  for (int i = 0; i < kPages; ++i) p = *reinterpret_cast<const volatile uintptr_t*>(p);
  return p;
}

uint64_t Median(std::vector<uint64_t> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 8;
  const size_t bytes = kPages * kStride + 4096;
  void* mem = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) {
    std::perror("mmap");
    return 1;
  }
  char* base = static_cast<char*>(mem);
  madvise(base, bytes, MADV_NOHUGEPAGE);
  for (int i = 0; i < kPages; ++i) {
    *reinterpret_cast<uintptr_t*>(base + i * kStride) = reinterpret_cast<uintptr_t>(base + ((i + 1) % kPages) * kStride);
  }
  if (!Pin(0)) {
    std::fprintf(stderr, "cannot run on CPU 0\n");
    return 1;
  }
  // 0 walk, 1 stop asked, 2 stopped, 3 end; the helper walks only in rounds
  // that want it (`walking`).
  std::atomic<int> phase{2};
  std::atomic<bool> walking{false};
  std::atomic<bool> pinned{true};
  std::thread helper([&] {
    pinned.store(Pin(1));
    for (;;) {
      const int p = phase.load(std::memory_order_acquire);
      if (p == 3) return;
      if (p == 1) {
        phase.store(2, std::memory_order_release);
      } else if (p == 0 && walking.load(std::memory_order_relaxed)) {
        Walk(base);
      } else {
        usleep(100);
      }
    }
  });
  const char* names[3] = {"sleep", "neighbour", "spin"};
  std::vector<uint64_t> cold[3], warm[3];
  const uint64_t tsc_per_us = [] {
    const uint64_t t0 = Ticks();
    usleep(100000);
    return (Ticks() - t0) / 100000;
  }();
  for (int r = 0; r < rounds; ++r) {
    for (int v = 0; v < 3; ++v) {
      walking.store(v == 1, std::memory_order_relaxed);
      phase.store(0, std::memory_order_release);
      usleep(1000000);
      phase.store(1, std::memory_order_release);
      while (phase.load(std::memory_order_acquire) != 2) {
      }
      if (v == 2) {
        for (const uint64_t t0 = Ticks(); Ticks() - t0 < 200 * tsc_per_us;) {
        }
      }
      const uint64_t t0 = Ticks();
      Walk(base);
      const uint64_t t1 = Ticks();
      Walk(base);
      const uint64_t t2 = Ticks();
      cold[v].push_back(t1 - t0);
      warm[v].push_back(t2 - t1);
    }
  }
  phase.store(3, std::memory_order_release);
  helper.join();
  if (!pinned.load()) std::printf("(the helper could not run on CPU 1: it shared CPU 0's time)\n");
  std::printf("%d rounds, 16 dependent loads on 16 pages; medians (min-max), ns (TSC %lu ticks/us)\n", rounds,
              static_cast<unsigned long>(tsc_per_us));
  for (int v = 0; v < 3; ++v) {
    auto ns = [&](uint64_t t) { return static_cast<unsigned long>(t * 1000 / tsc_per_us); };
    std::printf("%-10s cold %6lu (%lu-%lu)  warm %4lu\n", names[v], ns(Median(cold[v])),
                ns(*std::min_element(cold[v].begin(), cold[v].end())),
                ns(*std::max_element(cold[v].begin(), cold[v].end())), ns(Median(warm[v])));
  }
  munmap(mem, bytes);
  return 0;
}
