// Copyright 2026 The RingKernel Authors.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "jit/package.h"
#include "ringkernel/device/hlc.h"
#include "ringkernel/device/mailbox.h"
#include "ringkernel/status_macros.h"
#include "runtime/cooperative_launch.h"
#include "runtime/cuda_driver.h"
#include "runtime/cuda_status.h"
#include "runtime/nvtx.h"
#include "runtime/runtime_impl.h"
#include "runtime/system_impl.h"

// The Ask's code after a pause. Its lines and their pages are cold then,
// and running it misses on them one after another (some 13 pages, about
// 15 KB: bench/NOTES.md, session 46). So the code an Ask runs lies in two
// sections of its own, each contiguous, whose bounds the linker gives: what
// runs before the request is written (RK_ASK_SEND_CODE) and what runs once
// the answer is there (RK_ASK_ANSWER_CODE). An Ask that follows the
// thread's last one by more than kAskColdTicks asks for the first section's
// lines at once, before it runs it, and for the second's while the GPU
// works: one prefetch a line (into the second-level cache), their misses
// and page walks overlapping. A warm Ask prefetches nothing.
#define RK_ASK_SEND_CODE __attribute__((section("rk_ask_send_text")))
#define RK_ASK_ANSWER_CODE __attribute__((section("rk_ask_answer_text")))
extern "C" {
extern const char __start_rk_ask_send_text[] __attribute__((weak, visibility("hidden")));
extern const char __stop_rk_ask_send_text[] __attribute__((weak, visibility("hidden")));
extern const char __start_rk_ask_answer_text[] __attribute__((weak, visibility("hidden")));
extern const char __stop_rk_ask_answer_text[] __attribute__((weak, visibility("hidden")));
}

