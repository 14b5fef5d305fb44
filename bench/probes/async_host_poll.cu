// async_host_poll.cu: can the thread that owns actors read their host records
// itself, without a read over the bus holding back its mailbox?
//
// Today a worker's warp 0 reads the host ring and hands each small record to
// the owner thread of its actor through shared memory (ARCHITECTURE.md,
// "Host -> actor"): the owner never waits for the bus (a read of mapped memory
// takes 1-1.5 us, while a mailbox poll is a trip to L2), and the hand-over
// costs the `Ask` about 1.25 us of its 3.85 on the GPU (bench/NOTES.md,
// session 17). An owner that polled its actors' host records itself would
// need a read of mapped memory that does not stall it: an asynchronous copy
// into shared memory whose completion it tests without waiting, between its
// mailbox polls.
//
// One thread of block 0 (the owner) takes records the host writes into one
// slot of mapped memory (LL words: 4 data bytes and a 4-byte flag naming the
// request, as RingKernel's rings) and answers each with a posted store of its
// number into mapped memory; the host times the round trip (steady_clock).
// The owner reads the slot by one of:
//   floor   one 8-byte load of the slot's first word, back to back (the
//           persistent round trip of `cuper_persistent_roundtrip`);
//   sync    the whole record by the thread's own 16-byte loads, all issued
//           before any is looked at (each poll stalls the thread);
//   ldgsts  `cp.async.cg` 16-byte copies into shared memory, completion
//           signalled on an mbarrier (`cp.async.mbarrier.arrive.noinc`) and
//           tested with `mbarrier.test_wait` (does not wait);
//   bulk    one `cp.async.bulk` copy of the record by the tensor memory
//           accelerator, completion counted in on the same mbarrier.
// In the configurations with a mailbox, block 1 (another SM) ping-pongs a
// number with the owner through a word of device memory (the raw one-way
// flag of `rkbench`'s hop) while the host keeps sending records: the owner
// serves both in one loop, and block 1 reports the one-way time of its hops.
// So each line says what a way of reading the host costs the owner's
// mailbox, and what serving a mailbox costs the host's round trip. The
// answer comes in one of the forms of ReplyKind (a word, or a reply record
// of LL words written four ways), and the owner counts the cycles it spends
// writing it. `scale` keeps many bulk copies in flight at once (RunScale).
//
// Measured on an H200 (bench/NOTES.md, session 31): bulk copies do not hold
// the owner (its mailbox's one-way time within 0-32 ns of the time with no
// host to read) while it answers the host within 1.02-1.15 x the floor; one
// thread's 16-byte loads of mapped memory take a round trip each; 32 bulk
// copies in flight on one SM add about 1 us to the round trip, and some
// 4,000 over the GPU saturate the bus.
// Session 33 (`relay`): the runtime's relay written lean (r-warp) answers
// within 1.17-1.23 x the floor's read back to back; a bulk copy waited for by
// one lane while its warp's other lanes wait for it at a shuffle takes about
// twice as long to be seen (r-bulk, r-offer), alone in its warp or waited for
// by the whole warp it is the fastest form (r-bulk1, r-bulkw).
//
// Build and run on a GPU machine:
//   nvcc -O2 -arch=sm_90 -I include -o async_host_poll bench/probes/async_host_poll.cu
//   ./async_host_poll            (every way but bulk)
//   ./async_host_poll bulk       (the bulk copies, alone: a copy the
//                                 accelerator refuses ends the process)
//   ./async_host_poll scale      (many lanes polling by bulk copies at once)
//   ./async_host_poll relay      (a poller warp relaying to an owner thread, RelayProbe)
#include <algorithm>
#include <chrono>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "probe_common.h"
#include "ringkernel/device/atomics.h"

// The runtime's own accesses (atomics.h).
using rk::CompareExchangeCta;
using rk::LoadAcquireCta;
using rk::LoadRelaxedCta;
using rk::LoadRelaxedGpu;
using rk::LoadRelaxedSys;
using rk::LoadRelaxedSysPair;
using rk::StoreRelaxedGpu;
using rk::StoreRelaxedSys;
using rk::StoreRelaxedSysPair;
using rk::u32;
using rk::u64;

constexpr u64 kStop = ~0ull;
constexpr int kMaxWords = 32;  // a record of up to 256 bytes

enum Mode : int { kNone = 0, kFloor = 1, kSync = 2, kLdgsts = 3, kBulk = 4 };
const char* ModeName(int m) {
  switch (m) {
    case kNone: return "none";
    case kFloor: return "floor";
    case kSync: return "sync";
    case kLdgsts: return "ldgsts";
    default: return "bulk";
  }
}

// What the host and the kernel share in mapped memory.
struct alignas(256) HostArea {
  u64 record[kMaxWords];  // written by the host
  alignas(128) u64 reply[16];  // written by the owner: a word, or a record of kReplyWords LL words
  alignas(128) u64 pinger_done;
  alignas(128) u64 stats[8];  // polls, cycles, taken, torn, stalled, mailbox served
};

// Device memory: the mailbox words and the pinger's hop times.
struct DevArea {
  alignas(128) u64 x;  // pinger -> owner
  alignas(128) u64 y;  // owner -> pinger
};

__device__ __forceinline__ u32 Smem(const void* p) { return static_cast<u32>(__cvta_generic_to_shared(p)); }

