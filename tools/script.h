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
#ifndef RINGKERNEL_TOOLS_SCRIPT_H_
#define RINGKERNEL_TOOLS_SCRIPT_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
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

// Runs a checked script on a started system and prints, as JSON lines, every
// message the host receives, the replies, stats, dead letters, failures and
// the stop report. A failing command stops the run: its error is returned as
// "NAME:LINE: problem" after the system is stopped.
absl::Status RunScript(const Script& script, const std::string& name, const jit::HandlerModel& model,
                       System& system, std::ostream& out);

}  // namespace rk::tools

#endif  // RINGKERNEL_TOOLS_SCRIPT_H_
