// Copyright 2026 The RingKernel Authors.
//
// The device-memory mailbox (include/ringkernel/device/mailbox.h) driven by
// host threads under ThreadSanitizer: producer threads play the senders, each
// with its own MailboxCursor, reserving with MailboxReserve (one position or
// a batch) and writing with MailboxWrite; one consumer thread plays the
// owning worker, taking records at its head with MailboxTryTake, stamping
// them (MailboxStampUnused) and releasing lazily with MailboxRelease, exactly
// as the runtime's worker does. The code under test is the exact header
// NVRTC compiles for the GPU; on the host its atomics are GCC builtins and
// its LL pair stores and loads release and acquire, so TSan checks the plain
// payload area against the protocol's fences and the release of `head`.
//
// Each message says who sent it and its sequence number (the header's sender
// and correlation), and carries a payload whose size (0 to the mailbox's
// maximum: inline, or in the plain area) and bytes derive from both, written
// from source buffers at several alignments, so the consumer can prove that
// nothing was lost, duplicated, reordered per producer or torn. Producers
// also withdraw some positions (kMailVoid), as a sender does with a batch it
// cannot fill.
//
// The single-threaded tests pin down the rest: reservations of a full
// mailbox, partial batches and stale cursors; records that are incomplete,
// from an earlier lap or withdrawn; the shape of slots; and the stamping of
// unused inline words every 2^30 laps.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "tests/tsan_device_headers.h"

namespace rk {
namespace {

// A mailbox in line-aligned memory (filled with `fill` first, to show that
// MailboxInit clears what it must), initialised before any thread touches it.
class TestMailbox {
 public:
  TestMailbox(u32 capacity_log2, u32 max_payload, u64 start, u8 fill = 0)
      : log2_(capacity_log2), max_payload_(max_payload), start_(start), shape_(MailboxShapeFor(max_payload)) {
    bytes_ = MailboxBytes(capacity_log2, shape_.slot_bytes);
    const size_t rounded = AlignUp(bytes_, kLineBytes);
    memory_ = static_cast<u8*>(std::aligned_alloc(kLineBytes, rounded));
    std::memset(memory_, fill, rounded);
    box_ = reinterpret_cast<MailboxHeader*>(memory_);
    MailboxInit(box_, capacity_log2, shape_, start);
  }
  ~TestMailbox() { std::free(memory_); }
  TestMailbox(const TestMailbox&) = delete;
  TestMailbox& operator=(const TestMailbox&) = delete;

  MailboxHeader* box() const { return box_; }
  u32 log2() const { return log2_; }
  u64 capacity() const { return u64{1} << log2_; }
  u32 max_payload() const { return max_payload_; }
  u64 start() const { return start_; }
  const MailboxShape& shape() const { return shape_; }
  u32 inline_words() const { return shape_.inline_words; }
  u64 bytes() const { return bytes_; }
  const u8* memory() const { return memory_; }
  // Whether [p, p + n) lies inside the allocation.
  bool Contains(const void* p, u64 n) const {
    const u8* b = static_cast<const u8*>(p);
    return b >= memory_ && b + n <= memory_ + bytes_;
  }

  u64* Slot(u64 pos) const { return MailboxSlotAt(box_, log2_, shape_.slot_bytes, pos); }
  u8* Plain(u64 pos) const { return MailboxPlain(Slot(pos), shape_.inline_words); }
  u32 Flag(u64 pos) const { return LlFlag(pos, log2_); }
  u32 Reserve(u32 n, MailboxCursor* c, u64* first) { return MailboxReserve(box_, capacity(), n, c, first); }
  bool TryTake(u64 pos, bool wide, MailRecord* r, u32* inline_buf) const {
    return MailboxTryTake(Slot(pos), shape_.inline_words, Flag(pos), wide, r, inline_buf);
  }
  void Stamp(u64 pos, const MailHeader& h) { MailboxStampUnused(Slot(pos), shape_.inline_words, Flag(pos), h); }
  void Release(u64 new_head) { MailboxRelease(box_, new_head); }
  u64 tail() const { return LoadAcquireGpu(&box_->tail.value); }
  u64 head() const { return LoadAcquireGpu(&box_->head.value); }
  // The LL words (header and inline) of the slot of `pos`.
  std::vector<u64> Words(u64 pos) const {
    std::vector<u64> w(kMailHeaderWords + shape_.inline_words);
    for (u32 i = 0; i < w.size(); ++i) w[i] = LoadRelaxedGpu(Slot(pos) + i);
    return w;
  }

 private:
  u32 log2_;
  u32 max_payload_;
  u64 start_;
  MailboxShape shape_;
  u64 bytes_ = 0;
  u8* memory_ = nullptr;
  MailboxHeader* box_ = nullptr;
};

constexpr u32 kSentinel = 0xDEADBEEFu;
constexpr u64 kVoidCorrelation = ~u64{0};

// Message `seq` of `producer`: its size runs over every value from 0 to the
// maximum (17 is prime to every maximum used here), with the extremes and
// the largest inline and smallest plain sizes often.
u32 PayloadSize(u32 producer, u64 seq, const TestMailbox& m) {
  const u32 max = m.max_payload();
  const u32 inline_bytes = 4 * m.inline_words();
  switch (seq % 8) {
    case 0: return 0;
    case 1: return max;
    case 2: return std::min(inline_bytes, max);
    case 3: return std::min(inline_bytes + 1, max);
    default: return static_cast<u32>((seq * 17 + producer * 7) % (max + 1));
  }
}
u8 PayloadByte(u32 producer, u64 seq, u32 i) { return static_cast<u8>(producer * 31 + seq * 17 + i * 7 + (i >> 8)); }
u64 HlcOf(u32 producer, u64 seq) { return (u64{producer} << 40) ^ (seq * 0x9E3779B97F4A7C15ull); }

MailHeader HeaderFor(u32 producer, u64 seq, u32 size) {
  MailHeader h;
  h.type = 1 + static_cast<u32>(seq % 5);
  h.size = size;
  h.sender = producer;
  h.flags = 0;
  h.correlation = seq;
  h.hlc = HlcOf(producer, seq);
  return h;
}
MailHeader VoidHeader(u32 producer, u64 pos) {
  MailHeader h;
  h.type = 0;
  h.size = 0;
  h.sender = producer;
  h.flags = kMailVoid;
  h.correlation = kVoidCorrelation;
  h.hlc = pos;
  return h;
}

// Writes messages from a 16-byte aligned source buffer, at an offset of 0,
// 1, 2, 4 or 8 bytes: the aligned and unaligned paths of MailboxWrite, inline
// and plain.
class Sender {
 public:
  explicit Sender(u32 max_payload) : source_(max_payload / 16 + 2) {}
  void Write(TestMailbox& m, u64 pos, u32 producer, u64 seq) {
    static constexpr u32 kOffsets[] = {0, 1, 2, 4, 8};
    const u32 size = PayloadSize(producer, seq, m);
    u8* data = reinterpret_cast<u8*>(source_.data()) + kOffsets[(seq + producer) % 5];
    for (u32 i = 0; i < size; ++i) data[i] = PayloadByte(producer, seq, i);
    MailboxWrite(m.Slot(pos), m.inline_words(), m.Flag(pos), HeaderFor(producer, seq, size), data);
  }

