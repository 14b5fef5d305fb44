// lean_owner.cu: what a K2K hop and a one-pair stream of 64-byte messages
// cost when the receiving side is as lean as it can be, with the parts a
// runtime cannot leave out: a record of LL words as RingKernel writes it
// (an 8-word header and 16 payload words, in a 256-byte slot), a dispatch
// on the message type to a handler that keeps its state in global memory
// (as an actor's state is), and slots handed back to the producer a
// quarter of the ring at a time. Each hop against a raw fenced flag between
// the same two SMs, measured first in the same kernel. The question it answers: how much of the hop's and the stream's
// distance from their targets the protocol and the handler's own memory
// traffic take, and how much is left for the runtime's loop.
//
// Variants, each measured the same way:
//   * reserve: `spsc` — the sender is the channel's only producer and keeps
//     its tail in a register (a single-producer channel); `cas` — a
//     compare-and-swap on a shared tail, as RingKernel's mailboxes reserve
//     (one trip to L2 before the stores);
//   * read: `warp` — lanes 0-11 each load one 16-byte pair of the record
//     (one instruction), the payload goes to lane 0 by shuffles; `thread` —
//     lane 0 issues all twelve 16-byte loads, then checks them (RingKernel's
//     MailboxTryTake);
//   * dispatch: `inline` — the handler inlined into the loop; `call` — the
//     handler behind an out-of-line function taking the record by value
//     (RingKernel's RunThreadHandler).
// The stream also has a Drain whose counters stay in registers (`no
// state`: the protocol and the dispatch alone), `read=warp2` (lanes 16-31
// read the slot after the head in the same instruction, so a backlog is
// taken two records a trip) and `read=warp4` (two loads a lane: four slots
// a trip).
//
// Build and run on a GPU machine:
//   nvcc -O2 -arch=sm_90 -I include -o lean bench/probes/lean_owner.cu && ./lean
#include "probe_channel.h"

enum Read { kWarp = 0, kThread = 1, kWarp2 = 2, kWarp4 = 3 };

// Handler state, in global memory like an actor's (DrainState: probe_channel.h).
struct RallyState {
  u64 count;
  u64 last;
};

struct Env {
  Channel in;        // this actor's channel
  Channel out;       // the peer's channel
  Producer prod;     // this actor's producer side of `out`
  void* state;
  u32 self;
  u32 rounds;        // hop: round trips left to send
  u64 acc_received;  // type 8's counters (registers, not memory)
  u64 acc_words;
};

// The handlers. Type 1: a Drain (count, XOR, disorder check); type 2: a
// Rally (count, then send one back); type 6: a Rally that sends first and
// then counts (a hop without a trip for the handler's state before the
// send); types 3-5: small handlers that are never
// sent, so that the dispatch is a real switch.
template <int kReserve, u32 kWords = 16>
__device__ __forceinline__ void Handle(Env& e, u32 type, u32 sender, const Payload& m) {
  switch (type) {
    case 1:
      DrainTake(static_cast<DrainState*>(e.state), m);
      break;
    case 2: {
      RallyState* s = static_cast<RallyState*>(e.state);
      s->count += 1;
      s->last = m.w[0];
      if (e.rounds != 0) {
        --e.rounds;
        Payload r = m;
        r.w[0] += 1;
        u64 pos;
        while (!Reserve<kReserve>(e.out, e.prod, &pos)) {
        }
        Write<kWords>(e.out, pos, 2, e.self, r);
      }
      break;
    }
    case 6:
    case 7: {  // a Rally that sends before it touches its state (7: and fences after its stores)
      if (e.rounds != 0) {
        --e.rounds;
        Payload r = m;
        r.w[0] += 1;
        u64 pos;
        while (!Reserve<kReserve>(e.out, e.prod, &pos)) {
        }
        Write<kWords>(e.out, pos, type, e.self, r);
        if (type == 7) __threadfence();
      }
      RallyState* s = static_cast<RallyState*>(e.state);
      s->count += 1;
      s->last = m.w[0];
      break;
    }
    case 8: {  // a Drain whose counters stay in registers: the stream without the handler's memory traffic
      u64 x = 0;
#pragma unroll
      for (u32 i = 0; i < 16; i += 2) x ^= static_cast<u64>(m.w[i]) | static_cast<u64>(m.w[i + 1]) << 32;
      e.acc_received += 1;
      e.acc_words ^= x;
      break;
    }
    case 3:
      static_cast<u64*>(e.state)[8] += m.w[3];
      break;
    case 4:
      static_cast<u64*>(e.state)[9] ^= m.w[4];
      break;
    default:
      static_cast<u64*>(e.state)[10] = sender;
      break;
  }
}

