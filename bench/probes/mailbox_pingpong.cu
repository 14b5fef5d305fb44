// mailbox_pingpong.cu: one LL record ping-ponged between two blocks on
// different SMs, against a raw fenced flag ping-pong in the same process.
//   * The K2K mailbox protocol (include/ringkernel/device/mailbox.h, the
//     runtime's own functions): each thread 0 owns one mailbox, takes a
//     16-byte message from it and sends one back — no runtime loop, no
//     dispatch; with the runtime's reservation and without it.
//   * The same 12-word record (8 header + 4 payload words) written and read
//     directly, the store side and the load side each four ways (see
//     RawPingPong), to find which form of access the mailbox path should use.
// Build and run on a GPU machine:
//   nvcc -O2 -arch=sm_90 -I include -o mbpp bench/probes/mailbox_pingpong.cu && ./mbpp
#include <cstdio>
#include <cstdlib>

#include "probe_common.h"

#include "ringkernel/device/mailbox.h"


using namespace rk;

constexpr int kRounds = 20000;
constexpr u32 kLog2 = 8;

struct Volley {
  u32 remaining;
  u32 pad;
  u64 stamp;
};

__global__ void Flag(volatile unsigned* a, volatile unsigned* b, long long* cycles) {
  if (threadIdx.x != 0) return;
  const long long t0 = clock64();
  for (int i = 1; i <= kRounds; ++i) {
    if (blockIdx.x == 0) {
      a[0] = i;
      __threadfence();
      while (b[0] != static_cast<unsigned>(i)) {
      }
    } else {
      while (a[0] != static_cast<unsigned>(i)) {
      }
      b[0] = i;
      __threadfence();
    }
  }
  if (blockIdx.x == 0) cycles[0] = clock64() - t0;
}

// wide: payload words loaded together with the header (the runtime's "hot").
// mode 0: the runtime's reservation (compare-and-swap); 1: none — the
// sender owns the positions (single producer), to price the reservation.
__global__ void Mailboxes(MailboxHeader* box0, MailboxHeader* box1, u32 slot_bytes, u32 inline_words, bool wide,
                          u32 mode, long long* cycles) {
  if (threadIdx.x != 0) return;
  MailboxHeader* mine = blockIdx.x == 0 ? box0 : box1;
  MailboxHeader* other = blockIdx.x == 0 ? box1 : box0;
  MailboxCursor cursor{0, 0};
  u64 head = 0;
  u32 buf[kMailInlineMaxWords];
  u64 sent = 0;
  auto send = [&](u32 remaining) {
    u64 pos = sent++;
    if (mode == 0) {
      while (MailboxReserve(other, u64{1} << kLog2, 1, &cursor, &pos) == 0) {
      }
    }
    Volley v{remaining, 0, 0};
    MailHeader h{1, sizeof(Volley), blockIdx.x, 0, 0, 0};
    MailboxWrite(MailboxSlotAt(other, kLog2, slot_bytes, pos), inline_words, LlFlag(pos, kLog2), h, &v);
  };
  auto take = [&]() {
    MailRecord r;
    u64* slot = MailboxSlotAt(mine, kLog2, slot_bytes, head);
    while (!MailboxTryTake(slot, inline_words, LlFlag(head, kLog2), wide, &r, buf)) {
    }
    ++head;
    if ((head & 31) == 0) MailboxRelease(mine, head);
    return reinterpret_cast<const Volley*>(r.payload)->remaining;
  };
  const long long t0 = clock64();
  if (blockIdx.x == 0) send(kRounds);
  for (;;) {
    const u32 left = take();
    if (left == 0) break;
    send(left - 1);
    if (left == 1) break;
  }
  if (blockIdx.x == 0) cycles[0] = clock64() - t0;
}

// ---- The same 12-word record written and read without mailbox.h, the store
// side and the load side each one of four ways (16 combinations):
//   T16  one thread, six 16-byte relaxed.gpu accesses into registers (no
//        arrays; the loads all issued before any check);
//   T8   one thread, twelve 8-byte relaxed.gpu accesses;
//   W16  one warp, lane L < 6 accesses words 2L and 2L+1 with one 16-byte
//        access; __all_sync agrees the record is complete;
//   W8   one warp, lane L < 12 accesses word L;
// and two more ways to load with one thread:
//   T16b one 16-byte load of the first two words until they show the flag,
//        then all (the mailbox's quiet poll: two trips);
//   T16s as T16, with a 64 ns sleep after a poll that found the record
//        incomplete (fewer reads of the line the writer is writing).
// Each for records of 4, 8 and 12 words. These tell what makes the mailbox
// path slower than the LL reference.
constexpr int kSlots = 64;  // ring of slots per direction
constexpr int kWords = 16;  // words per slot (12 used)
enum Access { kT16 = 0, kT8 = 1, kW16 = 2, kW8 = 3, kT16b = 4, kT16s = 5 };
const char* const kAccessName[] = {"T16", "T8", "W16", "W8", "T16b", "T16s"};