namespace rk {
namespace {

// A cheap clock of the calling CPU (its ticks, not nanoseconds), and the
// gap after which an Ask counts as cold: about half a millisecond.
#if defined(__x86_64__) || defined(__i386__)
inline uint64_t CpuTicks() { return __rdtsc(); }
constexpr uint64_t kAskColdTicks = uint64_t{1} << 20;  // a TSC of 1-4 GHz
#elif defined(__aarch64__)
inline uint64_t CpuTicks() {
  uint64_t t;
  asm volatile("mrs %0, cntvct_el0" : "=r"(t));
  return t;
}
constexpr uint64_t kAskColdTicks = uint64_t{1} << 14;  // a counter of 25 MHz-1 GHz
#else
inline uint64_t CpuTicks() { return 0; }  // never cold: no prefetch
constexpr uint64_t kAskColdTicks = 1;
#endif

// When the calling thread's last Ask began, and whether this one is cold.
thread_local uint64_t ask_last_ticks = 0;
thread_local bool ask_cold = false;

// The measurement build's stamps (AskStep, system_impl.h): the calling
// thread's current Ask, and the log every thread's Asks end in. Compiled
// either way, so that the build that uses them never finds them broken;
// without RK_ASK_HOST_STAMPS they compile to nothing (and clang, seeing
// them only in discarded branches, would call them unneeded).
#ifndef RK_ASK_HOST_STAMPS
#define RK_ASK_HOST_STAMPS 0
#endif
constexpr bool kAskHostStamps = RK_ASK_HOST_STAMPS != 0;
constexpr size_t kAskHostStepsKept = size_t{1} << 16;
[[maybe_unused]] thread_local uint64_t ask_steps[static_cast<int>(AskStep::kCount)];
[[maybe_unused]] thread_local uint64_t ask_steps_last_out = 0;

struct AskStepLog {
  absl::Mutex mu;
  std::vector<AskHostSteps> asks ABSL_GUARDED_BY(mu);
  // The counter and the steady clock at the first Ask: the counter's rate.
  uint64_t first_ticks ABSL_GUARDED_BY(mu) = 0;
  std::chrono::steady_clock::time_point first_time ABSL_GUARDED_BY(mu);
};
[[maybe_unused]] AskStepLog& StepLog() {
  static AskStepLog* log = new AskStepLog;
  return *log;
}
[[maybe_unused]] inline void StampAsk(AskStep s) {
  if constexpr (kAskHostStamps) ask_steps[static_cast<int>(s)] = CpuTicks();
}
[[maybe_unused]] inline void BeginAskSteps() {
  if constexpr (kAskHostStamps) {
    std::memset(ask_steps, 0, sizeof(ask_steps));
    StampAsk(AskStep::kCalled);
  }
}
[[maybe_unused]] void EndAskSteps() {
  if constexpr (kAskHostStamps) {
    StampAsk(AskStep::kOut);
    const uint64_t called = ask_steps[static_cast<int>(AskStep::kCalled)];
    AskHostSteps r;
    r.gap_ticks = ask_steps_last_out != 0 ? called - ask_steps_last_out : 0;
    for (int i = 1; i < static_cast<int>(AskStep::kCount); ++i) {
      r.ticks[i] = ask_steps[i] != 0 ? ask_steps[i] - called : 0;
    }
    ask_steps_last_out = ask_steps[static_cast<int>(AskStep::kOut)];
    AskStepLog& log = StepLog();
    absl::MutexLock lock(&log.mu);
    if (log.first_ticks == 0) {
      log.first_ticks = CpuTicks();
      log.first_time = std::chrono::steady_clock::now();
    }
    if (log.asks.size() < kAskHostStepsKept) log.asks.push_back(r);
  }
}

// One line into the second-level cache. In assembly: a loop of nothing but
// __builtin_prefetch has no effect the compiler must keep.
inline void PrefetchLine(const char* p) {
#if defined(__x86_64__) || defined(__i386__)
  asm volatile("prefetcht1 %0" : : "m"(*p));
#elif defined(__aarch64__)
  asm volatile("prfm pldl2keep, %0" : : "Q"(*p));
#else
  __builtin_prefetch(p, 0, 2);
#endif
}

void PrefetchCode(const char* begin, const char* end) {
  if (begin == nullptr || end <= begin) return;
  constexpr uintptr_t kLine = 64;
  for (uintptr_t p = reinterpret_cast<uintptr_t>(begin) & ~(kLine - 1); p < reinterpret_cast<uintptr_t>(end);
       p += kLine) {
    PrefetchLine(reinterpret_cast<const char*>(p));
  }
}

using Clock = std::chrono::steady_clock;

constexpr uint64_t kArenaChunkBytes = 16ull << 20;
constexpr uint32_t kMaxPendingPerWorker = 4096;
constexpr absl::Duration kControlTimeout = absl::Seconds(5);
// The most a worker's ring (either way) may take of mapped memory.
constexpr uint64_t kWorkerRingBytes = 1ull << 20;
// Records of the control ring (spawn, bind, flush, drain, halt): the host
// waits for each spawn and bind to be applied, so a few are ever queued.
constexpr uint32_t kControlRingLog2 = 6;
// The background reader's sleep between looks at the rings back: short after
// it found records, doubling while it finds none. The GPU waits for room for
// a dead letter or a failure, so these bound how long it may wait, not what
// is lost.
constexpr auto kReaderBusySleep = std::chrono::microseconds(50);
constexpr auto kReaderIdleSleep = std::chrono::microseconds(400);

bool IsPow2(uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

// Whether the environment variable `name` is set to something other than
// "" or "0".
bool EnvFlag(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' && std::strcmp(v, "0") != 0;
}


KernelPhase PhaseOf(uint64_t state) {
  switch (static_cast<KernelState>(state)) {
    case KernelState::kNotStarted: return KernelPhase::kStarting;
    case KernelState::kRunning: return KernelPhase::kRunning;
    case KernelState::kDraining: return KernelPhase::kDraining;
    case KernelState::kHalting: return KernelPhase::kHalting;
    case KernelState::kExited: return KernelPhase::kExited;
  }
  return KernelPhase::kRunning;
}

absl::Status Invalid(const std::string& what) { return absl::InvalidArgumentError(what); }

}  // namespace

std::string_view KernelPhaseName(KernelPhase phase) {
  switch (phase) {
    case KernelPhase::kStarting: return "starting";
    case KernelPhase::kRunning: return "running";
    case KernelPhase::kDraining: return "draining";
    case KernelPhase::kHalting: return "halting";
    case KernelPhase::kExited: return "exited";
    case KernelPhase::kFaulted: return "faulted";
    case KernelPhase::kAbandoned: return "abandoned";
  }
  return "unknown";
}

std::string ActorStats::ToString() const {
  return absl::StrFormat(
      "%s (%s) %s: received %d, handled %d, dead-lettered %d, depth %d, sent %d, kFull %d, kNoActor %d, other %d, "
      "rejected %d",
      name, type, state == ActorState::kFailed ? absl::StrCat("failed(", fail_code, ")") : "running", received, handled,
      dead_lettered, depth, sent, send_full, send_no_actor, send_other, rejected);
}

const ActorStats* SystemStats::Find(std::string_view name) const {
  for (const ActorStats& a : actors) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

std::string StopReport::ToString() const {
  std::string out = absl::StrFormat("%s; %d message(s) handled, %d accepted but not handled",
                                    drained ? "drained" : "halted at the deadline", handled, unhandled);
  for (const ActorStats& a : actors) {
    if (a.depth != 0) absl::StrAppend(&out, absl::StrFormat("\n  %s (%s): %d not handled", a.name, a.type, a.depth));
  }
  if (!dead_letters.empty()) absl::StrAppend(&out, "\n  ", dead_letters.size(), " dead letter(s)");
  if (!failures.empty()) absl::StrAppend(&out, "\n  ", failures.size(), " actor failure(s)");
  if (!undelivered.empty()) absl::StrAppend(&out, "\n  ", undelivered.size(), " message(s) for the host not received");
  if (dead_letters_dropped != 0) {
    absl::StrAppend(&out, "\n  ", dead_letters_dropped, " dead letter(s) dropped past SystemOptions::dead_letter_capacity");
  }
  if (failures_dropped != 0) {
    absl::StrAppend(&out, "\n  ", failures_dropped, " failure(s) dropped past SystemOptions::failure_capacity");
  }
  if (reports_lost != 0) {
    absl::StrAppend(&out, "\n  ", reports_lost,
                    " dead letter(s) or failure(s) not reported: the GPU's ring to the host was full");
  }
  return out;
}

// ---- Start. ----

absl::StatusOr<std::unique_ptr<SystemImpl>> SystemImpl::Start(std::shared_ptr<RuntimeImpl> runtime,
                                                              std::shared_ptr<const jit::Package> package,
                                                              const SystemOptions& options) {
  std::unique_ptr<SystemImpl> sys(new SystemImpl(std::move(runtime), std::move(package), options));
  RK_RETURN_IF_ERROR(sys->Init());
  return sys;
}

absl::Status SystemImpl::Init() {
  const SystemOptions& o = options_;
  const jit::HandlerModel& model = package_->model;
  if (o.threads_per_block < 64 || o.threads_per_block > 1024 || o.threads_per_block % 32 != 0) {
    return Invalid(absl::StrCat("threads_per_block is ", o.threads_per_block,
                                "; it must be a multiple of 32 between 64 and 1024"));
  }
  if (!IsPow2(o.mailbox_capacity) || o.mailbox_capacity < 2 || o.mailbox_capacity > (1u << 20)) {
    return Invalid(absl::StrCat("mailbox_capacity is ", o.mailbox_capacity, "; it must be a power of two in [2, 2^20]"));
  }
  for (uint32_t cap : {o.host_ring_capacity, o.outbound_ring_capacity}) {
    if (!IsPow2(cap) || cap < 2 || cap > (1u << 20)) {
      return Invalid(absl::StrCat("ring capacities must be powers of two in [2, 2^20]; got ", cap));
    }
  }
  if (o.max_actors == 0 || o.max_actors > (1u << 24)) return Invalid("max_actors must be in [1, 2^24]");
  if (o.batch_max == 0) return Invalid("batch_max must be at least 1");
  if (o.dead_letter_capacity == 0 || o.failure_capacity == 0 || o.host_inbox_capacity == 0) {
    return Invalid("dead_letter_capacity, failure_capacity and host_inbox_capacity must be at least 1");
  }
  for (const jit::ActorInfo& a : model.actors) {
    if (a.state_alignment > 128) {
      return Invalid(absl::StrCat("actor type '", a.name, "' needs ", a.state_alignment,
                                  "-byte alignment; RingKernel places actor state at up to 128"));
    }
  }

  // Before anything that would wait for another system's kernel (see
  // RuntimeImpl::TakeForSystem).
  {
    std::string holder;
    const std::string program =
        package_->model.sources.empty() ? std::string("a program") : package_->model.sources.front().name;
    if (!runtime_->TakeForSystem(absl::StrCat("a system (of ", program, ")"), &holder)) {
      return absl::FailedPreconditionError(absl::StrCat(
          "Start: this runtime already runs ", holder, "; one system runs at a time on a device (while its kernel "
          "runs, loading another would wait for it to exit). Stop it first, or spawn these actors in it"));
    }
    holds_runtime_ = true;
  }
  cuda::PrimaryContext& ctx = runtime_->context();
  RK_RETURN_IF_ERROR(ctx.MakeCurrent());
  const DeviceInfo& info = runtime_->info();
  const jit::ArchImage* image = jit::SelectImage(*package_, info.capability);
  if (image == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat("the program has no image for this GPU (", info.name, ", ",
                                                      info.arch(), "): it holds ", jit::DescribeImages(*package_),
                                                      "; rebuild it with --arch ", info.arch()));
  }
  RK_ASSIGN_OR_RETURN(cuda::Module module, cuda::Module::Create(image->bytes, absl::StrCat("program (", image->arch, ")")));
  module_ = std::move(module);
  RK_ASSIGN_OR_RETURN(CUfunction fn, module_->GetFunction(RK_KERNEL_ENTRY_NAME));
  RK_ASSIGN_OR_RETURN(cuda::Stream stream, cuda::Stream::Create());
  stream_ = std::move(stream);

  // The launch: the service block and as many workers as fit (or asked).
  const uint32_t pending_cap = std::min(o.max_actors, kMaxPendingPerWorker);
  cuda::CooperativeShape shape;
  shape.threads_per_block = o.threads_per_block;
  shape.dynamic_shared_bytes = AlignUp(o.scratch_bytes, 16) + 4ull * pending_cap;
  RK_ASSIGN_OR_RETURN(cuda::CooperativeCapacity capacity, cuda::CooperativeLaunch::MaxGrid(runtime_->device(), fn, shape));
  if (capacity.max_blocks < 2) {
    return absl::ResourceExhaustedError(absl::StrCat("the system needs at least two co-resident blocks (a service block "
                                                     "and a worker); ", capacity.Explain(shape)));
  }
  const uint32_t workers = o.workers != 0 ? o.workers : static_cast<uint32_t>(capacity.max_blocks - 1);
  RK_ASSIGN_OR_RETURN(cuda::CooperativeLaunch launch,
                      cuda::CooperativeLaunch::Create(runtime_->device(), fn, shape, static_cast<int>(workers + 1)));
  const uint32_t per_worker = (o.max_actors + workers - 1) / workers;
  if (per_worker > pending_cap) {
    return absl::ResourceExhaustedError(absl::StrCat(o.max_actors, " actors over ", workers, " workers is ", per_worker,
                                                     " per worker; at most ", pending_cap, " are supported"));
  }

  // Ring shapes: slots as large as the program's largest message.
  // Control records (a spawn's payload) share the host→GPU ring.
  uint64_t largest = sizeof(SpawnRecord);
  for (const jit::RecordLayout& r : model.records) {
    if (!r.is_message()) continue;
    largest = std::max(largest, r.size);
    // Message ids are small and dense (1, 2, ...): the names by id, so that
    // naming a record from the GPU is an index, not a walk of the model.
    if (r.message_id >= message_names_.size()) message_names_.resize(r.message_id + 1);
    message_names_[r.message_id] = r.name;
  }
  const uint32_t max_payload = static_cast<uint32_t>(AlignUp(largest, 8));
  const uint32_t slot_words = LlSlotWords(max_payload);
  const uint32_t in_log2 = kControlRingLog2;
  // Each worker has a ring from the host and one back, as many records as
  // asked for unless that is more than kWorkerRingBytes a ring (programs
  // with large messages), and at least 8.
  auto worker_log2 = [&](uint32_t records) {
    uint32_t log2 = Log2(records);
    while (log2 > 3 && LlRingBytes(log2, slot_words) > kWorkerRingBytes) --log2;
    return log2;
  };
  const uint32_t wout_log2 = worker_log2(o.outbound_ring_capacity);
  // The rings to the workers count units, not records (ll_ring.h): room for
  // as many records of the largest size as asked for, within the same bytes
  // a ring of fixed slots would take, and always for two of the largest.
  const uint32_t largest_units = LlRecordUnits(max_payload);
  const uint32_t units_log2 = Log2(largest_units) + (IsPowerOfTwo(largest_units) ? 0 : 1);
  uint32_t win_log2 = Log2(o.host_ring_capacity) + units_log2;
  while (win_log2 > units_log2 + 1 && LlRingBytes(win_log2, kLlUnitWords) > kWorkerRingBytes) --win_log2;
  const uint64_t worker_ring_bytes = AlignUp(
      std::max(LlRingBytes(win_log2, kLlUnitWords), LlRingBytes(wout_log2, slot_words)), 4096);

  // Device tables, one allocation.
  const uint32_t num_routes = static_cast<uint32_t>(model.routes.size());
  uint64_t offset = AlignUp(sizeof(SystemParams), 256);
  const uint64_t actors_off = offset;
  offset = AlignUp(offset + uint64_t{o.max_actors} * sizeof(ActorSlot), 256);
  const uint64_t lists_off = offset;
  offset = AlignUp(offset + uint64_t{workers} * per_worker * 4, 256);
  const uint64_t counts_off = offset;
  offset = AlignUp(offset + uint64_t{workers} * 4, 256);
  const uint64_t routes_off = offset;
  offset = AlignUp(offset + std::max<uint64_t>(4, uint64_t{num_routes} * 4), 256);
  const uint64_t shared_off = offset;
  offset = AlignUp(offset + sizeof(DeviceShared), 256);
  const uint64_t wstats_off = offset;
  offset = AlignUp(offset + uint64_t{workers} * sizeof(WorkerStats), 256);
  const uint64_t channels_off = offset;  // zero: no entries claimed, every table closed until its spawn
  if (o.channel_arena_bytes != 0) offset = AlignUp(offset + uint64_t{o.max_actors} * sizeof(ChannelTable), 256);
  RK_ASSIGN_OR_RETURN(cuda::DeviceBuffer tables, cuda::DeviceBuffer::Create(offset));
  tables_ = std::move(tables);
  device_table_bytes_ = offset;
  // Copies go through our own stream and the copy engines, never the legacy
  // stream: work there (a memset, a synchronous copy) can be held back by a
  // persistent kernel that occupies the SMs — ours or another system's.
  RK_ASSIGN_OR_RETURN(cuda::Stream copy_stream, cuda::Stream::Create());
  copy_stream_ = std::move(copy_stream);
  std::vector<uint8_t> table_image(offset, 0);
  for (uint32_t r = 0; r < num_routes; ++r) {
    const uint32_t unbound = kNoActorValue;
    std::memcpy(table_image.data() + routes_off + 4ull * r, &unbound, 4);
  }

  // Mapped memory: the rings and the control blocks.
  RK_ASSIGN_OR_RETURN(cuda::MappedBuffer in_buf, cuda::MappedBuffer::Create(LlRingBytes(in_log2, slot_words)));
  inbound_buf_ = std::move(in_buf);
  RK_ASSIGN_OR_RETURN(cuda::MappedBuffer win_buf, cuda::MappedBuffer::Create(worker_ring_bytes * workers));
  RK_ASSIGN_OR_RETURN(cuda::MappedBuffer wout_buf, cuda::MappedBuffer::Create(worker_ring_bytes * workers));
  worker_in_buf_ = std::move(win_buf);
  worker_out_buf_ = std::move(wout_buf);
  worker_in_host_ = static_cast<u8*>(worker_in_buf_->host());
  worker_out_host_ = static_cast<u8*>(worker_out_buf_->host());
  const uint64_t actor_ctl_off = AlignUp(sizeof(SystemControl), 128);
  const uint64_t worker_ctl_off = actor_ctl_off + uint64_t{o.max_actors} * sizeof(ActorControl);
  const uint64_t running_off = worker_ctl_off + uint64_t{workers} * sizeof(WorkerControl);
  const uint64_t control_bytes = running_off + uint64_t{workers} * o.threads_per_block * 8;
  RK_ASSIGN_OR_RETURN(cuda::MappedBuffer ctl_buf, cuda::MappedBuffer::Create(control_bytes));
  control_buf_ = std::move(ctl_buf);

  auto* in_host = static_cast<uint8_t*>(inbound_buf_->host());
  auto* ctl_host = static_cast<uint8_t*>(control_buf_->host());
  inbound_ = reinterpret_cast<LlRingHeader*>(in_host);
  control_ = reinterpret_cast<SystemControl*>(ctl_host);
  actor_control_ = reinterpret_cast<ActorControl*>(ctl_host + actor_ctl_off);
  worker_control_ = reinterpret_cast<WorkerControl*>(ctl_host + worker_ctl_off);
  running_ = reinterpret_cast<u64*>(ctl_host + running_off);
  inbound_->slot_words = slot_words;
  inbound_->max_payload = max_payload;
  inbound_->capacity_log2 = in_log2;
  for (uint32_t w = 0; w < workers; ++w) {
    LlRingHeader* in = WorkerRing(worker_in_host_, worker_ring_bytes, w);
    in->slot_words = kLlUnitWords;  // units (variable-length records)
    in->max_payload = max_payload;
    in->capacity_log2 = win_log2;
    LlRingHeader* out = WorkerRing(worker_out_host_, worker_ring_bytes, w);
    out->slot_words = slot_words;
    out->max_payload = max_payload;
    out->capacity_log2 = wout_log2;
  }
  worker_producers_ = std::make_unique<RingProducer[]>(workers);
  admission_.Init(workers);
  // A ring that one thread alone writes is that thread's (ring_owner.h),
  // where the process barrier is available and RINGKERNEL_SHARED_RINGS is
  // not set (then every Send claims its record in the ring, as with several
  // writers: for comparisons).
  ring_owners_.Init(workers, admission_.asymmetric() && !EnvFlag("RINGKERNEL_SHARED_RINGS"));
  out_heads_ = std::make_unique<std::atomic<u64>[]>(workers);
  asks_waiting_ = std::make_unique<std::atomic<uint32_t>[]>(workers);
  for (uint32_t w = 0; w < workers; ++w) {
    out_heads_[w].store(0, std::memory_order_relaxed);
    asks_waiting_[w].store(0, std::memory_order_relaxed);
  }

  const CUdeviceptr base = tables_->get();
  const CUdeviceptr in_dev = inbound_buf_->device();
  const CUdeviceptr ctl_dev = control_buf_->device();
  SystemParams& p = params_;
  p.actors = reinterpret_cast<ActorSlot*>(base + actors_off);
  p.worker_lists = reinterpret_cast<u32*>(base + lists_off);
  p.worker_counts = reinterpret_cast<u32*>(base + counts_off);
  p.routes = reinterpret_cast<u32*>(base + routes_off);
  p.shared = reinterpret_cast<DeviceShared*>(base + shared_off);
  p.worker_stats = reinterpret_cast<WorkerStats*>(base + wstats_off);
  if (o.channel_arena_bytes != 0) {
    // Zeroed here, before the launch: a channel's slots need no clearing
    // when a sender opens it (zero never matches an LL flag).
    RK_ASSIGN_OR_RETURN(cuda::DeviceBuffer channels,
                        cuda::DeviceBuffer::Create(o.channel_arena_bytes, {.zero = true}));
    channel_arena_ = std::move(channels);
    p.channel_tables = reinterpret_cast<ChannelTable*>(base + channels_off);
    p.channel_arena = reinterpret_cast<u8*>(channel_arena_->get());
    p.channel_arena_bytes = o.channel_arena_bytes;
  }
  p.inbound = reinterpret_cast<LlRingHeader*>(in_dev);
  p.inbound_slots = reinterpret_cast<u64*>(in_dev + kLlSlotsOffset);
  p.control = reinterpret_cast<SystemControl*>(ctl_dev);
  p.actor_control = reinterpret_cast<ActorControl*>(ctl_dev + actor_ctl_off);
  p.worker_control = reinterpret_cast<WorkerControl*>(ctl_dev + worker_ctl_off);
  p.running = reinterpret_cast<u64*>(ctl_dev + running_off);
  p.worker_in = reinterpret_cast<u8*>(worker_in_buf_->device());
  p.worker_out = reinterpret_cast<u8*>(worker_out_buf_->device());
  p.worker_ring_bytes = worker_ring_bytes;
  p.inbound_log2 = in_log2;
  p.slot_words = slot_words;
  p.worker_in_log2 = win_log2;
  p.worker_out_log2 = wout_log2;
  p.max_payload = max_payload;
  p.max_actors = o.max_actors;
  p.num_workers = workers;
  p.max_actors_per_worker = per_worker;
  p.num_routes = num_routes;
  p.threads_per_block = o.threads_per_block;
  p.scratch_bytes = o.scratch_bytes;
  p.batch_max = o.batch_max;
  p.idle_backoff_max_ns = static_cast<u32>(std::min<int64_t>(absl::ToInt64Nanoseconds(o.idle_backoff), 1 << 20));
  p.idle_spin_ns = static_cast<u64>(std::max<int64_t>(absl::ToInt64Nanoseconds(o.idle_spin), 0));
  p.flush_interval_ns = static_cast<u64>(std::max<int64_t>(absl::ToInt64Nanoseconds(o.flush_interval), 10000));
  p.ingress_full_timeout_ns = static_cast<u64>(std::max<int64_t>(absl::ToInt64Nanoseconds(o.ingress_full_timeout), 0));
  p.track_running = o.track_running ? 1 : 0;
  // For tools that do not follow the tensor memory accelerator's copies
  // (compute-sanitizer's racecheck and initcheck): the senders copy.
  p.no_bulk_copy = EnvFlag("RINGKERNEL_NO_BULK_COPY") ? 1 : 0;
  RK_RETURN_IF_ERROR(InitTrace());
  std::memcpy(table_image.data(), &p, sizeof(p));
  RK_RETURN_IF_ERROR(tables_->UploadAsync(*copy_stream_, table_image.data(), table_image.size(), 0));
  RK_RETURN_IF_ERROR(copy_stream_->Synchronize());

  // Host-side lookup tables for Send.
  actor_types_ = std::make_unique<std::atomic<uint32_t>[]>(o.max_actors);
  actor_place_ = std::make_unique<std::atomic<uint64_t>[]>(o.max_actors);
  message_stride_ = static_cast<uint32_t>(model.message_count() + 1);
  handles_.assign(model.actors.size() * message_stride_, 0);
  for (const jit::ActorInfo& a : model.actors) {
    for (const jit::HandlerInfo& h : a.handlers) handles_[a.type_id * message_stride_ + h.message_id] = 1;
  }
  {
    absl::MutexLock lock(&mu_);
    worker_load_.assign(workers, 0);
  }

  // The arena's first chunk, before the launch: tools that check the
  // kernel's accesses (compute-sanitizer) know the allocations made by then.
  if (o.arena_bytes != 0) {
    RK_ASSIGN_OR_RETURN(cuda::DeviceBuffer chunk, cuda::DeviceBuffer::Create(o.arena_bytes));
    arena_.push_back(std::move(chunk));
    arena_used_ = 0;
  }

  // The one launch: the parameters go by value (the kernel's
  // __grid_constant__ argument).
  void* args[] = {&params_};
  RK_RETURN_IF_ERROR(launch.Launch(*stream_, args));
  launched_ = true;
  phase_ = KernelPhase::kStarting;
  RK_RETURN_IF_ERROR(WaitFor(&control_->state.value, static_cast<uint64_t>(KernelState::kRunning), o.start_timeout,
                             "the kernel to start"));
  phase_ = KernelPhase::kRunning;
  {
    absl::MutexLock lock(&out_mu_);
    if (out_buffer_.size() < params_.max_payload + 8) out_buffer_.resize(params_.max_payload + 8);
    out_buffer_bytes_ = out_buffer_.data();
  }
  admission_.Open();
  reader_ = std::thread([this] { ReaderLoop(); });
  return absl::OkStatus();
}

RK_ASK_ANSWER_CODE bool SystemImpl::RingBackHasRecord(uint32_t w) const {
  const u32 log2 = params_.worker_out_log2;
  const u64 head = out_heads_[w].load(std::memory_order_relaxed);
  const u64* slot = LlSlot(RingSlots(WorkerOut(w)), params_.slot_words, log2, head);
  return LlWordFlag(LoadRelaxedSys(slot)) == LlFlag(head, log2);
}

void SystemImpl::ReaderLoop() {
  auto sleep = kReaderBusySleep;
  while (!reader_stop_.load(std::memory_order_acquire)) {
    bool found = false;
    for (uint32_t w = 0; w < params_.num_workers; ++w) {
      // A look at the ring's next slot without the lock: most rings are
      // empty most of the time, and out_mu_ is the lock a waiting Ask polls.
      // A ring an Ask is polling is that Ask's to drain: the reader would
      // only contend with it for out_mu_ (an Ask polls it continuously).
      if (asks_waiting_[w].load(std::memory_order_relaxed) != 0) continue;
      if (!RingBackHasRecord(w)) continue;
      absl::MutexLock lock(&out_mu_);
      found = DrainRingLocked(w) != 0 || found;
    }
    if (tracing_.load(std::memory_order_relaxed) && !trace_drain_paused_.load(std::memory_order_relaxed)) {
      absl::MutexLock lock(&trace_mu_);
      DrainTraceLocked();
    }
    sleep = found ? kReaderBusySleep : std::min(sleep * 2, kReaderIdleSleep);
    std::this_thread::sleep_for(sleep);
  }
}

void SystemImpl::StopReader() {
  if (!reader_.joinable()) return;
  reader_stop_.store(true, std::memory_order_release);
  reader_.join();
}

void SystemImpl::ReturnRuntime() {
  if (holds_runtime_ && !runtime_returned_.exchange(true)) runtime_->ReturnFromSystem();
}

SystemImpl::~SystemImpl() {
  if (!launched_) {
    ReturnRuntime();
    return;
  }
  auto still_running = [this] {
    const KernelPhase ph = phase_.load();
    return ph == KernelPhase::kRunning || ph == KernelPhase::kDraining || ph == KernelPhase::kStarting;
  };
  if (still_running()) (void)Stop(absl::Seconds(10));
  // Stop ends the reader once the kernel has exited; on its other paths (a
  // fault, a stuck kernel) the reader ends here, before anything it reads
  // is released.
  StopReader();
  // A Stop that returned without ending the kernel (a Send it waited for
  // never finished): nothing may be freed under a running kernel.
  if (still_running()) phase_ = KernelPhase::kAbandoned;
  // A kernel that never returned keeps the device: the runtime stays taken
  // (a later Start is refused instead of waiting for it forever).
  if (phase_.load() != KernelPhase::kAbandoned) ReturnRuntime();
  if (phase_.load() == KernelPhase::kAbandoned) {
    // The kernel never returned, and nothing in CUDA ends a running kernel
    // short of the process exiting: freeing its memory, unloading its module
    // or resetting the context would each wait for it forever. So hand every
    // handle to an object that is never destroyed, and tell the runtime not
    // to release the context either; the driver reclaims it all when the
    // process ends.
    struct Abandoned {
      std::optional<cuda::Module> module;
      std::optional<cuda::Stream> stream, copy_stream;
      std::optional<cuda::DeviceBuffer> tables;
      std::vector<cuda::DeviceBuffer> arena;
      std::optional<cuda::DeviceBuffer> channel_arena;
      std::optional<cuda::MappedBuffer> inbound, control, worker_in, worker_out;
    };
    new Abandoned{std::move(module_),        std::move(stream_),        std::move(copy_stream_),
                  std::move(tables_),        std::move(arena_),         std::move(channel_arena_),
                  std::move(inbound_buf_),   std::move(control_buf_),   std::move(worker_in_buf_),
                  std::move(worker_out_buf_)};
    runtime_->MarkPoisoned();
  }
}

// ---- Rings and control. ----

bool SystemImpl::TryWrite(LlRingHeader* ring, u32 log2, RingProducer& p, const LlHeader& h, const void* payload) {
  u64 pos;
  if (!LlTryReserve(&p.tail, &p.cached_head, &ring->head.value, log2, &pos)) return false;
  LlWriteRecord(LlSlot(RingSlots(ring), params_.slot_words, log2, pos), LlFlag(pos, log2), h, payload);
  return true;
}

bool SystemImpl::TryWriteUnits(uint32_t w, RingOwners::Mode* mode, uint32_t me, const LlHeader& h,
                               const void* payload) {
  const RingRef ring = WorkerRingRef(w);
  auto barrier = [this] { admission_.Barrier(); };
  auto open = [this] { return admission_.open(); };
  if (*mode == RingOwners::Mode::kOwned && stop_owned_armed_.load(std::memory_order_relaxed) &&
      stop_owned_armed_.exchange(false)) {
    // Fault injection (system_access.h): an owner stopped mid-record.
    std::function<void()> stop;
    {
      absl::MutexLock lock(&hook_mu_);
      stop = std::move(stop_owned_);
    }
    auto call = [](void* f) { (*static_cast<std::function<void()>*>(f))(); };
    return ring_owners_.TryWrite(w, me, mode, ring, h, payload, barrier, open, stop ? +call : nullptr, &stop);
  }
  if (!pause_mid_record_armed_.load(std::memory_order_relaxed) || !pause_mid_record_armed_.exchange(false)) {
    return ring_owners_.TryWrite(w, me, mode, ring, h, payload, barrier, open);
  }
  // Fault injection (system_access.h): a writer preempted mid-record, in a
  // record claimed in order, as a shared ring's writers write it.
  if (*mode == RingOwners::Mode::kOwned) {
    ring_owners_.GiveUp(w, me, ring);
    *mode = RingOwners::Mode::kShared;
  }
  u64 pos;
  if (!LlTryClaimUnits(ring.slots, ring.log2, ring.max_payload, ring.hint, ring.cached_head, ring.head, h.size, &pos,
                       ring_owners_.Floored(w), ring_owners_.Floor(w))) {
    pause_mid_record_armed_.store(true);  // for the next attempt
    return false;
  }
  u64* slot = LlSlot(ring.slots, kLlUnitWords, ring.log2, pos);
  std::function<void()> hook;
  int first = -1;
  {
    absl::MutexLock lock(&hook_mu_);
    hook = std::move(pause_mid_record_);
    first = pause_mid_record_words_;
  }
  std::vector<u64> words(kLlHeaderWords + (h.size + 3) / 4);
  LlWriteRecord(words.data(), LlFlag(pos, ring.log2), h, payload);
  const size_t split = first < 0 ? words.size() / 2 : std::min<size_t>(first, words.size());
  // Word 1 (the size) is the claim, already there; the rest in order.
  for (size_t i = 0; i < split; ++i) StoreRelaxedSys(slot + i, words[i]);
  if (hook) hook();
  for (size_t i = split; i < words.size(); ++i) StoreRelaxedSys(slot + i, words[i]);
  return true;
}

u64 SystemImpl::ClaimedEnd(uint32_t w) const {
  // From the producers' hint, or the consumer's head if the hint is behind.
  const u64 hint = __atomic_load_n(&worker_producers_[w].tail, __ATOMIC_ACQUIRE);
  const u64 head = LoadMapped(&WorkerIn(w)->head.value);
  const u64 from = static_cast<int64_t>(hint - head) < 0 ? head : hint;
  return LlClaimedEnd(RingSlots(WorkerIn(w)), params_.worker_in_log2, params_.max_payload, from);
}

uint64_t SystemImpl::HostRecordsInFlight() const {
  // Units claimed and not yet released: a record (or skip) is in flight
  // while any of its units is. Only whether it is zero is used while the
  // kernel runs; the records among them are counted after it exits.
  uint64_t n = 0;
  for (uint32_t w = 0; w < params_.num_workers; ++w) n += ClaimedEnd(w) - LoadMapped(&WorkerIn(w)->head.value);
  return n;
}

uint64_t SystemImpl::HostMessagesNeverTaken() const {
  // After the kernel exited: every record between a ring's released head and
  // the end of the claims was written whole (Stop waited for every Send the
  // gate admitted before it looked, and admits no more). Each one's size
  // word says how far it goes; skips, and records the worker took past one
  // it was waiting for (stamped kLlTakenType), are not messages left.
  const u32 log2 = params_.worker_in_log2;
  uint64_t n = 0;
  for (uint32_t w = 0; w < params_.num_workers; ++w) {
    LlRingHeader* ring = WorkerIn(w);
    const u64 end = ClaimedEnd(w);
    for (u64 pos = LoadMapped(&ring->head.value); pos != end;) {
      const u64* at = LlSlot(RingSlots(ring), kLlUnitWords, log2, pos);
      const u32 type = LlData(LoadRelaxedSys(at));
      const u32 size = LlData(LoadRelaxedSys(at + 1));
      if (type != kLlSkipType && type != kLlTakenType) ++n;
      pos += LlClaimExtent(size, pos, log2, params_.max_payload);
    }
  }
  return n;
}

absl::StatusOr<uint64_t> SystemImpl::SendControl(ControlOp op, uint32_t a0, uint32_t a1, const void* payload,
                                                 uint32_t size) {
  // Control records are written in sequence order, so that the GPU's
  // acknowledgement (the last sequence applied) never runs ahead of a record.
  absl::MutexLock lock(&control_mu_);
  const uint64_t seq = control_seq_.fetch_add(1) + 1;
  LlHeader h{};
  h.type = kControlTypeBase + static_cast<u32>(op);
  h.size = size;
  h.actor = a0;
  h.aux = a1;
  h.hlc = seq;
  const auto deadline = Clock::now() + std::chrono::seconds(5);
  uint32_t spins = 0;
  while (!TryWriteControl(h, payload)) {
    if (Clock::now() > deadline) {
      return absl::DeadlineExceededError("the host→GPU ring stayed full for 5 s: the kernel is not taking input");
    }
    if ((++spins & 1023) == 0) {
      bool finished = false;
      RK_RETURN_IF_ERROR(CheckKernel(&finished));
      if (finished) return absl::FailedPreconditionError("the kernel has exited");
    }
    std::this_thread::yield();
  }
  return seq;
}

absl::Status SystemImpl::WaitFor(const u64* index, uint64_t target, absl::Duration timeout, const char* what) {
  if (time_out_next_control_wait_.exchange(false)) {
    return absl::DeadlineExceededError(absl::StrCat("timed out (injected) waiting for ", what));
  }
  const auto deadline = Clock::now() + absl::ToChronoNanoseconds(timeout);
  uint32_t spins = 0;
  while (LoadMapped(index) < target) {
    if ((++spins & 255) == 0) {
      bool finished = false;
      RK_RETURN_IF_ERROR(CheckKernel(&finished));
      if (finished && LoadMapped(index) < target) {
        return absl::FailedPreconditionError(absl::StrCat("the kernel exited while waiting for ", what));
      }
      if (Clock::now() > deadline) {
        return absl::DeadlineExceededError(
            absl::StrCat("timed out after ", absl::FormatDuration(timeout), " waiting for ", what,
                         RunningActors(false).empty() ? "" : absl::StrCat("; running: ", RunningActors(false))));
      }
      if (spins > 100000) std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
    CpuRelax();
  }
  return absl::OkStatus();
}

std::string SystemImpl::ActorName(uint32_t index) const {
  if (index == kHostActorValue) return "host";
  absl::MutexLock lock(&mu_);
  if (index < actors_.size()) return actors_[index].name;
  return absl::StrCat("#", index);
}

std::string SystemImpl::MessageName(uint32_t type_id) const {
  if (type_id != 0 && type_id < message_names_.size() && !message_names_[type_id].empty()) {
    return message_names_[type_id];
  }
  return absl::StrCat("message #", type_id);
}

// What a fault or a stuck Stop says of the handlers that were running when
// the system does not record them.
constexpr char kRunningNotRecorded[] =
    "which handlers were running is not recorded (SystemOptions::track_running is off)";

std::string SystemImpl::RunningActors(bool only_unexited) const {
  std::vector<std::string> parts;
  const uint32_t threads = params_.threads_per_block;
  for (uint32_t w = 0; w < params_.num_workers; ++w) {
    if (only_unexited && LoadMapped(&worker_control_[w].exited) != 0) continue;
    for (uint32_t t = 0; t < threads; ++t) {
      const u64 e = LoadMapped(&running_[uint64_t{w} * threads + t]);
      if (e == 0) continue;
      const uint32_t actor = static_cast<uint32_t>(e & 0xFFFFFFFFu) - 1;
      const uint32_t type = static_cast<uint32_t>(e >> 32);
      std::string actor_type;
      {
        absl::MutexLock lock(&mu_);
        if (actor < actors_.size()) actor_type = package_->model.actors[actors_[actor].type_id].name;
      }
      parts.push_back(absl::StrCat("actor '", ActorName(actor), "' (", actor_type, ") handling '", MessageName(type),
                                   "' on worker ", w));
    }
  }
  return absl::StrJoin(parts, "; ");
}

absl::Status SystemImpl::CheckKernel(bool* finished) {
  *finished = false;
  {
    absl::MutexLock lock(&state_mu_);
    if (!fault_.ok()) return fault_;
  }
  if (!stream_.has_value()) return absl::OkStatus();
  if (const u64 bad = LoadMapped(&control_->ingress_error.value); bad != 0) {
    // The GPU stopped reading host input: a protocol violation, not a user
    // error; nothing sent after it can be delivered.
    absl::Status fault = absl::InternalError(absl::StrCat(
        "the GPU's ingress found a corrupt record at position ", bad - 1, " of the host→GPU ring and stopped"));
    absl::MutexLock lock(&state_mu_);
    if (fault_.ok()) fault_ = fault;
    admission_.Close();
    return fault;
  }
  absl::StatusOr<bool> done = stream_->Query();
  if (done.ok()) {
    *finished = *done;
    return absl::OkStatus();
  }
  const std::string running = RunningActors(false);
  absl::Status fault(absl::StatusCode::kAborted,
                     absl::StrCat("the GPU kernel faulted: ", done.status().message(), "; ",
                                  !options_.track_running ? kRunningNotRecorded
                                  : running.empty()       ? "no handler was running (the fault is in the runtime)"
                                                          : absl::StrCat("running at the time: ", running)));
  {
    absl::MutexLock lock(&state_mu_);
    if (fault_.ok()) fault_ = fault;
  }
  phase_ = KernelPhase::kFaulted;
  admission_.Close();
  *finished = true;
  return fault;
}

void SystemImpl::DrainLocked() {
  for (uint32_t w = 0; w < params_.num_workers; ++w) DrainRingLocked(w);
}

RK_ASK_ANSWER_CODE uint64_t SystemImpl::DrainRingLocked(uint32_t worker) {
  LlRingHeader* ring = WorkerOut(worker);
  const u32 log2 = params_.worker_out_log2;
  const u64* slots = RingSlots(ring);
  u64 head = out_heads_[worker].load(std::memory_order_relaxed);
  if (out_buffer_.size() < params_.max_payload + 8) out_buffer_.resize(params_.max_payload + 8);
  uint64_t consumed = 0;
  for (;;) {
    const u64* slot = LlSlot(slots, params_.slot_words, log2, head);
    LlHeader h{};
    const LlReadResult r = LlTryReadRecord(slot, LlFlag(head, log2), params_.max_payload, &h, out_buffer_.data());
    if (r == LlReadResult::kNotReady) break;
    if (r == LlReadResult::kCorrupt) {
      absl::MutexLock lock(&state_mu_);
      if (fault_.ok()) {
        fault_ = absl::DataLossError(absl::StrCat("corrupt record at position ", head, " of the ring back from worker ", worker));
      }
      break;
    }
    // Left in the ring (read again later): the ring fills, and the worker's
    // sends to the host get kFull — their back-pressure.
    if (HoldBackLocked(h)) break;
    LlStampUnusedWords(const_cast<u64*>(slot), params_.slot_words, LlFlag(head, log2), h.size);
    ++head;
    ++consumed;
    SortLocked(h);
  }
  if (consumed != 0) {
    out_heads_[worker].store(head, std::memory_order_relaxed);
    LlRelease(ring, head);
    received_by_host_ += consumed;
  }
  return consumed;
}

RK_ASK_ANSWER_CODE bool SystemImpl::HoldBackLocked(const LlHeader& h) const {
  if (drain_all_ || inbox_.size() < options_.host_inbox_capacity) return false;
  if (static_cast<OutboundKind>(h.aux & 0xFF) != OutboundKind::kMessage) return false;
  // A reply that a waiting Ask takes never enters the inbox.
  if (h.correlation != 0) {
    if (ask_slots_.Waiting(h.correlation)) return false;
  }
  return true;
}

RK_ASK_ANSWER_CODE void SystemImpl::SortLocked(const LlHeader& h) {
  uint64_t seen = host_hlc_.load(std::memory_order_relaxed);
  while (h.hlc > seen && !host_hlc_.compare_exchange_weak(seen, h.hlc)) {
  }
  const auto kind = static_cast<OutboundKind>(h.aux & 0xFF);
  const auto reason = static_cast<DeadLetterReason>((h.aux >> 8) & 0xFF);
  if (kind == OutboundKind::kMessage) {
    auto message = [&] {
      Message m;
      m.from = ActorId{h.actor};
      m.type_id = h.type;
      m.type = MessageName(h.type);
      m.bytes.assign(out_buffer_.data(), h.size);
      m.correlation = h.correlation;
      m.hlc = h.hlc;
      return m;
    };
    if (h.correlation != 0) {
      // A reply to an Ask (only Asks carry a correlation to the GPU): to the
      // Ask if it still waits, else dropped — a late reply to an Ask that
      // timed out, or a second reply, must not surface in Receive. A typed
      // Ask that named the type it expects gets a reply of that type and
      // size copied into its result directly (no Message is built).
      const bool taken = ask_slots_.FillWith(h.correlation, [&](const AskSlotTable::Direct& d) {
        if (d.dest != nullptr && d.type == h.type && d.size == h.size) {
          std::memcpy(d.dest, out_buffer_.data(), h.size);
          return AskAnswer{absl::OkStatus(), Message{}, /*copied=*/true};
        }
        return AskAnswer{absl::OkStatus(), message(), /*copied=*/false};
      });
      if (!taken) ++late_replies_;
      return;
    }
    inbox_.push_back(message());
  } else if (kind == OutboundKind::kDeadLetter) {
    DeadLetter d;
    d.to = ActorId{h.actor};
    d.from = ActorId{h.peer};
    d.to_name = ActorName(h.actor);
    d.type = MessageName(h.type);
    d.reason = reason;
    d.bytes.assign(out_buffer_.data(), h.size);
    d.correlation = h.correlation;
    if (h.correlation != 0 && d.from.is_host()) {
      auto error = [&] {
        return absl::FailedPreconditionError(absl::StrCat("the '", d.type, "' sent to actor '", d.to_name,
                                                          "' was dead-lettered: ", DeadLetterReasonName(reason)));
      };
      if (ask_slots_.Waiting(h.correlation) && ask_slots_.Fill(h.correlation, AskAnswer{error(), Message{}})) return;
    }
    // Bounded: past the capacity only counted, the first ones kept.
    if (dead_letters_.size() < options_.dead_letter_capacity) {
      dead_letters_.push_back(std::move(d));
    } else {
      ++dead_letters_dropped_;
    }
  } else if (kind == OutboundKind::kActorFailed) {
    if (failures_.size() >= options_.failure_capacity) {
      ++failures_dropped_;
      return;
    }
    ActorFailure f;
    f.actor = ActorId{h.actor};
    f.name = ActorName(h.actor);
    f.code = static_cast<uint32_t>(h.correlation);
    f.sender = ActorId{h.peer};
    failures_.push_back(f);
    failures_sorted_.fetch_add(1, std::memory_order_release);
  }
}

// ---- Actors and routes. ----

absl::StatusOr<uint64_t> SystemImpl::ArenaAlloc(uint64_t bytes, uint64_t align) {
  if (arena_.empty() || AlignUp(arena_used_, align) + bytes > arena_.back().size()) {
    RK_RETURN_IF_ERROR(runtime_->context().MakeCurrent());
    // Not cleared: the service warp prepares each actor's memory at spawn.
    RK_ASSIGN_OR_RETURN(cuda::DeviceBuffer chunk,
                        cuda::DeviceBuffer::Create(std::max(kArenaChunkBytes, bytes + align)));
    arena_.push_back(std::move(chunk));
    arena_used_ = 0;
  }
  const uint64_t at = AlignUp(arena_used_, align);
  arena_used_ = at + bytes;
  return arena_.back().get() + at;
}

absl::Status SystemImpl::NotAccepting(const char* call) {
  absl::MutexLock lock(&state_mu_);
  if (!fault_.ok()) return fault_;
  // Running with the gate closed and no fault: Stop has begun.
  const KernelPhase ph = phase_.load();
  return absl::FailedPreconditionError(absl::StrCat(
      call, ": the system is ", ph == KernelPhase::kRunning ? "stopping" : std::string(KernelPhaseName(ph)),
      " and accepts nothing"));
}

absl::StatusOr<ActorId> SystemImpl::Spawn(std::string_view type, std::string_view name) {
  if (!tracing_.load(std::memory_order_relaxed)) return SpawnUntraced(type, name);
  const int64_t begin = HostNowNs();
  absl::StatusOr<ActorId> id = SpawnUntraced(type, name);
  RecordHostCall("Spawn", begin, id.ok() ? id->value : kNoActorValue, 0, 0, id.ok());
  return id;
}

absl::StatusOr<ActorId> SystemImpl::SpawnUntraced(std::string_view type, std::string_view name) {
  if (!admission_.open()) return NotAccepting("Spawn");
  const jit::ActorInfo* actor = package_->model.FindActor(type);
  if (actor == nullptr) {
    std::vector<std::string> names;
    for (const auto& a : package_->model.actors) names.push_back(a.name);
    return absl::NotFoundError(absl::StrCat("Spawn: the program has no actor type '", std::string(type),
                                            "'; it has ", absl::StrJoin(names, ", ")));
  }
  if (name.empty() || name == "host") {
    return Invalid(absl::StrCat("Spawn: '", std::string(name), "' cannot name an actor"));
  }
  // One spawn at a time, held across the wait for the GPU (see the lock
  // order in system_impl.h): mu_ is taken only to read and to record, so
  // that a fault or a timeout found while waiting can name actors.
  absl::MutexLock spawn_lock(&spawn_mu_);
  const MailboxShape shape = MailboxShapeFor(static_cast<u32>(package_->model.MaxHandledSize(*actor)));
  const uint32_t log2 = Log2(options_.mailbox_capacity);
  const uint64_t box_bytes = MailboxBytes(log2, shape.slot_bytes);
  const uint64_t state_bytes = AlignUp(std::max<uint64_t>(actor->state_size, 1), 16);
  uint32_t index = 0, worker = 0, lane = 0;
  uint64_t box = 0, state = 0;
  {
    absl::MutexLock lock(&mu_);
    if (by_name_.contains(std::string(name))) {
      return absl::AlreadyExistsError(absl::StrCat("Spawn: an actor named '", std::string(name), "' already exists"));
    }
    index = static_cast<uint32_t>(actors_.size());
    if (index >= params_.max_actors) {
      return absl::ResourceExhaustedError(
          absl::StrCat("Spawn: the system holds ", params_.max_actors, " actors (SystemOptions::max_actors)"));
    }
    worker = static_cast<uint32_t>(std::min_element(worker_load_.begin(), worker_load_.end()) - worker_load_.begin());
    lane = worker_load_[worker];
    RK_ASSIGN_OR_RETURN(box, ArenaAlloc(box_bytes, kLineBytes));
    RK_ASSIGN_OR_RETURN(state, ArenaAlloc(state_bytes, std::max<uint64_t>(16, actor->state_alignment)));
    mailbox_bytes_ += box_bytes;
    state_bytes_ += state_bytes;
  }
  SpawnRecord rec{};
  rec.actor = index;
  rec.type = actor->type_id;
  rec.worker = worker;
  rec.shape = ActorShape(log2, shape.inline_words);
  rec.mailbox = box;
  rec.state = state;
  rec.slot_bytes = shape.slot_bytes;
  rec.state_bytes = static_cast<u32>(state_bytes);
  rec.plain_bytes = shape.plain_bytes;
  rec.lane = lane;
  RK_ASSIGN_OR_RETURN(uint64_t seq, SendControl(ControlOp::kSpawn, index, 0, &rec, sizeof(rec)));
  // From here on the record is in the ring and the GPU may apply it at any
  // time, whatever the wait below says: its index and lane are used up
  // either way, so that no later spawn can put a second actor (and a second
  // owner) there.
  const absl::Status applied = WaitFor(&control_->ack.value, seq, kControlTimeout, "a spawn to be applied");
  absl::MutexLock lock(&mu_);
  ++worker_load_[worker];
  if (!applied.ok()) {
    // Not named and never handed out: the host does not send to it (Send
    // finds no type for the index), and a later Spawn may take the name.
    actors_.push_back(ActorRecord{absl::StrCat("(spawn of '", std::string(name), "' timed out)"), actor->type_id, worker});
    return applied;
  }
  actors_.push_back(ActorRecord{std::string(name), actor->type_id, worker});
  by_name_[std::string(name)] = index;
  actor_types_[index].store(actor->type_id + 1, std::memory_order_relaxed);
  actor_place_[index].store(uint64_t{worker} | uint64_t{lane} << 32, std::memory_order_relaxed);
  actor_count_.store(index + 1, std::memory_order_release);
  return ActorId{index};
}

absl::StatusOr<ActorId> SystemImpl::Lookup(std::string_view name) const {
  absl::MutexLock lock(&mu_);
  auto it = by_name_.find(std::string(name));
  if (it == by_name_.end()) return absl::NotFoundError(absl::StrCat("no actor named '", std::string(name), "'"));
  return ActorId{it->second};
}

std::optional<std::string> SystemImpl::NameOf(ActorId id) const {
  if (id.is_host()) return std::string("host");
  absl::MutexLock lock(&mu_);
  if (id.value < actors_.size()) return actors_[id.value].name;
  return std::nullopt;
}

absl::Status SystemImpl::Bind(std::string_view route, uint32_t actor) {
  if (!admission_.open()) return NotAccepting("Bind");
  const jit::RouteInfo* r = package_->model.FindRoute(route);
  if (r == nullptr) {
    std::vector<std::string> names;
    for (const auto& x : package_->model.routes) names.push_back(x.name);
    return absl::NotFoundError(absl::StrCat("the program uses no route '", std::string(route), "'; it uses ",
                                            names.empty() ? "none" : absl::StrJoin(names, ", ")));
  }
  if (actor != kNoActorValue && actor != kHostActorValue &&
      (actor >= actor_count_.load() || actor_types_[actor].load(std::memory_order_relaxed) == 0)) {
    return absl::NotFoundError(absl::StrCat("Bind: no actor with id ", actor));
  }
  RK_ASSIGN_OR_RETURN(uint64_t seq, SendControl(ControlOp::kBind, r->id, actor, nullptr, 0));
  return WaitFor(&control_->ack.value, seq, kControlTimeout, "a route binding to be applied");
}

// ---- Messages. ----

absl::StatusOr<uint32_t> SystemImpl::MessageId(std::string_view type, size_t size) const {
  const jit::RecordLayout* r = package_->model.FindRecord(type);
  if (r == nullptr || !r->is_message()) {
    return absl::NotFoundError(absl::StrCat("the program has no message type '", std::string(type), "'"));
  }
  if (size != r->size) {
    return Invalid(absl::StrCat("'", r->name, "' is ", r->size, " bytes in the program; got ", size));
  }
  return r->message_id;
}

absl::Status SystemImpl::ResolveTypeSlot(uint32_t slot, const char* name, const char* layout, size_t size,
                                         size_t align, uint32_t* id) {
  // Called once System::ResolveType found the slot empty (another thread may
  // have filled it since: resolving again stores the same id).
  // The layout first: where it differs, the first field that does says more
  // than a size that does.
  if (layout != nullptr) {
    const jit::RecordLayout* r = package_->model.FindRecord(name);
    if (r != nullptr && r->is_message()) RK_RETURN_IF_ERROR(jit::CheckHostLayout(package_->model, *r, layout));
  }
  RK_ASSIGN_OR_RETURN(uint32_t type_id, MessageId(name, size));
  const jit::RecordLayout* r = package_->model.FindMessage(type_id);
  if (align != r->alignment) {
    return Invalid(absl::StrCat("host type for '", r->name, "' is aligned to ", align, " bytes; the program's to ",
                                r->alignment));
  }
  if (slot < type_cache_.size()) type_cache_[slot].store(uint64_t{type_id} + 1, std::memory_order_release);
  *id = type_id;
  return absl::OkStatus();
}

// The header of a host message to actor `to` at `place` (its worker and
// its position in the worker's list).
ABSL_ATTRIBUTE_ALWAYS_INLINE inline LlHeader SystemImpl::HostRecordHeader(ActorId to, uint32_t type_id, size_t size,
                                                                           uint64_t correlation, uint64_t place) const {
  LlHeader h{};
  h.type = type_id;
  h.size = static_cast<u32>(size);
  h.actor = to.value;
  h.peer = static_cast<u32>(place >> 32);  // the actor's position in its worker's list
  h.correlation = correlation;
  h.hlc = host_hlc_.load(std::memory_order_relaxed);
  return h;
}

// The same checks and steps as SendUntraced's for a ring the caller owns,
// in the same order (the owner's look before the gate, ring_owner.h), with
// the calling thread's gate slot looked up once and everything it calls
// compiled into its frame (flatten: no call but this one on a Send's path).
__attribute__((flatten)) RK_ASK_SEND_CODE bool SystemImpl::TrySendOwned(ActorId to, uint32_t type_id,
                                                                       const void* bytes, size_t size,
                                                                       uint64_t correlation) {
  if (to.value >= actor_count_.load(std::memory_order_acquire)) return false;
  const uint32_t type_plus_one = actor_types_[to.value].load(std::memory_order_relaxed);
  if (type_plus_one == 0 || handles_[(type_plus_one - 1) * message_stride_ + type_id] == 0) return false;
  if (pause_next_send_armed_.load(std::memory_order_relaxed) || pause_mid_record_armed_.load(std::memory_order_relaxed) ||
      stop_owned_armed_.load(std::memory_order_relaxed)) {
    return false;
  }
  const uint64_t place = actor_place_[to.value].load(std::memory_order_relaxed);
  const uint32_t worker = static_cast<uint32_t>(place);
  WriterGate::Slot* const slot = admission_.CallerSlot();
  const uint32_t me = admission_.TagOf(slot);
  if (me == 0 || !ring_owners_.Owns(worker, me)) return false;
  if (!admission_.TryEnter(slot, worker)) return false;
  const LlHeader h = HostRecordHeader(to, type_id, size, correlation, place);
  const RingOwners::Wrote wrote = ring_owners_.TryWriteOwned(worker, me, WorkerRingRef(worker), h, bytes);
  // As TryWrite: a ring taken meanwhile, or a gate closing, and the record
  // is fenced before the writer leaves (kFull and kLost fenced already).
  if (wrote == RingOwners::Wrote::kWritten && (!ring_owners_.Owns(worker, me) || !admission_.open())) FenceStreamed();
  admission_.Leave(slot, worker);
  return wrote == RingOwners::Wrote::kWritten;
}

// Inline into System's calls (this file's only callers): a Send's path is
// the one call to TrySendOwned.
ABSL_ATTRIBUTE_ALWAYS_INLINE inline absl::Status SystemImpl::Send(ActorId to, uint32_t type_id, const void* bytes,
                                                                  size_t size, uint64_t correlation,
                                                                  absl::Time deadline) {
  if (!tracing_.load(std::memory_order_relaxed) && TrySendOwned(to, type_id, bytes, size, correlation)) {
    return absl::OkStatus();
  }
  return SendSlow(to, type_id, bytes, size, correlation, deadline);
}

absl::Status SystemImpl::SendSlow(ActorId to, uint32_t type_id, const void* bytes, size_t size, uint64_t correlation,
                                  absl::Time deadline) {
  if (!tracing_.load(std::memory_order_relaxed)) return SendUntraced(to, type_id, bytes, size, correlation, deadline);
  const int64_t begin = HostNowNs();
  absl::Status s = SendUntraced(to, type_id, bytes, size, correlation, deadline);
  RecordHostCall("Send", begin, to.value, type_id, 0, s.ok());
  return s;
}

absl::Status SystemImpl::SendUntraced(ActorId to, uint32_t type_id, const void* bytes, size_t size,
                                      uint64_t correlation, absl::Time deadline) {
  if (!admission_.open()) return NotAccepting("Send");
  if (to.value >= actor_count_.load(std::memory_order_acquire)) {
    return to.is_host() ? Invalid("Send: the host cannot send to itself")
                        : absl::NotFoundError(absl::StrCat("Send: no actor with id ", to.value));
  }
  const uint32_t type_plus_one = actor_types_[to.value].load(std::memory_order_relaxed);
  if (type_plus_one == 0) {
    return absl::NotFoundError(absl::StrCat("Send: no actor with id ", to.value, " (its spawn timed out)"));
  }
  const uint32_t actor_type = type_plus_one - 1;
  if (handles_[actor_type * message_stride_ + type_id] == 0) {
    return Invalid(absl::StrCat("Send: actor '", ActorName(to.value), "' (", package_->model.actors[actor_type].name,
                                ") has no handler for '", MessageName(type_id), "'"));
  }
  const uint64_t place = actor_place_[to.value].load(std::memory_order_relaxed);
  const uint32_t worker = static_cast<uint32_t>(place);
  const LlHeader h = HostRecordHeader(to, type_id, size, correlation, place);
  const u32 log2 = params_.worker_in_log2;
  // Streamed by the ring's owner, or claimed in a shared ring (ring_owner.h).
  const uint32_t me = admission_.SlotTag();
  RingOwners::Mode mode = ring_owners_.Enter(worker, me, WorkerRingRef(worker), [this] { admission_.Barrier(); });
  // Admitted, or refused if Stop (or a fault) has closed the gate: from here
  // until the record is whole, Stop waits for this Send (writer_gate.h).
  if (!admission_.TryEnter(worker)) return NotAccepting("Send");
  absl::Cleanup leave = [this, worker] { admission_.Leave(worker); };
  if (pause_next_send_armed_.load(std::memory_order_relaxed)) RunPauseHook();
  if (TryWriteUnits(worker, &mode, me, h, bytes)) return absl::OkStatus();
  host_ring_full_.fetch_add(1, std::memory_order_relaxed);
  if (deadline == absl::InfinitePast()) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "Send: the host→GPU ring of actor '", ActorName(to.value), "' (worker ", worker, ") is full (", (u64{1} << log2) * kLlUnitWords * 8 / 1024,
        " KiB, room for ", (u64{1} << log2) / LlRecordUnits(h.size), " messages of ", size,
        " bytes): the GPU has not taken the earlier messages yet; retry, give Send a deadline, or raise "
        "SystemOptions::host_ring_capacity"));
  }
  uint32_t spins = 0;
  for (;;) {
    if (TryWriteUnits(worker, &mode, me, h, bytes)) return absl::OkStatus();
    if ((++spins & 1023) == 0) {
      bool finished = false;
      RK_RETURN_IF_ERROR(CheckKernel(&finished));
      // Stop waits for this Send: while it finds the ring full, it gives up
      // (nothing written) rather than hold Stop back.
      if (!admission_.open()) return NotAccepting("Send");
      if (absl::Now() > deadline) {
        return absl::DeadlineExceededError("Send: the host→GPU ring stayed full until the deadline");
      }
    }
    CpuRelax();
  }
}