template <int Words>
__device__ __forceinline__ void IssueLdgsts(u32 dst, const u64* src, u32 bar) {
#pragma unroll
  for (int i = 0; i < Words; i += 2) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst + 8 * i), "l"(src + i) : "memory");
  }
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(bar) : "memory");
}
template <int Words>
__device__ __forceinline__ void IssueBulk(u32 dst, const u64* src, u32 bar) {
  // The generic proxy's reads of the last copy come before the next copy's writes.
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(Words * 8) : "memory");
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(dst),
               "l"(src), "r"(Words * 8), "r"(bar)
               : "memory");
}
__device__ __forceinline__ bool TestWait(u32 bar, u32 parity) {
  u32 done;
  asm volatile(
      "{ .reg .pred p; mbarrier.test_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
      : "=r"(done)
      : "r"(bar), "r"(parity)
      : "memory");
  return done != 0;
}

__device__ __forceinline__ bool TryWait(u32 bar, u32 parity) {
  u32 done;
  asm volatile(
      "{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
      : "=r"(done)
      : "r"(bar), "r"(parity)
      : "memory");
  return done != 0;
}

// A record of request `seq`: word i is (seq's low 32 bits) << 32 | (seq * 37 + i).
__host__ __device__ inline u64 RecordWord(u64 seq, int i) {
  return (static_cast<u64>(static_cast<u32>(seq)) << 32) | static_cast<u32>(seq * 37 + static_cast<u64>(i));
}

// 0: not whole yet; 1: whole and right; 2: whole but a word's data is wrong.
template <int Words>
__device__ __forceinline__ int CheckRecord(const u64 (&w)[Words], u64 seq) {
  bool whole = true;
  bool right = true;
#pragma unroll
  for (int i = 0; i < Words; ++i) {
    whole = whole && static_cast<u32>(w[i] >> 32) == static_cast<u32>(seq);
    right = right && w[i] == RecordWord(seq, i);
  }
  return !whole ? 0 : (right ? 1 : 2);
}

// How the owner answers: one 8-byte store of the request's number (the
// floor's), or a record of 12 LL words (a reply's header and an 8-byte
// payload, as `ctx.reply` writes one) by six 16-byte relaxed stores at
// system scope (RingKernel's), by six weak 16-byte stores, or by one bulk
// copy from shared memory (the tensor memory accelerator's store).
// kReplyReserved: RingKernel's reply with its reservation before the
// stores (a compare-and-swap on a tail in shared memory, after an acquire
// of the cached head there: LlTryReserveUnits<CtaScope>).
enum ReplyKind : int { kReplyWord = 0, kReplyStrong = 1, kReplyWeak = 2, kReplyBulk = 3, kReplyReserved = 4 };
constexpr int kReplyWords = 12;
const char* ReplyName(int k) {
  switch (k) {
    case kReplyWord: return "word";
    case kReplyStrong: return "ll-sys";
    case kReplyWeak: return "ll-weak";
    case kReplyReserved: return "ll-rsv";
    default: return "ll-bulk";
  }
}

__device__ __forceinline__ void Reply(int kind, u64* to, u64 seq, u64* stage) {
  if (kind == kReplyReserved) {
    // stage[14]: the tail; stage[15]: the cached head (the ring never full here).
    const u64 t = LoadRelaxedCta(&stage[14]);
    (void)LoadAcquireCta(&stage[15]);
    kind = CompareExchangeCta(&stage[14], t, t + 1) == t ? kReplyStrong : kReplyWord;
  }
  if (kind == kReplyWord) {
    StoreRelaxedSys(to, seq);
  } else if (kind == kReplyStrong) {
#pragma unroll
    for (int i = 0; i < kReplyWords; i += 2) StoreRelaxedSysPair(to + i, RecordWord(seq, i), RecordWord(seq, i + 1));
  } else if (kind == kReplyWeak) {
#pragma unroll
    for (int i = 0; i < kReplyWords; i += 2) {
      asm volatile("st.global.v2.u64 [%0], {%1, %2};" ::"l"(to + i), "l"(RecordWord(seq, i)),
                   "l"(RecordWord(seq, i + 1))
                   : "memory");
    }
  } else {
    // The stage may be rewritten once the last copy has read it.
    asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
#pragma unroll
    for (int i = 0; i < kReplyWords; ++i) stage[i] = RecordWord(seq, i);
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(to), "r"(Smem(stage)),
                 "r"(kReplyWords * 8)
                 : "memory");
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
  }
}

struct Params {
  const u64* record;  // device view of HostArea::record
  u64* reply;
  int reply_kind;
  u64* stats;
  u64* pinger_done;
  DevArea* dev;
  u64* hop_cycles;
  int hops;
  int warm_hops;
  long long watchdog_cycles;
};

