// batch_receive.cu: can a receiver that keeps RingKernel's contract — one
// handler call per message, in order, on one thread, its payload by
// reference and its state in global memory — take a one-pair stream of
// 64-byte messages at 5 × 10^6 msg/s (issue 8's target) if it reads several
// records a trip and the next trip is in flight while the handlers run?
//
// lean_owner.cu (session 17) reached 2.8-3.1 × 10^6 msg/s with a Drain whose
// state is in memory, its warp reading up to four records a trip and every
// payload word shuffled to lane 0; 3.6-4.0 × 10^6 only with the Drain's
// counters in registers. The runtime takes 6.7 × 10^5 (some 2,900 cycles a
// message at the receiver; 400 would be the target's). This probe keeps the
// handler as the runtime calls it (out of line, a dispatch on the type, the
// payload contiguous in memory, a Drain's state in global memory) and
// changes only how records reach it:
//   thread1    one thread, one record a trip: its twelve 16-byte loads, the
//              check, the handler (lean_owner's "spsc thread call");
//   thread8    one thread, eight slots a trip copied by cp.async.cg into a
//              shared stage, the next eight's copies issued before this
//              batch's handlers run; the records checked in the stage and
//              their payloads made contiguous there;
//   warp8      the owner's warp loads the eight slots (a half-warp a slot,
//              four 16-byte loads a lane), checks them by ballot, and writes
//              the payloads contiguous into the stage; the next eight's
//              loads are issued before lane 0 runs this batch's handlers.
// Each receiver calls the handler out of line (`call`, as the runtime does)
// or with the dispatch inlined (`inline`); `count only` runs no handler at
// all, so its rate is the protocol's and the sender's pace. The sender is
// one thread with a single-producer channel (its tail in a register), as a
// RingKernel channel's; "refused" counts the times it found the channel
// full: near zero, the sender, not the receiver, set the pace.
//
// Build and run on a GPU machine:
//   nvcc -O2 -arch=sm_90 -I include -o batch_receive bench/probes/batch_receive.cu && ./batch_receive
#include "probe_channel.h"

