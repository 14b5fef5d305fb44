// mailbox_pingpong.cu: the K2K mailbox protocol (include/ringkernel/device/
// mailbox.h, the runtime's own functions) alone, between two blocks on
// different SMs: each thread 0 owns one mailbox, takes a 16-byte message
// from it and sends one back to the other — no runtime loop, no dispatch.
// Compared in the same process with a raw fenced flag ping-pong. Build and
// run on a GPU machine:
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
  return 0;
}
