// Copyright 2026 The RingKernel Authors.
//
// send_path.cc: what the host half of a `Send` costs, step by step, on the
// CPU alone (no GPU: the ring is ordinary memory, which is what pinned
// mapped memory is to the CPU's stores).
//
// Each step is timed as rkbench times `Send` (rdtscp before and after, one
// call at a time, 32 calls between two "drains" that move the consumer's
// head to the end, as the GPU would), and also 32 calls back to back under
// one pair of stamps (per call). Medians of every call:
//   timer    two rdtscp back to back
//   stream   the owner's record: LlPlaceOwned + LlWriteOwned (64 B)
//   owned    the writer gate and the ring owner around it, as a Send does
//            (SlotTag, RingOwners::Enter, TryEnter, TryWrite, Leave)
//   shared   a shared ring's claim and record (LlTryClaimUnits +
//            LlWriteRecord), for comparison
//   build    the words of a record built and stored into one buffer that
//            stays in the L1 (the building, near enough)
//   plain    the owner's record with ordinary stores instead of streamed
// Build (host only; scripts/build_probes.sh builds it too):
//   g++ -O2 -std=c++20 -I include -o send_path bench/probes/send_path.cc
// Run: ./send_path [calls]
#include <x86intrin.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "../../runtime/ring_owner.h"
#include "../../runtime/writer_gate.h"
#include "ringkernel/device/ll_ring.h"

namespace {

uint64_t Now() {
  unsigned aux;
  return __rdtscp(&aux);
}

struct Ring {
  static constexpr rk::u32 kLog2 = 12;  // units: 4096 × 128 B = 512 KiB
  std::vector<rk::u64> words;
  rk::u64 hint = 0, cached_head = 0, head = 0;
  Ring() : words((size_t{1} << kLog2) * rk::kLlUnitWords + 64) {}
  rk::u64* slots() { return reinterpret_cast<rk::u64*>((reinterpret_cast<uintptr_t>(words.data()) + 63) & ~uintptr_t{63}); }
  rk::RingRef Ref() { return rk::RingRef{slots(), kLog2, 64, &hint, &cached_head, &head}; }
  void Drain() { __atomic_store_n(&head, hint, __ATOMIC_RELEASE); }
};

struct Msg {
  uint64_t seq;
  unsigned char pad[56];
};

// LlStreamRecord's steps with the store as a parameter: to tell the cost of
// building the words from that of the stores.
template <class Store>
void StreamRecordWith(rk::u64* unit, rk::u32 flag, const rk::LlHeader& h, const void* payload, Store&& store) {
  const unsigned char* bytes = static_cast<const unsigned char*>(payload);
  const rk::u32 size = h.size;
  const rk::u32 total = rk::LlRecordUnits(size) * rk::kLlUnitWords;
  const rk::u64 flagged = static_cast<rk::u64>(flag) << 32;
  rk::u32 hw[rk::kLlHeaderWords];
  rk::LlHeaderToWords(h, hw);
  rk::u32 k = 0;
  for (; k < rk::kLlHeaderWords; k += 2) store(unit + k, hw[k] | flagged, hw[k + 1] | flagged);
  rk::u32 off = 0;
  for (; off + 8 <= size; off += 8, k += 2) {
    rk::u64 two;
    std::memcpy(&two, bytes + off, 8);
    store(unit + k, (two & 0xFFFFFFFFu) | flagged, (two >> 32) | flagged);
  }
  for (; k < total; k += 2) store(unit + k, 0, 0);
}

void StorePlainPair(rk::u64* p, rk::u64 a, rk::u64 b) {
  _mm_store_si128(reinterpret_cast<__m128i*>(p), _mm_set_epi64x(static_cast<long long>(b), static_cast<long long>(a)));
}

// Median ticks of a call, timed one at a time (and, in *batch, the median
// of 32 calls timed together, per call: back to back, as a stream of Sends).
template <class Op>
double MedianTicks(int calls, Ring* ring, Op&& op, double* batch = nullptr) {
  if (batch != nullptr) {
    std::vector<uint64_t> b;
    for (int i = 0; i + 32 <= calls; i += 32) {
      if (ring != nullptr) ring->Drain();
      const uint64_t t0 = Now();
      for (int j = 0; j < 32; ++j) op(i + j);
      const uint64_t t1 = Now();
      b.push_back(t1 - t0);
    }
    std::nth_element(b.begin(), b.begin() + b.size() / 2, b.end());
    *batch = static_cast<double>(b[b.size() / 2]) / 32;
  }
  std::vector<uint64_t> t(static_cast<size_t>(calls));
  for (int i = 0; i < calls; ++i) {
    if (ring != nullptr && i % 32 == 0) ring->Drain();
    const uint64_t t0 = Now();
    op(i);
    const uint64_t t1 = Now();
    t[static_cast<size_t>(i)] = t1 - t0;
  }
  std::nth_element(t.begin(), t.begin() + calls / 2, t.end());
  return static_cast<double>(t[static_cast<size_t>(calls / 2)]);
}

}  // namespace