 private:
  struct alignas(16) Chunk {
    u8 bytes[16];
  };
  std::vector<Chunk> source_;
};

void WriteVoid(TestMailbox& m, u64 pos, u32 producer) {
  MailboxWrite(m.Slot(pos), m.inline_words(), m.Flag(pos), VoidHeader(producer, pos), nullptr);
}

// "" if the record taken at `pos` (inline payload copied to `buf`, which was
// filled with kSentinel) is message `seq` of `producer` with `size` bytes of
// payload, intact; else what is wrong.
std::string CheckRecord(const TestMailbox& m, u64 pos, const MailRecord& r, const u32* buf, u32 producer, u64 seq,
                        u32 size) {
  const u32 words = (size + 3) / 4;
  const bool plain = words > m.inline_words();
  if (r.h.type != 1 + seq % 5) return "wrong type";
  if (r.h.size != size) return "wrong size " + std::to_string(r.h.size) + ", expected " + std::to_string(size);
  if (r.h.sender != producer) return "wrong sender";
  if (r.h.correlation != seq) return "wrong correlation";
  if (r.h.hlc != HlcOf(producer, seq)) return "wrong hlc";
  if (r.h.flags != (plain ? kMailPlain : 0u)) return "wrong flags " + std::to_string(r.h.flags);
  if (r.payload == nullptr) return "no payload";
  if (plain) {
    if (r.payload != m.Plain(pos)) return "a plain payload not in its slot's plain area";
    if (reinterpret_cast<uintptr_t>(r.payload) % kMaxMessageAlignment != 0) return "plain area misaligned";
    if (!m.Contains(r.payload, m.shape().plain_bytes)) return "plain area outside the mailbox";
  } else {
    if (r.payload != reinterpret_cast<const u8*>(buf)) return "an inline payload not in the owner's buffer";
    const u8* bytes = r.payload;
    for (u32 i = size; i < 4 * words; ++i) {
      if (bytes[i] != 0) return "padding byte " + std::to_string(i) + " is not zero";
    }
    if (words < kMailInlineMaxWords && buf[words] != kSentinel) return "the take wrote past the payload's last word";
  }
  for (u32 i = 0; i < size; ++i) {
    if (r.payload[i] != PayloadByte(producer, seq, i)) return "payload byte " + std::to_string(i) + " differs";
  }
  return "";
}
std::string CheckMessage(const TestMailbox& m, u64 pos, const MailRecord& r, const u32* buf, u32 producer, u64 seq) {
  return CheckRecord(m, pos, r, buf, producer, seq, PayloadSize(producer, seq, m));
}

// "" if the record taken at `pos` is a withdrawn position of `producer`.
std::string CheckVoid(const MailRecord& r, u64 pos, u32 producer) {
  if (r.h.flags != kMailVoid) return "wrong flags " + std::to_string(r.h.flags);
  if (r.payload != nullptr) return "a void record with a payload";
  if (r.h.sender != producer || r.h.type != 0 || r.h.size != 0 || r.h.correlation != kVoidCorrelation ||
      r.h.hlc != pos) {
    return "void header differs";
  }
  return "";
}

// Bounds every wait of a stress run, so that a protocol bug that stops
// progress fails the test instead of hanging it; `failed` stops all threads
// once one of them found an error.
struct Watchdog {
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  std::atomic<bool> failed{false};
  bool Expired() const { return failed.load() || std::chrono::steady_clock::now() > deadline; }
};

// The mailbox's words are atomics, so ThreadSanitizer cannot see an inline
// record overwritten too early. This log makes it visible: the owner marks
// each position it has finished with (plain store) before it releases it,
// and the producer that reserves the slot one lap later checks the mark
// (plain load) before writing. The protocol promises that the first happens
// before the second (the owner's release of `head`, the producer's acquire
// of it); if it did not, TSan would report a race, and a missing mark would
// fail the test. One entry per slot, 8 bytes each so that TSan tracks each
// on its own; an entry is next overwritten by the owner only after it took
// the record the checking producer wrote after its check.
class ConsumedLog {
 public:
  ConsumedLog(u64 start, u64 capacity) : start_(start), capacity_(capacity), last_(capacity, 0) {}
  void Consumed(u64 pos) { last_[pos & (capacity_ - 1)] = pos; }
  bool PreviousConsumed(u64 pos) const {
    if (pos - start_ < capacity_) return true;  // first lap: the slot held nothing
    return last_[pos & (capacity_ - 1)] == pos - capacity_;
  }

