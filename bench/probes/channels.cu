// channels.cu: one actor fed by many senders, each through a channel of its
// own (a single producer: no compare-and-swap before a send's stores). The
// receiver must find the channels with records without a trip per channel.
// Three ways, each measured as a hop (one of 32 channels active, the reply
// through the sender's own channel) and as a stream (32 senders at once, 16-
// byte messages, FIFO per sender checked):
//   * `lanes, full`: lane i of the receiver's warp reads the whole record at
//     channel i's head (six 16-byte loads), so one trip finds and reads up
//     to 32 records;
//   * `lanes, head`: lane i reads the first 16 bytes at channel i's head;
//     the lanes that found a record's start read the rest (two trips);
//   * `doorbell`: a sender fences after its record and sets its bit in a
//     word the receiver polls (one trip), which then reads the records of
//     the bits it found and cleared (a second trip);
//   * `lanes, hot`: as `lanes, head`, and in the same trip lanes 0-5 read
//     the whole record at the head of the channel the last record came
//     from (a conversation's partner is found in one trip);
//   * `hot, doorbell`: the last sender's whole record and the doorbell word
//     in one trip; the doorbell's channels in a second when the first is
//     not there.
// The receiver handles one record at a time in lane 0 (an actor's messages
// run one after another), its state in global memory. Each hop against the
// raw fenced flag between the same two SMs, measured first in the same
// kernel.
//
// Build and run on a GPU machine:
//   nvcc -O2 -arch=sm_90 -I include -o channels bench/probes/channels.cu && ./channels
#include "probe_channel.h"

constexpr u32 kSenders = 32;
constexpr u32 kActive = 17;  // the hop's sender's channel
constexpr u32 kPairs = 6;    // a record: 8 header words and 4 payload words (16 bytes)
enum Find { kLanesFull = 0, kLanesHead = 1, kDoorbell = 2, kLanesHot = 3, kHotDoorbell = 4 };

// The receiver's state.
struct Receiver {
  u64 received;
  u64 disorder;    // a sender's message out of its order
  u64 words;       // XOR of every payload
  u64 next[kSenders];
};

// The whole record at the head of channel `hot` (lanes 0-5, a pair each),
// loaded in the same trip as whatever the caller loads next: true, with the
// record moved into lane `hot`'s a[], b[], when it is there.
template <typename Also>
__device__ __forceinline__ bool TakeHot(const Channel* in, u64 head, u32 hot, u64 (&a)[kPairs], u64 (&b)[kPairs],
                                        Also also) {
  const u32 lane = threadIdx.x & 31;
  const u64 hot_head = __shfl_sync(0xFFFFFFFFu, head, hot);
  const u32 hf = Flag(hot_head);
  u64 ha = 0, hb = 0;
  if (lane < kPairs) LoadLlPairGpu(in[hot].slots + (hot_head & (kCapacity - 1)) * kSlotWords + 2 * lane, &ha, &hb);
  also();
  const bool hok = lane >= kPairs || (static_cast<u32>(ha >> 32) == hf && static_cast<u32>(hb >> 32) == hf);
  if (__ballot_sync(0xFFFFFFFFu, hok) != 0xFFFFFFFFu) return false;
#pragma unroll
  for (u32 i = 0; i < kPairs; ++i) {
    const u64 x = __shfl_sync(0xFFFFFFFFu, ha, i);
    const u64 y = __shfl_sync(0xFFFFFFFFu, hb, i);
    if (lane == hot) {
      a[i] = x;
      b[i] = y;
    }
  }
  return true;
}

