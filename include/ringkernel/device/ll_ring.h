// Copyright 2026 The RingKernel Authors.
//
// ll_ring.h: the rings between the host and the GPU, in mapped pinned host
// memory, one per direction.
//
// Every 8-byte word of a record carries 4 bytes of data and a 4-byte flag
// that names the lap of the ring the record belongs to ("low latency"
// encoding). Writers store each word whole; the reader accepts a record once
// every word it needs shows the expected flag. So a record is read in one
// pass over the bus, with no separate sequence number to fetch first and no
// ordering needed between the writer's stores — which is what makes a host →
// GPU → host round trip cost one PCIe read and one PCIe write.
//
// A record: `kLlHeaderWords` words of `LlHeader`, then the payload as 32-bit
// words (zero-padded). A slot holds one record of up to the ring's max
// payload.
//
// Positions are 64-bit and wrap modulo 2^64. Producers reserve positions with
// a compare-and-swap on their own `tail` (host memory for the host→GPU ring,
// device memory for the GPU→host ring) against the consumer's `head`, which
// the consumer publishes with a release store after it has read a record.
//
// Example (host producer):
//   u64 pos;
//   if (rk::LlTryReserve(&tail, &cached_head, &hdr->head.value, cap_log2, &pos))
//     rk::LlWriteRecord(rk::LlSlot(words, slot_words, cap_log2, pos), rk::LlFlag(pos, cap_log2), h, payload);
#ifndef RINGKERNEL_DEVICE_LL_RING_H_
#define RINGKERNEL_DEVICE_LL_RING_H_

#include "ringkernel/device/atomics.h"
#include "ringkernel/device/config.h"