 private:
  u64 start_;
  u64 capacity_;
  std::vector<u64> last_;
};

struct ProducerStats {
  u64 sent = 0;
  u64 voids = 0;
  u64 full = 0;     // MailboxReserve returned 0
  u64 partial = 0;  // it returned fewer than asked for
  std::string error;
};

// Sends `count` messages, reserving 1 position at a time or (one time in
// three) a batch of up to `max_batch`; withdraws one reserved position in
// 16, and the unused rest of its last batch, with kMailVoid.
void Produce(TestMailbox* m, u32 producer, u64 count, u32 max_batch, MailboxCursor cursor, ConsumedLog* log,
             Watchdog* watchdog, ProducerStats* stats) {
  std::mt19937 rng(producer * 7919 + 1);
  Sender sender(m->max_payload());
  const auto fail = [&](const std::string& what) {
    stats->error = what;
    watchdog->failed = true;
  };
  u64 seq = 0;
  while (seq < count) {
    const u32 want = rng() % 3 == 0 ? 1 + static_cast<u32>(rng() % max_batch) : 1;
    u64 first = 0;
    const u32 got = m->Reserve(want, &cursor, &first);
    if (got > want) return fail("reserved more than asked for");
    if (got == 0) {
      if (watchdog->Expired()) return fail("gave up: the mailbox stayed full");
      ++stats->full;
      std::this_thread::yield();
      continue;
    }
    if (got < want) ++stats->partial;
    if (cursor.tail != first + got) return fail("the cursor does not expect the position after the reservation");
    for (u32 k = 0; k < got; ++k) {
      const u64 pos = first + k;
      if (!log->PreviousConsumed(pos)) {
        return fail("position " + std::to_string(pos) + " reuses a slot the owner has not finished with");
      }
      if (seq < count && rng() % 16 != 0) {
        sender.Write(*m, pos, producer, seq++);
        ++stats->sent;
      } else {
        WriteVoid(*m, pos, producer);
        ++stats->voids;
      }
    }
  }
}

struct ConsumerStats {
  u64 head = 0;  // the owner's head when it stopped
  u64 messages = 0;
  u64 voids = 0;
  u64 empty_polls = 0;
  u64 releases = 0;
  std::vector<u64> next_seq;  // per producer
  std::string error;
};

// The owner, as the runtime's worker serves a mailbox: takes records in
// position order until every producer's messages arrived, polling with
// one 16-byte load and wide alternately; stamps each record it took; releases when
// it finds the mailbox empty or a quarter of the capacity was consumed.
void Consume(TestMailbox* m, u32 producers, u64 per_producer, ConsumedLog* log, Watchdog* watchdog,
             ConsumerStats* stats) {
  stats->next_seq.assign(producers, 0);
  const u64 capacity = m->capacity();
  const u64 total = producers * per_producer;
  u64 head = m->start();
  u64 released = head;
  u64 polls = 0;
  alignas(16) u32 buf[kMailInlineMaxWords];
  const auto fail = [&](const std::string& what) {
    stats->error = "position " + std::to_string(head) + ": " + what;
    watchdog->failed = true;
  };
  while (stats->messages < total) {
    std::fill(std::begin(buf), std::end(buf), kSentinel);
    MailRecord r;
    const bool wide = (polls++ & 1) != 0;
    if (!m->TryTake(head, wide, &r, buf)) {
      ++stats->empty_polls;
      if (released != head) {
        m->Release(head);
        released = head;
        ++stats->releases;
      }
      if (watchdog->Expired()) return fail("gave up waiting");
      std::this_thread::yield();
      continue;
    }
    if (r.h.sender >= producers) return fail("unknown sender " + std::to_string(r.h.sender));
    if ((r.h.flags & kMailVoid) != 0) {
      const std::string bad = CheckVoid(r, head, r.h.sender);
      if (!bad.empty()) return fail(bad);
      ++stats->voids;
    } else {
      const u64 expected = stats->next_seq[r.h.sender];
      if (r.h.correlation != expected) {
        return fail("producer " + std::to_string(r.h.sender) + ": got message " + std::to_string(r.h.correlation) +
                    ", expected " + std::to_string(expected) + " (lost, duplicated or reordered)");
      }
      const std::string bad = CheckMessage(*m, head, r, buf, r.h.sender, expected);
      if (!bad.empty()) {
        return fail("producer " + std::to_string(r.h.sender) + " message " + std::to_string(expected) + ": " + bad);
      }
      ++stats->next_seq[r.h.sender];
      ++stats->messages;
    }
    log->Consumed(head);
    m->Stamp(head, r.h);
    ++head;
    if (head - released >= capacity / 4) {
      m->Release(head);
      released = head;
      ++stats->releases;
    }
  }
  if (released != head) m->Release(head);
  stats->head = head;
}

enum class Cursors {
  kZero,     // zero-initialised, as the runtime starts them
  kLongAgo,  // as if each producer had last sent to the mailbox long ago
};

struct StressConfig {
  u32 capacity_log2;
  u32 max_payload;
  u64 start;
  u32 producers;
  u64 per_producer;
  u32 max_batch;
  Cursors cursors;
};

// Runs producers against one owner and checks the outcome.
void RunStress(const StressConfig& c) {
  TestMailbox m(c.capacity_log2, c.max_payload, c.start);
  // Every stress mailbox has the inline words a wide poll loads.
  ASSERT_GE(m.inline_words(), 8u);
  const u64 total = c.producers * c.per_producer;
  Watchdog watchdog;
  ConsumedLog log(c.start, m.capacity());
  std::vector<ProducerStats> producer_stats(c.producers);
  ConsumerStats consumer_stats;
  std::thread consumer(Consume, &m, c.producers, c.per_producer, &log, &watchdog, &consumer_stats);
  std::vector<std::thread> producers;
  for (u32 p = 0; p < c.producers; ++p) {
    MailboxCursor cursor{};
    if (c.cursors == Cursors::kLongAgo) cursor = MailboxCursor{c.start - 1000 * (p + 1), c.start - 1000 * (p + 1)};
    producers.emplace_back(Produce, &m, p, c.per_producer, c.max_batch, cursor, &log, &watchdog, &producer_stats[p]);
  }
  for (std::thread& t : producers) t.join();
  consumer.join();

  for (u32 p = 0; p < c.producers; ++p) EXPECT_EQ(producer_stats[p].error, "") << "producer " << p;
  ASSERT_EQ(consumer_stats.error, "");
  EXPECT_EQ(consumer_stats.messages, total);
  for (u32 p = 0; p < c.producers; ++p) EXPECT_EQ(consumer_stats.next_seq[p], c.per_producer) << "producer " << p;

  // The owner stopped at the last message; positions a producer withdrew
  // after its last message may follow it. Everything there is void.
  u64 head = consumer_stats.head;
  u64 voids = consumer_stats.voids;
  const u64 tail = m.tail();
  alignas(16) u32 buf[kMailInlineMaxWords];
  while (head != tail) {
    MailRecord r;
    ASSERT_TRUE(m.TryTake(head, false, &r, buf)) << "position " << head << " was reserved but never written";
    ASSERT_LT(r.h.sender, c.producers);
    ASSERT_EQ(CheckVoid(r, head, r.h.sender), "") << "position " << head;
    ++voids;
    ++head;
  }
  m.Release(head);

  // Every position was used exactly once: head and tail both moved by the
  // number of records (modulo 2^64), and nothing is left.
  u64 sent = 0;
  u64 withdrawn = 0;
  u64 full = 0;
  u64 partial = 0;
  for (const ProducerStats& s : producer_stats) {
    sent += s.sent;
    withdrawn += s.voids;
    full += s.full;
    partial += s.partial;
  }
  EXPECT_EQ(sent, total);
  EXPECT_EQ(voids, withdrawn);
  EXPECT_EQ(tail, c.start + total + withdrawn);
  EXPECT_EQ(m.head(), tail);
  std::printf("  %llu messages, %llu void; producers found it full %llu times, got part of a batch %llu times; "
              "the owner found it empty %llu times and released %llu times\n",
              static_cast<unsigned long long>(total), static_cast<unsigned long long>(withdrawn),
              static_cast<unsigned long long>(full), static_cast<unsigned long long>(partial),
              static_cast<unsigned long long>(consumer_stats.empty_polls),
              static_cast<unsigned long long>(consumer_stats.releases));
}

// Runs MailboxReserve on another thread and waits up to `patience` for it to
// return. A reservation takes microseconds; one that spins inside
// MailboxReserve is made to return (by moving the tail to where a zero
// cursor expects it: the mailbox is then unusable) and reported as nullopt.
std::optional<u32> ReserveWithZeroCursorOrGiveUp(TestMailbox& m, u32 n, u64* first, MailboxCursor* c,
                                                 std::chrono::milliseconds patience) {
  *c = MailboxCursor{};
  std::atomic<bool> done{false};
  u32 got = 0;
  std::thread t([&] {
    got = m.Reserve(n, c, first);
    done = true;
  });
  const auto deadline = std::chrono::steady_clock::now() + patience;
  while (!done && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  const bool returned = done;
  if (!returned) StoreRelaxedGpu(&m.box()->tail.value, 0);
  t.join();
  if (!returned) return std::nullopt;
  return got;
}

TEST(MailboxTest, ShapesHoldTheirRecords) {
  struct Want {
    u32 max_payload, inline_words, plain_bytes, slot_bytes;
  };
  // slot_bytes = 8 * (8 + inline_words) + plain_bytes.
  for (const Want& w : {Want{0, 0, 0, 64}, Want{1, 2, 0, 80}, Want{8, 2, 0, 80}, Want{9, 4, 0, 96},
                        Want{37, 10, 0, 144}, Want{256, 64, 0, 576}, Want{257, 32, 272, 592},
                        Want{1000, 32, 1008, 1328}, Want{4096, 32, 4096, 4416}}) {
    const MailboxShape s = MailboxShapeFor(w.max_payload);
    EXPECT_EQ(s.inline_words, w.inline_words) << w.max_payload;
    EXPECT_EQ(s.plain_bytes, w.plain_bytes) << w.max_payload;
    EXPECT_EQ(s.slot_bytes, w.slot_bytes) << w.max_payload;
  }
  static_assert(kMailInlineMaxWords * 4 == kMailInlineMax, "the owner's buffer holds the largest inline payload");
  for (u32 p = 0; p <= 5000; ++p) {
    const MailboxShape s = MailboxShapeFor(p);
    ASSERT_EQ(s.inline_words % 2, 0u) << p;  // the plain area starts 16-byte aligned
    ASSERT_EQ(s.plain_bytes % 16, 0u) << p;
    ASSERT_EQ(s.slot_bytes, AlignUp(8 * (kMailHeaderWords + s.inline_words) + s.plain_bytes, 16)) << p;
    ASSERT_EQ(s.slot_bytes % 16, 0u) << p;
    if (p <= kMailInlineMax) {
      // Everything inline, in the fewest words that hold it.
      ASSERT_EQ(s.plain_bytes, 0u) << p;
      ASSERT_GE(4 * s.inline_words, p) << p;
      ASSERT_LT(4 * s.inline_words, p + 8) << p;
      ASSERT_LE(s.inline_words, kMailInlineMaxWords) << p;
    } else {
      // Up to kMailInlineSplit bytes inline, anything larger in the plain area.
      ASSERT_EQ(4 * s.inline_words, kMailInlineSplit) << p;
      ASSERT_GE(s.plain_bytes, p) << p;
      ASSERT_LT(s.plain_bytes, p + 16) << p;
    }
  }
}

TEST(MailboxTest, SlotsTileTheAllocationAndInitClearsThem) {
  for (u32 max_payload : {0u, 37u, 1000u}) {
    // Memory full of 0xFF bytes: every word would carry flag 0xFFFFFFFF, a
    // real lap's flag, if MailboxInit did not clear it.
    TestMailbox m(3, max_payload, 0, 0xFF);
    const MailboxShape& s = m.shape();
    EXPECT_EQ(m.bytes(), sizeof(MailboxHeader) + 8 * s.slot_bytes) << max_payload;
    EXPECT_EQ(m.box()->capacity_log2, 3u);
    EXPECT_EQ(m.box()->slot_bytes, s.slot_bytes);
    EXPECT_EQ(m.box()->inline_words, s.inline_words);
    EXPECT_EQ(m.box()->plain_bytes, s.plain_bytes);
    EXPECT_EQ(m.tail(), 0u);
    EXPECT_EQ(m.head(), 0u);
    const u8* first_slot = m.memory() + sizeof(MailboxHeader);
    for (u64 pos = 0; pos < 8; ++pos) {
      u64* slot = m.Slot(pos);
      EXPECT_EQ(reinterpret_cast<const u8*>(slot), first_slot + pos * s.slot_bytes) << pos;
      EXPECT_TRUE(m.Contains(slot, s.slot_bytes)) << pos;
      EXPECT_EQ(reinterpret_cast<uintptr_t>(slot) % 16, 0u) << pos;
      EXPECT_EQ(reinterpret_cast<uintptr_t>(m.Plain(pos)) % kMaxMessageAlignment, 0u) << pos;
      EXPECT_EQ(m.Plain(pos) + s.plain_bytes, reinterpret_cast<const u8*>(slot) + s.slot_bytes) << pos;
      EXPECT_EQ(m.Slot(pos + 8), slot);
      EXPECT_EQ(m.Slot(pos + 8 * 1000003), slot);
      for (u64 w : m.Words(pos)) EXPECT_EQ(w, 0u) << "slot " << pos;
      alignas(16) u32 buf[kMailInlineMaxWords];
      MailRecord r;
      EXPECT_FALSE(m.TryTake(pos, false, &r, buf)) << pos;
      EXPECT_FALSE(m.TryTake(pos + 8 * 0x7FFFFFFFull, false, &r, buf)) << "lap 2^31 - 1 has flag 0xFFFFFFFF";
    }
    EXPECT_EQ(m.Slot(~u64{0}), m.Slot(7));
  }
}

TEST(MailboxTest, FullMailboxIsReportedAndNeverOverwritten) {
  constexpr u64 kStart = 1000;
  TestMailbox m(4, 1000, kStart);  // 16 slots, inline and plain payloads
  Sender sender(m.max_payload());
  MailboxCursor c{};

  // Fill without consuming: exactly the capacity is accepted, one at a time.
  u64 accepted = 0;
  for (;;) {
    u64 pos = 12345;
    const u32 got = m.Reserve(1, &c, &pos);
    if (got == 0) {
      EXPECT_EQ(pos, 12345u) << "a refused reservation must not report a position";
      break;
    }
    ASSERT_EQ(got, 1u);
    ASSERT_EQ(pos, kStart + accepted);
    sender.Write(m, pos, 0, accepted);
    ASSERT_LE(++accepted, 100u) << "a full mailbox kept accepting";
  }
  EXPECT_EQ(accepted, 16u);
  EXPECT_EQ(c.tail, kStart + 16);
  EXPECT_EQ(c.head, kStart);
  EXPECT_EQ(m.tail(), kStart + 16);
  u64 unused = 0;
  EXPECT_EQ(m.Reserve(1, &c, &unused), 0u);
  EXPECT_EQ(m.Reserve(5, &c, &unused), 0u);
  MailboxCursor other{};
  EXPECT_EQ(m.Reserve(3, &other, &unused), 0u);
  EXPECT_EQ(m.tail(), kStart + 16);

  // The owner takes three and releases them: a batch of five gets the three
  // free positions.
  alignas(16) u32 buf[kMailInlineMaxWords];
  for (u64 i = 0; i < 3; ++i) {
    std::fill(std::begin(buf), std::end(buf), kSentinel);
    MailRecord r;
    ASSERT_TRUE(m.TryTake(kStart + i, true, &r, buf));
    EXPECT_EQ(CheckMessage(m, kStart + i, r, buf, 0, i), "") << i;
  }
  m.Release(kStart + 3);
  u64 first = 0;
  ASSERT_EQ(m.Reserve(5, &c, &first), 3u);
  EXPECT_EQ(first, kStart + 16);
  EXPECT_EQ(c.tail, kStart + 19);
  EXPECT_EQ(c.head, kStart + 3);
  for (u64 k = 0; k < 3; ++k) sender.Write(m, first + k, 1, k);
  EXPECT_EQ(m.Reserve(1, &c, &unused), 0u);

  // Drain: the 13 old messages are intact, then the 3 new ones.
  for (u64 i = 3; i < 19; ++i) {
    std::fill(std::begin(buf), std::end(buf), kSentinel);
    MailRecord r;
    ASSERT_TRUE(m.TryTake(kStart + i, i % 2 != 0, &r, buf)) << i;
    if (i < 16) {
      EXPECT_EQ(CheckMessage(m, kStart + i, r, buf, 0, i), "") << i;
    } else {
      EXPECT_EQ(CheckMessage(m, kStart + i, r, buf, 1, i - 16), "") << i;
    }
  }
  MailRecord r;
  EXPECT_FALSE(m.TryTake(kStart + 19, false, &r, buf));
  m.Release(kStart + 19);
  EXPECT_EQ(m.Reserve(100, &c, &first), 16u);
  EXPECT_EQ(first, kStart + 19);
}

TEST(MailboxTest, BatchesTakeWhatFits) {
  TestMailbox m(3, 40, 0);  // 8 slots
  MailboxCursor c{};
  u64 first = 0;
  EXPECT_EQ(m.Reserve(5, &c, &first), 5u);
  EXPECT_EQ(first, 0u);
  EXPECT_EQ(m.Reserve(5, &c, &first), 3u);
  EXPECT_EQ(first, 5u);
  EXPECT_EQ(m.Reserve(1, &c, &first), 0u);
  EXPECT_EQ(m.tail(), 8u);

  TestMailbox big_request(3, 40, 77);
  MailboxCursor d{};
  EXPECT_EQ(big_request.Reserve(100, &d, &first), 8u);
  EXPECT_EQ(first, 77u);
  EXPECT_EQ(d.tail, 85u);
}

// A cursor is only a guess. Its tail may be behind the real one (other
// producers reserved since) and its head behind the owner's (the owner
// released since): the reservation learns the tail from its failed
// compare-and-swap, and reads the head only when the mailbox looks too full
// for the request by the head it has. Positions are kS + offsets; the
// comments give the cursors as {tail, head} offsets.
TEST(MailboxTest, StaleCursorsReserveCorrectly) {
  constexpr u64 kS = 5000;
  TestMailbox m(3, 40, kS);  // 8 slots
  alignas(16) u32 buf[kMailInlineMaxWords];
  u64 head = kS;
  // Who reserved each position (below): A is 0, B 1, C 2, D 3.
  constexpr u32 kReservedBy[16] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 0, 3, 3, 3, 3, 3};
  // The owner takes `n` records, all void, and releases them.
  const auto take = [&](u64 n) {
    for (u64 i = 0; i < n; ++i, ++head) {
      MailRecord r;
      ASSERT_TRUE(m.TryTake(head, head % 2 != 0, &r, buf)) << head - kS;
      EXPECT_EQ(CheckVoid(r, head, kReservedBy[head - kS]), "") << head - kS;
    }
    m.Release(head);
  };
  u64 first = 0;
  const auto reserve = [&](u32 n, MailboxCursor* c, u32 producer) {
    const u32 got = m.Reserve(n, c, &first);
    for (u32 k = 0; k < got; ++k) WriteVoid(m, first + k, producer);
    EXPECT_LE(m.tail() - m.head(), m.capacity()) << "reserved past the capacity";
    return got;
  };

  // A (zero-initialised) fills the mailbox one position at a time: it learns
  // the tail from the failed compare-and-swap, then the head (kS: it looked
  // full by head 0). Then it is refused, and has read the head again.
  MailboxCursor a{};
  for (u64 i = 0; i < 8; ++i) {
    ASSERT_EQ(reserve(1, &a, 0), 1u);
    EXPECT_EQ(first, kS + i);
  }
  EXPECT_EQ(a.tail, kS + 8);
  EXPECT_EQ(a.head, kS);
  EXPECT_EQ(reserve(1, &a, 0), 0u);
  EXPECT_EQ(a.tail, kS + 8);

  take(3);  // head 3

  // B {0, 0}: the failed compare-and-swap says tail 8, full by head 0; it
  // reads head 3 and takes 8.
  MailboxCursor b{kS, kS};
  ASSERT_EQ(reserve(1, &b, 1), 1u);
  EXPECT_EQ(first, kS + 8);
  EXPECT_EQ(b.tail, kS + 9);
  EXPECT_EQ(b.head, kS + 3);

  // C {2, 3}: its tail is older than its head; it reloads the tail (9) and
  // takes 9 without reading the head (3 leaves room).
  MailboxCursor c{kS + 2, kS + 3};
  ASSERT_EQ(reserve(1, &c, 2), 1u);
  EXPECT_EQ(first, kS + 9);
  EXPECT_EQ(c.tail, kS + 10);
  EXPECT_EQ(c.head, kS + 3);

  // A {8, 0}: full by head 0; reads head 3; its compare-and-swap at 8 fails
  // (tail 10); by head 3 one position is left: 10. Now full.
  ASSERT_EQ(reserve(2, &a, 0), 1u);
  EXPECT_EQ(first, kS + 10);
  EXPECT_EQ(a.tail, kS + 11);
  EXPECT_EQ(a.head, kS + 3);
  EXPECT_EQ(reserve(1, &b, 1), 0u);
  EXPECT_EQ(reserve(1, &c, 2), 0u);
  EXPECT_EQ(m.tail(), kS + 11);

  take(5);  // head 8

  // D {11, 5}: its head is stale but leaves room for one, so it takes 11
  // without reading the head.
  MailboxCursor d{kS + 11, kS + 5};
  ASSERT_EQ(reserve(1, &d, 3), 1u);
  EXPECT_EQ(first, kS + 11);
  EXPECT_EQ(d.head, kS + 5);
  // {12, 5} has room for one, not two: it reads head 8 and takes 12, 13.
  ASSERT_EQ(reserve(2, &d, 3), 2u);
  EXPECT_EQ(first, kS + 12);
  EXPECT_EQ(d.head, kS + 8);
  // {14, 8}: two left of five asked for.
  ASSERT_EQ(reserve(5, &d, 3), 2u);
  EXPECT_EQ(first, kS + 14);
  EXPECT_EQ(d.tail, kS + 16);
  EXPECT_EQ(reserve(1, &d, 3), 0u);

  take(8);  // head 16: every position was written once, in order
  MailRecord r;
  EXPECT_FALSE(m.TryTake(head, false, &r, buf));
  EXPECT_EQ(m.tail(), kS + 16);
}

// A zero-initialised cursor is valid (mailbox.h), wherever the mailbox's
// positions are: positions wrap modulo 2^64, and a mailbox may be started
// anywhere (MailboxInit's `start`). Its first reservation, of one position or
// of a batch larger than the capacity, into an empty mailbox of 8 slots.
TEST(MailboxTest, ZeroCursorReservesAnywhereInThePositionSpace) {
  bool all_returned = true;
  for (u64 start : {u64{0}, u64{1000}, (u64{1} << 63) - 1, u64{1} << 63, ~u64{0} - 1000, ~u64{0}}) {
    for (u32 n : {1u, 16u}) {
      TestMailbox m(3, 40, start);
      MailboxCursor c{};
      u64 first = 0;
      const std::optional<u32> got =
          ReserveWithZeroCursorOrGiveUp(m, n, &first, &c, std::chrono::milliseconds(1000));
      if (!got.has_value()) {
        all_returned = false;
        ADD_FAILURE() << "MailboxReserve(n = " << n << ") with a zero-initialised cursor did not return for an "
                      << "empty mailbox started at " << start << " (tail and head " << start << ")";
        continue;
      }
      const u32 want = std::min(n, 8u);
      EXPECT_EQ(*got, want) << "MailboxReserve(n = " << n << ") with a zero-initialised cursor, empty mailbox "
                            << "started at " << start;
      if (*got != want) continue;
      EXPECT_EQ(first, start) << start;
      EXPECT_EQ(c.tail, start + want) << start;
      EXPECT_EQ(m.tail(), start + want) << start;
    }
  }
  // Producers with zero-initialised cursors, through the wrap (only where
  // the reservation returns at all: else the stress would hang).
  if (!all_returned) return;
  RunStress({.capacity_log2 = 3,
             .max_payload = 200,
             .start = ~u64{0} - 700,
             .producers = 3,
             .per_producer = 1500,
             .max_batch = 3,
             .cursors = Cursors::kZero});
}

// A record is taken only once every word it needs shows the position's flag:
// with any one of its header or inline payload words missing (the slot
// holding the previous lap's record, different in every word), it is not.
TEST(MailboxTest, IncompleteRecordIsNotTaken) {
  TestMailbox m(1, 40, 0);  // 2 slots of 10 inline words
  alignas(16) u32 buf[kMailInlineMaxWords];
  u64 pos = 2;
  for (u32 size : {0u, 1u, 4u, 9u, 40u}) {
    const u32 words = (size + 3) / 4;
    std::vector<u8> payload(size);
    for (u32 i = 0; i < size; ++i) payload[i] = PayloadByte(1, size, i);
    const MailHeader h = HeaderFor(1, size, size);
    u32 hw[kMailHeaderWords];
    MailHeaderToWords(h, hw);
    for (u32 missing = 0; missing < kMailHeaderWords + words; ++missing, pos += 2) {
      // The previous lap: a full-size record of another producer.
      Sender(40).Write(m, pos - 2, 7, 1);
      const u32 flag = m.Flag(pos);
      const auto store = [&](u32 w) {
        const u32 data = w < kMailHeaderWords ? hw[w] : PayloadWord(payload.data(), size, w - kMailHeaderWords);
        StoreRelaxedGpu(m.Slot(pos) + w, LlWord(data, flag));
      };
      for (u32 w = 0; w < kMailHeaderWords + words; ++w) {
        if (w != missing) store(w);
      }
      MailRecord r;
      EXPECT_FALSE(m.TryTake(pos, false, &r, buf)) << "size " << size << ", word " << missing << " missing";
      EXPECT_FALSE(m.TryTake(pos, true, &r, buf)) << "size " << size << ", word " << missing << " missing";
      store(missing);
      for (bool wide : {false, true}) {
        std::fill(std::begin(buf), std::end(buf), kSentinel);
        ASSERT_TRUE(m.TryTake(pos, wide, &r, buf)) << "size " << size << ", word " << missing << " completed";
        EXPECT_EQ(CheckRecord(m, pos, r, buf, 1, size, size), "") << "size " << size;
      }
    }
  }
  // A complete header naming an inline payload larger than the slot holds
  // (never written so) is not taken either.
  MailHeader big = HeaderFor(1, 0, 4 * m.inline_words() + 1);
  u32 hw[kMailHeaderWords];
  MailHeaderToWords(big, hw);
  for (u32 w = 0; w < kMailHeaderWords + m.inline_words(); ++w) {
    StoreRelaxedGpu(m.Slot(pos) + w, LlWord(w < kMailHeaderWords ? hw[w] : 0, m.Flag(pos)));
  }
  MailRecord r;
  EXPECT_FALSE(m.TryTake(pos, true, &r, buf));
}

// A plain-area record is published by its header alone.
TEST(MailboxTest, IncompletePlainRecordIsNotTaken) {
  TestMailbox m(1, 1000, 0);
  alignas(16) u32 buf[kMailInlineMaxWords];
  const u32 size = 777;
  MailHeader published = HeaderFor(2, 5, size);
  published.flags = kMailPlain;
  u32 hw[kMailHeaderWords];
  MailHeaderToWords(published, hw);
  u64 pos = 2;
  for (u32 missing = 0; missing < kMailHeaderWords; ++missing, pos += 2) {
    Sender(1000).Write(m, pos - 2, 7, 0);  // the previous lap: an inline record
    for (u32 i = 0; i < size; ++i) m.Plain(pos)[i] = PayloadByte(2, 5, i);
    for (u32 w = 0; w < kMailHeaderWords; ++w) {
      if (w != missing) StoreRelaxedGpu(m.Slot(pos) + w, LlWord(hw[w], m.Flag(pos)));
    }
    MailRecord r;
    EXPECT_FALSE(m.TryTake(pos, false, &r, buf)) << "header word " << missing << " missing";
    EXPECT_FALSE(m.TryTake(pos, true, &r, buf)) << "header word " << missing << " missing";
    StoreRelaxedGpu(m.Slot(pos) + missing, LlWord(hw[missing], m.Flag(pos)));
    ASSERT_TRUE(m.TryTake(pos, missing % 2 != 0, &r, buf)) << "header word " << missing << " completed";
    EXPECT_EQ(CheckRecord(m, pos, r, buf, 2, 5, size), "");
  }
}

// A slot holds the record of an earlier lap until the next one is written:
// its flag never matches the current position's, also where the positions
// wrap at 2^64.
TEST(MailboxTest, RecordsOfEarlierLapsAreNotTaken) {
  for (u64 start : {u64{0}, ~u64{0} - 5}) {
    TestMailbox m(2, 40, start);  // 4 slots
    Sender sender(40);
    alignas(16) u32 buf[kMailInlineMaxWords];
    MailRecord r;
    for (u64 pos = start; pos != start + 8; ++pos) {
      sender.Write(m, pos, 0, pos - start);
      ASSERT_TRUE(m.TryTake(pos, true, &r, buf)) << pos;
      // The same slot, one lap later, and one lap earlier.
      EXPECT_EQ(m.Slot(pos + 4), m.Slot(pos));
      EXPECT_FALSE(m.TryTake(pos + 4, false, &r, buf)) << pos;
      EXPECT_FALSE(m.TryTake(pos + 4, true, &r, buf)) << pos;
      EXPECT_FALSE(m.TryTake(pos - 4, true, &r, buf)) << pos;
    }
    // A complete record written with the previous lap's flag at a position's
    // slot is not that position's record.
    const u64 pos = start + 9;
    MailboxWrite(m.Slot(pos), m.inline_words(), m.Flag(pos - 4), HeaderFor(0, 3, 5), "hello");
    EXPECT_FALSE(m.TryTake(pos, false, &r, buf));
    EXPECT_FALSE(m.TryTake(pos, true, &r, buf));
    EXPECT_TRUE(m.TryTake(pos - 4, true, &r, buf));
  }
}

TEST(MailboxTest, VoidRecordsAreTakenWithoutPayload) {
  for (u32 max_payload : {0u, 40u, 1000u}) {
    TestMailbox m(2, max_payload, 10);
    MailboxCursor c{};
    u64 first = 0;
    ASSERT_EQ(m.Reserve(4, &c, &first), 4u);
    for (u64 pos = first; pos < first + 4; ++pos) WriteVoid(m, pos, 6);
    alignas(16) u32 buf[kMailInlineMaxWords];
    std::fill(std::begin(buf), std::end(buf), kSentinel);
    for (u64 pos = first; pos < first + 4; ++pos) {
      MailRecord r;
      r.payload = reinterpret_cast<const u8*>(buf);
      ASSERT_TRUE(m.TryTake(pos, (pos & 1) != 0, &r, buf)) << pos;
      EXPECT_EQ(r.payload, nullptr);
      EXPECT_NE(r.h.flags & kMailVoid, 0u);
      EXPECT_EQ(r.h.flags & kMailPlain, 0u);
      EXPECT_EQ(CheckVoid(r, pos, 6), "") << pos;
    }
    EXPECT_EQ(buf[0], kSentinel) << "a void record copied a payload";
  }
}

// A small inline record's parts for the LookSmall tests: its payload bytes
// and its header, as words.
struct SmallRecord {
  std::vector<u8> payload;
  MailHeader header;
  u32 hw[kMailHeaderWords];
  // Data word w of the record: the header's, then the payload's.
  u32 Word(u32 w) const {
    if (w < kMailHeaderWords) return hw[w];
    return PayloadWord(payload.data(), static_cast<u32>(payload.size()), w - kMailHeaderWords);
  }
};
SmallRecord MakeSmallRecord(u32 sender, u32 seq, u32 size) {
  SmallRecord r;
  r.payload.resize(size);
  for (u32 i = 0; i < size; ++i) r.payload[i] = PayloadByte(sender, seq, i);
  r.header = HeaderFor(sender, seq, size);
  MailHeaderToWords(r.header, r.hw);
  return r;
}

// MailboxLookSmall (a conversation's run waits with it for the next small
// record): empty until every word of the header and payload is there; a
// small inline record taken with its payload; a record of another kind
// (void, plain, larger than asked for) told apart from an empty slot, so
// that the run stops at it instead of waiting.
TEST(MailboxTest, LookSmallTellsAnEmptySlotFromARecordOfAnotherKind) {
  TestMailbox m(2, 1000, 0);  // a small inline payload fits; the largest goes plain
  ASSERT_GE(m.inline_words(), kMailWideWords);
  alignas(16) u32 buf[kMailInlineMaxWords];
  MailHeader h;
  const auto look = [&](u64 pos, u32 max_words) {
    std::fill(std::begin(buf), std::end(buf), kSentinel);
    return MailboxLookSmall(m.Slot(pos), m.inline_words(), m.Flag(pos), max_words, &h, buf);
  };
  // Empty, then every word but one, then whole: a 16-byte record.
  const u32 size = 16, words = size / 4;
  const SmallRecord rec = MakeSmallRecord(3, 9, size);
  const std::vector<u8>& payload = rec.payload;
  const MailHeader& want = rec.header;
  u64 pos = 0;
  EXPECT_EQ(look(pos, kMailWideWords), kLookEmpty);
  for (u32 w = 0; w < kMailHeaderWords + words; ++w) {
    if (w != kMailHeaderWords + 1) StoreRelaxedGpu(m.Slot(pos) + w, LlWord(rec.Word(w), m.Flag(pos)));
  }
  EXPECT_EQ(look(pos, kMailWideWords), kLookEmpty) << "a payload word missing";
  StoreRelaxedGpu(m.Slot(pos) + kMailHeaderWords + 1, LlWord(rec.Word(kMailHeaderWords + 1), m.Flag(pos)));
  ASSERT_EQ(look(pos, kMailWideWords), kLookTaken);
  EXPECT_EQ(h.type, want.type);
  EXPECT_EQ(h.sender, want.sender);
  EXPECT_EQ(h.correlation, want.correlation);
  EXPECT_EQ(h.hlc, want.hlc);
  EXPECT_EQ(std::memcmp(buf, payload.data(), size), 0);
  EXPECT_EQ(buf[words], kSentinel) << "copied past the payload";
  // The same record, asked for at most 3 words: another kind, nothing copied.
  EXPECT_EQ(look(pos, 3), kLookOther);
  EXPECT_EQ(buf[0], kSentinel);
  // A void record and a plain one.
  WriteVoid(m, ++pos, 4);
  EXPECT_EQ(look(pos, kMailWideWords), kLookOther);
  ASSERT_LT(4 * m.inline_words(), m.max_payload());
  Sender(1000).Write(m, ++pos, 5, 1);  // seq 1: the largest payload, in the plain area
  EXPECT_EQ(look(pos, kMailWideWords), kLookOther);
  EXPECT_EQ(buf[0], kSentinel);
}

// MailboxLookSmall<true> (the conversation's wait, whose buffer holds the
// whole first pass): the same answers, and once a record is taken all 16
// first-pass words are in the buffer, the record's payload first and after
// it whatever data the slot's later words hold; nothing is written while
// the record is not whole or is of another kind.
TEST(MailboxTest, LookSmallCopyingTheWholeFirstPassTakesTheSameRecords) {
  TestMailbox m(2, 1000, 0);
  ASSERT_GE(m.inline_words(), kMailWideWords);
  alignas(16) u32 buf[kMailInlineMaxWords];
  MailHeader h;
  const auto look = [&](u64 pos) {
    std::fill(std::begin(buf), std::end(buf), kSentinel);
    return MailboxLookSmall<true>(m.Slot(pos), m.inline_words(), m.Flag(pos), kMailWideWords, &h, buf);
  };
  // A 12-byte record whose slot's later words hold an earlier lap's data.
  const u32 size = 12, words = size / 4;
  const SmallRecord rec = MakeSmallRecord(4, 2, size);
  const MailHeader& want = rec.header;
  const u64 pos = 1;
  for (u32 i = words; i < kMailWideWords; ++i) {
    StoreRelaxedGpu(m.Slot(pos) + kMailHeaderWords + i, LlWord(0x5000u + i, m.Flag(pos) ^ 1u));
  }
  EXPECT_EQ(look(pos), kLookEmpty);
  EXPECT_EQ(buf[0], kSentinel);
  const u32 last = kMailHeaderWords + words - 1;
  for (u32 w = 0; w < last; ++w) StoreRelaxedGpu(m.Slot(pos) + w, LlWord(rec.Word(w), m.Flag(pos)));
  EXPECT_EQ(look(pos), kLookEmpty) << "the last payload word missing";
  EXPECT_EQ(buf[0], kSentinel) << "copied from a record not yet whole";
  StoreRelaxedGpu(m.Slot(pos) + last, LlWord(rec.Word(last), m.Flag(pos)));
  ASSERT_EQ(look(pos), kLookTaken);
  EXPECT_EQ(h.type, want.type);
  EXPECT_EQ(h.sender, want.sender);
  EXPECT_EQ(h.correlation, want.correlation);
  EXPECT_EQ(std::memcmp(buf, rec.payload.data(), size), 0);
  for (u32 i = words; i < kMailWideWords; ++i) EXPECT_EQ(buf[i], 0x5000u + i) << i;
  EXPECT_EQ(buf[kMailWideWords], kSentinel) << "copied past the first pass";
  // A void record: another kind, nothing copied.
  WriteVoid(m, pos + 1, 4);
  EXPECT_EQ(look(pos + 1), kLookOther);
  EXPECT_EQ(buf[0], kSentinel);
}

// Stamping (MailboxStampUnused): at a stamping lap (LlStampingLap: 2^29,
// then every 2^30 laps), the owner writes the inline words a record did not
// use with the lap's flag; at any other lap, lap 0 and lap 2^31 among them,
// it writes nothing.
TEST(MailboxTest, StampingWritesUnusedInlineWordsEveryTwoToTheThirtyLaps) {
  constexpr u32 kLog2 = 3;
  constexpr u64 kCap = u64{1} << kLog2;
  constexpr u64 kStampPos = (u64{1} << 29) * kCap + 5;  // lap 2^29, slot 5
  static_assert(LlStampingLap(LlFlag(kStampPos, kLog2)), "a stamping lap");
  static_assert(LlFlag(kStampPos, kLog2) == 0xA0000000u, "lap 2^29");
  static_assert(LlStampingLap(LlFlag(kStampPos + (u64{1} << 30) * kCap, kLog2)), "lap 2^29 + 2^30");
  static_assert(!LlStampingLap(LlFlag(5, kLog2)), "lap 0 stamps nothing");
  for (u32 max_payload : {40u, 1000u}) {
    TestMailbox m(kLog2, max_payload, 0);
    const u32 iw = m.inline_words();
    alignas(16) u32 buf[kMailInlineMaxWords];
    // 0: a 9-byte inline record; 1: a plain one (where there is a plain
    // area); 2: a void one.
    for (u32 kind = 0; kind < 3; ++kind) {
      if (kind == 1 && max_payload <= kMailInlineMax) continue;
      const u32 size = kind == 0 ? 9 : kind == 1 ? max_payload : 0;
      const u32 used = kind == 0 ? 3 : 0;
      for (u64 pos : {u64{5}, u64{5} + kCap, kStampPos - 2 * kCap, kStampPos - kCap, kStampPos, kStampPos + kCap,
                      kStampPos + 2 * kCap, (u64{1} << 30) * kCap + 5, (u64{1} << 31) * kCap - kCap + 5,
                      (u64{1} << 31) * kCap + 5, kStampPos + (u64{1} << 30) * kCap}) {
        const bool stamping = pos == kStampPos || pos == kStampPos + (u64{1} << 30) * kCap;
        ASSERT_EQ(stamping, LlStampingLap(m.Flag(pos))) << pos;
        // The previous lap: every inline word written.
        Sender(max_payload).Write(m, pos - kCap, 7, 2);
        std::vector<u8> payload(size + 1);
        for (u32 i = 0; i < size; ++i) payload[i] = PayloadByte(1, 0, i);
        MailHeader h = kind == 2 ? VoidHeader(1, pos) : HeaderFor(1, 0, size);
        MailboxWrite(m.Slot(pos), iw, m.Flag(pos), h, kind == 2 ? nullptr : payload.data());
        MailRecord r;
        ASSERT_TRUE(m.TryTake(pos, true, &r, buf)) << pos;
        const std::vector<u64> before = m.Words(pos);
        const std::vector<u8> plain_before(m.Plain(pos), m.Plain(pos) + m.shape().plain_bytes);
        m.Stamp(pos, r.h);
        const std::vector<u64> after = m.Words(pos);
        for (u32 w = 0; w < kMailHeaderWords + used; ++w) EXPECT_EQ(after[w], before[w]) << "record word " << w;
        for (u32 w = kMailHeaderWords + used; w < kMailHeaderWords + iw; ++w) {
          EXPECT_NE(LlWordFlag(before[w]), m.Flag(pos)) << "the previous lap's word " << w;
          if (stamping) {
            EXPECT_EQ(after[w], LlWord(0, m.Flag(pos))) << "unused word " << w << " at pos " << pos;
          } else {
            EXPECT_EQ(after[w], before[w]) << "unused word " << w << " at pos " << pos;
          }
        }
        EXPECT_EQ(plain_before, std::vector<u8>(m.Plain(pos), m.Plain(pos) + m.shape().plain_bytes))
            << "the plain area";
      }
    }
  }
}

// Why stamping matters: flags repeat every 2^31 laps and a record rewrites
// only the words it uses, so an inline word no record touched since lap 0
// shows lap 0's flag again at lap 2^31; an owner polling while the producer
// of lap 2^31 has stored the header but not yet that payload word would take
// a torn record. 8 slots; slot 5 holds a full record at lap 0 and then only
// empty ones; at lap 2^31 a full record whose header is written but whose
// payload is not yet.
TEST(MailboxTest, StampingPreventsStaleWordsFromAliasingAfterTwoToTheThirtyOneLaps) {
  constexpr u32 kLog2 = 3;
  constexpr u64 kCap = u64{1} << kLog2;
  constexpr u64 kLap0 = 5;
  constexpr u64 kStampLap = (u64{1} << 29) * kCap + 5;
  constexpr u64 kAliasing = (u64{1} << 31) * kCap + 5;
  for (bool stamp : {true, false}) {
    TestMailbox m(kLog2, 40, 0);
    ASSERT_EQ(m.Slot(kAliasing), m.Slot(kLap0));
    ASSERT_EQ(m.Flag(kAliasing), m.Flag(kLap0));
    Sender sender(40);
    alignas(16) u32 buf[kMailInlineMaxWords];
    MailRecord r;
    const MailHeader empty = HeaderFor(0, 1, 0);
    std::vector<u8> full(40, 0x5A);
    MailboxWrite(m.Slot(kLap0), m.inline_words(), m.Flag(kLap0), HeaderFor(0, 0, 40), full.data());
    MailboxWrite(m.Slot(kStampLap), m.inline_words(), m.Flag(kStampLap), empty, nullptr);
    ASSERT_TRUE(m.TryTake(kStampLap, true, &r, buf));
    if (stamp) m.Stamp(kStampLap, r.h);
    MailboxWrite(m.Slot(kAliasing - kCap), m.inline_words(), m.Flag(kAliasing - kCap), empty, nullptr);
    // Lap 2^31: the header of a 40-byte record, its payload not yet.
    MailHeader h = HeaderFor(0, 3, 40);
    u32 hw[kMailHeaderWords];
    MailHeaderToWords(h, hw);
    for (u32 w = 0; w < kMailHeaderWords; ++w) {
      StoreRelaxedGpu(m.Slot(kAliasing) + w, LlWord(hw[w], m.Flag(kAliasing)));
    }
    if (stamp) {
      EXPECT_FALSE(m.TryTake(kAliasing, false, &r, buf)) << "took payload words written 2^31 laps ago";
      EXPECT_FALSE(m.TryTake(kAliasing, true, &r, buf)) << "took payload words written 2^31 laps ago";
    } else {
      // Without the stamp the stale words do alias: the test above can fail.
      EXPECT_TRUE(m.TryTake(kAliasing, false, &r, buf));
    }
  }
}

TEST(MailboxTest, ManyProducersInlineMailbox) {
  // The largest all-inline shape (64 inline words).
  RunStress({.capacity_log2 = 3,
             .max_payload = kMailInlineMax,
             .start = 0,
             .producers = 4,
             .per_producer = 6000,
             .max_batch = 4,
             .cursors = Cursors::kZero});
}

TEST(MailboxTest, ManyProducersSmallInlineMailbox) {
  RunStress({.capacity_log2 = 4,
             .max_payload = 37,
             .start = 0,
             .producers = 4,
             .per_producer = 10000,
             .max_batch = 3,
             .cursors = Cursors::kZero});
}

TEST(MailboxTest, ManyProducersPlainArea) {
  // Payloads up to 1000 bytes: up to 128 inline, larger ones in the plain
  // area. The run passes lap 2^29 (a stamping lap), where the owner stamps
  // every slot while producers write the next lap.
  constexpr u64 kStampLapStart = (u64{1} << 29) * 8;
  RunStress({.capacity_log2 = 3,
             .max_payload = 1000,
             .start = kStampLapStart - 8 * 300,
             .producers = 3,
             .per_producer = 4000,
             .max_batch = 4,
             .cursors = Cursors::kZero});
}

TEST(MailboxTest, PositionsWrapAtTwoToTheSixtyFour) {
  // Starts before the wrap, so that the positions, the slot index and the
  // flag wrap while producers
  // race; inline and plain payloads. The producers' cursors hold positions
  // from before the start (see ZeroCursorReservesAnywhereInThePositionSpace
  // for zero-initialised ones).
  RunStress({.capacity_log2 = 4,
             .max_payload = 1000,
             .start = ~u64{0} - 1500,
             .producers = 4,
             .per_producer = 3000,
             .max_batch = 3,
             .cursors = Cursors::kLongAgo});
  // And a start half a lap before the wrap: the last slot and slot 0 meet
  // there.
  RunStress({.capacity_log2 = 4,
             .max_payload = 64,
             .start = ~u64{0} - 7,
             .producers = 4,
             .per_producer = 1000,
             .max_batch = 2,
             .cursors = Cursors::kLongAgo});
}

TEST(MailboxTest, TinyCapacityUnderHeavyContention) {
  // Two slots: the owner releases after every record (capacity / 4 is 0).
  RunStress({.capacity_log2 = 1,
             .max_payload = 32,
             .start = 3,
             .producers = 6,
             .per_producer = 2000,
             .max_batch = 3,
             .cursors = Cursors::kZero});
}

}  // namespace
}  // namespace rk
