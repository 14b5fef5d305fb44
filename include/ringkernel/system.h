// Copyright 2026 The RingKernel Authors.
//
// system.h: a running actor system — one cooperative launch of a program's
// persistent kernel, and the host's side of it.
//
//   auto system = runtime->Start(program, rk::SystemOptions{});
//   auto bank = (*system)->Spawn("Bank", "bank");
//   (*system)->Send(*bank, Deposit{1, 500});                   // a few stores into mapped memory
//   auto balance = (*system)->Ask<Balance>(*bank, Query{1}, absl::Milliseconds(5));
//   (*system)->Bind("audit", *bank);                            // live route (re)binding
//   auto report = (*system)->Stop();                            // drain; report anything not handled
//
// Messages reach the GPU through rings in mapped pinned memory, one per
// worker block: `Send` returns once the message is in the ring of its
// receiver's worker (it never waits for the GPU). Messages for the host —
// sends to rk::host(), replies to Ask, dead letters and actor failures —
// come back through a ring from each worker. A background thread of the
// System drains those rings while it runs (every 50-400 µs, sleeping between
// looks), and so do the calls that wait for them (Ask, Receive, Stats, Stop),
// into host-side queues: an application that never calls Receive,
// TakeDeadLetters or TakeFailures still gets every dead letter and failure
// (up to the bounds in SystemOptions, beyond which they are counted).
//
// Thread-safety: every method may be called from several threads at once.
// A System must be stopped or destroyed before its Runtime.
#ifndef RINGKERNEL_SYSTEM_H_
#define RINGKERNEL_SYSTEM_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "ringkernel/device/types.h"
#include "ringkernel/message.h"

