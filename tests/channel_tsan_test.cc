// Copyright 2026 The RingKernel Authors.
//
// K2K channels (include/ringkernel/device/channel.h) driven by host threads
// under ThreadSanitizer, with the functions the device runtime calls, in the
// order rt_send.cuh and rt_owner.cuh call them: producer threads play
// sending worker threads — each, whenever its sends change receiver, looks
// for its channel (ChannelFind); without one, while the receiver may still
// give one (ChannelMayOpen), its next send reserves a mailbox position
// (MailboxReserve), claims an entry (ChannelClaim), writes a kMailChannel
// record there and publishes the entry (ChannelPublish), then sends through
// the channel (ChannelHasRoom, MailboxWrite, ChannelPublishTail); otherwise
// it sends through the mailbox for good — and one consumer thread per
// receiver plays its owner: it takes the records of the mailbox and of
// every channel it knows in order (MailboxTryTake, MailboxStampUnused,
// MailboxRelease), and after a kMailChannel record looks for the entries
// published since (ChannelClaimed, ChannelEntryBox) until none is pending.
//
// Each record says who sent it and its sequence number per (producer,
// receiver) and carries bytes derived from both (inline, and in the plain
// area for the larger shape), so the consumers prove that nothing was lost,
// duplicated, reordered per pair or torn, and the producers that a pair's
// way (channel or mailbox) never changes. A monitor thread reads the
// counts as the monitor warp and the drain do (ChannelCountsOf, ChannelSum)
// while the others run, and checks what must hold of every snapshot; the
// counts are checked against the totals at the end.
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "tests/tsan_device_headers.h"

