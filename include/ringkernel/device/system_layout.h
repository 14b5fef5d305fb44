// Copyright 2026 The RingKernel Authors.
//
// system_layout.h: the tables a running system keeps, shared by the host
// runtime (which allocates and reads them) and the persistent kernel (which
// owns them while it runs).
//
// Device memory (the kernel's, read by the host only after it exits):
//   * `ActorSlot`    — one per actor: its mailbox, state, type, owner and the
//                      counters its owner keeps;
//   * `DeviceShared` — run flags and system-wide counters;
//   * `ChannelTable` — one per actor: the single-producer channels senders
//                      opened to it (channel.h), carved from the channel arena;
//   * the worker lists and the routing table.
// Mapped pinned host memory (the host reads it at any time, without stopping
// the kernel):
//   * `SystemControl` — kernel state, acknowledgements of control records,
//                       flush epochs, system counters;
//   * `ActorControl`  — per-actor status and counters, flushed periodically
//                       and on demand by the monitor warp (never a bus write
//                       per message);
//   * `WorkerControl` — per-worker heartbeat and counters, flushed likewise;
//   * the running table — per worker thread, the actor whose handler it is
//                       running, written by the worker itself so that the
//                       host can name the actor after a device fault.
// Every index with a single writer sits alone on a 128-byte line.
#ifndef RINGKERNEL_DEVICE_SYSTEM_LAYOUT_H_
#define RINGKERNEL_DEVICE_SYSTEM_LAYOUT_H_

#include "ringkernel/device/atomics.h"
#include "ringkernel/device/channel.h"
#include "ringkernel/device/config.h"
#include "ringkernel/device/handler_times.h"
#include "ringkernel/device/ll_ring.h"
#include "ringkernel/device/mailbox.h"
#include "ringkernel/device/trace.h"
#include "ringkernel/device/types.h"