template <int Mode, int Words, bool Mailbox>
__device__ void Owner(const Params& p) {
  __shared__ alignas(128) u64 buf[kMaxWords];
  __shared__ alignas(8) u64 bar_word;
  __shared__ alignas(128) u64 reply_stage[16];
  if (threadIdx.x == 0) reply_stage[14] = reply_stage[15] = 0;
  const u32 bar = Smem(&bar_word);
  const u32 dst = Smem(buf);
  if (Mode == kLdgsts || Mode == kBulk) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(bar) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  }
  bool host_done = Mode == kNone;
  bool mail_done = !Mailbox;
  u64 expect = 1;
  u64 mseq = 0;
  bool in_flight = false;
  u32 parity = 0;
  u64 polls = 0, taken = 0, torn = 0, stalled = 0, mail_served = 0, reply_cycles = 0;
  const long long start = clock64();
  long long progress = start;
  while (!(host_done && mail_done)) {
    if (!host_done) {
      int got = 0;
      bool stop = false;
      if (Mode == kFloor) {
        const u64 v = LoadRelaxedSys(p.record);
        ++polls;
        stop = v == kStop;
        got = static_cast<u32>(v >> 32) == static_cast<u32>(expect) ? 1 : 0;
      } else if (Mode == kSync) {
        u64 w[Words];
#pragma unroll
        for (int i = 0; i < Words; i += 2) LoadRelaxedSysPair(p.record + i, &w[i], &w[i + 1]);
        ++polls;
        stop = w[0] == kStop;
        if (!stop) got = CheckRecord<Words>(w, expect);
      } else if (Mode == kLdgsts || Mode == kBulk) {
        if (!in_flight) {
          if (Mode == kLdgsts) {
            IssueLdgsts<Words>(dst, p.record, bar);
          } else {
            IssueBulk<Words>(dst, p.record, bar);
          }
          in_flight = true;
          ++polls;
        } else if (TestWait(bar, parity)) {
          parity ^= 1u;
          in_flight = false;
          u64 w[Words];
#pragma unroll
          for (int i = 0; i < Words; ++i) w[i] = *reinterpret_cast<volatile u64*>(&buf[i]);
          stop = w[0] == kStop;
          if (!stop) got = CheckRecord<Words>(w, expect);
        }
      }
      if (stop) {
        host_done = true;
      } else if (got != 0) {
        torn += got == 2 ? 1 : 0;
        const long long r0 = clock64();
        Reply(p.reply_kind, p.reply, expect, reply_stage);
        reply_cycles += static_cast<u64>(clock64() - r0);
        ++expect;
        ++taken;
        progress = clock64();
      }
    }
    if (Mailbox && !mail_done) {
      const u64 v = LoadRelaxedGpu(&p.dev->x);
      if (v == kStop) {
        mail_done = true;
      } else if (v != mseq) {
        mseq = v;
        StoreRelaxedGpu(&p.dev->y, v);
        ++mail_served;
        progress = clock64();
      }
    }
    if (clock64() - progress > p.watchdog_cycles) {
      stalled = 1;
      break;
    }
  }
  // An accelerator copy still in flight must land before the block exits.
  asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
  if (in_flight) {
    while (!TestWait(bar, parity)) {
    }
  }
  p.stats[0] = polls;
  p.stats[1] = static_cast<u64>(clock64() - start);
  p.stats[2] = taken;
  p.stats[3] = torn;
  p.stats[4] = stalled;
  p.stats[5] = mail_served;
  p.stats[6] = reply_cycles;
}

__device__ void Pinger(const Params& p) {
  const long long start = clock64();
  for (int i = 1; i <= p.warm_hops + p.hops; ++i) {
    const long long t0 = clock64();
    StoreRelaxedGpu(&p.dev->x, static_cast<u64>(i));
    bool stalled = false;
    while (LoadRelaxedGpu(&p.dev->y) != static_cast<u64>(i)) {
      if (clock64() - start > p.watchdog_cycles * 8) {
        stalled = true;
        break;
      }
    }
    if (stalled) break;
    const long long t1 = clock64();
    if (i > p.warm_hops) p.hop_cycles[i - p.warm_hops - 1] = static_cast<u64>(t1 - t0);
  }
  StoreRelaxedGpu(&p.dev->x, kStop);
  StoreRelaxedSys(p.pinger_done, 1);
}

template <int Mode, int Words, bool Mailbox>
__global__ void Probe(Params p) {
  if (threadIdx.x != 0) return;
  if (blockIdx.x == 0) {
    Owner<Mode, Words, Mailbox>(p);
  } else {
    Pinger(p);
  }
}

// --relay: the same host requests, relayed as the runtime relays them: warp
// 0 of block 0 (the poller) reads the host's record and thread 32 (the
// owner, in warp 1) answers it while it ping-pongs with block 1 through
// device memory, as an owner that polls its actor's mailbox does. Every
// access to what the two threads share in shared memory is an atomic
// operation, as in the runtime (racecheck's view). Six forms:
//   r-warp   the runtime's relay, lean: the poller's lanes read the record
//            with one 16-byte load each (one warp instruction), check it,
//            copy it into a hand-over entry and publish the entry's tail;
//            the owner sees the tail after a mailbox poll and reads the
//            entry;
//   r-bulk   the same, the poller reading by one bulk copy into shared
//            memory instead, lane 0 waiting for it (mbarrier.try_wait)
//            while the other lanes wait for lane 0 at a shuffle;
//   r-bulk1  r-bulk with the poller's lane 0 alone (the warp's other lanes
//            gone: no shuffles, no warp meetings);
//   r-bulkw  r-bulk with every lane of the poller's warp waiting on the
//            mbarrier (converged), lane 0 only issuing the copy;
//   r-parked r-warp with the owner's warp's other 31 lanes waiting for it at
//            a vote (__any_sync) until it is done, as an owner loop's
//            lanes wait at theirs while one of them spins on its mailbox;
//   r-offer  the port's relay: the poller's bulk copy lands in a window in
//            shared memory and the poller publishes only which request it
//            holds; the owner reads the record from the window itself and
//            says it has read it, after which the poller copies again.
enum RelayForm : int {
  kRelayNone = 0,
  kRelayWarp = 1,
  kRelayBulk = 2,
  kRelayOffer = 3,
  kRelayBulkLone = 4,
  kRelayWarpParked = 5,
  kRelayBulkWarp = 6
};
const char* RelayName(int f) {
  switch (f) {
    case kRelayWarp: return "r-warp";
    case kRelayBulk: return "r-bulk";
    case kRelayBulkLone: return "r-bulk1";
    case kRelayWarpParked: return "r-parked";
    case kRelayBulkWarp: return "r-bulkw";
    default: return "r-offer";
  }
}
constexpr int kRelayWords = 16;  // a 128-byte record (an Ask's is 12 words)
constexpr u32 kEntries = 4;
struct RelayShared {
  alignas(128) u64 window[kRelayWords];
  alignas(8) u64 bar_word;
  alignas(8) unsigned long long head_tail;  // low half: entries taken; high half: entries written
  alignas(8) unsigned long long offer;      // r-offer: the request the window holds (0: none)
  alignas(8) unsigned long long offer_read;  // r-offer: the last request the owner read
  alignas(16) unsigned long long entry[kEntries][kRelayWords];
  alignas(128) u64 reply_stage[16];
};
__device__ __forceinline__ u64 SharedGet(unsigned long long* p) { return atomicCAS(p, 0ull, 0ull); }

