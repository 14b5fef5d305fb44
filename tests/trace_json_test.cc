// Copyright 2026 The RingKernel Authors.
//
// The Chrome trace-event writer: every event has its phase's fields, a
// handler is one slice on its worker's and its actor's track, flows join a
// send to its handler, nothing lost goes unreported, names are escaped, and
// the output depends on the events only, not on their order.
#include <algorithm>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <streambuf>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "ringkernel/device/types.h"
#include "runtime/trace_events.h"
#include "tests/test_support.h"

namespace rk::internal {
namespace {

using ::rk::testing::StatusIs;
using ::testing::HasSubstr;
using json = nlohmann::json;
using Kind = TraceEventKind;

constexpr uint64_t kT0 = 5'000'000'000'123;  // the trace's first event, in host ns

DeviceTraceEvent Dev(uint64_t dt, Kind kind, uint32_t worker, uint32_t actor, uint32_t msg = 1, uint32_t peer = 0,
                     uint64_t flow = 0) {
  return DeviceTraceEvent{kT0 + dt, kind, worker, actor, msg, peer, flow};
}

TraceNames Names() {
  return {[](uint32_t id) { return absl::StrCat("a", id); }, [](uint32_t id) { return absl::StrCat("m", id); }};
}

std::string WriteText(const TraceContents& t, const TraceNames& names = Names()) {
  std::ostringstream out;
  EXPECT_TRUE(WriteChromeTrace(t, names, out).ok());
  EXPECT_TRUE(ValidateChromeTrace(out.str()).ok()) << ValidateChromeTrace(out.str());
  return out.str();
}

json Write(const TraceContents& t, const TraceNames& names = Names()) { return json::parse(WriteText(t, names)); }

// The events of phase `ph` (on pid/tid where given), in output order.
std::vector<json> Find(const json& doc, const std::string& ph, int pid = -1, int64_t tid = -1) {
  std::vector<json> found;
  for (const json& e : doc["traceEvents"]) {
    if (e["ph"] == ph && (pid < 0 || e["pid"] == pid) && (tid < 0 || e["tid"] == tid)) found.push_back(e);
  }
  return found;
}

std::string ThreadName(const json& doc, int pid, int64_t tid) {
  for (const json& e : Find(doc, "M", pid, tid)) {
    if (e["name"] == "thread_name") return e["args"]["name"];
  }
  return "";
}

// Slices of one thread must not overlap (the format forbids it).
void ExpectNoOverlap(const json& doc) {
  std::map<std::pair<int, int64_t>, double> end;
  for (const json& x : Find(doc, "X")) {
    auto [it, added] = end.try_emplace({x["pid"], x["tid"]}, 0.0);
    EXPECT_GE(x["ts"].get<double>(), it->second) << x;
    it->second = x["ts"].get<double>() + x["dur"].get<double>();
  }
}

TEST(TraceJsonTest, HandlersAreSlicesOnWorkerAndActorTracks) {
  TraceContents t;
  t.workers = 2;
  t.dropped = {0, 0};
  t.device = {Dev(0, Kind::kHandlerBegin, 0, 3, 7, kHostActorValue), Dev(1500, Kind::kHandlerEnd, 0, 3, 7),
              Dev(2001, Kind::kHandlerBegin, 0, 3, 8, 5), Dev(4002, Kind::kHandlerEnd, 0, 3, 8),
              Dev(500, Kind::kHandlerBegin, 1, 5, 9, 3), Dev(900, Kind::kHandlerEnd, 1, 5, 9)};
  t.host = {{kT0 + 10, kT0 + 20, "Send", 3, 7, 0, true}, {kT0 + 30, kT0 + 40, "Spawn", kNoActorValue, 0, 0, false}};
  const std::string text = WriteText(t);
  const json doc = json::parse(text);
  EXPECT_EQ(doc["displayTimeUnit"], "ns");
  EXPECT_EQ(doc["otherData"]["workers"], 2);
  // Metadata: the three processes, workers first; each track named.
  std::map<int, int> sort;
  for (const json& m : Find(doc, "M")) {
    if (m["name"] == "process_sort_index") sort[m["pid"]] = m["args"]["sort_index"];
  }
  EXPECT_LT(sort[1], sort[2]);
  EXPECT_LT(sort[2], sort[3]);
  EXPECT_EQ(ThreadName(doc, 1, 1), "worker 0");
  EXPECT_EQ(ThreadName(doc, 1, 2), "worker 1");
  EXPECT_EQ(ThreadName(doc, 2, 4), "a3");
  EXPECT_EQ(ThreadName(doc, 2, 6), "a5");
  EXPECT_EQ(ThreadName(doc, 3, 1), "host API");

  const std::vector<json> a3 = Find(doc, "X", 2, 4);
  ASSERT_EQ(a3.size(), 2u);
  EXPECT_EQ(Find(doc, "X", 2, 6).size(), 1u);
  EXPECT_EQ(Find(doc, "X", 1, 1).size(), 2u);
  EXPECT_EQ(Find(doc, "X", 1, 2).size(), 1u);
  // Relative to the first event, in µs with the nanoseconds kept.
  EXPECT_EQ(a3[0]["name"], "m7");
  EXPECT_DOUBLE_EQ(a3[0]["ts"].get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(a3[0]["dur"].get<double>(), 1.5);
  EXPECT_EQ(a3[0]["cat"], "handler");
  EXPECT_EQ(a3[0]["args"], json({{"actor", "a3"}, {"sender", "host"}, {"msg_type", 7}}));
  EXPECT_EQ(a3[1]["name"], "m8");
  EXPECT_DOUBLE_EQ(a3[1]["ts"].get<double>(), 2.001);
  EXPECT_DOUBLE_EQ(a3[1]["dur"].get<double>(), 2.001);
  EXPECT_EQ(a3[1]["args"]["sender"], "a5");
  EXPECT_THAT(text, HasSubstr("\"ts\":2.001,"));
  EXPECT_THAT(text, HasSubstr("\"dur\":1.500,"));

  const std::vector<json> host = Find(doc, "X", 3, 1);
  ASSERT_EQ(host.size(), 2u);
  EXPECT_EQ(host[0]["name"], "Send");
  EXPECT_EQ(host[0]["args"], json({{"actor", "a3"}, {"message", "m7"}, {"ok", true}}));
  EXPECT_DOUBLE_EQ(host[0]["ts"].get<double>(), 0.010);
  EXPECT_EQ(host[1]["args"], json({{"ok", false}}));
  // Sorted by time.
  double ts = 0;
  for (const json& e : doc["traceEvents"]) {
    EXPECT_GE(e["ts"].get<double>(), ts) << e;
    ts = e["ts"];
  }
  ExpectNoOverlap(doc);
}

TEST(TraceJsonTest, FlowsJoinSendsAndAsksToTheirHandlers) {
  TraceContents t;
  t.workers = 1;
  t.device = {Dev(0, Kind::kHandlerBegin, 0, 1, 2, kHostActorValue, 0x900000000000001),
              Dev(100, Kind::kSend, 0, 1, 3, 2, 0x77), Dev(110, Kind::kSend, 0, 1, 3, 2, 0),
              Dev(200, Kind::kHandlerEnd, 0, 1, 2), Dev(300, Kind::kHandlerBegin, 0, 2, 3, 1, 0x77),
              Dev(400, Kind::kHandlerEnd, 0, 2, 3)};
  t.host = {{kT0 - 50, kT0 + 500, "Ask", 1, 2, 0x900000000000001, true}};
  const json doc = Write(t);
  const std::vector<json> s = Find(doc, "s"), f = Find(doc, "f");
  ASSERT_EQ(s.size(), 2u);
  ASSERT_EQ(f.size(), 2u);
  // The Ask begins first: the host's flow; ids are hex strings.
  EXPECT_EQ(s[0]["id"], "0x900000000000001");
  EXPECT_EQ(s[0]["pid"], 3);
  EXPECT_DOUBLE_EQ(s[0]["ts"].get<double>(), 0.0);
  EXPECT_EQ(f[0]["id"], s[0]["id"]);
  EXPECT_EQ(f[0]["pid"], 2);
  EXPECT_EQ(f[0]["tid"], 2);
  EXPECT_DOUBLE_EQ(f[0]["ts"].get<double>(), 0.050);
  EXPECT_EQ(s[1]["id"], "0x77");
  EXPECT_EQ(s[1]["tid"], 2);  // the sender's track
  EXPECT_DOUBLE_EQ(s[1]["ts"].get<double>(), 0.150);
  EXPECT_EQ(f[1]["id"], "0x77");
  EXPECT_EQ(f[1]["tid"], 3);  // the receiver's track, at its handler's begin
  EXPECT_DOUBLE_EQ(f[1]["ts"].get<double>(), Find(doc, "X", 2, 3)[0]["ts"].get<double>());
  for (const json& e : f) {
    EXPECT_EQ(e["bp"], "e");
    EXPECT_EQ(e["cat"], "msg");
  }
  EXPECT_EQ(doc["otherData"]["flows"], 2);
  EXPECT_EQ(doc["otherData"]["unmatched_flows"], 0);
  const std::vector<json> sends = Find(doc, "i", 2, 2);
  ASSERT_EQ(sends.size(), 2u);
  EXPECT_EQ(sends[0]["name"], "send \u2192 a2");
  EXPECT_EQ(sends[0]["s"], "t");
}

TEST(TraceJsonTest, UnmatchedBeginsEndsAndFlowsAreHandled) {
  TraceContents t;
  t.workers = 1;
  t.device = {
      Dev(0, Kind::kHandlerEnd, 0, 1),                     // no begin: counted, not drawn
      Dev(10, Kind::kHandlerBegin, 0, 1, 4, 0, 0x21),      // no send for its flow; its end was lost
      Dev(20, Kind::kSend, 0, 1, 5, 2, 0x22),              // no handler for its flow
      Dev(30, Kind::kHandlerBegin, 0, 1, 5),
      Dev(40, Kind::kHandlerEnd, 0, 1, 5),
      Dev(50, Kind::kHandlerEnd, 0, 1, 6),                 // a handler within one tick: its end sorts first
      Dev(50, Kind::kHandlerBegin, 0, 1, 6),
      Dev(60, Kind::kHandlerBegin, 0, 2, 7),               // the trace stops mid-handler
      Dev(90, Kind::kQueueDepth, 1, 2, 0, 4),
  };
  const json doc = Write(t);
  const std::vector<json> a1 = Find(doc, "X", 2, 2);
  ASSERT_EQ(a1.size(), 3u);
  EXPECT_EQ(a1[0]["name"], "m4");
  EXPECT_DOUBLE_EQ(a1[0]["dur"].get<double>(), 0.020);
  EXPECT_EQ(a1[0]["args"]["unfinished"], true);
  EXPECT_EQ(a1[1]["name"], "m5");
  EXPECT_FALSE(a1[1]["args"].contains("unfinished"));
  EXPECT_EQ(a1[2]["name"], "m6");
  EXPECT_DOUBLE_EQ(a1[2]["dur"].get<double>(), 0.0);
  const std::vector<json> a2 = Find(doc, "X", 2, 3);
  ASSERT_EQ(a2.size(), 1u);
  EXPECT_DOUBLE_EQ(a2[0]["ts"].get<double>() + a2[0]["dur"].get<double>(), 0.090);
  EXPECT_EQ(a2[0]["args"]["unfinished"], true);
  EXPECT_EQ(doc["otherData"]["unmatched_ends"], 1);
  EXPECT_EQ(doc["otherData"]["unfinished_handlers"], 2);
  EXPECT_EQ(doc["otherData"]["unmatched_flows"], 2);
  EXPECT_EQ(doc["otherData"]["flows"], 0);
  EXPECT_TRUE(Find(doc, "s").empty());
  EXPECT_TRUE(Find(doc, "f").empty());
  const std::vector<json> depth = Find(doc, "C", 2, 3);
  ASSERT_EQ(depth.size(), 1u);
  EXPECT_EQ(depth[0]["name"], "depth a2");
  EXPECT_EQ(depth[0]["args"], json({{"depth", 4}}));
  ExpectNoOverlap(doc);
}

TEST(TraceJsonTest, InstantsNameWhatHappened) {
  TraceContents t;
  t.workers = 1;
  t.device = {Dev(0, Kind::kHandlerBegin, 0, 1, 4), Dev(1, Kind::kDeadLetter, 0, 1, 4, 2),
              Dev(2, Kind::kRetry, 0, 1, 4), Dev(3, Kind::kFault, 0, 1, 4, 9), Dev(4, Kind::kHandlerEnd, 0, 1, 4)};
  const std::vector<json> i = Find(Write(t), "i", 2, 2);
  ASSERT_EQ(i.size(), 3u);
  EXPECT_EQ(i[0]["name"], "dead letter (2)");
  EXPECT_EQ(i[1]["name"], "retry");
  EXPECT_EQ(i[2]["name"], "fault (code 9)");
}

// A handler that asks for its message again (ctx.retry_later) ends that
// call with the retry, not with an end: its span ends there, marked
// retried, and the next delivery is a span of its own.
TEST(TraceJsonTest, ARetryEndsItsHandlersSpan) {
  TraceContents t;
  t.workers = 1;
  t.device = {Dev(0, Kind::kHandlerBegin, 0, 1, 4), Dev(3, Kind::kRetry, 0, 1, 4), Dev(10, Kind::kHandlerBegin, 0, 1, 4),
              Dev(12, Kind::kHandlerEnd, 0, 1, 4)};
  const json doc = Write(t);
  const std::vector<json> x = Find(doc, "X", 2, 2);
  ASSERT_EQ(x.size(), 2u);
  EXPECT_EQ(x[0]["args"].value("retried", false), true);
  EXPECT_DOUBLE_EQ(x[0]["dur"].get<double>(), 0.003);
  EXPECT_FALSE(x[0]["args"].contains("unfinished"));
  EXPECT_FALSE(x[1]["args"].contains("retried"));
  EXPECT_DOUBLE_EQ(x[1]["dur"].get<double>(), 0.002);
  EXPECT_EQ(doc["otherData"]["unfinished_handlers"], 0);
  EXPECT_EQ(doc["otherData"]["unmatched_ends"], 0);
}

TEST(TraceJsonTest, DroppedEventsAreNeverSilent) {
  TraceContents t;
  t.workers = 3;
  t.dropped = {3, 0, 2};
  t.device = {Dev(0, Kind::kHandlerBegin, 0, 1), Dev(700, Kind::kHandlerEnd, 0, 1)};
  json doc = Write(t);
  EXPECT_EQ(doc["otherData"]["dropped_events"], 5);
  EXPECT_EQ(doc["otherData"]["dropped_per_worker"], json({3, 0, 2}));
  const std::vector<json> marks = Find(doc, "i");
  ASSERT_EQ(marks.size(), 1u);
  EXPECT_EQ(marks[0]["name"], "5 events dropped (trace ring full)");
  EXPECT_EQ(marks[0]["s"], "g");
  EXPECT_DOUBLE_EQ(marks[0]["ts"].get<double>(), 0.7);
  EXPECT_EQ(doc["traceEvents"].back(), marks[0]);

  t.dropped = {0, 0, 0};
  doc = Write(t);
  EXPECT_EQ(doc["otherData"]["dropped_events"], 0);
  EXPECT_TRUE(Find(doc, "i").empty());
}

TEST(TraceJsonTest, NamesAreEscaped) {
  const std::string hard = "q\"uote\\back\nline\ttab\x01\x1f \xC3\xA4 \xE4\xB8\x96 \xF0\x9F\x9A\x80";
  TraceContents t;
  t.device = {Dev(0, Kind::kHandlerBegin, 0, 1), Dev(5, Kind::kHandlerEnd, 0, 1)};
  t.host = {{kT0, kT0 + 1, hard, 1, 1, 0, true}};
  const TraceNames names{[&](uint32_t) { return hard; }, [](uint32_t) { return std::string("bad \xFF utf-8"); }};
  const std::string text = WriteText(t, names);
  EXPECT_THAT(text, HasSubstr("\\u0001"));
  const json doc = json::parse(text);
  EXPECT_EQ(ThreadName(doc, 2, 2), hard);
  EXPECT_EQ(Find(doc, "X", 2, 2)[0]["args"]["actor"], hard);
  EXPECT_EQ(Find(doc, "X", 3, 1)[0]["name"], hard);
  EXPECT_EQ(Find(doc, "X", 2, 2)[0]["name"], "bad \xEF\xBF\xBD utf-8");  // U+FFFD
}

TEST(TraceJsonTest, OverlappingHandlersOfAWorkerGetLanes) {
  TraceContents t;
  t.workers = 1;
  // Two owner threads of worker 0 run handlers at once; a third follows.
  t.device = {Dev(0, Kind::kHandlerBegin, 0, 1), Dev(100, Kind::kHandlerEnd, 0, 1),
              Dev(50, Kind::kHandlerBegin, 0, 2), Dev(150, Kind::kHandlerEnd, 0, 2),
              Dev(120, Kind::kHandlerBegin, 0, 3), Dev(130, Kind::kHandlerEnd, 0, 3)};
  const json doc = Write(t);
  EXPECT_EQ(Find(doc, "X", 1, 1).size(), 2u);
  std::vector<json> lane2;
  for (const json& x : Find(doc, "X", 1)) {
    if (x["tid"] != 1) lane2.push_back(x);
  }
  ASSERT_EQ(lane2.size(), 1u);
  EXPECT_EQ(lane2[0]["args"]["actor"], "a2");
  EXPECT_EQ(ThreadName(doc, 1, lane2[0]["tid"]), "worker 0 (2)");
  ExpectNoOverlap(doc);
}

TEST(TraceJsonTest, OutputDependsOnTheEventsNotTheirOrder) {
  TraceContents t;
  t.workers = 2;
  for (uint32_t i = 0; i < 40; ++i) {
    t.device.push_back(Dev(i * 10 % 70, Kind::kHandlerBegin, i % 2, i % 5, i, 0, i % 3 == 0 ? 100 + i : 0));
    t.device.push_back(Dev(i * 10 % 70 + 5, Kind::kHandlerEnd, i % 2, i % 5, i));
    t.device.push_back(Dev(i * 10 % 70 + 2, Kind::kSend, i % 2, i % 5, i, 1, 100 + i + 3));
  }
  t.host = {{kT0, kT0 + 3, "Send", 1, 1, 0, true}, {kT0, kT0 + 3, "Ask", 2, 2, 7, true}};
  const std::string first = WriteText(t);
  std::mt19937 rng(11);
  for (int round = 0; round < 5; ++round) {
    std::shuffle(t.device.begin(), t.device.end(), rng);
    std::shuffle(t.host.begin(), t.host.end(), rng);
    EXPECT_EQ(WriteText(t), first);
  }
  ExpectNoOverlap(json::parse(first));
}

class FailingBuffer : public std::streambuf {
 protected:
  int_type overflow(int_type) override { return traits_type::eof(); }
};

TEST(TraceJsonTest, NullNamesAndStreamErrors) {
  TraceContents t;
  t.device = {Dev(0, Kind::kHandlerBegin, 0, 3, 7, 4), Dev(5, Kind::kHandlerEnd, 0, 3, 7)};
  const json doc = Write(t, TraceNames{});
  EXPECT_EQ(ThreadName(doc, 2, 4), "actor 3");
  EXPECT_EQ(Find(doc, "X", 2, 4)[0]["name"], "message 7");
  EXPECT_EQ(Find(doc, "X", 2, 4)[0]["args"]["sender"], "actor 4");

  std::ostringstream failed;
  failed.setstate(std::ios::badbit);
  EXPECT_THAT(WriteChromeTrace(t, Names(), failed),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("stream")));
  FailingBuffer buffer;
  std::ostream out(&buffer);
  EXPECT_THAT(WriteChromeTrace(t, Names(), out), StatusIs(absl::StatusCode::kDataLoss, HasSubstr("stream")));
}

TEST(TraceJsonTest, EmptyTraceIsValid) {
  TraceContents t;
  t.workers = 2;
  const json doc = Write(t);
  EXPECT_EQ(ThreadName(doc, 1, 2), "worker 1");
  EXPECT_TRUE(Find(doc, "X").empty());
}

TEST(TraceJsonTest, ValidateChromeTraceNamesTheFirstBadEvent) {
  const std::string ok = R"({"name":"a","ph":"X","ts":1,"dur":2,"pid":1,"tid":1})";
  EXPECT_TRUE(ValidateChromeTrace(absl::StrCat("[", ok, "]")).ok());
  EXPECT_TRUE(ValidateChromeTrace(absl::StrCat(R"({"traceEvents":[)", ok, "]}")).ok());
  const std::pair<std::string, std::string> bad[] = {
      {R"({"name":"foo","ph":"X","ts":1,"pid":1,"tid":1})", "traceEvents[1] (\"foo\"): no \"dur\""},
      {R"({"name":"foo","ph":"X","ts":1,"dur":-1,"pid":1,"tid":1})", "negative"},
      {R"({"name":"foo","ph":"X","ts":1,"dur":1,"pid":1})", "no integer \"tid\""},
      {R"({"name":"foo","ph":"X","ts":"1","dur":1,"pid":1,"tid":1})", "no \"ts\""},
      {R"({"ph":"i","ts":1,"s":"t","pid":1,"tid":1})", "traceEvents[1]: no \"name\""},
      {R"({"name":"foo","ph":"i","ts":1,"pid":1,"tid":1})", "scope"},
      {R"({"name":"msg","ph":"s","ts":1,"pid":1,"tid":1})", "no \"id\""},
      {R"({"name":"thread_name","ph":"M","ts":0,"pid":1,"tid":1,"args":{}})", "\"args\".\"name\""},
      {R"({"name":"c","ph":"C","ts":0,"pid":1,"tid":1,"args":{"d":"x"}})", "not a number"},
      {R"({"name":"c","ph":"Q","ts":0,"pid":1,"tid":1})", "unknown phase \"Q\""},
      {R"(7)", "traceEvents[1]: not an object"},
  };
  for (const auto& [event, message] : bad) {
    EXPECT_THAT(ValidateChromeTrace(absl::StrCat("[", ok, ",", event, "]")),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(message)))
        << event;
  }
  EXPECT_THAT(ValidateChromeTrace("{\"traceEvents\":"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("JSON")));
  EXPECT_THAT(ValidateChromeTrace("{}"), StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("traceEvents")));
}

}  // namespace
}  // namespace rk::internal