// Lane i's look at channel i (i < kSenders): true when the whole record at
// `head` is in a[], b[]. kDoorbell and kLanesHead read in two trips, kLanesHot
// and kHotDoorbell in one when the last sender's record is there.
template <int kFind>
__device__ __forceinline__ u32 Find(const Channel* in, u64 head, u32* doorbell, u64 (&a)[kPairs],
                                    u64 (&b)[kPairs], u32 hot = 0) {
  const u32 lane = threadIdx.x & 31;
  const u64* slot = in[lane].slots + (head & (kCapacity - 1)) * kSlotWords;
  const u32 f = Flag(head);
  bool look = true;
  if (kFind == kLanesHot) {
    // Lanes 0-5: the hot channel's head record; every lane: the first pair
    // of its own channel's head, in the same trip.
    if (TakeHot(in, head, hot, a, b, [&] { LoadLlPairGpu(slot, &a[0], &b[0]); })) return 1u << hot;
    look = lane != hot && static_cast<u32>(a[0] >> 32) == f && static_cast<u32>(b[0] >> 32) == f;
    if (__ballot_sync(0xFFFFFFFFu, look) == 0) return 0;
  }
  if (kFind == kHotDoorbell) {
    // Lanes 0-5: the hot channel's head record; lane 31: the doorbell. The
    // hot channel's bit stays set: a later look finds whether more follow.
    u32 bits = 0;
    const bool took = TakeHot(in, head, hot, a, b, [&] {
      if (lane == 31) asm volatile("ld.relaxed.gpu.u32 %0, [%1];" : "=r"(bits) : "l"(doorbell) : "memory");
    });
    if (took) return 1u << hot;
    bits = __shfl_sync(0xFFFFFFFFu, bits, 31);
    if (bits == 0) return 0;
    look = (bits >> lane) & 1;
    if (lane == 0) atomicAnd(doorbell, ~bits);
    __threadfence();
  }
  if (kFind == kDoorbell) {
    u32 bits = 0;
    if (lane == 0) asm volatile("ld.relaxed.gpu.u32 %0, [%1];" : "=r"(bits) : "l"(doorbell) : "memory");
    bits = __shfl_sync(0xFFFFFFFFu, bits, 0);
    if (bits == 0) return 0;
    look = (bits >> lane) & 1;
    // Cleared before the channels are read: a record written after this
    // sets its bit again (its sender fences, then sets it).
    if (lane == 0) atomicAnd(doorbell, ~bits);
    __threadfence();
  }
  if (kFind == kLanesHead) {
    LoadLlPairGpu(slot, &a[0], &b[0]);
    look = static_cast<u32>(a[0] >> 32) == f && static_cast<u32>(b[0] >> 32) == f;
    if (__ballot_sync(0xFFFFFFFFu, look) == 0) return 0;
  }
  bool ok = false;
  if (look) {
#pragma unroll
    for (u32 i = kFind == kLanesHead || kFind == kLanesHot ? 1 : 0; i < kPairs; ++i) LoadLlPairGpu(slot + 2 * i, &a[i], &b[i]);
    ok = true;
#pragma unroll
    for (u32 i = 0; i < kPairs; ++i) ok = ok && static_cast<u32>(a[i] >> 32) == f && static_cast<u32>(b[i] >> 32) == f;
  }
  const u32 found = __ballot_sync(0xFFFFFFFFu, ok);
  if (kFind == kDoorbell || kFind == kHotDoorbell) {
    // A channel that had a record may hold more: looked at again next time
    // (its bit is cleared once a look finds it empty; a record written
    // after that sets it again, its sender having fenced first).
    if (lane == 0 && found != 0) atomicOr(doorbell, found);
  }
  return found;
}

// The receiver: serves `count` records from its channels (lane i keeps
// channel i's head and hands its slots back a quarter at a time), lane 0
// handling them one at a time in lane order. A hop's reply (`back`, not
// null) goes to the sender through its own channel, before the count.
template <int kFind>
__device__ void ReceiveMany(const Channel* in, u32* doorbell, Receiver* st, u64 count, const Channel* back) {
  const u32 lane = threadIdx.x & 31;
  u64 head = 0, released = 0, taken = 0;
  u32 hot = 0;  // the channel the last record came from
  Producer reply{0, 0};
  while (taken < count) {
    u64 a[kPairs], b[kPairs];
    u32 found = Find<kFind>(in, head, doorbell, a, b, hot);
    if (found == 0) continue;
    hot = 31 - __clz(found);
    taken += __popc(found);
    u32 left = found;
    while (left != 0) {
      const u32 from = __ffs(left) - 1;
      left &= left - 1;
      const u64 seq = static_cast<u32>(__shfl_sync(0xFFFFFFFFu, a[4], from)) |
                      static_cast<u64>(static_cast<u32>(__shfl_sync(0xFFFFFFFFu, b[4], from))) << 32;
      const u32 w2 = static_cast<u32>(__shfl_sync(0xFFFFFFFFu, a[5], from));
      const u32 w3 = static_cast<u32>(__shfl_sync(0xFFFFFFFFu, b[5], from));
      if (lane == 0) {
        if (back != nullptr) {
          Payload m{};
          m.w[0] = static_cast<u32>(seq) + 1;
          u64 pos;
          while (!Reserve<kSpsc>(*back, reply, &pos)) {
          }
          Write<4>(*back, pos, 2, kSenders, m);
        }
        if (seq != st->next[from]) ++st->disorder;
        st->next[from] = seq + 1;
        st->received += 1;
        st->words ^= seq ^ (static_cast<u64>(w3) << 32 | w2);
      }
    }
    __syncwarp();
    if ((found >> lane) & 1) {
      ++head;
      if (head - released >= kCapacity / 4) {
        StoreReleaseGpu(in[lane].head, head);
        released = head;
      }
    }
  }
  if (lane < kSenders) StoreReleaseGpu(in[lane].head, head);
}