template <int Form>
__device__ void RelayPoller(const Params& p, RelayShared& s) {
  const u32 lane = threadIdx.x;
  constexpr bool kLone = Form == kRelayBulkLone;
  constexpr bool kWarpRead = Form == kRelayWarp || Form == kRelayWarpParked;
  if (kLone && lane != 0) return;
  const u32 mask = kLone ? 1u : 0xFFFFFFFFu;
  const u32 bar = Smem(&s.bar_word);
  u64 expect = 1;
  u32 parity = 0;
  u64 polls = 0;
  long long progress = clock64();
  for (;;) {
    u64 w[kRelayWords];
    bool stop = false;
    int got = 0;
    if (kWarpRead) {
      // Lane l holds words 2l and 2l + 1; lane 0 gets them all by shuffles
      // (the check), as the runtime's window is spread over the lanes.
      u64 a = 0, b = 0;
      if (lane < kRelayWords / 2) LoadRelaxedSysPair(p.record + 2 * lane, &a, &b);
      ++polls;
#pragma unroll
      for (int i = 0; i < kRelayWords / 2; ++i) {
        w[2 * i] = __shfl_sync(0xFFFFFFFFu, a, i);
        w[2 * i + 1] = __shfl_sync(0xFFFFFFFFu, b, i);
      }
    } else if (Form == kRelayBulkWarp) {
      if (lane == 0) IssueBulk<kRelayWords>(Smem(s.window), p.record, bar);
      ++polls;
      __syncwarp();
      while (!TryWait(bar, parity)) {
      }
      parity ^= 1u;
#pragma unroll
      for (int i = 0; i < kRelayWords; ++i) w[i] = *reinterpret_cast<volatile u64*>(&s.window[i]);
    } else {
      if (lane == 0) {
        IssueBulk<kRelayWords>(Smem(s.window), p.record, bar);
        ++polls;
        // try_wait suspends the thread until the phase completes or a time
        // limit passes (a loop of test_wait with nothing else to do held
        // each copy twice as long: 0.31 polls a microsecond against 0.64).
        while (!TryWait(bar, parity)) {
        }
        parity ^= 1u;
#pragma unroll
        for (int i = 0; i < kRelayWords; ++i) w[i] = *reinterpret_cast<volatile u64*>(&s.window[i]);
      }
      if (!kLone) {
#pragma unroll
        for (int i = 0; i < kRelayWords; ++i) w[i] = __shfl_sync(0xFFFFFFFFu, w[i], 0);
      }
    }
    stop = w[0] == kStop;
    if (!stop) got = CheckRecord<kRelayWords>(w, expect);
    if (!stop && got == 0) {
      if (clock64() - progress > p.watchdog_cycles) break;
      continue;
    }
    progress = clock64();
    if (Form == kRelayOffer) {
      if (lane == 0) {
        __threadfence_block();
        atomicExch(&s.offer, stop ? kStop : expect);
        // The window is the owner's until it says it has read it.
        while (!stop && SharedGet(&s.offer_read) != expect) {
          if (clock64() - progress > p.watchdog_cycles) break;
        }
      }
      __syncwarp();
    } else {
      u64 ht = 0;
      if (lane == 0) {
        do {
          ht = SharedGet(&s.head_tail);
        } while (static_cast<u32>(ht >> 32) - static_cast<u32>(ht) >= kEntries);
      }
      ht = __shfl_sync(mask, ht, 0);
      const u32 tail = static_cast<u32>(ht >> 32);
      unsigned long long* e = s.entry[tail % kEntries];
      // Each lane stores its pair (the runtime's PutDirect); a lone lane all.
      if (kLone) {
#pragma unroll
        for (int i = 0; i < kRelayWords; ++i) atomicExch(&e[i], i == 0 && stop ? kStop : w[i]);
      } else if (lane < kRelayWords / 2) {
        atomicExch(&e[2 * lane], stop ? kStop : w[2 * lane]);
        atomicExch(&e[2 * lane + 1], w[2 * lane + 1]);
      }
      __threadfence_block();
      __syncwarp(mask);
      if (lane == 0) atomicExch(reinterpret_cast<u32*>(&s.head_tail) + 1, tail + 1);
      __syncwarp(mask);
    }
    if (stop) break;
    ++expect;
  }
  if (lane == 0) p.stats[0] = polls;
}