namespace rk {

// The version of everything in this file and of the kernel's entry point.
// Packages record it; the runtime refuses images built for another.
inline constexpr u32 kAbiVersion = 7;

// The kernel's entry point, as codegen emits it.
#define RK_KERNEL_ENTRY_NAME "rk_system_kernel"

// Per-actor record in device memory. The service warp writes the first
// fields at spawn; afterwards the owning worker is the only writer of the
// counters, and the monitor warp reads them to flush.
//
// The first 32 bytes are what a sender needs, read with two 16-byte loads in
// one round trip: every dependent load on the send path is a trip to L2.
struct alignas(kLineBytes) ActorSlot {
  u64 mailbox;        // MailboxHeader* in device memory
  u32 type;           // actor type id
  u32 status;         // ActorState; release-stored
  u64 state;          // the actor's state in device memory
  u32 shape;          // the mailbox: capacity log2 | inline words << 8
  u32 slot_bytes;     // the mailbox's slot size
  u32 worker;         // owning worker
  u32 fail_code;      // the code given to ctx.fail
  u64 hlc;            // the actor's clock (owner only)
  u64 handled;        // messages handled (owner)
  u64 dead_lettered;  // accepted messages reported instead of handled (owner)
  u64 sent;           // sends that returned kOk (owner)
  u64 send_full;      // sends that returned kFull
  u64 send_no_actor;  // sends that returned kNoActor
  u64 send_other;     // sends that returned kTooLarge or kNoHandler
  u64 rejected;       // host messages for it its worker could not deliver
  u64 start;          // the mailbox's first position
  u64 direct;         // host messages its worker handed over without the mailbox (owner)
  u32 lane;           // its position in its worker's list
  u32 reserved;
};
static_assert(sizeof(ActorSlot) == kLineBytes, "ActorSlot is one line");
RK_ASSERT_OFFSET(ActorSlot, type, 8);
RK_ASSERT_OFFSET(ActorSlot, status, 12);
RK_ASSERT_OFFSET(ActorSlot, state, 16);
RK_ASSERT_OFFSET(ActorSlot, shape, 24);
RK_ASSERT_OFFSET(ActorSlot, hlc, 40);
RK_ASSERT_OFFSET(ActorSlot, start, 104);
RK_ASSERT_OFFSET(ActorSlot, direct, 112);

RK_HOST_DEVICE constexpr u32 ActorShape(u32 capacity_log2, u32 inline_words) { return capacity_log2 | inline_words << 8; }
RK_HOST_DEVICE constexpr u32 ShapeLog2(u32 shape) { return shape & 0xFF; }
RK_HOST_DEVICE constexpr u32 ShapeInlineWords(u32 shape) { return shape >> 8; }

// Run states of the kernel (SystemControl::state and DeviceShared::run).
enum class KernelState : u32 {
  kNotStarted = 0,
  kRunning = 1,
  kDraining = 2,  // no more host input; halts once quiescent
  kHalting = 3,   // workers finish the message in hand and exit
  kExited = 4,    // every block has left; the control blocks are final
};

// Device-memory state shared by all blocks.
struct alignas(kLineBytes) DeviceShared {
  PaddedIndex run;              // KernelState; written by the service block
  PaddedIndex ingress_done;     // 1 once the ingress has stopped for good
  PaddedIndex flush_request;    // control seq of a pending kFlush
  PaddedIndex workers_exited;   // count of worker blocks that left their loop
  PaddedIndex outbound_full;    // actors' sends to the host that found the ring full (kFull)
  PaddedIndex ingress_dead;     // host messages the ingress dead-lettered
  PaddedIndex ingress_messages; // host messages the ingress delivered
  PaddedIndex actor_count;      // actor indices in use (high-water mark + 1)
  PaddedIndex reports_lost;     // dead letters and failures given up at the halt (ring back full)
  PaddedIndex trace_on;         // 1 while the host has tracing on (kTrace; RK_TRACE builds only)
  PaddedIndex host_holes;       // host records passed over while not whole (holes opened)
  PaddedIndex channel_arena_used;  // bytes of the channel arena given out (channel.h)
};

// Device-memory statistics of one worker block, kept by its thread 0.
struct alignas(64) WorkerStats {
  u64 iterations;  // loop iterations (the heartbeat)
  u64 handled;     // messages handled by this worker
  u64 exited;      // 1 once the worker left its loop
  u64 handed;      // host messages its poller handed over in shared memory
                   // (the owners count those they took in ActorSlot::direct)
  u8 pad[64 - 32];
};
static_assert(sizeof(WorkerStats) == 64, "WorkerStats layout");

// Mapped: the host's view of the whole system.
struct alignas(kLineBytes) SystemControl {
  PaddedIndex state;            // KernelState (GPU writes)
  PaddedIndex ack;              // seq of the last control record applied (GPU)
  PaddedIndex flush_epoch;      // incremented after each complete flush (GPU)
  PaddedIndex flush_ack;        // control seq of the last kFlush served (GPU)
  PaddedIndex host_request;     // host writes 1: halt now (force), polled by the monitor
  PaddedIndex ingress_error;    // first corrupt host record seen: position + 1 (GPU)
  PaddedIndex ingress_messages; // host messages delivered to mailboxes (GPU, flushed)
  PaddedIndex ingress_dead;     // host messages dead-lettered by the ingress (GPU, flushed)
  PaddedIndex outbound_full;    // actors' sends to the host refused: ring full (GPU, flushed)
  PaddedIndex last_flush_ns;    // %globaltimer at the last flush (GPU)
  PaddedIndex trace_clock;      // %globaltimer when the last kTrace was applied (GPU)
  PaddedIndex host_holes;       // host records passed over while not whole: holes opened (GPU, flushed)
  PaddedIndex channel_bytes;    // bytes of the channel arena given out (GPU, flushed; may pass its size)
};

// Mapped: one actor as the host sees it.
struct alignas(kLineBytes) ActorControl {
  u64 status;         // ActorState | fail_code << 32
  u64 received;       // messages accepted into its mailbox
  u64 handled;
  u64 dead_lettered;
  u64 sent;
  u64 send_full;
  u64 send_no_actor;
  u64 send_other;
  u64 rejected;
  u64 hlc;
  u64 depth;          // received - handled - dead_lettered at the flush
  u8 pad[kLineBytes - 88];
};
static_assert(sizeof(ActorControl) == kLineBytes, "ActorControl is one line");

// Mapped: one worker block as the host sees it.
struct alignas(kLineBytes) WorkerControl {
  u64 heartbeat;      // loop iterations, flushed
  u64 handled;        // messages handled by this worker
  u64 exited;         // 1 once the worker left its loop
  u8 pad[kLineBytes - 24];
};
static_assert(sizeof(WorkerControl) == kLineBytes, "WorkerControl is one line");

// An entry of the running table: 0 when idle, else the actor index + 1 in
// the low 32 bits and the message type in the high 32.
RK_HOST_DEVICE constexpr u64 RunningEntry(u32 actor, u32 type) {
  return static_cast<u64>(actor + 1) | static_cast<u64>(type) << 32;
}

// The payload of a kSpawn control record.
struct SpawnRecord {
  u32 actor;
  u32 type;
  u32 worker;
  u32 shape;        // ActorShape(capacity log2, inline words)
  u64 mailbox;
  u64 state;
  u32 slot_bytes;
  u32 state_bytes;  // zeroed by the service warp (a multiple of 16)
  u32 plain_bytes;  // the mailbox's plain payload area per slot
  u32 lane;         // the actor's position in its worker's list
};
static_assert(sizeof(SpawnRecord) == 48, "SpawnRecord layout");

// Everything the kernel needs. The kernel takes it by value (a
// `__grid_constant__` parameter): every field is a constant-cache load that
// no memory clobber forces back to L2.
struct SystemParams {
  // Device memory.
  ActorSlot* actors;
  u32* worker_lists;          // num_workers × max_actors_per_worker actor indices
  u32* worker_counts;         // num_workers counts, release-stored by the service warp
  u32* routes;                // num_routes actor indices (kNoActorValue: unbound)
  DeviceShared* shared;
  WorkerStats* worker_stats;  // num_workers
  // Mapped memory (device addresses).
  LlRingHeader* inbound;      // host → GPU control records (the service block)
  u64* inbound_slots;
  SystemControl* control;
  ActorControl* actor_control;
  WorkerControl* worker_control;
  u64* running;               // num_workers × threads_per_block entries
  u8* worker_in;              // num_workers host → worker rings, worker_ring_bytes apart
  u8* worker_out;             // num_workers worker → host rings, worker_ring_bytes apart
  u64 worker_ring_bytes;
  // The rings' shapes (copies of their headers, so the GPU never reads
  // them across the bus). Every ring has slots of `slot_words`.
  u32 inbound_log2;
  u32 slot_words;
  u32 worker_in_log2;
  u32 worker_out_log2;
  u32 max_payload;
  // Sizes and options.
  u32 max_actors;
  u32 num_workers;
  u32 max_actors_per_worker;
  u32 num_routes;
  u32 threads_per_block;
  u32 scratch_bytes;
  u32 batch_max;              // messages an actor handles before its worker moves on
  u32 idle_backoff_max_ns;    // longest sleep of an idle warp between polls
  u32 track_running;          // 1: keep the running table for fault attribution
  u64 idle_spin_ns;           // how long a warp keeps polling without sleeping after its last message
  u64 flush_interval_ns;
  u64 ingress_full_timeout_ns;
  // The timeline's rings (trace.h), num_workers + 1 of 2^trace_log2
  // records in mapped memory: null unless the program records one.
  u8* trace;
  u32 trace_log2;
  // 1: large payloads are copied by the sending thread, never by the
  // tensor memory accelerator (bulk_copy.h; RINGKERNEL_NO_BULK_COPY).
  u32 no_bulk_copy;
  // The handler-time histograms (handler_times.h), max_actors rows of
  // kHandlerTimeBuckets counts: counted in device memory, copied to mapped
  // memory by the monitor. Null unless the program records a timeline.
  u32* handler_times;
  u32* handler_times_out;
  // K2K channels (channel.h): a table per actor, and the zeroed device
  // memory they are carved from (null and 0: no channels, every send goes
  // through the mailbox).
  ChannelTable* channel_tables;
  u8* channel_arena;
  u64 channel_arena_bytes;
};
// The host writes this struct and the kernel reads it: one layout for both.
static_assert(sizeof(SystemParams) == 256, "SystemParams layout");
static_assert(alignof(SystemParams) == 8, "SystemParams alignment");
RK_ASSERT_OFFSET(SystemParams, running, 88);
RK_ASSERT_OFFSET(SystemParams, worker_ring_bytes, 112);
RK_ASSERT_OFFSET(SystemParams, inbound_log2, 120);
RK_ASSERT_OFFSET(SystemParams, max_actors, 140);
RK_ASSERT_OFFSET(SystemParams, track_running, 172);
RK_ASSERT_OFFSET(SystemParams, idle_spin_ns, 176);

// The worker → host ring of worker `w` and the host → worker ring: each a
// header and its slots, `worker_ring_bytes` apart.
RK_HOST_DEVICE RK_FORCEINLINE LlRingHeader* WorkerRing(u8* base, u64 ring_bytes, u32 w) {
  return reinterpret_cast<LlRingHeader*>(base + ring_bytes * w);
}
RK_HOST_DEVICE RK_FORCEINLINE u64* RingSlots(LlRingHeader* ring) {
  return reinterpret_cast<u64*>(reinterpret_cast<u8*>(ring) + kLlSlotsOffset);
}

}  // namespace rk

#endif  // RINGKERNEL_DEVICE_SYSTEM_LAYOUT_H_