absl::Status SystemImpl::ReadDeviceGlobal(std::string_view name, void* dst, size_t bytes) {
  if (!module_.has_value()) return absl::FailedPreconditionError("the system has no module loaded");
  RK_ASSIGN_OR_RETURN(cuda::Module::Global g, module_->GetGlobal(absl::string_view(name.data(), name.size())));
  if (g.bytes < bytes) {
    return Invalid(absl::StrCat("'", std::string(name), "' is ", g.bytes, " bytes; asked for ", bytes));
  }
  RK_RETURN_IF_ERROR(runtime_->context().MakeCurrent());
  RK_ASSIGN_OR_RETURN(const cuda::DriverApi* cu, cuda::Driver());
  RK_CU_RETURN_IF_ERROR(cu->cuMemcpyDtoH(dst, g.address, bytes), "cuMemcpyDtoH(", std::string(name), ")");
  return absl::OkStatus();
}

void SystemImpl::RunPauseHook() {
  std::function<void()> pause;
  {
    absl::MutexLock lock(&hook_mu_);
    if (!pause_next_send_armed_.exchange(false)) return;
    pause = std::move(pause_next_send_);
    pause_next_send_ = nullptr;
  }
  if (pause) pause();
}

AskHostStepLog TakeAskHostSteps() {
  AskHostStepLog out;
  AskStepLog& log = StepLog();
  absl::MutexLock lock(&log.mu);
  out.asks = std::exchange(log.asks, {});
  const double us =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - log.first_time).count();
  if (log.first_ticks != 0 && us >= 1000) out.ticks_per_us = static_cast<double>(CpuTicks() - log.first_ticks) / us;
  return out;
}

