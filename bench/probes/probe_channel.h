// probe_channel.h: what the K2K probes share (lean_owner.cu, channels.cu,
// next_in_flight.cu, batch_receive.cu): records of the runtime's LL words in
// 256-byte slots, a channel (slots, the consumer's released head, a tail for
// producers that reserve by compare-and-swap), its single-producer and
// compare-and-swap reservations, the write of a record by one thread, a
// stream's sender, and a stream probe's buffers and report. For nvcc (the
// probes are built by scripts/build_probes.sh).
#ifndef RINGKERNEL_BENCH_PROBES_PROBE_CHANNEL_H_
#define RINGKERNEL_BENCH_PROBES_PROBE_CHANNEL_H_

#include "probe_common.h"
#include "ringkernel/device/mailbox.h"

// The runtime's own LL words and accesses (ll_ring.h, mailbox.h, atomics.h).
using rk::LlWord;
using rk::LoadAcquireGpu;
using rk::LoadLlPairGpu;
using rk::StoreLlPairGpu;
using rk::StoreReleaseGpu;
using rk::u32;
using rk::u64;

constexpr u32 kSlotWords = 32;  // 256 bytes
constexpr u32 kLog2 = 8;  // 256 slots
constexpr u64 kCapacity = u64{1} << kLog2;

enum Reserve { kSpsc = 0, kCas = 1 };

// The flag of every word at position `pos` of a channel.
__device__ __forceinline__ u32 Flag(u64 pos) { return rk::LlFlag(pos, kLog2); }
__device__ __forceinline__ u64 Timer() {
  u64 t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// A channel: slots, the consumer's released head, and (for kCas) a shared tail.
struct Channel {
  u64* slots;
  u64* head;  // released by the consumer
  u64* tail;  // kCas: reserved by producers
};

struct Producer {
  u64 tail;         // kSpsc: the next position
  u64 cached_head;  // what the producer last read of `head`
};

// The record's 64-byte payload, as a handler sees it.
struct Payload {
  u32 w[16];
};

// The slot of position `pos`.
__device__ __forceinline__ const u64* SlotAt(const u64* slots, u64 pos) {
  return slots + (pos & (kCapacity - 1)) * kSlotWords;
}

// A Drain's state, in global memory like an actor's, and its handler: a
// count, the XOR of the payload, an order check, the clock.
struct DrainState {
  u64 received;
  u64 bytes;
  u64 last_ns;
  u64 words;
  u64 disorder;
  u64 next;
};
__device__ __forceinline__ void DrainTake(DrainState* s, const Payload& m) {
  u64 x = 0;
#pragma unroll
  for (u32 i = 0; i < 16; i += 2) x ^= static_cast<u64>(m.w[i]) | static_cast<u64>(m.w[i + 1]) << 32;
  const u64 seq = static_cast<u64>(m.w[0]) | static_cast<u64>(m.w[1]) << 32;
  if (seq != s->next) ++s->disorder;
  s->next = seq + 1;
  s->received += 1;
  s->bytes += 64;
  s->words ^= x;
  s->last_ns = Timer();
}

// A record read by one thread, as MailboxTryTake reads it: every 16-byte
// pair of the slot at `pos` loaded (an 8-word header and kWords payload
// words) before any is checked.
template <u32 kWords = 16>
constexpr u32 kRecordPairs = (8 + kWords) / 2;
template <u32 kWords = 16>
__device__ __forceinline__ void LoadRecord(const u64* slots, u64 pos, u64* a, u64* b) {
  const u64* slot = SlotAt(slots, pos);
#pragma unroll
  for (u32 i = 0; i < kRecordPairs<kWords>; ++i) LoadLlPairGpu(slot + 2 * i, &a[i], &b[i]);
}
// Whether pairs loaded by LoadRecord are a whole record for `pos`; if so its
// type, sender and payload.
template <u32 kWords = 16>
__device__ __forceinline__ bool DecodeRecord(const u64* a, const u64* b, u64 pos, u32* type, u32* sender,
                                             Payload* m) {
  const u32 f = Flag(pos);
  u32 bad = 0;
#pragma unroll
  for (u32 i = 0; i < kRecordPairs<kWords>; ++i) {
    bad |= (static_cast<u32>(a[i] >> 32) ^ f) | (static_cast<u32>(b[i] >> 32) ^ f);
  }
  if (bad != 0) return false;
  *type = static_cast<u32>(a[0]);
  *sender = static_cast<u32>(a[1]);
#pragma unroll
  for (u32 i = 0; i < kWords / 2; ++i) {
    m->w[2 * i] = static_cast<u32>(a[4 + i]);
    m->w[2 * i + 1] = static_cast<u32>(b[4 + i]);
  }
  return true;
}

// Polls the record at `pos` until it is whole (one thread); its payload to `*m`.
__device__ __forceinline__ void PollUntilWhole(const Channel& c, u64 pos, Payload* m) {
  for (;;) {
    u64 a[kRecordPairs<>], b[kRecordPairs<>];
    LoadRecord(c.slots, pos, a, b);
    u32 type, sender;
    if (DecodeRecord(a, b, pos, &type, &sender, m)) return;
  }
}

// The asynchronous copy of one 16-byte pair from global to shared memory
// (cp.async.cg: through L2 only), and the waits for such copies.
__device__ __forceinline__ void CopyPairAsync(void* dst, const void* src) {
  const u32 d = static_cast<u32>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(d), "l"(src) : "memory");
}
__device__ __forceinline__ void CopyCommit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
__device__ __forceinline__ void CopyWaitAll() { asm volatile("cp.async.wait_all;" ::: "memory"); }

