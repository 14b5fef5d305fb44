// Copyright 2026 The RingKernel Authors.
//
// rt_trace.cuh: recording the device timeline (trace.h) in a program built
// with RK_TRACE. Part of the device runtime (runtime.cuh). Without RK_TRACE
// every RK_TRACE_* macro is empty and nothing here is compiled.
//
// Each block keeps a TraceCursor in shared memory for its ring: the
// reservation counter, a cached copy of the host's `consumed`, the drops,
// and whether tracing is on (copied from DeviceShared::trace_on by the
// block's loop every few iterations). An event site tests `on` (shared
// memory) and, when set, records the event: a compare-and-swap in shared
// memory and two posted 16-byte stores to mapped memory per record. A
// handler's own records — its begin, its first send to an actor (staged in
// shared memory meanwhile) and its end — go after it returns, inline, with
// one reservation, so that nothing but a clock read and two shared stores
// sits on the path of a message. Built with RK_TRACE, every handler that ends is
// also counted in its actor's handler-time histogram (handler_times.h).
#ifndef RINGKERNEL_DEVICE_RT_TRACE_CUH_
#define RINGKERNEL_DEVICE_RT_TRACE_CUH_

#include "ringkernel/device/rt_base.cuh"
#include "ringkernel/device/handler_times.h"
#include "ringkernel/device/trace.h"