// The slot of the calling thread's last Ask (ask_slots.h: tried first).
static thread_local uint32_t ask_slot_hint = 0;

RK_ASK_SEND_CODE void SystemImpl::PrefetchAskPath(ActorId to, uint32_t slot_hint) {
  const uint64_t now = CpuTicks();
  ask_cold = now - ask_last_ticks > kAskColdTicks;
  ask_last_ticks = now;
  if (ask_cold) PrefetchCode(__start_rk_ask_send_text, __stop_rk_ask_send_text);
  ask_slots_.PrefetchClaim(slot_hint);
  const uint32_t a = to.value;
  if (a >= actor_count_.load(std::memory_order_relaxed)) return;
  __builtin_prefetch(&actor_types_[a]);
  // The worker is needed for the rest: this load waits for its line, while
  // the prefetches above (and the actor's type) are in flight with it.
  const uint32_t w = static_cast<uint32_t>(actor_place_[a].load(std::memory_order_relaxed));
  if (w >= params_.num_workers) return;
  ring_owners_.Prefetch(w);
  admission_.PrefetchCaller();
  RingProducer& p = worker_producers_[w];
  __builtin_prefetch(&p.tail, 1);
  __builtin_prefetch(&p.cached_head);
  LlRingHeader* in = WorkerIn(w);
  __builtin_prefetch(&in->head);
  __builtin_prefetch(&asks_waiting_[w], 1);
  __builtin_prefetch(&out_heads_[w]);
  __builtin_prefetch(&failures_sorted_);
  __builtin_prefetch(&out_mu_, 1);
  // Where the request goes: its first unit (mapped memory; the load of the
  // tail, as the ring's writers read it, waits for a line asked for above).
  const u64 tail = __atomic_load_n(&p.tail, __ATOMIC_RELAXED);
  __builtin_prefetch(LlSlot(RingSlots(in), kLlUnitWords, params_.worker_in_log2, tail), 1);
  // Where the answer will come: its page, for the drain's look.
  __builtin_prefetch(LlSlot(RingSlots(WorkerOut(w)), params_.slot_words, params_.worker_out_log2,
                            out_heads_[w].load(std::memory_order_relaxed)));
}

