// mailbox_pingpong.cu: one LL record ping-ponged between two blocks on
// different SMs, against a raw fenced flag ping-pong in the same process.
//   * The K2K mailbox protocol (include/ringkernel/device/mailbox.h, the
//     runtime's own functions): each thread 0 owns one mailbox, takes a
//     16-byte message from it and sends one back — no runtime loop, no
//     dispatch; with the runtime's reservation and without it.
//   * The same 12-word record (8 header + 4 payload words) written and read
//     directly, four ways (see RawPingPong), to find which form of access
//     the mailbox path should use.
// Build and run on a GPU machine:
//   nvcc -O2 -arch=sm_90 -I include -o mbpp bench/probes/mailbox_pingpong.cu && ./mbpp
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>

#include "ringkernel/device/mailbox.h"

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("error %s at line %d\n", cudaGetErrorString(e), __LINE__); exit(1); } } while (0)

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

// hint: payload words loaded together with the header (the runtime's "hot").
// mode 0: the runtime's reservation (compare-and-swap); 1: none — the
// sender owns the positions (single producer), to price the reservation.
__global__ void Mailboxes(MailboxHeader* box0, MailboxHeader* box1, u32 slot_bytes, u32 inline_words, u32 hint,
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
    while (!MailboxTryTake(slot, inline_words, LlFlag(head, kLog2), hint, &r, buf)) {
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

// ---- The same 12-word record written and read without mailbox.h, four ways:
//   0  one thread, 16-byte relaxed.gpu stores and loads into registers (no
//      arrays), all six loads issued before any check;
//   1  the same with volatile 16-byte stores and loads;
//   2  one warp, lane L < 6 stores and loads words 2L and 2L+1 (16 bytes),
//      __all_sync to agree the record is complete;
//   3  one thread, 8-byte relaxed.gpu accesses (12 stores, 12 loads).
// These tell what makes the mailbox path slower than the LL reference.
constexpr int kSlots = 64;     // ring of slots per direction
constexpr int kWords = 16;     // words per slot (12 used)

__device__ __forceinline__ u64 Word(u32 data, u32 flag) { return (u64(flag) << 32) | data; }

__device__ __forceinline__ void St2(u64* p, u64 a, u64 b, int mode) {
  if (mode == 1) {
    asm volatile("st.volatile.v2.u64 [%0], {%1, %2};" ::"l"(p), "l"(a), "l"(b) : "memory");
  } else {
    asm volatile("st.relaxed.gpu.v2.u64 [%0], {%1, %2};" ::"l"(p), "l"(a), "l"(b) : "memory");
  }
}
__device__ __forceinline__ void Ld2(const u64* p, u64& a, u64& b, int mode) {
  if (mode == 1) {
    asm volatile("ld.volatile.v2.u64 {%0, %1}, [%2];" : "=l"(a), "=l"(b) : "l"(p) : "memory");
  } else {
    asm volatile("ld.relaxed.gpu.v2.u64 {%0, %1}, [%2];" : "=l"(a), "=l"(b) : "l"(p) : "memory");
  }
}
__device__ __forceinline__ void St1(u64* p, u64 a) { asm volatile("st.relaxed.gpu.u64 [%0], %1;" ::"l"(p), "l"(a) : "memory"); }
__device__ __forceinline__ u64 Ld1(const u64* p) {
  u64 v;
  asm volatile("ld.relaxed.gpu.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}

// Sends value `v` at position `pos` into `ring`.
__device__ void Send(u64* ring, int pos, u32 v, int mode) {
  u64* s = ring + (pos % kSlots) * kWords;
  const u32 flag = 0x80000000u | u32(pos / kSlots + 1);
  const int lane = threadIdx.x;
  if (mode == 2) {
    if (lane < 6) St2(s + 2 * lane, Word(v + 2 * lane, flag), Word(v + 2 * lane + 1, flag), 0);
    return;
  }
  if (mode == 3) {
    for (int w = 0; w < 12; ++w) St1(s + w, Word(v + w, flag));
    return;
  }
  for (int w = 0; w < 12; w += 2) St2(s + w, Word(v + w, flag), Word(v + w + 1, flag), mode);
}

// Waits for position `pos` in `ring`; returns its word 0.
__device__ u32 Take(const u64* ring, int pos, int mode) {
  const u64* s = ring + (pos % kSlots) * kWords;
  const u32 flag = 0x80000000u | u32(pos / kSlots + 1);
  const int lane = threadIdx.x;
  if (mode == 2) {
    for (;;) {
      u64 a = 0, b = 0;
      if (lane < 6) Ld2(s + 2 * lane, a, b, 0);
      const bool ok = lane >= 6 || (u32(a >> 32) == flag && u32(b >> 32) == flag);
      const u32 first = __shfl_sync(0xFFFFFFFFu, u32(a), 0);
      if (__all_sync(0xFFFFFFFFu, ok)) return first;
    }
  }
  if (mode == 3) {
    for (;;) {
      u64 w0 = Ld1(s), w1 = Ld1(s + 1), w2 = Ld1(s + 2), w3 = Ld1(s + 3), w4 = Ld1(s + 4), w5 = Ld1(s + 5);
      u64 w6 = Ld1(s + 6), w7 = Ld1(s + 7), w8 = Ld1(s + 8), w9 = Ld1(s + 9), w10 = Ld1(s + 10), w11 = Ld1(s + 11);
      const u64 all = (w0 >> 32) & (w1 >> 32) & (w2 >> 32) & (w3 >> 32) & (w4 >> 32) & (w5 >> 32) & (w6 >> 32) &
                      (w7 >> 32) & (w8 >> 32) & (w9 >> 32) & (w10 >> 32) & (w11 >> 32);
      const u64 any = (w0 >> 32) | (w1 >> 32) | (w2 >> 32) | (w3 >> 32) | (w4 >> 32) | (w5 >> 32) | (w6 >> 32) |
                      (w7 >> 32) | (w8 >> 32) | (w9 >> 32) | (w10 >> 32) | (w11 >> 32);
      if (all == flag && any == flag) return u32(w0);
    }
  }
  for (;;) {
    u64 a0, b0, a1, b1, a2, b2, a3, b3, a4, b4, a5, b5;
    Ld2(s, a0, b0, mode);
    Ld2(s + 2, a1, b1, mode);
    Ld2(s + 4, a2, b2, mode);
    Ld2(s + 6, a3, b3, mode);
    Ld2(s + 8, a4, b4, mode);
    Ld2(s + 10, a5, b5, mode);
    const u64 all = (a0 >> 32) & (b0 >> 32) & (a1 >> 32) & (b1 >> 32) & (a2 >> 32) & (b2 >> 32) & (a3 >> 32) &
                    (b3 >> 32) & (a4 >> 32) & (b4 >> 32) & (a5 >> 32) & (b5 >> 32);
    const u64 any = (a0 >> 32) | (b0 >> 32) | (a1 >> 32) | (b1 >> 32) | (a2 >> 32) | (b2 >> 32) | (a3 >> 32) |
                    (b3 >> 32) | (a4 >> 32) | (b4 >> 32) | (a5 >> 32) | (b5 >> 32);
    if (all == flag && any == flag) return u32(a0);
  }
}

__global__ void RawPingPong(u64* ring0, u64* ring1, int mode, long long* cycles, u32* sink) {
  if (mode != 2 && threadIdx.x != 0) return;
  u64* out = blockIdx.x == 0 ? ring1 : ring0;
  const u64* in = blockIdx.x == 0 ? ring0 : ring1;
  u32 acc = 0;
  const long long t0 = clock64();
  for (int i = 0; i < kRounds; ++i) {
    if (blockIdx.x == 0) {
      Send(out, i, i, mode);
      acc += Take(in, i, mode);
    } else {
      acc += Take(in, i, mode);
      Send(out, i, acc, mode);
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
  for (u32 hint : {0u, 8u}) {
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
    Mailboxes<<<2, 32>>>(boxes[0], boxes[1], shape.slot_bytes, shape.inline_words, hint, mode, cycles);
    CK(cudaDeviceSynchronize());
    // kRounds + 1 messages in all, one hop each.
    const double hop_ns = cycles[0] * ns_per_cycle / (kRounds + 1);
    printf("mailbox 16 B, %s, hint %u words, one hop %7.1f ns (%.2f x the flag)\n",
           mode == 0 ? "reserved" : "single producer", hint, hop_ns, hop_ns / flag_ns);
    for (auto* box : boxes) CK(cudaFree(box));
  }
  const char* names[] = {"raw: one thread, relaxed.gpu v2, registers", "raw: one thread, volatile v2, registers",
                         "raw: one warp, a 16-byte pair per lane", "raw: one thread, 8-byte relaxed.gpu"};
  const size_t ring_bytes = size_t{kSlots} * kWords * 8;
  u32* sink;
  CK(cudaMalloc(&sink, 64));
  for (int mode = 0; mode < 4; ++mode) {
    u64 *r0, *r1;
    CK(cudaMalloc(&r0, ring_bytes));
    CK(cudaMalloc(&r1, ring_bytes));
    CK(cudaMemset(r0, 0, ring_bytes));
    CK(cudaMemset(r1, 0, ring_bytes));
    RawPingPong<<<2, 32>>>(r0, r1, mode, cycles, sink);
    CK(cudaDeviceSynchronize());
    const double hop_ns = cycles[0] * ns_per_cycle / kRounds / 2;
    printf("%-46s one hop %7.1f ns (%.2f x the flag)\n", names[mode], hop_ns, hop_ns / flag_ns);
    CK(cudaFree(r0));
    CK(cudaFree(r1));
  }
  return 0;
}