namespace rk {

class Program;
class SystemImpl;
namespace internal {
struct SystemAccess;
}  // namespace internal

struct SystemOptions {
  // Worker blocks; 0 means as many as fit on the device at once (the
  // occupancy limit × SMs, less the service block).
  uint32_t workers = 0;
  uint32_t threads_per_block = 128;
  // Slots of each actor's mailbox (a power of two).
  uint32_t mailbox_capacity = 256;
  // Actors the system can hold.
  uint32_t max_actors = 1024;
  // Shared memory each worker block gives its block handlers (ctx.scratch).
  uint32_t scratch_bytes = 0;
  // Device memory reserved before the launch for mailboxes and actor state;
  // a Spawn that needs more allocates another chunk while the kernel runs.
  uint64_t arena_bytes = 16ull << 20;
  // Device memory for K2K channels: the first time a worker thread sends to
  // an actor, it opens a channel of its own to it (up to 4 per actor, for
  // the first 32 actors of each worker, each as large as the actor's
  // mailbox), and its later sends there need no reservation. Allocated and
  // zeroed before the launch; once it is spent, new pairs go through the
  // receiver's mailbox (the same semantics, a slower send). 0: every K2K
  // send goes through the mailbox.
  uint64_t channel_arena_bytes = 256ull << 20;
  // Records of the program's largest message that each worker's ring from
  // the host holds, and records of each worker's ring back (powers of two;
  // fewer where a ring would take over 1 MiB of mapped memory, at least 8 —
  // from the host, at least 2). The ring from the host stores each record
  // in 128-byte units, as many as its own size needs, so it holds more
  // small messages than this.
  // A full ring back never loses a dead letter or a failure: the GPU waits
  // for room (the host drains every ring continuously). A message an actor
  // sends to rk::host() into a full ring is refused with kFull instead.
  uint32_t host_ring_capacity = 1024;
  uint32_t outbound_ring_capacity = 1024;
  // Events of the device timeline that each worker's ring holds (a power of
  // two in [2^8, 2^22], 32 bytes each, in mapped memory) until the host's
  // background reader drains it. Only a program built with tracing
  // (CompileOptions::trace, `actorc build --trace`) allocates them; an event
  // that finds its ring full is dropped and counted in the trace. Such a
  // program also keeps handler-time histograms (ActorStats::timed): 512
  // bytes of device memory and 512 of mapped memory per max_actors.
  uint32_t trace_capacity = 1u << 14;
  // What the host keeps of what comes back until the application takes it.
  // Dead letters (TakeDeadLetters) and failures (TakeFailures) beyond their
  // bound are dropped and counted (SystemStats and StopReport:
  // dead_letters_dropped, failures_dropped), the first ones kept. Messages
  // sent to rk::host() beyond theirs (not yet taken with Receive) are left in
  // their worker's ring, which then fills: that worker's later sends to the
  // host return kFull, and its dead letters and failures wait behind them
  // (the GPU waits with them) until Receive or Stop makes room.
  uint64_t dead_letter_capacity = 1ull << 20;
  uint64_t failure_capacity = 1ull << 20;
  uint64_t host_inbox_capacity = 1ull << 20;
  // Messages an actor handles before its thread moves to its next actor.
  uint32_t batch_max = 32;
  // How long a worker warp keeps polling without sleeping after its last
  // message (its host ring read wide while host traffic is this recent).
  absl::Duration idle_spin = absl::Microseconds(200);
  // Then it sleeps between polls, doubling up to this (0: never sleeps).
  // Longer saves power while idle; the first message after a quiet spell
  // waits up to this much longer.
  absl::Duration idle_backoff = absl::Microseconds(1);
  // How often counters reach the control blocks without being asked.
  absl::Duration flush_interval = absl::Milliseconds(1);
  // How long the ingress waits for room in a full mailbox before it
  // dead-letters a host message.
  absl::Duration ingress_full_timeout = absl::Milliseconds(1);
  // Record, per worker thread, the actor and message whose handler runs, so
  // that a device fault (and a Stop that finds a handler stuck) names them.
  // Its cost: one posted store to mapped memory each time a thread's entry
  // changes before a handler runs — its first message after it idled
  // (idle_spin), or a message for another actor or of another type than its
  // last; nothing while it keeps handling the same. Off: no such cost, and
  // a fault says that which handlers ran is not recorded.
  bool track_running = true;
  // How long Start waits for the kernel to come up.
  absl::Duration start_timeout = absl::Seconds(10);
};

enum class KernelPhase { kStarting, kRunning, kDraining, kHalting, kExited, kFaulted, kAbandoned };
std::string_view KernelPhaseName(KernelPhase phase);

struct ActorStats {
  ActorId id;
  std::string name;
  std::string type;
  ActorState state = ActorState::kFree;
  uint32_t fail_code = 0;
  uint64_t received = 0;       // accepted: into its mailbox, or handed over by its worker from the host ring
  uint64_t handled = 0;
  uint64_t dead_lettered = 0;  // accepted, then reported instead of handled
  uint64_t depth = 0;          // accepted, not yet handled
  uint64_t sent = 0;           // its sends that returned kOk
  uint64_t send_full = 0;      // ... kFull
  uint64_t send_no_actor = 0;  // ... kNoActor
  uint64_t send_other = 0;     // ... kNoHandler or kTooLarge
  uint64_t rejected = 0;       // host messages for it that the ingress dead-lettered
  uint64_t hlc = 0;            // its clock
  // How long its handlers took, from histograms kept on the GPU: only a
  // program built with tracing (CompileOptions::trace, `actorc build
  // --trace`) keeps them, and then `timed` is true. `timed_calls` counts the
  // invocations that ended (handled or failed; a ctx.retry_later is not
  // counted); the percentiles are the midpoints of their histogram buckets,
  // within 12.5 % of the true value and no finer than the GPU timer's tick
  // (32 ns or coarser). The histograms are copied out at each Stats with
  // `fresh`, every 64th periodic flush (64 ms at the default
  // flush_interval) and when the kernel exits.
  bool timed = false;
  uint64_t timed_calls = 0;
  uint64_t handler_p50_ns = 0;
  uint64_t handler_p99_ns = 0;

  // "bank (Bank) running: received 5, handled 5, ..." for logs and tests.
  std::string ToString() const;
};

struct WorkerStatsView {
  uint32_t worker = 0;
  uint64_t heartbeat = 0;  // loop iterations
  uint64_t handled = 0;
  bool exited = false;
};

struct SystemStats {
  KernelPhase phase = KernelPhase::kStarting;
  uint64_t flush_epoch = 0;
  uint64_t host_sent = 0;          // 128-byte units the host has filled in the workers' rings (a message takes 1 or more)
  uint64_t host_ring_full = 0;     // Sends refused because the ring was full
  uint64_t ingress_delivered = 0;  // host messages the workers took from their rings
  uint64_t ingress_dead = 0;       // host messages the workers dead-lettered instead
  uint64_t outbound_full = 0;      // actors' sends to rk::host() refused with kFull (ring full)
  uint64_t host_holes = 0;         // host records the workers passed over while not whole for 100 us (a writer stopped mid-record)
  uint64_t channel_bytes = 0;      // bytes of SystemOptions::channel_arena_bytes that K2K channels took
  uint64_t received_by_host = 0;   // records the host took from the GPU→host ring
  uint64_t dead_letters_dropped = 0;  // dead letters past SystemOptions::dead_letter_capacity
  uint64_t failures_dropped = 0;      // failures past SystemOptions::failure_capacity
  uint64_t late_replies = 0;          // replies to Asks that had already ended (dropped, never Received)
  std::vector<ActorStats> actors;
  std::vector<WorkerStatsView> workers;