// Reserves a position (false: full). One thread.
template <int kReserve>
__device__ __forceinline__ bool Reserve(const Channel& c, Producer& p, u64* pos) {
  if (kReserve == kSpsc) {
    if (p.tail - p.cached_head >= kCapacity) {
      p.cached_head = LoadAcquireGpu(c.head);
      if (p.tail - p.cached_head >= kCapacity) return false;
    }
    *pos = p.tail++;
    return true;
  }
  // kCas: from the guessed tail, as MailboxReserve does.
  u64 t = p.tail;
  for (;;) {
    if (t - p.cached_head >= kCapacity) {
      p.cached_head = LoadAcquireGpu(c.head);
      if (t - p.cached_head >= kCapacity) return false;
    }
    const u64 seen = atomicCAS(c.tail, t, t + 1);
    if (seen == t) break;
    t = seen;
  }
  *pos = t;
  p.tail = t + 1;
  return true;
}

// Writes a record of type `type` at `pos`: twelve 16-byte stores of LL words
// from one thread (a handler's send).
template <u32 kWords = 16>
__device__ __forceinline__ void Write(const Channel& c, u64 pos, u32 type, u32 sender, const Payload& m) {
  u64* slot = c.slots + (pos & (kCapacity - 1)) * kSlotWords;
  const u32 f = Flag(pos);
  u32 h[8] = {type, 4 * kWords, sender, 0u, 0u, 0u, 0u, 0u};
#pragma unroll
  for (u32 i = 0; i < 4; ++i) StoreLlPairGpu(slot + 2 * i, LlWord(h[2 * i], f), LlWord(h[2 * i + 1], f));
#pragma unroll
  for (u32 i = 0; i < kWords / 2; ++i) StoreLlPairGpu(slot + 8 + 2 * i, LlWord(m.w[2 * i], f), LlWord(m.w[2 * i + 1], f));
}

// A stream's sender: one thread writes `count` records of type `type` as
// fast as the channel takes them (payload words 0-1 the sequence number,
// the rest a fixed pattern). Returns how many times it found the channel
// full.
template <int kReserve>
__device__ __forceinline__ u64 SendStream(const Channel& c, u64 count, u32 type) {
  Producer p{0, 0};
  u64 full = 0;
  Payload m;
#pragma unroll
  for (u32 i = 0; i < 16; ++i) m.w[i] = i * 0x01010101u;
  for (u64 s = 0; s < count; ++s) {
    m.w[0] = static_cast<u32>(s);
    m.w[1] = static_cast<u32>(s >> 32);
    u64 pos;
    while (!Reserve<kReserve>(c, p, &pos)) ++full;
    Write(c, pos, type, 0, m);
  }
  return full;
}

