// Copyright 2026 The RingKernel Authors.
//
// trace_events.h: the device timeline as the host holds it once drained and
// put on the host's clock, and what writes it out (trace_json.cc).
//
// The GPU records events per worker (include/ringkernel/device/trace.h);
// the host's drain turns each into a DeviceTraceEvent. Host API calls
// (Send, Ask, Spawn) are HostTraceEvents on the same clock.
#ifndef RINGKERNEL_RUNTIME_TRACE_EVENTS_H_
#define RINGKERNEL_RUNTIME_TRACE_EVENTS_H_

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace rk::internal {

enum class TraceEventKind : uint8_t {
  kHandlerBegin = 1,  // an actor's handler begins; peer: the sender; flow: the message's flow id
  kHandlerEnd = 2,    // ... and returns (msg_type as at its begin)
  kSend = 3,          // a send that returned kOk; peer: the receiver (kHostActorValue: the host); flow: its flow id
  kDeadLetter = 4,    // a message reported instead of handled; peer: DeadLetterReason
  kFault = 5,         // the actor failed (ctx.fail or a fault); peer: its code
  kQueueDepth = 6,    // a sample of the actor's mailbox depth; peer: the depth
  kRetry = 7,         // the handler asked to be retried (ctx.retry_later)
};

struct DeviceTraceEvent {
  uint64_t time_ns = 0;  // host steady-clock nanoseconds
  TraceEventKind kind = TraceEventKind::kHandlerBegin;
  uint32_t worker = 0;
  uint32_t actor = 0;     // the actor whose handler ran, or that sent
  uint32_t msg_type = 0;  // message type id
  uint32_t peer = 0;      // see TraceEventKind
  uint64_t flow = 0;      // links a kSend to the kHandlerBegin of the message it sent (0: none)
};

struct HostTraceEvent {
  uint64_t begin_ns = 0;  // host steady-clock nanoseconds
  uint64_t end_ns = 0;
  std::string call;       // "Send", "Ask", "Spawn", ...
  uint32_t actor = 0;     // the actor it was for (kNoActorValue: none)
  uint32_t msg_type = 0;  // 0: none
  uint64_t flow = 0;      // an Ask's flow to the handler that received it (0: none)
  bool ok = true;
};

// Flow ids: a send to an actor's mailbox and the handler that took it name
// the receiver and the mailbox position; a host Ask and the handler that
// took its message name the Ask's correlation.
inline uint64_t MailboxFlow(uint32_t receiver, uint32_t position) {
  return uint64_t{1} << 63 | uint64_t{receiver} << 32 | position;
}
inline uint64_t AskFlow(uint64_t correlation) { return uint64_t{1} << 62 | (correlation & 0xFFFFFFFFu); }

struct TraceNames {
  std::function<std::string(uint32_t)> actor;    // an actor id's name ("bank (Bank)")
  std::function<std::string(uint32_t)> message;  // a message type id's name
};

struct TraceContents {
  std::vector<DeviceTraceEvent> device;  // in any order
  std::vector<HostTraceEvent> host;
  std::vector<uint64_t> dropped;  // per worker: events lost to a full ring
  uint32_t workers = 0;
};

// Writes `t` in the Chrome trace-event JSON format (Perfetto's UI and
// chrome://tracing open it).
//
// Processes: 1 the workers (tid worker + 1), 2 the actors (tid id + 1), 3
// the host (tid 1); a track whose slices overlap gets further lanes (tids
// above the others, "worker 3 (2)"). Times in µs relative to the first
// event. Flow ids are hex strings ("0x1f"); a retried message's flow ends at
// its first handler. otherData counts dropped events (also shown as a global
// instant), flows, unmatched flows and ends, and handlers left unfinished.
// Deterministic for a given `t`, in any order. Errors: FailedPrecondition if
// `out` has already failed, DataLoss if writing to it fails. Names callbacks
// may be null ("actor 3", "message 7").
absl::Status WriteChromeTrace(const TraceContents& t, const TraceNames& names, std::ostream& out);

// Checks that `json_text` is a trace a viewer can open: an object with a
// "traceEvents" array (or a bare array of events), each event with the
// fields its phase requires (name, ph, ts, pid, tid; dur for X; id for
// s/t/f and b/e/n; the scope s for i; args for M and C). InvalidArgument
// naming the first bad event ("traceEvents[12] (\"foo\"): no \"dur\"").
absl::Status ValidateChromeTrace(const std::string& json_text);

}  // namespace rk::internal

#endif  // RINGKERNEL_RUNTIME_TRACE_EVENTS_H_
