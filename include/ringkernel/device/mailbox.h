// Copyright 2026 The RingKernel Authors.
//
// mailbox.h: an actor's mailbox in device memory — bounded, multi-producer,
// single-consumer, FIFO per producer.
//
// Layout: a `MailboxHeader` (three 128-byte lines) followed by `capacity`
// slots of `slot_bytes` each; a slot is an `Envelope` and the payload.
//
// Protocol (positions are 64-bit and wrap modulo 2^64; the slot of position
// p is p mod capacity):
//   * Producers reserve positions with a compare-and-swap on `tail`, taking
//     only as many as `capacity - (tail - head)` allows. A full mailbox is
//     reported (`MailboxTryReserve` returns 0), never waited on.
//   * A producer writes its envelope and payload, then publishes the slot
//     with a release store of `seq = p + 1`.
//   * The owner (the one worker that runs the actor) consumes position p once
//     it reads `seq == p + 1` with acquire; after handling a batch it
//     releases the slots with a release store of `head`.
// A slot is reused only after `head` passed it, so a producer never writes a
// slot the owner is still reading; a stale `seq` from an earlier lap never
// equals `p + 1`, so nothing is read twice.
//
// Example (one producer, on any thread):
//   u64 pos;
//   if (rk::MailboxTryReserve(box, 1, &pos) == 1) {
//     rk::Envelope* e = rk::MailboxSlot(box, pos);
//     ...fill e and rk::EnvelopePayload(e)...;
//     rk::MailboxPublish(e, pos);
//   }
#ifndef RINGKERNEL_DEVICE_MAILBOX_H_
#define RINGKERNEL_DEVICE_MAILBOX_H_

#include "ringkernel/device/atomics.h"
#include "ringkernel/device/config.h"