int main(int argc, char** argv) {
  const int calls = argc > 1 ? std::atoi(argv[1]) : 200000;
  Msg m{};
  for (unsigned i = 0; i < sizeof(m.pad); ++i) m.pad[i] = static_cast<unsigned char>(i);
  rk::LlHeader h{};
  h.type = 7;
  h.size = sizeof(Msg);
  h.actor = 3;
  std::printf("TSC ticks per call, medians of %d calls: one call timed alone (the timer's own cost included), "
              "and 32 back to back timed together\n", calls);
  auto row = [&](const char* name, Ring* ring, auto&& op) {
    double batch = 0;
    const double one = MedianTicks(calls, ring, op, &batch);
    std::printf("%-8s %6.0f %8.1f\n", name, one, batch);
  };

  row("timer", nullptr, [](int) {});

  // The owner's place for message i in `ref` (64 B records fill the ring's
  // units exactly: never a skip).
  auto place = [&](const rk::RingRef& ref, int i) {
    m.seq = static_cast<uint64_t>(i);
    rk::u64 start;
    rk::u32 pad;
    if (!rk::LlPlaceOwned(ref.log2, ref.hint, ref.cached_head, ref.head, h.size, &start, &pad) || pad != 0) {
      std::abort();
    }
    return start;
  };

  Ring r1;
  const rk::RingRef ref1 = r1.Ref();
  row("stream", &r1, [&](int i) { rk::LlWriteOwned(ref1.slots, ref1.log2, ref1.hint, place(ref1, i), 0, h, &m); });

  Ring r2;
  const rk::RingRef ref2 = r2.Ref();
  rk::WriterGate gate;
  gate.Init(1);
  gate.Open();
  rk::RingOwners owners;
  owners.Init(1, gate.asymmetric());
  std::printf("(gate: %s)\n", gate.asymmetric() ? "asymmetric" : "fenced");
  row("owned", &r2, [&](int i) {
    m.seq = static_cast<uint64_t>(i);
    const uint32_t me = gate.SlotTag();
    rk::RingOwners::Mode mode = owners.Enter(0, me, ref2, [&] { gate.Barrier(); });
    if (!gate.TryEnter(0)) std::abort();
    if (!owners.TryWrite(0, me, &mode, ref2, h, &m, [&] { gate.Barrier(); }, [&] { return gate.open(); })) std::abort();
    gate.Leave(0);
  });

  Ring r3;
  const rk::RingRef ref3 = r3.Ref();
  row("shared", &r3, [&](int i) {
    m.seq = static_cast<uint64_t>(i);
    rk::u64 at;
    if (!rk::LlTryClaimUnits(ref3.slots, ref3.log2, ref3.max_payload, ref3.hint, ref3.cached_head, ref3.head, h.size,
                             &at, false, 0)) {
      std::abort();
    }
    rk::LlWriteRecord(rk::LlSlot(ref3.slots, rk::kLlUnitWords, ref3.log2, at), rk::LlFlag(at, ref3.log2), h, &m);
  });

  // The words built and stored to one L1-resident buffer (the build alone,
  // near enough), then plain stores into the ring.
  alignas(64) static rk::u64 scratch[64];
  row("build", nullptr, [&](int i) {
    m.seq = static_cast<uint64_t>(i);
    StreamRecordWith(scratch, 0x80000001u, h, &m, StorePlainPair);
    asm volatile("" ::"r"(scratch) : "memory");
  });
  Ring r4;
  const rk::RingRef ref4 = r4.Ref();
  row("plain", &r4, [&](int i) {
    const rk::u64 start = place(ref4, i);
    StreamRecordWith(rk::LlSlot(ref4.slots, rk::kLlUnitWords, ref4.log2, start), rk::LlFlag(start, ref4.log2), h, &m,
                     StorePlainPair);
    __atomic_store_n(ref4.hint, start + rk::LlRecordUnits(h.size), __ATOMIC_RELAXED);
  });
  return 0;
}
