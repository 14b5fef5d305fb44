// Copyright 2026 The RingKernel Authors.
//
// channel.h: single-producer channels — a K2K path from one sending thread
// to one actor without a reservation at all.
//
// A send into an actor's mailbox (mailbox.h) reserves its position with a
// compare-and-swap on the shared tail: a trip to L2 that the record's stores
// wait for, on every send. A channel is a mailbox (the same header, slots
// and LL records) with one producer, a worker thread: the thread keeps the
// tail in its send cache and the head it last acquired, so a send is the
// record's stores and a posted store of the tail, and it reads the head
// only when the channel looks full by the cached one.
//
// Which pairs get one. Each actor has a `ChannelTable` (one line): up to
// kChannelsPerActor entries, each a sending thread (its key: worker ×
// threads_per_block + thread + 1) and its channel. A thread that sends to an
// actor for the first time looks for its key there. If it is not there and
// an entry may be left, its first send goes the mailbox's way with one step
// more: with its mailbox position reserved, it claims an entry (a
// fetch-and-add on `claimed`) and carves the channel out of the system's
// channel arena; with a channel, it writes a kMailChannel record at that
// position, publishes the entry (release) and sends the message through the
// channel; without (the table filled meanwhile, the arena spent), it writes
// the message at that position, as every later send will. Entries are never
// given back and `open` is fixed at the actor's spawn, so a thread's way to
// a receiver — its channel, or the mailbox — never changes once chosen:
// FIFO per (thread, receiver) holds because one thread's records to one
// actor always travel the same way. (An actor's sends come from one thread:
// its owner; in a block handler the owner is the leader, rank 0,
// rt_block.cuh.)
//
// The receiver — the actor's owner thread, for actors held in an owner's
// registers (open tables only) — learns of a channel from its kMailChannel
// record, in mailbox order: a host message handed over after that record
// is handled only after what the channel held (rt_worker.cuh's owner
// loop). It then
// serves the channel as it serves its mailbox: the same take
// (MailboxTryTake), stamping and lazy release of `head`. The arena comes
// zeroed from the host, and zero never matches a flag, so a new channel's
// slots need no clearing.
//
// Counting (the drain's quiescence, the monitor's depths): a channel's
// `tail` line holds the producer's tail, stored after each record (relaxed:
// the receiver never reads it; what the counts need is that a handler's
// sends are counted before its own message is released, which the release
// of `head` orders), its `head` line the receiver's released head.
#ifndef RINGKERNEL_DEVICE_CHANNEL_H_
#define RINGKERNEL_DEVICE_CHANNEL_H_

#include "ringkernel/device/atomics.h"
#include "ringkernel/device/config.h"
#include "ringkernel/device/mailbox.h"

