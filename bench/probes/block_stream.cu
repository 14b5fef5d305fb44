// block_stream.cu: how fast one worker block can take a stream of messages
// when every thread of it reads each payload (a block handler's receive),
// with nothing of the runtime around it. The question it answers: whether
// the 4 KiB one-pair target (5 GB/s: some 1,650 cycles a message at the
// receiver) is within reach of a block-handler receiver at all, and what
// each piece of RingKernel's block run (rt_block.cuh) costs against it.
//
// Two blocks on two SMs (each asks for more than half an SM's shared
// memory). The sender block writes each message's payload with all its
// threads (32 bytes each for 4 KiB), meets at a barrier, and its thread 0
// fences and stores the slot's sequence word; it waits for room when the
// ring of kSlots slots is full (the receiver gives room back a quarter of
// the ring at a time). The receiver block takes message after message:
//   kRound: as a block run does: its thread 0 polls the slot's word, the
//       block meets, every thread reads its share of the payload after an
//       acquire fence and folds it, the warps' folds meet in shared memory,
//       thread 0 adds them and counts into state in device memory (as an
//       actor's fields), and the block meets again before the next round;
//   kEarly: the same, thread 0 loading the next slot's word with its own
//       share of the payload, so a backlog costs no separate poll;
//   kRegisters: kEarly with thread 0's counters in registers instead of
//       device memory (what a handler whose state is cached would pay).
// The receiver checks every payload word (a wrong one is counted and
// printed). Each configuration: 200,000 messages of 4 KiB and of 64 bytes,
// three times.
//
// Measured on an H200 (bench/NOTES.md, session 25; the three repetitions
// agreed to 11 cycles): 4 KiB 2,084 cycles a message (3.9 × 10⁹ B/s) as a
// block run, 1,778 (4.6 × 10⁹) with the early look, 1,459 (5.6 × 10⁹) with
// the counters in registers; 64 bytes 1,724, 1,409 and 1,082. So a block
// receiver can pass the 4 KiB target; RingKernel's block run took some
// 6,400 cycles a message the same session.
//
// Build and run on a GPU machine:
//   nvcc -O2 -arch=sm_90 -I include -o block_stream bench/probes/block_stream.cu && ./block_stream
#include "probe_common.h"
#include "ringkernel/device/atomics.h"

using rk::FenceAcquireGpu;
using rk::LoadRelaxedGpu;
using rk::StoreRelaxedGpu;
using rk::StoreReleaseGpu;
using rk::u64;

constexpr int kThreads = 128;
constexpr int kSlots = 32;
constexpr int kMaxPayload = 4096;
constexpr int kMessages = 200000;

struct alignas(128) Slot {
  u64 seq;  // position + 1 once the payload is written
  u64 pad[15];
  uint4 payload[kMaxPayload / 16];
};

struct Ring {
  Slot slots[kSlots];
  alignas(128) u64 head;  // messages the receiver gave back
};

struct State {  // the receiver's "actor" (device memory)
  u64 received;
  u64 words;
  u64 bad;
};

enum Variant { kRound = 0, kEarly = 1, kRegisters = 2 };

__device__ __forceinline__ uint4 Expected(u64 pos, int i) {
  const unsigned a = static_cast<unsigned>(pos) * 2654435761u + static_cast<unsigned>(i);
  return make_uint4(a, a ^ 0x5555u, a + 7u, ~a);
}

__device__ void Send(Ring* ring, int pieces, int count) {
  __shared__ u64 s_head;
  const int tid = threadIdx.x;
  u64 head = 0;
  for (u64 pos = 0; pos < static_cast<u64>(count); ++pos) {
    if (tid == 0) {
      while (pos - head >= kSlots) head = LoadRelaxedGpu(&ring->head);
      s_head = head;
    }
    __syncthreads();
    head = s_head;
    Slot& s = ring->slots[pos % kSlots];
    for (int i = tid; i < pieces; i += kThreads) s.payload[i] = Expected(pos, i);
    __syncthreads();
    if (tid == 0) {
      __threadfence();
      StoreRelaxedGpu(&s.seq, pos + 1);
    }
  }
}

