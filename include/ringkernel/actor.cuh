// Copyright 2026 The RingKernel Authors.
//
// actor.cuh: the device API of RingKernel — what a handler fragment sees.
//
// A fragment declares message types (trivially copyable structs) and actor
// types (structs marked RK_ACTOR whose fields are the actor's state), and
// marks the actor's handlers:
//
//   #include <ringkernel/actor.cuh>   // optional: the JIT always provides it
//
//   struct Deposit { int account; long long cents; };
//   struct Query   { int account; };
//   struct Balance { int account; long long cents; };
//
//   struct RK_ACTOR Bank {
//     long long cents[64];
//     RK_HANDLER void on(const Deposit& m, rk::Ctx& ctx) { cents[m.account & 63] += m.cents; }
//     RK_HANDLER void on(const Query& q, rk::Ctx& ctx) {
//       ctx.reply(Balance{q.account, cents[q.account & 63]});
//     }
//   };
//
// Functions in a fragment run on the GPU; `__device__` is optional.
// `RK_HANDLER` methods run on one thread; `RK_BLOCK_HANDLER` methods run on
// every thread of the actor's worker block together, with `ctx.rank()`,
// `ctx.width()`, `ctx.sync()`, `ctx.leader()` and `ctx.scratch<T>()`; in them
// one thread (usually `if (ctx.leader())`) sends, replies or fails. Their
// barrier is `ctx.sync()`, not `__syncthreads()` (the block's threads come
// to a block handler from two loops of the worker; README, "Writing actors").
//
// An actor handles one message at a time; delivery is FIFO per sender and
// receiver; an accepted send is handled or reported, never silently lost.
#ifndef RINGKERNEL_ACTOR_CUH_
#define RINGKERNEL_ACTOR_CUH_

#if defined(RK_PARSE_ONLY)
#include "ringkernel/device/parse_shim.h"
#endif

#include "ringkernel/device/config.h"
#include "ringkernel/device/fixed_width.h"
#include "ringkernel/device/routing.h"
#include "ringkernel/device/types.h"

#if defined(RK_PARSE_ONLY)
// The front-end finds actors, handlers and messages by these annotations.
#define RK_ACTOR __attribute__((annotate("rk::actor")))
#define RK_MESSAGE __attribute__((annotate("rk::message")))
#define RK_HANDLER __attribute__((annotate("rk::handler")))
#define RK_BLOCK_HANDLER __attribute__((annotate("rk::block_handler")))
#else
#define RK_ACTOR
#define RK_MESSAGE
#define RK_HANDLER __device__
#define RK_BLOCK_HANDLER __device__
#endif

#if !defined(RK_MAX_PAYLOAD)
#define RK_MAX_PAYLOAD 4096
#endif

#if defined(RK_PARSE_ONLY)
// The front-end reports oversized messages itself, at the message.
#define RK_ASSERT_PAYLOAD_FITS(M) static_assert(true, "")
#else
#define RK_ASSERT_PAYLOAD_FITS(M) \
  static_assert(sizeof(M) <= RK_MAX_PAYLOAD, "message larger than the program's max payload")
#endif