// One sender (lane 0 of its block): `count` 16-byte messages to channel
// `c`, seq 0.., as fast as the channel takes them; with kDoorbell it fences
// and sets bit `bit` after each. A hop's sender waits for each reply on
// `back` (its own channel) and times the round trips.
template <int kFind>
__device__ void Send(const Channel& c, u32 bit, u32* doorbell, u64 count, const Channel* back, long long* cycles) {
  Producer p{0, 0};
  const long long t0 = clock64();
  for (u64 s = 0; s < count; ++s) {
    Payload m{};
    m.w[0] = static_cast<u32>(s);
    m.w[1] = static_cast<u32>(s >> 32);
    m.w[2] = 0x5eed0000u | bit;
    u64 pos;
    while (!Reserve<kSpsc>(c, p, &pos)) {
    }
    Write<4>(c, pos, 1, bit, m);
    if (kFind == kDoorbell || kFind == kHotDoorbell) {
      __threadfence();
      atomicOr(doorbell, 1u << bit);
    }
    if (back != nullptr) {  // wait for the reply at position s of `back`
      const u64* slot = back->slots + (s & (kCapacity - 1)) * kSlotWords;
      u64 x, y;
      do {
        LoadLlPairGpu(slot, &x, &y);
      } while (static_cast<u32>(x >> 32) != Flag(s));
      if ((s & (kCapacity / 4 - 1)) == kCapacity / 4 - 1) StoreReleaseGpu(back->head, s + 1);
    }
  }
  if (cycles != nullptr) *cycles = clock64() - t0;
}

// Block 0: the receiver; blocks 1..n: senders on channels (hop: one sender,
// on channel kActive, its replies on `back`).
template <int kFind>
__global__ void HopMany(const Channel* in, u32* doorbell, Receiver* st, const Channel* back, u32 rounds, u32* flags,
                        long long* out) {
  // The raw fenced flag between the same two SMs first (out[2]; SMs in out[3]).
  const long long flag = FlagPingPong(flags, rounds, reinterpret_cast<u32*>(&out[3]));
  if (blockIdx.x == 0 && (threadIdx.x & 31) == 0) out[2] = flag;
  if (blockIdx.x == 0) {
    ReceiveMany<kFind>(in, doorbell, st, rounds, back);
  } else if ((threadIdx.x & 31) == 0) {
    Send<kFind>(in[kActive], kActive, doorbell, rounds, back, &out[0]);
  }
}

template <int kFind>
__global__ void StreamMany(const Channel* in, u32* doorbell, Receiver* st, u64 per_sender, long long* out) {
  if (blockIdx.x == 0) {
    // Timed from the first record found (the senders' launch is not).
    u64 a[kPairs], b[kPairs];
    while (Find<kLanesFull>(in, 0, doorbell, a, b) == 0) {
    }
    const long long t0 = clock64();
    ReceiveMany<kFind>(in, doorbell, st, per_sender * kSenders, nullptr);
    if (threadIdx.x == 0) out[1] = clock64() - t0;
  } else if ((threadIdx.x & 31) == 0) {
    Send<kFind>(in[blockIdx.x - 1], blockIdx.x - 1, doorbell, per_sender, nullptr, nullptr);
  }
}

struct Setup {
  u64* mem;        // kSenders + 1 channels, then the flag's lines
  Channel* chans;  // device: kSenders receiving channels, then `back`
  u32* doorbell;
  Receiver* st;
  long long* out;
};

void Reset(Setup& s) {
  CK(cudaMemset(s.mem, 0, ((kSenders + 1) * kChannelWords + 64) * 8));
  CK(cudaMemset(s.doorbell, 0, 4));
  CK(cudaMemset(s.st, 0, sizeof(Receiver)));
  CK(cudaMemset(s.out, 0, 64));
}