  const ActorStats* Find(std::string_view name) const;

  // A table for a terminal: the phase and the host counters that are not
  // zero on one line, then one row per actor, aligned in columns, and with
  // `with_workers`, one row per worker:
  //
  //   phase running; host sent 12, ingress delivered 12, received by host 1
  //   actor    type     state      received  handled  depth  dead-lettered  sent  kFull
  //   bank     Bank     running          11       11      0              0     0      0
  //   auditor  Auditor  failed(7)         1        1      0              0     1      0
  //
  // In a program that keeps handler times (ActorStats::timed), two more
  // columns, "p50 µs" and "p99 µs" ("-" for an actor with none yet).
  // Control characters in names are written as \xNN, so that a row stays one
  // line.
  std::string ToText(bool with_workers = false) const;

  // Every counter as one line of JSON (no newline), with fixed key names in
  // alphabetical order: the counters above under their field names, "phase"
  // (KernelPhaseName), "actors" (each with "id", "name", "type", "state":
  // "free", "running" or "failed", "fail_code", its counters, and
  // "timed_calls", "handler_p50_ns", "handler_p99_ns": null where the
  // program keeps no handler times or the actor has none yet) and
  // "workers" ("worker", "heartbeat", "handled", "exited"). Names are JSON
  // strings; bytes that are not UTF-8 become U+FFFD.
  std::string ToJson() const;
};

// What System::Stats returns: a snapshot of every counter, read while the
// kernel runs (the name the statistics are known by in the docs and tools).
using StatsSnapshot = SystemStats;

// An accepted message that was reported instead of handled.
struct DeadLetter {
  ActorId to;
  ActorId from;
  std::string to_name;
  std::string type;
  DeadLetterReason reason = DeadLetterReason::kNone;
  std::string bytes;
  uint64_t correlation = 0;
};

// An actor that called ctx.fail(code).
struct ActorFailure {
  ActorId actor;
  std::string name;
  uint32_t code = 0;
  ActorId sender;  // of the message it was handling
};

// Everything a Send accepted (returned OK for) is handled, or a dead letter
// (taken, in `dead_letters`, or counted in `dead_letters_dropped`), or
// counted in `unhandled`; `reports_lost` counts the dead letters and
// failures the GPU had no room to write back.
struct StopReport {
  bool drained = false;          // quiescent before halting (else halted by the deadline)
  uint64_t handled = 0;          // messages handled over the system's life
  uint64_t unhandled = 0;        // accepted but neither handled nor dead-lettered
  std::vector<ActorStats> actors;  // final counters
  std::vector<DeadLetter> dead_letters;  // not yet taken with TakeDeadLetters
  std::vector<ActorFailure> failures;    // not yet taken with TakeFailures
  std::vector<Message> undelivered;      // host-bound messages nobody Received
  // Over the system's life: dead letters and failures the host dropped,
  // past SystemOptions::dead_letter_capacity and failure_capacity.
  uint64_t dead_letters_dropped = 0;
  uint64_t failures_dropped = 0;
  // Reports the GPU could not write to its ring back to the host, which the
  // host drains continuously: dead letters of messages already in an actor's
  // mailbox when the ring was full (an actor's owner does not wait), and
  // rejected host messages and failure records given up once the kernel was
  // halting and the ring stayed full 1 ms more. The actors' dead_lettered
  // counters still count them.
  uint64_t reports_lost = 0;
  // Why the trace that was running (System::StartTrace) could not be
  // written; empty if none ran or it was written.
  std::string trace_error;

  std::string ToString() const;
};

class System {
 public:
  ~System();
  System(const System&) = delete;
  System& operator=(const System&) = delete;