namespace rk {

struct SystemParams;
struct ActorSlot;
class Ctx;

// A named route: `rk::route("audit")`. The name must be a string literal;
// the front-end collects it and the host binds it to an actor while the
// system runs (`System::Bind`).
struct Route {
  u64 hash;
};

RK_HOST_DEVICE constexpr Route route(const char* name) { return Route{RouteHash(name)}; }

// The host's ActorId: messages sent to it arrive in the host's inbox
// (`System::Receive`).
RK_HOST_DEVICE constexpr ActorId host() { return ActorId{kHostActorValue}; }

namespace detail {

// Resolves to the generated `rk_message_id` overload of a registered message
// type; for any other type, explains the problem at compile time.
template <class M>
RK_HOST_DEVICE constexpr u32 rk_message_id(const M*) {
#if !defined(RK_PARSE_ONLY)  // the parse runs before codegen has made the ids
  static_assert(sizeof(M) == 0,
                "this type is not a RingKernel message: handle it in an actor, send it with ctx.send/ctx.reply "
                "in a fragment, or mark it RK_MESSAGE");
#endif
  return 0;
}

template <class M>
RK_HOST_DEVICE constexpr u32 MessageId() {
  return rk_message_id(static_cast<const M*>(nullptr));
}

// The state of one handler invocation. Internal: handlers use the methods of
// rk::Ctx.
// What a worker thread knows of the receiver of its last K2K send. It
// travels with the Ctx (copied in before a handler runs and back after it),
// so that a handler's sends read it from registers. Actor indices are never
// reused and neither a mailbox nor a channel moves, so only the receiver's
// status can go stale, and that is read with every send (through a channel:
// read after the send and acted on at the next, so that no send waits for
// it).
struct SendCache {
  void* box;  // the receiver's MailboxHeader, or this thread's channel to it
  u64 cursor_tail;  // the tail this thread expects (a channel's: its own)
  u64 cursor_head;  // the last head it acquired
  u32 to;           // the receiver (kNoActorValue: none yet)
  u32 type;         // its actor type
  u32 log2;         // the capacity of `box`
  u32 inline_words;
  u32 slot_bytes;
  u32 max_payload;
  u32 channel;      // how sends go: 0 the mailbox, 1 this thread's channel (`box`), 2 the
                    // mailbox until the next send opens a channel (device/channel.h)
  u32 status;       // a channel's receiver status, as the last send read it
};

struct CtxData {
  const SystemParams* sys;
  ActorSlot* actor;
  u8* scratch;
  void* outbound;   // the worker's OutboundCursor (shared memory): its ring to the host
  u64 correlation;  // of the message being handled
  u64 hlc;          // this invocation's timestamp
  u32 self;
  u32 sender;
  u32 worker;       // the worker running the handler
  u32 block;        // 1 in a block handler
  u32 leader;       // a block handler's rank 0: the actor's owner thread
  u32 failed;       // set by ctx.fail
  u32 retry;        // set by ctx.retry_later
  u32 run;          // records staged to run after this one in the same call (rt_dispatch.cuh)
  // This invocation's send outcomes, added to the actor's counters by the
  // worker afterwards (a counter in memory would cost a round trip per send).
  u32 sent;
  u32 send_full;
  u32 send_no_actor;
  u32 send_other;
  SendCache cache;
};

// The sends take the payload's size and alignment as constants, so that a
// message built in a handler can stay in registers up to its stores.
template <u32 kSize, u32 kAlign>
RK_DEVICE RK_FORCEINLINE SendStatus SendBytes(Ctx& ctx, ActorId to, u32 type, const void* payload);
template <u32 kSize, u32 kAlign>
RK_DEVICE RK_FORCEINLINE SendStatus SendRouteBytes(Ctx& ctx, u64 route_hash, u32 type, const void* payload);
template <u32 kSize, u32 kAlign>
RK_DEVICE RK_FORCEINLINE SendStatus ReplyBytes(Ctx& ctx, u32 type, const void* payload);
template <u32 kSize, u32 kAlign>
RK_DEVICE RK_FORCEINLINE SendStatus ForwardBytes(Ctx& ctx, ActorId to, u32 type, const void* payload);
RK_DEVICE void Fail(Ctx& ctx, u32 code);
RK_DEVICE void SyncBlock(Ctx& ctx);

}  // namespace detail

// What a handler receives besides its message: who it is, who sent the
// message, and how to send, reply, fail and (in block handlers) cooperate.
class Ctx {
 public:
  // This actor's id.
  RK_DEVICE ActorId self() const { return ActorId{d_.self}; }
  // The sender of the message being handled; rk::host() for the host.
  RK_DEVICE ActorId sender() const { return ActorId{d_.sender}; }

