// Copyright 2026 The RingKernel Authors.
//
// script.h: `actorc run`'s JSON-lines scripts.
//
// One JSON object per line (blank lines and lines starting with '#' are
// skipped):
//   {"options": {"workers": 8, "mailbox_capacity": 512, ...}}   first line only
//   {"spawn": "Bank", "name": "bank"}
//   {"bind": "audit", "to": "auditor"}          {"unbind": "audit"}
//   {"send": "bank", "type": "Deposit", "msg": {"account": 1, "cents": 500}}
//   {"ask": "bank", "type": "Query", "msg": {"account": 1}, "timeout_ms": 100}
//   {"receive": 2, "timeout_ms": 100}           wait for 2 messages sent to rk::host()
//   {"stats": true}
//   {"sleep_ms": 5}
// Messages are encoded with the layouts the front-end extracted; rk::ActorId
// fields are written as actor names ("host" for the host).
//
// The whole script is checked against the program before anything runs —
// so a bad line is reported (`script.jsonl:3: unknown actor 'bnk'`) even on a
// machine without a GPU — and every message the host receives is printed as
// a JSON line.
//
// With RunScriptOptions::stats_every, a background thread also prints
// System::Stats() (SystemStats::ToJson) that often while the script runs:
//   {"at_ms":120,"stats":{"actors":[...],"phase":"running",...}}
// "at_ms" (milliseconds since the script began) tells these lines from the
// script's own {"stats": true}, printed as {"stats":{...}}, in the same form.
#ifndef RINGKERNEL_TOOLS_SCRIPT_H_
#define RINGKERNEL_TOOLS_SCRIPT_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "jit/handler_model.h"
#include "nlohmann/json.hpp"
#include "ringkernel/runtime.h"

namespace rk::tools {

struct ScriptCommand {
  enum class Kind { kSpawn, kBind, kUnbind, kSend, kAsk, kReceive, kStats, kSleep };
  Kind kind = Kind::kStats;
  int line = 0;
  std::string actor;   // spawn: the new actor's name; send/ask: the receiver; bind: the target
  std::string type;    // spawn: the actor type; send/ask: the message type
  std::string route;   // bind/unbind
  nlohmann::json msg;  // send/ask
  int64_t timeout_ms = 1000;  // ask/receive
  int64_t count = 1;          // receive
  int64_t sleep_ms = 0;
};

struct Script {
  SystemOptions options;
  std::vector<ScriptCommand> commands;
};

// Parses and checks `text` against `model`. Errors are InvalidArgument
// "NAME:LINE: problem".
absl::StatusOr<Script> ParseScript(const std::string& text, const std::string& name, const jit::HandlerModel& model);

struct RunScriptOptions {
  // How often to print System::Stats() while the script runs (a line with
  // "at_ms" and "stats"); zero: never. Counters are read as they stand
  // (Stats(fresh = false): at most SystemOptions::flush_interval old), so
  // that watching does not add work to the GPU's control ring.
  absl::Duration stats_every = absl::ZeroDuration();
};

// Runs a checked script on a started system and prints, as JSON lines, every
// message the host receives, the replies, stats, dead letters, failures and
// the stop report. A failing command stops the run: its error is returned as
// "NAME:LINE: problem" after the system is stopped. Lines are written whole
// (the stats thread never writes inside another line); its lines flush `out`,
// so that a reader of a pipe sees them as they come.
absl::Status RunScript(const Script& script, const std::string& name, const jit::HandlerModel& model,
                       System& system, std::ostream& out, const RunScriptOptions& options = {});

}  // namespace rk::tools

#endif  // RINGKERNEL_TOOLS_SCRIPT_H_