  // Creates an actor of `type` (a qualified RK_ACTOR name) called `name`
  // (unique in the system). Its state is zeroed, then its default member
  // initialisers run. Returns once the GPU has it. If the GPU does not
  // acknowledge it within 5 s, returns DeadlineExceeded: the GPU may still
  // create the actor later, but it is never handed out (its id finds no
  // actor, `name` is free for another Spawn) and its id is never reused. A
  // device fault found meanwhile comes back as Aborted, as from any call.
  absl::StatusOr<ActorId> Spawn(std::string_view type, std::string_view name);
  absl::StatusOr<ActorId> Lookup(std::string_view name) const;
  std::optional<std::string> NameOf(ActorId id) const;

  // Binds a route the program uses (`rk::route("audit")`) to an actor, or
  // unbinds it; effective for every send that starts after it returns.
  absl::Status Bind(std::string_view route, ActorId actor);
  absl::Status Unbind(std::string_view route);

  // Sends a message of the program's type `type` (its exact bytes). Never
  // waits: ResourceExhausted when the host→GPU ring is full.
  absl::Status SendBytes(ActorId to, std::string_view type, std::string_view bytes);
  // As above, retrying a full ring until `deadline` (DeadlineExceeded then).
  absl::Status SendBytes(ActorId to, std::string_view type, std::string_view bytes, absl::Time deadline);

  template <class M>
  absl::Status Send(ActorId to, const M& m) {
    uint32_t id;
    if (absl::Status s = ResolveType<M>(&id); !s.ok()) return s;
    return SendTyped(to, id, &m, sizeof(M), 0, absl::InfinitePast());
  }
  template <class M>
  absl::Status Send(ActorId to, const M& m, absl::Time deadline) {
    uint32_t id;
    if (absl::Status s = ResolveType<M>(&id); !s.ok()) return s;
    return SendTyped(to, id, &m, sizeof(M), 0, deadline);
  }

  // Sends `m` and waits for the actor's reply (ctx.reply) of type `R` — or
  // the reply of an actor it delegated the request to with ctx.forward.
  // DeadlineExceeded after `timeout`; FailedPrecondition if the actor failed
  // or the message was dead-lettered first (the error says why). A reply that
  // comes after the Ask ended is dropped and counted (SystemStats::
  // late_replies): it never reaches Receive.
  template <class R, class M>
  absl::StatusOr<R> Ask(ActorId to, const M& m, absl::Duration timeout) {
    static_assert(std::is_trivially_copyable_v<R>, "messages are trivially copyable");
    uint32_t id;
    if (absl::Status s = ResolveType<M>(&id); !s.ok()) return s;
    // A reply of type R (a type of the program) is copied into `r` by the
    // thread that takes it from the GPU; any other answer comes as a
    // Message, and As<R> says what it is.
    R r;
    uint32_t reply_id = 0;
    const bool known = ResolveType<R>(&reply_id).ok();
    bool copied = false;
    absl::StatusOr<Message> reply = AskTyped(to, id, &m, sizeof(M), timeout, known ? &r : nullptr, reply_id,
                                             static_cast<uint32_t>(sizeof(R)), &copied);
    if (!reply.ok()) return reply.status();
    if (copied) return r;
    return reply->template As<R>();
  }
  absl::StatusOr<Message> AskBytes(ActorId to, std::string_view type, std::string_view bytes,
                                   absl::Duration timeout);

  // The next message sent to rk::host(), waiting up to `timeout`; nullopt if
  // none came.
  absl::StatusOr<std::optional<Message>> Receive(absl::Duration timeout = absl::ZeroDuration());

  // Dead letters and failures reported so far (and not taken before), at
  // most SystemOptions::dead_letter_capacity and failure_capacity of them.
  std::vector<DeadLetter> TakeDeadLetters();
  std::vector<ActorFailure> TakeFailures();

  // Counters from the mapped control blocks, read without stopping the
  // kernel. `fresh` asks the GPU to flush first and waits for it (µs);
  // otherwise they are at most SystemOptions::flush_interval old.
  absl::StatusOr<SystemStats> Stats(bool fresh = true);

  // OK while the kernel runs; after a device fault, Aborted naming the
  // CUDA error and the actor(s) that were running.
  absl::Status Health();

