// next_in_flight.cu: a one-pair stream of 64-byte messages into a receiver
// shaped like RingKernel's owner thread (one thread reads a whole record of
// LL words, then calls an out-of-line handler whose state lives in global
// memory), and what it gains when the next record's loads are in flight
// while the handler runs. The question it answers: how much of the one-pair
// stream's cost per message (RK_OWNER_CYCLES: some 2,900 cycles at the
// receiver, bench/NOTES.md, session 23) is the trip to L2 for each record,
// and whether overlapping it with the handler is worth porting.
//
// Receivers, each measured the same way (the sender as in lean_owner.cu: a
// single producer that keeps its tail in a register):
//   * now: poll the record at the head (twelve 16-byte loads, then the
//     checks), call the handler, poll the next: one trip to L2 per record
//     after the handler returns;
//   * regs: before calling the handler of record k, issue the loads of
//     record k + 1 into registers; after it returns, check them, and poll
//     again only if that record was not whole yet (the loads' registers live
//     across the call);
//   * async: the same with the loads of record k + 1 copied into shared
//     memory by the asynchronous copy (cp.async.cg, 16 bytes each, L2 only),
//     waited for after the handler: no registers held across the call. Its
//     reads are weak loads of words that a producer may be writing; a copy
//     that caught a record half-written has words with the old flag and is
//     polled again from global memory, as `now` would.
// Each receiver's handler is the Drain of lean_owner.cu (a count, an XOR of
// the payload, an order check, the clock) behind a call.
//
// Measured on an H200 (bench/NOTES.md, session 24): 1,043, 919 and 844
// cycles a message. The asynchronous form, ported into the runtime's
// conversation runs, made the one-pair stream 16 % slower there: not kept.
//
// Build and run on a GPU machine:
//   nvcc -O2 -arch=sm_90 -I include -o next bench/probes/next_in_flight.cu && ./next
#include "probe_channel.h"

enum Receive { kNow = 0, kRegs = 1, kAsync = 2 };

constexpr u32 kPairs = kRecordPairs<16>;  // an 8-word header and 16 payload words, two LL words a load

// The handler, behind a call (as RunThreadHandler is).
__device__ __noinline__ void Drain(DrainState* s, Payload m) { DrainTake(s, m); }

// Whether the twelve pairs `a`, `b` are a whole record for `pos`; if so its
// payload to `*m`.
__device__ __forceinline__ bool Whole(const u64* a, const u64* b, u64 pos, Payload* m) {
  u32 type, sender;
  return DecodeRecord(a, b, pos, &type, &sender, m);
}

template <int kReceive>
__device__ void Receive(const Channel& c, DrainState* st, u64 count) {
  __shared__ alignas(16) u64 staged[2][2 * kPairs];
  u64 head = 0, released = 0;
  Payload m;
  PollUntilWhole(c, head, &m);
  while (head < count) {
    const u64 next = head + 1;
    if (kReceive == kNow) {
      Drain(st, m);
      if (next < count) PollUntilWhole(c, next, &m);
    } else if (kReceive == kRegs) {
      u64 a[kPairs], b[kPairs];
      LoadRecord(c.slots, next, a, b);
      Drain(st, m);
      if (next < count && !Whole(a, b, next, &m)) PollUntilWhole(c, next, &m);
    } else {
      u64* buf = staged[next & 1];
#pragma unroll
      for (u32 i = 0; i < kPairs; ++i) CopyPairAsync(buf + 2 * i, SlotAt(c.slots, next) + 2 * i);
      CopyCommit();
      Drain(st, m);
      CopyWaitAll();
      u64 a[kPairs], b[kPairs];
#pragma unroll
      for (u32 i = 0; i < kPairs; ++i) {
        a[i] = buf[2 * i];
        b[i] = buf[2 * i + 1];
      }
      if (next < count && !Whole(a, b, next, &m)) PollUntilWhole(c, next, &m);
    }
    head = next;
    if (head - released >= kCapacity / 4) {
      StoreReleaseGpu(c.head, head);
      released = head;
    }
  }
  StoreReleaseGpu(c.head, head);
}

// Block 0's thread 0 sends `count` messages as fast as the channel takes
// them; block 1's thread 0 receives them. out[0]: the receiver's cycles
// from its first message to its last; out[1]: sends that found it full.
template <int kReceive>
__global__ void StreamKernel(Channel c, DrainState* st, u64 count, long long* out) {
  if (threadIdx.x != 0) return;
  if (blockIdx.x == 0) {
    out[1] = static_cast<long long>(SendStream<kSpsc>(c, count, 1));
    return;
  }
  // The first record starts the clock (the sender's launch is not timed).
  Payload first;
  PollUntilWhole(c, 0, &first);
  const long long t0 = clock64();
  Receive<kReceive>(c, st, count);
  out[0] = clock64() - t0;
}

// Block 1 must not share block 0's SM: each block asks for most of an SM's
// shared memory.
template <int kReceive>
void Stream(const StreamBufs& b, size_t smem, double ghz, const char* name, u64 count) {
  PrepareStream(b, StreamKernel<kReceive>, smem);
  StreamKernel<kReceive><<<2, 32, smem>>>(MakeChannel(b.mem), b.state, count, b.out);
  ReportStream(b, count, ghz, name);
}

int main() {
  const ProbeDevice dev = OpenProbeDevice();
  const StreamBufs b = AllocStreamBufs();
  const u64 count = 1000000;
  for (int rep = 0; rep < 3; ++rep) {
    Stream<kNow>(b, dev.smem_alone, dev.ghz, "now", count);
    Stream<kRegs>(b, dev.smem_alone, dev.ghz, "regs", count);
    Stream<kAsync>(b, dev.smem_alone, dev.ghz, "async", count);
  }
  return 0;
}