RK_ASK_SEND_CODE void SystemImpl::PrefetchAnswerPath(uint32_t worker, uint64_t correlation, void* into) {
  if (ask_cold) PrefetchCode(__start_rk_ask_answer_text, __stop_rk_ask_answer_text);
  ask_slots_.PrefetchAnswer(correlation);
  if (into != nullptr) __builtin_prefetch(into, 1);
  __builtin_prefetch(&host_hlc_, 1);
  __builtin_prefetch(WorkerOut(worker), 1);
  // The drain's buffer (sized once by Init: its address stays).
  __builtin_prefetch(out_buffer_bytes_, 1);
}

RK_ASK_SEND_CODE absl::StatusOr<Message> SystemImpl::Ask(ActorId to, uint32_t type_id, const void* bytes,
                                                         size_t size, absl::Duration timeout, const AskInto& into,
                                                         bool* copied) {
  StampAsk(AskStep::kEntered);
  PrefetchAskPath(to, ask_slot_hint);
  StampAsk(AskStep::kPrefetched);
  const uint64_t seq = next_correlation_.fetch_add(1, std::memory_order_relaxed);
  uint64_t correlation = 0;
  if (!tracing_.load(std::memory_order_relaxed)) {
    if constexpr (kAskHostStamps) {
      absl::StatusOr<Message> r = AskUntraced(to, type_id, bytes, size, timeout, seq, &correlation, into, copied);
      StampAsk(AskStep::kReturned);
      return r;
    } else {
      return AskUntraced(to, type_id, bytes, size, timeout, seq, &correlation, into, copied);
    }
  }
  const int64_t begin = HostNowNs();
  absl::StatusOr<Message> r = AskUntraced(to, type_id, bytes, size, timeout, seq, &correlation, into, copied);
  RecordHostCall("Ask", begin, to.value, type_id, internal::AskFlow(correlation), r.ok());
  return r;
}