  // Stops accepting sends, lets the kernel finish what was accepted, and
  // halts it once quiescent — or, at 3/4 of `timeout`, halts it anyway
  // (messages still queued are reported as unhandled). A Send racing with
  // Stop either returns OK, and its message is in the report like any other,
  // or is refused (FailedPrecondition): Stop first waits for the Sends that
  // were already admitted to finish writing. If one of them has not finished
  // by `timeout` (its thread suspended), returns DeadlineExceeded with the
  // kernel still running and accepting nothing; Stop may be called again.
  // If a worker is stuck in a handler past `timeout`, returns
  // DeadlineExceeded naming the actor.
  // Such a kernel cannot be ended short of the process exiting (CUDA has no
  // way to kill a running kernel): destroying the System and its Runtime
  // then returns at once and leaves the device to the process's exit.
  absl::StatusOr<StopReport> Stop(absl::Duration timeout = absl::Seconds(10));

  // The device timeline (a program built with CompileOptions::trace):
  // from StartTrace on, every worker records its handlers' begin and end,
  // sends, dead letters, retries and faults, and the mailboxes' depths, on
  // the GPU's clock, and the host records its Send, Ask and Spawn calls;
  // StopTrace (or Stop) writes them to `path` in the Chrome trace-event JSON
  // format, which Perfetto's UI (ui.perfetto.dev) and chrome://tracing open:
  // a track per worker, per actor and for the host, and a flow arrow from
  // each send to the handler that received it. Events lost to a full ring
  // are counted in the file and shown in it. FailedPrecondition if the
  // program records no timeline or a trace is already running.
  absl::Status StartTrace(std::string_view path);
  absl::Status StopTrace();
  bool tracing() const;

  KernelPhase phase() const;
  // Worker blocks and threads per block of the launch.
  uint32_t workers() const;
  uint32_t threads_per_block() const;
  // Bytes of device and mapped memory the system allocated (infrastructure
  // and actor state, reported separately).
  struct MemoryUsage {
    uint64_t device_tables = 0;   // actor table, lists, routes, stats, params
    uint64_t mailboxes = 0;       // mailbox slots and headers
    uint64_t actor_state = 0;     // the actors' own state
    uint64_t arena_reserved = 0;  // device memory reserved for mailboxes and state
    uint64_t mapped = 0;          // rings and control blocks (pinned host memory)
  };
  MemoryUsage Memory() const;

 private:
  friend class Runtime;
  friend struct internal::SystemAccess;  // runtime/system_access.h: fault injection for tests
  explicit System(std::unique_ptr<SystemImpl> impl);

  // A type resolved once is a load from the system's table (inline: a Send
  // makes no call for it); the first time, ResolveTypeSlot checks it.
  template <class M>
  absl::Status ResolveType(uint32_t* id) {
    static_assert(std::is_trivially_copyable_v<M>, "messages are trivially copyable");
    const uint32_t slot = detail::TypeSlot<M>();
    if (slot < type_cache_size_) {
      if (const uint64_t v = type_cache_[slot].load(std::memory_order_acquire); v != 0) {
        *id = static_cast<uint32_t>(v - 1);
        return absl::OkStatus();
      }
    }
    return ResolveTypeSlot(slot, MessageTraits<M>::kName, detail::HostLayout<M>(), sizeof(M), alignof(M), id);
  }
  // `layout`: the host type's layout signature, or nullptr to check only
  // the name, size and alignment.
  absl::Status ResolveTypeSlot(uint32_t slot, const char* name, const char* layout, size_t size, size_t align,
                               uint32_t* id);
  absl::Status SendTyped(ActorId to, uint32_t type_id, const void* bytes, size_t size, uint64_t correlation,
                         absl::Time deadline);
  // `into` (when not null): where a reply of type `into_type` and
  // `into_size` bytes goes, and then `*copied` is set.
  absl::StatusOr<Message> AskTyped(ActorId to, uint32_t type_id, const void* bytes, size_t size,
                                   absl::Duration timeout, void* into, uint32_t into_type, uint32_t into_size,
                                   bool* copied);

  std::unique_ptr<SystemImpl> impl_;
  // The resolved types (SystemImpl's table: TypeSlot → type id + 1, 0 while
  // unresolved), for ResolveType's inline look.
  const std::atomic<uint64_t>* type_cache_ = nullptr;
  uint32_t type_cache_size_ = 0;
};

}  // namespace rk

#endif  // RINGKERNEL_SYSTEM_H_