  // Sends `m` to actor `to` (or to rk::host()). Never blocks: returns kFull
  // when the receiver's mailbox is full, kNoActor when there is no such
  // (running) actor, kNoHandler when the receiver can't handle `M`.
  template <class M>
  RK_DEVICE SendStatus send(ActorId to, const M& m) {
    RK_ASSERT_PAYLOAD_FITS(M);
    return detail::SendBytes<sizeof(M), alignof(M)>(*this, to, detail::MessageId<M>(), &m);
  }

  // Sends `m` through a named route; kNoActor while the route is unbound.
  template <class M>
  RK_DEVICE SendStatus send(Route r, const M& m) {
    RK_ASSERT_PAYLOAD_FITS(M);
    return detail::SendRouteBytes<sizeof(M), alignof(M)>(*this, r.hash, detail::MessageId<M>(), &m);
  }

  // Sends `m` to the sender of the current message (an actor or the host).
  // A reply to the host answers its Ask.
  template <class M>
  RK_DEVICE SendStatus reply(const M& m) {
    RK_ASSERT_PAYLOAD_FITS(M);
    return detail::ReplyBytes<sizeof(M), alignof(M)>(*this, detail::MessageId<M>(), &m);
  }

  // Sends `m` to `to` on behalf of the sender of the current message: `to`
  // sees that sender as its ctx.sender(), and its ctx.reply goes to it —
  // a host Ask included, which `to`'s reply then answers. Use it to delegate
  // a request. Forwarding to rk::host() replies to the sender's Ask (or
  // sends to the host when the current message came from an actor). The
  // result and the order are those of ctx.send from this actor.
  template <class M>
  RK_DEVICE SendStatus forward(ActorId to, const M& m) {
    RK_ASSERT_PAYLOAD_FITS(M);
    return detail::ForwardBytes<sizeof(M), alignof(M)>(*this, to, detail::MessageId<M>(), &m);
  }

  // The hybrid logical clock timestamp of this invocation: later than the
  // message's send and than every earlier invocation of this actor.
  RK_DEVICE u64 now() const { return d_.hlc; }

  // Faults this actor: it handles no further messages (they are reported to
  // the host as dead letters), the host learns `code`, other actors go on.
  RK_DEVICE void fail(u32 code) { detail::Fail(*this, code); }

  // Thread handlers: hands the current message back, to be handled again
  // once the worker's other actors had their turn — the way to wait for room
  // after a send returned kFull, since a handler that retried in a loop
  // could wait for a receiver that shares its worker (or its warp) and so
  // never runs. FIFO per sender holds: the message is handled again before
  // any later one from its sender.
  // What the handler did before the call stands (state, sends): call it
  // before any effect that must not happen twice. No effect in a block
  // handler.
  RK_DEVICE void retry_later() { d_.retry = 1; }

  // Block handlers only: this thread's rank in the block, the block's width,
  // a barrier of the whole block, the one elected thread, and the block's
  // shared-memory scratch (SystemOptions::scratch_bytes).
  RK_DEVICE u32 rank() const;
  RK_DEVICE u32 width() const;
  RK_DEVICE void sync() { detail::SyncBlock(*this); }
  RK_DEVICE bool leader() const { return rank() == 0; }
  template <class T>
  RK_DEVICE T* scratch() const {
    return reinterpret_cast<T*>(d_.scratch);
  }

  // Internal: filled by the worker loop.
  detail::CtxData d_;
};

#if !defined(RK_PARSE_ONLY)
// Rank 0 is the actor's owner thread, which makes its thread handlers'
// sends too: all of an actor's sends leave from one thread, which keeps
// them in order per receiver (device/channel.h).
// (Both thread indices are below blockDim.x: one subtraction and a select,
// where a remainder by the run-time blockDim.x is a division's emulation.)
RK_DEVICE inline u32 Ctx::rank() const {
  if (!d_.block) return 0;
  const u32 t = threadIdx.x;
  return t >= d_.leader ? t - d_.leader : t + blockDim.x - d_.leader;
}
RK_DEVICE inline u32 Ctx::width() const { return d_.block ? blockDim.x : 1; }
#endif

}  // namespace rk

#endif  // RINGKERNEL_ACTOR_CUH_