template <int kReserve, u32 kWords>
__device__ __noinline__ void HandleCall(Env* e, u32 type, u32 sender, Payload m) {
  Handle<kReserve, kWords>(*e, type, sender, m);
}

// Takes the record at `pos` if it is whole. Warp-wide call; the record goes
// to lane 0 (`*type`, `*sender`, `*m`). kWarp2 also looks at pos + 1 and
// returns 2 when both are whole.
template <int kRead, u32 kWords = 16>
__device__ __forceinline__ u32 TryTake(const Channel& c, u64 pos, u32* type, u32* sender, Payload* m, u32* type2,
                                       Payload* m2) {
  constexpr u32 kPairs = (8 + kWords) / 2;
  const u32 lane = threadIdx.x & 31;
  if (kRead == kThread) {
    u32 ok = 0;
    if (lane == 0) {
      u64 a[kPairs], b[kPairs];
      LoadRecord<kWords>(c.slots, pos, a, b);
      ok = DecodeRecord<kWords>(a, b, pos, type, sender, m);
    }
    return __shfl_sync(0xFFFFFFFFu, ok, 0);
  }
  // Lane l < 12 loads pair l of the slot at pos; with kWarp2, lane 16 + l
  // pair l of the slot at pos + 1.
  const u32 which = kRead == kWarp2 ? lane / 16 : 0;
  const u32 l = kRead == kWarp2 ? lane % 16 : lane;
  const u64 at = pos + which;
  u64 a = 0, b = 0;
  const bool mine = l < kPairs;
  if (mine) LoadLlPairGpu(c.slots + (at & (kCapacity - 1)) * kSlotWords + 2 * l, &a, &b);
  const u32 f = Flag(at);
  const bool ok = !mine || (static_cast<u32>(a >> 32) == f && static_cast<u32>(b >> 32) == f);
  const u32 whole = __ballot_sync(0xFFFFFFFFu, ok);
  const bool first = (whole & 0xFFFFu) == 0xFFFFu || (kRead != kWarp2 && whole == 0xFFFFFFFFu);
  if (!first) return 0;
  const bool second = kRead == kWarp2 && (whole >> 16) == 0xFFFFu;
  // Header words 0, 1 (type, sender: lane 0's pair); payload word 2i, 2i+1:
  // the pair of lane 4 + i.
  const u32 t0 = __shfl_sync(0xFFFFFFFFu, static_cast<u32>(a), 0);
  const u32 s0 = __shfl_sync(0xFFFFFFFFu, static_cast<u32>(b), 0);
  Payload p;
#pragma unroll
  for (u32 i = 0; i < kWords / 2; ++i) {
    p.w[2 * i] = __shfl_sync(0xFFFFFFFFu, static_cast<u32>(a), 4 + i);
    p.w[2 * i + 1] = __shfl_sync(0xFFFFFFFFu, static_cast<u32>(b), 4 + i);
  }
  if (lane == 0) {
    *type = t0;
    *sender = s0;
    *m = p;
  }
  if (kRead == kWarp2 && second) {
    const u32 t1 = __shfl_sync(0xFFFFFFFFu, static_cast<u32>(a), 16);
    Payload q;
#pragma unroll
    for (u32 i = 0; i < kWords / 2; ++i) {
      q.w[2 * i] = __shfl_sync(0xFFFFFFFFu, static_cast<u32>(a), 20 + i);
      q.w[2 * i + 1] = __shfl_sync(0xFFFFFFFFu, static_cast<u32>(b), 20 + i);
    }
    if (lane == 0) {
      *type2 = t1;
      *m2 = q;
    }
    return 2;
  }
  return 1;
}

// The consumer's loop for `count` messages (stream) or until its Rally has
// sent its rounds and received the last reply (hop). One warp; the handler
// runs in lane 0.
template <int kReserve, int kRead, bool kCall, u32 kWords = 16>
__device__ void Serve(Env& e, u64 count, u64* taken_out) {
  const u32 lane = threadIdx.x & 31;
  u64 head = 0, released = 0, taken = 0;
  while (taken < count) {
    u32 type = 0, sender = 0, type2 = 0;
    Payload m, m2;
    const u32 n = TryTake<kRead, kWords>(e.in, head, &type, &sender, &m, &type2, &m2);
    if (n == 0) continue;
    if (lane == 0) {
      if (kCall) {
        HandleCall<kReserve, kWords>(&e, type, sender, m);
        if (n == 2) HandleCall<kReserve, kWords>(&e, type2, sender, m2);
      } else {
        Handle<kReserve, kWords>(e, type, sender, m);
        if (n == 2) Handle<kReserve, kWords>(e, type2, sender, m2);
      }
    }
    __syncwarp();
    head += n;
    taken += n;
    if (head - released >= kCapacity / 4) {
      if (lane == 0) StoreReleaseGpu(e.in.head, head);
      released = head;
    }
  }
  if (lane == 0) StoreReleaseGpu(e.in.head, head);
  *taken_out = taken;
}