RK_ASK_ANSWER_CODE absl::StatusOr<Message> SystemImpl::TakeAnswer(uint64_t correlation, bool* copied) {
  AskAnswer a = ask_slots_.Take(correlation);
  if (!a.error.ok()) return a.error;
  if (copied != nullptr) *copied = a.copied;
  return std::move(a.reply);
}

RK_ASK_SEND_CODE absl::StatusOr<Message> SystemImpl::AskUntraced(ActorId to, uint32_t type_id, const void* bytes,
                                                                 size_t size, absl::Duration timeout, uint64_t seq,
                                                                 uint64_t* correlation_out, const AskInto& into,
                                                                 bool* copied) {
  // A slot of its own (ask_slots.h): registered without out_mu_ or a map,
  // and the thread's Asks reuse the slot of its last one. With every slot
  // taken (kSlots Asks waiting at once), it waits for one to come free, up
  // to its deadline; nothing is sent before it has one. The clock is read
  // once the request is out, or before a wait (for a slot, for room): after
  // a pause its first read is slow, and nothing before the request needs it.
  uint64_t correlation = ask_slots_.Claim(seq, &ask_slot_hint, into);
  StampAsk(AskStep::kClaimed);
  std::optional<Clock::time_point> deadline_at;
  auto deadline = [&] {
    if (!deadline_at.has_value()) deadline_at = Clock::now() + absl::ToChronoNanoseconds(timeout);
    return *deadline_at;
  };
  while (correlation == 0) {
    if (Clock::now() > deadline()) {
      return absl::ResourceExhaustedError(absl::StrCat("Ask: ", AskSlotTable::kSlots,
                                                       " other Asks of this system waited throughout ",
                                                       absl::FormatDuration(timeout), "; nothing was sent"));
    }
    std::this_thread::yield();
    correlation = ask_slots_.Claim(seq, &ask_slot_hint, into);
  }
  *correlation_out = correlation;
  auto take = [&] { return TakeAnswer(correlation, copied); };
  absl::Status sent = absl::OkStatus();
  if (!TrySendOwned(to, type_id, bytes, size, correlation)) {
    // The Send may wait for room: the Ask's deadline runs from here (or
    // from its wait for a slot), so that the two waits share it.
    sent = SendUntraced(to, type_id, bytes, size, correlation,
                        absl::Now() + absl::FromChrono(deadline() - Clock::now()));
  }
  StampAsk(AskStep::kSent);
  if (!sent.ok()) {
    // Nothing was sent: no answer can come.
    ask_slots_.Withdraw(correlation);
    return sent;
  }
  // Everything that answers this Ask — the reply, a dead letter of the
  // message, the actor's failure — comes back on the ring of the receiver's
  // worker (the only worker that runs it or takes its host messages): that
  // ring alone is polled. The others are drained by whoever waits on them.
  const uint32_t reply_worker = static_cast<uint32_t>(actor_place_[to.value].load(std::memory_order_relaxed));
  asks_waiting_[reply_worker].fetch_add(1, std::memory_order_relaxed);
  struct Done {
    std::atomic<uint32_t>& n;
    ~Done() { n.fetch_sub(1, std::memory_order_relaxed); }
  } polling{asks_waiting_[reply_worker]};
  // A request written at once: its deadline runs from now.
  const Clock::time_point until = deadline();
  // The answer takes a round trip to the GPU at the least: meanwhile, what
  // its take will touch.
  PrefetchAnswerPath(reply_worker, correlation, into.dest);
  StampAsk(AskStep::kAnswerPrefetched);
  uint32_t spins = 0;
  uint64_t failures_seen = failures_sorted_.load(std::memory_order_acquire);
  for (;;) {
    // The answer, handed over by this thread's drain or another's: no lock.
    if (ask_slots_.Filled(correlation)) return take();
    // The lock only when there is something to look at: a record in the
    // ring back, or a failure another thread's drain sorted since the last
    // look (and every 64th spin, as a matter of course).
    const uint64_t failures = failures_sorted_.load(std::memory_order_acquire);
    if (spins == 0 || failures != failures_seen || (spins & 63) == 63 || RingBackHasRecord(reply_worker)) {
      failures_seen = failures;
      absl::MutexLock lock(&out_mu_);
      StampAsk(AskStep::kLocked);
      DrainRingLocked(reply_worker);
      StampAsk(AskStep::kDrained);
      if (ask_slots_.Filled(correlation)) return take();
      // The actor failed: no reply will come.
      for (const ActorFailure& f : failures_) {
        if (f.actor == to) {
          if (!ask_slots_.Withdraw(correlation)) return take();
          return absl::FailedPreconditionError(
              absl::StrCat("Ask: actor '", f.name, "' failed with code ", f.code, " before replying"));
        }
      }
    }
    if ((++spins & 63) == 0) {
      if (Clock::now() > until) {
        absl::MutexLock lock(&out_mu_);
        // Another thread's drain may have answered it since this thread
        // last looked: then the answer stands (it is not a late reply).
        if (!ask_slots_.Withdraw(correlation)) return take();
        return absl::DeadlineExceededError(absl::StrCat("Ask: no reply from actor '", ActorName(to.value), "' to '",
                                                        MessageName(type_id), "' within ",
                                                        absl::FormatDuration(timeout)));
      }
      if ((spins & 8191) == 0) {
        bool finished = false;
        RK_RETURN_IF_ERROR(CheckKernel(&finished));
      }
    }
    CpuRelax();
  }
}