namespace {

constexpr u32 kBatch = 8;
constexpr u32 kPairs = 12;  // an 8-word header and 16 payload words

// A slot's words as cp.async leaves them in shared memory.
struct StagedSlot {
  u64 w[2 * kPairs];
};
// A record made ready for its handler: the type and the payload contiguous.
struct Ready {
  u32 type;
  u32 sender;
  u32 pad[2];
  Payload m;
};

// The dispatch and handlers: type 1 is the Drain; 3-5 exist so that the
// switch is a real one.
__device__ __forceinline__ void DispatchBody(DrainState* s, u32 type, const Payload* m) {
  switch (type) {
    case 1:
      DrainTake(s, *m);
      break;
    case 3:
      reinterpret_cast<u64*>(s)[8] += m->w[3];
      break;
    case 4:
      reinterpret_cast<u64*>(s)[9] ^= m->w[4];
      break;
    default:
      reinterpret_cast<u64*>(s)[10] = m->w[5];
      break;
  }
}
// Out of line, as RingKernel's RunThreadHandler.
__device__ __noinline__ void DispatchCall(DrainState* s, u32 type, const Payload* m) { DispatchBody(s, type, m); }

// How a taken record is handled: the out-of-line call (the runtime's way),
// the dispatch inlined, or only counted (no handler: the pace of the
// protocol and of the sender alone).
enum How { kCall = 0, kInline = 1, kCountOnly = 2 };
template <int kHow>
__device__ __forceinline__ void Handle(DrainState* s, u32 type, const Payload* m, u64* counted) {
  if (kHow == kCall) {
    DispatchCall(s, type, m);
  } else if (kHow == kInline) {
    DispatchBody(s, type, m);
  } else {
    ++*counted;
  }
}

// thread1: one record a trip, as lean_owner's `spsc thread call`.
template <int kHow>
__device__ void ServeThread1(const Channel& c, DrainState* st, u64 count, u64* counted) {
  u64 head = 0, released = 0;
  Payload m;
  while (head < count) {
    u64 a[kPairs], b[kPairs];
    LoadRecord(c.slots, head, a, b);
    u32 type, sender;
    if (!DecodeRecord(a, b, head, &type, &sender, &m)) continue;
    Handle<kHow>(st, type, &m, counted);
    ++head;
    if (head - released >= kCapacity / 4) {
      StoreReleaseGpu(c.head, head);
      released = head;
    }
  }
  StoreReleaseGpu(c.head, head);
}

// Issues the copies of slots from..from+kBatch-1 into `stage`.
__device__ __forceinline__ void StageBatch(const Channel& c, u64 from, StagedSlot* stage) {
#pragma unroll
  for (u32 j = 0; j < kBatch; ++j) {
    const u64* slot = SlotAt(c.slots, from + j);
#pragma unroll
    for (u32 i = 0; i < kPairs; ++i) CopyPairAsync(&stage[j].w[2 * i], slot + 2 * i);
  }
  CopyCommit();
}

// thread8: eight slots a trip by cp.async, double-buffered. Only the
// records whole in a batch are taken; the rest are copied again with the
// next batch (an LL record caught half-written carries the old lap's flag).
template <int kHow>
__device__ void ServeThread8(const Channel& c, DrainState* st, u64 count, StagedSlot* stage, Ready* ready,
                             u64* counted) {
  u64 head = 0, released = 0;
  u32 cur = 0;
  StageBatch(c, head, stage);
  while (head < count) {
    CopyWaitAll();
    StagedSlot* s = stage + cur * kBatch;
    u32 n = 0;
    for (; n < kBatch; ++n) {
      const u32 f = Flag(head + n);
      u32 bad = 0;
#pragma unroll
      for (u32 i = 0; i < 2 * kPairs; ++i) bad |= static_cast<u32>(s[n].w[i] >> 32) ^ f;
      if (bad != 0) break;
      Ready& r = ready[cur * kBatch + n];
      r.type = static_cast<u32>(s[n].w[0]);
      r.sender = static_cast<u32>(s[n].w[2]);
#pragma unroll
      for (u32 i = 0; i < 16; ++i) r.m.w[i] = static_cast<u32>(s[n].w[8 + i]);
    }
    // The next batch's trip, in flight while this batch's handlers run.
    StageBatch(c, head + n, stage + (cur ^ 1) * kBatch);
    for (u32 j = 0; j < n; ++j) Handle<kHow>(st, ready[cur * kBatch + j].type, &ready[cur * kBatch + j].m, counted);
    head += n;
    cur ^= 1;
    if (head - released >= kCapacity / 4) {
      StoreReleaseGpu(c.head, head);
      released = head;
    }
  }
  CopyWaitAll();
  StoreReleaseGpu(c.head, head);
}

// warp8: the warp loads eight slots a trip (half-warp h, lane l < 12: pair l
// of slot 2k + h, k = 0..3), checks them by ballot and writes the payloads
// contiguous into `ready`; the next batch's loads are issued before lane 0
// runs the handlers.
template <int kHow>
__device__ void ServeWarp8(const Channel& c, DrainState* st, u64 count, Ready* ready, u64* counted) {
  const u32 lane = threadIdx.x & 31;
  const u32 half = lane / 16, l = lane % 16;
  const bool mine = l < kPairs;
  u64 head = 0, released = 0;
  u32 cur = 0;
  u64 a[4], b[4];
  auto load = [&](u64 from) {
#pragma unroll
    for (u32 k = 0; k < 4; ++k) {
      a[k] = b[k] = 0;
      if (mine) LoadLlPairGpu(SlotAt(c.slots, from + 2 * k + half) + 2 * l, &a[k], &b[k]);
    }
  };
  load(head);
  while (head < count) {
    // Whole slots in order: slot j is whole when every lane of its half
    // that loads a pair found the flag of position head + j.
    u32 n = 0;
    bool more = true;
#pragma unroll
    for (u32 j = 0; j < kBatch; ++j) {
      const u32 k = j / 2;
      const bool my_slot = half == j % 2 && mine;
      const u32 f = Flag(head + j);
      const bool ok = !my_slot || (static_cast<u32>(a[k] >> 32) == f && static_cast<u32>(b[k] >> 32) == f);
      more = more && __ballot_sync(0xFFFFFFFFu, ok) == 0xFFFFFFFFu;
      if (more) {
        n = j + 1;
        if (my_slot) {
          Ready& r = ready[cur * kBatch + j];
          if (l == 0) {
            r.type = static_cast<u32>(a[k]);
          } else if (l == 1) {
            r.sender = static_cast<u32>(a[k]);
          } else if (l >= 4) {
            r.m.w[2 * (l - 4)] = static_cast<u32>(a[k]);
            r.m.w[2 * (l - 4) + 1] = static_cast<u32>(b[k]);
          }
        }
      }
    }
    __syncwarp();
    load(head + n);  // the next trip, in flight while lane 0 handles this batch
    if (lane == 0) {
      for (u32 j = 0; j < n; ++j) Handle<kHow>(st, ready[cur * kBatch + j].type, &ready[cur * kBatch + j].m, counted);
    }
    __syncwarp();
    head += n;
    cur ^= 1;
    if (head - released >= kCapacity / 4) {
      if (lane == 0) StoreReleaseGpu(c.head, head);
      released = head;
    }
  }
  if (lane == 0) StoreReleaseGpu(c.head, head);
}

enum Receiver { kThread1 = 0, kThread8 = 1, kWarp8 = 2 };

// Block 0's lane 0 sends `count` Drain messages as fast as the channel
// takes them; block 1 receives. out[0]: the receiver's cycles from its first
// message to its last; out[1]: the sender's refusals (channel full).
template <int kReceiver, int kHow>
__global__ void StreamKernel(Channel c, DrainState* st, u64 count, long long* out) {
  __shared__ StagedSlot stage[2 * kBatch];
  __shared__ Ready ready[2 * kBatch];
  const u32 lane = threadIdx.x & 31;
  if (blockIdx.x == 0) {
    if (lane != 0) return;
    out[1] = static_cast<long long>(SendStream<kSpsc>(c, count, 1));
    return;
  }
  // The first record's arrival starts the clock.
  if (lane == 0) {
    Payload first;
    PollUntilWhole(c, 0, &first);
  }
  __syncwarp();
  const long long t0 = clock64();
  u64 counted = 0;
  if (kReceiver == kWarp8) {
    ServeWarp8<kHow>(c, st, count, ready, &counted);
  } else if (lane == 0) {
    if (kReceiver == kThread1) {
      ServeThread1<kHow>(c, st, count, &counted);
    } else {
      ServeThread8<kHow>(c, st, count, stage, ready, &counted);
    }
  }
  __syncwarp();
  if (lane == 0) {
    out[0] = clock64() - t0;
    if (kHow == kCountOnly) st->received = counted;
  }
}

template <int kReceiver, int kHow>
void Stream(const StreamBufs& b, double ghz, size_t smem, const char* name, u64 count) {
  PrepareStream(b, StreamKernel<kReceiver, kHow>, smem);
  StreamKernel<kReceiver, kHow><<<2, 32, smem>>>(MakeChannel(b.mem), b.state, count, b.out);
  ReportStream(b, count, ghz, name);
}

}  // namespace

int main() {
  const ProbeDevice dev = OpenProbeDevice();
  const StreamBufs b = AllocStreamBufs();
  const u64 count = 1000000;
  for (int rep = 0; rep < 2; ++rep) {
    Stream<kThread1, kCall>(b, dev.ghz, dev.smem_alone, "thread1 call", count);
    Stream<kThread8, kCall>(b, dev.ghz, dev.smem_alone, "thread8 call", count);
    Stream<kThread8, kInline>(b, dev.ghz, dev.smem_alone, "thread8 inline", count);
    Stream<kWarp8, kCall>(b, dev.ghz, dev.smem_alone, "warp8 call", count);
    Stream<kWarp8, kInline>(b, dev.ghz, dev.smem_alone, "warp8 inline", count);
    Stream<kThread8, kCountOnly>(b, dev.ghz, dev.smem_alone, "thread8 count only", count);
    Stream<kWarp8, kCountOnly>(b, dev.ghz, dev.smem_alone, "warp8 count only", count);
  }
  return 0;
}