__device__ __forceinline__ u64 Word(u32 data, u32 flag) { return (u64(flag) << 32) | data; }
__device__ __forceinline__ void St2(u64* p, u64 a, u64 b) {
  asm volatile("st.relaxed.gpu.v2.u64 [%0], {%1, %2};" ::"l"(p), "l"(a), "l"(b) : "memory");
}
__device__ __forceinline__ void Ld2(const u64* p, u64& a, u64& b) {
  asm volatile("ld.relaxed.gpu.v2.u64 {%0, %1}, [%2];" : "=l"(a), "=l"(b) : "l"(p) : "memory");
}
__device__ __forceinline__ void St1(u64* p, u64 a) { asm volatile("st.relaxed.gpu.u64 [%0], %1;" ::"l"(p), "l"(a) : "memory"); }
__device__ __forceinline__ u64 Ld1(const u64* p) {
  u64 v;
  asm volatile("ld.relaxed.gpu.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}

// Sends value `v` at position `pos` into `ring`. Called by the whole warp.
__device__ void Send(u64* ring, int pos, u32 v, int mode, int n) {
  u64* s = ring + (pos % kSlots) * kWords;
  const u32 flag = 0x80000000u | u32(pos / kSlots + 1);
  const int lane = threadIdx.x & 31;
  if (mode == kW16) {
    if (2 * lane < n) St2(s + 2 * lane, Word(v + 2 * lane, flag), Word(v + 2 * lane + 1, flag));
  } else if (mode == kW8) {
    if (lane < n) St1(s + lane, Word(v + lane, flag));
  } else if (lane == 0) {
    if (mode == kT8) {
#pragma unroll
      for (int w = 0; w < 12; ++w) {
        if (w < n) St1(s + w, Word(v + w, flag));
      }
    } else {
#pragma unroll
      for (int w = 0; w < 12; w += 2) {
        if (w < n) St2(s + w, Word(v + w, flag), Word(v + w + 1, flag));
      }
    }
  }
  __syncwarp();
}

// Waits for position `pos` in `ring`; returns its word 0 to every lane.
__device__ u32 Take(const u64* ring, int pos, int mode, int n) {
  const u64* s = ring + (pos % kSlots) * kWords;
  const u32 flag = 0x80000000u | u32(pos / kSlots + 1);
  const int lane = threadIdx.x & 31;
  if (mode == kW16 || mode == kW8) {
    for (;;) {
      u64 a = 0, b = 0;
      bool ok = true;
      if (mode == kW16) {
        if (2 * lane < n) {
          Ld2(s + 2 * lane, a, b);
          ok = u32(a >> 32) == flag && u32(b >> 32) == flag;
        }
      } else if (lane < n) {
        a = Ld1(s + lane);
        ok = u32(a >> 32) == flag;
      }
      const u32 first = __shfl_sync(0xFFFFFFFFu, u32(a), 0);
      if (__all_sync(0xFFFFFFFFu, ok)) return first;
    }
  }
  u32 first = 0;
  if (lane == 0) {
    for (;;) {
      u64 w[12];
      if (mode == kT16b) {
        u64 a, b;
        Ld2(s, a, b);
        if (u32(a >> 32) != flag || u32(b >> 32) != flag) continue;
      }
      if (mode == kT8) {
#pragma unroll
        for (int i = 0; i < 12; ++i) w[i] = i < n ? Ld1(s + i) : u64(flag) << 32;
      } else {
#pragma unroll
        for (int i = 0; i < 12; i += 2) {
          if (i < n) {
            Ld2(s + i, w[i], w[i + 1]);
          } else {
            w[i] = w[i + 1] = u64(flag) << 32;
          }
        }
      }
      u64 all = ~0ull, any = 0;
#pragma unroll
      for (int i = 0; i < 12; ++i) {
        all &= w[i] >> 32;
        any |= w[i] >> 32;
      }
      if (all == flag && any == flag) {
        first = u32(w[0]);
        break;
      }
      if (mode == kT16s) __nanosleep(64);
    }
  }
  return __shfl_sync(0xFFFFFFFFu, first, 0);
}

__global__ void RawPingPong(u64* ring0, u64* ring1, int store_mode, int load_mode, int n, long long* cycles, u32* sink) {
  u64* out = blockIdx.x == 0 ? ring1 : ring0;
  const u64* in = blockIdx.x == 0 ? ring0 : ring1;
  u32 acc = 0;
  const long long t0 = clock64();
  for (int i = 0; i < kRounds; ++i) {
    if (blockIdx.x == 0) {
      Send(out, i, i, store_mode, n);
      acc += Take(in, i, load_mode, n);
    } else {
      acc += Take(in, i, load_mode, n);
      Send(out, i, acc, store_mode, n);
    }
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) cycles[0] = clock64() - t0;
  if (threadIdx.x == 0) sink[blockIdx.x] = acc;
}

int main() {
  int khz = 0;
  CK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0));
  const double ns_per_cycle = 1e6 / khz;
  long long* cycles;
  CK(cudaMallocManaged(&cycles, 64));
  unsigned *a, *b;
  CK(cudaMalloc(&a, 256));
  CK(cudaMalloc(&b, 256));
  CK(cudaMemset(a, 0, 256));
  CK(cudaMemset(b, 0, 256));
  Flag<<<2, 32>>>(a, b, cycles);
  CK(cudaDeviceSynchronize());
  const double flag_ns = cycles[0] * ns_per_cycle / kRounds / 2;
  printf("raw fenced flag, one way            %7.1f ns\n", flag_ns);
  const MailboxShape shape = MailboxShapeFor(sizeof(Volley));
  const u64 bytes = MailboxBytes(kLog2, shape.slot_bytes);
  for (u32 mode : {0u, 1u})
  for (bool wide : {false, true}) {
    MailboxHeader* boxes[2];
    for (auto& box : boxes) {
      CK(cudaMalloc(&box, bytes));
      CK(cudaMemset(box, 0, bytes));
      MailboxHeader h{};
      h.capacity_log2 = kLog2;
      h.slot_bytes = shape.slot_bytes;
      h.inline_words = shape.inline_words;
      h.plain_bytes = shape.plain_bytes;
      CK(cudaMemcpy(box, &h, sizeof(h), cudaMemcpyHostToDevice));
    }
    Mailboxes<<<2, 32>>>(boxes[0], boxes[1], shape.slot_bytes, shape.inline_words, wide, mode, cycles);
    CK(cudaDeviceSynchronize());
    // kRounds + 1 messages in all, one hop each.
    const double hop_ns = cycles[0] * ns_per_cycle / (kRounds + 1);
    printf("mailbox 16 B, %s, %s poll, one hop %7.1f ns (%.2f x the flag)\n",
           mode == 0 ? "reserved" : "single producer", wide ? "wide" : "narrow", hop_ns, hop_ns / flag_ns);
    for (auto* box : boxes) CK(cudaFree(box));
  }
  const size_t ring_bytes = size_t{kSlots} * kWords * 8;
  u32* sink;
  CK(cudaMalloc(&sink, 64));
  for (int n : {4, 8, 12}) {
    printf("raw %d-word record, one hop in ns (x the flag); rows: store side, columns: load side\n      ", n);
    for (int l = 0; l < 6; ++l) printf("%16s", kAccessName[l]);
    printf("\n");
    for (int st = 0; st < 4; ++st) {
      printf("%-6s", kAccessName[st]);
      for (int ld = 0; ld < 6; ++ld) {
        u64 *r0, *r1;
        CK(cudaMalloc(&r0, ring_bytes));
        CK(cudaMalloc(&r1, ring_bytes));
        CK(cudaMemset(r0, 0, ring_bytes));
        CK(cudaMemset(r1, 0, ring_bytes));
        RawPingPong<<<2, 32>>>(r0, r1, st, ld, n, cycles, sink);
        CK(cudaDeviceSynchronize());
        const double hop_ns = cycles[0] * ns_per_cycle / kRounds / 2;
        printf("%9.1f (%4.2f)", hop_ns, hop_ns / flag_ns);
        CK(cudaFree(r0));
        CK(cudaFree(r1));
      }
      printf("\n");
    }
  }
  return 0;
}