namespace rk {

// The data words at the front of every record.
struct LlHeader {
  u32 type;         // message type id, or kControlTypeBase | ControlOp
  u32 size;         // payload bytes
  u32 actor;        // host→GPU: the receiver; GPU→host: the sender
  u32 peer;         // GPU→host dead letters: the original sender; else 0
  u32 aux;          // GPU→host: OutboundKind | reason << 8; control: an argument
  u32 writer;       // host→worker: the tag of the ring's owner that streamed it (LlStreamRecord), else 0
  u64 correlation;  // Ask correlation id; control: an argument
  u64 hlc;          // HLC stamp; control: the control sequence number
};
inline constexpr u32 kLlHeaderWords = sizeof(LlHeader) / 4;
static_assert(sizeof(LlHeader) == 40, "LlHeader is ten data words");
RK_ASSERT_OFFSET(LlHeader, correlation, 24);
RK_ASSERT_OFFSET(LlHeader, hlc, 32);

// The consumer-owned part of a ring, at the start of its mapped region; the
// slots follow at `kLlSlotsOffset`.
struct alignas(kLineBytes) LlRingHeader {
  PaddedIndex head;  // next position to read; written by the consumer only
  u32 capacity_log2;
  u32 slot_words;
  u32 max_payload;
  u8 pad[kLineBytes - 3 * sizeof(u32)];
};
inline constexpr u32 kLlSlotsOffset = sizeof(LlRingHeader);
static_assert(sizeof(LlRingHeader) == 2 * kLineBytes, "LlRingHeader is two lines");

// Words of one slot for payloads of up to `max_payload` bytes: a power of
// two from 16 words (128 bytes) up to 64, then a multiple of 64 (512 bytes),
// so that a warp's window of 16-byte loads (64 words) holds whole records.
RK_HOST_DEVICE constexpr u32 LlSlotWords(u32 max_payload) {
  const u32 words = kLlHeaderWords + (max_payload + 3) / 4;
  return words <= 16 ? 16u : words <= 32 ? 32u : static_cast<u32>(AlignUp(words, 64));
}
RK_HOST_DEVICE constexpr u64 LlRingBytes(u32 capacity_log2, u32 slot_words) {
  return kLlSlotsOffset + (u64{1} << capacity_log2) * slot_words * 8;
}

// The flag of every word written at position `pos`: the lap number, with the
// top bit set so that zeroed memory never looks written.
RK_HOST_DEVICE constexpr u32 LlFlag(u64 pos, u32 capacity_log2) {
  return static_cast<u32>((pos >> capacity_log2) & 0x7FFFFFFFu) | 0x80000000u;
}
RK_HOST_DEVICE constexpr u64 LlWord(u32 data, u32 flag) { return (static_cast<u64>(flag) << 32) | data; }
// The laps at which a consumer stamps the words a record left unused
// (LlStampUnusedWords, LlStampUnusedUnits, MailboxStampUnused): one lap in
// 2^30, those whose flag's low 30 bits are 2^29. Not lap 0: every ring and
// mailbox starts zeroed, and zero matches no flag, so nothing is stale
// before lap 2^29; from then on every word is rewritten at least once in any
// 2^30 laps, long before its flag comes round again (2^31 laps). (Stamping
// at lap 0 wrote every unused word of every slot during a ring's first lap:
// a ring back of 8 KiB slots cost the host 1-2 us a record for it.)
RK_HOST_DEVICE constexpr bool LlStampingLap(u32 flag) { return (flag & 0x3FFFFFFFu) == 0x20000000u; }
RK_HOST_DEVICE constexpr u32 LlData(u64 word) { return static_cast<u32>(word); }
RK_HOST_DEVICE constexpr u32 LlWordFlag(u64 word) { return static_cast<u32>(word >> 32); }

RK_HOST_DEVICE RK_FORCEINLINE u64* LlSlot(u64* slots, u32 slot_words, u32 capacity_log2, u64 pos) {
  return slots + (pos & ((u64{1} << capacity_log2) - 1)) * slot_words;
}
RK_HOST_DEVICE RK_FORCEINLINE const u64* LlSlot(const u64* slots, u32 slot_words, u32 capacity_log2, u64 pos) {
  return slots + (pos & ((u64{1} << capacity_log2) - 1)) * slot_words;
}

// The skip record written at `pos` (units) when a record of `units` units
// would not fit before the ring's end; 0 when it fits.
RK_HOST_DEVICE constexpr u32 LlSkipBefore(u64 pos, u32 units, u32 capacity_log2) {
  const u64 capacity = u64{1} << capacity_log2;
  const u64 offset = pos & (capacity - 1);
  return offset + units > capacity ? static_cast<u32>(capacity - offset) : 0u;
}

// For producers that found the ring full by their cached copy `*h` of the
// consumer's `head`: reads `head` again. False if it has not moved (the ring
// is full); else *h is the fresh head, and `cached_head` is raised to it
// (never lowered: another producer may have raised it further).
template <class Scope = GpuScope>
RK_HOST_DEVICE RK_FORCEINLINE bool LlRefreshCachedHead(u64* cached_head, const u64* head, u64* h) {
  // Acquire pairs with the consumer's release: it has finished reading the
  // slots before they are written again.
  const u64 fresh = LoadAcquireSys(head);
  if (fresh == *h) return false;
  // A release, so that producers that acquire the cache inherit this
  // producer's synchronisation with the consumer.
  u64 seen = *h;
  while (static_cast<i64>(fresh - seen) > 0) {
    const u64 prev = Scope::CasAcqRel(cached_head, seen, fresh);
    if (prev == seen) break;
    seen = prev;
  }
  *h = fresh;
  return true;
}

// Reserves `units` consecutive positions that do not wrap, and before them
// the skip to the ring's end that this takes, if any, with one
// compare-and-swap. `tail` is the producers' shared counter and
// `cached_head` their shared copy of the consumer's `head` (both in the
// producers' memory, accessed at `Scope`: GpuScope, or CtaScope where the
// producers are one block's threads and the counters are in its shared
// memory); `head` is the consumer's published index, read across the bus
// only when the cached copy says the ring is full — or never, when `head` is
// null: then a ring the cache says is full is refused at once (the caller's
// fast path, which retries with `head` given).
// On success *pos is the first reserved unit and *skip how many of them are
// padding (the record starts at *pos + *skip). Returns false when the ring
// lacks room for both. `units` must be at most half the capacity.
template <class Scope = GpuScope>
RK_HOST_DEVICE inline bool LlTryReserveUnits(u64* tail, u64* cached_head, const u64* head, u32 capacity_log2,
                                             u32 units, u64* pos, u32* skip) {
  const u64 capacity = u64{1} << capacity_log2;
  u64 t = Scope::LoadRelaxed(tail);
  u64 h = Scope::LoadAcquire(cached_head);
  for (;;) {
    if (static_cast<i64>(t - h) < 0) {  // `t` older than the cached head
      t = Scope::LoadRelaxed(tail);
      continue;
    }
    const u32 pad = LlSkipBefore(t, units, capacity_log2);
    const u64 need = u64{pad} + units;
    if (t - h + need > capacity) {
      if (head == nullptr || !LlRefreshCachedHead<Scope>(cached_head, head, &h)) return false;
      continue;
    }
    const u64 seen = Scope::Cas(tail, t, t + need);
    if (seen == t) {
      *pos = t;
      *skip = pad;
      return true;
    }
    t = seen;
  }
}

// Reserves one position of a ring of fixed slots (a single position never
// needs a skip). Returns false when the ring is full.
template <class Scope = GpuScope>
RK_HOST_DEVICE inline bool LlTryReserve(u64* tail, u64* cached_head, const u64* head, u32 capacity_log2, u64* pos) {
  u32 skip;
  return LlTryReserveUnits<Scope>(tail, cached_head, head, capacity_log2, 1, pos, &skip);
}

// The header as data words, field by field (no type punning).
RK_HOST_DEVICE inline void LlHeaderToWords(const LlHeader& h, u32* w) {
  w[0] = h.type;
  w[1] = h.size;
  w[2] = h.actor;
  w[3] = h.peer;
  w[4] = h.aux;
  w[5] = h.writer;
  w[6] = static_cast<u32>(h.correlation);
  w[7] = static_cast<u32>(h.correlation >> 32);
  w[8] = static_cast<u32>(h.hlc);
  w[9] = static_cast<u32>(h.hlc >> 32);
}

RK_HOST_DEVICE inline LlHeader LlHeaderFromWords(const u32* w) {
  LlHeader h;
  h.type = w[0];
  h.size = w[1];
  h.actor = w[2];
  h.peer = w[3];
  h.aux = w[4];
  h.writer = w[5];
  h.correlation = static_cast<u64>(w[6]) | static_cast<u64>(w[7]) << 32;
  h.hlc = static_cast<u64>(w[8]) | static_cast<u64>(w[9]) << 32;
  return h;
}

// Writes a record at `slot` with `flag`. Any order of the word stores is
// fine: the reader checks every word. One thread writes the whole record.
RK_HOST_DEVICE inline void LlWriteRecord(u64* slot, u32 flag, const LlHeader& h, const void* payload) {
  u32 hw[kLlHeaderWords];
  LlHeaderToWords(h, hw);
  for (u32 i = 0; i < kLlHeaderWords; i += 2) {
    StoreRelaxedSysPair(slot + i, LlWord(hw[i], flag), LlWord(hw[i + 1], flag));
  }
  const u8* bytes = static_cast<const u8*>(payload);
  const u32 full_words = h.size / 4;
  u64* out = slot + kLlHeaderWords;
  if ((reinterpret_cast<u64>(bytes) & 3) == 0) {
    const u32* w = reinterpret_cast<const u32*>(bytes);
    u32 i = 0;
    for (; i + 1 < full_words; i += 2) StoreRelaxedSysPair(out + i, LlWord(w[i], flag), LlWord(w[i + 1], flag));
    for (; i < full_words; ++i) StoreRelaxedSys(out + i, LlWord(w[i], flag));
  } else {
    for (u32 i = 0; i < full_words; ++i) {
      const u32 v = static_cast<u32>(bytes[4 * i]) | static_cast<u32>(bytes[4 * i + 1]) << 8 |
                    static_cast<u32>(bytes[4 * i + 2]) << 16 | static_cast<u32>(bytes[4 * i + 3]) << 24;
      StoreRelaxedSys(out + i, LlWord(v, flag));
    }
  }
  const u32 rest = h.size & 3;
  if (rest != 0) {
    u32 v = 0;
    for (u32 b = 0; b < rest; ++b) v |= static_cast<u32>(bytes[4 * full_words + b]) << (8 * b);
    StoreRelaxedSys(out + full_words, LlWord(v, flag));
  }
}

enum class LlReadResult : u32 {
  kNotReady = 0,  // some word of the record is not written yet
  kReady = 1,     // the header and payload were copied out
  kCorrupt = 2,   // the header is complete but names a size the slot can't hold
};

// The two halves of reading a record at `slot` whose words must all show
// `flag`: the header, then `size` bytes of payload into `payload` (whole
// words). Each returns false while a word it needs is not written yet.
RK_HOST_DEVICE inline bool LlTryReadHeader(const u64* slot, u32 flag, LlHeader* h) {
  u32 hw[kLlHeaderWords];
  for (u32 i = 0; i < kLlHeaderWords; i += 2) {
    u64 a, b;
    LoadRelaxedSysPair(slot + i, &a, &b);
    if (LlWordFlag(a) != flag || LlWordFlag(b) != flag) return false;
    hw[i] = LlData(a);
    hw[i + 1] = LlData(b);
  }
  *h = LlHeaderFromWords(hw);
  return true;
}
RK_HOST_DEVICE inline bool LlTryReadPayload(const u64* slot, u32 flag, u32 size, void* payload) {
  const u32 words = (size + 3) / 4;
  u32* out = static_cast<u32*>(payload);
  const u64* in = slot + kLlHeaderWords;
  for (u32 i = 0; i < words; ++i) {
    const u64 w = LoadRelaxedSys(in + i);
    if (LlWordFlag(w) != flag) return false;
    out[i] = LlData(w);
  }
  return true;
}

// Reads the record at `slot` if every word shows `flag`. Copies the header to
// `*h` and the payload (`h->size` bytes) to `payload`, which must hold
// `max_payload` bytes rounded up to 4.
RK_HOST_DEVICE inline LlReadResult LlTryReadRecord(const u64* slot, u32 flag, u32 max_payload, LlHeader* h,
                                                  void* payload) {
  if (!LlTryReadHeader(slot, flag, h)) return LlReadResult::kNotReady;
  if (h->size > max_payload) return LlReadResult::kCorrupt;
  return LlTryReadPayload(slot, flag, h->size, payload) ? LlReadResult::kReady : LlReadResult::kNotReady;
}

// Consumer only, after reading a record and before releasing its slot.
// A record rewrites only the words it uses, and flags repeat every 2^31 laps:
// a word no record touched for that long would show the current flag again
// and be taken as part of a record still being written. So once every 2^30
// laps (LlStampingLap) the consumer stamps the slot's unused words with the
// current flag; the release of `head` orders these stores before the next
// producer's.
RK_HOST_DEVICE inline void LlStampUnusedWords(u64* slot, u32 slot_words, u32 flag, u32 record_size) {
  if (!LlStampingLap(flag)) return;
  for (u32 i = kLlHeaderWords + (record_size + 3) / 4; i < slot_words; ++i) StoreRelaxedSys(slot + i, LlWord(0, flag));
}

// ---- Variable-length rings (host → worker) ----
//
// A host → worker ring counts its positions in units of kLlUnitWords words,
// not in records: a record takes as many consecutive units as its header and
// payload need, so a 64-byte message takes two units (256 bytes) however
// large the program's largest message is, and one read of a few units over
// the bus brings several small records. A record never wraps around the end
// of the ring: when it would, the producer claims the units up to the end
// as well and writes a skip record there (type kLlSkipType, size
// kLlSkipSize, `aux` = the units skipped, which run exactly to the end of
// the ring). Every word of a record carries the flag of its first unit,
// which is also the flag of its last (no wrap). The full check against the
// consumer's `head` and the release of units are as for fixed slots, in
// units.
//
// Producers claim a record's units in the ring itself (LlTryClaimUnits): a
// compare-and-swap on the record's size word (word 1) from whatever an
// earlier lap left there to the size with this lap's flag. That one
// instruction both takes the units and tells the reader how far the record
// goes, before any other word of it is written. So a producer preempted in
// the middle of its record holds up only that record: the reader, which
// sees the size, can pass over it and take the complete records behind it
// (rt_poller.cuh, "holes"). Producers find the end of the claimed records
// from a shared hint, passing over claims they find. A record the reader
// took out of order has its type word stamped kLlTakenType, so that a walk
// of what was never taken (Stop) passes over it.
inline constexpr u32 kLlUnitWords = 16;
inline constexpr u32 kLlSkipType = 0xFFFFFFFFu;
inline constexpr u32 kLlSkipSize = 0xFFFFFFFFu;
inline constexpr u32 kLlTakenType = 0xFFFFFFFEu;

// Units of a record with `size` payload bytes.
RK_HOST_DEVICE constexpr u32 LlRecordUnits(u32 size) {
  return (kLlHeaderWords + (size + 3) / 4 + kLlUnitWords - 1) / kLlUnitWords;
}

// The skip record at `unit` (the first of `units` padding units).
RK_HOST_DEVICE inline void LlWriteSkip(u64* unit, u32 flag, u32 units) {
  LlHeader h{};
  h.type = kLlSkipType;
  h.size = kLlSkipSize;
  h.aux = units;
  u32 hw[kLlHeaderWords];
  LlHeaderToWords(h, hw);
  for (u32 i = 0; i < kLlHeaderWords; i += 2) StoreRelaxedSysPair(unit + i, LlWord(hw[i], flag), LlWord(hw[i + 1], flag));
}

// The units that a record whose size word (its claim) reads `size` takes at
// unit `pos`, or 0 if that is corrupt: a payload over `max_payload`, a
// record that would wrap, a skip at the start of a lap. kLlSkipSize: a skip,
// which runs to the ring's end.
RK_HOST_DEVICE inline u32 LlClaimExtent(u32 size, u64 pos, u32 capacity_log2, u32 max_payload) {
  if (size == kLlSkipSize) {
    const u32 to_end = LlSkipBefore(pos, ~0u >> 1, capacity_log2);
    return to_end == (u64{1} << capacity_log2) ? 0u : to_end;
  }
  if (size > max_payload) return 0;
  const u32 units = LlRecordUnits(size);
  return LlSkipBefore(pos, units, capacity_log2) == 0 ? units : 0u;
}

// The units that the record (or skip) with header `h` at unit `pos` takes,
// or 0 if the header is corrupt: a skip that does not run exactly to the
// ring's end, a payload over `max_payload`, a record that would wrap. The
// host reader below and the GPU's poller (rt_poller.cuh) both judge records
// by this.
RK_HOST_DEVICE inline u32 LlRecordExtent(const LlHeader& h, u64 pos, u32 capacity_log2, u32 max_payload) {
  if ((h.type == kLlSkipType) != (h.size == kLlSkipSize)) return 0;
  if (h.type == kLlSkipType && h.aux != LlSkipBefore(pos, ~0u >> 1, capacity_log2)) return 0;
  return LlClaimExtent(h.size, pos, capacity_log2, max_payload);
}

// Whether `flag` names a later lap than `than` (flags compare modulo 2^31;
// an unwritten word, flag 0, is never later).
RK_HOST_DEVICE constexpr bool LlLapLater(u32 flag, u32 than) {
  return (flag & 0x80000000u) != 0 && static_cast<i32>((flag - than) << 1) > 0;
}

#if !RK_ON_DEVICE
// Host producers only (the host → worker rings).
//
// Claims the units of a record with `size` payload bytes (LlRecordUnits)
// in the ring at `slots`, and before them, when the record would not fit
// before the ring's end, a skip to the end, which it writes. `hint` is the
// producers' shared guess at the end of the claimed records (never past
// it), `cached_head` their shared copy of the consumer's `head`, refreshed
// from `head` only when the ring looks full. Returns false, having claimed
// nothing, when there is no room for the record (and its skip); else *pos
// is the record's first unit, whose size word is claimed, and the caller
// writes the record there (LlWriteRecord writes the size word again, with
// the same value). `floored`: no unit before `floor` is claimed here — the
// units before it were the ring's last owner's (runtime/ring_owner.h), and
// some of its records may not be visible yet.
inline bool LlTryClaimUnits(u64* slots, u32 capacity_log2, u32 max_payload, u64* hint, u64* cached_head,
                            const u64* head, u32 size, u64* pos, bool floored = false, u64 floor = 0) {
  const u64 capacity = u64{1} << capacity_log2;
  const u32 units = LlRecordUnits(size);
  const u64 start = __atomic_load_n(hint, __ATOMIC_RELAXED);
  u64 h = __atomic_load_n(cached_head, __ATOMIC_ACQUIRE);
  u64 t = start;
  for (;;) {
    // Every unit before the consumer's head was claimed (and taken).
    if (static_cast<i64>(t - h) < 0) t = h;
    if (floored && static_cast<i64>(t - floor) < 0) t = floor;
    const u32 pad = LlSkipBefore(t, units, capacity_log2);
    if (t - h + pad + units > capacity) {
      if (!LlRefreshCachedHead(cached_head, head, &h)) return false;
      continue;
    }
    u64* size_word = LlSlot(slots, kLlUnitWords, capacity_log2, t) + 1;
    const u32 flag = LlFlag(t, capacity_log2);
    u64 found = __atomic_load_n(size_word, __ATOMIC_RELAXED);
    if (LlWordFlag(found) == flag) {
      // Claimed by another producer: pass over it.
      const u32 extent = LlClaimExtent(LlData(found), t, capacity_log2, max_payload);
      if (extent == 0) return false;  // not a claim any producer makes
      t += extent;
      continue;
    }
    if (LlLapLater(LlWordFlag(found), flag)) {
      // The hint fell a lap behind (its producers were all preempted
      // between claim and hint): start again from the consumer's head.
      h = __atomic_load_n(head, __ATOMIC_ACQUIRE);
      t = h;
      continue;
    }
    const u32 claim = pad != 0 ? kLlSkipSize : size;
    if (!__atomic_compare_exchange_n(size_word, &found, LlWord(claim, flag), false, __ATOMIC_RELAXED,
                                     __ATOMIC_RELAXED)) {
      continue;  // another producer claimed it first: look again
    }
    if (pad != 0) {
      LlWriteSkip(size_word - 1, flag, pad);
      t += pad;
      continue;
    }
    // Forward, with a plain store: no locked instruction (on x86 one waits
    // for the previous record's stores to leave the store buffer). Two
    // producers storing at once may leave the hint behind the later claim;
    // a hint left behind is passed over by the next producer's walk, and it
    // is never past a claim that was made.
    if (static_cast<i64>(t + units - __atomic_load_n(hint, __ATOMIC_RELAXED)) > 0) {
      __atomic_store_n(hint, t + units, __ATOMIC_RELAXED);
    }
    *pos = t;
    return true;
  }
}

// ---- A ring with one writer (its owner: runtime/ring_owner.h). ----
//
// The owner's hint is the exact end of the records, so it claims nothing and
// reads no line of the ring: LlPlaceOwned finds the record's place from the
// hint and the cached head, LlWriteOwned streams it there whole (after a
// skip to the ring's end when it would wrap) and moves the hint. The owner
// publishes what it is about to write between the two (its intent), so that
// a thread that takes the ring from it can claim that place for it.

// The place of a record of `size` bytes: *start, where the skip (if any)
// begins, and *pad, its units (the record begins at *start + *pad). False
// when the ring lacks room for both.
inline bool LlPlaceOwned(u32 capacity_log2, const u64* hint, u64* cached_head, const u64* head, u32 size, u64* start,
                         u32* pad) {
  const u64 capacity = u64{1} << capacity_log2;
  const u32 units = LlRecordUnits(size);
  const u64 t = __atomic_load_n(hint, __ATOMIC_RELAXED);
  u64 h = __atomic_load_n(cached_head, __ATOMIC_ACQUIRE);
  for (;;) {
    // (An owner's hint is never behind the reader. A thread whose ring was
    // taken reads a shared hint, which may be: it finds no room, and learns
    // it lost the ring.)
    if (static_cast<i64>(t - h) < 0) return false;
    const u32 p = LlSkipBefore(t, units, capacity_log2);
    if (t - h + p + units <= capacity) {
      *start = t;
      *pad = p;
      return true;
    }
    if (!LlRefreshCachedHead(cached_head, head, &h)) return false;
  }
}

// A record's units, whole, with streamed stores: the header, the payload,
// and zero in every other word of the units (a word of no lap; the reader
// looks only at the record's own words). `unit` is the first; a record
// never wraps, so the units are contiguous. The header has an even number
// of words, so each store's pair of words is header or payload; the payload
// goes eight bytes (any alignment) to a load, which StoreStreamedLlPair
// interleaves with the flag into two words, and only its last pair, if
// partial, is gathered byte by byte. (No test per word and no copy through
// a buffer: this is most of a `Send`.)
static_assert(kLlHeaderWords % 2 == 0, "a pair of words is header or payload");
inline void LlStreamRecord(u64* unit, u32 flag, const LlHeader& h, const void* payload) {
  const u8* bytes = static_cast<const u8*>(payload);
  // A skip record is its header alone, in its first unit.
  const u32 size = h.type == kLlSkipType ? 0u : h.size;
  const StreamedFlag f = MakeStreamedFlag(flag);
  // The header, two words to a store (LlHeaderToWords's order), composed
  // from its fields: a header the caller has just built is in registers, or
  // its fields are loaded as they were stored.
  StoreStreamedLlPair(unit, h.type | static_cast<u64>(h.size) << 32, f);
  StoreStreamedLlPair(unit + 2, h.actor | static_cast<u64>(h.peer) << 32, f);
  StoreStreamedLlPair(unit + 4, h.aux | static_cast<u64>(h.writer) << 32, f);
  StoreStreamedLlPair(unit + 6, h.correlation, f);
  StoreStreamedLlPair(unit + 8, h.hlc, f);
  static_assert(kLlHeaderWords == 10, "five pairs of header words");
  u64* out = unit + kLlHeaderWords;
  const u8* const whole_end = bytes + (size & ~7u);
  for (; bytes != whole_end; bytes += 8, out += 2) {
    u64 two;
    __builtin_memcpy(&two, bytes, 8);  // little-endian: the first word low
    StoreStreamedLlPair(out, two, f);
  }
  if (const u32 rest = size & 7u; rest != 0) {
    u64 two = 0;
    for (u32 b = 0; b < rest; ++b) two |= static_cast<u64>(bytes[b]) << (8 * b);
    const u64 flagged = static_cast<u64>(flag) << 32;
    // A second word only if the payload reaches into it.
    StoreStreamedPair(out, (two & 0xFFFFFFFFu) | flagged, (two >> 32) | (rest > 4 ? flagged : 0));
    out += 2;
  }
  for (u64* const end = unit + LlRecordUnits(size) * kLlUnitWords; out != end; out += 2) StoreStreamedPair(out, 0, 0);
}

// Writes the record placed by LlPlaceOwned (and its skip) and moves the
// hint past it.
inline void LlWriteOwned(u64* slots, u32 capacity_log2, u64* hint, u64 start, u32 pad, const LlHeader& h,
                         const void* payload) {
  if (pad != 0) {
    LlHeader skip{};
    skip.type = kLlSkipType;
    skip.size = kLlSkipSize;
    skip.aux = pad;
    LlStreamRecord(LlSlot(slots, kLlUnitWords, capacity_log2, start), LlFlag(start, capacity_log2), skip, nullptr);
  }
  const u64 at = start + pad;
  LlStreamRecord(LlSlot(slots, kLlUnitWords, capacity_log2, at), LlFlag(at, capacity_log2), h, payload);
  __atomic_store_n(hint, at + LlRecordUnits(h.size), __ATOMIC_RELAXED);
}

// Claims the units at `pos` for a record (or skip, kLlSkipSize) of `size`
// whose writer is another thread — the ring's last owner, whose streamed
// stores may not be visible yet: the claim makes its extent visible to other
// producers and to the GPU now. The owner's own write of the word (the same
// value) may land before or after this.
inline void LlClaimFor(u64* slots, u32 capacity_log2, u64 pos, u32 size) {
  u64* size_word = LlSlot(slots, kLlUnitWords, capacity_log2, pos) + 1;
  const u32 flag = LlFlag(pos, capacity_log2);
  u64 found = __atomic_load_n(size_word, __ATOMIC_RELAXED);
  while (LlWordFlag(found) != flag) {
    if (__atomic_compare_exchange_n(size_word, &found, LlWord(size, flag), false, __ATOMIC_RELAXED,
                                    __ATOMIC_RELAXED)) {
      return;
    }
  }
}
#endif  // !RK_ON_DEVICE

// ---- Hole mode's choice (rt_poller.cuh, "Holes"). ----
//
// What one look found at an open hole, or at the record at the head: whether
// it is whole, and its writer tag (LlHeader::writer) where that word is
// written.
struct LlHoleLook {
  u32 whole;
  u32 writer;        // 0: a record written in order (claimed, then word by word)
  u32 writer_known;  // the writer word carries the record's lap
};

// Which record hole mode takes next: of `holes` open holes (looks[0..holes),
// in ring order) and the record at the head (looks[holes]), the first in
// ring order that is whole and may go first; `holes` + 1 for none.
// A record written in order (writer 0) may: its writer claimed it only once
// its earlier records were whole (the caller looks at the head first, then
// at the holes last first, each look after the one before it). A streamed
// record (writer w, LlStreamRecord) may not while an earlier hole is w's or
// not yet known to be another's: its owner's stores become visible in any
// order.
RK_HOST_DEVICE inline u32 LlHolePick(const LlHoleLook* looks, u32 holes) {
  for (u32 i = 0; i <= holes; ++i) {
    if (!looks[i].whole) continue;
    bool blocked = false;
    if (looks[i].writer != 0) {
      for (u32 j = 0; j < i; ++j) {
        if (!looks[j].writer_known || looks[j].writer == looks[i].writer) blocked = true;
      }
    }
    if (!blocked) return i;
  }
  return holes + 1;
}

// The end of the claimed records: from `from` (a record's start at or after
// the consumer's head, such as the producers' hint) past every claim.
RK_HOST_DEVICE inline u64 LlClaimedEnd(const u64* slots, u32 capacity_log2, u32 max_payload, u64 from) {
  for (;;) {
    const u64 w = LoadRelaxedSys(LlSlot(slots, kLlUnitWords, capacity_log2, from) + 1);
    if (LlWordFlag(w) != LlFlag(from, capacity_log2)) return from;
    const u32 extent = LlClaimExtent(LlData(w), from, capacity_log2, max_payload);
    if (extent == 0) return from;
    from += extent;
  }
}

// Host-side reader of a variable-length ring (the GPU's poller reads the
// same format a window at a time). Reads the record at unit `pos` of `slots`
// if it is complete; a skip record comes back as kReady with
// h->type == kLlSkipType. *units: the units to advance past it.
RK_HOST_DEVICE inline LlReadResult LlTryReadUnits(const u64* slots, u32 capacity_log2, u64 pos, u32 max_payload,
                                                  LlHeader* h, void* payload, u32* units) {
  const u64* at = LlSlot(slots, kLlUnitWords, capacity_log2, pos);
  const u32 flag = LlFlag(pos, capacity_log2);
  if (!LlTryReadHeader(at, flag, h)) return LlReadResult::kNotReady;
  *units = LlRecordExtent(*h, pos, capacity_log2, max_payload);
  if (*units == 0) return LlReadResult::kCorrupt;
  if (h->type == kLlSkipType) return LlReadResult::kReady;
  return LlTryReadPayload(at, flag, h->size, payload) ? LlReadResult::kReady : LlReadResult::kNotReady;
}

// The variable-length form of LlStampUnusedWords: once every 2^30 laps
// (LlStampingLap), stamps the words of a consumed record's (or skip's) units
// that it did not write, `used` words being written from the start of its
// first unit.
RK_HOST_DEVICE inline void LlStampUnusedUnits(u64* unit, u32 units, u32 used, u32 flag) {
  if (!LlStampingLap(flag)) return;
  for (u32 i = used; i < units * kLlUnitWords; ++i) StoreRelaxedSys(unit + i, LlWord(0, flag));
}

// Gives slots before `new_head` back to the producers. Consumer only.
RK_HOST_DEVICE RK_FORCEINLINE void LlRelease(LlRingHeader* ring, u64 new_head) {
  StoreReleaseSys(&ring->head.value, new_head);
}

}  // namespace rk

#endif  // RINGKERNEL_DEVICE_LL_RING_H_