template <int kFind>
void Hop(Setup& s, double ghz, size_t smem, const char* name, u32 rounds) {
  Reset(s);
  HopMany<kFind><<<2, 32, smem>>>(s.chans, s.doorbell, s.st, s.chans + kSenders, rounds,
                                  reinterpret_cast<u32*>(s.mem + (kSenders + 1) * kChannelWords), s.out);
  CK(cudaDeviceSynchronize());
  long long out[4];
  CK(cudaMemcpy(out, s.out, 32, cudaMemcpyDeviceToHost));
  Receiver r;
  CK(cudaMemcpy(&r, s.st, sizeof(r), cudaMemcpyDeviceToHost));
  const double hop = out[0] / ghz / (2.0 * rounds), flag = out[2] / ghz / (2.0 * rounds);
  const u32* sm = reinterpret_cast<const u32*>(&out[3]);
  printf("hop    %-16s one way %7.1f ns = %.2f x the flag between the same SMs (%.1f ns, SMs %u and %u; %llu received, "
         "%llu out of order)\n", name, hop, hop / flag, flag, sm[0], sm[1], r.received, r.disorder);
}

template <int kFind>
void Stream(Setup& s, double ghz, size_t smem, const char* name, u64 per_sender) {
  Reset(s);
  StreamMany<kFind><<<1 + kSenders, 32, smem>>>(s.chans, s.doorbell, s.st, per_sender, s.out);
  CK(cudaDeviceSynchronize());
  long long out[2];
  CK(cudaMemcpy(out, s.out, 16, cudaMemcpyDeviceToHost));
  Receiver r;
  CK(cudaMemcpy(&r, s.st, sizeof(r), cudaMemcpyDeviceToHost));
  const double secs = out[1] / ghz * 1e-9;
  printf("stream %-16s %9.3e msg/s into one actor from %u senders (%llu received, %llu out of order)\n", name,
         r.received / secs, kSenders, r.received, r.disorder);
}

int main() {
  const ProbeDevice dev = OpenProbeDevice();
  const double ghz = dev.ghz;
  const size_t smem = dev.smem_alone;  // one block an SM
  Setup s;
  CK(cudaMalloc(&s.mem, ((kSenders + 1) * kChannelWords + 64) * 8));
  CK(cudaMalloc(&s.chans, (kSenders + 1) * sizeof(Channel)));
  CK(cudaMalloc(&s.doorbell, 128));
  CK(cudaMalloc(&s.st, sizeof(Receiver)));
  CK(cudaMalloc(&s.out, 64));
  Channel host[kSenders + 1];
  for (u32 i = 0; i <= kSenders; ++i) host[i] = MakeChannel(s.mem + i * kChannelWords);
  CK(cudaMemcpy(s.chans, host, sizeof(host), cudaMemcpyHostToDevice));
#define ALLOW(K) CK(cudaFuncSetAttribute(K, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)))
  ALLOW(HopMany<kLanesFull>);
  ALLOW(HopMany<kLanesHead>);
  ALLOW(HopMany<kDoorbell>);
  ALLOW(StreamMany<kLanesFull>);
  ALLOW(StreamMany<kLanesHead>);
  ALLOW(StreamMany<kDoorbell>);
  ALLOW(HopMany<kLanesHot>);
  ALLOW(StreamMany<kLanesHot>);
  ALLOW(HopMany<kHotDoorbell>);
  ALLOW(StreamMany<kHotDoorbell>);
  const u32 rounds = 20000;
  for (int rep = 0; rep < 2; ++rep) {
    Hop<kLanesFull>(s, ghz, smem, "lanes, full", rounds);
    Hop<kLanesHead>(s, ghz, smem, "lanes, head", rounds);
    Hop<kDoorbell>(s, ghz, smem, "doorbell", rounds);
    Hop<kLanesHot>(s, ghz, smem, "lanes, hot", rounds);
    Hop<kHotDoorbell>(s, ghz, smem, "hot, doorbell", rounds);
    Stream<kLanesFull>(s, ghz, smem, "lanes, full", 100000);
    Stream<kLanesHead>(s, ghz, smem, "lanes, head", 100000);
    Stream<kDoorbell>(s, ghz, smem, "doorbell", 100000);
    Stream<kLanesHot>(s, ghz, smem, "lanes, hot", 100000);
    Stream<kHotDoorbell>(s, ghz, smem, "hot, doorbell", 100000);
  }
  return 0;
}