namespace rk::internal {
namespace {

// The example trace committed beside the scripts (examples/pingpong.trace.json,
// written on a GPU by `actorc run ... --trace` from examples/pingpong_trace.jsonl):
// a viewer can open it, and it shows the rally — 12 hits on the two players'
// tracks, the serve first, and a flow for each of the 11 balls.
TEST(ExampleTraceTest, ThePingPongTraceIsValidAndShowsTheRally) {
  std::ifstream in(::rk::testing::SourceDir() + "/examples/pingpong.trace.json");
  ASSERT_TRUE(in) << "no examples/pingpong.trace.json";
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  ASSERT_TRUE(ValidateChromeTrace(text).ok()) << ValidateChromeTrace(text);
  const json doc = json::parse(text);
  std::map<uint64_t, std::string> players;  // actor track → name
  for (const json& e : doc["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name" && e["pid"] == 2) players[e["tid"]] = e["args"]["name"];
  }
  ASSERT_EQ(players.size(), 2u);
  std::map<std::string, std::vector<std::string>> hits;  // player → message names, in time order
  size_t starts = 0, ends = 0;
  std::vector<std::pair<double, const json*>> spans;
  for (const json& e : doc["traceEvents"]) {
    if (e["ph"] == "X" && e["pid"] == 2) spans.emplace_back(e["ts"].get<double>(), &e);
    starts += e["ph"] == "s";
    ends += e["ph"] == "f";
  }
  std::sort(spans.begin(), spans.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [ts, e] : spans) hits[players[(*e)["tid"]]].push_back((*e)["name"]);
  ASSERT_EQ(hits["ping"].size(), 6u);
  ASSERT_EQ(hits["pong"].size(), 6u);
  EXPECT_EQ(hits["ping"][0], "Serve");
  EXPECT_EQ(std::count(hits["pong"].begin(), hits["pong"].end(), "Ball"), 6);
  EXPECT_EQ(starts, 11u);
  EXPECT_EQ(ends, 11u);
  EXPECT_EQ(doc["otherData"]["dropped_events"], 0);
  EXPECT_EQ(doc["otherData"]["flows"], 11);
}

}  // namespace
}  // namespace rk::internal
