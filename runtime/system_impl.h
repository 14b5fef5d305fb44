// Copyright 2026 The RingKernel Authors.
//
// system_impl.h: the host half of a running system (internal to runtime/).
//
// It owns the launch and every allocation of it: the device tables and the
// arena that holds mailboxes and actor state (device memory), the rings and
// the control blocks (mapped pinned memory). Rings: one control ring to the
// service block, one message ring to each worker (a message goes to the ring
// of its receiver's worker) and one ring back from each worker. The host
// writes its rings from any thread (a lock-free multi-producer reservation,
// admitted by a WriterGate that Stop closes and waits on) and drains the
// rings back under `out_mu_`, sorting what it finds into Ask replies, the
// inbox, dead letters and failures. A background reader thread drains them
// while the system runs, so that the GPU's dead letters and failures always
// find room (most of them wait for it; rt_outbound.cuh says which do not).
#ifndef RINGKERNEL_RUNTIME_SYSTEM_IMPL_H_
#define RINGKERNEL_RUNTIME_SYSTEM_IMPL_H_

#include <array>
#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "jit/package.h"
#include "ringkernel/device/ll_ring.h"
#include "ringkernel/device/system_layout.h"
#include "ringkernel/system.h"
#include "runtime/device_buffer.h"
#include "runtime/ask_slots.h"
#include "runtime/mapped_buffer.h"
#include "runtime/module.h"
#include "runtime/stream.h"
#include "runtime/ring_owner.h"
#include "runtime/trace_events.h"
#include "runtime/writer_gate.h"