absl::StatusOr<std::optional<Message>> SystemImpl::Receive(absl::Duration timeout) {
  const auto start = Clock::now();
  const auto deadline = start + absl::ToChronoNanoseconds(timeout);
  uint32_t spins = 0;
  for (;;) {
    {
      absl::MutexLock lock(&out_mu_);
      DrainLocked();
      if (!inbox_.empty()) {
        Message m = std::move(inbox_.front());
        inbox_.pop_front();
        return std::optional<Message>(std::move(m));
      }
    }
    if (Clock::now() >= deadline) return std::optional<Message>();
    if ((++spins & 1023) == 0) {
      bool finished = false;
      RK_RETURN_IF_ERROR(CheckKernel(&finished));
      if (finished) return std::optional<Message>();
    }
    if (Clock::now() - start > std::chrono::microseconds(200)) {
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    } else {
      CpuRelax();
    }
  }
}

std::vector<DeadLetter> SystemImpl::TakeDeadLetters() {
  absl::MutexLock lock(&out_mu_);
  DrainLocked();
  return std::exchange(dead_letters_, {});
}

std::vector<ActorFailure> SystemImpl::TakeFailures() {
  absl::MutexLock lock(&out_mu_);
  DrainLocked();
  return std::exchange(failures_, {});
}

// ---- Stats, health, stop. ----

ActorStats SystemImpl::ReadActor(uint32_t index) const {
  const ActorControl& c = actor_control_[index];
  ActorStats s;
  s.id = ActorId{index};
  {
    absl::MutexLock lock(&mu_);
    if (index < actors_.size()) {
      s.name = actors_[index].name;
      s.type = package_->model.actors[actors_[index].type_id].name;
    }
  }
  const uint64_t status = LoadMapped(&c.status);
  s.state = static_cast<ActorState>(status & 0xFFFFFFFFu);
  s.fail_code = static_cast<uint32_t>(status >> 32);
  s.received = LoadMapped(&c.received);
  s.handled = LoadMapped(&c.handled);
  s.dead_lettered = LoadMapped(&c.dead_lettered);
  s.depth = LoadMapped(&c.depth);
  s.sent = LoadMapped(&c.sent);
  s.send_full = LoadMapped(&c.send_full);
  s.send_no_actor = LoadMapped(&c.send_no_actor);
  s.send_other = LoadMapped(&c.send_other);
  s.rejected = LoadMapped(&c.rejected);
  s.hlc = LoadMapped(&c.hlc);
  if (handler_times_ != nullptr) {
    // A copy first: the monitor may be writing the row.
    std::array<uint32_t, kHandlerTimeBuckets> row;
    const uint32_t* from = handler_times_ + uint64_t{index} * kHandlerTimeBuckets;
    uint64_t n = 0;
    for (uint32_t b = 0; b < kHandlerTimeBuckets; ++b) {
      row[b] = __atomic_load_n(&from[b], __ATOMIC_RELAXED);
      n += row[b];
    }
    s.timed = true;
    s.timed_calls = n;
    s.handler_p50_ns = HandlerTimeQuantile(row.data(), n, 1, 2);
    s.handler_p99_ns = HandlerTimeQuantile(row.data(), n, 99, 100);
  }
  return s;
}

absl::StatusOr<SystemStats> SystemImpl::Stats(bool fresh) {
  if (fresh && admission_.open()) {
    RK_ASSIGN_OR_RETURN(uint64_t seq, SendControl(ControlOp::kFlush, 0, 0, nullptr, 0));
    RK_RETURN_IF_ERROR(WaitFor(&control_->flush_ack.value, seq, kControlTimeout, "a counter flush"));
  }
  SystemStats st;
  const KernelPhase ph = phase_.load();
  st.phase = (ph == KernelPhase::kFaulted || ph == KernelPhase::kAbandoned || ph == KernelPhase::kExited)
                 ? ph
                 : PhaseOf(LoadMapped(&control_->state.value));
  st.flush_epoch = LoadMapped(&control_->flush_epoch.value);
  st.host_sent = 0;
  for (uint32_t w = 0; w < params_.num_workers; ++w) {
    st.host_sent += ClaimedEnd(w);
  }
  st.host_ring_full = host_ring_full_.load();
  st.ingress_delivered = LoadMapped(&control_->ingress_messages.value);
  st.ingress_dead = LoadMapped(&control_->ingress_dead.value);
  st.outbound_full = LoadMapped(&control_->outbound_full.value);
  st.host_holes = LoadMapped(&control_->host_holes.value);
  st.channel_bytes = std::min(LoadMapped(&control_->channel_bytes.value), params_.channel_arena_bytes);
  {
    absl::MutexLock lock(&out_mu_);
    DrainLocked();
    st.received_by_host = received_by_host_;
    st.dead_letters_dropped = dead_letters_dropped_;
    st.failures_dropped = failures_dropped_;
    st.late_replies = late_replies_;
  }
  const uint32_t n = actor_count_.load();
  for (uint32_t i = 0; i < n; ++i) st.actors.push_back(ReadActor(i));
  for (uint32_t w = 0; w < params_.num_workers; ++w) {
    const WorkerControl& c = worker_control_[w];
    st.workers.push_back(WorkerStatsView{w, LoadMapped(&c.heartbeat), LoadMapped(&c.handled), LoadMapped(&c.exited) != 0});
  }
  return st;
}

absl::Status SystemImpl::Health() {
  bool finished = false;
  RK_RETURN_IF_ERROR(CheckKernel(&finished));
  if (finished && phase_.load() != KernelPhase::kExited) {
    return absl::FailedPreconditionError("the kernel has exited");
  }
  return absl::OkStatus();
}

