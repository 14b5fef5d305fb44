// Copyright 2026 The RingKernel Authors.
//
// trace_json.cc: the timeline in the Chrome trace-event JSON format, which
// Perfetto's UI and chrome://tracing open.
//
// Process 1 "GPU workers" has a track per worker, 2 "GPU actors" one per
// actor with events, 3 "host" the host API calls. A handler is a complete
// ("X") event on its worker's track and on its actor's; a flow arrow joins a
// send (or a host Ask) to the handler of the message.
//
// Slices of one track must nest: the format forbids overlap, and Perfetto
// truncates or drops overlapping "X" events. Yet a worker runs the handlers
// of many actors at once (one per owner thread), and host calls come from
// any thread. So a track whose slices overlap is drawn in lanes: lane 0 has
// the track's own tid, each further lane is a thread of its own ("worker 3
// (2)") sorted right after it. Instants and flows go on the lane of the
// handler they happened in, so that the viewer binds them to it.
//
// The text is written by hand so that times keep their nanoseconds exactly
// (integers printed as "12.345" µs); strings go through nlohmann's escaping,
// which also replaces invalid UTF-8.
#include "runtime/trace_events.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <queue>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "nlohmann/json.hpp"
#include "ringkernel/device/types.h"

namespace rk::internal {
namespace {

using Kind = TraceEventKind;
using Key = std::pair<uint32_t, uint32_t>;  // (worker, actor)

constexpr int kWorkersPid = 1;
constexpr int kActorsPid = 2;
constexpr int kHostPid = 3;
constexpr uint64_t kOpen = std::numeric_limits<uint64_t>::max();  // the end of a slice still open

// At one timestamp: slices first, since a flow or instant binds to the
// slice that encloses it when the viewer reads it; the dropped-events mark
// last.
enum Rank { kSliceRank, kCounterRank, kInstantRank, kFlowRank, kDroppedRank };

std::string Quote(std::string_view s) {
  return nlohmann::json(std::string(s)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// Nanoseconds as microseconds with three decimals, from integers: exact
// where a double would round at a large offset.
std::string Micros(uint64_t ns) { return absl::StrFormat("%d.%03d", ns / 1000, ns % 1000); }

struct Track {
  int pid = 0;
  uint64_t tid = 0;  // lane 0's
  std::string name;
  std::vector<std::pair<uint64_t, uint64_t>> spans;  // [begin, end] ns of its slices
  std::vector<uint32_t> lane_of;                     // per span
  std::vector<uint64_t> lane_tids;                   // per lane
};

// An output event before it has its tid (its track's lane, known once every
// slice is).
struct Event {
  uint64_t ts = 0;
  int rank = 0;
  size_t track = 0;
  int span = -1;  // the span whose lane it goes on; -1: lane 0
  std::string ph, name;
  std::string rest;  // further fields, each led by a comma
};

// Where a flow begins or ends.
struct FlowEnd {
  uint64_t ts;
  size_t track;
  int span;
};

class TraceBuilder {
 public:
  TraceBuilder(const TraceContents& t, const TraceNames& names) : t_(t), names_(names) {}

  void Build() {
    for (const DeviceTraceEvent& e : t_.device) Extend(e.time_ns, e.time_ns);
    for (const HostTraceEvent& h : t_.host) Extend(h.begin_ns, std::max(h.begin_ns, h.end_ns));
    if (first_ > last_) first_ = last_ = 0;  // no events
    host_track_ = NewTrack(kHostPid, 1, "host API");
    for (uint32_t w = 0; w < t_.workers; ++w) WorkerTrack(w);
    Device();
    Host();
    Flows();
    for (uint64_t d : t_.dropped) dropped_ += d;
    if (dropped_ > 0) {
      // Never silent: the viewer shows a mark across every track.
      Add({last_, kDroppedRank, host_track_, -1, "i", absl::StrCat(dropped_, " events dropped (trace ring full)"),
           ",\"s\":\"g\""});
    }
    AssignLanes();
  }

  absl::Status Write(std::ostream& out) const {
    out << "{\"traceEvents\":[\n";
    const char* sep = "";
    auto meta = [&](int pid, uint64_t tid, const char* what, const std::string& arg) {
      out << sep << "{\"name\":\"" << what << "\",\"ph\":\"M\",\"ts\":0.000,\"pid\":" << pid << ",\"tid\":" << tid
          << ",\"args\":{" << arg << "}}";
      sep = ",\n";
    };
    const std::pair<int, const char*> processes[] = {
        {kWorkersPid, "GPU workers"}, {kActorsPid, "GPU actors"}, {kHostPid, "host"}};
    for (const auto& [pid, name] : processes) {
      meta(pid, 0, "process_name", absl::StrCat("\"name\":", Quote(name)));
      meta(pid, 0, "process_sort_index", absl::StrCat("\"sort_index\":", pid));
    }
    int sort_index = 0;
    for (size_t i : order_) {
      const Track& track = tracks_[i];
      for (size_t lane = 0; lane < track.lane_tids.size(); ++lane) {
        const std::string name = lane == 0 ? track.name : absl::StrCat(track.name, " (", lane + 1, ")");
        meta(track.pid, track.lane_tids[lane], "thread_name", absl::StrCat("\"name\":", Quote(name)));
        meta(track.pid, track.lane_tids[lane], "thread_sort_index", absl::StrCat("\"sort_index\":", sort_index++));
      }
    }
    std::vector<const Event*> sorted;
    sorted.reserve(events_.size());
    for (const Event& e : events_) sorted.push_back(&e);
    // Stable: at equal time and rank, the order of creation, which follows
    // the (deterministically) sorted input.
    std::stable_sort(sorted.begin(), sorted.end(), [](const Event* a, const Event* b) {
      return std::tie(a->ts, a->rank) < std::tie(b->ts, b->rank);
    });
    for (const Event* e : sorted) {
      const Track& track = tracks_[e->track];
      const uint64_t tid = e->span < 0 ? track.tid : track.lane_tids[track.lane_of[static_cast<size_t>(e->span)]];
      out << sep << "{\"name\":" << Quote(e->name) << ",\"ph\":\"" << e->ph << "\",\"ts\":" << Micros(e->ts - first_)
          << ",\"pid\":" << track.pid << ",\"tid\":" << tid << e->rest << "}";
    }
    out << "\n],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":{\"dropped_events\":" << dropped_
        << ",\"dropped_per_worker\":[" << absl::StrJoin(t_.dropped, ",") << "],\"workers\":" << t_.workers
        << ",\"flows\":" << flows_ << ",\"unmatched_flows\":" << unmatched_flows_
        << ",\"unmatched_ends\":" << unmatched_ends_ << ",\"unfinished_handlers\":" << unfinished_ << "}}\n";
    out.flush();
    if (!out) return absl::DataLossError("writing the Chrome trace failed: the output stream reported an error");
    return absl::OkStatus();
  }

 private:
  // A handler that has begun: the begin event and its slice on both tracks.
  struct Open {
    const DeviceTraceEvent* begin;
    size_t wtrack;
    int wspan;
    size_t atrack;
    int aspan;
  };

  void Extend(uint64_t begin, uint64_t end) {
    first_ = std::min(first_, begin);
    last_ = std::max(last_, end);
  }

  std::string ActorName(uint32_t id) const {
    if (id == kHostActorValue) return "host";
    return names_.actor ? names_.actor(id) : absl::StrCat("actor ", id);
  }
  std::string MessageName(uint32_t id) const {
    return names_.message ? names_.message(id) : absl::StrCat("message ", id);
  }

  size_t NewTrack(int pid, uint64_t tid, std::string name) {
    tracks_.push_back(Track{pid, tid, std::move(name), {}, {}, {}});
    return tracks_.size() - 1;
  }
  size_t WorkerTrack(uint32_t w) {
    auto [it, added] = workers_.try_emplace(w, 0);
    if (added) it->second = NewTrack(kWorkersPid, uint64_t{w} + 1, absl::StrCat("worker ", w));
    return it->second;
  }
  size_t ActorTrack(uint32_t a) {
    auto [it, added] = actors_.try_emplace(a, 0);
    if (added) it->second = NewTrack(kActorsPid, uint64_t{a} + 1, ActorName(a));
    return it->second;
  }
  int NewSpan(size_t track, uint64_t begin, uint64_t end) {
    tracks_[track].spans.emplace_back(begin, end);
    return static_cast<int>(tracks_[track].spans.size() - 1);
  }
  void Add(Event e) { events_.push_back(std::move(e)); }

  // `retried`: the handler asked for its message again (ctx.retry_later),
  // which ends this call of it.
  void Close(const Open& o, uint64_t end, bool unfinished, bool retried = false) {
    const DeviceTraceEvent& b = *o.begin;
    tracks_[o.wtrack].spans[static_cast<size_t>(o.wspan)].second = end;
    tracks_[o.atrack].spans[static_cast<size_t>(o.aspan)].second = end;
    const std::string rest =
        absl::StrCat(",\"dur\":", Micros(end - b.time_ns), ",\"cat\":\"handler\",\"args\":{\"actor\":",
                     Quote(ActorName(b.actor)), ",\"sender\":", Quote(ActorName(b.peer)), ",\"msg_type\":", b.msg_type,
                     unfinished ? ",\"unfinished\":true" : "", retried ? ",\"retried\":true" : "", "}");
    const std::string name = MessageName(b.msg_type);
    Add({b.time_ns, kSliceRank, o.wtrack, o.wspan, "X", name, rest});
    Add({b.time_ns, kSliceRank, o.atrack, o.aspan, "X", name, rest});
    if (unfinished) ++unfinished_;
  }

  void Device() {
    std::vector<const DeviceTraceEvent*> order;
    order.reserve(t_.device.size());
    for (const DeviceTraceEvent& e : t_.device) order.push_back(&e);
    // Every field in the key, so that the input's order never shows. At one
    // time an end comes before a begin: one handler ends and the next
    // begins within a tick of the clock.
    auto rank = [](Kind k) { return k == Kind::kHandlerEnd ? 0 : k == Kind::kHandlerBegin ? 1 : 2; };
    auto key = [&](const DeviceTraceEvent* e) {
      return std::make_tuple(e->time_ns, rank(e->kind), e->worker, e->actor, static_cast<int>(e->kind), e->msg_type,
                             e->peer, e->flow);
    };
    std::sort(order.begin(), order.end(), [&](const auto* a, const auto* b) { return key(a) < key(b); });

    std::map<Key, Open> open;
    std::map<Key, uint64_t> pending_end;  // an end with no begin, until the next begin of its key
    std::map<Key, int> last_span;         // the actor-track span of the key's latest handler
    for (const DeviceTraceEvent* e : order) {
      const Key k{e->worker, e->actor};
      const size_t atrack = ActorTrack(e->actor);
      if (e->kind == Kind::kHandlerEnd) {
        if (auto it = open.find(k); it != open.end()) {
          Close(it->second, e->time_ns, false);
          open.erase(it);
        } else if (auto [it2, added] = pending_end.try_emplace(k, e->time_ns); !added) {
          ++unmatched_ends_;
          it2->second = e->time_ns;
        }
        continue;
      }
      if (e->kind == Kind::kHandlerBegin) {
        if (auto it = open.find(k); it != open.end()) {
          // Its end was lost (a full ring): it ends where the next begins.
          Close(it->second, e->time_ns, true);
          open.erase(it);
        }
        const size_t wtrack = WorkerTrack(e->worker);
        const Open o{e, wtrack, NewSpan(wtrack, e->time_ns, kOpen), atrack, NewSpan(atrack, e->time_ns, kOpen)};
        last_span[k] = o.aspan;
        if (e->flow != 0) begins_.try_emplace(e->flow, FlowEnd{e->time_ns, atrack, o.aspan});
        if (auto p = pending_end.find(k); p != pending_end.end()) {
          // An end of the same tick sorted before its begin: a handler
          // shorter than the clock's resolution.
          const bool same_tick = p->second == e->time_ns;
          if (!same_tick) ++unmatched_ends_;
          pending_end.erase(p);
          if (same_tick) {
            Close(o, e->time_ns, false);
            continue;
          }
        }
        open.emplace(k, o);
        continue;
      }
      if (e->kind == Kind::kRetry) {
        if (auto it = open.find(k); it != open.end()) {
          Close(it->second, e->time_ns, false, /*retried=*/true);
          open.erase(it);
        }
      }
      // The rest go on the lane of the handler they happened in.
      int span = -1;
      if (auto it = last_span.find(k); it != last_span.end()) {
        if (tracks_[atrack].spans[static_cast<size_t>(it->second)].second >= e->time_ns) span = it->second;
      }
      const std::string message = absl::StrCat("\"message\":", Quote(MessageName(e->msg_type)));
      std::string name, args;
      switch (e->kind) {
        case Kind::kSend:
          name = absl::StrCat("send \u2192 ", ActorName(e->peer));
          args = absl::StrCat(message, ",\"receiver\":", Quote(ActorName(e->peer)));
          if (e->flow != 0) sends_.try_emplace(e->flow, FlowEnd{e->time_ns, atrack, span});
          break;
        case Kind::kDeadLetter:
          name = absl::StrCat("dead letter (", e->peer, ")");
          args = message;
          break;
        case Kind::kFault:
          name = absl::StrCat("fault (code ", e->peer, ")");
          break;
        case Kind::kRetry:
          name = "retry";
          args = message;
          break;
        case Kind::kQueueDepth:
          Add({e->time_ns, kCounterRank, atrack, -1, "C", absl::StrCat("depth ", ActorName(e->actor)),
               absl::StrCat(",\"args\":{\"depth\":", e->peer, "}")});
          continue;
        default:  // a kind this writer does not know: shown, not dropped
          name = absl::StrCat("event (kind ", static_cast<int>(e->kind), ")");
          break;
      }
      Add({e->time_ns, kInstantRank, atrack, span, "i", std::move(name),
           absl::StrCat(",\"s\":\"t\",\"cat\":\"actor\",\"args\":{", args, "}")});
    }
    unmatched_ends_ += pending_end.size();
    // The trace stopped mid-handler: drawn to its last timestamp.
    for (const auto& [k, o] : open) Close(o, last_, true);
  }

  void Host() {
    std::vector<const HostTraceEvent*> order;
    order.reserve(t_.host.size());
    for (const HostTraceEvent& h : t_.host) order.push_back(&h);
    auto key = [](const HostTraceEvent* h) {
      return std::tie(h->begin_ns, h->end_ns, h->call, h->actor, h->msg_type, h->flow, h->ok);
    };
    std::sort(order.begin(), order.end(), [&](const auto* a, const auto* b) { return key(a) < key(b); });
    for (const HostTraceEvent* h : order) {
      const uint64_t end = std::max(h->begin_ns, h->end_ns);
      const int span = NewSpan(host_track_, h->begin_ns, end);
      std::string args;
      if (h->actor != kNoActorValue) absl::StrAppend(&args, "\"actor\":", Quote(ActorName(h->actor)), ",");
      if (h->msg_type != 0) absl::StrAppend(&args, "\"message\":", Quote(MessageName(h->msg_type)), ",");
      absl::StrAppend(&args, "\"ok\":", h->ok ? "true" : "false");
      Add({h->begin_ns, kSliceRank, host_track_, span, "X", h->call,
           absl::StrCat(",\"dur\":", Micros(end - h->begin_ns), ",\"cat\":\"host\",\"args\":{", args, "}")});
      if (h->flow != 0) host_flows_.try_emplace(h->flow, FlowEnd{h->begin_ns, host_track_, span});
    }
  }

  // A flow's id is written as a hex string ("0x1f"): Perfetto reads string
  // ids as hex, and chrome://tracing's numbers would round above 2^53.
  void Flows() {
    for (const auto& [flow, to] : begins_) {
      const FlowEnd* from = nullptr;
      if (auto it = sends_.find(flow); it != sends_.end()) {
        from = &it->second;
      } else if (auto h = host_flows_.find(flow); h != host_flows_.end()) {
        from = &h->second;
      }
      if (from == nullptr) {
        ++unmatched_flows_;
        continue;
      }
      const std::string id = absl::StrCat(",\"cat\":\"msg\",\"id\":\"0x", absl::Hex(flow), "\"");
      Add({from->ts, kFlowRank, from->track, from->span, "s", "msg", id});
      Add({to.ts, kFlowRank, to.track, to.span, "f", "msg", absl::StrCat(id, ",\"bp\":\"e\"")});
      ++flows_;
    }
    for (const auto* sources : {&sends_, &host_flows_}) {
      for (const auto& [flow, from] : *sources) {
        if (!begins_.contains(flow)) ++unmatched_flows_;
      }
    }
  }

  // Each span of a track goes on the lowest lane free at its begin (a
  // slice that ends where the next begins leaves the lane free); the
  // further lanes get tids above every track's own in the process.
  void AssignLanes() {
    std::map<int, uint64_t> next_tid;
    for (const Track& track : tracks_) next_tid[track.pid] = std::max(next_tid[track.pid], track.tid + 1);
    order_.resize(tracks_.size());
    std::iota(order_.begin(), order_.end(), size_t{0});
    std::sort(order_.begin(), order_.end(), [&](size_t a, size_t b) {
      return std::tie(tracks_[a].pid, tracks_[a].tid) < std::tie(tracks_[b].pid, tracks_[b].tid);
    });
    for (size_t i : order_) {
      Track& track = tracks_[i];
      std::vector<size_t> spans(track.spans.size());
      std::iota(spans.begin(), spans.end(), size_t{0});
      std::sort(spans.begin(), spans.end(), [&](size_t a, size_t b) {
        return std::tie(track.spans[a], a) < std::tie(track.spans[b], b);
      });
      using EndLane = std::pair<uint64_t, uint32_t>;
      std::priority_queue<EndLane, std::vector<EndLane>, std::greater<>> busy;
      std::priority_queue<uint32_t, std::vector<uint32_t>, std::greater<>> free;
      uint32_t lanes = 0;
      track.lane_of.assign(spans.size(), 0);
      for (size_t s : spans) {
        const auto [begin, end] = track.spans[s];
        while (!busy.empty() && busy.top().first <= begin) {
          free.push(busy.top().second);
          busy.pop();
        }
        uint32_t lane = lanes;
        if (free.empty()) {
          ++lanes;
        } else {
          lane = free.top();
          free.pop();
        }
        track.lane_of[s] = lane;
        busy.emplace(end, lane);
      }
      track.lane_tids = {track.tid};
      for (uint32_t lane = 1; lane < lanes; ++lane) track.lane_tids.push_back(next_tid[track.pid]++);
    }
  }

  const TraceContents& t_;
  const TraceNames& names_;
  uint64_t first_ = kOpen;
  uint64_t last_ = 0;
  std::vector<Track> tracks_;
  std::vector<size_t> order_;  // tracks_ by (pid, tid)
  size_t host_track_ = 0;
  std::map<uint32_t, size_t> workers_, actors_;
  std::vector<Event> events_;
  std::map<uint64_t, FlowEnd> begins_, sends_, host_flows_;  // by flow id: the first of each
  uint64_t dropped_ = 0, flows_ = 0, unmatched_flows_ = 0, unmatched_ends_ = 0, unfinished_ = 0;
};

}  // namespace

absl::Status WriteChromeTrace(const TraceContents& t, const TraceNames& names, std::ostream& out) {
  if (!out) return absl::FailedPreconditionError("cannot write the Chrome trace: the output stream has failed");
  TraceBuilder builder(t, names);
  builder.Build();
  return builder.Write(out);
}

absl::Status ValidateChromeTrace(const std::string& json_text) {
  using nlohmann::json;
  const json doc = json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return absl::InvalidArgumentError("the trace is not valid JSON");
  const json* events = &doc;
  if (doc.is_object()) {
    auto it = doc.find("traceEvents");
    if (it == doc.end() || !it->is_array()) return absl::InvalidArgumentError("the trace has no \"traceEvents\" array");
    events = &*it;
  } else if (!doc.is_array()) {
    return absl::InvalidArgumentError("the trace is neither an object nor an array of events");
  }
  for (size_t i = 0; i < events->size(); ++i) {
    const json& e = (*events)[i];
    auto bad = [&](const std::string& what) {
      std::string name;
      if (e.is_object() && e.contains("name") && e["name"].is_string()) {
        name = absl::StrCat(" (", Quote(e["name"].get<std::string>()), ")");
      }
      return absl::InvalidArgumentError(absl::StrCat("traceEvents[", i, "]", name, ": ", what));
    };
    if (!e.is_object()) return bad("not an object");
    auto has = [&](const char* field, bool (json::*is)() const noexcept) {
      return e.contains(field) && (e[field].*is)();
    };
    if (!has("ph", &json::is_string) || e["ph"].get_ref<const std::string&>().size() != 1) return bad("no \"ph\"");
    if (!has("name", &json::is_string)) return bad("no \"name\"");
    if (!has("ts", &json::is_number)) return bad("no \"ts\"");
    if (!has("pid", &json::is_number_integer)) return bad("no integer \"pid\"");
    if (!has("tid", &json::is_number_integer)) return bad("no integer \"tid\"");
    const char ph = e["ph"].get_ref<const std::string&>()[0];
    switch (ph) {
      case 'B': case 'E': break;
      case 'X':
        if (!has("dur", &json::is_number) || e["dur"].get<double>() < 0) return bad("no \"dur\" (or a negative one)");
        break;
      case 's': case 't': case 'f': case 'b': case 'e': case 'n':
        if (!has("id", &json::is_string) && !has("id", &json::is_number)) return bad("no \"id\"");
        break;
      case 'i': case 'I': {
        const std::string scope = has("s", &json::is_string) ? e["s"].get<std::string>() : "";
        if (scope != "t" && scope != "p" && scope != "g") return bad("no scope \"s\" of \"t\", \"p\" or \"g\"");
        break;
      }
      case 'M': {
        if (!has("args", &json::is_object)) return bad("no \"args\"");
        const std::string& name = e["name"].get_ref<const std::string&>();
        const json& args = e["args"];
        if (name.ends_with("_name") && !(args.contains("name") && args["name"].is_string())) {
          return bad("no \"args\".\"name\"");
        }
        if (name.ends_with("_sort_index") && !(args.contains("sort_index") && args["sort_index"].is_number_integer())) {
          return bad("no \"args\".\"sort_index\"");
        }
        break;
      }
      case 'C':
        if (!has("args", &json::is_object) || e["args"].empty()) return bad("no \"args\"");
        for (const auto& [k, v] : e["args"].items()) {
          if (!v.is_number()) return bad(absl::StrCat("counter \"", k, "\" is not a number"));
        }
        break;
      default:
        return bad(absl::StrCat("unknown phase \"", std::string(1, ph), "\""));
    }
  }
  return absl::OkStatus();
}

}  // namespace rk::internal