namespace rk {

// The fixed part of every mailbox slot; the payload starts right after it.
struct alignas(16) Envelope {
  u64 seq;          // p + 1 once position p is published
  u32 type;         // message type id (1..N)
  u32 size;         // payload bytes
  u32 sender;       // ActorId value of the sender (kHostActorValue for the host)
  u32 flags;        // reserved, 0
  u64 correlation;  // the host's Ask correlation id, 0 if none; carried by replies
  u64 hlc;          // the sender's HLC timestamp of the send
  u64 reserved;
};
inline constexpr u32 kEnvelopeBytes = 48;
static_assert(sizeof(Envelope) == kEnvelopeBytes, "Envelope layout is an ABI");
static_assert(alignof(Envelope) == 16, "payloads are 16-byte aligned");
RK_ASSERT_OFFSET(Envelope, seq, 0);
RK_ASSERT_OFFSET(Envelope, type, 8);
RK_ASSERT_OFFSET(Envelope, size, 12);
RK_ASSERT_OFFSET(Envelope, sender, 16);
RK_ASSERT_OFFSET(Envelope, correlation, 24);
RK_ASSERT_OFFSET(Envelope, hlc, 32);

// The largest alignment a message type may require (its payload starts at a
// 16-byte boundary of the slot).
inline constexpr u32 kMaxMessageAlignment = 16;

struct alignas(kLineBytes) MailboxHeader {
  PaddedIndex tail;  // next position to reserve; producers CAS it
  PaddedIndex head;  // next position to consume; written by the owner only
  u32 capacity_log2;
  u32 slot_bytes;
  u8 pad[kLineBytes - 2 * sizeof(u32)];
};
static_assert(sizeof(MailboxHeader) == 3 * kLineBytes, "MailboxHeader is three lines");
RK_ASSERT_OFFSET(MailboxHeader, tail, 0);
RK_ASSERT_OFFSET(MailboxHeader, head, kLineBytes);
RK_ASSERT_OFFSET(MailboxHeader, capacity_log2, 2 * kLineBytes);

// Slot size for messages of up to `max_payload` bytes.
RK_HOST_DEVICE constexpr u32 MailboxSlotBytes(u32 max_payload) {
  return static_cast<u32>(AlignUp(kEnvelopeBytes + max_payload, 16));
}

// Bytes of a mailbox with 2^capacity_log2 slots of `slot_bytes`.
RK_HOST_DEVICE constexpr u64 MailboxBytes(u32 capacity_log2, u32 slot_bytes) {
  return sizeof(MailboxHeader) + (u64{1} << capacity_log2) * slot_bytes;
}

RK_HOST_DEVICE RK_FORCEINLINE u64 MailboxCapacity(const MailboxHeader* box) {
  return u64{1} << box->capacity_log2;
}

// The slot of `pos`, for a mailbox whose geometry the caller already has
// (in registers: re-reading the header costs a trip to memory).
RK_HOST_DEVICE RK_FORCEINLINE Envelope* MailboxSlotAt(MailboxHeader* box, u32 capacity_log2, u32 slot_bytes, u64 pos) {
  u8* slots = reinterpret_cast<u8*>(box) + sizeof(MailboxHeader);
  const u64 index = pos & ((u64{1} << capacity_log2) - 1);
  return reinterpret_cast<Envelope*>(slots + index * slot_bytes);
}

RK_HOST_DEVICE RK_FORCEINLINE Envelope* MailboxSlot(MailboxHeader* box, u64 pos) {
  return MailboxSlotAt(box, box->capacity_log2, box->slot_bytes, pos);
}

RK_HOST_DEVICE RK_FORCEINLINE u8* EnvelopePayload(Envelope* e) {
  return reinterpret_cast<u8*>(e) + kEnvelopeBytes;
}
RK_HOST_DEVICE RK_FORCEINLINE const u8* EnvelopePayload(const Envelope* e) {
  return reinterpret_cast<const u8*>(e) + kEnvelopeBytes;
}

// Largest payload a slot of this mailbox holds.
RK_HOST_DEVICE RK_FORCEINLINE u32 MailboxMaxPayload(const MailboxHeader* box) {
  return box->slot_bytes - kEnvelopeBytes;
}

// Prepares a mailbox whose first position is `start` (0 in production; the
// tests start near 2^64 to prove that positions wrap). Not concurrent with
// any producer or consumer. Every slot's `seq` is set to the value of the
// previous lap, which never matches the position that will use it next.
RK_HOST_DEVICE inline void MailboxInit(MailboxHeader* box, u32 capacity_log2, u32 slot_bytes, u64 start) {
  box->capacity_log2 = capacity_log2;
  box->slot_bytes = slot_bytes;
  const u64 capacity = u64{1} << capacity_log2;
  for (u64 i = 0; i < capacity; ++i) {
    const u64 pos = start + i;
    StoreRelaxedGpu(&MailboxSlot(box, pos)->seq, pos + 1 - capacity);
  }
  StoreRelaxedGpu(&box->head.value, start);
  StoreReleaseGpu(&box->tail.value, start);
}

// Reserves up to `n` consecutive positions. Returns how many were reserved
// (0 when the mailbox is full) and stores the first in `*first`. The caller
// must publish every position it reserved.
RK_HOST_DEVICE inline u32 MailboxTryReserveN(MailboxHeader* box, u64 capacity, u32 n, u64* first);
RK_HOST_DEVICE inline u32 MailboxTryReserveFrom(MailboxHeader* box, u64 capacity, u32 n, u64 tail, u64 head,
                                                u64* first);

RK_HOST_DEVICE inline u32 MailboxTryReserve(MailboxHeader* box, u32 n, u64* first) {
  return MailboxTryReserveN(box, MailboxCapacity(box), n, first);
}

// As MailboxTryReserveN, from a `tail` and a `head` the caller has already
// loaded (tail relaxed, head with acquire): a sender that knows the mailbox
// issues those loads together with its other reads, saving a trip to memory.
// Any values are safe: a stale head only makes the mailbox look fuller, and a
// tail older than head is re-read.
RK_HOST_DEVICE inline u32 MailboxTryReserveFrom(MailboxHeader* box, u64 capacity, u32 n, u64 tail, u64 head,
                                                u64* first) {
  for (;;) {
    const u64 used = tail - head;
    if (static_cast<i64>(used) < 0) {  // our `tail` is older than `head`
      tail = LoadRelaxedGpu(&box->tail.value);
      head = LoadAcquireGpu(&box->head.value);
      continue;
    }
    // A head older than the tail only overstates `used`: full here means
    // full, or nearly so, when `head` was read.
    if (used >= capacity) return 0;
    const u64 free_slots = capacity - used;
    const u32 take = free_slots < n ? static_cast<u32>(free_slots) : n;
    const u64 seen = CompareExchangeGpu(&box->tail.value, tail, tail + take);
    if (seen == tail) {
      *first = tail;
      return take;
    }
    tail = seen;
    // Acquire pairs with the owner's release of `head`: its reads of the
    // slots we may now take are finished before our writes begin.
    head = LoadAcquireGpu(&box->head.value);
  }
}

// As MailboxTryReserve, for a mailbox of `capacity` slots.
RK_HOST_DEVICE inline u32 MailboxTryReserveN(MailboxHeader* box, u64 capacity, u32 n, u64* first) {
  const u64 tail = LoadRelaxedGpu(&box->tail.value);
  const u64 head = LoadAcquireGpu(&box->head.value);
  return MailboxTryReserveFrom(box, capacity, n, tail, head, first);
}

// Publishes position `pos` after its envelope and payload were written.
RK_HOST_DEVICE RK_FORCEINLINE void MailboxPublish(Envelope* e, u64 pos) { StoreReleaseGpu(&e->seq, pos + 1); }

// The envelope at `pos` if it is published, else null. Owner only.
RK_HOST_DEVICE RK_FORCEINLINE Envelope* MailboxPeekAt(MailboxHeader* box, u32 capacity_log2, u32 slot_bytes,
                                                     u64 pos) {
  Envelope* e = MailboxSlotAt(box, capacity_log2, slot_bytes, pos);
  return LoadAcquireGpu(&e->seq) == pos + 1 ? e : nullptr;
}

RK_HOST_DEVICE RK_FORCEINLINE Envelope* MailboxPeek(MailboxHeader* box, u64 pos) {
  return MailboxPeekAt(box, box->capacity_log2, box->slot_bytes, pos);
}

// Gives every slot before `new_head` back to the producers. Owner only.
RK_HOST_DEVICE RK_FORCEINLINE void MailboxRelease(MailboxHeader* box, u64 new_head) {
  StoreReleaseGpu(&box->head.value, new_head);
}

// Messages reserved but not yet consumed (some may not be published yet).
RK_HOST_DEVICE RK_FORCEINLINE u64 MailboxDepth(const MailboxHeader* box) {
  const u64 head = LoadAcquireGpu(&box->head.value);
  const u64 tail = LoadAcquireGpu(&box->tail.value);
  return tail - head;
}

}  // namespace rk

#endif  // RINGKERNEL_DEVICE_MAILBOX_H_