template <int Form>
__device__ void RelayOwner(const Params& p, RelayShared& s) {
  bool host_done = false;
  bool mail_done = false;
  u64 mseq = 0;
  u64 taken = 0, torn = 0, mail_served = 0, reply_cycles = 0, stalled = 0;
  u32 head = 0;  // r-warp, r-bulk: entries taken
  u64 read = 0;
  const long long start = clock64();
  long long progress = start;
  while (!(host_done && mail_done)) {
    if (!mail_done) {
      const u64 v = LoadRelaxedGpu(&p.dev->x);
      if (v == kStop) {
        mail_done = true;
      } else if (v != mseq) {
        mseq = v;
        StoreRelaxedGpu(&p.dev->y, v);
        ++mail_served;
        progress = clock64();
      }
    }
    if (!host_done) {
      u64 w[kRelayWords];
      bool have = false;
      if (Form == kRelayOffer) {
        const u64 o = SharedGet(&s.offer);
        if (o != read && o != 0) {
          if (o == kStop) {
            host_done = true;
          } else {
            __threadfence_block();
#pragma unroll
            for (int i = 0; i < kRelayWords; ++i) w[i] = SharedGet(reinterpret_cast<unsigned long long*>(&s.window[i]));
            read = o;
            atomicExch(&s.offer_read, o);
            have = true;
          }
        }
      } else {
        const u64 ht = SharedGet(&s.head_tail);
        if (static_cast<u32>(ht >> 32) != head) {
          __threadfence_block();
          unsigned long long* e = s.entry[head % kEntries];
#pragma unroll
          for (int i = 0; i < kRelayWords; ++i) w[i] = SharedGet(&e[i]);
          ++head;
          atomicExch(reinterpret_cast<u32*>(&s.head_tail), head);
          if (w[0] == kStop) {
            host_done = true;
          } else {
            have = true;
          }
        }
      }
      if (have) {
        const u64 seq = w[0] >> 32;  // the request's low 32 bits (RecordWord)
        torn += CheckRecord<kRelayWords>(w, seq) == 1 ? 0 : 1;
        const long long r0 = clock64();
        Reply(p.reply_kind, p.reply, seq, s.reply_stage);
        reply_cycles += static_cast<u64>(clock64() - r0);
        ++taken;
        progress = clock64();
      }
    }
    if (clock64() - progress > p.watchdog_cycles) {
      stalled = 1;
      break;
    }
  }
  asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
  p.stats[1] = static_cast<u64>(clock64() - start);
  p.stats[2] = taken;
  p.stats[3] = torn;
  p.stats[4] = stalled;
  p.stats[5] = mail_served;
  p.stats[6] = reply_cycles;
}

template <int Form>
__global__ void RelayProbe(Params p) {
  __shared__ RelayShared s;
  if (blockIdx.x == 1) {
    if (threadIdx.x == 0) Pinger(p);
    return;
  }
  if (threadIdx.x == 0) {
    s.head_tail = 0;
    s.offer = 0;
    s.offer_read = 0;
    s.reply_stage[14] = s.reply_stage[15] = 0;
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(Smem(&s.bar_word)) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  }
  __syncthreads();
  if (threadIdx.x < 32) {
    RelayPoller<Form>(p, s);
  } else if (threadIdx.x == 32) {
    RelayOwner<Form>(p, s);
  }
  if (Form == kRelayWarpParked && threadIdx.x >= 32 && threadIdx.x < 64) {
    // The owner's warp meets once it is done; its other lanes wait here.
    (void)__any_sync(0xFFFFFFFFu, threadIdx.x == 32);
  }
}

struct Cfg {
  int mode;
  int words;
  bool mailbox;
  int gap_ns;  // the host's random pause before each request: 0 .. gap_ns
  int reply = kReplyWord;
  int relay = kRelayNone;  // --relay: the form (RelayProbe)
};

struct Line {
  double rt_p50 = 0, rt_p99 = 0, hop_p50 = 0, hop_p99 = 0, polls_per_us = 0;
  u64 taken = 0, torn = 0, mail = 0, reply_torn = 0;
  double reply_cycles = 0;  // the owner's cycles in a reply's stores, each
  bool stalled = false;
  bool host_timeout = false;
};

double Pct(std::vector<double>& v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(q * static_cast<double>(v.size() - 1))];
}

// --scale: B blocks (one an SM) of L lanes, each lane keeping a bulk copy of
// a 64-byte slot of its own in flight, as an owner thread polling its own
// actors' host records would; the host ping-pongs with block 0's lane 0 while
// the others poll slots that stay empty. What so many reads in flight cost
// the bus (the round trip) and how many polls it answers.
struct ScaleParams {
  const u64* slots;  // device view: slot (b, l) at (b * 32 + l) * kMaxWords words
  u64* reply;
  u64* polls;  // mapped: summed by every lane at the end
  u64* cycles;
  int lanes;
  long long watchdog_cycles;
};

