// Copyright 2026 The RingKernel Authors.
//
// mailbox.h: an actor's mailbox in device memory — bounded, multi-producer,
// single-consumer, FIFO per producer, published without a release fence.
//
// Layout: a `MailboxHeader` (three 128-byte lines) followed by `capacity`
// slots of `slot_bytes` each. A slot starts with LL words (8 bytes: 4 data
// bytes and a 4-byte flag naming the lap of the ring, as in ll_ring.h):
//   * `kMailHeaderWords` words of `MailHeader` (type, size, sender, flags,
//     correlation, clock);
//   * `inline_words` words of inline payload;
// and, for mailboxes of actors that take messages larger than the inline
// words hold, a plain payload area of `plain_bytes`.
//
// Protocol (positions are 64-bit and wrap modulo 2^64; the slot of position
// p is p mod capacity; every word written at p carries LlFlag(p)):
//   * Producers reserve positions with a compare-and-swap on `tail`, taking
//     only as many as `capacity - (tail - head)` allows. A producer keeps a
//     `MailboxCursor` (its guess of the tail and the last head it acquired),
//     so a producer that sends to the same mailbox again reserves with a
//     single compare-and-swap and no load before it. A full mailbox is
//     reported (0 reserved), never waited on.
//   * Small payloads: the producer stores the header and payload words in
//     any order with relaxed stores. No fence: the owner takes the record
//     once every word it needs shows the position's flag, so the poll that
//     sees the record has read it.
//   * Large payloads (more than the inline words hold): the producer writes
//     the payload to the plain area, fences (release), then stores the
//     header words; the owner fences (acquire) after seeing the header and
//     reads the plain area in place.
//   * The owner consumes positions in order and releases them to producers
//     with a release store of `head` — lazily (when it finds the mailbox
//     empty, or after a quarter of the capacity), since a stale head only
//     makes the mailbox look fuller to producers.
// A slot is rewritten only after `head` passed it, so a producer never
// writes a slot the owner is still reading; a stale word from an earlier lap
// carries an older flag and never matches.
//
// Flags repeat every 2^31 laps; a payload word no record touched for that
// long would look current, so the owner stamps a slot's unused inline words
// once every 2^30 laps (as ll_ring.h does for its slots).
//
// Example (one producer, any thread):
//   rk::MailboxCursor c{};  // kept across sends to this mailbox
//   u64 pos;
//   if (rk::MailboxReserve(box, capacity, 1, &c, &pos) == 1)
//     rk::MailboxWrite(rk::MailboxSlotAt(box, log2, slot_bytes, pos), inline_words,
//                      rk::LlFlag(pos, log2), header, payload);
#ifndef RINGKERNEL_DEVICE_MAILBOX_H_
#define RINGKERNEL_DEVICE_MAILBOX_H_

#include "ringkernel/device/atomics.h"
#include "ringkernel/device/bulk_copy.h"
#include "ringkernel/device/config.h"
#include "ringkernel/device/ll_ring.h"

#if !defined(RK_NO_STD_HEADERS)
#include <cstring>
#endif