// The stream's receiver reading four slots a trip (two 16-byte loads a
// lane: slots head..head+3) and handling, in order, the records that are
// whole, the handler inlined (read=warp4).
template <int kReserve>
__device__ void ServeFour(Env& e, u64 count, u64* taken_out) {
  constexpr u32 kPairs = 12;  // an 8-word header and 16 payload words
  const u32 lane = threadIdx.x & 31;
  const u32 half = lane / 16, l = lane % 16;
  u64 head = 0, released = 0, taken = 0;
  while (taken < count) {
    u64 a[2], b[2];
#pragma unroll
    for (u32 k = 0; k < 2; ++k) {
      a[k] = b[k] = 0;
      const u64 at = head + 2 * k + half;
      if (l < kPairs) LoadLlPairGpu(e.in.slots + (at & (kCapacity - 1)) * kSlotWords + 2 * l, &a[k], &b[k]);
    }
    u32 n = 0;
    bool more = true;
#pragma unroll
    for (u32 slot = 0; slot < 4; ++slot) {
      const u32 k = slot / 2;
      const u32 f = Flag(head + slot);
      const bool mine = half == slot % 2 && l < kPairs;
      const bool ok = !mine || (static_cast<u32>(a[k] >> 32) == f && static_cast<u32>(b[k] >> 32) == f);
      more = more && __ballot_sync(0xFFFFFFFFu, ok) == 0xFFFFFFFFu;
      if (more) {
        const u32 base = 16 * (slot % 2);
        const u32 type = __shfl_sync(0xFFFFFFFFu, static_cast<u32>(a[k]), base);
        const u32 sender = __shfl_sync(0xFFFFFFFFu, static_cast<u32>(b[k]), base);
        Payload m;
#pragma unroll
        for (u32 i = 0; i < 8; ++i) {
          m.w[2 * i] = __shfl_sync(0xFFFFFFFFu, static_cast<u32>(a[k]), base + 4 + i);
          m.w[2 * i + 1] = __shfl_sync(0xFFFFFFFFu, static_cast<u32>(b[k]), base + 4 + i);
        }
        if (lane == 0) Handle<kReserve>(e, type, sender, m);
        ++n;
      }
    }
    __syncwarp();
    if (n == 0) continue;
    head += n;
    taken += n;
    if (head - released >= kCapacity / 4) {
      if (lane == 0) StoreReleaseGpu(e.in.head, head);
      released = head;
    }
  }
  if (lane == 0) StoreReleaseGpu(e.in.head, head);
  *taken_out = taken;
}

// Hop: block 0 and block 1 each own a Rally; block 0 starts. out[0]: cycles
// of `rounds` round trips (block 0), out[1]: the clock rate check.
template <int kReserve, int kRead, bool kCall, u32 kWords = 16>
__global__ void HopKernel(Channel c0, Channel c1, RallyState* st, u32 rounds, u32 type, u32* flags,
                          long long* out) {
  // The raw fenced flag between the same two SMs first (out[2]; SMs in out[3]).
  const long long flag = FlagPingPong(flags, rounds, reinterpret_cast<u32*>(&out[3]));
  if (blockIdx.x == 0 && (threadIdx.x & 31) == 0) out[2] = flag;
  Env e;
  e.in = blockIdx.x == 0 ? c0 : c1;
  e.out = blockIdx.x == 0 ? c1 : c0;
  e.prod = Producer{0, 0};
  e.state = &st[blockIdx.x];
  e.self = blockIdx.x;
  // Block 0 sends `rounds` and receives `rounds` replies; block 1 replies to each.
  e.rounds = blockIdx.x == 0 ? rounds - 1 : rounds;
  const u32 lane = threadIdx.x & 31;
  const long long t0 = clock64();
  if (blockIdx.x == 0 && lane == 0) {
    Payload m{};
    u64 pos;
    while (!Reserve<kReserve>(e.out, e.prod, &pos)) {
    }
    Write<kWords>(e.out, pos, type, 0, m);
  }
  __syncwarp();
  u64 taken = 0;
  Serve<kReserve, kRead, kCall, kWords>(e, rounds, &taken);
  if (blockIdx.x == 0 && lane == 0) out[0] = clock64() - t0;
}