namespace rk {

class RuntimeImpl;

// The host's steady clock in ns: the clock of the timeline's host events.
inline int64_t HostNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// An acquire load of a word the GPU writes into mapped memory.
template <class T>
T LoadMapped(const T* p) {
  return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

// The steps of an Ask on its thread, as a measurement build stamps them with
// the CPU's counter (RK_ASK_HOST_STAMPS, runtime/system.cc). In order:
enum class AskStep : int {
  kCalled,            // System::AskTyped entered (its profiler range opened)
  kEntered,           // SystemImpl::Ask entered
  kPrefetched,        // the Ask's path prefetched (nothing, when warm)
  kClaimed,           // its answer slot claimed
  kSent,              // its request written
  kAnswerPrefetched,  // the answer's path prefetched
  kLocked,            // its last look at the ring back: the lock taken
  kDrained,           // the same look done
  kReturned,          // SystemImpl::Ask returning
  kOut,               // System::AskTyped returning
  kCount
};
struct AskHostSteps {
  uint64_t gap_ticks = 0;  // since the thread's last Ask returned (0: its first)
  // Each step's ticks after kCalled; 0 for kCalled, and for a step not passed.
  uint64_t ticks[static_cast<int>(AskStep::kCount)] = {};
};
struct AskHostStepLog {
  std::vector<AskHostSteps> asks;  // in the order they returned
  double ticks_per_us = 0;         // the counter's rate, measured since the first (0: too soon to tell)
};
// The steps of the Asks that returned since the last call, on every thread
// (at most 65,536 kept); none unless built with RK_ASK_HOST_STAMPS.
AskHostStepLog TakeAskHostSteps();

class SystemImpl {
 public:
  static absl::StatusOr<std::unique_ptr<SystemImpl>> Start(std::shared_ptr<RuntimeImpl> runtime,
                                                           std::shared_ptr<const jit::Package> package,
                                                           const SystemOptions& options);
  ~SystemImpl();

  absl::StatusOr<ActorId> Spawn(std::string_view type, std::string_view name);
  // Fault injection (system_access.h).
  void TimeOutNextControlWait() { time_out_next_control_wait_.store(true); }
  void PauseNextSend(std::function<void()> pause) {
    absl::MutexLock lock(&hook_mu_);
    pause_next_send_ = std::move(pause);
    pause_next_send_armed_.store(true);
  }
  bool accepting() const { return admission_.open(); }
  void PauseNextRecordMidway(std::function<void()> pause, int words_first) {
    absl::MutexLock lock(&hook_mu_);
    pause_mid_record_ = std::move(pause);
    pause_mid_record_words_ = words_first;
    pause_mid_record_armed_.store(true);
  }
  void StopNextOwnedRecord(std::function<void()> stop) {
    absl::MutexLock lock(&hook_mu_);
    stop_owned_ = std::move(stop);
    stop_owned_armed_.store(true);
  }
  // The state of worker `w`'s ring: its owner's tag, or RingOwners::kFree,
  // kRevoking, kShared (ring_owner.h).
  uint32_t RingOwnerOf(uint32_t w) const { return ring_owners_.OwnerOf(w); }
  // Copies `bytes` of the program's __device__ variable `name` (a
  // measurement build's stamps) into `dst`.
  absl::Status ReadDeviceGlobal(std::string_view name, void* dst, size_t bytes);
  uint32_t WorkerOf(ActorId id) const {
    return static_cast<uint32_t>(actor_place_[id.value].load(std::memory_order_relaxed));
  }
  absl::StatusOr<ActorId> Lookup(std::string_view name) const;
  std::optional<std::string> NameOf(ActorId id) const;
  absl::Status Bind(std::string_view route, uint32_t actor);
  absl::Status ResolveTypeSlot(uint32_t slot, const char* name, const char* layout, size_t size, size_t align,
                               uint32_t* id);
  absl::StatusOr<uint32_t> MessageId(std::string_view type, size_t size) const;
  absl::Status Send(ActorId to, uint32_t type_id, const void* bytes, size_t size, uint64_t correlation,
                    absl::Time deadline);
  // Where a typed Ask wants a reply of the type it expects (System::Ask<R>).
  using AskInto = internal::AskDirect;
  // With `into.dest` set, a reply of type `into.type` and `into.size` bytes
  // is copied there and `*copied` set (the Message returned is empty);
  // any other answer comes as without it.
  absl::StatusOr<Message> Ask(ActorId to, uint32_t type_id, const void* bytes, size_t size, absl::Duration timeout,
                              const AskInto& into = {}, bool* copied = nullptr);
  absl::StatusOr<std::optional<Message>> Receive(absl::Duration timeout);
  std::vector<DeadLetter> TakeDeadLetters();
  std::vector<ActorFailure> TakeFailures();
  absl::StatusOr<SystemStats> Stats(bool fresh);
  absl::Status Health();
  absl::StatusOr<StopReport> Stop(absl::Duration timeout);
  KernelPhase phase() const { return phase_.load(); }
  uint32_t workers() const { return params_.num_workers; }
  uint32_t threads_per_block() const { return params_.threads_per_block; }
  System::MemoryUsage Memory() const;
  // The device timeline (system_trace.cc). Both take trace_session_mu_.
  absl::Status StartTrace(std::string_view path);
  absl::Status StopTrace();
  bool tracing() const { return tracing_.load(std::memory_order_relaxed); }
  void PauseTraceDrain(bool paused) { trace_drain_paused_.store(paused); }
  // The resolved message types, TypeSlot → type id + 1 (0: not yet), and
  // their count: System's ResolveType looks there before it calls.
  const std::atomic<uint64_t>* type_cache() const { return type_cache_.data(); }
  uint32_t type_cache_size() const { return static_cast<uint32_t>(type_cache_.size()); }

 private:
  struct ActorRecord {
    std::string name;
    uint32_t type_id;
    uint32_t worker;
  };
  // An Ask's answer as its slot holds it (ask_slots.h).
  struct AskAnswer {
    absl::Status error;
    Message reply;
    bool copied = false;  // the reply's bytes went to the Ask's AskInto (`reply` is empty)
  };
  using AskSlotTable = internal::AskSlots<AskAnswer>;

  SystemImpl(std::shared_ptr<RuntimeImpl> runtime, std::shared_ptr<const jit::Package> package,
             const SystemOptions& options)
      : runtime_(std::move(runtime)), package_(std::move(package)), options_(options) {}

  absl::Status Init();
  absl::StatusOr<ActorId> SpawnUntraced(std::string_view type, std::string_view name);
  absl::Status SendUntraced(ActorId to, uint32_t type_id, const void* bytes, size_t size, uint64_t correlation,
                            absl::Time deadline);
  // A Send's common case in one frame: the actor known and handling the
  // type, the calling thread the owner of the worker's ring, no fault
  // injection armed, the gate open and room in the ring. True: written;
  // false: nothing written, and SendUntraced decides (and says why).
  bool TrySendOwned(ActorId to, uint32_t type_id, const void* bytes, size_t size, uint64_t correlation);
  // The lines an Ask to `to` touches before its request is written (its
  // slot, the actor's place, the worker's ring and its producer), and those
  // its wait looks at, asked for at once by prefetches: after a pause they
  // are cold, and the Ask's own loads would miss one after another.
  void PrefetchAskPath(ActorId to, uint32_t slot_hint);
  // While the Ask waits: the lines its answer's take will touch (its slot's
  // answer, the drain's buffer, the ring back's header, `into`).
  void PrefetchAnswerPath(uint32_t worker, uint64_t correlation, void* into);
  // An Ask's answer once its slot has it (the slot is free again).
  absl::StatusOr<Message> TakeAnswer(uint64_t correlation, bool* copied);
  LlHeader HostRecordHeader(ActorId to, uint32_t type_id, size_t size, uint64_t correlation, uint64_t place) const;
  // Every other Send: traced, or not the common case.
  ABSL_ATTRIBUTE_NOINLINE absl::Status SendSlow(ActorId to, uint32_t type_id, const void* bytes, size_t size,
                                                uint64_t correlation, absl::Time deadline);
  // `seq`: the Ask's sequence number; `*correlation`: the correlation it
  // was sent with (naming its slot).
  absl::StatusOr<Message> AskUntraced(ActorId to, uint32_t type_id, const void* bytes, size_t size,
                                      absl::Duration timeout, uint64_t seq, uint64_t* correlation,
                                      const AskInto& into, bool* copied);

  // ---- The device timeline (system_trace.cc). ----
  // A record taken from a trace ring, with the ring it came from.
  struct RawTraceRecord {
    TraceRecord r;
    uint32_t ring;
  };
  // A pair of clock readings taken together: the GPU's %globaltimer and the
  // host's steady clock, in ns.
  struct ClockPair {
    uint64_t gpu_ns;
    int64_t host_ns;
  };
  // Allocates the rings if the program records a timeline (Init).
  absl::Status InitTrace();
  // Switches recording on the GPU and reads the clocks around it.
  absl::StatusOr<ClockPair> SwitchTrace(bool on);
  // Takes every complete record from the trace rings.
  void DrainTraceLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(trace_mu_);
  // Waits (up to `timeout`) until every ring's writers saw the switch.
  bool WaitTraceSeen(uint64_t on, absl::Duration timeout);
  // Ends the running trace: drains, converts, writes the file.
  absl::Status FinishTrace(bool kernel_exited);
  void RecordHostCall(const char* call, int64_t begin_ns, uint32_t actor, uint32_t type_id, uint64_t flow, bool ok);
  TraceRingHeader* TraceRing(uint32_t r) const { return TraceRingAt(trace_host_, params_.trace_log2, r); }
  // The producer side of one host → GPU ring, each index on its own line.
  // `tail`: the control ring's reservation counter; for a worker's ring
  // (claimed in the ring itself, ll_ring.h), the producers' hint at the end
  // of the claimed records.
  struct alignas(64) RingProducer {
    u64 tail = 0;
    alignas(64) u64 cached_head = 0;
  };
  // Writes one record into a host → GPU ring; false if it is full.
  bool TryWrite(LlRingHeader* ring, u32 log2, RingProducer& p, const LlHeader& h, const void* payload);
  bool TryWriteControl(const LlHeader& h, const void* payload) {
    return TryWrite(inbound_, params_.inbound_log2, control_producer_, h, payload);
  }
  // The host → worker ring of worker `w`, and the worker → host ring.
  LlRingHeader* WorkerIn(uint32_t w) const { return WorkerRing(worker_in_host_, params_.worker_ring_bytes, w); }
  LlRingHeader* WorkerOut(uint32_t w) const { return WorkerRing(worker_out_host_, params_.worker_ring_bytes, w); }
  // Host records written to worker rings and not yet taken by the workers.
  // Host → worker rings (variable-length records, ll_ring.h): one attempt
  // at writing a record to worker `w`'s, streamed by the ring's owner or
  // claimed shared (ring_owner.h: *mode, from RingOwners::Enter, becomes
  // kShared if the ring was taken meanwhile). False if it is full. `me`: the
  // calling thread's gate tag. Called inside the writer gate.
  bool TryWriteUnits(uint32_t w, RingOwners::Mode* mode, uint32_t me, const LlHeader& h, const void* payload);
  RingRef WorkerRingRef(uint32_t w) {
    LlRingHeader* ring = WorkerIn(w);
    return RingRef{RingSlots(ring),           params_.worker_in_log2,       params_.max_payload,
                   &worker_producers_[w].tail, &worker_producers_[w].cached_head, &ring->head.value};
  }
  uint64_t HostRecordsInFlight() const;
  // Where the claimed records of worker `w`'s ring end.
  u64 ClaimedEnd(uint32_t w) const;
  uint64_t HostMessagesNeverTaken() const;
  // Writes a control record (waiting for room up to 5 s) and returns its
  // sequence number.
  absl::StatusOr<uint64_t> SendControl(ControlOp op, uint32_t a0, uint32_t a1, const void* payload, uint32_t size);
  // Waits until `*index` (a mapped index the GPU writes) reaches `target`.
  absl::Status WaitFor(const u64* index, uint64_t target, absl::Duration timeout, const char* what);
  // Why `call` (Send, Spawn, Bind) is refused when the system does not
  // accept: the device fault if there was one, else the phase it is in.
  absl::Status NotAccepting(const char* call);
  // Drains every GPU→host ring. Requires out_mu_.
  void DrainLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(out_mu_);
  // Drains the ring back from one worker; returns the records taken.
  uint64_t DrainRingLocked(uint32_t worker) ABSL_EXCLUSIVE_LOCKS_REQUIRED(out_mu_);
  // Whether the ring back from worker `w` has a record at the host's next
  // position (a look without out_mu_).
  bool RingBackHasRecord(uint32_t w) const;
  // Whether a record read from a ring back stays there for now: a message
  // for the inbox while it holds host_inbox_capacity (not once Stop began).
  bool HoldBackLocked(const LlHeader& h) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(out_mu_);
  // Sorts one record taken from a ring back.
  void SortLocked(const LlHeader& h) ABSL_EXCLUSIVE_LOCKS_REQUIRED(out_mu_);
  // The background reader: drains the rings back, one ring per hold of
  // out_mu_ (so an Ask waits for at most one ring's drain), looking at a
  // ring's next slot without the lock first; sleeps 50 µs after finding
  // records, doubling to 400 µs while it finds none.
  void ReaderLoop();
  void StopReader();
  // Calls and disarms the PauseNextSend hook.
  void RunPauseHook();
  void Drain() {
    absl::MutexLock lock(&out_mu_);
    DrainLocked();
  }
  // The kernel's completion state: OK while running, else its error
  // (attributed to the running actors); sets phase_ on a fault.
  absl::Status CheckKernel(bool* finished);
  std::string RunningActors(bool only_unexited) const;
  std::string ActorName(uint32_t index) const;
  std::string MessageName(uint32_t type_id) const;
  absl::StatusOr<uint64_t> ArenaAlloc(uint64_t bytes, uint64_t align);
  ActorStats ReadActor(uint32_t index) const;
  // After the kernel exits: an actor's mailbox header from device memory.
  absl::Status FinalFromDevice(const ActorSlot& slot, MailboxHeader* box) const;

  // Shared with the Runtime: the device context outlives this system even if
  // the application destroys the Runtime first.
  std::shared_ptr<RuntimeImpl> runtime_;
  std::shared_ptr<const jit::Package> package_;
  SystemOptions options_;

  // Driver objects.
  std::optional<cuda::Module> module_;
  std::optional<cuda::Stream> stream_;       // the persistent kernel's
  std::optional<cuda::Stream> copy_stream_;  // host<->device copies (copy engines)
  std::optional<cuda::DeviceBuffer> tables_;  // params, actor table, lists, counts, routes, shared, worker stats
  // Mailboxes and actor state, allocated by Spawn under mu_.
  std::vector<cuda::DeviceBuffer> arena_;
  std::optional<cuda::DeviceBuffer> channel_arena_;  // K2K channels (channel.h), zeroed
  uint64_t arena_used_ = 0;  // in arena_.back()
  uint64_t mailbox_bytes_ = 0;
  uint64_t state_bytes_ = 0;
  std::optional<cuda::MappedBuffer> inbound_buf_;
  std::optional<cuda::MappedBuffer> control_buf_;
  std::optional<cuda::MappedBuffer> worker_in_buf_;
  std::optional<cuda::MappedBuffer> worker_out_buf_;

  // Host views of the mapped memory.
  LlRingHeader* inbound_ = nullptr;
  SystemControl* control_ = nullptr;
  ActorControl* actor_control_ = nullptr;
  WorkerControl* worker_control_ = nullptr;
  u64* running_ = nullptr;
  u8* worker_in_host_ = nullptr;
  u8* worker_out_host_ = nullptr;

  SystemParams params_{};
  uint64_t device_table_bytes_ = 0;

  // Producer sides of the control ring and of each worker's ring.
  RingProducer control_producer_;
  std::unique_ptr<RingProducer[]> worker_producers_;
  // Admits Sends into the worker rings, one lane per worker (writer_gate.h):
  // open from the kernel's start until Stop (or a fault) closes it. Stop
  // waits for every admitted Send to finish its record.
  WriterGate admission_;
  // Which thread, if one alone, writes each worker's ring (ring_owner.h).
  RingOwners ring_owners_;
  // Lock order (a thread holding one may take only those after it):
  //   trace_session_mu_ → spawn_mu_ → control_mu_ → out_mu_ → trace_mu_ → mu_ → state_mu_
  // (hook_mu_ is held alone, only to set or take the PauseNextSend hook.)
  // spawn_mu_ is held across a whole Spawn, including the wait for the GPU;
  // control_mu_ while a control record is written (and CheckKernel runs when
  // the ring is full, which takes mu_ and state_mu_); out_mu_ while the rings
  // back are drained and sorted (which names actors under mu_ and records a
  // corrupt ring under state_mu_). mu_ and state_mu_ are held only for short
  // reads and writes of what they guard, never across a wait for the GPU:
  // CheckKernel, called from every wait, takes both.
  absl::Mutex spawn_mu_;  // serialises Spawn: an actor index, its worker lane, the arena
  absl::Mutex control_mu_;  // control records are written in sequence order
  std::atomic<bool> time_out_next_control_wait_{false};
  alignas(64) std::atomic<uint64_t> control_seq_{0};
  std::atomic<uint64_t> host_ring_full_{0};
  std::atomic<uint64_t> host_hlc_{0};
  std::atomic<uint64_t> next_correlation_{1};
  std::atomic<KernelPhase> phase_{KernelPhase::kStarting};
  // Fault injection: the next Send calls the hook once it has been admitted,
  // before it writes its record.
  std::atomic<bool> pause_next_send_armed_{false};
  absl::Mutex hook_mu_;
  std::function<void()> pause_next_send_ ABSL_GUARDED_BY(hook_mu_);
  // Fault injection: the next record is written in two halves around a hook.
  std::atomic<bool> pause_mid_record_armed_{false};
  std::atomic<bool> stop_owned_armed_{false};
  std::function<void()> stop_owned_ ABSL_GUARDED_BY(hook_mu_);
  std::function<void()> pause_mid_record_ ABSL_GUARDED_BY(hook_mu_);
  int pause_mid_record_words_ ABSL_GUARDED_BY(hook_mu_) = -1;

  // Actors. The per-index arrays are read without the lock by Send.
  mutable absl::Mutex mu_;
  std::vector<ActorRecord> actors_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, uint32_t> by_name_ ABSL_GUARDED_BY(mu_);
  std::vector<uint32_t> worker_load_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<std::atomic<uint32_t>[]> actor_types_;  // type id + 1; 0: no actor
  std::unique_ptr<std::atomic<uint64_t>[]> actor_place_;  // worker | list position << 32
  std::atomic<uint32_t> actor_count_{0};
  std::vector<uint8_t> handles_;  // [actor type][message id] → 1 if handled
  uint32_t message_stride_ = 0;
  std::array<std::atomic<uint64_t>, 1024> type_cache_{};  // TypeSlot → type id + 1

  // Consumer side of the rings back, one per worker.
  absl::Mutex out_mu_;
  // Each ring's next position: written under out_mu_, read without it by
  // the background reader to look at the ring before taking the lock.
  std::unique_ptr<std::atomic<u64>[]> out_heads_;
  // Asks polling each ring back: the background reader leaves those rings
  // to them.
  std::unique_ptr<std::atomic<uint32_t>[]> asks_waiting_;
  // Bumped each time a drain records a failure: a waiting Ask takes out_mu_
  // to look for its actor's only when this moved or its ring back has a
  // record (its answer it sees in its slot).
  std::atomic<uint64_t> failures_sorted_{0};
  std::string out_buffer_ ABSL_GUARDED_BY(out_mu_);
  // Its bytes, sized once before the first Ask (for PrefetchAnswerPath, which
  // only prefetches them).
  const char* out_buffer_bytes_ = nullptr;
  // Each message type's name by its id (written by Init only).
  std::vector<std::string> message_names_;
  std::deque<Message> inbox_ ABSL_GUARDED_BY(out_mu_);
  std::vector<DeadLetter> dead_letters_ ABSL_GUARDED_BY(out_mu_);
  std::vector<ActorFailure> failures_ ABSL_GUARDED_BY(out_mu_);
  // Waiting Asks, each in a slot of its own, answered without out_mu_ on
  // the Ask's side (answers are handed over by drains, under out_mu_).
  AskSlotTable ask_slots_;
  uint64_t received_by_host_ ABSL_GUARDED_BY(out_mu_) = 0;
  uint64_t dead_letters_dropped_ ABSL_GUARDED_BY(out_mu_) = 0;
  uint64_t late_replies_ ABSL_GUARDED_BY(out_mu_) = 0;
  uint64_t failures_dropped_ ABSL_GUARDED_BY(out_mu_) = 0;
  // Set by Stop: from then on every drain takes the whole ring (the report
  // holds every message for the host, whatever host_inbox_capacity says).
  bool drain_all_ ABSL_GUARDED_BY(out_mu_) = false;

  // The background reader (ReaderLoop), from Init until Stop or destruction.
  std::thread reader_;
  std::atomic<bool> reader_stop_{false};

  absl::Mutex state_mu_;
  absl::Status fault_ ABSL_GUARDED_BY(state_mu_);
  bool launched_ = false;
  // This system holds its runtime (RuntimeImpl::TakeForSystem) from Init
  // until its kernel has exited (or was never launched).
  void ReturnRuntime();
  bool holds_runtime_ = false;
  std::atomic<bool> runtime_returned_{false};
  bool forced_halt_ = false;

  // The device timeline: its rings (null unless the program records one),
  // the trace running (StartTrace to StopTrace or Stop) and what was taken.
  // trace_session_mu_ is held across StartTrace and StopTrace (which write
  // control records and wait for the GPU); trace_mu_ only while records are
  // taken or added (the reader, host calls).
  // The handler-time histograms (handler_times.h), in a program that
  // records a timeline: counted in device memory, read from mapped memory.
  std::optional<cuda::DeviceBuffer> handler_times_dev_;
  std::optional<cuda::MappedBuffer> handler_times_buf_;
  const uint32_t* handler_times_ = nullptr;
  std::optional<cuda::MappedBuffer> trace_buf_;
  u8* trace_host_ = nullptr;
  uint32_t trace_rings_ = 0;
  absl::Mutex trace_session_mu_;
  std::atomic<bool> tracing_{false};
  std::atomic<bool> trace_drain_paused_{false};  // fault injection (system_access.h)
  absl::Mutex trace_mu_;
  std::string trace_path_ ABSL_GUARDED_BY(trace_mu_);
  std::vector<uint64_t> trace_next_ ABSL_GUARDED_BY(trace_mu_);  // per ring: the next record to take
  std::vector<uint64_t> trace_dropped_base_ ABSL_GUARDED_BY(trace_mu_);  // per ring: drops before this trace
  std::vector<RawTraceRecord> trace_raw_ ABSL_GUARDED_BY(trace_mu_);
  std::vector<internal::HostTraceEvent> trace_host_events_ ABSL_GUARDED_BY(trace_mu_);
  std::vector<ClockPair> trace_clocks_ ABSL_GUARDED_BY(trace_mu_);
};

}  // namespace rk

#endif  // RINGKERNEL_RUNTIME_SYSTEM_IMPL_H_