namespace rk {
namespace detail {

__device__ __forceinline__ constexpr u32 TraceKindType(TraceKind k, u32 type, u32 flags = 0) {
  return static_cast<u32>(k) | flags | type << kTraceTypeShift;
}

struct TraceCursor {
  unsigned long long reserved;  // records reserved (this block's threads)
  unsigned long long consumed;  // the host's `consumed`, as last read
  unsigned long long dropped;   // events that found the ring full
  u32 on;                       // tracing is on
  u32 ring;                     // this block's ring
};

#ifdef RK_TRACE
}  // namespace detail
}  // namespace rk
// Its presence in the module tells the host that the program records a
// timeline (System::StartTrace looks it up).
extern "C" __device__ unsigned int rk_trace_build;
__device__ unsigned int rk_trace_build = 1;
namespace rk {
namespace detail {

__device__ __forceinline__ void StoreTraceHalf(void* p, u64 a, u32 b, u32 c) {
  asm volatile("st.relaxed.sys.v2.u64 [%0], {%1, %2};" ::"l"(p), "l"(a),
               "l"(static_cast<u64>(b) | static_cast<u64>(c) << 32)
               : "memory");
}

// Reserves `n` consecutive records of the block's ring with one
// compare-and-swap in shared memory; false (the events counted as dropped)
// when the ring is full by the host's latest `consumed`.
__device__ __forceinline__ bool TraceReserve(const SystemParams* sys, TraceCursor* c, TraceRingHeader* hdr, u32 n,
                                             u64* first) {
  const u64 cap = u64{1} << sys->trace_log2;
  u64 i = *static_cast<volatile unsigned long long*>(&c->reserved);
  for (;;) {
    u64 consumed = *static_cast<volatile unsigned long long*>(&c->consumed);
    if (i + n - consumed > cap) {
      // Full by the cached copy: ask the host (a read across the bus).
      const u64 fresh = LoadRelaxedSys(&hdr->consumed);
      atomicMax(&c->consumed, fresh);
      consumed = fresh > consumed ? fresh : consumed;
      if (i + n - consumed > cap) {
        atomicAdd(&c->dropped, static_cast<unsigned long long>(n));
        return false;
      }
    }
    const u64 seen = atomicCAS(&c->reserved, i, i + n);
    if (seen == i) break;
    i = seen;
  }
  *first = i;
  return true;
}

__device__ __forceinline__ void TraceStore(TraceRingHeader* hdr, u32 log2, u64 i, u64 time, u32 kind_type, u32 actor,
                                           u32 peer, u32 aux) {
  TraceRecord* r = TraceRecords(hdr) + (i & ((u64{1} << log2) - 1));
  const u32 tag = static_cast<u32>(i + 1);
  StoreTraceHalf(r, time, tag, kind_type);
  StoreTraceHalf(reinterpret_cast<u8*>(r) + 16, static_cast<u64>(actor) | static_cast<u64>(peer) << 32, aux, tag);
}

__device__ __noinline__ void TraceEmit(const SystemParams* sys, TraceCursor* c, u32 kind_type, u32 actor, u32 peer,
                                       u32 aux) {
  const u64 now = GlobalTimerNs();
  TraceRingHeader* hdr = TraceRingAt(sys->trace, sys->trace_log2, c->ring);
  u64 i;
  if (TraceReserve(sys, c, hdr, 1, &i)) TraceStore(hdr, sys->trace_log2, i, now, kind_type, actor, peer, aux);
}

__device__ __forceinline__ bool TraceOn(TraceCursor* c) { return *static_cast<volatile u32*>(&c->on) != 0; }

// A handler's first send to an actor, staged in shared memory (one entry
// per thread of the block) and written with the handler's own records after
// it returns: a send costs the handler two shared-memory stores instead of a
// call and a reservation. Only the send's message type marks an entry in
// use; later sends of the same invocation are recorded at once.
constexpr u32 kTraceStageMaxThreads = 1024;
constexpr unsigned short kTraceStageEmpty = 0xFFFF;
struct TraceStagedSend {
  unsigned long long time_ns;
  unsigned long long to_pos;  // the receiver | its mailbox position (low 32 bits) << 32
};
__shared__ TraceStagedSend rk_trace_stage[kTraceStageMaxThreads];
__shared__ unsigned short rk_trace_stage_type[kTraceStageMaxThreads];

__device__ __forceinline__ bool TraceStaged() { return rk_trace_stage_type[threadIdx.x] != kTraceStageEmpty; }

__device__ __forceinline__ void TraceStageInit() {
  for (u32 t = threadIdx.x; t < kTraceStageMaxThreads; t += blockDim.x) rk_trace_stage_type[t] = kTraceStageEmpty;
}

// A send to actor `to` that returned kOk at mailbox position `pos`.
// `stage`: from a thread handler, whose records the same thread writes when
// it returns (a block handler's send may come from any rank, and only the
// leader writes the handler's end: such a send is recorded at once).
__device__ __forceinline__ void TraceSend(const SystemParams* sys, TraceCursor* c, u32 type, u32 self, u32 to,
                                          u32 pos, bool stage) {
  if (!TraceOn(c)) return;
  if (stage && !TraceStaged() && type < kTraceStageEmpty) {
    rk_trace_stage[threadIdx.x] = TraceStagedSend{GlobalTimerNs(), static_cast<u64>(to) | static_cast<u64>(pos) << 32};
    rk_trace_stage_type[threadIdx.x] = static_cast<unsigned short>(type);
    return;
  }
  TraceEmit(sys, c, TraceKindType(TraceKind::kSend, type), self, to, pos);
}

// A thread handler's records, written together after it returned, with one
// reservation: its begin (stamped `begin_ns` before it ran), the send it
// staged if any, and its end or retry (`end_kind_type`, at `end_ns`, when
// it returned). `begin_ns` 0: tracing came on during the handler, so only a
// staged send is written.
// Inline: as a call, it cost the K2K hop 0.2 µs more with a trace running
// (the caller's registers saved around it; bench/NOTES.md, session 10).
__device__ __forceinline__ void TraceEmitHandler(const SystemParams* sys, TraceCursor* c, u64 begin_ns, u64 end_ns,
                                                 u32 begin_kind_type, u32 end_kind_type, u32 actor, u32 sender,
                                                 u32 flow) {
  const u32 staged = rk_trace_stage_type[threadIdx.x];
  const TraceStagedSend send = rk_trace_stage[threadIdx.x];
  rk_trace_stage_type[threadIdx.x] = kTraceStageEmpty;
  const bool has_send = staged != kTraceStageEmpty;
  const bool has_span = begin_ns != 0;
  const u32 n = (has_span ? 2u : 0u) + (has_send ? 1u : 0u);
  if (n == 0) return;
  TraceRingHeader* hdr = TraceRingAt(sys->trace, sys->trace_log2, c->ring);
  u64 i;
  if (!TraceReserve(sys, c, hdr, n, &i)) return;
  if (has_span) TraceStore(hdr, sys->trace_log2, i++, begin_ns, begin_kind_type, actor, sender, flow);
  if (has_send) {
    TraceStore(hdr, sys->trace_log2, i++, send.time_ns, TraceKindType(TraceKind::kSend, staged), actor,
               static_cast<u32>(send.to_pos), static_cast<u32>(send.to_pos >> 32));
  }
  if (has_span) TraceStore(hdr, sys->trace_log2, i, end_ns, end_kind_type, actor, sender, 0);
}

// Every few iterations, by one thread of the block: picks up the host's
// switch and publishes the drops and that this ring saw the switch.
__device__ __forceinline__ void TraceRefresh(const SystemParams* sys, TraceCursor* c) {
  if (sys->trace == nullptr) return;
  const u32 on = static_cast<u32>(LoadRelaxedGpu(&sys->shared->trace_on.value));
  TraceRingHeader* hdr = TraceRingAt(sys->trace, sys->trace_log2, c->ring);
  // The drops before the switch's acknowledgement: a host that sees tracing
  // off here also sees every drop before it.
  const u64 dropped = atomicAdd(&c->dropped, 0ull);
  if (dropped != 0) StoreRelaxedSys(&hdr->dropped, dropped);
  if (on != c->on) {
    atomicExch(&c->on, on);
    // Records this block's threads already reserved are being written: the
    // host drains once more after it sees this.
    FenceSys();
    StoreRelaxedSys(&hdr->on_seen, on);
  }
}

__device__ __forceinline__ void TraceInit(TraceCursor* c, u32 ring) {
  c->reserved = 0;
  c->consumed = 0;
  c->dropped = 0;
  c->on = 0;
  c->ring = ring;
}

#define RK_TRACE_EVENT(sys, cursor, kind_type, actor, peer, aux)                                    \
  do {                                                                                              \
    if (*static_cast<volatile u32*>(&(cursor)->on) != 0) {                                          \
      ::rk::detail::TraceEmit((sys), (cursor), (kind_type), (actor), (peer), (aux));                \
    }                                                                                               \
  } while (0)
// (A send staged while tracing was on is written even if it went off since.)
#define RK_TRACE_HANDLER(sys, cursor, begin_ns, end_ns, begin_kind_type, end_kind_type, actor, sender, flow)       \
  do {                                                                                                            \
    if (::rk::detail::TraceOn(cursor) || ::rk::detail::TraceStaged()) {                                           \
      ::rk::detail::TraceEmitHandler((sys), (cursor), (begin_ns), (end_ns), (begin_kind_type), (end_kind_type),   \
                                     (actor), (sender), (flow));                                                  \
    }                                                                                                             \
  } while (0)
// A handler invocation that ended after `ns` nanoseconds, counted in its
// actor's handler-time histogram (handler_times.h): an atomic add whose
// result nothing waits for.
#define RK_HANDLER_TIME(sys, actor, ns)                                                                       \
  atomicAdd(&(sys)->handler_times[static_cast<::rk::u64>(actor) * ::rk::kHandlerTimeBuckets +                    \
                                  ::rk::HandlerTimeBucket(ns)],                                                 \
            1u)
#define RK_TRACE_ONLY(...) __VA_ARGS__
#else
#define RK_HANDLER_TIME(sys, actor, ns) \
  do {                                \
  } while (0)
#define RK_TRACE_HANDLER(sys, cursor, begin_ns, end_ns, begin_kind_type, end_kind_type, actor, sender, flow) \
  do {                                                                                                      \
  } while (0)
#define RK_TRACE_EVENT(sys, cursor, kind_type, actor, peer, aux) \
  do {                                                          \
  } while (0)
#define RK_TRACE_ONLY(...)
#endif

#ifdef RK_TRACE
#define RK_TRACE_SEND(sys, cursor, type, self, to, pos, stage) \
  ::rk::detail::TraceSend((sys), (cursor), (type), (self), (to), (pos), (stage))
#else
#define RK_TRACE_SEND(sys, cursor, type, self, to, pos, stage) \
  do {                                                        \
  } while (0)
#endif


}  // namespace detail
}  // namespace rk

#endif  // RINGKERNEL_DEVICE_RT_TRACE_CUH_
