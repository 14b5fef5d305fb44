// Copyright 2026 The RingKernel Authors.
//
// Test goals: SystemStats::ToText and ToJson on hand-built snapshots (no GPU).
//   * ToText: the phase with only the non-zero host counters, then the actors
//     in aligned columns (names left, numbers right, no trailing spaces);
//     workers only when asked; a control character in a name cannot break a
//     row; a UTF-8 name takes one column per character;
//   * ToJson: one line that parses back to the same numbers (uint64 at its
//     largest included) under the documented keys; names with quotes,
//     backslashes, newlines and UTF-8 round-trip; bytes that are not UTF-8
//     become U+FFFD instead of an exception.
#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <type_traits>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "ringkernel/system.h"

namespace rk {
namespace {

using ::nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

ActorStats Actor(uint32_t id, std::string name, std::string type) {
  ActorStats a;
  a.id = ActorId{id};
  a.name = std::move(name);
  a.type = std::move(type);
  a.state = ActorState::kRunning;
  return a;
}

// The bank example a moment into its run: the auditor failed.
SystemStats BankStats() {
  SystemStats s;
  s.phase = KernelPhase::kRunning;
  s.flush_epoch = 40;
  s.host_sent = 12;
  s.ingress_delivered = 12;
  s.received_by_host = 1;
  ActorStats bank = Actor(0, "bank", "Bank");
  bank.received = 11;
  bank.handled = 11;
  bank.hlc = 77;
  ActorStats auditor = Actor(1, "auditor", "Auditor");
  auditor.state = ActorState::kFailed;
  auditor.fail_code = 7;
  auditor.received = 1;
  auditor.handled = 1;
  auditor.sent = 1;
  s.actors = {bank, auditor};
  s.workers = {WorkerStatsView{0, 1234567, 11, false}, WorkerStatsView{1, 999, 1, true}};
  return s;
}

TEST(SystemStatsTextTest, PhaseNonZeroHostCountersAndAlignedActorColumns) {
  EXPECT_EQ(BankStats().ToText(),
            "phase running; host sent 12, ingress delivered 12, received by host 1\n"
            "actor    type     state      received  handled  depth  dead-lettered  sent  kFull\n"
            "bank     Bank     running          11       11      0              0     0      0\n"
            "auditor  Auditor  failed(7)         1        1      0              0     1      0");
}

TEST(SystemStatsTextTest, AStatsSnapshotIsTheSameTypeWithTheSameText) {
  static_assert(std::is_same_v<StatsSnapshot, SystemStats>);
  const StatsSnapshot snapshot = BankStats();
  EXPECT_EQ(snapshot.ToText(), BankStats().ToText());
  EXPECT_THAT(snapshot.ToText(), HasSubstr("auditor  Auditor  failed(7)"));
}

TEST(SystemStatsTextTest, WorkersOnlyWhenAsked) {
  const SystemStats s = BankStats();
  EXPECT_THAT(s.ToText(), Not(HasSubstr("heartbeat")));
  EXPECT_EQ(s.ToText(/*with_workers=*/true),
            s.ToText() +
                "\n"
                "worker  state    heartbeat  handled\n"
                "     0  running    1234567       11\n"
                "     1  exited         999        1");
}

TEST(SystemStatsTextTest, EveryHostCounterIsNamedWhenNotZero) {
  SystemStats s;
  s.phase = KernelPhase::kDraining;
  s.host_sent = 1;
  s.host_ring_full = 2;
  s.ingress_delivered = 3;
  s.ingress_dead = 4;
  s.outbound_full = 5;
  s.host_holes = 10;
  s.channel_bytes = 11;
  s.received_by_host = 6;
  s.dead_letters_dropped = 7;
  s.failures_dropped = 8;
  s.late_replies = 9;
  EXPECT_EQ(s.ToText(),
            "phase draining; host sent 1, host ring full 2, ingress delivered 3, ingress dead-lettered 4, "
            "outbound full 5, host holes 10, channel bytes 11, received by host 6, dead letters dropped 7, "
            "failures dropped 8, "
            "late replies 9\n"
            "(no actors)");
  EXPECT_EQ(SystemStats{}.ToText(), "phase starting\n(no actors)");
}

TEST(SystemStatsTextTest, NamesStayOnTheirRowAndUtf8TakesOneColumnPerCharacter) {
  SystemStats s;
  s.phase = KernelPhase::kRunning;
  ActorStats odd = Actor(0, "two\nlines", "T");
  odd.received = 5;
  s.actors = {odd, Actor(1, "café", "T")};
  s.actors[1].state = ActorState::kFree;  // a spawn the GPU never acknowledged
  EXPECT_EQ(s.ToText(),
            "phase running\n"
            "actor         type  state    received  handled  depth  dead-lettered  sent  kFull\n"
            "two\\x0alines  T     running         5        0      0              0     0      0\n"
            "café          T     free            0        0      0              0     0      0");
}

TEST(SystemStatsJsonTest, OneLineThatParsesBackToTheSameNumbers) {
  SystemStats s = BankStats();
  s.host_ring_full = 2;
  s.ingress_dead = 3;
  s.outbound_full = 4;
  s.host_holes = 7;
  s.channel_bytes = 15;
  s.dead_letters_dropped = 5;
  s.failures_dropped = 6;
  s.late_replies = 8;
  s.actors[0].dead_lettered = 9;
  s.actors[0].depth = 10;
  s.actors[0].send_full = 11;
  s.actors[0].send_no_actor = 12;
  s.actors[0].send_other = 13;
  s.actors[0].rejected = 14;
  s.actors[0].hlc = std::numeric_limits<uint64_t>::max();
  const std::string text = s.ToJson();
  EXPECT_EQ(text.find('\n'), std::string::npos) << text;
  const json j = json::parse(text);

  std::set<std::string> keys;
  for (auto it = j.begin(); it != j.end(); ++it) keys.insert(it.key());
  EXPECT_EQ(keys, (std::set<std::string>{"actors", "channel_bytes", "dead_letters_dropped", "failures_dropped",
                                         "flush_epoch",
                                         "host_holes", "host_ring_full", "host_sent", "ingress_dead",
                                         "ingress_delivered", "late_replies", "outbound_full", "phase",
                                         "received_by_host", "workers"}));
  EXPECT_EQ(j["phase"], "running");
  EXPECT_EQ(j["flush_epoch"], 40u);
  EXPECT_EQ(j["host_sent"], 12u);
  EXPECT_EQ(j["host_ring_full"], 2u);
  EXPECT_EQ(j["ingress_delivered"], 12u);
  EXPECT_EQ(j["ingress_dead"], 3u);
  EXPECT_EQ(j["outbound_full"], 4u);
  EXPECT_EQ(j["host_holes"], 7u);
  EXPECT_EQ(j["channel_bytes"], 15u);
  EXPECT_EQ(j["received_by_host"], 1u);
  EXPECT_EQ(j["dead_letters_dropped"], 5u);
  EXPECT_EQ(j["failures_dropped"], 6u);
  EXPECT_EQ(j["late_replies"], 8u);

  ASSERT_EQ(j["actors"].size(), 2u);
  const json& bank = j["actors"][0];
  std::set<std::string> actor_keys;
  for (auto it = bank.begin(); it != bank.end(); ++it) actor_keys.insert(it.key());
  EXPECT_EQ(actor_keys, (std::set<std::string>{"dead_lettered", "depth", "fail_code", "handled", "handler_p50_ns",
                                               "handler_p99_ns", "hlc", "id", "name", "received", "rejected",
                                               "send_full", "send_no_actor", "send_other", "sent", "state",
                                               "timed_calls", "type"}));
  // A program without handler times: null, not zero.
  EXPECT_TRUE(bank["timed_calls"].is_null());
  EXPECT_TRUE(bank["handler_p50_ns"].is_null());
  EXPECT_TRUE(bank["handler_p99_ns"].is_null());
  EXPECT_EQ(bank["id"], 0u);
  EXPECT_EQ(bank["name"], "bank");
  EXPECT_EQ(bank["type"], "Bank");
  EXPECT_EQ(bank["state"], "running");
  EXPECT_EQ(bank["fail_code"], 0u);
  EXPECT_EQ(bank["received"], 11u);
  EXPECT_EQ(bank["handled"], 11u);
  EXPECT_EQ(bank["dead_lettered"], 9u);
  EXPECT_EQ(bank["depth"], 10u);
  EXPECT_EQ(bank["sent"], 0u);
  EXPECT_EQ(bank["send_full"], 11u);
  EXPECT_EQ(bank["send_no_actor"], 12u);
  EXPECT_EQ(bank["send_other"], 13u);
  EXPECT_EQ(bank["rejected"], 14u);
  EXPECT_EQ(bank["hlc"].get<uint64_t>(), std::numeric_limits<uint64_t>::max());
  const json& auditor = j["actors"][1];
  EXPECT_EQ(auditor["id"], 1u);
  EXPECT_EQ(auditor["state"], "failed");
  EXPECT_EQ(auditor["fail_code"], 7u);
  EXPECT_EQ(auditor["sent"], 1u);

  EXPECT_EQ(j["workers"], json::parse(R"([{"exited":false,"handled":11,"heartbeat":1234567,"worker":0},
                                          {"exited":true,"handled":1,"heartbeat":999,"worker":1}])"));
}

// A program that keeps handler times (ActorStats::timed): two more columns
// in microseconds, "-" for an actor that has handled nothing yet; the JSON
// has the numbers, and null percentiles for that actor.
SystemStats TimedStats() {
  SystemStats s = BankStats();
  for (ActorStats& a : s.actors) a.timed = true;
  s.actors[0].timed_calls = 11;
  s.actors[0].handler_p50_ns = 352;
  s.actors[0].handler_p99_ns = 12288;
  ActorStats idle = Actor(2, "idle", "Bank");
  idle.timed = true;
  s.actors.push_back(idle);
  s.actors[1].timed_calls = 1;
  s.actors[1].handler_p50_ns = 1500000;
  s.actors[1].handler_p99_ns = 1500000;
  return s;
}

TEST(SystemStatsTextTest, HandlerTimesInMicrosecondsWhenTheProgramKeepsThem) {
  EXPECT_EQ(TimedStats().ToText(),
            "phase running; host sent 12, ingress delivered 12, received by host 1\n"
            "actor    type     state      received  handled  depth  dead-lettered  sent  kFull    p50 µs    p99 µs\n"
            "bank     Bank     running          11       11      0              0     0      0     0.352    12.288\n"
            "auditor  Auditor  failed(7)         1        1      0              0     1      0  1500.000  1500.000\n"
            "idle     Bank     running           0        0      0              0     0      0         -         -");
}

TEST(SystemStatsJsonTest, HandlerTimesAreNumbersAndNullBeforeTheFirstCall) {
  const json j = json::parse(TimedStats().ToJson());
  EXPECT_EQ(j["actors"][0]["timed_calls"], 11u);
  EXPECT_EQ(j["actors"][0]["handler_p50_ns"], 352u);
  EXPECT_EQ(j["actors"][0]["handler_p99_ns"], 12288u);
  EXPECT_EQ(j["actors"][2]["timed_calls"], 0u);
  EXPECT_TRUE(j["actors"][2]["handler_p50_ns"].is_null());
  EXPECT_TRUE(j["actors"][2]["handler_p99_ns"].is_null());
}

TEST(SystemStatsJsonTest, NamesAreEscapedAndInvalidUtf8IsReplaced) {
  SystemStats s;
  s.actors = {Actor(0, "say \"hi\"\\\n\tnow", "ns::Greeter"), Actor(1, "café", "T"), Actor(2, "bad\xff", "T")};
  const std::string text = s.ToJson();
  EXPECT_EQ(text.find('\n'), std::string::npos) << text;
  EXPECT_THAT(text, HasSubstr(R"("name":"say \"hi\"\\\n\tnow")"));
  const json j = json::parse(text);
  EXPECT_EQ(j["phase"], "starting");
  EXPECT_EQ(j["actors"][0]["name"], "say \"hi\"\\\n\tnow");
  EXPECT_EQ(j["actors"][0]["type"], "ns::Greeter");
  EXPECT_EQ(j["actors"][1]["name"], "café");
  EXPECT_EQ(j["actors"][2]["name"], "bad\xEF\xBF\xBD");  // U+FFFD
  EXPECT_EQ(j["workers"], json::array());
}

TEST(SystemStatsJsonTest, EmptyStatsHaveEveryKey) {
  const json j = json::parse(SystemStats{}.ToJson());
  EXPECT_EQ(j.size(), 15u);
  EXPECT_EQ(j["actors"], json::array());
  EXPECT_EQ(j["host_sent"], 0u);
  EXPECT_EQ(j["channel_bytes"], 0u);
}

}  // namespace
}  // namespace rk