__global__ void ScaleProbe(ScaleParams p) {
  __shared__ alignas(128) u64 buf[32][8];
  __shared__ alignas(8) u64 bars[32];
  const u32 lane = threadIdx.x;
  if (lane >= static_cast<u32>(p.lanes)) return;
  const u32 bar = Smem(&bars[lane]);
  const u32 dst = Smem(buf[lane]);
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(bar) : "memory");
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  const u64* slot = p.slots + (static_cast<u64>(blockIdx.x) * 32 + lane) * kMaxWords;
  const bool target = blockIdx.x == 0 && lane == 0;
  u64 expect = 1;
  u64 polls = 0;
  u32 parity = 0;
  bool in_flight = false;
  const long long start = clock64();
  long long progress = start;
  for (;;) {
    if (!in_flight) {
      IssueBulk<8>(dst, slot, bar);
      in_flight = true;
      ++polls;
    } else if (TestWait(bar, parity)) {
      parity ^= 1u;
      in_flight = false;
      u64 w[8];
#pragma unroll
      for (int i = 0; i < 8; ++i) w[i] = *reinterpret_cast<volatile u64*>(&buf[lane][i]);
      if (w[0] == kStop) break;
      if (target && CheckRecord<8>(w, expect) != 0) {
        StoreRelaxedSys(p.reply, expect);
        ++expect;
        progress = clock64();
      }
    }
    if (clock64() - progress > p.watchdog_cycles) break;
  }
  if (in_flight) {
    while (!TestWait(bar, parity)) {
    }
  }
  atomicAdd(p.polls, polls);
  if (target) *p.cycles = static_cast<u64>(clock64() - start);
}

int RunScale(const ProbeDevice& d, int rounds) {
  using Clock = std::chrono::steady_clock;
  const int max_blocks = d.prop.multiProcessorCount;
  const size_t slot_bytes = static_cast<size_t>(max_blocks) * 32 * kMaxWords * sizeof(u64);
  u64* slots = nullptr;
  CK(cudaHostAlloc(reinterpret_cast<void**>(&slots), slot_bytes + 1024, cudaHostAllocMapped));
  u64* slots_d = nullptr;
  CK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&slots_d), slots, 0));
  u64* misc = slots + slot_bytes / sizeof(u64);  // reply, polls, cycles on lines of their own
  u64* misc_d = slots_d + slot_bytes / sizeof(u64);
  CK(cudaFuncSetAttribute(ScaleProbe, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(d.smem_alone)));
  printf("%-7s %-6s %-8s %9s %9s %12s %14s %s\n", "blocks", "lanes", "host_gap", "rt_p50_us", "rt_p99_us",
         "polls/us", "per_lane/us", "note");
  struct S {
    int blocks, lanes;
  };
  for (int gap : {0, 4000}) {
    for (S s : {S{1, 1}, S{1, 32}, S{8, 32}, S{32, 32}, S{max_blocks, 8}, S{max_blocks, 32}}) {
      std::memset(slots, 0, slot_bytes + 1024);
      ScaleParams p;
      p.slots = slots_d;
      p.reply = misc_d;
      p.polls = misc_d + 16;
      p.cycles = misc_d + 32;
      p.lanes = s.lanes;
      p.watchdog_cycles = static_cast<long long>(d.ghz * 1e9);
      ScaleProbe<<<s.blocks, 32, d.smem_alone>>>(p);
      CK(cudaGetLastError());
      std::mt19937 rng(2026);
      std::uniform_int_distribution<int> pause(0, std::max(gap, 1));
      std::vector<double> rt;
      bool timeout = false;
      for (u64 r = 1; r <= static_cast<u64>(rounds) + 1000 && !timeout; ++r) {
        if (gap > 0) {
          const auto until = Clock::now() + std::chrono::nanoseconds(pause(rng));
          while (Clock::now() < until) {
          }
        }
        const auto t0 = Clock::now();
        for (int i = 7; i >= 0; --i) __atomic_store_n(&slots[i], RecordWord(r, i), __ATOMIC_RELAXED);
        while (__atomic_load_n(&misc[0], __ATOMIC_ACQUIRE) != r) {
          if (Clock::now() - t0 > std::chrono::seconds(2)) {
            timeout = true;
            break;
          }
        }
        if (r > 1000 && !timeout) {
          rt.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
        }
      }
      for (int b = 0; b < s.blocks; ++b) {
        for (int l = 0; l < 32; ++l) {
          __atomic_store_n(&slots[(static_cast<size_t>(b) * 32 + l) * kMaxWords], kStop, __ATOMIC_RELEASE);
        }
      }
      CK(cudaDeviceSynchronize());
      const double us = static_cast<double>(misc[32]) / (d.ghz * 1000.0);
      const double per_us = us > 0 ? static_cast<double>(misc[16]) / us : 0;
      const double p50 = Pct(rt, 0.5);
      const double p99 = Pct(rt, 0.99);
      printf("%-7d %-6d %-8d %9.3f %9.3f %12.1f %14.3f %s\n", s.blocks, s.lanes, gap, p50, p99, per_us,
             per_us / (s.blocks * s.lanes), timeout ? "host-timeout" : "");
      fflush(stdout);
    }
  }
  return 0;
}

template <int Mode, int Words, bool Mailbox>
void Launch(const Params& p, size_t smem) {
  CK(cudaFuncSetAttribute(Probe<Mode, Words, Mailbox>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                          static_cast<int>(smem)));
  Probe<Mode, Words, Mailbox><<<Mailbox ? 2 : 1, 32, smem>>>(p);
  CK(cudaGetLastError());
}