namespace rk {

inline constexpr u32 kChannelsPerActor = 4;
// Actors at these first positions of their worker's list (and held in an
// owner's registers) have open tables.
inline constexpr u32 kChannelReceivers = 32;
// An entry's channel when the arena was spent: its thread uses the mailbox.
inline constexpr u64 kChannelNone = 1;

struct ChannelEntry {
  u32 sender;  // the sending thread's key (0: not claimed yet)
  u32 pad;
  u64 box;     // its channel's MailboxHeader, kChannelNone, or 0 until published
};

struct alignas(kLineBytes) ChannelTable {
  u64 claimed;  // entries claimed so far (past kChannelsPerActor: all taken)
  u32 open;     // 1: senders may claim entries (set at spawn, never changed)
  u32 pad0;
  ChannelEntry e[kChannelsPerActor];
  u8 pad[kLineBytes - 16 - sizeof(ChannelEntry) * kChannelsPerActor];
};
static_assert(sizeof(ChannelTable) == kLineBytes, "ChannelTable is one line");
RK_ASSERT_OFFSET(ChannelTable, e, 16);

// Bytes a channel takes from the arena (whole lines: channels never share
// one).
RK_HOST_DEVICE constexpr u64 ChannelBytes(u32 log2, u32 slot_bytes) {
  return AlignUp(MailboxBytes(log2, slot_bytes), kLineBytes);
}

// The key of a sending thread.
RK_HOST_DEVICE constexpr u32 ChannelSenderKey(u32 worker, u32 threads_per_block, u32 thread) {
  return worker * threads_per_block + thread + 1;
}

// The sender's look: the channel its key has in `t` (its box, or
// kChannelNone), 0 when it has none. A thread finds only entries it
// published itself, so relaxed loads do.
RK_HOST_DEVICE inline u64 ChannelFind(const ChannelTable* t, u32 key) {
  u64 found = 0;
RK_UNROLL
  for (u32 i = 0; i < kChannelsPerActor; ++i) {
    const u32 k = LoadRelaxedGpu32(&t->e[i].sender);
    const u64 box = LoadRelaxedGpu(&t->e[i].box);
    if (k == key) found = box;
  }
  return found;
}

// Whether `t` may still give a thread a channel (open, entries left): the
// thread's next send then tries to open one (ChannelClaim).
RK_HOST_DEVICE inline bool ChannelMayOpen(const ChannelTable* t) {
  return LoadRelaxedGpu32(&t->open) != 0 && LoadRelaxedGpu(&t->claimed) < kChannelsPerActor;
}

// What a claim got: an entry (`index` < kChannelsPerActor) and its channel
// (`box`: kChannelNone when the arena was spent), or no entry (`index` past
// the last: the table filled meanwhile).
struct ChannelClaimResult {
  u64 index;
  u64 box;
};

// Claims an entry of `t` and carves its channel (2^log2 slots of `shape`:
// the receiver's mailbox's capacity and shape, so a pair can queue as many
// messages either way) out of `arena` (`arena_bytes`, zeroed; `*arena_used`
// its bump pointer), its header prepared. The caller then tells the
// receiver through its mailbox (a kMailChannel record) and publishes the
// entry (ChannelPublish) — or, with no entry or no channel, sends that
// message and every later one through the mailbox.
RK_HOST_DEVICE inline ChannelClaimResult ChannelClaim(ChannelTable* t, u8* arena, u64 arena_bytes, u64* arena_used,
                                                      u32 log2, const MailboxShape& shape) {
  const u64 index = FetchAddGpu(&t->claimed, 1);
  if (index >= kChannelsPerActor) return ChannelClaimResult{index, 0};
  const u64 bytes = ChannelBytes(log2, shape.slot_bytes);
  u64 box = kChannelNone;
  if (arena != nullptr && LoadRelaxedGpu(arena_used) + bytes <= arena_bytes) {
    const u64 at = FetchAddGpu(arena_used, bytes);
    if (at + bytes <= arena_bytes) {
      MailboxHeader* b = reinterpret_cast<MailboxHeader*>(arena + at);
      b->capacity_log2 = log2;
      b->slot_bytes = shape.slot_bytes;
      b->inline_words = shape.inline_words;
      b->plain_bytes = shape.plain_bytes;
      StoreRelaxedGpu(&b->head.value, 0);
      StoreRelaxedGpu(&b->tail.value, 0);
      box = reinterpret_cast<u64>(b);
    }
  }
  return ChannelClaimResult{index, box};
}

// Publishes entry `index` of `t`: `key`'s, with `box` (a channel or
// kChannelNone). Release: a receiver that sees the box sees its header.
RK_HOST_DEVICE inline void ChannelPublish(ChannelTable* t, u64 index, u32 key, u64 box) {
  StoreRelaxedGpu32(&t->e[index].sender, key);
  StoreReleaseGpu(&t->e[index].box, box);
}

// The entries a receiver may find published (at most kChannelsPerActor).
RK_HOST_DEVICE RK_FORCEINLINE u32 ChannelClaimed(const ChannelTable* t) {
  const u64 c = LoadRelaxedGpu(&t->claimed);
  return c < kChannelsPerActor ? static_cast<u32>(c) : kChannelsPerActor;
}

// Entry i's channel as the receiver sees it: a box, kChannelNone, or 0 while
// its sender is still preparing it. Acquire: pairs with ChannelOpen's
// release.
RK_HOST_DEVICE RK_FORCEINLINE u64 ChannelEntryBox(const ChannelTable* t, u32 i) {
  return LoadAcquireGpu(&t->e[i].box);
}

// The counts over a receiver's channels, each entry read once (acquire):
// how many entries were published with a channel (each had its
// kMailChannel record in the receiver's mailbox, written before the entry),
// and the sums of their released heads and producers' tails (each channel's
// head read before its tail, so neither sum runs ahead of the other).
struct ChannelCounts {
  u64 opened, heads, tails;
};
RK_HOST_DEVICE inline ChannelCounts ChannelCountsOf(const ChannelTable* t) {
  ChannelCounts c{0, 0, 0};
  const u32 claimed = ChannelClaimed(t);
  for (u32 k = 0; k < claimed; ++k) {
    const u64 box = ChannelEntryBox(t, k);
    if (box <= kChannelNone) continue;
    const MailboxHeader* h = reinterpret_cast<const MailboxHeader*>(box);
    ++c.opened;
    c.heads += LoadAcquireGpu(&h->head.value);
    c.tails += LoadAcquireGpu(&h->tail.value);
  }
  return c;
}

// One line of every channel of a receiver summed: the drain reads all heads
// (kHead), then all tails (kTail), in separate waves (Quiescent,
// rt_service.cuh).
enum class ChannelLine : u32 { kHead, kTail };
RK_HOST_DEVICE inline u64 ChannelSum(const ChannelTable* t, ChannelLine line) {
  u64 sum = 0;
  const u32 claimed = ChannelClaimed(t);
  for (u32 k = 0; k < claimed; ++k) {
    const u64 box = ChannelEntryBox(t, k);
    if (box <= kChannelNone) continue;
    const MailboxHeader* h = reinterpret_cast<const MailboxHeader*>(box);
    sum += LoadAcquireGpu(line == ChannelLine::kHead ? &h->head.value : &h->tail.value);
  }
  return sum;
}

// The producer: whether position `tail` has room, by the cached `*head`
// first and else by the head re-read (acquire: pairs with the receiver's
// release, so its reads of the slot we take are done).
RK_HOST_DEVICE RK_FORCEINLINE bool ChannelHasRoom(MailboxHeader* box, u64 capacity, u64 tail, u64* head) {
  if (tail - *head < capacity) return true;
  *head = LoadAcquireGpu(&box->head.value);
  return tail - *head < capacity;
}

// The producer, after the record at `tail - 1`: the tail for the counts.
RK_HOST_DEVICE RK_FORCEINLINE void ChannelPublishTail(MailboxHeader* box, u64 tail) {
  StoreRelaxedGpu(&box->tail.value, tail);
}

}  // namespace rk

#endif  // RINGKERNEL_DEVICE_CHANNEL_H_
