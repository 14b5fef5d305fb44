// Copyright 2026 The RingKernel Authors.
//
// trace.h: the device timeline's rings, shared by the GPU (which writes
// them, rt_trace.cuh) and the host (which drains them, runtime/system.cc).
//
// A program built with RK_TRACE defined (`actorc build --trace`, or
// CompileOptions::trace) records events while the host has tracing on
// (System::StartTrace): each worker into its own ring in mapped host
// memory, and the monitor warp into one more. Built without it, nothing of
// this is compiled into the kernel.
//
// A ring holds 2^log2 records of 32 bytes. A worker's threads reserve
// records with a compare-and-swap on a counter in their block's shared
// memory (no trip to memory), against their cached copy of the host's
// `consumed`, re-read across the bus only when the ring looks full; an
// event that finds it full is dropped and counted in `dropped`. A record is
// two 16-byte stores, each carrying the record's sequence tag (its index +
// 1): the host takes a record once both tags show the index it expects, so
// no fence orders the stores (as in the LL rings, ll_ring.h).
#ifndef RINGKERNEL_DEVICE_TRACE_H_
#define RINGKERNEL_DEVICE_TRACE_H_

#include "ringkernel/device/config.h"

namespace rk {

// What a record says (TraceRecord::kind_type & 0xFF). The values are those
// of rk::internal::TraceEventKind on the host.
enum class TraceKind : u32 {
  kHandlerBegin = 1,  // peer: the sender; aux: the message's flow (see kTraceFlowAsk)
  kHandlerEnd = 2,
  kSend = 3,          // a send that returned kOk; peer: the receiver; aux: its mailbox position (low 32 bits)
  kDeadLetter = 4,    // peer: DeadLetterReason; aux: the sender
  kFault = 5,         // peer: the failure code
  kQueueDepth = 6,    // peer: the mailbox's depth (the monitor's samples)
  kRetry = 7,         // the handler asked for the message again (ctx.retry_later)
};
// kind_type bit: a kHandlerBegin's aux is the host Ask's correlation (low 32
// bits) rather than a mailbox position; a kSend's receiver is the host.
inline constexpr u32 kTraceFlowAsk = 0x100;
// kind_type bit: a kHandlerBegin of a message taken from the mailbox (its
// flow is its mailbox position); without it and without kTraceFlowAsk the
// message has no flow (a host Send).
inline constexpr u32 kTraceFlowMailbox = 0x200;
inline constexpr u32 kTraceTypeShift = 16;  // the message type id: kind_type >> 16

struct alignas(16) TraceRecord {
  u64 time_ns;    // %globaltimer
  u32 tag0;       // index + 1 (low 32 bits)
  u32 kind_type;  // TraceKind | flow bits | message type << kTraceTypeShift
  u32 actor;      // the actor whose handler runs, or that sends
  u32 peer;
  u32 aux;
  u32 tag1;       // index + 1 again: the second 16-byte store
};
static_assert(sizeof(TraceRecord) == 32, "a trace record is two 16-byte stores");

struct alignas(kLineBytes) TraceRingHeader {
  u64 consumed;  // records the host has taken (the host writes)
  u8 pad0[kLineBytes - 8];
  u64 dropped;   // events that found the ring full (the GPU writes)
  u64 on_seen;   // the ring's writers have seen tracing switched on (1) or off (0) (the GPU writes)
  u8 pad1[kLineBytes - 16];
};
static_assert(sizeof(TraceRingHeader) == 2 * kLineBytes, "TraceRingHeader is two lines");

RK_HOST_DEVICE constexpr u64 TraceRingBytes(u32 log2) {
  return sizeof(TraceRingHeader) + (u64{1} << log2) * sizeof(TraceRecord);
}
RK_HOST_DEVICE RK_FORCEINLINE TraceRingHeader* TraceRingAt(u8* base, u32 log2, u32 ring) {
  return reinterpret_cast<TraceRingHeader*>(base + TraceRingBytes(log2) * ring);
}
RK_HOST_DEVICE RK_FORCEINLINE TraceRecord* TraceRecords(TraceRingHeader* h) {
  return reinterpret_cast<TraceRecord*>(reinterpret_cast<u8*>(h) + sizeof(TraceRingHeader));
}

}  // namespace rk

#endif  // RINGKERNEL_DEVICE_TRACE_H_