template <Variant kV>
__device__ void Receive(Ring* ring, State* st, int pieces, int count) {
  __shared__ u64 s_part[kThreads / 32];
  const int tid = threadIdx.x;
  u64 next_seen = 0;  // thread 0's: the next slot's word as its early look found it
  u64 received = 0, words = 0;  // kRegisters: thread 0's counters
  for (u64 pos = 0; pos < static_cast<u64>(count); ++pos) {
    Slot& s = ring->slots[pos % kSlots];
    if (tid == 0 && next_seen != pos + 1) {
      while (LoadRelaxedGpu(&s.seq) != pos + 1) {
      }
    }
    __syncthreads();
    FenceAcquireGpu();
    u64 early = 0;
    if (kV != kRound && tid == 0) early = LoadRelaxedGpu(&ring->slots[(pos + 1) % kSlots].seq);
    u64 x = 0, bad = 0;
    for (int i = tid; i < pieces; i += kThreads) {
      const uint4 q = s.payload[i];
      const uint4 e = Expected(pos, i);
      bad += (q.x != e.x) | (q.y != e.y) | (q.z != e.z) | (q.w != e.w);
      x ^= (static_cast<u64>(q.y) << 32 | q.x) ^ (static_cast<u64>(q.w) << 32 | q.z);
    }
    for (int d = 16; d > 0; d /= 2) {
      x ^= __shfl_xor_sync(0xFFFFFFFFu, x, d);
      bad += __shfl_xor_sync(0xFFFFFFFFu, bad, d);
    }
    if ((tid & 31) == 0) s_part[tid / 32] = x;
    if (bad != 0 && (tid & 31) == 0) atomicAdd(&st->bad, bad);
    __syncthreads();
    if (tid == 0) {
      u64 all = 0;
      for (int k = 0; k < kThreads / 32; ++k) all ^= s_part[k];
      if (kV == kRegisters) {
        ++received;
        words ^= all;
      } else {
        st->received = st->received + 1;
        st->words = st->words ^ all;
      }
      if ((pos + 1) % (kSlots / 4) == 0) StoreReleaseGpu(&ring->head, pos + 1);
      next_seen = early;
    }
    __syncthreads();
  }
  if (kV == kRegisters && tid == 0) {
    st->received = received;
    st->words = words;
  }
}

__device__ __forceinline__ u64 GlobalNs() {
  u64 t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// times[0]: the receiver's cycles, times[1]: its nanoseconds.
__global__ void StreamKernel(Ring* ring, State* st, int variant, int pieces, int count, long long* times) {
  const long long t0 = clock64();
  const u64 n0 = GlobalNs();
  if (blockIdx.x == 0) {
    Send(ring, pieces, count);
  } else if (variant == kRound) {
    Receive<kRound>(ring, st, pieces, count);
  } else if (variant == kEarly) {
    Receive<kEarly>(ring, st, pieces, count);
  } else {
    Receive<kRegisters>(ring, st, pieces, count);
  }
  if (blockIdx.x == 1 && threadIdx.x == 0) {
    times[0] = clock64() - t0;
    times[1] = static_cast<long long>(GlobalNs() - n0);
  }
}

int main() {
  const ProbeDevice dev = OpenProbeDevice();
  Ring* ring;
  State* st;
  long long* times;
  CK(cudaMalloc(&ring, sizeof(Ring)));
  CK(cudaMalloc(&st, sizeof(State)));
  CK(cudaMallocManaged(&times, 2 * sizeof(long long)));
  CK(cudaFuncSetAttribute(StreamKernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                          static_cast<int>(dev.smem_alone)));
  const char* names[] = {"round (as a block run)", "early look", "early look, counters in registers"};
  for (int bytes : {4096, 64}) {
    for (int rep = 0; rep < 3; ++rep) {
      for (int v = kRound; v <= kRegisters; ++v) {
        CK(cudaMemset(ring, 0, sizeof(Ring)));
        CK(cudaMemset(st, 0, sizeof(State)));
        int pieces = bytes / 16, count = kMessages;
        void* args[] = {&ring, &st, &v, &pieces, &count, &times};
        CK(cudaLaunchCooperativeKernel(reinterpret_cast<void*>(StreamKernel), dim3(2), dim3(kThreads), args,
                                       dev.smem_alone, nullptr));
        CK(cudaDeviceSynchronize());
        State h;
        CK(cudaMemcpy(&h, st, sizeof(State), cudaMemcpyDeviceToHost));
        const double per = static_cast<double>(times[0]) / count;
        const double msgs = count / (static_cast<double>(times[1]) * 1e-9);
        printf("%5d B  %-36s %8.0f cycles a message  %.3g msg/s  %.3g B/s  received %llu bad %llu\n", bytes,
               names[v], per, msgs, msgs * bytes, h.received, h.bad);
      }
    }
  }
  return 0;
}