absl::StatusOr<StopReport> SystemImpl::Stop(absl::Duration timeout) {
  const KernelPhase ph = phase_.load();
  if (ph == KernelPhase::kExited) return absl::FailedPreconditionError("Stop: the system was already stopped");
  if (ph == KernelPhase::kAbandoned) {
    return absl::FailedPreconditionError("Stop: the system could not be stopped before; its kernel is stuck");
  }
  {
    absl::MutexLock lock(&state_mu_);
    if (!fault_.ok()) return fault_;
  }
  const auto start = Clock::now();
  const auto drain_deadline = start + absl::ToChronoNanoseconds(timeout * 3 / 4);
  const auto deadline = start + absl::ToChronoNanoseconds(timeout);
  // No Send is admitted from here on, and those admitted already finish
  // their records before Stop looks at the rings (writer_gate.h): a Send
  // that returns OK is in a ring Stop drains and counts. A Send takes
  // nanoseconds (one that finds its ring full gives up once it sees the gate
  // closed), so only a suspended thread holds this up.
  admission_.Close();
  for (uint32_t spins = 0; admission_.InFlight() != 0; ++spins) {
    if (Clock::now() >= deadline) {
      return absl::DeadlineExceededError(absl::StrCat(
          "Stop: a Send admitted before Stop began had not finished writing its message after ",
          absl::FormatDuration(timeout), " (is its thread suspended?); the system accepts nothing more and still "
          "runs: call Stop again"));
    }
    if (spins < 64) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
  }
  {
    absl::MutexLock lock(&out_mu_);
    drain_all_ = true;  // the report takes every message for the host
  }
  // Drain: the workers take every message the host wrote before the drain
  // record goes out (the control ring is not ordered with the workers'
  // rings); what they have not taken by the deadline is reported below.
  // (The background reader meanwhile drains the rings back, where a worker
  // may be waiting for room for a dead letter.)
  while (HostRecordsInFlight() != 0 && Clock::now() < drain_deadline) {
    bool done = false;
    RK_RETURN_IF_ERROR(CheckKernel(&done));
    if (done) break;
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
  absl::StatusOr<uint64_t> seq = SendControl(ControlOp::kDrain, 0, 0, nullptr, 0);
  bool finished = false;
  if (seq.ok()) {
    phase_ = KernelPhase::kDraining;
    while (Clock::now() < drain_deadline) {
      Drain();
      RK_RETURN_IF_ERROR(CheckKernel(&finished));
      if (finished) break;
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
  }
  if (!finished) {
    // Not quiescent in time (or the ring was full): halt the workers now;
    // what is still queued is reported as unhandled.
    forced_halt_ = true;
    __atomic_store_n(&control_->host_request.value, u64{1}, __ATOMIC_RELEASE);
    while (Clock::now() < deadline) {
      Drain();
      RK_RETURN_IF_ERROR(CheckKernel(&finished));
      if (finished) break;
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }
  if (!finished) {
    phase_ = KernelPhase::kAbandoned;
    const std::string stuck = RunningActors(true);
    return absl::DeadlineExceededError(absl::StrCat(
        "Stop: the kernel did not halt within ", absl::FormatDuration(timeout), ": ",
        !options_.track_running ? kRunningNotRecorded
        : stuck.empty()         ? "no worker reported a running handler"
                                : absl::StrCat("stuck: ", stuck),
        ". The GPU context will be reset when the system is destroyed."));
  }
  phase_ = KernelPhase::kExited;
  ReturnRuntime();
  StopReader();  // nothing more comes back; the final drain is below
  StopReport report;
  report.drained = !forced_halt_;
  const uint32_t n = actor_count_.load();
  // The kernel has exited: its device memory is the final word, so the
  // report reads the actor table, the mailboxes and the shared counters
  // there.
  std::vector<ActorSlot> slots(n);
  DeviceShared shared{};
  absl::Status read = runtime_->context().MakeCurrent();
  if (read.ok()) {
    read = tables_->DownloadAsync(*copy_stream_, &shared, sizeof(DeviceShared),
                                  reinterpret_cast<uint64_t>(params_.shared) - tables_->get());
  }
  if (read.ok() && n != 0) {
    read = tables_->DownloadAsync(*copy_stream_, slots.data(), n * sizeof(ActorSlot),
                                  reinterpret_cast<uint64_t>(params_.actors) - tables_->get());
  }
  std::vector<WorkerStats> worker_stats(params_.num_workers);
  if (read.ok() && !worker_stats.empty()) {
    read = tables_->DownloadAsync(*copy_stream_, worker_stats.data(), worker_stats.size() * sizeof(WorkerStats),
                                  reinterpret_cast<uint64_t>(params_.worker_stats) - tables_->get());
  }
  if (read.ok()) read = copy_stream_->Synchronize();
  // Dead letters and failures a worker gave up on: the kernel was halting
  // and the ring back stayed full (rt_outbound.cuh, ReserveReport).
  if (read.ok()) report.reports_lost = shared.reports_lost.value;
  // Host messages handed over in a worker's shared memory that its owner
  // never took (a forced halt; or one handed back with retry_later to the
  // end): handed over minus taken.
  if (read.ok()) {
    uint64_t handed = 0, taken = 0;
    for (const WorkerStats& w : worker_stats) handed += w.handed;
    for (const ActorSlot& sl : slots) {
      if (sl.status != static_cast<uint32_t>(ActorState::kFree)) taken += sl.direct;
    }
    if (handed > taken) report.unhandled += handed - taken;
  }
  for (uint32_t i = 0; i < n; ++i) {
    ActorStats a = ReadActor(i);
    if (read.ok()) {
      const ActorSlot& sl = slots[i];
      MailboxHeader box{};
      if (FinalFromDevice(sl, &box).ok()) {
        a.state = static_cast<ActorState>(sl.status);
        a.fail_code = sl.fail_code;
        a.received = box.tail.value - sl.start + sl.direct;
        a.handled = sl.handled;
        a.dead_lettered = sl.dead_lettered;
        a.depth = box.tail.value - box.head.value;
        a.sent = sl.sent;
        a.send_full = sl.send_full;
        a.send_no_actor = sl.send_no_actor;
        a.send_other = sl.send_other;
        a.rejected = sl.rejected;
        a.hlc = sl.hlc;
      }
    }
    report.handled += a.handled;
    report.unhandled += a.depth;
    report.actors.push_back(std::move(a));
  }
  // A trace still running ends with the kernel: its file is written now.
  if (tracing_.load()) {
    absl::Status t = FinishTrace(/*kernel_exited=*/true);
    if (!t.ok()) report.trace_error = std::string(t.message());
  }
  absl::MutexLock lock(&out_mu_);
  DrainLocked();
  report.dead_letters = std::exchange(dead_letters_, {});
  report.failures = std::exchange(failures_, {});
  report.dead_letters_dropped = dead_letters_dropped_;
  report.failures_dropped = failures_dropped_;
  report.undelivered.assign(std::make_move_iterator(inbox_.begin()), std::make_move_iterator(inbox_.end()));
  // Host messages the workers never took (the drain deadline passed first).
  report.unhandled += HostMessagesNeverTaken();
  inbox_.clear();
  return report;
}

absl::Status SystemImpl::FinalFromDevice(const ActorSlot& slot, MailboxHeader* box) const {
  // The mailbox lives in one of the arena chunks.
  for (const cuda::DeviceBuffer& chunk : arena_) {
    if (slot.mailbox >= chunk.get() && slot.mailbox + sizeof(MailboxHeader) <= chunk.get() + chunk.size()) {
      // Only the two indices: the rest of the header's lines (padding) is
      // never written, and reading it would copy uninitialised memory.
      const uint64_t at = slot.mailbox - chunk.get();
      RK_RETURN_IF_ERROR(chunk.DownloadAsync(*copy_stream_, &box->tail.value, sizeof(u64),
                                             at + offsetof(MailboxHeader, tail)));
      RK_RETURN_IF_ERROR(chunk.DownloadAsync(*copy_stream_, &box->head.value, sizeof(u64),
                                             at + offsetof(MailboxHeader, head)));
      return copy_stream_->Synchronize();
    }
  }
  return absl::InternalError("mailbox outside the arena");
}

System::MemoryUsage SystemImpl::Memory() const {
  absl::MutexLock lock(&mu_);
  System::MemoryUsage m;
  m.device_tables = device_table_bytes_;
  m.mailboxes = mailbox_bytes_;
  m.actor_state = state_bytes_;
  for (const cuda::DeviceBuffer& b : arena_) m.arena_reserved += b.size();
  for (const auto* b : {&inbound_buf_, &control_buf_, &worker_in_buf_, &worker_out_buf_}) {
    m.mapped += b->has_value() ? (*b)->size() : 0;
  }
  return m;
}

// ---- System: the public face. ----
//
// Each call that does work is an NVTX range (runtime/nvtx.h): without a tool
// attached, a guard check and a branch.

System::System(std::unique_ptr<SystemImpl> impl)
    : impl_(std::move(impl)),
      type_cache_(impl_->type_cache()),
      type_cache_size_(impl_->type_cache_size()) {}
System::~System() = default;

absl::StatusOr<ActorId> System::Spawn(std::string_view type, std::string_view name) {
  internal::nvtx::Range range(internal::nvtx::Call::kSpawn);
  return impl_->Spawn(type, name);
}
absl::StatusOr<ActorId> System::Lookup(std::string_view name) const { return impl_->Lookup(name); }
std::optional<std::string> System::NameOf(ActorId id) const { return impl_->NameOf(id); }
absl::Status System::Bind(std::string_view route, ActorId actor) {
  internal::nvtx::Range range(internal::nvtx::Call::kBind);
  return impl_->Bind(route, actor.value);
}
absl::Status System::Unbind(std::string_view route) {
  internal::nvtx::Range range(internal::nvtx::Call::kUnbind);
  return impl_->Bind(route, kNoActorValue);
}

absl::Status System::SendBytes(ActorId to, std::string_view type, std::string_view bytes) {
  internal::nvtx::Range range(internal::nvtx::Call::kSend);
  RK_ASSIGN_OR_RETURN(uint32_t id, impl_->MessageId(type, bytes.size()));
  return impl_->Send(to, id, bytes.data(), bytes.size(), 0, absl::InfinitePast());
}

absl::Status System::SendBytes(ActorId to, std::string_view type, std::string_view bytes, absl::Time deadline) {
  internal::nvtx::Range range(internal::nvtx::Call::kSend);
  RK_ASSIGN_OR_RETURN(uint32_t id, impl_->MessageId(type, bytes.size()));
  return impl_->Send(to, id, bytes.data(), bytes.size(), 0, deadline);
}

absl::StatusOr<Message> System::AskBytes(ActorId to, std::string_view type, std::string_view bytes,
                                         absl::Duration timeout) {
  internal::nvtx::Range range(internal::nvtx::Call::kAsk);
  RK_ASSIGN_OR_RETURN(uint32_t id, impl_->MessageId(type, bytes.size()));
  return impl_->Ask(to, id, bytes.data(), bytes.size(), timeout);
}

absl::StatusOr<std::optional<Message>> System::Receive(absl::Duration timeout) {
  internal::nvtx::Range range(internal::nvtx::Call::kReceive);
  return impl_->Receive(timeout);
}
std::vector<DeadLetter> System::TakeDeadLetters() {
  internal::nvtx::Range range(internal::nvtx::Call::kTakeDeadLetters);
  return impl_->TakeDeadLetters();
}
std::vector<ActorFailure> System::TakeFailures() {
  internal::nvtx::Range range(internal::nvtx::Call::kTakeFailures);
  return impl_->TakeFailures();
}
absl::StatusOr<SystemStats> System::Stats(bool fresh) {
  internal::nvtx::Range range(internal::nvtx::Call::kStats);
  return impl_->Stats(fresh);
}
absl::Status System::Health() { return impl_->Health(); }
absl::StatusOr<StopReport> System::Stop(absl::Duration timeout) {
  internal::nvtx::Range range(internal::nvtx::Call::kStop);
  return impl_->Stop(timeout);
}
KernelPhase System::phase() const { return impl_->phase(); }
absl::Status System::StartTrace(std::string_view path) { return impl_->StartTrace(path); }
absl::Status System::StopTrace() { return impl_->StopTrace(); }
bool System::tracing() const { return impl_->tracing(); }
uint32_t System::workers() const { return impl_->workers(); }
uint32_t System::threads_per_block() const { return impl_->threads_per_block(); }
System::MemoryUsage System::Memory() const { return impl_->Memory(); }

absl::Status System::ResolveTypeSlot(uint32_t slot, const char* name, const char* layout, size_t size, size_t align,
                                     uint32_t* id) {
  return impl_->ResolveTypeSlot(slot, name, layout, size, align, id);
}

// The typed Send<M> and Ask<R> of system.h: their range begins here, after
// the template resolved the type (a lookup in a table, after the first).
absl::Status System::SendTyped(ActorId to, uint32_t type_id, const void* bytes, size_t size, uint64_t correlation,
                               absl::Time deadline) {
  internal::nvtx::Range range(internal::nvtx::Call::kSend);
  return impl_->Send(to, type_id, bytes, size, correlation, deadline);
}

absl::StatusOr<Message> System::AskTyped(ActorId to, uint32_t type_id, const void* bytes, size_t size,
                                         absl::Duration timeout, void* into, uint32_t into_type, uint32_t into_size,
                                         bool* copied) {
  internal::nvtx::Range range(internal::nvtx::Call::kAsk);
  if constexpr (kAskHostStamps) {
    BeginAskSteps();
    absl::StatusOr<Message> r =
        impl_->Ask(to, type_id, bytes, size, timeout, SystemImpl::AskInto{into, into_type, into_size}, copied);
    EndAskSteps();
    return r;
  } else {
    return impl_->Ask(to, type_id, bytes, size, timeout, SystemImpl::AskInto{into, into_type, into_size}, copied);
  }
}

}  // namespace rk