// Stream: block 0's lane 0 sends `count` Drain messages as fast as the
// channel takes them; block 1 drains them. out[0]: receiver's cycles from
// its first message to its last; out[1]: messages refused (full).
template <int kReserve, int kRead, bool kCall>
__global__ void StreamKernel(Channel c, DrainState* st, u64 count, u32 type, long long* out) {
  const u32 lane = threadIdx.x & 31;
  if (blockIdx.x == 0) {
    if (lane != 0) return;
    out[1] = static_cast<long long>(SendStream<kReserve>(c, count, type));
    return;
  }
  Env e;
  e.in = c;
  e.state = st;
  e.self = 1;
  e.rounds = 0;
  e.acc_received = e.acc_words = 0;
  // The first message starts the clock (the sender's launch is not timed).
  u32 first_type = 0, sender = 0, type2 = 0;
  Payload m, m2;
  while (TryTake<kThread>(c, 0, &first_type, &sender, &m, &type2, &m2) == 0) {
  }
  const long long t0 = clock64();
  u64 taken = 0;
  if (kRead == kWarp4) {
    ServeFour<kReserve>(e, count, &taken);
  } else {
    Serve<kReserve, kRead, kCall>(e, count, &taken);
  }
  if (lane == 0) {
    out[0] = clock64() - t0;
    if (type == 8) st->received = e.acc_received;
  }
}

struct Bufs {
  u64* mem;
  long long* out;
  long long* out_h;
  void* state;
};

// Block 1 must not share block 0's SM: each block asks for most of an SM's
// shared memory.
size_t g_smem = 0;

template <int kReserve, int kRead, bool kCall, u32 kWords = 16>
void Hop(Bufs& b, double ghz, const char* name, u32 rounds, u32 type = 2) {
  CK(cudaMemset(b.mem, 0, (2 * kChannelWords + 64) * 8));
  CK(cudaMemset(b.state, 0, 4096));
  Channel c0 = MakeChannel(b.mem), c1 = MakeChannel(b.mem + kChannelWords);
  HopKernel<kReserve, kRead, kCall, kWords><<<2, 32, g_smem>>>(c0, c1, static_cast<RallyState*>(b.state), rounds, type,
                                                              reinterpret_cast<u32*>(b.mem + 2 * kChannelWords), b.out);
  CK(cudaDeviceSynchronize());
  CK(cudaMemcpy(b.out_h, b.out, 32, cudaMemcpyDeviceToHost));
  const double hop = b.out_h[0] / ghz / (2.0 * rounds), flag = b.out_h[2] / ghz / (2.0 * rounds);
  const u32* sm = reinterpret_cast<const u32*>(&b.out_h[3]);
  printf("hop    %-28s %2u B one way %7.1f ns = %.2f x the flag between the same SMs (%.1f ns, SMs %u and %u)\n", name,
         4 * kWords, hop, hop / flag, flag, sm[0], sm[1]);
}

template <int kReserve, int kRead, bool kCall>
void Stream(Bufs& b, double ghz, const char* name, u64 count, u32 type = 1) {
  CK(cudaMemset(b.mem, 0, kChannelWords * 8));
  CK(cudaMemset(b.state, 0, 4096));
  Channel c = MakeChannel(b.mem);
  StreamKernel<kReserve, kRead, kCall><<<2, 32, g_smem>>>(c, static_cast<DrainState*>(b.state), count, type, b.out);
  CK(cudaDeviceSynchronize());
  CK(cudaMemcpy(b.out_h, b.out, 16, cudaMemcpyDeviceToHost));
  DrainState s;
  CK(cudaMemcpy(&s, b.state, sizeof(s), cudaMemcpyDeviceToHost));
  const double secs = b.out_h[0] / ghz * 1e-9;
  printf("stream %-28s %9.3e msg/s  (%llu received, %llu out of order, sender found it full %lld times)\n", name,
         (count - 1) / secs, s.received, s.disorder, b.out_h[1]);
}