namespace rk {
namespace {

// Line-aligned, zeroed memory.
struct Zeroed {
  explicit Zeroed(u64 bytes) : size(AlignUp(bytes, kLineBytes)) {
    p = static_cast<u8*>(std::aligned_alloc(kLineBytes, size));
    std::memset(p, 0, size);
  }
  ~Zeroed() { std::free(p); }
  Zeroed(const Zeroed&) = delete;
  Zeroed& operator=(const Zeroed&) = delete;
  u64 size;
  u8* p;
};

// One receiver: its mailbox and its channel table.
struct Receiver {
  Receiver(u32 log2, const MailboxShape& shape, bool open)
      : box_mem(MailboxBytes(log2, shape.slot_bytes)), table_mem(sizeof(ChannelTable)) {
    box = reinterpret_cast<MailboxHeader*>(box_mem.p);
    MailboxInit(box, log2, shape, 0);
    table = reinterpret_cast<ChannelTable*>(table_mem.p);
    table->open = open ? 1 : 0;
  }
  Zeroed box_mem;
  Zeroed table_mem;
  MailboxHeader* box;
  ChannelTable* table;
};

// The system's channel arena.
struct Arena {
  explicit Arena(u64 bytes) : mem(bytes), size(bytes) {}
  Zeroed mem;
  u64 size;
  u64 used = 0;  // the bump pointer (DeviceShared::channel_arena_used)
};

u32 PayloadSize(u32 producer, u64 seq, u32 max) {
  switch (seq % 6) {
    case 0: return 0;
    case 1: return max;
    default: return static_cast<u32>((seq * 13 + producer * 5) % (max + 1));
  }
}
u8 PayloadByte(u32 producer, u64 seq, u32 i) { return static_cast<u8>(producer * 29 + seq * 11 + i * 3); }

MailHeader HeaderFor(u32 producer, u64 seq, u32 size) {
  MailHeader h;
  h.type = 1;
  h.size = size;
  h.sender = producer;
  h.flags = 0;
  h.correlation = seq;
  h.hlc = seq ^ 0x5A5A;
  return h;
}

// "" when the record is message `seq` of `producer`, whole; else what is not.
std::string Check(const MailRecord& r, u32 producer, u64 seq, u32 max) {
  const u32 size = PayloadSize(producer, seq, max);
  if (r.h.sender != producer) return "wrong sender";
  if (r.h.correlation != seq) {
    return "producer " + std::to_string(producer) + ": seq " + std::to_string(r.h.correlation) + " where " +
           std::to_string(seq) + " was next";
  }
  if (r.h.size != size) return "wrong size";
  if (r.h.hlc != (seq ^ 0x5A5A)) return "wrong hlc";
  for (u32 i = 0; i < size; ++i) {
    if (r.payload[i] != PayloadByte(producer, seq, i)) return "torn payload at byte " + std::to_string(i);
  }
  return "";
}

// A producer's state for the receiver it sends to now: the device's
// SendCache.
struct Cache {
  int to = -1;
  MailboxHeader* box = nullptr;
  u32 log2 = 0;
  bool channel = false;
  bool may_open = false;  // the next send tries to open a channel
  u64 tail = 0, head = 0;
};

struct Scenario {
  u32 producers;
  u32 receivers;
  u64 per_pair;       // messages each producer sends each receiver
  u32 mailbox_log2;
  u32 max_payload;
  u64 arena_bytes;
  bool open = true;
};

struct Outcome {
  std::vector<std::string> errors;
  std::vector<std::vector<int>> way;  // [producer][receiver]: 1 channel, 0 mailbox, -1 not decided
  std::vector<u32> channels;          // per receiver: entries with a channel
  std::vector<u64> mailbox_tail, channel_tails, channel_heads;
  std::vector<ChannelCounts> counts;  // the monitor's one pass, at the end
  std::vector<u64> received;
  std::vector<u64> notices;  // kMailChannel records the consumer took
};

Outcome RunScenario(const Scenario& s) {
  const MailboxShape shape = MailboxShapeFor(s.max_payload);
  Arena arena(s.arena_bytes);
  std::vector<std::unique_ptr<Receiver>> rx;
  for (u32 r = 0; r < s.receivers; ++r) rx.push_back(std::make_unique<Receiver>(s.mailbox_log2, shape, s.open));
  Outcome out;
  out.way.assign(s.producers, std::vector<int>(s.receivers, -1));
  out.received.assign(s.receivers, 0);
  out.notices.assign(s.receivers, 0);
  std::vector<std::string> producer_errors(s.producers), consumer_errors(s.receivers);
  // Set when a consumer gives up: the producers stop rather than wait for
  // room that will never come.
  std::atomic<bool> abandon{false};

  std::vector<std::thread> threads;
  for (u32 p = 0; p < s.producers; ++p) {
    threads.emplace_back([&, p] {
      const u32 key = p + 1;
      std::vector<u64> next(s.receivers, 0);
      std::vector<MailboxCursor> cursors(s.receivers, MailboxCursor{0, 0});
      alignas(16) u8 payload[1024];
      Cache c;
      // Receivers in turn, a few messages each, so that the cache changes.
      for (u64 i = 0; i < s.per_pair * s.receivers; ++i) {
        int to = static_cast<int>((i / 3) % s.receivers);
        while (next[to] == s.per_pair) to = (to + 1) % static_cast<int>(s.receivers);
        if (c.to != to) {
          c = Cache{};
          c.to = to;
          c.box = rx[to]->box;
          c.log2 = s.mailbox_log2;
          const u64 ch = ChannelFind(rx[to]->table, key);
          if (ch > kChannelNone) {
            c.channel = true;
            c.box = reinterpret_cast<MailboxHeader*>(ch);
            c.tail = LoadRelaxedGpu(&c.box->tail.value);
            c.head = LoadAcquireGpu(&c.box->head.value);
          } else {
            c.may_open = ch == 0 && ChannelMayOpen(rx[to]->table);
          }
          const int way = c.channel ? 1 : c.may_open ? -1 : 0;
          if (out.way[p][to] != -1 && way != -1 && out.way[p][to] != way) producer_errors[p] = "a pair changed its way";
          if (way != -1) out.way[p][to] = way;
        }
        const u64 seq = next[to]++;
        const u32 size = PayloadSize(p, seq, s.max_payload);
        for (u32 b = 0; b < size; ++b) payload[b] = PayloadByte(p, seq, b);
        u64 pos;
        if (c.channel) {
          while (!ChannelHasRoom(c.box, u64{1} << c.log2, c.tail, &c.head)) {
            if (abandon.load()) return;
            std::this_thread::yield();
          }
          pos = c.tail;
        } else {
          while (MailboxReserve(c.box, u64{1} << c.log2, 1, &cursors[to], &pos) == 0) {
            if (abandon.load()) return;
            std::this_thread::yield();
          }
          if (c.may_open) {
            // This send opens the pair's channel if it can.
            c.may_open = false;
            const ChannelClaimResult claim =
                ChannelClaim(rx[to]->table, arena.mem.p, arena.size, &arena.used, s.mailbox_log2, shape);
            if (claim.index < kChannelsPerActor) {
              if (claim.box > kChannelNone) {
                MailHeader h{};
                h.sender = p;
                h.flags = kMailVoid | kMailChannel;
                h.correlation = claim.index;
                MailboxWrite(MailboxSlotAt(c.box, c.log2, shape.slot_bytes, pos), shape.inline_words,
                             LlFlag(pos, c.log2), h, nullptr);
              }
              ChannelPublish(rx[to]->table, claim.index, key, claim.box);
              if (claim.box > kChannelNone) {
                c.channel = true;
                c.box = reinterpret_cast<MailboxHeader*>(claim.box);
                c.tail = 0;
                c.head = 0;
                pos = 0;
              }
            }
            out.way[p][to] = c.channel ? 1 : 0;
          }
        }
        MailboxWrite(MailboxSlotAt(c.box, c.log2, shape.slot_bytes, pos), shape.inline_words, LlFlag(pos, c.log2),
                     HeaderFor(p, seq, size), payload);
        if (c.channel) {
          c.tail = pos + 1;
          ChannelPublishTail(c.box, c.tail);
        }
      }
    });
  }
  for (u32 r = 0; r < s.receivers; ++r) {
    threads.emplace_back([&, r] {
      const u64 expected = s.per_pair * s.producers;
      struct Source {
        MailboxHeader* box;
        u32 log2;
        u64 head, released;
      };
      std::vector<Source> sources{{rx[r]->box, s.mailbox_log2, 0, 0}};
      u32 seen = 0;
      bool look = false;
      u64 notices = 0;
      std::vector<u64> next(s.producers, 0);
      alignas(16) u32 buf[kMailInlineMaxWords];
      u64 got = 0;
      while (got < expected && consumer_errors[r].empty()) {
        // The owner's look for new channels, after a kMailChannel record.
        if (look) {
          look = false;
          const u32 claimed = ChannelClaimed(rx[r]->table);
          for (u32 k = 0; k < claimed; ++k) {
            if ((seen >> k) & 1) continue;
            const u64 box = ChannelEntryBox(rx[r]->table, k);
            if (box == 0) {
              look = true;
              continue;
            }
            seen |= 1u << k;
            if (box != kChannelNone) {
              sources.push_back({reinterpret_cast<MailboxHeader*>(box), s.mailbox_log2, 0, 0});
            }
          }
        }
        bool any = false;
        for (Source& src : sources) {
          for (int n = 0; n < 8; ++n) {
            u64* slot = MailboxSlotAt(src.box, src.log2, shape.slot_bytes, src.head);
            const u32 flag = LlFlag(src.head, src.log2);
            MailRecord rec;
            if (!MailboxTryTake(slot, shape.inline_words, flag, (n & 1) != 0, &rec, buf)) break;
            any = true;
            if (rec.h.flags == (kMailVoid | kMailChannel)) {
              if (&src != &sources[0]) {
                consumer_errors[r] = "a channel notice outside the mailbox";
                break;
              }
              look = true;
              ++notices;
              MailboxStampUnused(slot, shape.inline_words, flag, rec.h);
              ++src.head;
              // (Sources may grow only between passes: the look is next.)
              break;
            }
            const u32 producer = rec.h.sender;
            if (producer >= s.producers) {
              consumer_errors[r] = "a record from nobody";
              break;
            }
            const std::string e = Check(rec, producer, next[producer], s.max_payload);
            if (!e.empty()) {
              consumer_errors[r] = e;
              break;
            }
            ++next[producer];
            MailboxStampUnused(slot, shape.inline_words, flag, rec.h);
            ++src.head;
            ++got;
            if (src.head - src.released >= (u64{1} << src.log2) / 4) {
              MailboxRelease(src.box, src.head);
              src.released = src.head;
            }
          }
          if (src.released != src.head) {
            MailboxRelease(src.box, src.head);
            src.released = src.head;
          }
        }
        if (!any) std::this_thread::yield();
      }
      out.received[r] = got;
      out.notices[r] = notices;
      if (!consumer_errors[r].empty()) abandon.store(true);
    });
  }
  // The monitor: no count ever goes back, and no more entries are counted
  // than a table has. (A released head may pass the tail for a moment: the
  // producer stores its tail after the record, which the consumer may have
  // taken by then.)
  std::atomic<bool> finished{false};
  std::string monitor_error;
  std::thread monitor([&] {
    std::vector<ChannelCounts> last(s.receivers, ChannelCounts{0, 0, 0});
    do {
      for (u32 r = 0; r < s.receivers && monitor_error.empty(); ++r) {
        const ChannelCounts c = ChannelCountsOf(rx[r]->table);
        const u64 heads = ChannelSum(rx[r]->table, ChannelLine::kHead);
        if (c.opened > kChannelsPerActor || c.opened < last[r].opened ||
            c.heads < last[r].heads || c.tails < last[r].tails || heads < c.heads) {
          monitor_error = "receiver " + std::to_string(r) + ": counts opened " + std::to_string(c.opened) +
                          " heads " + std::to_string(c.heads) + " tails " + std::to_string(c.tails) +
                          " after opened " + std::to_string(last[r].opened) + " heads " +
                          std::to_string(last[r].heads) + " tails " + std::to_string(last[r].tails) +
                          ", heads summed alone " + std::to_string(heads);
        }
        last[r] = c;
      }
      std::this_thread::yield();
    } while (!finished.load(std::memory_order_acquire) && monitor_error.empty());
  });
  for (std::thread& t : threads) t.join();
  finished.store(true, std::memory_order_release);
  monitor.join();
  if (!monitor_error.empty()) out.errors.push_back(monitor_error);
  for (const std::string& e : producer_errors) if (!e.empty()) out.errors.push_back(e);
  for (const std::string& e : consumer_errors) if (!e.empty()) out.errors.push_back(e);
  for (u32 r = 0; r < s.receivers; ++r) {
    u32 n = 0;
    for (u32 k = 0; k < ChannelClaimed(rx[r]->table); ++k) n += ChannelEntryBox(rx[r]->table, k) > kChannelNone;
    out.channels.push_back(n);
    out.mailbox_tail.push_back(LoadAcquireGpu(&rx[r]->box->tail.value));
    out.channel_tails.push_back(ChannelSum(rx[r]->table, ChannelLine::kTail));
    out.channel_heads.push_back(ChannelSum(rx[r]->table, ChannelLine::kHead));
    out.counts.push_back(ChannelCountsOf(rx[r]->table));
  }
  return out;
}

void ExpectAllDelivered(const Scenario& s, const Outcome& o, u32 channels_each) {
  EXPECT_TRUE(o.errors.empty()) << o.errors.front();
  for (u32 r = 0; r < s.receivers; ++r) {
    EXPECT_EQ(o.received[r], s.per_pair * s.producers) << "receiver " << r;
    EXPECT_EQ(o.channels[r], channels_each) << "receiver " << r;
    // Every record went one way or the other, and was counted there; the
    // mailbox also held one notice per channel.
    EXPECT_EQ(o.notices[r], channels_each) << "receiver " << r;
    EXPECT_EQ(o.mailbox_tail[r] + o.channel_tails[r], s.per_pair * s.producers + channels_each) << "receiver " << r;
    EXPECT_EQ(o.channel_heads[r], o.channel_tails[r]) << "receiver " << r;
    EXPECT_EQ(o.counts[r].opened, channels_each) << "receiver " << r;
    EXPECT_EQ(o.counts[r].heads, o.channel_heads[r]) << "receiver " << r;
    EXPECT_EQ(o.counts[r].tails, o.channel_tails[r]) << "receiver " << r;
    u32 by_channel = 0;
    for (u32 p = 0; p < s.producers; ++p) by_channel += o.way[p][r] == 1;
    EXPECT_EQ(by_channel, channels_each) << "receiver " << r;
  }
}

TEST(ChannelTest, MoreProducersThanEntriesShareTheMailboxAndEveryPairKeepsItsOrder) {
  const Scenario s{8, 2, 3000, 5, 64, 1 << 20};
  ExpectAllDelivered(s, RunScenario(s), kChannelsPerActor);
}

TEST(ChannelTest, PlainPayloadsThroughChannelsArriveWhole) {
  const Scenario s{5, 2, 1500, 4, 600, 1 << 20};
  ExpectAllDelivered(s, RunScenario(s), kChannelsPerActor);
}

TEST(ChannelTest, TinyChannelsWrapManyTimesUnderContention) {
  // Two-slot mailboxes and channels: every send meets a full ring.
  const Scenario s{6, 3, 2000, 1, 16, 1 << 20};
  ExpectAllDelivered(s, RunScenario(s), kChannelsPerActor);
}

TEST(ChannelTest, ASpentArenaSendsTheLaterPairsThroughTheMailboxForGood) {
  // Room for exactly three channels of this shape in all.
  const MailboxShape shape = MailboxShapeFor(64);
  const u64 one = ChannelBytes(5, shape.slot_bytes);
  const Scenario s{6, 1, 2000, 5, 64, 3 * one + one / 2};
  ExpectAllDelivered(s, RunScenario(s), 3);
}

TEST(ChannelTest, AClosedTableSendsEveryPairThroughTheMailbox) {
  Scenario s{4, 2, 1000, 5, 64, 1 << 20};
  s.open = false;
  ExpectAllDelivered(s, RunScenario(s), 0);
}

TEST(ChannelTest, ClaimsGiveEachKeyOneEntryAndThenNone) {
  const MailboxShape shape = MailboxShapeFor(32);
  Receiver r(4, shape, true);
  Arena arena(1 << 16);
  std::vector<u64> boxes;
  for (u32 key = 1; key <= kChannelsPerActor; ++key) {
    EXPECT_EQ(ChannelFind(r.table, key), 0u);
    EXPECT_TRUE(ChannelMayOpen(r.table));
    const ChannelClaimResult claim = ChannelClaim(r.table, arena.mem.p, arena.size, &arena.used, 4, shape);
    ASSERT_EQ(claim.index, key - 1);
    ASSERT_GT(claim.box, kChannelNone);
    EXPECT_EQ(ChannelFind(r.table, key), 0u) << "found before it is published";
    ChannelPublish(r.table, claim.index, key, claim.box);
    EXPECT_EQ(ChannelFind(r.table, key), claim.box);
    EXPECT_EQ(ChannelEntryBox(r.table, static_cast<u32>(claim.index)), claim.box);
    const MailboxHeader* h = reinterpret_cast<const MailboxHeader*>(claim.box);
    EXPECT_EQ(h->capacity_log2, 4u);
    EXPECT_EQ(h->slot_bytes, shape.slot_bytes);
    EXPECT_EQ(claim.box % kLineBytes, 0u);
    boxes.push_back(claim.box);
  }
  // Channels do not overlap.
  for (size_t i = 1; i < boxes.size(); ++i) EXPECT_GE(boxes[i] - boxes[i - 1], ChannelBytes(4, shape.slot_bytes));
  EXPECT_FALSE(ChannelMayOpen(r.table));
  EXPECT_GE(ChannelClaim(r.table, arena.mem.p, arena.size, &arena.used, 4, shape).index, kChannelsPerActor);
  EXPECT_EQ(ChannelClaimed(r.table), kChannelsPerActor);
  EXPECT_EQ(ChannelCountsOf(r.table).opened, kChannelsPerActor);
  EXPECT_EQ(arena.used, kChannelsPerActor * ChannelBytes(4, shape.slot_bytes));
}

TEST(ChannelTest, AClosedTableMayNotOpen) {
  const MailboxShape shape = MailboxShapeFor(32);
  Receiver r(4, shape, false);
  EXPECT_FALSE(ChannelMayOpen(r.table));
  EXPECT_EQ(r.table->claimed, 0u);
}

TEST(ChannelTest, ASpentArenaGivesAnEntryWithoutAChannel) {
  const MailboxShape shape = MailboxShapeFor(32);
  Receiver r(4, shape, true);
  Arena arena(ChannelBytes(4, shape.slot_bytes) - 1);
  const ChannelClaimResult claim = ChannelClaim(r.table, arena.mem.p, arena.size, &arena.used, 4, shape);
  EXPECT_EQ(claim.index, 0u);
  EXPECT_EQ(claim.box, kChannelNone);
  ChannelPublish(r.table, claim.index, 7, claim.box);
  EXPECT_EQ(ChannelFind(r.table, 7), kChannelNone);
  const ChannelCounts counts = ChannelCountsOf(r.table);
  EXPECT_EQ(counts.opened, 0u);
  EXPECT_EQ(counts.tails, 0u);
  EXPECT_EQ(ChannelSum(r.table, ChannelLine::kTail), 0u);
}

TEST(ChannelTest, HasRoomRereadsTheHeadOnlyWhenTheCachedOneSaysFull) {
  const MailboxShape shape = MailboxShapeFor(32);
  Zeroed mem(MailboxBytes(2, shape.slot_bytes));
  MailboxHeader* box = reinterpret_cast<MailboxHeader*>(mem.p);
  MailboxInit(box, 2, shape, 0);
  u64 head = 0;
  StoreRelaxedGpu(&box->head.value, 3);  // not looked at while the cache says there is room
  EXPECT_TRUE(ChannelHasRoom(box, 4, 3, &head));
  EXPECT_EQ(head, 0u);
  EXPECT_TRUE(ChannelHasRoom(box, 4, 4, &head));  // full by the cache: re-read, 3
  EXPECT_EQ(head, 3u);
  EXPECT_FALSE(ChannelHasRoom(box, 4, 7, &head));
  EXPECT_EQ(head, 3u);
}

TEST(ChannelTest, SenderKeysAreDistinctAndNeverZero) {
  EXPECT_EQ(ChannelSenderKey(0, 128, 0), 1u);
  EXPECT_EQ(ChannelSenderKey(2, 128, 5), 2u * 128 + 6);
}

}  // namespace
}  // namespace rk