// The raw fenced flag between blocks 0 and 1 of the calling kernel: thread 0
// of each ping-pongs a 4-byte flag (`flags`, two 128-byte lines, zeroed)
// `rounds` times, a store followed by __threadfence() as a message's
// publication would be. Called at the start of a kernel that measures a hop
// between the same two blocks next, so that both figures come from the same
// two SMs (the distance between two SMs shows in every figure of a hop: one
// lease's flag took 189 ns, another's 329 ns). Returns block 0's cycles for
// the round trips, and writes each block's SM to `sm[blockIdx.x]`.
__device__ __forceinline__ long long FlagPingPong(u32* flags, u32 rounds, u32* sm) {
  long long cycles = 0;
  if ((threadIdx.x & 31) == 0 && blockIdx.x < 2) {
    u32 id;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
    sm[blockIdx.x] = id;
    volatile u32* a = flags;
    volatile u32* b = flags + 32;
    const long long t0 = clock64();
    for (u32 i = 1; i <= rounds; ++i) {
      if (blockIdx.x == 0) {
        a[0] = i;
        __threadfence();
        while (b[0] != i) {
        }
      } else {
        while (a[0] != i) {
        }
        b[0] = i;
        __threadfence();
      }
    }
    cycles = clock64() - t0;
  }
  __syncwarp();
  return cycles;
}

inline Channel MakeChannel(u64* base) {
  Channel c;
  c.slots = base;
  c.head = base + kCapacity * kSlotWords;
  c.tail = c.head + 16;
  return c;
}
constexpr size_t kChannelWords = kCapacity * kSlotWords + 64;

// What a stream probe allocates: one channel, the receiver's state (a
// DrainState and room after it), the kernel's outputs (out[0]: the
// receiver's cycles, out[1]: the sender's refusals) and their pinned copy.
struct StreamBufs {
  u64* mem;
  DrainState* state;
  long long* out;
  long long* out_h;
};
inline StreamBufs AllocStreamBufs() {
  StreamBufs b;
  CK(cudaMalloc(&b.mem, kChannelWords * 8));
  CK(cudaMalloc(&b.state, 4096));
  CK(cudaMalloc(&b.out, 64));
  CK(cudaMallocHost(&b.out_h, 64));
  return b;
}
// Before a stream kernel: an empty channel, a zeroed state; lets `kernel`
// ask for `smem` bytes of dynamic shared memory (a block alone on its SM).
template <class Kernel>
void PrepareStream(const StreamBufs& b, Kernel kernel, size_t smem) {
  CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
  CK(cudaMemset(b.mem, 0, kChannelWords * 8));
  CK(cudaMemset(b.state, 0, 4096));
}
// After it: the receiver's rate and cycles for `count` messages, and what
// the Drain counted.
inline void ReportStream(const StreamBufs& b, u64 count, double ghz, const char* name) {
  CK(cudaDeviceSynchronize());
  CK(cudaMemcpy(b.out_h, b.out, 16, cudaMemcpyDeviceToHost));
  DrainState s;
  CK(cudaMemcpy(&s, b.state, sizeof(s), cudaMemcpyDeviceToHost));
  const double cycles = static_cast<double>(b.out_h[0]) / static_cast<double>(count - 1);
  printf("stream %-18s %9.3e msg/s  %6.0f cycles a message  (%llu received, %llu out of order, the sender found it full %lld times)\n",
         name, ghz * 1e9 / cycles, cycles, static_cast<unsigned long long>(s.received),
         static_cast<unsigned long long>(s.disorder), b.out_h[1]);
}

#endif  // RINGKERNEL_BENCH_PROBES_PROBE_CHANNEL_H_