int main() {
  const ProbeDevice dev = OpenProbeDevice();
  const double ghz = dev.ghz;
  g_smem = dev.smem_alone;
  Bufs b;
  CK(cudaMalloc(&b.mem, (2 * kChannelWords + 64) * 8));
  CK(cudaMalloc(&b.out, 64));
  CK(cudaMalloc(&b.state, 4096));
  CK(cudaMallocHost(&b.out_h, 64));
#define ALLOW(K)                                                                                    \
  CK(cudaFuncSetAttribute(K, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(g_smem)))
  ALLOW((HopKernel<kSpsc, kWarp, false>));
  ALLOW((HopKernel<kSpsc, kWarp, true>));
  ALLOW((HopKernel<kSpsc, kThread, false>));
  ALLOW((HopKernel<kSpsc, kThread, true>));
  ALLOW((HopKernel<kCas, kWarp, false>));
  ALLOW((HopKernel<kCas, kThread, true>));
  ALLOW((HopKernel<kSpsc, kWarp, false, 4>));
  ALLOW((HopKernel<kCas, kWarp, false, 4>));
  ALLOW((HopKernel<kCas, kThread, true, 4>));
  ALLOW((StreamKernel<kSpsc, kWarp, false>));
  ALLOW((StreamKernel<kSpsc, kWarp, true>));
  ALLOW((StreamKernel<kSpsc, kWarp2, false>));
  ALLOW((StreamKernel<kSpsc, kWarp2, true>));
  ALLOW((StreamKernel<kSpsc, kThread, true>));
  ALLOW((StreamKernel<kCas, kWarp, false>));
  ALLOW((StreamKernel<kCas, kThread, true>));
  ALLOW((StreamKernel<kCas, kWarp2, false>));
  ALLOW((StreamKernel<kSpsc, kWarp4, false>));
  ALLOW((StreamKernel<kCas, kWarp4, false>));
  const u32 rounds = 20000;
  for (int rep = 0; rep < 2; ++rep) {
    Hop<kSpsc, kWarp, false>(b, ghz, "spsc warp inline", rounds);
    Hop<kSpsc, kWarp, true>(b, ghz, "spsc warp call", rounds);
    Hop<kSpsc, kThread, false>(b, ghz, "spsc thread inline", rounds);
    Hop<kSpsc, kThread, true>(b, ghz, "spsc thread call", rounds);
    Hop<kCas, kWarp, false>(b, ghz, "cas warp inline", rounds);
    Hop<kCas, kThread, true>(b, ghz, "cas thread call", rounds);
    Hop<kSpsc, kWarp, false>(b, ghz, "spsc warp inline, send first", rounds, 6);
    Hop<kCas, kWarp, false>(b, ghz, "cas warp inline, send first", rounds, 6);
    Hop<kCas, kThread, true>(b, ghz, "cas thread call, send first", rounds, 6);
    Hop<kSpsc, kWarp, false, 4>(b, ghz, "spsc warp inline, send first", rounds, 6);
    Hop<kCas, kWarp, false, 4>(b, ghz, "cas warp inline, send first", rounds, 6);
    Hop<kCas, kThread, true, 4>(b, ghz, "cas thread call, send first", rounds, 6);
    Hop<kSpsc, kWarp, false, 4>(b, ghz, "spsc warp inline, fenced", rounds, 7);
    Hop<kSpsc, kWarp, false>(b, ghz, "spsc warp inline, fenced", rounds, 7);
    const u64 count = 1000000;
    Stream<kSpsc, kWarp, false>(b, ghz, "spsc warp inline", count);
    Stream<kSpsc, kWarp, true>(b, ghz, "spsc warp call", count);
    Stream<kSpsc, kWarp2, false>(b, ghz, "spsc warp2 inline", count);
    Stream<kSpsc, kWarp2, true>(b, ghz, "spsc warp2 call", count);
    Stream<kSpsc, kThread, true>(b, ghz, "spsc thread call", count);
    Stream<kCas, kWarp, false>(b, ghz, "cas warp inline", count);
    Stream<kCas, kThread, true>(b, ghz, "cas thread call", count);
    Stream<kSpsc, kWarp, false>(b, ghz, "spsc warp inline, no state", count, 8);
    Stream<kSpsc, kWarp2, false>(b, ghz, "spsc warp2 inline, no state", count, 8);
    Stream<kCas, kWarp2, false>(b, ghz, "cas warp2 inline, no state", count, 8);
    Stream<kSpsc, kWarp4, false>(b, ghz, "spsc warp4 inline", count);
    Stream<kSpsc, kWarp4, false>(b, ghz, "spsc warp4 inline, no state", count, 8);
    Stream<kCas, kWarp4, false>(b, ghz, "cas warp4 inline, no state", count, 8);
  }
  return 0;
}