namespace rk {

// The fixed part of every record, as data words 0..7 of its slot.
struct MailHeader {
  u32 type;         // message type id (1..N)
  u32 size;         // payload bytes
  u32 sender;       // ActorId value of the sender (kHostActorValue for the host)
  u32 flags;        // kMail* bits
  u64 correlation;  // the host's Ask correlation id, 0 if none; carried by replies
  u64 hlc;          // the sender's HLC timestamp of the send
};
inline constexpr u32 kMailHeaderWords = 8;
static_assert(sizeof(MailHeader) == 4 * kMailHeaderWords, "MailHeader is eight data words");

// MailHeader::flags.
inline constexpr u32 kMailPlain = 1;  // the payload is in the slot's plain area
inline constexpr u32 kMailVoid = 2;   // reserved, then withdrawn: the owner skips it
inline constexpr u32 kMailIngress = 4;  // a host message the worker's poller forwarded (not an actor's ctx.forward)
inline constexpr u32 kMailChannel = 8;  // with kMailVoid: the sender opened a channel to the owner (channel.h)

// The largest alignment a message type may require (its payload is handed to
// a handler at a 16-byte boundary).
inline constexpr u32 kMaxMessageAlignment = 16;

// Mailboxes of actors whose messages all fit this many bytes carry every
// payload inline; larger ones carry up to kMailInlineSplit bytes inline and
// the rest of the sizes in the plain area.
inline constexpr u32 kMailInlineMax = 256;
inline constexpr u32 kMailInlineSplit = 128;
// The owner's buffer for an inline payload, in 32-bit words.
inline constexpr u32 kMailInlineMaxWords = kMailInlineMax / 4;

struct alignas(kLineBytes) MailboxHeader {
  PaddedIndex tail;  // next position to reserve; producers CAS it
  PaddedIndex head;  // next position producers may not overwrite; the owner's
  u32 capacity_log2;
  u32 slot_bytes;
  u32 inline_words;
  u32 plain_bytes;
  u8 pad[kLineBytes - 4 * sizeof(u32)];
};
static_assert(sizeof(MailboxHeader) == 3 * kLineBytes, "MailboxHeader is three lines");
RK_ASSERT_OFFSET(MailboxHeader, tail, 0);
RK_ASSERT_OFFSET(MailboxHeader, head, kLineBytes);
RK_ASSERT_OFFSET(MailboxHeader, capacity_log2, 2 * kLineBytes);

// The shape of a mailbox's slots for messages of up to `max_payload` bytes.
struct MailboxShape {
  u32 inline_words;  // even, so the plain area starts 16-byte aligned
  u32 plain_bytes;
  u32 slot_bytes;
};
RK_HOST_DEVICE constexpr MailboxShape MailboxShapeFor(u32 max_payload) {
  const u32 inline_bytes = max_payload <= kMailInlineMax ? max_payload : kMailInlineSplit;
  const u32 inline_words = static_cast<u32>(AlignUp((inline_bytes + 3) / 4, 2));
  const u32 plain_bytes = max_payload <= kMailInlineMax ? 0u : static_cast<u32>(AlignUp(max_payload, 16));
  return MailboxShape{inline_words, plain_bytes,
                      static_cast<u32>(AlignUp(8ull * (kMailHeaderWords + inline_words) + plain_bytes, 16))};
}

// Bytes of a mailbox with 2^capacity_log2 slots of `slot_bytes`.
RK_HOST_DEVICE constexpr u64 MailboxBytes(u32 capacity_log2, u32 slot_bytes) {
  return sizeof(MailboxHeader) + (u64{1} << capacity_log2) * slot_bytes;
}

// The slot of `pos` (its first LL word), for a mailbox whose geometry the
// caller already has in registers.
RK_HOST_DEVICE RK_FORCEINLINE u64* MailboxSlotAt(MailboxHeader* box, u32 capacity_log2, u32 slot_bytes, u64 pos) {
  u8* slots = reinterpret_cast<u8*>(box) + sizeof(MailboxHeader);
  const u64 index = pos & ((u64{1} << capacity_log2) - 1);
  return reinterpret_cast<u64*>(slots + index * slot_bytes);
}
RK_HOST_DEVICE RK_FORCEINLINE u8* MailboxPlain(u64* slot, u32 inline_words) {
  return reinterpret_cast<u8*>(slot + kMailHeaderWords + inline_words);
}

// Prepares a mailbox whose first position is `start` (0 in production; the
// tests start near 2^64 to prove that positions wrap). Not concurrent with
// any producer or consumer. Every LL word is cleared: zero never matches a
// flag, which has its top bit set.
RK_HOST_DEVICE inline void MailboxInit(MailboxHeader* box, u32 capacity_log2, const MailboxShape& shape, u64 start) {
  box->capacity_log2 = capacity_log2;
  box->slot_bytes = shape.slot_bytes;
  box->inline_words = shape.inline_words;
  box->plain_bytes = shape.plain_bytes;
  const u64 capacity = u64{1} << capacity_log2;
  for (u64 i = 0; i < capacity; ++i) {
    u64* slot = MailboxSlotAt(box, capacity_log2, shape.slot_bytes, i);
    for (u32 w = 0; w < kMailHeaderWords + shape.inline_words; ++w) StoreRelaxedGpu(slot + w, 0);
  }
  StoreRelaxedGpu(&box->head.value, start);
  StoreReleaseGpu(&box->tail.value, start);
}

// A producer's knowledge of one mailbox: the tail it expects and the last
// head it read with acquire. Zero-initialised is valid (the first reservation
// then learns the tail from a failed compare-and-swap).
struct MailboxCursor {
  u64 tail;
  u64 head;
};

// Reserves up to `n` consecutive positions. Returns how many were reserved
// (0 when the mailbox is full) and stores the first in `*first`. The caller
// must write a record (possibly kMailVoid) at every position it reserved.
RK_HOST_DEVICE inline u32 MailboxReserve(MailboxHeader* box, u64 capacity, u32 n, MailboxCursor* c, u64* first) {
  u64 t = c->tail;
  bool refreshed = false;
  for (;;) {
    const u64 used = t - c->head;
    if (used > capacity) {
      // The guesses of tail and head come from different times (or there are
      // none yet: a zero cursor): learn both, head first, so that the tail
      // read after it is never behind it.
      c->head = LoadAcquireGpu(&box->head.value);
      t = LoadRelaxedGpu(&box->tail.value);
      refreshed = true;
      continue;
    }
    const u64 free_slots = capacity - used;
    if (free_slots < n && !refreshed) {
      // Acquire pairs with the owner's release of `head`: its reads of the
      // slots we may now take are finished before our writes begin.
      c->head = LoadAcquireGpu(&box->head.value);
      refreshed = true;
      continue;
    }
    if (free_slots == 0) {
      c->tail = t;
      return 0;
    }
    const u32 take = free_slots < n ? static_cast<u32>(free_slots) : n;
    const u64 seen = CompareExchangeGpu(&box->tail.value, t, t + take);
    if (seen == t) {
      *first = t;
      c->tail = t + take;
      return take;
    }
    t = seen;
    refreshed = false;
  }
}

// The header as data words, field by field (no type punning).
RK_HOST_DEVICE RK_FORCEINLINE void MailHeaderToWords(const MailHeader& h, u32* w) {
  w[0] = h.type;
  w[1] = h.size;
  w[2] = h.sender;
  w[3] = h.flags;
  w[4] = static_cast<u32>(h.correlation);
  w[5] = static_cast<u32>(h.correlation >> 32);
  w[6] = static_cast<u32>(h.hlc);
  w[7] = static_cast<u32>(h.hlc >> 32);
}
RK_HOST_DEVICE RK_FORCEINLINE MailHeader MailHeaderFromWords(const u32* w) {
  MailHeader h;
  h.type = w[0];
  h.size = w[1];
  h.sender = w[2];
  h.flags = w[3];
  h.correlation = static_cast<u64>(w[4]) | static_cast<u64>(w[5]) << 32;
  h.hlc = static_cast<u64>(w[6]) | static_cast<u64>(w[7]) << 32;
  return h;
}

// Two LL words with one 16-byte store where the target allows it.
RK_HOST_DEVICE RK_FORCEINLINE void StoreLlPairGpu(u64* p, u64 a, u64 b) {
#if RK_ON_DEVICE
  asm volatile("st.relaxed.gpu.v2.u64 [%0], {%1, %2};" ::"l"(p), "l"(a), "l"(b) : "memory");
#else
  // On the host (the ThreadSanitizer tests), which does not model standalone
  // fences, every LL store releases and every LL load acquires: the fences
  // of the plain-area path are then visible to the tool.
  StoreReleaseGpu(p, a);
  StoreReleaseGpu(p + 1, b);
#endif
}
RK_HOST_DEVICE RK_FORCEINLINE void LoadLlPairGpu(const u64* p, u64* a, u64* b) {
#if RK_ON_DEVICE
  asm volatile("ld.relaxed.gpu.v2.u64 {%0, %1}, [%2];" : "=l"(*a), "=l"(*b) : "l"(p) : "memory");
#else
  *a = LoadAcquireGpu(p);
  *b = LoadAcquireGpu(p + 1);
#endif
}

// Reads 32-bit word `i` of a payload that may not be 4-byte aligned; bytes
// past `size` read as zero.
RK_HOST_DEVICE RK_FORCEINLINE u32 PayloadWord(const u8* bytes, u32 size, u32 i) {
  u32 v = 0;
  for (u32 b = 0; b < 4 && 4 * i + b < size; ++b) v |= static_cast<u32>(bytes[4 * i + b]) << (8 * b);
  return v;
}

// Copies whole elements of T, kBatch at a time with every load of a batch
// issued before its stores (one after another, each load would wait for
// the store before it, which the compiler must assume may alias the
// source): one trip to memory per batch. Returns the elements copied.
template <class T, u32 kBatch>
RK_HOST_DEVICE RK_FORCEINLINE u32 CopyInBatches(T* to, const T* from, u32 n) {
  u32 i = 0;
  for (; i + kBatch <= n; i += kBatch) {
    T v[kBatch];
    RK_UNROLL
    for (u32 k = 0; k < kBatch; ++k) v[k] = from[i + k];
    RK_UNROLL
    for (u32 k = 0; k < kBatch; ++k) to[i + k] = v[k];
  }
  for (; i < n; ++i) to[i] = from[i];
  return n;
}

// Copies a payload to a slot's plain area (16-byte aligned): in 16-byte
// pieces when the source is 16-byte aligned, else in words, else bytes.
struct alignas(16) PlainChunk {
  u64 lo, hi;
};
RK_HOST_DEVICE RK_FORCEINLINE void MailboxCopyPlain(u8* plain, const u8* bytes, u32 size) {
  const u64 src = reinterpret_cast<u64>(bytes);
  u32 done = 0;
  if ((src & 15) == 0) {
    done = 16 * CopyInBatches<PlainChunk, 8>(reinterpret_cast<PlainChunk*>(plain),
                                             reinterpret_cast<const PlainChunk*>(bytes), size / 16);
  } else if ((src & 7) == 0) {
    done = 8 * CopyInBatches<u64, 16>(reinterpret_cast<u64*>(plain), reinterpret_cast<const u64*>(bytes), size / 8);
  }
  for (u32 b = done; b < size; ++b) plain[b] = bytes[b];
}

// Stores a record's header words (LL words of `flag`): the last step of
// every record's publication.
RK_HOST_DEVICE RK_FORCEINLINE void MailboxStoreHeader(u64* slot, u32 flag, const MailHeader& h) {
  u32 hw[kMailHeaderWords];
  MailHeaderToWords(h, hw);
RK_UNROLL
  for (u32 i = 0; i < kMailHeaderWords; i += 2) StoreLlPairGpu(slot + i, LlWord(hw[i], flag), LlWord(hw[i + 1], flag));
}

// Writes the record of a reserved position. `payload` is `h.size` bytes;
// `h.flags` must not have kMailPlain (set here when the payload goes to the
// plain area). A kMailVoid record may have no payload.
RK_HOST_DEVICE inline void MailboxWrite(u64* slot, u32 inline_words, u32 flag, MailHeader h, const void* payload) {
  const u8* bytes = static_cast<const u8*>(payload);
  const u32 words = (h.size + 3) / 4;
  if (words > inline_words) {
    // Plain area, then a release fence, then the header: the owner's acquire
    // after it sees the header makes the payload visible. On sm_90 the
    // tensor memory accelerator copies what it can (bulk_copy.h).
    u8* plain = MailboxPlain(slot, inline_words);
    u32 done = 0;
#if RK_BULK_COPY
    done = BulkCopy(plain, bytes, h.size);
#endif
    MailboxCopyPlain(plain + done, bytes + done, h.size - done);
    FenceGpu();
    h.flags |= kMailPlain;
  } else if ((reinterpret_cast<u64>(bytes) & 3) == 0) {
    const u32* w = reinterpret_cast<const u32*>(bytes);
    const u32 full = h.size / 4;
    u64* out = slot + kMailHeaderWords;
    u32 i = 0;
    for (; i + 1 < full; i += 2) StoreLlPairGpu(out + i, LlWord(w[i], flag), LlWord(w[i + 1], flag));
    for (; i < words; ++i) StoreRelaxedGpu(out + i, LlWord(PayloadWord(bytes, h.size, i), flag));
  } else {
    for (u32 i = 0; i < words; ++i) {
      StoreRelaxedGpu(slot + kMailHeaderWords + i, LlWord(PayloadWord(bytes, h.size, i), flag));
    }
  }
  MailboxStoreHeader(slot, flag, h);
}

// The words of a payload of kSize bytes (alignment kAlign) into `w`, loaded
// at fixed offsets and as wide as the alignment allows (sizeof is a multiple
// of it): a message built in registers stays in registers. A last partial
// word keeps its unused bytes as `w` had them.
template <u32 kSize, u32 kAlign>
RK_HOST_DEVICE RK_FORCEINLINE void LoadPayloadWords(const void* payload, u32* w) {
  if (kAlign >= 8) {
    const u64* from = static_cast<const u64*>(payload);
RK_UNROLL
    for (u32 i = 0; i + 1 <= kSize / 8; ++i) {
      const u64 v = from[i];
      w[2 * i] = static_cast<u32>(v);
      w[2 * i + 1] = static_cast<u32>(v >> 32);
    }
  } else if (kAlign >= 4) {
    const u32* from = static_cast<const u32*>(payload);
RK_UNROLL
    for (u32 i = 0; i + 1 <= kSize / 4; ++i) w[i] = from[i];
  } else {
    memcpy(w, payload, kSize);
  }
}

// The register words of a typed payload of kSize bytes, up to
// kMailInlineSplit (larger ones are never copied by the word): kPairs pairs
// of LL words (inline words are even: a padding word may be written).
template <u32 kSize>
struct MailTyped {
  static constexpr u32 kBytes = kSize > kMailInlineSplit ? 0 : kSize;
  static constexpr u32 kPairs = ((kBytes + 3) / 4 + 1) / 2;
  static constexpr u32 kWords = 2 * kPairs + 2;
};

// Stores a record whose payload of kSize bytes (up to kMailInlineSplit) is
// in `w` (MailTyped<kSize>::kWords words, from LoadPayloadWords): the
// payload's LL words at fixed offsets, then the header.
template <u32 kSize>
RK_HOST_DEVICE RK_FORCEINLINE void MailboxWriteWords(u64* slot, u32 flag, const MailHeader& h, const u32* w) {
  u64* out = slot + kMailHeaderWords;
RK_UNROLL
  for (u32 p = 0; p + 1 <= MailTyped<kSize>::kPairs; ++p) {
    StoreLlPairGpu(out + 2 * p, LlWord(w[2 * p], flag), LlWord(w[2 * p + 1], flag));
  }
  MailboxStoreHeader(slot, flag, h);
}

// MailboxWrite for a payload whose size and alignment are constants (a
// message sent from a handler). The payload's words are copied at fixed
// offsets, so a message built in registers is stored from registers. A
// payload of up to kMailInlineSplit bytes always fits a mailbox that takes
// it inline (MailboxShapeFor), so for those the plain path is not compiled.
template <u32 kSize, u32 kAlign>
RK_HOST_DEVICE RK_FORCEINLINE void MailboxWriteTyped(u64* slot, u32 inline_words, u32 flag, MailHeader h,
                                                     const void* payload) {
  if (kSize > kMailInlineSplit) {
    MailboxWrite(slot, inline_words, flag, h, payload);
    return;
  }
  // (Sizes above kMailInlineSplit never reach here; kBytes keeps their
  // instantiations small.)
  u32 w[MailTyped<kSize>::kWords] = {};
  LoadPayloadWords<MailTyped<kSize>::kBytes, kAlign>(payload, w);
  MailboxWriteWords<kSize>(slot, flag, h, w);
}

// The owner's view of a record it has taken.
struct MailRecord {
  MailHeader h;
  const u8* payload;  // `inline_buf` or the slot's plain area
};

// Words loaded together with the header when the owner polls wide: the
// header and up to this many inline payload words, in one trip to memory.
inline constexpr u32 kMailWideWords = 16;
// Payload words read per pass after the first.
inline constexpr u32 kMailRestWords = 8;

// The words of a record's first pass: the header and up to kMailWideWords
// inline words, from word `from` on (even) into `w`, every load issued
// before any is used; words past the slot's inline words read as zero.
RK_HOST_DEVICE RK_FORCEINLINE void MailboxLoadFirstPass(const u64* slot, u32 inline_words, u32 from, u64* w) {
  const u32 first_words = kMailHeaderWords + (inline_words < kMailWideWords ? inline_words : kMailWideWords);
RK_UNROLL
  for (u32 i = 0; i < kMailHeaderWords + kMailWideWords; i += 2) {
    if (i < from) continue;
    if (i < first_words) {
      LoadLlPairGpu(slot + i, &w[i], &w[i + 1]);
    } else {
      w[i] = w[i + 1] = 0;
    }
  }
}

// The header from a first pass, if all its words carry `flag`.
RK_HOST_DEVICE RK_FORCEINLINE bool MailboxFirstHeader(const u64* w, u32 flag, MailHeader* h) {
  u32 bad = 0;
  u32 hw[kMailHeaderWords];
RK_UNROLL
  for (u32 i = 0; i < kMailHeaderWords; ++i) {
    bad |= LlWordFlag(w[i]) ^ flag;
    hw[i] = LlData(w[i]);
  }
  if (bad != 0) return false;
  *h = MailHeaderFromWords(hw);
  return true;
}

// MailboxTryTake's work once the first pass is in `w` (loaded from the slot,
// or a copy of those words made while the slot was being read): the record
// if every word it needs carries `flag`, the words past the first pass
// loaded from the slot.
RK_HOST_DEVICE RK_FORCEINLINE bool MailboxTakeFirstPass(const u64* w, const u64* slot, u32 inline_words, u32 flag,
                                                        MailRecord* r, u32* inline_buf) {
  if (!MailboxFirstHeader(w, flag, &r->h)) return false;
  u32 bad = 0;
  if (r->h.flags & (kMailPlain | kMailVoid)) {
    // The producer fenced before the header: acquire, then read in place.
    FenceAcquireGpu();
    r->payload = r->h.flags & kMailPlain ? MailboxPlain(const_cast<u64*>(slot), inline_words) : nullptr;
    return true;
  }
  const u32 words = (r->h.size + 3) / 4;
  if (words > inline_words) return false;  // corrupt: never written so
RK_UNROLL
  for (u32 i = 0; i < kMailWideWords; ++i) {
    if (i < words) {
      bad |= LlWordFlag(w[kMailHeaderWords + i]) ^ flag;
      inline_buf[i] = LlData(w[kMailHeaderWords + i]);
    }
  }
  // A payload longer than the first pass: the rest, kMailRestWords at a
  // time, every load of a chunk issued before any is checked (a loop that
  // used each load before issuing the next would wait one trip per pair).
  for (u32 base = kMailWideWords; base < words; base += kMailRestWords) {
    u64 a[kMailRestWords / 2], b[kMailRestWords / 2];
RK_UNROLL
    for (u32 j = 0; j < kMailRestWords / 2; ++j) {
      if (base + 2 * j < words) LoadLlPairGpu(slot + kMailHeaderWords + base + 2 * j, &a[j], &b[j]);
    }
RK_UNROLL
    for (u32 j = 0; j < kMailRestWords / 2; ++j) {
      const u32 i = base + 2 * j;
      if (i < words) {
        bad |= LlWordFlag(a[j]) ^ flag;
        inline_buf[i] = LlData(a[j]);
        if (i + 1 < words) {
          bad |= LlWordFlag(b[j]) ^ flag;
          inline_buf[i + 1] = LlData(b[j]);
        }
      }
    }
  }
  if (bad != 0) return false;
  r->payload = reinterpret_cast<const u8*>(inline_buf);
  return true;
}

// Tries to take the record at `slot` for `flag`. On success fills `*r`,
// copying an inline payload to `inline_buf` (kMailInlineMaxWords words,
// 16-byte aligned). Returns false while any needed word is missing.
// `wide`: load the header and the first kMailWideWords inline words at once
// (one trip to memory for small messages, while the mailbox is busy); else
// one 16-byte load tells whether a record has begun (while it is quiet).
// Every word is loaded into registers (indices fixed at compile time), and
// all the loads of a pass are issued before any of them is checked.
RK_HOST_DEVICE inline bool MailboxTryTake(const u64* slot, u32 inline_words, u32 flag, bool wide, MailRecord* r,
                                          u32* inline_buf) {
  u64 w[kMailHeaderWords + kMailWideWords];  // the first pass
  LoadLlPairGpu(slot, &w[0], &w[1]);
  if (!wide && (LlWordFlag(w[0]) != flag || LlWordFlag(w[1]) != flag)) return false;
  MailboxLoadFirstPass(slot, inline_words, 2, w);
  return MailboxTakeFirstPass(w, slot, inline_words, flag, r, inline_buf);
}

// What a look at a slot for a small record found (MailboxLookSmall).
constexpr u32 kLookEmpty = 0;  // no whole record yet
constexpr u32 kLookTaken = 1;  // a small inline record: *h and buf filled
constexpr u32 kLookOther = 2;  // a whole record that is not small (plain, void or larger than max_words)

// A record's first-pass data words, four to a 16-byte store.
struct alignas(16) MailQuad {
  u32 v[4];
};

// Looks for a small record at `slot` (inline, at most max_words and at most
// kMailWideWords words), taking it (*h, its payload into buf) when whole,
// from one trip to memory; says also whether a record that was not
// taken is there at all: a caller that waits for the next small record
// stops at a record of another kind instead of waiting for it to change.
// kCopyWhole: `buf` holds kMailWideWords words and is 16-byte aligned, and
// every word of the first pass is copied, those past the record's payload
// too (four 16-byte stores in place of one predicated store a word).
template <bool kCopyWhole = false>
RK_HOST_DEVICE inline u32 MailboxLookSmall(const u64* slot, u32 inline_words, u32 flag, u32 max_words, MailHeader* h,
                                           u32* buf) {
  u64 w[kMailHeaderWords + kMailWideWords];
  MailboxLoadFirstPass(slot, inline_words, 0, w);
  if (!MailboxFirstHeader(w, flag, h)) return kLookEmpty;
  if ((h->flags & (kMailPlain | kMailVoid)) != 0) return kLookOther;
  const u32 words = (h->size + 3) / 4;
  if (words > inline_words || words > max_words || words > kMailWideWords) return kLookOther;
  u32 bad = 0;
RK_UNROLL
  for (u32 i = 0; i < kMailWideWords; ++i) {
    if (i < words) bad |= LlWordFlag(w[kMailHeaderWords + i]) ^ flag;
  }
  if (bad != 0) return kLookEmpty;  // the header is there, some payload words not yet
  if constexpr (kCopyWhole) {
#ifdef __CUDA_ARCH__
RK_UNROLL
    for (u32 q = 0; q < kMailWideWords / 4; ++q) {
      const u64* p = w + kMailHeaderWords + 4 * q;
      reinterpret_cast<MailQuad*>(buf)[q] = MailQuad{{LlData(p[0]), LlData(p[1]), LlData(p[2]), LlData(p[3])}};
    }
#else
    for (u32 i = 0; i < kMailWideWords; ++i) buf[i] = LlData(w[kMailHeaderWords + i]);
#endif
  } else {
RK_UNROLL
    for (u32 i = 0; i < kMailWideWords; ++i) {
      if (i < words) buf[i] = LlData(w[kMailHeaderWords + i]);
    }
  }
  return kLookTaken;
}

// Takes the record at `slot` for `flag` if it is whole, its payload inline
// and at most `max_words` words (at most kMailWideWords): its header to `*h`
// and its payload to `buf`, from one trip to memory (the header and the
// first kMailWideWords words loaded together). False otherwise, with
// nothing written to `buf` past `max_words` words.
RK_HOST_DEVICE inline bool MailboxTryTakeSmall(const u64* slot, u32 inline_words, u32 flag, u32 max_words,
                                               MailHeader* h, u32* buf) {
  return MailboxLookSmall(slot, inline_words, flag, max_words, h, buf) == kLookTaken;
}

// After taking the record of a slot and before releasing it: once every
// 2^30 laps (LlStampingLap), stamps the inline words the record did not use
// (see above).
RK_HOST_DEVICE inline void MailboxStampUnused(u64* slot, u32 inline_words, u32 flag, const MailHeader& h) {
  if (!LlStampingLap(flag)) return;
  const u32 used = (h.flags & (kMailPlain | kMailVoid)) ? 0 : (h.size + 3) / 4;
  for (u32 i = used; i < inline_words; ++i) StoreRelaxedGpu(slot + kMailHeaderWords + i, LlWord(0, flag));
}

// Gives every slot before `new_head` back to the producers. Owner only.
RK_HOST_DEVICE RK_FORCEINLINE void MailboxRelease(MailboxHeader* box, u64 new_head) {
  StoreReleaseGpu(&box->head.value, new_head);
}

}  // namespace rk

#endif  // RINGKERNEL_DEVICE_MAILBOX_H_
