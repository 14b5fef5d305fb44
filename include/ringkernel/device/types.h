// Copyright 2026 The RingKernel Authors.
//
// types.h: the small value types that cross every boundary — actor ids,
// send results, message type ids and the control opcodes of the host ring.
//
// `rk::ActorId` is what handlers, messages and the host API use to name an
// actor. Its value is an index into the system's actor table; two values are
// reserved: `kHostActor` (the host's inbox, `rk::host()`) and `kNoActor`.
#ifndef RINGKERNEL_DEVICE_TYPES_H_
#define RINGKERNEL_DEVICE_TYPES_H_

#include "ringkernel/device/config.h"

namespace rk {

inline constexpr u32 kHostActorValue = 0xFFFFFFFEu;
inline constexpr u32 kNoActorValue = 0xFFFFFFFFu;

// Names an actor of a running system (or the host). Trivially copyable, so it
// may be a message field; `actorc run` writes it in JSON as the actor's name.
struct ActorId {
  u32 value = kNoActorValue;

  RK_HOST_DEVICE constexpr bool is_host() const { return value == kHostActorValue; }
  RK_HOST_DEVICE constexpr bool valid() const { return value != kNoActorValue; }
  RK_HOST_DEVICE constexpr u32 index() const { return value; }
  RK_HOST_DEVICE friend constexpr bool operator==(ActorId a, ActorId b) { return a.value == b.value; }
  RK_HOST_DEVICE friend constexpr bool operator!=(ActorId a, ActorId b) { return a.value != b.value; }
};
static_assert(sizeof(ActorId) == 4 && alignof(ActorId) == 4, "ActorId is a message field: fixed ABI");

// The outcome of a device-side send. A send never blocks without bound.
enum class SendStatus : u32 {
  kOk = 0,         // accepted: it will be handled or reported, never lost
  kFull = 1,       // the receiver's mailbox (or the host ring) is full
  kNoActor = 2,    // no such actor, the route is unbound, or the actor failed
  kTooLarge = 3,   // larger than the program's max payload
  kNoHandler = 4,  // the receiver's type has no handler for this message type
};

RK_HOST_DEVICE constexpr const char* SendStatusName(SendStatus s) {
  switch (s) {
    case SendStatus::kOk: return "kOk";
    case SendStatus::kFull: return "kFull";
    case SendStatus::kNoActor: return "kNoActor";
    case SendStatus::kTooLarge: return "kTooLarge";
    case SendStatus::kNoHandler: return "kNoHandler";
  }
  return "unknown";
}

// Message type ids are dense, 1..N, assigned by the front-end in the order of
// the program's manifest. 0 is never a message.
inline constexpr u32 kNoMessageType = 0;

// Control records share the host→GPU ring with messages; their type word has
// the top nibble set, which no message id reaches.
inline constexpr u32 kControlTypeBase = 0xF0000000u;
enum class ControlOp : u32 {
  kSpawn = 1,    // a0 = actor index, a1 = actor type, a2 = worker
  kBind = 2,     // a0 = route id, a1 = actor index (kNoActorValue unbinds)
  kDrain = 3,    // stop accepting; halt once quiescent
  kFlush = 4,    // copy counters to the control blocks now, then ack
  kHalt = 5,     // halt now: finish the current message, leave the rest
  kTrace = 6,    // a0 = 1: record the timeline (RK_TRACE builds); 0: stop
};

// Kinds of records the GPU writes into the GPU→host ring.
enum class OutboundKind : u32 {
  kMessage = 0,     // a message sent to rk::host() or a reply to an Ask
  kDeadLetter = 1,  // an accepted message that could not be handled; a0 = reason
  kActorFailed = 2, // an actor called ctx.fail(code) or was stopped
};

// Why an accepted message was dead-lettered.
enum class DeadLetterReason : u32 {
  kNone = 0,
  kMailboxFull = 1,  // the receiver's mailbox stayed full past the ingress timeout
  kNoActor = 2,      // no such actor, or it failed before the message arrived
  kActorFailed = 3,  // the actor failed with the message still in its mailbox
  kNoHandler = 4,    // the receiver's type has no handler for the message type
  kTooLarge = 5,     // larger than the receiver's mailbox slots
};

RK_HOST_DEVICE constexpr const char* DeadLetterReasonName(DeadLetterReason r) {
  switch (r) {
    case DeadLetterReason::kNone: return "none";
    case DeadLetterReason::kMailboxFull: return "mailbox full";
    case DeadLetterReason::kNoActor: return "no such actor";
    case DeadLetterReason::kActorFailed: return "actor failed";
    case DeadLetterReason::kNoHandler: return "no handler for this message type";
    case DeadLetterReason::kTooLarge: return "message larger than the mailbox slot";
  }
  return "unknown";
}

// Per-actor run state, as the control block reports it.
enum class ActorState : u32 {
  kFree = 0,     // no actor at this index
  kRunning = 1,
  kFailed = 2,   // ctx.fail(code): receives nothing more
};

// A diagnostic build (-D RK_ORDER_TRACE) logs every step of every host
// message's delivery on the GPU into the device array rk_order_trace, four
// words an event — kind | worker << 8 | aux << 16, the actor, a position,
// the payload's first word — up to kOrderTraceEvents events;
// rk_order_trace_n counts them (past the end too).
enum OrderEvent : u32 {
  kOrderPutDirect = 1,    // poller: handed over at hand-over ring position `pos`
  kOrderForward = 2,      // poller: forwarded into the mailbox (pos: host ring unit)
  kOrderDirectTake = 3,   // owner: handled hand-over `pos` (aux: tail - head)
  kOrderDirectRetry = 4,  // owner: hand-over `pos` asked to be retried
  kOrderMailTake = 5,     // owner: handled a forwarded host message at mailbox `pos`
  kOrderMailRetry = 6,    // owner: ... which asked to be retried
  kOrderNotReady = 7,     // poller: no room in the hand-over ring (aux: eligible)
  kOrderDirectWait = 8,   // owner: hand-over `pos` waits for K2K messages reserved before it (its mark)
};
inline constexpr u32 kOrderTraceEvents = 1u << 22;

}  // namespace rk

#endif  // RINGKERNEL_DEVICE_TYPES_H_