template <int Mode, int Words>
void LaunchAny(bool mailbox, const Params& p, size_t smem) {
  if (mailbox) {
    Launch<Mode, Words, true>(p, smem);
  } else {
    Launch<Mode, Words, false>(p, smem);
  }
}

// The kernel of a configuration: its way of reading, its record's words,
// and whether it serves a mailbox.
template <int Mode>
void LaunchWords(const Cfg& c, const Params& p, size_t smem) {
  if (c.words == 8) {
    LaunchAny<Mode, 8>(c.mailbox, p, smem);
  } else {
    LaunchAny<Mode, 32>(c.mailbox, p, smem);
  }
}

void LaunchCfg(const Cfg& c, const Params& p, size_t smem) {
  if (c.relay != kRelayNone) {
    (void)smem;
    switch (c.relay) {
      case kRelayWarp: RelayProbe<kRelayWarp><<<2, 64>>>(p); break;
      case kRelayBulk: RelayProbe<kRelayBulk><<<2, 64>>>(p); break;
      case kRelayBulkLone: RelayProbe<kRelayBulkLone><<<2, 64>>>(p); break;
      case kRelayWarpParked: RelayProbe<kRelayWarpParked><<<2, 64>>>(p); break;
      case kRelayBulkWarp: RelayProbe<kRelayBulkWarp><<<2, 64>>>(p); break;
      default: RelayProbe<kRelayOffer><<<2, 64>>>(p); break;
    }
    CK(cudaGetLastError());
    return;
  }
  switch (c.mode) {
    case kNone: LaunchWords<kNone>(c, p, smem); break;
    case kFloor: LaunchWords<kFloor>(c, p, smem); break;
    case kSync: LaunchWords<kSync>(c, p, smem); break;
    case kLdgsts: LaunchWords<kLdgsts>(c, p, smem); break;
    default: LaunchWords<kBulk>(c, p, smem); break;
  }
}

Line Run(const Cfg& c, HostArea* h, const HostArea* hd, DevArea* dev, u64* hop_d, const ProbeDevice& d, int rounds,
         int hops) {
  using Clock = std::chrono::steady_clock;
  std::memset(static_cast<void*>(h), 0, sizeof(HostArea));
  CK(cudaMemset(dev, 0, sizeof(DevArea)));
  CK(cudaDeviceSynchronize());
  Params p;
  p.record = hd->record;
  p.reply = const_cast<u64*>(hd->reply);
  p.reply_kind = c.reply;
  p.stats = const_cast<u64*>(hd->stats);
  p.pinger_done = const_cast<u64*>(&hd->pinger_done);
  p.dev = dev;
  p.hop_cycles = hop_d;
  p.hops = hops;
  p.warm_hops = 1000;
  p.watchdog_cycles = static_cast<long long>(d.ghz * 1e9);  // a second without progress
  LaunchCfg(c, p, d.smem_alone);
  Line out;
  const int warm = 1000;
  std::vector<double> rt;
  rt.reserve(static_cast<size_t>(rounds));
  std::mt19937 rng(2026);
  std::uniform_int_distribution<int> gap(0, std::max(c.gap_ns, 1));
  auto done_pinging = [&] { return __atomic_load_n(&h->pinger_done, __ATOMIC_ACQUIRE) != 0; };
  if (c.mode != kNone) {
    for (u64 r = 1;; ++r) {
      const bool enough = static_cast<int>(r) > warm + rounds;
      if (c.mailbox ? (enough && done_pinging()) || static_cast<int>(r) > 50 * (warm + rounds) : enough) break;
      if (c.gap_ns > 0) {
        const auto until = Clock::now() + std::chrono::nanoseconds(gap(rng));
        while (Clock::now() < until) {
        }
      }
      const auto t0 = Clock::now();
      for (int i = kMaxWords - 1; i >= 0; --i) __atomic_store_n(&h->record[i], RecordWord(r, i), __ATOMIC_RELAXED);
      bool timeout = false;
      // A record is seen when each of its words carries the request's number.
      auto answered = [&] {
        if (c.reply == kReplyWord) return __atomic_load_n(&h->reply[0], __ATOMIC_ACQUIRE) == r;
        for (int i = kReplyWords - 1; i >= 0; --i) {
          if (static_cast<u32>(__atomic_load_n(&h->reply[i], __ATOMIC_ACQUIRE) >> 32) != static_cast<u32>(r)) {
            return false;
          }
        }
        return true;
      };
      while (!answered()) {
        if (Clock::now() - t0 > std::chrono::seconds(2)) {
          timeout = true;
          break;
        }
      }
      if (timeout) {
        out.host_timeout = true;
        break;
      }
      const auto t1 = Clock::now();
      if (c.reply != kReplyWord) {
        for (int i = 0; i < kReplyWords; ++i) out.reply_torn += h->reply[i] != RecordWord(r, i) ? 1 : 0;
      }
      if (static_cast<int>(r) > warm) rt.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
    }
    __atomic_store_n(&h->record[0], kStop, __ATOMIC_RELEASE);
  }
  CK(cudaDeviceSynchronize());
  out.rt_p50 = Pct(rt, 0.5);
  out.rt_p99 = Pct(rt, 0.99);
  out.taken = h->stats[2];
  out.torn = h->stats[3];
  out.stalled = h->stats[4] != 0;
  out.mail = h->stats[5];
  out.reply_cycles = out.taken != 0 ? static_cast<double>(h->stats[6]) / static_cast<double>(out.taken) : 0;
  const double us = static_cast<double>(h->stats[1]) / (d.ghz * 1000.0);
  out.polls_per_us = us > 0 ? static_cast<double>(h->stats[0]) / us : 0;
  if (c.mailbox) {
    std::vector<u64> cyc(static_cast<size_t>(hops));
    CK(cudaMemcpy(cyc.data(), hop_d, sizeof(u64) * static_cast<size_t>(hops), cudaMemcpyDeviceToHost));
    std::vector<double> ns;
    ns.reserve(cyc.size());
    for (u64 v : cyc) {
      if (v != 0) ns.push_back(static_cast<double>(v) / d.ghz / 2.0);  // one way
    }
    out.hop_p50 = Pct(ns, 0.5);
    out.hop_p99 = Pct(ns, 0.99);
  }
  return out;
}

