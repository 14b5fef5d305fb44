// Copyright 2026 The RingKernel Authors.
#include "tools/script.h"

#include <optional>
#include <set>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "jit/message_codec.h"
#include "ringkernel/status_macros.h"

namespace rk::tools {
namespace {

using nlohmann::json;

absl::Status LineError(const std::string& name, int line, const std::string& problem) {
  return absl::InvalidArgumentError(absl::StrCat(name, ":", line, ": ", problem));
}

std::string Join(const std::vector<std::string>& names) { return names.empty() ? "(none)" : absl::StrJoin(names, ", "); }

std::vector<std::string> ActorTypeNames(const jit::HandlerModel& m) {
  std::vector<std::string> out;
  for (const auto& a : m.actors) out.push_back(a.name);
  return out;
}
std::vector<std::string> MessageNames(const jit::HandlerModel& m) {
  std::vector<std::string> out;
  for (const auto& r : m.records) {
    if (r.is_message()) out.push_back(r.name);
  }
  return out;
}
std::vector<std::string> RouteNames(const jit::HandlerModel& m) {
  std::vector<std::string> out;
  for (const auto& r : m.routes) out.push_back(r.name);
  return out;
}

// Reads a non-negative integer option or field.
absl::StatusOr<int64_t> Integer(const json& v, const std::string& key, int64_t min, int64_t max) {
  if (!v.is_number_integer()) return absl::InvalidArgumentError(absl::StrCat("'", key, "' must be an integer"));
  // nlohmann reads a non-negative integer as uint64: one above INT64_MAX
  // must not wrap to a negative int64 (the error then named another value).
  const bool fits = !v.is_number_unsigned() || v.get<uint64_t>() <= static_cast<uint64_t>(max);
  const int64_t x = fits ? v.get<int64_t>() : 0;
  if (!fits || x < min || x > max) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", key, "' is ", v.dump(), "; it must be in [", min, ", ", max, "]"));
  }
  return x;
}

absl::Status ParseOptions(const json& o, SystemOptions* opts) {
  if (!o.is_object()) return absl::InvalidArgumentError("'options' must be an object");
  for (auto it = o.begin(); it != o.end(); ++it) {
    const std::string& k = it.key();
    const json& v = it.value();
    auto u32 = [&](uint32_t* field, int64_t min, int64_t max) -> absl::Status {
      RK_ASSIGN_OR_RETURN(int64_t x, Integer(v, k, min, max));
      *field = static_cast<uint32_t>(x);
      return absl::OkStatus();
    };
    auto duration = [&](absl::Duration* field, absl::Duration unit) -> absl::Status {
      RK_ASSIGN_OR_RETURN(int64_t x, Integer(v, k, 0, int64_t{1} << 40));
      *field = unit * x;
      return absl::OkStatus();
    };
    if (k == "workers") {
      RK_RETURN_IF_ERROR(u32(&opts->workers, 0, 1 << 20));
    } else if (k == "threads_per_block") {
      RK_RETURN_IF_ERROR(u32(&opts->threads_per_block, 32, 1024));
    } else if (k == "mailbox_capacity") {
      RK_RETURN_IF_ERROR(u32(&opts->mailbox_capacity, 2, 1 << 20));
    } else if (k == "max_actors") {
      RK_RETURN_IF_ERROR(u32(&opts->max_actors, 1, 1 << 24));
    } else if (k == "scratch_bytes") {
      RK_RETURN_IF_ERROR(u32(&opts->scratch_bytes, 0, 227 * 1024));
    } else if (k == "host_ring_capacity") {
      RK_RETURN_IF_ERROR(u32(&opts->host_ring_capacity, 2, 1 << 20));
    } else if (k == "outbound_ring_capacity") {
      RK_RETURN_IF_ERROR(u32(&opts->outbound_ring_capacity, 2, 1 << 20));
    } else if (k == "batch_max") {
      RK_RETURN_IF_ERROR(u32(&opts->batch_max, 1, 1 << 20));
    } else if (k == "idle_backoff_ns") {
      RK_RETURN_IF_ERROR(duration(&opts->idle_backoff, absl::Nanoseconds(1)));
    } else if (k == "idle_spin_us") {
      RK_RETURN_IF_ERROR(duration(&opts->idle_spin, absl::Microseconds(1)));
    } else if (k == "flush_interval_us") {
      RK_RETURN_IF_ERROR(duration(&opts->flush_interval, absl::Microseconds(1)));
    } else if (k == "ingress_full_timeout_us") {
      RK_RETURN_IF_ERROR(duration(&opts->ingress_full_timeout, absl::Microseconds(1)));
    } else if (k == "track_running") {
      if (!v.is_boolean()) return absl::InvalidArgumentError("'track_running' must be true or false");
      opts->track_running = v.get<bool>();
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown option '", k,
          "'; options are workers, threads_per_block, mailbox_capacity, max_actors, scratch_bytes, "
          "host_ring_capacity, outbound_ring_capacity, batch_max, idle_backoff_ns, idle_spin_us, flush_interval_us, "
          "ingress_full_timeout_us, track_running"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckKeys(const json& j, const std::set<std::string>& allowed) {
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (allowed.count(it.key()) == 0) {
      std::vector<std::string> names(allowed.begin(), allowed.end());
      return absl::InvalidArgumentError(
          absl::StrCat("unknown key '", it.key(), "' (this command takes ", absl::StrJoin(names, ", "), ")"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> String(const json& j, const std::string& key) {
  auto it = j.find(key);
  if (it == j.end()) return absl::InvalidArgumentError(absl::StrCat("missing '", key, "'"));
  if (!it->is_string()) return absl::InvalidArgumentError(absl::StrCat("'", key, "' must be a string"));
  return it->get<std::string>();
}

absl::StatusOr<ScriptCommand> ParseCommand(const json& j, const jit::HandlerModel& model,
                                           std::vector<std::string>* spawned) {
  ScriptCommand c;
  auto known_actor = [&](const std::string& name) -> absl::Status {
    if (name == "host") return absl::OkStatus();
    for (const std::string& s : *spawned) {
      if (s == name) return absl::OkStatus();
    }
    return absl::NotFoundError(absl::StrCat("unknown actor '", name, "'; spawned so far: ", Join(*spawned)));
  };
  if (j.contains("spawn")) {
    RK_RETURN_IF_ERROR(CheckKeys(j, {"spawn", "name"}));
    c.kind = ScriptCommand::Kind::kSpawn;
    RK_ASSIGN_OR_RETURN(c.type, String(j, "spawn"));
    RK_ASSIGN_OR_RETURN(c.actor, String(j, "name"));
    if (model.FindActor(c.type) == nullptr) {
      return absl::NotFoundError(
          absl::StrCat("unknown actor type '", c.type, "'; the program has ", Join(ActorTypeNames(model))));
    }
    if (c.actor.empty() || c.actor == "host") {
      return absl::InvalidArgumentError(absl::StrCat("'", c.actor, "' cannot name an actor"));
    }
    for (const std::string& s : *spawned) {
      if (s == c.actor) return absl::AlreadyExistsError(absl::StrCat("an actor named '", c.actor, "' already exists"));
    }
    spawned->push_back(c.actor);
  } else if (j.contains("bind") || j.contains("unbind")) {
    const bool bind = j.contains("bind");
    RK_RETURN_IF_ERROR(bind ? CheckKeys(j, {"bind", "to"}) : CheckKeys(j, {"unbind"}));
    c.kind = bind ? ScriptCommand::Kind::kBind : ScriptCommand::Kind::kUnbind;
    RK_ASSIGN_OR_RETURN(c.route, String(j, bind ? "bind" : "unbind"));
    if (model.FindRoute(c.route) == nullptr) {
      return absl::NotFoundError(
          absl::StrCat("unknown route '", c.route, "'; the program uses ", Join(RouteNames(model))));
    }
    if (bind) {
      RK_ASSIGN_OR_RETURN(c.actor, String(j, "to"));
      RK_RETURN_IF_ERROR(known_actor(c.actor));
    }
  } else if (j.contains("send") || j.contains("ask")) {
    const bool ask = j.contains("ask");
    RK_RETURN_IF_ERROR(ask ? CheckKeys(j, {"ask", "type", "msg", "timeout_ms"}) : CheckKeys(j, {"send", "type", "msg"}));
    c.kind = ask ? ScriptCommand::Kind::kAsk : ScriptCommand::Kind::kSend;
    RK_ASSIGN_OR_RETURN(c.actor, String(j, ask ? "ask" : "send"));
    if (c.actor == "host") return absl::InvalidArgumentError("messages from the script go to actors, not to 'host'");
    RK_RETURN_IF_ERROR(known_actor(c.actor));
    RK_ASSIGN_OR_RETURN(c.type, String(j, "type"));
    const jit::RecordLayout* rec = model.FindRecord(c.type);
    if (rec == nullptr || !rec->is_message()) {
      return absl::NotFoundError(
          absl::StrCat("unknown message type '", c.type, "'; the program has ", Join(MessageNames(model))));
    }
    if (!j.contains("msg")) return absl::InvalidArgumentError("missing 'msg'");
    c.msg = j["msg"];
    // Check the encoding now, with provisional ids for the actors named.
    const std::vector<std::string> names = *spawned;
    auto resolver = [&](std::string_view n) -> absl::StatusOr<uint32_t> {
      if (n == "host") return rk::kHostActorValue;
      for (size_t i = 0; i < names.size(); ++i) {
        if (names[i] == n) return static_cast<uint32_t>(i);
      }
      return absl::NotFoundError(absl::StrCat("unknown actor '", std::string(n), "'"));
    };
    absl::StatusOr<std::string> bytes = jit::EncodeMessage(model, *rec, c.msg, resolver);
    if (!bytes.ok()) return bytes.status();
    if (ask && j.contains("timeout_ms")) {
      RK_ASSIGN_OR_RETURN(c.timeout_ms, Integer(j["timeout_ms"], "timeout_ms", 1, 3600 * 1000));
    }
  } else if (j.contains("receive")) {
    RK_RETURN_IF_ERROR(CheckKeys(j, {"receive", "timeout_ms"}));
    c.kind = ScriptCommand::Kind::kReceive;
    const json& r = j["receive"];
    if (r.is_boolean() && r.get<bool>()) {
      c.count = 1;
    } else {
      RK_ASSIGN_OR_RETURN(c.count, Integer(r, "receive", 1, 1 << 30));
    }
    if (j.contains("timeout_ms")) {
      RK_ASSIGN_OR_RETURN(c.timeout_ms, Integer(j["timeout_ms"], "timeout_ms", 0, 3600 * 1000));
    }
  } else if (j.contains("stats")) {
    RK_RETURN_IF_ERROR(CheckKeys(j, {"stats"}));
    c.kind = ScriptCommand::Kind::kStats;
  } else if (j.contains("sleep_ms")) {
    RK_RETURN_IF_ERROR(CheckKeys(j, {"sleep_ms"}));
    c.kind = ScriptCommand::Kind::kSleep;
    RK_ASSIGN_OR_RETURN(c.sleep_ms, Integer(j["sleep_ms"], "sleep_ms", 0, 600 * 1000));
  } else if (j.contains("options")) {
    return absl::InvalidArgumentError("'options' must be the first command of the script");
  } else {
    return absl::InvalidArgumentError(
        "unknown command: a line has one of spawn, bind, unbind, send, ask, receive, stats, sleep_ms (or options, "
        "first)");
  }
  return c;
}

json ActorJson(const System& system, ActorId id) {
  if (id.is_host()) return "host";
  std::optional<std::string> name = system.NameOf(id);
  if (name.has_value()) return *name;
  return json{{"actor_id", id.value}};
}

json DecodeJson(const jit::HandlerModel& model, const System& system, const std::string& type,
                const std::string& bytes) {
  const jit::RecordLayout* rec = model.FindRecord(type);
  if (rec == nullptr) return json{{"bytes", bytes.size()}};
  auto namer = [&](uint32_t id) -> std::optional<std::string> {
    if (id == rk::kHostActorValue) return std::string("host");
    return system.NameOf(ActorId{id});
  };
  absl::StatusOr<json> j = jit::DecodeMessage(model, *rec, bytes, namer);
  if (!j.ok()) return json{{"undecodable", std::string(j.status().message())}};
  return *j;
}

json MessageJson(const jit::HandlerModel& model, const System& system, const Message& m) {
  return json{{"from", ActorJson(system, m.from)}, {"type", m.type}, {"msg", DecodeJson(model, system, m.type, m.bytes)}};
}

// Writes whole lines to the script's output: the stats thread of
// RunScriptOptions::stats_every writes beside the script's own lines, never
// inside one.
class LineWriter {
 public:
  explicit LineWriter(std::ostream& out) : out_(out) {}
  void Write(const std::string& line, bool flush = false) ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    out_ << line << "\n";
    if (flush) out_.flush();
  }
  void Write(const json& j) { Write(j.dump()); }

 private:
  absl::Mutex mu_;
  std::ostream& out_ ABSL_GUARDED_BY(mu_);
};

void PrintReports(const jit::HandlerModel& model, System& system, LineWriter& out) {
  for (const DeadLetter& d : system.TakeDeadLetters()) {
    out.Write(json{{"dead_letter",
                    {{"to", ActorJson(system, d.to)},
                     {"from", ActorJson(system, d.from)},
                     {"type", d.type},
                     {"reason", DeadLetterReasonName(d.reason)},
                     {"msg", DecodeJson(model, system, d.type, d.bytes)}}}});
  }
  for (const ActorFailure& f : system.TakeFailures()) {
    out.Write(json{{"actor_failed", {{"actor", f.name}, {"code", f.code}}}});
  }
}

// Prints System::Stats() every `every` on a thread of its own, from
// construction until Stop (which RunScript calls before it stops the
// system, so that no Stats races with Stop).
class StatsTicker {
 public:
  StatsTicker(System& system, LineWriter& out, absl::Duration every)
      : system_(system), out_(out), every_(every), thread_([this] { Run(); }) {}
  ~StatsTicker() { Stop(); }
  StatsTicker(const StatsTicker&) = delete;
  StatsTicker& operator=(const StatsTicker&) = delete;

  void Stop() {
    if (!stop_.HasBeenNotified()) stop_.Notify();
    if (thread_.joinable()) thread_.join();
  }

 private:
  void Run() {
    const absl::Time start = absl::Now();
    // On a fixed schedule (start + k * every), so that the time Stats takes
    // does not add up; a tick missed while it ran is skipped, not made up.
    absl::Time next = start + every_;
    while (!stop_.WaitForNotificationWithDeadline(next)) {
      // As they stand: a monitor adds no flush requests to the GPU's
      // control ring. An error (a fault) ends the ticks; the script's own
      // next call reports it.
      absl::StatusOr<SystemStats> st = system_.Stats(/*fresh=*/false);
      if (!st.ok()) return;
      const int64_t at_ms = absl::ToInt64Milliseconds(absl::Now() - start);
      out_.Write(absl::StrCat("{\"at_ms\":", at_ms, ",\"stats\":", st->ToJson(), "}"), /*flush=*/true);
      const absl::Time now = absl::Now();
      while (next <= now) next += every_;
    }
  }

  System& system_;
  LineWriter& out_;
  const absl::Duration every_;
  absl::Notification stop_;
  std::thread thread_;  // last: it starts running once the rest is set
};

}  // namespace

absl::StatusOr<Script> ParseScript(const std::string& text, const std::string& name, const jit::HandlerModel& model) {
  Script script;
  std::vector<std::string> spawned;
  int line_no = 0;
  bool first = true;
  for (absl::string_view raw : absl::StrSplit(text, '\n')) {
    ++line_no;
    const std::string line(absl::StripAsciiWhitespace(raw));
    if (line.empty() || line[0] == '#') continue;
    json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) return LineError(name, line_no, "not valid JSON");
    if (!j.is_object()) return LineError(name, line_no, "each line must be a JSON object");
    if (first && j.contains("options")) {
      first = false;
      if (j.size() != 1) return LineError(name, line_no, "an options line holds only 'options'");
      if (absl::Status s = ParseOptions(j["options"], &script.options); !s.ok()) {
        return LineError(name, line_no, std::string(s.message()));
      }
      continue;
    }
    first = false;
    absl::StatusOr<ScriptCommand> c = ParseCommand(j, model, &spawned);
    if (!c.ok()) return LineError(name, line_no, std::string(c.status().message()));
    c->line = line_no;
    script.commands.push_back(*std::move(c));
  }
  return script;
}

absl::Status RunScript(const Script& script, const std::string& name, const jit::HandlerModel& model, System& system,
                       std::ostream& stream, const RunScriptOptions& options) {
  LineWriter out(stream);
  std::optional<StatsTicker> ticker;
  if (options.stats_every > absl::ZeroDuration()) ticker.emplace(system, out, options.stats_every);
  auto resolver = [&](std::string_view n) -> absl::StatusOr<uint32_t> {
    if (n == "host") return rk::kHostActorValue;
    RK_ASSIGN_OR_RETURN(ActorId id, system.Lookup(n));
    return id.value;
  };
  absl::Status failure;
  int failed_line = 0;
  for (const ScriptCommand& c : script.commands) {
    absl::Status s;
    switch (c.kind) {
      case ScriptCommand::Kind::kSpawn: {
        absl::StatusOr<ActorId> id = system.Spawn(c.type, c.actor);
        if (id.ok()) {
          out.Write(json{{"spawned", c.actor}, {"type", c.type}, {"id", id->value}});
        }
        s = id.status();
        break;
      }
      case ScriptCommand::Kind::kBind: {
        absl::StatusOr<uint32_t> id = resolver(c.actor);
        s = id.ok() ? system.Bind(c.route, ActorId{*id}) : id.status();
        if (s.ok()) out.Write(json{{"bound", c.route}, {"to", c.actor}});
        break;
      }
      case ScriptCommand::Kind::kUnbind:
        s = system.Unbind(c.route);
        if (s.ok()) out.Write(json{{"unbound", c.route}});
        break;
      case ScriptCommand::Kind::kSend:
      case ScriptCommand::Kind::kAsk: {
        absl::StatusOr<ActorId> to = system.Lookup(c.actor);
        if (!to.ok()) {
          s = to.status();
          break;
        }
        absl::StatusOr<std::string> bytes = jit::EncodeMessage(model, *model.FindRecord(c.type), c.msg, resolver);
        if (!bytes.ok()) {
          s = bytes.status();
          break;
        }
        if (c.kind == ScriptCommand::Kind::kSend) {
          // A script is not a load generator: wait for room rather than fail.
          s = system.SendBytes(*to, c.type, *bytes, absl::Now() + absl::Seconds(10));
        } else {
          absl::StatusOr<Message> reply = system.AskBytes(*to, c.type, *bytes, absl::Milliseconds(c.timeout_ms));
          if (reply.ok()) {
            out.Write(json{{"reply", MessageJson(model, system, *reply)}, {"line", c.line}});
          }
          s = reply.status();
        }
        break;
      }
      case ScriptCommand::Kind::kReceive: {
        const absl::Time deadline = absl::Now() + absl::Milliseconds(c.timeout_ms);
        int64_t got = 0;
        while (got < c.count) {
          absl::StatusOr<std::optional<Message>> m = system.Receive(std::max(absl::ZeroDuration(), deadline - absl::Now()));
          if (!m.ok()) {
            s = m.status();
            break;
          }
          if (!m->has_value()) break;
          out.Write(json{{"received", MessageJson(model, system, **m)}});
          ++got;
        }
        if (s.ok() && got < c.count) {
          s = absl::DeadlineExceededError(absl::StrCat("expected ", c.count, " message(s) for the host, got ", got,
                                                       " within ", c.timeout_ms, " ms"));
        }
        break;
      }
      case ScriptCommand::Kind::kStats: {
        absl::StatusOr<SystemStats> st = system.Stats(true);
        if (st.ok()) out.Write(absl::StrCat("{\"stats\":", st->ToJson(), "}"));
        s = st.status();
        break;
      }
      case ScriptCommand::Kind::kSleep:
        std::this_thread::sleep_for(std::chrono::milliseconds(c.sleep_ms));
        break;
    }
    PrintReports(model, system, out);
    if (!s.ok()) {
      failure = s;
      failed_line = c.line;
      break;
    }
  }
  if (ticker.has_value()) ticker->Stop();
  absl::StatusOr<StopReport> report = system.Stop();
  if (report.ok()) {
    for (const Message& m : report->undelivered) {
      out.Write(json{{"received", MessageJson(model, system, m)}});
    }
    for (const DeadLetter& d : report->dead_letters) {
      out.Write(json{{"dead_letter",
                      {{"to", ActorJson(system, d.to)},
                       {"type", d.type},
                       {"reason", DeadLetterReasonName(d.reason)},
                       {"msg", DecodeJson(model, system, d.type, d.bytes)}}}});
    }
    for (const ActorFailure& f : report->failures) {
      out.Write(json{{"actor_failed", {{"actor", f.name}, {"code", f.code}}}});
    }
    json stopped = {{"drained", report->drained}, {"handled", report->handled}, {"unhandled", report->unhandled}};
    // Counted, never silent: what the host's bounds dropped, and what the
    // GPU could not write back at the halt.
    if (report->dead_letters_dropped != 0) stopped["dead_letters_dropped"] = report->dead_letters_dropped;
    if (report->failures_dropped != 0) stopped["failures_dropped"] = report->failures_dropped;
    if (report->reports_lost != 0) stopped["reports_lost"] = report->reports_lost;
    if (!report->trace_error.empty()) stopped["trace_error"] = report->trace_error;
    out.Write(json{{"stopped", stopped}});
  }
  if (!failure.ok()) {
    return absl::Status(failure.code(), absl::StrCat(name, ":", failed_line, ": ", failure.message()));
  }
  return report.status();
}

}  // namespace rk::tools