int main(int argc, char** argv) {
  const bool bulk = argc > 1 && std::string(argv[1]) == "bulk";
  const int rounds = argc > 2 ? atoi(argv[2]) : 20000;
  const int hops = argc > 3 ? atoi(argv[3]) : 20000;
  const ProbeDevice d = OpenProbeDevice();
  if (argc > 1 && std::string(argv[1]) == "scale") return RunScale(d, rounds);
  HostArea* h = nullptr;
  CK(cudaHostAlloc(reinterpret_cast<void**>(&h), sizeof(HostArea), cudaHostAllocMapped));
  HostArea* hd = nullptr;
  CK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&hd), h, 0));
  DevArea* dev = nullptr;
  CK(cudaMalloc(reinterpret_cast<void**>(&dev), sizeof(DevArea)));
  u64* hop_d = nullptr;
  CK(cudaMalloc(reinterpret_cast<void**>(&hop_d), sizeof(u64) * static_cast<size_t>(hops)));
  std::vector<Cfg> cfgs;
  const bool relay = argc > 1 && std::string(argv[1]) == "relay";
  if (relay) {
    // The relays against the one thread that reads by bulk copies and
    // answers itself (session 31's owner), each serving the mailbox, and
    // the floor's read; the runtime's reply (reservation and six stores).
    for (int gap : {0, 4000}) {
      cfgs.push_back(Cfg{kFloor, 8, false, gap, kReplyReserved});
      cfgs.push_back(Cfg{kNone, 8, true, gap});
      cfgs.push_back(Cfg{kBulk, 8, true, gap, kReplyReserved});
      for (int f : {kRelayWarp, kRelayWarpParked, kRelayBulk, kRelayBulkWarp, kRelayBulkLone, kRelayOffer}) {
        Cfg c{kBulk, kRelayWords, true, gap, kReplyReserved};
        c.relay = f;
        cfgs.push_back(c);
      }
    }
  }
  const std::vector<int> ways = bulk ? std::vector<int>{kBulk} : std::vector<int>{kFloor, kSync, kLdgsts};
  // The host alone: what each way of reading costs the round trip.
  for (int gap : {0, 4000}) {
    if (relay) break;
    for (int m : ways) {
      for (int w : {8, 32}) {
        if (m == kFloor && w != 8) continue;
        cfgs.push_back(Cfg{m, w, false, gap});
      }
    }
  }
  // How the answer is written: the floor's read with each reply, and the
  // bulk read with RingKernel's and the bulk reply.
  for (int gap : {0, 4000}) {
    if (relay) break;
    for (int k : {kReplyWord, kReplyStrong, kReplyWeak, kReplyBulk, kReplyReserved}) {
      if (!bulk) cfgs.push_back(Cfg{kFloor, 8, false, gap, k});
    }
    if (bulk) {
      cfgs.push_back(Cfg{kBulk, 8, false, gap, kReplyStrong});
      cfgs.push_back(Cfg{kBulk, 8, false, gap, kReplyBulk});
    }
  }
  // The owner serving a mailbox too: the hop alone first, then with each way.
  for (int gap : {0, 4000}) {
    if (relay) break;
    if (!bulk) cfgs.push_back(Cfg{kNone, 8, true, gap});
    for (int m : ways) cfgs.push_back(Cfg{m, 8, true, gap});
  }
  printf("%-7s %-6s %-8s %-8s %-8s %9s %9s %9s %9s %10s %8s %8s %5s %8s %s\n", "read", "bytes", "reply", "mailbox",
         "host_gap",
         "rt_p50_us", "rt_p99_us", "hop_p50", "hop_p99", "polls/us", "taken", "mail", "torn", "reply_cy", "note");
  for (const Cfg& c : cfgs) {
    CK(cudaMemset(hop_d, 0, sizeof(u64) * static_cast<size_t>(hops)));
    const Line l = Run(c, h, hd, dev, hop_d, d, rounds, hops);
    printf("%-7s %-6d %-8s %-8s %-8d %9.3f %9.3f %9.1f %9.1f %10.3f %8llu %8llu %5llu %8.0f %s%s\n", c.relay != kRelayNone ? RelayName(c.relay) : ModeName(c.mode),
           c.mode == kFloor ? 8 : c.words * 8, ReplyName(c.reply), c.mailbox ? "yes" : "no", c.gap_ns, l.rt_p50,
           l.rt_p99, l.hop_p50, l.hop_p99, l.polls_per_us, l.taken, l.mail, l.torn + l.reply_torn, l.reply_cycles,
           l.stalled ? "owner-stalled " : "",
           l.host_timeout ? "host-timeout" : "");
    fflush(stdout);
  }
  return 0;
}
